"""Flat result records of a run and the :class:`Result` that holds them.

One row per query (after warm-up), per server, per GC pause, per crash and per replication. The engine
emits these rows; statistics and plots (:mod:`workbench.analysis`) read only these tables, never the
model's internals. Every column is documented in ``docs/records.md``; a test checks the page against
the column lists below and against the frames a run produces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

__all__ = [
    "ERROR_CODES",
    "FAILURE_COLUMNS",
    "GC_PAUSE_COLUMNS",
    "HEAP_COLUMNS",
    "LATENCY_COLUMNS",
    "QUERY_COLUMNS",
    "RUN_TABLES",
    "SERVER_COLUMNS",
    "WINDOW_COLUMNS",
    "QueryRecords",
    "Result",
    "failure_rows",
    "frame",
    "pause_rows",
    "server_row",
    "window_counts",
]

QUERY_COLUMNS = (
    "replication", "query_id", "arrival_s", "latency_ms", "servers_queried",
    "segments_queried", "segments_pruned", "partial", "gc_delayed", "queue_wait_ms", "cache_hit", "error_codes",
)
SERVER_COLUMNS = (
    "replication", "server", "requests", "scheduling_timeouts", "execution_timeouts", "busy_ms", "cores",
    "utilisation", "failed_requests", "segment_cache_hits", "paused_ms", "live_heap", "peak_heap", "oom_at_s",
)
GC_PAUSE_COLUMNS = ("replication", "server", "start_s", "duration_ms", "kind")
#: QueryErrorCodes the engines report, each counted per replication in ``windows``.
ERROR_CODES = (211, 240, 250, 305, 425, 427)
WINDOW_COLUMNS = ("replication", "window_s", "mean_in_flight", "queries", "partial", "gc_delayed", "cache_hits",
                  "servers_queried", "segments_queried", "errored", *(f"code_{c}" for c in ERROR_CODES))
FAILURE_COLUMNS = ("replication", "server", "down_s", "up_s")
#: Each server's upsert heap over the data's span (a replayed upsert table only; see workbench.sim.memory).
HEAP_COLUMNS = ("server", "time_s", "upsert_keys", "map_bytes", "bitmap_bytes", "update_rate", "live_heap")
#: Each table of a run (and of its run directory, as ``NAME.parquet``) with its columns, in order.
RUN_TABLES: Mapping[str, tuple[str, ...]] = {
    "queries": QUERY_COLUMNS,
    "servers": SERVER_COLUMNS,
    "gc_pauses": GC_PAUSE_COLUMNS,
    "windows": WINDOW_COLUMNS,
    "failures": FAILURE_COLUMNS,
    "heap": HEAP_COLUMNS,
}


class _Heap(Protocol):
    @property
    def live_bytes(self) -> float: ...

    @property
    def peak_bytes(self) -> float: ...

    @property
    def oom_at_ms(self) -> float | None: ...

    @property
    def pauses(self) -> Any: ...


def server_row(replication: int, name: str, requests: int, scheduling_timeouts: int, execution_timeouts: int,
               busy_ms: float, cores: int, horizon_ms: float, failed: int, cache_hits: int,
               heap: _Heap) -> dict[str, Any]:
    """One ``servers`` row (both engines build it here, so the columns cannot drift apart)."""
    return {"replication": replication, "server": name, "requests": int(requests),
            "scheduling_timeouts": int(scheduling_timeouts), "execution_timeouts": int(execution_timeouts),
            "busy_ms": float(busy_ms), "cores": cores, "utilisation": float(busy_ms) / (cores * horizon_ms),
            "failed_requests": int(failed), "segment_cache_hits": int(cache_hits),
            "paused_ms": heap.pauses.overlap(0.0, horizon_ms), "live_heap": float(heap.live_bytes),
            "peak_heap": float(heap.peak_bytes),
            "oom_at_s": float("nan") if heap.oom_at_ms is None else heap.oom_at_ms / 1000.0}


def pause_rows(servers: Sequence[str], pauses: Sequence[Any], replication: int) -> list[dict[str, Any]]:
    """One ``gc_pauses`` row per pause of every server (``pauses``: each server's schedule)."""
    return [{"replication": replication, "server": name, "start_s": start / 1000.0, "duration_ms": end - start,
             "kind": kind}
            for name, p in zip(servers, pauses, strict=True)
            for (start, end), kind in zip(p.intervals(), p.kinds, strict=True)]


def failure_rows(servers: Sequence[str], crashes: Sequence[Any], replication: int) -> list[dict[str, Any]]:
    """One ``failures`` row per crash of every server (down and up times, s)."""
    return [{"replication": replication, "server": name, "down_s": down / 1000.0, "up_s": up / 1000.0}
            for name, c in zip(servers, crashes, strict=True) for down, up in c.intervals()]


def window_counts(queries: pd.DataFrame) -> dict[str, Any]:
    """What a replication's ``queries`` add up to (the ``windows`` row's counts): kept beside the latencies
    when a large run drops the other per-query columns (``simulation.records: latency``)."""
    codes = queries["error_codes"].fillna("").astype(str)
    carried = codes[codes != ""].str.split(",").explode().astype(int).value_counts()
    counts = {f"code_{c}": int(carried.get(c, 0)) for c in ERROR_CODES}
    return {"queries": len(queries), "partial": int(queries["partial"].sum()),
            "gc_delayed": int(queries["gc_delayed"].sum()),
            "cache_hits": int((queries["cache_hit"].fillna("") != "").sum()),
            "servers_queried": int(queries["servers_queried"].sum()),
            "segments_queried": int(queries["segments_queried"].sum()), "errored": int((codes != "").sum()),
            **counts}


#: The ``queries`` columns a ``latency`` run keeps (the rest is summed into ``windows``).
LATENCY_COLUMNS = ("replication", "query_id", "latency_ms")


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
            "query_id": col(self.query, np.int64),
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
    #: Each server's upsert heap over the data's span (empty unless keys came from a replay).
    heap: pd.DataFrame = field(default_factory=lambda: _empty("heap"))
    parameters: dict[str, Any] = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The run's tables by name (the keys of :data:`RUN_TABLES`)."""
        return {name: getattr(self, name) for name in RUN_TABLES}
