"""Compiled pause arithmetic: the same operations as :class:`workbench.sim.pauses.PauseSchedule`.

A schedule is four arrays (starts, ends, run time at each start, paused time before each start) plus
its total; every function mirrors the Python method of the same name operation for operation, so the
two engines compute bit-identical times.

The look-ups take a *hint*: ``hint`` (three int64) remembers where the last search on the starts,
the ends and the run times ended. A server's clock moves forward and pauses are seconds apart, so the
next answer is almost always that place or the next one: two comparisons instead of a binary search.
The answer is the binary search's either way.
"""

from __future__ import annotations

import numpy as np

from workbench.sim.fast.jit import helper

__all__ = ["HINTS", "finish", "intersects", "release", "run_time"]

#: Slots of a hint array: last look-up in the starts, the ends and the run times.
_ON_S, _ON_E, _ON_R = 0, 1, 2
#: Length of a hint array.
HINTS = 3


@helper
def _upper(a: np.ndarray, t: float, hint: np.ndarray, slot: int) -> int:
    """``np.searchsorted(a, t, side="right")`` (``a`` sorted, no NaN), starting from ``hint[slot]``."""
    n = len(a)
    i: int = min(hint[slot], n)
    if (i == n or t < a[i]) and (i == 0 or a[i - 1] <= t):
        return i
    if i < n and a[i] <= t and (i + 1 == n or t < a[i + 1]):
        hint[slot] = i + 1
        return i + 1
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if t < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    hint[slot] = lo
    return lo


@helper
def _lower(a: np.ndarray, t: float, hint: np.ndarray, slot: int) -> int:
    """``np.searchsorted(a, t, side="left")`` (``a`` sorted, no NaN), starting from ``hint[slot]``."""
    n = len(a)
    i: int = min(hint[slot], n)
    if (i == n or t <= a[i]) and (i == 0 or a[i - 1] < t):
        return i
    if i < n and a[i] < t and (i + 1 == n or t <= a[i + 1]):
        hint[slot] = i + 1
        return i + 1
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < t:
            lo = mid + 1
        else:
            hi = mid
    hint[slot] = lo
    return lo


@helper
def run_time(s: np.ndarray, e: np.ndarray, r: np.ndarray, t: float, hint: np.ndarray) -> float:
    """Wall time ``t`` minus the paused time before it."""
    i = _upper(s, t, hint, _ON_S) - 1
    if i < 0:
        return t
    return float(r[i] + max(0.0, t - e[i]))


@helper
def finish(s: np.ndarray, e: np.ndarray, r: np.ndarray, p: np.ndarray, total: float, start: float,
           work: float, hint: np.ndarray) -> float:
    """Wall time at which ``work`` units of progress begun at ``start`` complete."""
    if len(s) == 0:
        return start + work
    target = run_time(s, e, r, start, hint) + work
    i = max(_lower(r, target, hint, _ON_R), _upper(s, start, hint, _ON_S))
    return float(target + (p[i] if i < len(s) else total))


@helper
def release(s: np.ndarray, e: np.ndarray, t: float, hint: np.ndarray) -> float:
    """Earliest time at or after ``t`` when the server is running."""
    if len(s) == 0:
        return t
    i = _upper(s, t, hint, _ON_S) - 1
    return float(e[i]) if i >= 0 and t < e[i] else t


@helper
def intersects(s: np.ndarray, e: np.ndarray, a: float, b: float, hint: np.ndarray) -> bool:
    """True when some pause overlaps ``[a, b)``."""
    if len(s) == 0:
        return False
    i = _upper(e, a, hint, _ON_E)
    return bool(i < len(s) and s[i] < b)
