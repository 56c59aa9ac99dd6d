"""The sizing report of a sweep: which cluster shape meets the SLO for the least, and why.

Input is a sweep directory (``combined.parquet`` plus one run directory per point); output is a
multi-page PDF, written atomically. Each plot comes with one sentence that reads it, computed from the
same data, so the text cannot drift from the figure. Sections are functions in :data:`SECTIONS`
(name -> builder); a builder returns no pages when its data is absent (e.g. no GC pauses).
"""

from __future__ import annotations

import json
import os
import tempfile
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from workbench.analysis import plots
from workbench.errors import InputError
from workbench.scenario import load_scenario

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
    combined = pd.read_parquet(table)
    if "status" in combined:
        combined = combined[combined["status"] == "ok"].reset_index(drop=True)
    if combined.empty:
        raise InputError(str(table), "has no successful points to report on")
    dirs = {str(p): root / str(p) for p in combined["point"]}
    scenarios = [json.loads((dirs[str(p)] / "summary.json").read_text())["scenario"] for p in combined["point"]]
    loaded = [load_scenario(s) for s in scenarios]
    combined["config"] = _labels(combined)
    combined["cost"] = [sc.cluster.servers * sc.cluster.server.cores for sc in loaded]
    slo = loaded[0].slo.p99_ms
    high = combined.get("latency_ms.p99.ci_high", combined["latency_ms.p99.value"]).fillna(
        combined["latency_ms.p99.value"])
    combined["meets_slo"] = (high <= slo) if slo is not None else True
    return SizingData(combined, dirs, slo, loaded[0].name, scenarios[0])


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
    q = pd.read_parquet(_best_point(d) / "queries.parquet")
    fig = plots.fanout_histogram(q, "Fan-out of the recommended configuration")
    return [_read(fig, f"a query touches {q['servers_queried'].mean():.1f} servers and "
                       f"{q['segments_queried'].mean():.1f} segments on average "
                       f"({q['segments_pruned'].mean():.1f} pruned).")]


def _gc(d: SizingData) -> list[Figure]:
    point = _best_point(d)
    pauses = pd.read_parquet(point / "gc_pauses.parquet")
    if pauses.empty:
        return []
    pauses = pauses[pauses["replication"] == pauses["replication"].min()]
    q = pd.read_parquet(point / "queries.parquet")
    fig = plots.gc_timeline(pauses, "GC pauses of the recommended configuration (first replication)")
    return [_read(fig, f"{len(pauses)} pauses, median {pauses['duration_ms'].median():.0f} ms, longest "
                       f"{pauses['duration_ms'].max():.0f} ms; {q['gc_delayed'].mean():.1%} of queries met one.")]


Section = Callable[[SizingData], list[Figure]]
#: Report sections in order; each returns its pages (none when its data is absent).
SECTIONS: dict[str, Section] = {
    "intro": _intro, "table": _table, "percentiles": _percentiles, "cost": _cost,
    "fanout": _fanout, "gc": _gc,
}


def build_sizing_report(sweep_dir: str | Path, out_pdf: str | Path) -> Path:
    """Write the sizing report of a sweep directory; returns the PDF path (appears only when complete)."""
    data = load_sizing_data(sweep_dir)
    out = Path(out_pdf)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    try:
        with PdfPages(tmp, metadata={"Title": f"Pinot sizing report: {data.scenario_name}"}) as pdf:
            for section in SECTIONS.values():
                for fig in section(data):
                    pdf.savefig(fig)
        os.replace(tmp, out)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return out
