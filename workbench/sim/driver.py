"""SimPy's side of a server: deliver requests at their times and wake the server at its next event.

A :class:`~workbench.sim.server.PinotServer` is a state machine over explicit times; this driver keeps
one SimPy wake-up pending for its earliest internal event, moves it earlier when a delivery makes
something happen sooner, and hands every response to ``on_response`` the moment the server sends it.
A request that arrives while the server is paused is read when the pause ends (the Netty thread that
stamps arrivals is stopped too).
"""

from __future__ import annotations

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

    def deliver(self, request: Request, at: float) -> None:
        """``request`` reaches the server at ``at`` (now); it is read at the end of a pause in progress."""
        request.delivered = at
        pauses = self.server.pauses
        readable = pauses.release(at) if pauses else at
        request.arrival = readable
        if readable > at:
            self.env.timeout(max(0.0, readable - self.env.now)).callbacks.append(lambda _: self._submit(request))
            return
        self._submit(request)

    def _submit(self, request: Request) -> None:
        self.server.advance(request.arrival, self._out)
        self.server.submit(request, self._out)
        self._flush()

    def _wake(self, at: float) -> None:
        if at != self._wake_at:
            return  # superseded by an earlier wake-up
        self._wake_at = _INF
        self.server.advance(at, self._out)
        self._flush()

    def _flush(self) -> None:
        out, self._out = self._out, []
        for response in out:
            self.on_response(self.index, response)
        at = self.server.next_time()
        if at < self._wake_at:
            self._wake_at = at
            self.env.timeout(max(0.0, at - self.env.now)).callbacks.append(lambda _: self._wake(at))
