"""A broker's wait for one query's server responses (PE §4.2): a latch, the deadline, and what it reports.

The broker waits until every queried server has answered, a channel fails, or the deadline passes.
Responses that arrive later are dropped. Adaptive Server Selection learns each server's latency when
its response arrives; a server that answered with a server-side error, or not at all, is recorded at
the full timeout value (``AsyncQueryResponse``). The broker's response then carries Pinot's
QueryErrorCodes: the servers' own (211, 240, 250), 425 (BROKER_REQUEST_SEND) for a failed channel,
427 (SERVER_NOT_RESPONDING) for servers that did not answer in time, and 305
(BROKER_SEGMENT_UNAVAILABLE) for segments no server could be routed to.

Times are exact: the gather knows when each response arrives (the server's send time plus the planned
delay back) and closes at the earliest of the last arrival, a failed channel's arrival and the
deadline; SimPy only orders those moments.
"""

from __future__ import annotations

from collections.abc import Sequence

import simpy

from workbench.pinot.routing.adaptive import ServerRoutingStatsManager
from workbench.sim.server import FAILED, Response

__all__ = ["BROKER_REQUEST_SEND", "SEGMENT_UNAVAILABLE", "SERVER_NOT_RESPONDING", "Gather", "error_codes",
           "query_codes"]

BROKER_REQUEST_SEND = 425
SERVER_NOT_RESPONDING = 427
SEGMENT_UNAVAILABLE = 305


class Gather:
    """One query's scatter-gather state at its broker.

    Parameters
    ----------
    env
        The replication's environment (``done`` is one of its events).
    servers, names
        The server indices queried and their instance names.
    sent, timeout_ms
        When the requests were sent and the query's timeout (the latch's deadline is their sum).
    stats
        The broker's adaptive routing stats, or ``None``.
    """

    def __init__(self, env: simpy.Environment, servers: Sequence[int], names: Sequence[str], sent: float,
                 timeout_ms: float, stats: ServerRoutingStatsManager | None) -> None:
        self.env = env
        self.servers, self.names = list(servers), list(names)
        self.sent, self.timeout_ms, self.stats = sent, timeout_ms, stats
        self.done = env.event()
        self.responses: dict[int, Response] = {}
        self.failed: set[int] = set()
        self.closed_at = float("inf")
        self._known: dict[int, tuple[Response, float]] = {}
        self.deadline = deadline = sent + timeout_ms
        if self.servers:
            env.timeout(max(0.0, deadline - env.now)).callbacks.append(lambda _: self._release(deadline))
        else:
            self._release(sent)

    def sent_back(self, server: int, response: Response, arrives: float) -> None:
        """``server`` sent ``response``, which will reach the broker at ``arrives``.

        Without adaptive stats nothing at the broker happens between responses, so the broker is woken
        once: when the last response (or a failed channel) arrives. With stats, each response is an
        event, so the selector learns latencies in the order the broker would.
        """
        if self.stats is not None or response.code == FAILED:
            self._at(arrives, lambda: self.receive(server, response, arrives))
            return
        self._known[server] = (response, arrives)
        if len(self._known) == len(self.servers):
            last = max(a for _, a in self._known.values())
            self._at(last, lambda: self._all_known(last))

    def _at(self, t: float, action: object) -> None:
        assert callable(action)
        self.env.timeout(max(0.0, t - self.env.now)).callbacks.append(lambda _: action())

    def _all_known(self, now: float) -> None:
        if now > self.deadline:
            return  # the deadline closes the gather (whichever of the two SimPy runs first)
        for server, (response, arrives) in self._known.items():
            self.receive(server, response, arrives)
        self._release(now)

    def receive(self, server: int, response: Response, now: float) -> None:
        """A response (or a failed channel) reaches the broker at ``now``."""
        if self.done.triggered or now > self.deadline:
            return  # the broker stopped waiting: a late response is dropped
        if response.code == FAILED:
            self.failed.add(server)
            self._release(now)
            return
        self.responses[server] = response
        if self.stats is not None:
            latency = now - self.sent if response.code == 0 else self.timeout_ms
            self.stats.record_response(self.names[self.servers.index(server)], latency, now)
            if len(self.responses) == len(self.servers):
                self._release(now)

    def _release(self, at: float) -> None:
        if not self.done.triggered:
            self.closed_at = at
            self.done.succeed()

    def close(self) -> None:
        """The broker stops waiting (at ``closed_at``): servers without a response are recorded at the
        timeout value; responses that arrived by then count even if their wake-up has not run yet."""
        for server, (response, arrives) in self._known.items():
            if arrives <= self.closed_at and server not in self.responses:
                self.responses[server] = response
        if self.stats is not None:
            for server, name in zip(self.servers, self.names, strict=True):
                if server not in self.responses:
                    self.stats.record_response(name, self.timeout_ms, self.closed_at)

    @property
    def answered(self) -> list[int]:
        """Servers whose DataTable arrived (error DataTables included)."""
        return list(self.responses)

    def codes(self, unavailable_segments: int) -> set[int]:
        """The QueryErrorCodes the broker's response carries."""
        return query_codes([r.code for r in self.responses.values()], bool(self.failed),
                           len(self.responses) < len(self.servers), unavailable_segments > 0)


def query_codes(server_codes: Sequence[int], failed: bool, missing: bool, unavailable: bool) -> set[int]:
    """A broker response's QueryErrorCodes from what its servers answered (one rule for both engines)."""
    codes = {c for c in server_codes if c != 0}
    if failed:
        codes.add(BROKER_REQUEST_SEND)
    if missing:
        codes.add(SERVER_NOT_RESPONDING)
    if unavailable:
        codes.add(SEGMENT_UNAVAILABLE)
    return codes


def error_codes(codes: set[int]) -> str:
    """The ``error_codes`` record: sorted, comma-separated, ``""`` when none."""
    return ",".join(str(c) for c in sorted(codes))
