"""Flat result records of a run and the :class:`Result` that holds them.

One row per query (after warm-up), per server, per GC pause. Statistics and plots read only these
tables, never the model's internals.

``queries`` columns
    ``replication``, ``query_id``, ``arrival_s`` (s since start), ``latency_ms`` (broker receive to
    reply), ``servers_queried``, ``segments_queried``, ``segments_pruned``, ``partial`` (a server
    missed the deadline or failed), ``gc_delayed`` (a queried server paused while serving it),
    ``queue_wait_ms`` (longest time one of its tasks waited for a worker thread, on any server),
    ``cache_hit`` (``broker`` answered from the result cache, ``singleflight`` waited for an identical
    query in flight, empty otherwise).
``servers`` columns
    ``replication``, ``server``, ``requests``, ``busy_ms`` (worker-thread time), ``cores``,
    ``utilisation`` (busy / (cores x measured time)), ``failed_requests``, ``paused_ms``.
``gc_pauses`` columns
    ``replication``, ``server``, ``start_s``, ``duration_ms``.
``failures`` columns
    ``replication``, ``server``, ``down_s``, ``up_s`` (crash and recovery times).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

__all__ = ["QUERY_COLUMNS", "Result"]

QUERY_COLUMNS = (
    "replication", "query_id", "arrival_s", "latency_ms", "servers_queried",
    "segments_queried", "segments_pruned", "partial", "gc_delayed", "queue_wait_ms", "cache_hit",
)


@dataclass(frozen=True)
class Result:
    """Everything one :func:`workbench.simulate` call measured."""

    queries: pd.DataFrame
    servers: pd.DataFrame
    gc_pauses: pd.DataFrame
    #: Per replication: measured window (s), time-average queries in flight, arrivals in window.
    windows: pd.DataFrame
    failures: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=["replication", "server", "down_s", "up_s"]))
    parameters: dict[str, Any] = field(default_factory=dict)

    def summary(self, confidence: float | None = None) -> dict[str, Any]:
        """Percentiles with confidence intervals, throughput, utilisation, partial rate, Little's law."""
        from workbench.analysis.stats import summarise

        return summarise(self, confidence)
