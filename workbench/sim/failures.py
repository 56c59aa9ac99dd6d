"""Server crashes and recoveries: down intervals drawn up front from each server's own stream."""

from __future__ import annotations

import numpy as np

from workbench.sim.pauses import PauseSchedule

__all__ = ["crash_schedule"]


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
