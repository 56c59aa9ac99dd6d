"""A server's cores shared by its runnable threads, frozen by stop-the-world pauses.

How CPU is modelled (``docs/model.md``, "CPU"): ``cores`` cores serve the runnable threads (runner
threads preparing or merging, worker threads processing a segment) by egalitarian processor sharing.
With ``n`` runnable threads each progresses at ``min(1, cores / n)`` ms of work per ms of run time, which
is how a fair OS scheduler divides cores among equal threads over any window longer than its time
slice (a few ms on Linux CFS). Java thread priorities (Pinot gives runner threads priority 7) are
ignored by the JVM on Linux unless ``-XX:ThreadPriorityPolicy=1`` is set as root, so runners and
workers share equally. A stop-the-world pause stops every thread.

The arithmetic is exact and cheap: all runnable work progresses at the same rate, so the *virtual
time* ``V`` (work each runnable item has received) is one number. An item added at ``V`` with ``w`` ms
of work finishes when ``V`` reaches ``V + w``; items wait in a heap keyed by that finish value, which
never changes when the rate does. Run time (wall time minus pauses) comes from the
:class:`~workbench.sim.pauses.PauseSchedule`.

Timers run beside the CPU: work that takes time but no core (the FCFS-threads simplification's
per-request overhead), frozen by pauses like everything else.

>>> from workbench.sim.pauses import PauseSchedule
>>> cpu = SharedCPU(1, PauseSchedule.from_intervals([(4.0, 6.0)]))
>>> cpu.start(0.0, 3.0, "a"); cpu.start(0.0, 3.0, "b")   # two threads, one core: each at half speed
>>> cpu.next_time()                                      # 6 ms of work, 2 ms paused
8.0
>>> cpu.pop(8.0)
['a', 'b']
"""

from __future__ import annotations

import heapq
from typing import Any

from workbench.sim.pauses import PauseSchedule

__all__ = ["SharedCPU"]

_INF = float("inf")


class SharedCPU:
    """Processor sharing of ``cores`` cores among runnable items, plus core-free timers, over ``pauses``.

    Items are opaque to the CPU (the server's records of what a thread is doing). Times are ms.
    """

    def __init__(self, cores: int, pauses: PauseSchedule) -> None:
        self.cores = cores
        self.pauses = pauses
        self.now = 0.0
        self.v = 0.0  # virtual time: work received by every runnable item so far
        self.run = 0.0  # run time (wall minus pauses) at ``now``, the timers' clock
        #: Core time used so far (cores x run time while busy; timers count as one core each), ms.
        self.busy_core_ms = 0.0
        self._work: list[tuple[float, int, Any]] = []
        self._timers: list[tuple[float, int, Any]] = []
        self._seq = 0

    @property
    def runnable(self) -> int:
        """Threads wanting a core right now."""
        return len(self._work)

    def _rate(self) -> float:
        n = len(self._work)
        return 1.0 if n <= self.cores else self.cores / n

    def advance(self, t: float) -> None:
        """Move the clock to ``t`` (no item finishes before ``t``: the caller pops them first)."""
        if t <= self.now or t == _INF:
            return
        run = self.pauses.run_time(t) - self.pauses.run_time(self.now) if self.pauses else t - self.now
        n = len(self._work)
        if n:
            self.v += run * (1.0 if n <= self.cores else self.cores / n)
        self.busy_core_ms += run * (min(n, self.cores) + len(self._timers))
        self.run += run
        self.now = t

    def start(self, now: float, work: float, item: Any) -> None:
        """A thread becomes runnable at ``now`` with ``work`` ms of CPU to do."""
        self.advance(now)
        heapq.heappush(self._work, (self.v + work, self._seq, item))
        self._seq += 1

    def start_timer(self, now: float, duration: float, item: Any) -> None:
        """``item`` is due after ``duration`` ms of run time (pauses freeze it), using no core."""
        self.advance(now)
        heapq.heappush(self._timers, (self.run + duration, self._seq, item))
        self._seq += 1

    def next_time(self) -> float:
        """Wall time of the next item or timer to finish (``inf`` when there is none)."""
        best = _INF
        if self._work:
            need = max(0.0, (self._work[0][0] - self.v) / self._rate())
            best = self.pauses.finish(self.now, need) if self.pauses else self.now + need
        if self._timers:
            need = max(0.0, self._timers[0][0] - self.run)
            best = min(best, self.pauses.finish(self.now, need) if self.pauses else self.now + need)
        return best

    def pop(self, t: float) -> list[Any]:
        """Advance to ``t`` (a :meth:`next_time`) and return the items and timers due then, in start order.

        The clock is snapped to the finishing item's value, so rounding never leaves an item a hair
        short of done.
        """
        self.advance(t)
        due: list[tuple[int, Any]] = []
        if self._work and self._work[0][0] <= self.v + _slack(self.v):
            self.v = max(self.v, self._work[0][0])
            while self._work and self._work[0][0] <= self.v:
                _, seq, item = heapq.heappop(self._work)
                due.append((seq, item))
        if self._timers and self._timers[0][0] <= self.run + _slack(self.run):
            self.run = max(self.run, self._timers[0][0])
            while self._timers and self._timers[0][0] <= self.run:
                _, seq, item = heapq.heappop(self._timers)
                due.append((seq, item))
        due.sort(key=lambda x: x[0])
        return [item for _, item in due]

    def clear(self) -> None:
        """Drop every item and timer (a crash: the process and its threads are gone)."""
        self._work.clear()
        self._timers.clear()


def _slack(x: float) -> float:
    """Rounding allowance when a finish time was computed from a value: a few ulps of ``x``."""
    return 4e-12 * max(1.0, abs(x))
