"""Per-table results of a run of several tables on one tenant (``tables:``), from the run's flat records.

Every table's queries are the rows of ``queries`` with its name in ``table``; its servers are its tenant's
(tagged as the scenario's ``cluster.tenants`` gives them), shared with the tenant's other tables, so a
table's utilisation and heap are its tenant's. Each table is held to its own ``slo:``; the run's verdict is
met when every table meets its own (:func:`tenant_verdict`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.analysis.slo import check_slo
from workbench.io.summary import Heap, Latency, SLOChecks, SLOVerdict, TableSummary, Utilisation

if TYPE_CHECKING:
    from workbench.scenario import Scenario
    from workbench.sim.records import Result

__all__ = ["LatencyOf", "table_summaries", "tenant_verdict"]

#: Computes a latency summary from a frame of queries (the run summary's own rule, handed in).
LatencyOf = Callable[[pd.DataFrame], Latency]


def _tables(parameters: Mapping[str, Any]) -> tuple[Scenario, ...]:
    """The tables a run recorded (none for a one-table scenario in the classic form)."""
    from workbench.scenario import recorded_scenario

    data = parameters.get("scenario") or {}
    if not isinstance(data.get("tables"), list):
        return ()
    return recorded_scenario(data, base_dir=Path(".")).tables


def _mean(queries: pd.DataFrame, column: str, test: Callable[[pd.Series], pd.Series] | None = None) -> float:
    """The mean of a column over the queries (of ``test`` of it), NaN when a ``latency`` run dropped it."""
    if column not in queries or not len(queries):
        return float("nan")
    values = queries[column] if test is None else test(queries[column])
    return float(np.mean(values.to_numpy(dtype=float)))


def _heap(servers: pd.DataFrame, run_heap: Heap) -> Heap:
    """The run's heap figures over ``servers`` (a tenant's)."""
    if not len(servers):
        return run_heap
    return Heap(live_max=float(servers["live_heap"].max()), peak_max=float(servers["peak_heap"].max()),
                oom_servers=int(servers["oom_at_s"].notna().sum()), upsert_keys_max=run_heap.upsert_keys_max,
                upsert_keys_from=run_heap.upsert_keys_from, at_s=run_heap.at_s)


def _one(view: Scenario, queries: pd.DataFrame, result: Result, latency_of: LatencyOf, heap: Heap) -> TableSummary:
    window = float(result.windows["window_s"].sum())
    names = {f"Server_{i}" for i in view.table_servers()}
    servers = result.servers[result.servers["server"].isin(names)]
    latency = latency_of(queries)
    return TableSummary(
        tenant=view.tenant, latency_ms=latency, queries=len(queries),
        throughput_qps=len(queries) / window if window else float("nan"),
        partial_rate=_mean(queries, "partial"),
        query_error_share=_mean(queries, "error_codes", lambda c: c.fillna("") != ""),
        servers_queried_mean=_mean(queries, "servers_queried"),
        segments_queried_mean=_mean(queries, "segments_queried"),
        utilisation=Utilisation(mean=float(servers["utilisation"].mean()), max=float(servers["utilisation"].max())),
        slo=check_slo(latency.p99, _heap(servers, heap), view.slo))


def table_summaries(result: Result, latency_of: LatencyOf, heap: Heap) -> dict[str, TableSummary] | None:
    """Each table's summary of a run of several tables (``None`` for the classic one-table form)."""
    views = _tables(result.parameters)
    if not views:
        return None
    by_table = {str(name): frame for name, frame in result.queries.groupby("table", observed=True, sort=False)}
    empty = result.queries.iloc[:0]
    return {v.table.table_name: _one(v, by_table.get(v.table.table_name, empty), result, latency_of, heap)
            for v in views}


def tenant_verdict(tables: Mapping[str, TableSummary]) -> SLOVerdict:
    """Met when every table meets its own SLO (``None`` when no table has one); the checks shown are the
    first failing table's (else the first checked one's), and ``why`` names each failing table."""
    verdicts = [(name, t.slo) for name, t in tables.items() if t.slo.met is not None]
    if not verdicts:
        return SLOVerdict(met=None, checks=SLOChecks(), why="")
    failing = [(name, v) for name, v in verdicts if not v.met]
    shown = (failing or verdicts)[0][1]
    return SLOVerdict(met=not failing, checks=shown.checks, why="; ".join(f"table {n}: {v.why}" for n, v in failing))

