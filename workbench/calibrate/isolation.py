"""Which logged queries met no other query in flight: the ones that cannot have waited.

A broker log's ``timeMs`` includes queueing: a query that arrives while others hold the servers' threads waits
for them. The model simulates those waits itself (it replays the log's arrival times), so a fit that reads them
as cost, as per-segment spread or as per-request delay counts them twice: at 30% busy the waits alone spread the
residuals, and the model's p99 came out 18% above the log's. A query that arrived when no earlier query was still
in flight (by the log's own arrival times and ``timeMs``, with a millisecond for the clock) found every server
idle, so its time is its work, its delays and the clock's error, and nothing else. At low load almost every
query is such; at moderate load enough are to fit on.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CLOCK_MS", "MIN_ISOLATED", "MIN_OVERLAPPED", "isolated", "leave_out_overlapped"]

#: The most a logged ``timeMs`` understates a query's time (a difference of two millisecond readings).
CLOCK_MS = 1.0
#: The fewest isolated queries a fit is restricted to (fewer: all queries are used, and the fit says so).
MIN_ISOLATED = 200
#: Overlapped queries are left out only when at least this share of the log had another query in flight:
#: below it waits are rare and short, and leaving queries out would only cost precision.
MIN_OVERLAPPED = 0.10


def leave_out_overlapped(alone: np.ndarray) -> bool:
    """Whether a fit should keep only the isolated queries (``alone``): enough of them, and enough overlapped.

    >>> leave_out_overlapped(np.array([True] * 950 + [False] * 50)), leave_out_overlapped(np.array([True, False] * 500))
    (False, True)
    """
    return int(alone.sum()) >= MIN_ISOLATED and float((~alone).mean()) >= MIN_OVERLAPPED


def isolated(arrival_s: np.ndarray, time_ms: np.ndarray) -> np.ndarray:
    """Whether each query arrived after every earlier query had finished (in any order of the rows).

    >>> isolated(np.array([0.0, 0.005, 0.020, 0.0205]), np.array([10.0, 3.0, 0.0, 4.0])).tolist()
    [True, False, True, False]
    """
    if len(arrival_s) == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(arrival_s, kind="stable")
    start = arrival_s[order]
    busy_until = np.maximum.accumulate(start + (time_ms[order] + CLOCK_MS) / 1000.0)
    alone = np.ones(len(start), dtype=bool)
    alone[1:] = start[1:] >= busy_until[:-1]
    out = np.empty(len(start), dtype=bool)
    out[order] = alone
    return out
