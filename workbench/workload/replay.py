"""A query log replayed faster: the load knob of a replayed workload (``workload.arrival.speed``).

A log carries the user's own mix of queries and its own bursts; replaying it ``factor`` times faster keeps
both and raises the rate, which is what a what-if on load means for a replayed workload. A log shorter
than the run once sped up is repeated back to back (its gaps kept), so the run is loaded to its end.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["scale_query_log"]


def scale_query_log(queries: pd.DataFrame, factor: float, min_span_s: float) -> pd.DataFrame:
    """A query log replayed ``factor`` times faster, repeated until it spans ``min_span_s`` seconds.

    >>> q = pd.DataFrame({"arrival_s": [0.0, 2.0, 4.0], "sql": ["a", "b", "c"]})
    >>> scale_query_log(q, 2.0, 5.0)["arrival_s"].tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    """
    if factor <= 0:
        raise ValueError(f"factor must be > 0, got {factor}")
    base = queries.sort_values("arrival_s", kind="stable").reset_index(drop=True)
    times = base["arrival_s"].to_numpy(dtype=float) / factor
    period = float(times[-1] - times[0]) + float(np.mean(np.diff(times))) if len(times) > 1 else 1.0
    copies = max(1, math.ceil((min_span_s + 1e-9) / period)) if period > 0 else 1
    parts = [base.assign(arrival_s=times + k * period) for k in range(copies)]
    out = pd.concat(parts, ignore_index=True)
    out = out[out["arrival_s"] <= max(min_span_s, float(times[-1]))].reset_index(drop=True)
    if "query_id" in out:
        out["query_id"] = np.arange(len(out), dtype=np.int64)
    return out
