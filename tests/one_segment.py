"""A workload directory of one 1,000-document segment and a replay of given queries, for engine tests written by
hand (the segment's time range 0-99 ms, so no time filter prunes it)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd


def write(d: Path, arrival_s: Sequence[float], sql: Sequence[str]) -> Path:
    """``d`` holding ``segments.parquet`` (one segment, ``s0``) and ``queries.parquet`` (``sql`` at ``arrival_s``)."""
    seg = pd.DataFrame({"segment_name": ["s0"], "start_time_ms": [0], "end_time_ms": [99], "total_docs": [1000]})
    seg["zk_metadata"] = [json.dumps({"segment.start.time": "0", "segment.end.time": "99",
                                      "segment.time.unit": "MILLISECONDS", "segment.total.docs": "1000"})]
    seg.to_parquet(d / "segments.parquet")
    pd.DataFrame({"arrival_s": list(arrival_s), "sql": list(sql)}).to_parquet(d / "queries.parquet")
    return d
