"""One Pinot server in the model: worker threads, pauses and crashes, computed in closed form.

Under FCFS a request's schedule on a server is fixed the moment it arrives (later arrivals cannot
overtake it), and pauses and crashes are schedules drawn up front, so :meth:`Server.execute` computes a
request's whole stay at once: no per-task events. See ``docs/model.md``.
"""

from __future__ import annotations

import heapq
from typing import NamedTuple

from workbench.sim.pauses import PauseSchedule

__all__ = ["RequestOutcome", "Server"]


class RequestOutcome(NamedTuple):
    """What one server request yields, in model time (ms).

    Attributes
    ----------
    response_at
        When the server sends its response (or, for a failed request, when it failed).
    paused
        A pause stopped the server while it held this request.
    queue_wait
        The longest time one of the request's tasks waited for a worker thread.
    failed
        The server was down when the request arrived, or crashed before answering.
    """

    response_at: float
    paused: bool
    queue_wait: float
    failed: bool


class Server:
    """A server's worker threads (as the times each becomes free), its pauses and its crashes.

    Parameters
    ----------
    name
        The instance name routing uses (``Server_3``).
    cores
        Worker threads, one per core.
    pauses, crashes
        Stop-the-world pauses (GC) and down intervals, both in ms.
    """

    def __init__(self, name: str, cores: int, pauses: PauseSchedule, crashes: PauseSchedule) -> None:
        self.name = name
        self.cores = cores
        self.pauses = pauses
        self.crashes = crashes
        self.free_at = [0.0] * cores
        self.busy_ms = 0.0
        self.requests = 0
        self.failed = 0
        self._recoveries_seen = 0

    def _forget_lost_work(self, now: float) -> None:
        """After a crash, threads restart empty at recovery: work that was in progress is lost."""
        done = self.crashes.ended_by(now)
        if done > self._recoveries_seen:
            crash, recovery = self.crashes.interval(done - 1)
            self.free_at = [recovery if f > crash else f for f in self.free_at]
            heapq.heapify(self.free_at)
            self._recoveries_seen = done

    def execute(self, now: float, overhead: float, task_work: list[float]) -> RequestOutcome:
        """Run one request arriving at ``now`` with per-request ``overhead`` and per-task work (ms).

        The request's tasks take the earliest-free worker threads in FCFS order; a task's end is its
        start plus its work, stretched by any pause in between. A request on a server that is down,
        or that goes down before the response is sent, fails at that moment.
        """
        crashes = self.crashes
        if crashes:
            if crashes.release(now) != now:
                self.failed += 1
                return RequestOutcome(now, False, 0.0, True)
            self._forget_lost_work(now)
        pauses, free_at = self.pauses, self.free_at
        # Fast path: until the next pause begins, time is plain arithmetic (no look-ups).
        next_pause = pauses.next_start(now) if pauses else float("inf")
        ready = now + overhead
        if ready >= next_pause:
            ready = pauses.finish(now, overhead)
        done, busy, wait = ready, overhead, 0.0
        for work in task_work:
            free = heapq.heappop(free_at)
            if free > ready:
                wait = max(wait, free - ready)
                start = free
            else:
                start = ready
            end = start + work
            if end >= next_pause:
                end = pauses.finish(start, work)
            heapq.heappush(free_at, end)
            if end > done:
                done = end
            busy += work
        self.busy_ms += busy
        self.requests += 1
        paused = done >= next_pause
        send = pauses.release(done) if paused else done
        if crashes and crashes.intersects(now, send):
            self.failed += 1
            return RequestOutcome(crashes.next_start(now), False, wait, True)
        return RequestOutcome(send, paused, wait, False)
