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
:class:`~workbench.sim.pauses.PauseSchedule`. The state changes only when an item starts or finishes
(a checkpoint: the time, ``V`` and the core time used so far), and every time is computed from the
last checkpoint, so asking the clock at more or fewer moments never changes a result: the compiled
engine, which asks less often, computes the same bits: the arithmetic of a checkpoint, of the sharing
rate and of "finished" is the functions of :mod:`workbench.sim.decisions` both engines call.

Timers run beside the CPU: work that takes time but no core (the FCFS-threads simplification's
per-request overhead), keyed by run time and frozen by pauses like everything else.

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

from workbench.sim import decisions
from workbench.sim.fast.jit import python
from workbench.sim.pauses import PauseSchedule

__all__ = ["SharedCPU"]

_INF = float("inf")
# The arithmetic both engines share (workbench.sim.decisions), as plain Python calls.
_share = python(decisions.share)
_advanced = python(decisions.checkpoint)
_is_due = python(decisions.is_due)


class SharedCPU:
    """Processor sharing of ``cores`` cores among runnable items, plus core-free timers, over ``pauses``.

    Items are opaque to the CPU (the server's records of what a thread is doing). Times are ms.
    """

    def __init__(self, cores: int, pauses: PauseSchedule) -> None:
        self.cores = cores
        self.pauses = pauses
        self.t0 = 0.0  # the last checkpoint: a moment the runnable set changed
        self.v0 = 0.0  # virtual time at t0: work received by every runnable item so far
        self._busy0 = 0.0  # core time used up to t0
        self._work: list[tuple[float, int, Any]] = []
        self._timers: list[tuple[float, int, Any]] = []
        self._seq = 0

    @property
    def runnable(self) -> int:
        """Threads wanting a core right now."""
        return len(self._work)

    def run_time(self, t: float) -> float:
        """Run time (wall time minus pauses) at ``t``: the timers' clock."""
        return self.pauses.run_time(t) if self.pauses else t

    def _checkpoint(self, t: float) -> None:
        """Bring ``V`` and the core time to ``t``, before the runnable set changes there."""
        if t <= self.t0:
            return
        run = self.run_time(t) - self.run_time(self.t0)
        self.v0, self._busy0 = _advanced(self.v0, self._busy0, run, len(self._work), len(self._timers), self.cores)
        self.t0 = t

    def busy_core_ms(self, t: float) -> float:
        """Core time used up to ``t`` (cores x run time while busy; timers count as one core each), ms."""
        if t <= self.t0:
            return self._busy0
        run = self.run_time(t) - self.run_time(self.t0)
        return _advanced(self.v0, self._busy0, run, len(self._work), len(self._timers), self.cores)[1]

    def start(self, now: float, work: float, item: Any) -> None:
        """A thread becomes runnable at ``now`` with ``work`` ms of CPU to do."""
        self._checkpoint(now)
        heapq.heappush(self._work, (self.v0 + work, self._seq, item))
        self._seq += 1

    def start_timer(self, now: float, duration: float, item: Any) -> None:
        """``item`` is due after ``duration`` ms of run time (pauses freeze it), using no core."""
        self._checkpoint(now)
        heapq.heappush(self._timers, (self.run_time(now) + duration, self._seq, item))
        self._seq += 1

    def next_time(self) -> float:
        """Wall time of the next item or timer to finish (``inf`` when there is none)."""
        best = _INF
        if self._work:
            need = max(0.0, (self._work[0][0] - self.v0) / _share(len(self._work), self.cores))
            best = self.pauses.finish(self.t0, need) if self.pauses else self.t0 + need
        if self._timers:
            need = max(0.0, self._timers[0][0] - self.run_time(self.t0))
            best = min(best, self.pauses.finish(self.t0, need) if self.pauses else self.t0 + need)
        return best

    def pop(self, t: float) -> list[Any]:
        """The items and timers due at ``t`` (a :meth:`next_time`), in start order.

        ``V`` is snapped to the finishing item's value, so rounding never leaves an item a hair short.
        """
        self._checkpoint(t)
        due: list[tuple[int, Any]] = []
        if self._work and _is_due(self._work[0][0], self.v0, t):
            self.v0 = max(self.v0, self._work[0][0])
            while self._work and self._work[0][0] <= self.v0:
                _, seq, item = heapq.heappop(self._work)
                due.append((seq, item))
        run = self.run_time(t)
        if self._timers and _is_due(self._timers[0][0], run, t):
            run = max(run, self._timers[0][0])
            while self._timers and self._timers[0][0] <= run:
                _, seq, item = heapq.heappop(self._timers)
                due.append((seq, item))
        due.sort(key=lambda x: x[0])
        return [item for _, item in due]

    def clear(self, t: float) -> None:
        """Drop every item and timer at ``t`` (a crash: the process and its threads are gone)."""
        self._checkpoint(t)
        self._work.clear()
        self._timers.clear()
