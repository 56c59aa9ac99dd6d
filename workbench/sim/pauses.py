"""Stop-the-world pause schedules and the arithmetic of work that a pause freezes.

A server's pauses (GC, and later crashes) are a sorted list of disjoint intervals. While paused a
server makes no progress and sends nothing. Instead of interrupting every running task when a pause
starts (many SimPy events per pause), the model asks the schedule directly: "work of ``w`` ms that
starts at ``t`` finishes when?" That answer is exact: run time is wall time minus paused time.

>>> s = PauseSchedule.from_intervals([(10.0, 15.0), (20.0, 21.0)])
>>> s.finish(8.0, 4.0)      # 2 ms of work, the 5 ms pause, then 2 ms more
17.0
>>> s.finish(8.0, 10.0)     # both pauses: 8 + 10 + 5 + 1
24.0
>>> s.release(12.0), s.release(16.0)
(15.0, 16.0)
>>> s.intersects(0.0, 10.0), s.intersects(0.0, 10.5), s.intersects(15.0, 20.0)
(False, True, False)
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["PauseSchedule"]


@dataclass(frozen=True)
class PauseSchedule:
    """Disjoint, sorted pause intervals ``[starts[i], ends[i])`` in one time unit (the model uses ms)."""

    starts: np.ndarray
    ends: np.ndarray
    #: Run time (wall time minus earlier pauses) at which each pause begins; non-decreasing.
    run_at_start: np.ndarray
    #: Total paused time before pause ``i``.
    paused_before: np.ndarray
    #: What each pause was (``young``, ``mixed``, ``full``, ``remark``, ``cleanup``, ``zgc``, ``stall``).
    kinds: tuple[str, ...] = ()
    # Python-list mirrors: scalar look-ups with bisect are ~10x cheaper than numpy calls.
    _s: list[float] = field(init=False, repr=False, compare=False)
    _e: list[float] = field(init=False, repr=False, compare=False)
    _r: list[float] = field(init=False, repr=False, compare=False)
    _p: list[float] = field(init=False, repr=False, compare=False)
    _total: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name, arr in (("_s", self.starts), ("_e", self.ends), ("_r", self.run_at_start),
                          ("_p", self.paused_before)):
            object.__setattr__(self, name, arr.tolist())
        object.__setattr__(self, "_total", float((self.ends - self.starts).sum()))

    @classmethod
    def from_intervals(cls, intervals: Iterable[tuple[float, float]], kinds: Sequence[str] | None = None
                       ) -> PauseSchedule:
        """Build from ``(start, end)`` pairs, which must be sorted and disjoint (``kinds``: one per pause)."""
        pairs = np.asarray(list(intervals), dtype=float).reshape(-1, 2)
        starts, ends = pairs[:, 0].copy(), pairs[:, 1].copy()
        if np.any(ends < starts) or np.any(starts[1:] < ends[:-1]):
            raise ValueError("pause intervals must be sorted, disjoint and have end >= start")
        durations = ends - starts
        paused_before = np.concatenate(([0.0], np.cumsum(durations)[:-1])) if len(durations) else durations
        labels = tuple(kinds) if kinds is not None else ("young",) * len(starts)
        if len(labels) != len(starts):
            raise ValueError(f"{len(labels)} kinds for {len(starts)} pauses")
        return cls(starts, ends, starts - paused_before, paused_before, labels)

    @classmethod
    def empty(cls) -> PauseSchedule:
        """No pauses at all."""
        return cls.from_intervals([])

    def __len__(self) -> int:
        return len(self.starts)

    def __bool__(self) -> bool:
        return bool(self._s)

    def intervals(self) -> list[tuple[float, float]]:
        """The pauses as ``(start, end)`` pairs, in order."""
        return list(zip(self._s, self._e, strict=True))

    def next_start(self, t: float) -> float:
        """Start of the first pause not over at ``t`` (one in progress counts); ``inf`` when none.

        Until that moment time runs plainly, which is the model's fast path: no look-ups needed.

        >>> s = PauseSchedule.from_intervals([(10.0, 15.0)])
        >>> s.next_start(3.0), s.next_start(12.0), s.next_start(15.0)
        (10.0, 10.0, inf)
        """
        i = bisect_right(self._e, t)
        return self._s[i] if i < len(self._s) else float("inf")

    def ended_by(self, t: float) -> int:
        """How many pauses have ended at or before ``t``."""
        return bisect_right(self._e, t)

    def interval(self, i: int) -> tuple[float, float]:
        """Pause ``i`` as ``(start, end)``."""
        return self._s[i], self._e[i]

    def run_time(self, t: float) -> float:
        """Wall time ``t`` minus the paused time before it."""
        i = bisect_right(self._s, t) - 1
        if i < 0:
            return t
        return self._r[i] + max(0.0, t - self._e[i])

    def finish(self, start: float, work: float) -> float:
        """Wall time at which ``work`` units of progress begun at ``start`` complete."""
        if not self._s:
            return start + work
        target = self.run_time(start) + work
        # pauses that began at or before ``start`` are behind us (or we are inside one: wait it out)
        i = max(bisect_left(self._r, target), bisect_right(self._s, start))
        return target + (self._p[i] if i < len(self._s) else self._total)

    def release(self, t: float) -> float:
        """Earliest time at or after ``t`` when the server is running (a paused server sends nothing)."""
        if not self._s:
            return t
        i = bisect_right(self._s, t) - 1
        return self._e[i] if i >= 0 and t < self._e[i] else t

    def intersects(self, a: float, b: float) -> bool:
        """True when some pause overlaps ``[a, b)`` (exact; no floating-point subtraction)."""
        if not self._s:
            return False
        i = bisect_right(self._e, a)
        return i < len(self._s) and self._s[i] < b

    def overlap(self, a: float, b: float) -> float:
        """Paused time inside ``[a, b]``."""
        return (b - a) - (self.run_time(b) - self.run_time(a))
