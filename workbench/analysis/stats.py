"""Estimates with confidence intervals, from a run's flat records.

Percentile intervals: with two or more replications each replication gives one independent estimate
and the interval is Student-t over them (the textbook method of independent replications). With one
replication the run is cut into ``batches`` contiguous batches by arrival time and the same
t-interval is taken over batch estimates (batch means), since single queries are correlated through
the queues and an order-statistic interval would be too narrow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats as st

from workbench import defaults as D
from workbench.analysis.failures import RunFacts, run_failures
from workbench.analysis.slo import check_slo, recorded_slo
from workbench.analysis.tables import table_summaries, tenant_verdict
from workbench.io.summary import (
    Engine,
    Errors,
    Heap,
    Latency,
    LittlesLaw,
    ModelUncertainty,
    Statistic,
    Summary,
    TableFit,
    Utilisation,
)
from workbench.sim.records import ERROR_CODES

if TYPE_CHECKING:
    from workbench.scenario.schema import SLOSpec
    from workbench.sim.records import Result

__all__ = ["PERCENTILES", "mean_ci", "model_interval", "percentile_ci", "percentile_cis", "summarise",
           "with_model_intervals"]

#: Percentiles the workbench reports, as (label, quantile).
PERCENTILES: tuple[tuple[str, float], ...] = (("p50", 50.0), ("p95", 95.0), ("p99", 99.0), ("p99.9", 99.9))


def mean_ci(estimates: np.ndarray, confidence: float = D.CONFIDENCE) -> tuple[float, float, float]:
    """Mean of independent estimates and its Student-t interval ``(mean, low, high)``.

    >>> mean_ci(np.array([1.0, 2.0, 3.0]), 0.95)[0]
    2.0
    """
    x = np.asarray(estimates, dtype=float)
    m = float(np.mean(x))
    if len(x) < 2:
        return m, float("nan"), float("nan")
    half = float(st.t.ppf(0.5 + confidence / 2, len(x) - 1) * np.std(x, ddof=1) / np.sqrt(len(x)))
    return m, m - half, m + half


def _groups(queries: pd.DataFrame, batches: int) -> list[np.ndarray]:
    reps = queries["replication"].unique()
    if len(reps) >= 2:
        return [g["latency_ms"].to_numpy() for _, g in queries.groupby("replication")]
    # a ``records: latency`` run keeps no arrival times, but its query ids count arrivals in order
    ordered = queries.sort_values("arrival_s" if "arrival_s" in queries else "query_id")["latency_ms"].to_numpy()
    return [b for b in np.array_split(ordered, batches) if len(b)]


def percentile_ci(
    queries: pd.DataFrame, q: float, confidence: float = D.CONFIDENCE, batches: int = 10
) -> tuple[float, float, float]:
    """Pooled percentile ``q`` of ``latency_ms`` with an interval from replications or batch means."""
    return percentile_cis(queries, (q,), confidence, batches)[0]


def percentile_cis(
    queries: pd.DataFrame, qs: Sequence[float], confidence: float = D.CONFIDENCE, batches: int = 10
) -> list[tuple[float, float, float]]:
    """:func:`percentile_ci` for each of ``qs``: the replications are split once, and each array is
    partitioned once for all of them (a run of 5M queries spent most of its summary partitioning)."""
    if queries.empty:
        return [(float("nan"), float("nan"), float("nan")) for _ in qs]
    points = np.percentile(queries["latency_ms"].to_numpy(), qs)
    per_group = np.array([np.percentile(g, qs) for g in _groups(queries, batches)]).reshape(-1, len(qs))
    out = []
    for k, point in enumerate(points.tolist()):
        _, low, high = mean_ci(per_group[:, k], confidence)
        half = (high - low) / 2
        out.append((point, max(0.0, point - half), point + half))
    return out


def _mean_latency_ci(queries: pd.DataFrame, confidence: float) -> tuple[float, float, float]:
    """Mean latency with the same replication / batch-means interval as the percentiles."""
    if queries.empty:
        return float("nan"), float("nan"), float("nan")
    point = float(queries["latency_ms"].mean())
    _, low, high = mean_ci(np.array([g.mean() for g in _groups(queries, 10)]), confidence)
    return point, max(0.0, point - (high - low) / 2), point + (high - low) / 2


def _littles_law(result: Result) -> LittlesLaw:
    """Time-average queries in flight (measured in the model) against arrival rate x mean latency."""
    q, w = result.queries, result.windows
    window = float(w["window_s"].sum())
    lam = len(q) / window if window else float("nan")
    l_measured = float((w["mean_in_flight"] * w["window_s"]).sum() / window) if window else float("nan")
    l_little = lam * float(q["latency_ms"].mean()) / 1000.0 if len(q) else float("nan")
    rel = abs(l_measured - l_little) / l_little if l_little else float("nan")
    return LittlesLaw(l_measured, l_little, rel)


def _errors(result: Result) -> Errors:
    """Shares of the servers' requests answered 240 and 250, and of queries by the codes they carried.

    Counted from ``windows`` (not ``queries``), so a ``records: latency`` run summarises the same."""
    servers, w = result.servers, result.windows
    requests = float(servers["requests"].sum()) if len(servers) else 0.0
    queries = float(w["queries"].sum())

    def share(column: str) -> float:
        return float(servers[column].sum()) / requests if requests and column in servers else 0.0

    by_code = {str(c): float(w[f"code_{c}"].sum()) / queries for c in ERROR_CODES if queries and w[f"code_{c}"].sum()}
    return Errors(scheduling_timeout_share=share("scheduling_timeouts"),
                  execution_timeout_share=share("execution_timeouts"),
                  query_error_share=float(w["errored"].sum()) / queries if queries else 0.0, by_code=by_code)


def _heap(result: Result) -> Heap:
    """Live and peak heap over servers, out-of-memory runs, and the most upsert keys a server held."""
    servers, p = result.servers, result.parameters
    return Heap(live_max=float(servers["live_heap"].max()) if len(servers) else 0.0,
                peak_max=float(servers["peak_heap"].max()) if len(servers) else 0.0,
                oom_servers=int(servers["oom_at_s"].notna().sum()) if len(servers) else 0,
                upsert_keys_max=int(p.get("upsert_keys", 0)), upsert_keys_from=p.get("upsert_keys_from", "none"),
                at_s=p.get("heap_at_s"))


def summarise(result: Result, confidence: float | None = None, *, slo: SLOSpec | None = None) -> Summary:
    """The headline numbers of a run, held to ``slo`` (the scenario's typed ``slo:``; by default the one
    the run recorded, read back by the scenario loader's rules). A run of several tables (``tables:``) is
    summarised over all of them and per table (``tables``), each table held to its own recorded SLO."""
    conf = D.CONFIDENCE if confidence is None else confidence
    latency = _latency(result.queries, conf)
    w = result.windows
    window = float(w["window_s"].sum())
    n = int(w["queries"].sum())
    heap = _heap(result)

    def rate(column: str) -> float:
        return float(w[column].sum()) / n if n else float("nan")

    errors = _errors(result)
    tables = table_summaries(result, lambda frame: _latency(frame, conf), heap)
    verdict = tenant_verdict(tables) if tables is not None else \
        check_slo(latency.p99, heap, slo if slo is not None else recorded_slo(result.parameters))
    failures = run_failures(RunFacts(queries=n, server_runs=len(result.servers), errors=errors, heap=heap,
                                     partial_rate=rate("partial") if n else 0.0))
    return Summary(
        latency_ms=latency, queries=n, failures=failures, table_fit=_table_fit(result),
        replications=int(result.windows["replication"].nunique()),
        confidence=conf,
        throughput_qps=n / window if window else float("nan"),
        utilisation=Utilisation(mean=float(result.servers["utilisation"].mean()),
                                max=float(result.servers["utilisation"].max())),
        servers_idle=_servers_idle(result), partial_rate=rate("partial"), gc_delayed_rate=rate("gc_delayed"),
        servers_queried_mean=rate("servers_queried"), segments_queried_mean=rate("segments_queried"),
        gc_pauses=len(result.gc_pauses),
        cache_hit_rate=float(w["cache_hits"].sum()) / n if n else 0.0, errors=errors,
        engine=Engine(name=result.parameters.get("engine", "simpy"), why=result.parameters.get("engine_reason", "")),
        littles_law=_littles_law(result), heap=heap,
        slo=verdict, tables=tables,
    )


def _latency(queries: pd.DataFrame, confidence: float) -> Latency:
    """Mean and percentiles of ``queries``' latency, each with its confidence interval."""
    cis = percentile_cis(queries, [pct for _, pct in PERCENTILES], confidence)
    stats = {label: Statistic(*ci) for (label, _), ci in zip(PERCENTILES, cis, strict=True)}
    return Latency.from_labels({"mean": Statistic(*_mean_latency_ci(queries, confidence)), **stats})


def _table_fit(result: Result) -> TableFit:
    """The servers the run recorded as holding no data (:func:`workbench.runs.servers_without_data`) and its
    segments far outside Pinot's range (:func:`workbench.runs.segments_out_of_range`)."""
    p = result.parameters
    return TableFit(servers_without_data=len(p.get("servers_without_data", ())),
                    why=str(p.get("servers_without_data_why", "")),
                    segments=str(p.get("segments_out_of_range", "")))


def _servers_idle(result: Result) -> int:
    """Servers that no query reached in some replication: down, or holding no segment queries need."""
    if not len(result.servers):
        return 0
    return int(result.servers.groupby("replication")["requests"].agg(lambda r: int((r == 0).sum())).max())


def model_interval(values: np.ndarray, confidence: float = D.CONFIDENCE) -> tuple[float, float]:
    """Central ``confidence`` interval of a statistic over parameter draws (linear-interpolated quantiles).

    The draws are simulations of one scenario with the calibrated parameters drawn from their fitted
    distribution (:mod:`workbench.calibrate.uncertainty`), so the spread is the model's uncertainty, not
    the simulation's. With few draws the interval reaches towards the smallest and largest draw.

    >>> model_interval(np.array([10.0, 12.0, 11.0, 13.0, 14.0]), 0.5)
    (11.0, 13.0)
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return float("nan"), float("nan")
    low, high = np.percentile(x, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(low), float(high)


def with_model_intervals(summary: Summary, draws: Sequence[Summary], confidence: float | None = None) -> Summary:
    """``summary`` with the model's interval beside the simulation's on each latency statistic.

    Each latency statistic (``mean``, ``p50`` ...) keeps ``value``, ``ci_low`` and ``ci_high`` (the
    simulation's interval, from replications) and gains ``model_low`` and ``model_high``: the central
    interval of that statistic over ``draws``, the summaries of runs with the calibrated parameters drawn
    from their fitted distribution under common random numbers. ``model_uncertainty`` records how many
    draws and at what confidence. The input is not changed.
    """
    conf = D.CONFIDENCE if confidence is None else confidence
    latency = {}
    for label, entry in summary.latency_ms.items():
        values = np.array([d.latency_ms.of(label).value for d in draws], dtype=float)
        low, high = model_interval(values, conf)
        latency[label] = replace(entry, model_low=low, model_high=high)
    method = "calibrated parameters drawn from their fitted distribution; common random numbers"
    return replace(summary, latency_ms=Latency.from_labels(latency),
                   model_uncertainty=ModelUncertainty(draws=len(draws), confidence=conf, method=method))
