"""The sizing report of a sweep: which cluster shape meets the SLO for the least, and why.

Input is a sweep directory (``combined.parquet`` plus one run directory per point); output is a
multi-page PDF, written atomically. Each plot comes with one sentence that reads it, computed from the
same data, so the text cannot drift from the figure. Sections are functions in :data:`SECTIONS`
(name -> builder); a builder returns no pages when its data is absent (e.g. no GC pauses).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from workbench.analysis import plots
from workbench.analysis.provisioning import ProvisioningInputs, from_bytes, provisioning_matrix
from workbench.errors import InputError
from workbench.io import atomic_file
from workbench.io.tables import read_json_file, read_parquet
from workbench.report.run_report import load_summary
from workbench.scenario import Scenario, load_scenario
from workbench.workload.directory import read_segments

__all__ = ["SECTIONS", "SizingData", "build_sizing_report", "load_sizing_data", "recommend"]


@dataclass(frozen=True)
class SizingData:
    """What the report reads: the combined table (one row per point, with cost and label) and where
    each point's records are."""

    combined: pd.DataFrame
    point_dirs: Mapping[str, Path]
    slo_p99_ms: float | None
    scenario_name: str
    base: Mapping[str, Any]
    #: The sweep's base scenario file, when the sweep recorded one (gives the workload directory).
    base_scenario: Scenario | None = None


def _labels(combined: pd.DataFrame) -> list[str]:
    """A short label per point from the parameters that vary across the sweep."""
    varying = [str(c) for c in combined.columns
               if str(c).startswith("param.") and combined[c].astype(str).nunique() > 1]
    return [", ".join(f"{c.removeprefix('param.').split('.')[-1]}={row[c]}" for c in varying) or str(row["point"])
            for _, row in combined.iterrows()]


def _read(fig: Figure, text: str) -> Figure:
    """Put the one-sentence reading under a figure, wrapped, with room made for it."""
    fig.subplots_adjust(bottom=0.28)
    fig.text(0.02, 0.02, "\n".join(textwrap.wrap(f"Reading: {text}", 130)), fontsize=9, va="bottom")
    return fig


def load_sizing_data(sweep_dir: str | Path) -> SizingData:
    """Read a sweep directory; adds ``config`` (label), ``cost`` (server cores) and ``meets_slo``."""
    root = Path(sweep_dir)
    table = root / "combined.parquet"
    if not table.is_file():
        raise InputError(str(root), "is not a sweep directory (no combined.parquet); run `workbench sweep` first")
    combined = read_parquet(table, ["point"], what="combined sweep table")
    if "status" in combined:
        combined = combined[combined["status"] == "ok"].reset_index(drop=True)
    if combined.empty or "latency_ms.p99.value" not in combined:
        raise InputError(str(table), "has no successful points to report on")
    dirs = {str(p): root / str(p) for p in combined["point"]}
    scenarios = [load_summary(dirs[str(p)]).get("scenario", {}) for p in combined["point"]]
    loaded = [_point_scenario(s, dirs[str(p)]) for s, p in zip(scenarios, combined["point"], strict=True)]
    combined["config"] = _labels(combined)
    combined["cost"] = [sc.cluster.servers * sc.cluster.server.cores for sc in loaded]
    slo = loaded[0].slo.p99_ms
    if "slo.met" in combined:  # every check of the scenario's slo (p99 interval, peak heap), per point
        combined["meets_slo"] = combined["slo.met"].map(lambda v: True if v is None or v != v else bool(v))
    else:
        high = combined.get("latency_ms.p99.ci_high", combined["latency_ms.p99.value"]).fillna(
            combined["latency_ms.p99.value"])
        combined["meets_slo"] = (high <= slo) if slo is not None else True
    base_scenario = None
    manifest = root / "sweep.json"
    if manifest.is_file():
        recorded = read_json_file(manifest, "sweep manifest")
        base_file = recorded.get("base") if isinstance(recorded, dict) else None
        if isinstance(base_file, str) and Path(base_file).is_file():
            base_scenario = load_scenario(base_file)
    return SizingData(combined, dirs, slo, loaded[0].name, scenarios[0], base_scenario)


def _point_scenario(scenario: Mapping[str, Any], point: Path) -> Scenario:
    """The scenario a point recorded in its ``summary.json``, revalidated (it names the point when bad)."""
    try:
        return load_scenario(scenario)
    except InputError as exc:
        raise InputError(str(point / "summary.json"), f"records a scenario that no longer validates: {exc}") from None


def recommend(combined: pd.DataFrame) -> tuple[pd.Series | None, pd.Series | None]:
    """The cheapest configuration whose p99 interval lies under the SLO, and the runner-up."""
    ok = combined[combined["meets_slo"]].sort_values(["cost", "latency_ms.p99.value"])
    first = ok.iloc[0] if len(ok) else None
    second = ok.iloc[1] if len(ok) > 1 else None
    return first, second


def _intro(d: SizingData) -> list[Figure]:
    best, runner = recommend(d.combined)
    slo = f"p99 under {d.slo_p99_ms:g} ms (the whole 95% interval)" if d.slo_p99_ms else "no SLO given"
    if best is None:
        answer = "No configuration in this sweep meets the SLO: widen the sweep (more servers or cores)."
    else:
        answer = (f"Recommended: {best['config']} - {best['cost']} server cores, p99 "
                  f"{best['latency_ms.p99.value']:.1f} ms.\n")
        answer += (f"Runner-up: {runner['config']} - {runner['cost']} cores, "
                   f"p99 {runner['latency_ms.p99.value']:.1f} ms." if runner is not None
                   else "No runner-up meets the SLO.")
    base = d.base
    swept = [str(c).removeprefix("param.") for c in d.combined.columns if str(c).startswith("param.")]
    inputs = (f"table: {base.get('table', {}).get('tableName')} ({base.get('table', {}).get('tableType')})\n"
              f"arrival: {json.dumps(base.get('workload', {}).get('arrival', {}))}\n"
              f"swept: {', '.join(swept)}\n"
              f"points: {len(d.combined)}")
    return [plots.text_page(f"Pinot sizing report: {d.scenario_name}", [
        ("The question", f"Which cluster shape is cheapest while meeting {slo}?"),
        ("Inputs", inputs),
        ("Executive summary", answer),
        ("How to read it", "Latencies come from the SimPy model running Pinot's own routing, pruning and\n"
                           "GC behaviour; intervals are 95% Student-t over independent replications."),
    ])]


def _table(d: SizingData) -> list[Figure]:
    cols = ["config", "cost", "latency_ms.p50.value", "latency_ms.p99.value", "latency_ms.p99.ci_high",
            "throughput_qps", "utilisation.mean", "partial_rate", "meets_slo"]
    frame = d.combined[[c for c in cols if c in d.combined]].copy()
    for c in frame.columns:
        if frame[c].dtype.kind == "f":
            frame[c] = frame[c].round(3)
    frame.columns = [c.replace("latency_ms.", "").replace(".value", "") for c in frame.columns]
    return [plots.table_page("Every configuration", frame, "p99.ci_high is the upper end of the 95% interval; "
                                                          "a configuration meets the SLO when it is below it.")]


def _percentiles(d: SizingData) -> list[Figure]:
    c = d.combined
    lo, hi = c.loc[c["latency_ms.p99.value"].idxmin()], c.loc[c["latency_ms.p99.value"].idxmax()]
    fig = plots.percentiles_by_config(c)
    return [_read(fig, f"{lo['config']} has the lowest p99 ({lo['latency_ms.p99.value']:.1f} ms), "
                       f"{hi['config']} the highest ({hi['latency_ms.p99.value']:.1f} ms).")]


def _cost(d: SizingData) -> list[Figure]:
    fig = plots.cost_vs_slo(d.combined, d.slo_p99_ms)
    meets = int(d.combined["meets_slo"].sum())
    return [_read(fig, f"{meets} of {len(d.combined)} configurations keep the whole p99 interval "
                       "under the SLO; the lowest such point on the left is the cheapest.")]


def _best_point(d: SizingData) -> Path:
    best, _ = recommend(d.combined)
    name = str(best["point"]) if best is not None else str(d.combined.iloc[0]["point"])
    return d.point_dirs[name]


def _fanout(d: SizingData) -> list[Figure]:
    q = read_parquet(_best_point(d) / "queries.parquet", what="queries records")
    fig = plots.fanout_histogram(q, "Fan-out of the recommended configuration")
    return [_read(fig, f"a query touches {q['servers_queried'].mean():.1f} servers and "
                       f"{q['segments_queried'].mean():.1f} segments on average "
                       f"({q['segments_pruned'].mean():.1f} pruned).")]


def _gc(d: SizingData) -> list[Figure]:
    point = _best_point(d)
    pauses = read_parquet(point / "gc_pauses.parquet", ["replication"], what="GC pause records")
    if pauses.empty:
        return []
    pauses = pauses[pauses["replication"] == pauses["replication"].min()]
    q = read_parquet(point / "queries.parquet", what="queries records")
    fig = plots.gc_timeline(pauses, "GC pauses of the recommended configuration (first replication)")
    return [_read(fig, f"{len(pauses)} pauses, median {pauses['duration_ms'].median():.0f} ms, longest "
                       f"{pauses['duration_ms'].max():.0f} ms; {q['gc_delayed'].mean():.1%} of queries met one.")]


def _workload_dir(d: SizingData) -> Path | None:
    sc = d.base_scenario
    if sc is None or sc.workload.data is None:
        return None
    path = sc.base_dir / sc.workload.data
    return path if path.is_dir() else None


def _cache(d: SizingData) -> list[Figure]:
    """Hit rate of a broker result cache against its size on the workload's own queries, with the optimum."""
    from workbench.analysis.studies import broker_trace
    from workbench.pinot.cache.trace import hit_rate_curve

    data = _workload_dir(d)
    if data is None or not (data / "queries.parquet").is_file():
        return []
    queries = read_parquet(data / "queries.parquet", columns=["arrival_s", "sql"], what="queries table").head(
        _CACHE_TRACE_REQUESTS)
    trace = broker_trace(queries)
    distinct = int(trace.groupby("key")["size_bytes"].first().sum())
    sizes = sorted({max(1024, int(distinct * f)) for f in (0.01, 0.05, 0.2, 0.5, 1.0)})
    curve = hit_rate_curve(trace, sizes)
    fig = plots.hit_rate_vs_size(curve, "Broker result cache on this workload's queries (RFC design)")
    lru = curve[curve["policy"] == "lru"].sort_values("max_bytes")
    best = curve[curve["policy"] != "lru"].sort_values("max_bytes")
    return [_read(fig, f"with {from_bytes(sizes[-1])} (every distinct result) LRU hits "
                       f"{lru['hit_rate'].iloc[-1]:.0%} of {len(trace):,} queries; at {from_bytes(sizes[1])} it hits "
                       f"{lru['hit_rate'].iloc[1]:.0%} against an optimum of {best['hit_rate'].iloc[1]:.0%}. "
                       "The RFC expects 20-70% on dashboards; misses here are first requests and lookups of "
                       "rarely repeated keys.")]


def _heap(d: SizingData) -> list[Figure]:
    """Upsert heap over time for the table's metadataTTL and without it, beside Pinot's estimate."""
    sc = d.base_scenario
    if sc is None or not sc.table.is_upsert:
        return []
    from workbench.analysis.studies import heap_by_ttl
    from workbench.pinot.heap import pinot_estimate

    ttl = float((sc.table.upsert_config or {}).get("metadataTTL", 0) or 0)
    heap = heap_by_ttl(sorted({0.0, ttl / 1000.0}))
    keys = int(heap["num_primary_keys"].max())
    pinot = pinot_estimate(["LONG"], keys, ["LONG"])
    pinot_bytes = float(pinot["bytesPerKey"] + pinot["bytesPerValue"]) * keys
    fig = plots.heap_over_time(heap, pinot_bytes)
    last = heap.groupby("ttl_s").tail(1)
    return [_read(fig, f"without TTL the map ends at {last['heap_bytes'].max() / 1024**2:.1f} MiB per partition; "
                       f"Pinot's estimator says {pinot_bytes / 1024**2:.1f} MiB for the same keys because it "
                       "leaves out the map's nodes and slots (docs/upsert.md).")]


def _provisioning(d: SizingData) -> list[Figure]:
    """Pinot's RealtimeProvisioningHelper matrix for the generated realtime segments."""
    sc, data = d.base_scenario, _workload_dir(d)
    if sc is None or data is None or sc.table.table_type != "REALTIME" or sc.workload.generate is None:
        return []
    segments = read_segments(data)
    sealed = segments[segments["status"] == "DONE"]
    if sealed.empty or "size_bytes" not in sealed:
        return []
    gen = sc.workload.generate
    seg = sealed.iloc[0]
    retention = float(sc.table.section("segmentsConfig").get("retentionTimeValue", 7)) * 24
    inputs = ProvisioningInputs(
        sample_segment_bytes=float(seg["size_bytes"]), sample_segment_docs=int(seg["total_docs"]),
        ingestion_rate=max(1, int(gen.events / gen.span_s / gen.partitions)), num_partitions=gen.partitions,
        replication=sc.table.replication, retention_hours=min(retention, 72.0), table_retention_hours=retention)
    matrix = provisioning_matrix(inputs)
    if matrix.empty:
        return []
    grid = matrix.pivot(index="num_hours", columns="num_hosts", values="memory").fillna("NA")
    grid.insert(0, "numHours", grid.index)
    note = ("Memory used per host (active/mapped) as Pinot's RealtimeProvisioningHelper computes it from a "
            "sample segment; consuming memory is taken as the sample's bytes per document (the tool measures it "
            "by building a mutable segment).")
    return [plots.table_page("Hosts x hours: RealtimeProvisioningHelper's memory matrix", grid, note)]


_CACHE_TRACE_REQUESTS = 8_000

Section = Callable[[SizingData], list[Figure]]
#: Report sections in order; each returns its pages (none when its data is absent).
SECTIONS: dict[str, Section] = {
    "intro": _intro, "table": _table, "percentiles": _percentiles, "cost": _cost,
    "fanout": _fanout, "gc": _gc, "cache": _cache, "heap": _heap, "provisioning": _provisioning,
}


def build_sizing_report(sweep_dir: str | Path, out_pdf: str | Path) -> Path:
    """Write the sizing report of a sweep directory; returns the PDF path (appears only when complete)."""
    data = load_sizing_data(sweep_dir)
    out = Path(out_pdf)
    title = f"Pinot sizing report: {data.scenario_name}"
    with atomic_file(out) as tmp, PdfPages(tmp, metadata={"Title": title}) as pdf:
        for section in SECTIONS.values():
            for fig in section(data):
                pdf.savefig(fig)
    return out
