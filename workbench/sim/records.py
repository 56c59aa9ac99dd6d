"""Flat result records of a run and the :class:`Result` that holds them.

One row per query (after warm-up), per server, per GC pause, per crash and per replication. The engine
emits these rows; statistics and plots (:mod:`workbench.analysis`) read only these tables, never the
model's internals. Every column is documented in ``docs/records.md``; a test checks the page against
the column lists below and against the frames a run produces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "FAILURE_COLUMNS",
    "GC_PAUSE_COLUMNS",
    "QUERY_COLUMNS",
    "RUN_TABLES",
    "SERVER_COLUMNS",
    "WINDOW_COLUMNS",
    "QueryRecords",
    "Result",
    "frame",
]

QUERY_COLUMNS = (
    "replication", "query_id", "arrival_s", "latency_ms", "servers_queried",
    "segments_queried", "segments_pruned", "partial", "gc_delayed", "queue_wait_ms", "cache_hit", "error_codes",
)
SERVER_COLUMNS = (
    "replication", "server", "requests", "scheduling_timeouts", "execution_timeouts", "busy_ms", "cores",
    "utilisation", "failed_requests", "segment_cache_hits", "paused_ms",
)
GC_PAUSE_COLUMNS = ("replication", "server", "start_s", "duration_ms")
WINDOW_COLUMNS = ("replication", "window_s", "mean_in_flight")
FAILURE_COLUMNS = ("replication", "server", "down_s", "up_s")
#: Each table of a run (and of its run directory, as ``NAME.parquet``) with its columns, in order.
RUN_TABLES: Mapping[str, tuple[str, ...]] = {
    "queries": QUERY_COLUMNS,
    "servers": SERVER_COLUMNS,
    "gc_pauses": GC_PAUSE_COLUMNS,
    "windows": WINDOW_COLUMNS,
    "failures": FAILURE_COLUMNS,
}


def frame(rows: Iterable[Mapping[str, Any]], columns: tuple[str, ...]) -> pd.DataFrame:
    """Rows as a frame with exactly ``columns``, in that order (an empty frame keeps them too)."""
    return pd.DataFrame(list(rows), columns=list(columns))


@dataclass
class QueryRecords:
    """The per-query rows of one replication, as columns (appending to lists is the cheap part).

    ``query`` is each query's index in the replication's arrival order; rows are ordered by it.
    """

    query: list[int] = field(default_factory=list)
    arrival_ms: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    servers_queried: list[int] = field(default_factory=list)
    segments_queried: list[int] = field(default_factory=list)
    segments_pruned: list[int] = field(default_factory=list)
    partial: list[bool] = field(default_factory=list)
    gc_delayed: list[bool] = field(default_factory=list)
    queue_wait_ms: list[float] = field(default_factory=list)
    cache_hit: list[str] = field(default_factory=list)
    error_codes: list[str] = field(default_factory=list)

    def frame(self, replication: int) -> pd.DataFrame:
        """The ``queries`` table of this replication, in arrival order."""
        n = len(self.arrival_ms)
        order = np.argsort(np.asarray(self.query, dtype=np.int64), kind="stable") if n else np.empty(0, dtype=int)

        def col(values: list[Any], dtype: Any) -> np.ndarray:
            return np.asarray(values, dtype=dtype)[order]

        return pd.DataFrame({
            "replication": np.full(n, replication, dtype=np.int32),
            "query_id": np.arange(n, dtype=np.int64),
            "arrival_s": col(self.arrival_ms, float) / 1000.0,
            "latency_ms": col(self.latency_ms, float),
            "servers_queried": col(self.servers_queried, np.int32),
            "segments_queried": col(self.segments_queried, np.int32),
            "segments_pruned": col(self.segments_pruned, np.int32),
            "partial": col(self.partial, bool),
            "gc_delayed": col(self.gc_delayed, bool),
            "queue_wait_ms": col(self.queue_wait_ms, float),
            "cache_hit": pd.Series(col(self.cache_hit, object), dtype="string"),
            "error_codes": pd.Series(col(self.error_codes, object), dtype="string"),
        }, columns=list(QUERY_COLUMNS))


def _empty(name: str) -> pd.DataFrame:
    return pd.DataFrame(columns=list(RUN_TABLES[name]))


@dataclass(frozen=True)
class Result:
    """Everything one :func:`workbench.simulate` call measured: plain tables and the run's parameters.

    Statistics are not computed here; :func:`workbench.analysis.stats.summarise` reads these tables.
    """

    queries: pd.DataFrame
    servers: pd.DataFrame
    gc_pauses: pd.DataFrame
    #: Per replication: measured window (s) and time-average queries in flight.
    windows: pd.DataFrame
    failures: pd.DataFrame = field(default_factory=lambda: _empty("failures"))
    parameters: dict[str, Any] = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The run's tables by name (the keys of :data:`RUN_TABLES`)."""
        return {name: getattr(self, name) for name in RUN_TABLES}
