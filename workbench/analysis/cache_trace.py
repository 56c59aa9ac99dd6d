"""The broker result-cache trace of a query log: what the cache studies and the sizing report replay.

The heavy lifting is in :mod:`workbench.pinot.cache`, which reproduces the RFC's keys and size estimate;
this is a pure function of the log's table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from workbench.pinot.sql import parse_query

__all__ = ["broker_trace"]


def broker_trace(queries: pd.DataFrame) -> pd.DataFrame:
    """A broker result-cache trace from a query log (``arrival_s``, ``sql``): canonical key, size, time.

    Keys are the RFC's canonical SQL (:func:`workbench.pinot.cache.keys.query_key`), so different
    spellings of one dashboard panel share a key; sizes are the caches' own estimate
    (:func:`workbench.pinot.cache.estimate.result_size_estimate`), as in the model.
    """
    from workbench.pinot.cache.estimate import result_size_estimate
    from workbench.pinot.cache.keys import query_key

    parsed: dict[str, tuple[str, int]] = {}
    keys, sizes = [], []
    for sql in queries["sql"]:
        hit = parsed.get(sql)
        if hit is None:
            q = parse_query(sql)
            hit = parsed[sql] = (query_key(q), result_size_estimate(q))
        keys.append(hit[0])
        sizes.append(hit[1])
    return pd.DataFrame({"key": keys, "size_bytes": np.asarray(sizes, dtype=np.int64),
                         "time_ms": queries["arrival_s"].to_numpy(dtype=float) * 1000.0})
