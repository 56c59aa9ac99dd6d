"""SimPy's side of a server: deliver requests at their times and wake the server at its next event.

A :class:`~workbench.sim.server.PinotServer` is a state machine over explicit times; this driver keeps
one SimPy wake-up pending for its earliest internal event, moves it earlier when a delivery makes
something happen sooner, and hands every response to ``on_response`` the moment the server sends it.
A request that arrives while the server is paused is read when the pause ends (the Netty thread that
stamps arrivals is stopped too).

SimPy's clock is only approximately the model's: a callback due at ``t`` fires at ``now + (t - now)``,
which rounding may put an ulp from ``t``. Requests held by one pause are all read at its end, the same
exact time, so the order of their callbacks must not decide the order the server reads them in. The
driver therefore keeps the requests it has been handed but not yet given to the server, and gives them
in the order of their exact read times, ties in delivery order (the compiled engine's
:class:`~workbench.sim.plan.Delivery` order), before any later moment of the server's.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import simpy

from workbench.sim.server import PinotServer, Request, Response

__all__ = ["ServerDriver"]

_INF = float("inf")


class ServerDriver:
    """Drive one server from SimPy; ``on_response(server index, response)`` is called at send time."""

    def __init__(self, env: simpy.Environment, index: int, server: PinotServer,
                 on_response: Callable[[int, Response], None]) -> None:
        self.env, self.index, self.server, self.on_response = env, index, server, on_response
        self._wake_at = _INF
        self._out: list[Response] = []
        #: Requests delivered but not yet read: (read time, delivery order, request).
        self._unread: list[tuple[float, int, Request]] = []
        self._delivered = 0

    def deliver(self, request: Request, at: float) -> None:
        """``request`` reaches the server at ``at`` (now); it is read at the end of a pause (or wedge) in progress."""
        request.delivered = at
        stops = self.server.stops  # a GC pause or a wedge in progress
        readable = stops.release(at) if stops else at
        request.arrival = readable
        heapq.heappush(self._unread, (readable, self._delivered, request))
        self._delivered += 1
        if readable > at:
            self.env.timeout(max(0.0, readable - self.env.now)).callbacks.append(lambda _: self._read(readable))
            return
        self._read(at)

    def _read(self, until: float) -> None:
        """The server reads every request due by ``until``, in order, then its responses go out."""
        self._catch_up(until, inclusive=True)
        self._flush()

    def _catch_up(self, until: float, *, inclusive: bool) -> None:
        """Give the server the unread requests due before ``until`` (or at it, when ``inclusive``), by read
        time and then delivery order, each after the server's own events up to its read time."""
        unread = self._unread
        while unread and (unread[0][0] < until or (inclusive and unread[0][0] == until)):
            _, _, request = heapq.heappop(unread)
            self.server.advance(request.arrival, self._out)
            self.server.submit(request, self._out)

    def _wake(self, at: float) -> None:
        if at != self._wake_at:
            return  # superseded by an earlier wake-up
        self._wake_at = _INF
        self._catch_up(at, inclusive=False)  # a thread finishing at ``at`` goes before a request read then
        self.server.advance(at, self._out)
        self._flush()

    def close(self, horizon: float) -> None:
        """The end of the run: the server reads what it would have read before ``horizon`` and runs up to
        it (the responses are not wanted)."""
        self._catch_up(horizon, inclusive=False)
        self.server.advance(horizon, [])
        self._out = []

    def _flush(self) -> None:
        out, self._out = self._out, []
        for response in out:
            self.on_response(self.index, response)
        at = self.server.next_time()
        if at < self._wake_at:
            self._wake_at = at
            self.env.timeout(max(0.0, at - self.env.now)).callbacks.append(lambda _: self._wake(at))
