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
    "CODE_BITS",
    "ENGINE_LATENCY_COLUMNS",
    "ENGINE_QUERY_COLUMNS",
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
    "ReplicationRecords",
    "Result",
    "code_mask",
    "code_text",
    "count_window",
    "failure_rows",
    "frame",
    "pause_rows",
    "server_row",
    "window_counts",
]

QUERY_COLUMNS = (
    "replication", "query_id", "arrival_s", "latency_ms", "servers_queried",
    "segments_queried", "segments_pruned", "partial", "gc_delayed", "queue_wait_ms", "cache_hit", "error_codes",
    "table",
)
#: The ``queries`` columns an engine writes for one replication; the run adds ``table`` (which table each
#: query asked, known from the plan, not from the engine).
ENGINE_QUERY_COLUMNS = QUERY_COLUMNS[:-1]
SERVER_COLUMNS = (
    "replication", "server", "requests", "scheduling_timeouts", "execution_timeouts", "busy_ms", "cores",
    "utilisation", "failed_requests", "segment_cache_hits", "paused_ms", "live_heap", "peak_heap", "oom_at_s",
)
GC_PAUSE_COLUMNS = ("replication", "server", "start_s", "duration_ms", "kind")
#: QueryErrorCodes the engines report, each counted per replication in ``windows``.
ERROR_CODES = (211, 240, 250, 305, 425, 427)
#: Each code's bit in a code mask, the compiled engine's form of an ``error_codes`` record (a code outside
#: :data:`ERROR_CODES` would set the bit after theirs: it is counted as ``errored``, in no ``code_*``).
CODE_BITS: Mapping[int, int] = {code: bit for bit, code in enumerate(ERROR_CODES)}
_OTHER_BIT = len(ERROR_CODES)
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


def code_text(mask: np.ndarray) -> pd.Series:
    """The ``error_codes`` records of code masks (:data:`CODE_BITS`): sorted, comma-separated, ``""``
    when none, as the SimPy engine writes them."""
    texts = np.array([",".join(str(c) for c in ERROR_CODES if m >> CODE_BITS[c] & 1) for m in range(1 << _OTHER_BIT)],
                     dtype=object)
    return pd.Series(texts[mask], dtype="string")


def code_mask(error_codes: pd.Series) -> np.ndarray:
    """The code mask (:data:`CODE_BITS`) of each ``error_codes`` record: the inverse of :func:`code_text`."""
    text = error_codes.fillna("").astype(str).to_numpy(dtype=object)
    distinct, which = np.unique(text, return_inverse=True)
    masks = np.zeros(len(distinct), dtype=np.int64)
    for i, codes in enumerate(distinct.tolist()):
        for code in codes.split(",") if codes else ():
            masks[i] |= 1 << CODE_BITS.get(int(code), _OTHER_BIT)
    out: np.ndarray = masks[which.reshape(-1)] if len(text) else np.zeros(0, dtype=np.int64)
    return out


def count_window(mask: np.ndarray, partial: np.ndarray, gc_delayed: np.ndarray, cache_hit: np.ndarray,
                 servers_queried: np.ndarray, segments_queried: np.ndarray) -> dict[str, Any]:
    """What a replication's kept queries add up to (the ``windows`` row's counts), from their columns:
    code masks, the ``partial``, ``gc_delayed`` and cache-hit flags, servers and segments queried.

    Both engines count here (the SimPy engine through :func:`window_counts`, the compiled one from its
    arrays, without building the text columns), so the counts cannot drift apart.
    """
    return {"queries": len(mask), "partial": int(np.count_nonzero(partial)),
            "gc_delayed": int(np.count_nonzero(gc_delayed)), "cache_hits": int(np.count_nonzero(cache_hit)),
            "servers_queried": int(np.sum(servers_queried, dtype=np.int64)),
            "segments_queried": int(np.sum(segments_queried, dtype=np.int64)), "errored": int(np.count_nonzero(mask)),
            **{f"code_{c}": int(np.count_nonzero(mask >> CODE_BITS[c] & 1)) for c in ERROR_CODES}}


def window_counts(queries: pd.DataFrame) -> dict[str, Any]:
    """What a replication's ``queries`` add up to (the ``windows`` row's counts): kept beside the latencies
    when a large run drops the other per-query columns (``simulation.records: latency``)."""
    return count_window(code_mask(queries["error_codes"]), queries["partial"].to_numpy(dtype=bool),
                        queries["gc_delayed"].to_numpy(dtype=bool),
                        (queries["cache_hit"].fillna("") != "").to_numpy(dtype=bool),
                        queries["servers_queried"].to_numpy(), queries["segments_queried"].to_numpy())


#: The ``queries`` columns a ``latency`` run keeps (the rest is summed into ``windows``).
LATENCY_COLUMNS = ("replication", "query_id", "latency_ms", "table")
#: The ``queries`` columns an engine writes for a ``latency`` run (the run adds ``table``).
ENGINE_LATENCY_COLUMNS = LATENCY_COLUMNS[:-1]


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
        }, columns=list(ENGINE_QUERY_COLUMNS))


@dataclass
class ReplicationRecords:
    """One replication's records as an engine returns them: its ``queries`` table, its rows of the
    ``servers``, ``gc_pauses`` and ``failures`` tables, and its ``windows`` row."""

    queries: pd.DataFrame
    servers: list[dict[str, Any]]
    pauses: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    window: dict[str, Any]


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
