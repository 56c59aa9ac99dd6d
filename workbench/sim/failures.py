"""Server failures, all decided up front: crashes and recoveries (down intervals drawn from each
server's own stream), and degraded servers (``failures.slow`` and ``failures.wedged``: windows the
scenario names, no draws).

A *wedged* server keeps its connections and accepts requests but makes no progress: to both engines it
is stopped, exactly as in a stop-the-world pause (work in progress is frozen, a request that arrives is
read when the wedge ends), so :func:`stops` joins its wedges to its GC pauses; the GC pauses alone stay
what the records call pauses. A *slow* server's work takes longer by a factor while its window lasts
(:class:`SlowWindows`, read through :func:`workbench.sim.decisions.slow_scale`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from workbench.sim.pauses import PauseSchedule

__all__ = ["SlowWindows", "crash_schedule", "stops", "wedge_schedule"]

#: The kind a wedge carries among a server's stops (GC pauses carry their collection's kind).
WEDGED = "wedged"


def crash_schedule(mtbf_ms: float | None, mttr_ms: float | None, rng: np.random.Generator,
                   horizon_ms: float) -> PauseSchedule:
    """Down intervals of one server: up for Exp(MTBF), down for Exp(MTTR), alternating (ms).

    No crashes when either mean is ``None``.
    """
    if mtbf_ms is None or mttr_ms is None:
        return PauseSchedule.empty()
    intervals: list[tuple[float, float]] = []
    t = 0.0
    while True:
        start = t + float(rng.exponential(mtbf_ms))
        if start >= horizon_ms:
            return PauseSchedule.from_intervals(intervals)
        end = start + float(rng.exponential(mttr_ms))
        intervals.append((start, end))
        t = end


def _window_ms(from_s: float, until_s: float | None, horizon_ms: float) -> tuple[float, float]:
    """A window of the scenario (s; ``until_s`` ``None``: to the end of the run) in ms."""
    return from_s * 1000.0, (horizon_ms if until_s is None else until_s * 1000.0)


def wedge_schedule(windows: Sequence[tuple[float, float | None]], horizon_ms: float) -> PauseSchedule:
    """One server's wedges (``(from_s, until_s)`` pairs, disjoint: the scenario checks) as stop intervals (ms).

    A wedge that starts at or after the horizon stops nothing the run sees and is left out: a window open
    to the end of the run would otherwise end (at the horizon) before it starts. A wedge that starts
    before the horizon keeps its own end, so queries sent just before the horizon still wait for it."""
    intervals = sorted(w for w in (_window_ms(a, b, horizon_ms) for a, b in windows) if w[0] < horizon_ms)
    return PauseSchedule.from_intervals(intervals, [WEDGED] * len(intervals))


def stops(pauses: PauseSchedule, wedges: PauseSchedule) -> PauseSchedule:
    """Every interval in which a server makes no progress: its GC pauses joined with its wedges
    (overlapping ones merged). Without wedges, the pauses themselves (the same object: the same bits)."""
    if not wedges:
        return pauses
    merged: list[list[float]] = []
    kinds: list[str] = []
    for start, end, kind in sorted(zip([*pauses.starts.tolist(), *wedges.starts.tolist()],
                                       [*pauses.ends.tolist(), *wedges.ends.tolist()],
                                       [*pauses.kinds, *wedges.kinds], strict=True)):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            if kind == WEDGED:
                kinds[-1] = WEDGED
        else:
            merged.append([start, end])
            kinds.append(kind)
    return PauseSchedule.from_intervals([(a, b) for a, b in merged], kinds)


@dataclass(frozen=True)
class SlowWindows:
    """Every server's slow windows, server ``s``'s at ``offsets[s]:offsets[s + 1]``: from ``start`` to
    ``end`` (ms) its work is multiplied by ``factor``. Flat arrays, so the compiled engine reads them too."""

    offsets: np.ndarray
    start: np.ndarray
    end: np.ndarray
    factor: np.ndarray

    @classmethod
    def of(cls, per_server: Sequence[Sequence[tuple[float, float | None, float]]], horizon_ms: float) -> SlowWindows:
        """From each server's ``(from_s, until_s, factor)`` windows (disjoint: the scenario checks)."""
        rows = [sorted((*_window_ms(a, b, horizon_ms), f) for a, b, f in windows) for windows in per_server]
        flat = [w for r in rows for w in r]
        offsets = np.concatenate(([0], np.cumsum([len(r) for r in rows]))).astype(np.int64)
        return cls(offsets, np.array([w[0] for w in flat], dtype=float), np.array([w[1] for w in flat], dtype=float),
                   np.array([w[2] for w in flat], dtype=float))

    def __bool__(self) -> bool:
        return len(self.start) > 0

    def server(self, s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Server ``s``'s windows: starts, ends and factors."""
        a, b = int(self.offsets[s]), int(self.offsets[s + 1])
        return self.start[a:b], self.end[a:b], self.factor[a:b]
