"""Compiled pause arithmetic: the same operations as :class:`workbench.sim.pauses.PauseSchedule`.

A schedule is four arrays (starts, ends, run time at each start, paused time before each start) plus
its total; every function mirrors the Python method of the same name operation for operation, so the
two engines compute bit-identical times.
"""

from __future__ import annotations

import numpy as np

from workbench.sim.fast.jit import helper

__all__ = ["finish", "intersects", "release", "run_time"]


@helper
def run_time(s: np.ndarray, e: np.ndarray, r: np.ndarray, t: float) -> float:
    """Wall time ``t`` minus the paused time before it."""
    i = np.searchsorted(s, t, side="right") - 1
    if i < 0:
        return t
    return float(r[i] + max(0.0, t - e[i]))


@helper
def finish(s: np.ndarray, e: np.ndarray, r: np.ndarray, p: np.ndarray, total: float, start: float,
           work: float) -> float:
    """Wall time at which ``work`` units of progress begun at ``start`` complete."""
    if len(s) == 0:
        return start + work
    target = run_time(s, e, r, start) + work
    i = max(np.searchsorted(r, target, side="left"), np.searchsorted(s, start, side="right"))
    return float(target + (p[i] if i < len(s) else total))


@helper
def release(s: np.ndarray, e: np.ndarray, t: float) -> float:
    """Earliest time at or after ``t`` when the server is running."""
    if len(s) == 0:
        return t
    i = np.searchsorted(s, t, side="right") - 1
    return float(e[i]) if i >= 0 and t < e[i] else t


@helper
def intersects(s: np.ndarray, e: np.ndarray, a: float, b: float) -> bool:
    """True when some pause overlaps ``[a, b)``."""
    if len(s) == 0:
        return False
    i = np.searchsorted(e, a, side="right")
    return bool(i < len(s) and s[i] < b)
