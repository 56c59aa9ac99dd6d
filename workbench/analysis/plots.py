"""Pure plotting functions: data in, :class:`matplotlib.figure.Figure` out.

No function here reads files, computes statistics from model internals, calls ``show()`` or saves
anything; the report layer decides where figures go. Figures are built with the object-oriented
API on a fresh :class:`~workbench.analysis.figure.InlineFigure` so they never touch pyplot's global
state, and a notebook cell that ends in one shows it (Jupyter and papermill alike).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from workbench.analysis.figure import InlineFigure, finish_axes
from workbench.io.summary import P99, Summary, latency_column

__all__ = ["gc_delay_by_fanout", "latency_by_routing_and_degradation", "latency_cdf", "percentile_bars",
           "server_utilisation"]



def latency_cdf(queries: pd.DataFrame, title: str = "Query latency") -> Figure:
    """Empirical CCDF of ``latency_ms`` on log axes: the tail is what sizing decisions hinge on."""
    fig = InlineFigure(figsize=(8, 5))
    ax = fig.add_subplot()
    lat = np.sort(queries["latency_ms"].to_numpy())
    if len(lat):
        ccdf = 1.0 - np.arange(len(lat)) / len(lat)
        ax.step(lat, ccdf, where="post", label=f"{len(lat):,} queries")
        ax.set_yscale("log")
        ax.set_ylim(max(1.0 / len(lat), 1e-5), 1.0)
        ax.legend()
    ax.set_xlabel("latency (ms)")
    ax.set_ylabel("P(latency > x)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    return fig


def percentile_bars(summary: Summary, title: str = "Latency percentiles") -> Figure:
    """Bars of p50..p99.9 with their confidence intervals as error bars."""
    fig = InlineFigure(figsize=(8, 5))
    ax = fig.add_subplot()
    labels = ["p50", "p95", "p99", "p99.9"]
    stats = [summary.latency_ms.of(k) for k in labels]
    vals = np.array([s.value for s in stats])
    lows = np.array([s.ci_low for s in stats])
    highs = np.array([s.ci_high for s in stats])
    err = np.nan_to_num(np.vstack([vals - lows, highs - vals]), nan=0.0)
    ax.bar(labels, vals, yerr=err, capsize=6, color="#4C72B0")
    ax.set_ylabel("latency (ms)")
    ax.set_title(f"{title} ({summary.confidence:.0%} CI)")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def server_utilisation(servers: pd.DataFrame, title: str = "Server utilisation") -> Figure:
    """Mean worker-thread utilisation per server across replications."""
    fig = InlineFigure(figsize=(8, 5))
    ax = fig.add_subplot()
    util = servers.groupby("server", sort=False)["utilisation"].mean()
    ax.bar(range(len(util)), util.to_numpy(), color="#55A868")
    ax.set_xticks(range(len(util)), [str(s) for s in util.index], rotation=60, fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("utilisation")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def percentiles_by_config(combined: pd.DataFrame, label: str = "config",
                          title: str = "Latency percentiles by configuration") -> Figure:
    """p50/p95/p99/p99.9 per configuration (rows of a sweep's combined table) with CI error bars."""
    fig = InlineFigure(figsize=(9, 5))
    ax = fig.add_subplot()
    names = ("p50", "p95", "p99", "p99.9")
    x = np.arange(len(combined))
    width = 0.8 / len(names)
    for i, name in enumerate(names):
        col = latency_column(name)
        if col not in combined:
            continue
        vals = combined[col].to_numpy(dtype=float)
        lo = np.nan_to_num(vals - combined[latency_column(name, "ci_low")].to_numpy(dtype=float))
        hi = np.nan_to_num(combined[latency_column(name, "ci_high")].to_numpy(dtype=float) - vals)
        ax.bar(x + (i - 1.5) * width, vals, width, yerr=np.vstack([lo, hi]), capsize=3, label=name)
    ax.set_xticks(x, combined[label].astype(str).tolist(), rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("latency (ms)")
    ax.set_title(title)
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def fanout_histogram(queries: pd.DataFrame, title: str = "Servers and segments per query") -> Figure | None:
    """Distribution of servers and of segments queried per query, one panel for each that varies.

    A count every query shares would be one solid bar: it is left to the text
    (:func:`~workbench.analysis.readings.fanout_reading`), and ``None`` is returned when neither varies.
    """
    varying = [(c, colour, unit) for c, colour, unit in (("servers_queried", "#4C72B0", "servers"),
                                                         ("segments_queried", "#DD8452", "segments"))
               if queries[c].nunique() > 1]
    if not varying:
        return None
    fig = InlineFigure(figsize=(4.5 * len(varying), 4))
    axes = fig.subplots(1, len(varying), squeeze=False)[0]
    for ax, (col, color, unit) in zip(axes, varying, strict=True):
        counts = queries[col].value_counts().sort_index()
        ax.bar(counts.index.to_numpy(), counts.to_numpy() / max(1, len(queries)), color=color)
        ax.set_xlabel(f"{unit} per query ({unit})")
        ax.set_ylabel("share of queries (fraction, 0-1)")
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def gc_timeline(gc_pauses: pd.DataFrame, title: str = "GC pauses per server") -> Figure:
    """Each pause as a tick at its start time, height = duration, one row per server."""
    fig = InlineFigure(figsize=(9, 5))
    ax = fig.add_subplot()
    servers = list(dict.fromkeys(gc_pauses["server"])) if len(gc_pauses) else []
    for row, server in enumerate(servers):
        p = gc_pauses[gc_pauses["server"] == server]
        ax.scatter(p["start_s"], np.full(len(p), row), s=np.clip(p["duration_ms"], 2, 400) / 2,
                   alpha=0.6, color="#C44E52")
    ax.set_yticks(range(len(servers)), servers, fontsize=7)
    ax.set_xlabel("time (s)")
    ax.set_title(f"{title} (marker area ~ pause length)")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    return fig


def cost_vs_slo(combined: pd.DataFrame, slo_ms: float | None, label: str = "config",
                title: str = "Cost against the p99 SLO") -> Figure:
    """Each configuration's cost (server cores) against its p99, with the SLO line."""
    fig = InlineFigure(figsize=(8, 5))
    ax = fig.add_subplot()
    ax.scatter(combined["cost"], combined[P99], color="#4C72B0")
    for _, row in combined.iterrows():
        ax.annotate(str(row[label]), (row["cost"], row[P99]), fontsize=7,
                    xytext=(3, 3), textcoords="offset points")
    if slo_ms is not None:
        ax.axhline(slo_ms, color="#C44E52", linestyle="--", label=f"SLO p99 {slo_ms:g} ms")
        ax.legend()
    ax.set_xlabel("cost (server cores)")
    ax.set_ylabel("p99 latency (ms)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def hit_rate_vs_size(curve: pd.DataFrame, title: str = "Hit rate against cache size") -> Figure:
    """One line per policy (``lru``, ``optimal``...) of ``hit_rate`` against ``max_bytes``."""
    fig = InlineFigure(figsize=(8, 5))
    ax = fig.add_subplot()
    for policy, group in curve.groupby("policy", sort=False):
        g = group.sort_values("max_bytes")
        style = "--" if str(policy) in ("optimal", "belady", "opt-bound") else "-"
        ax.plot(g["max_bytes"] / 1024**2, g["hit_rate"], style, marker="o", label=str(policy))
    ax.set_xlabel("cache size (MiB)")
    ax.set_ylabel("hit rate")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def heap_over_time(heap: pd.DataFrame, pinot_bytes: float | None = None,
                   title: str = "Upsert heap per partition by metadataTTL") -> Figure:
    """Heap bytes over time, one line per TTL, with Pinot's estimator as a horizontal line."""
    fig = InlineFigure(figsize=(8, 5))
    ax = fig.add_subplot()
    for ttl, group in heap.groupby("ttl_s", sort=True):
        label = "no TTL" if float(str(ttl)) == 0 else f"TTL {float(str(ttl)) / 3600:g} h"
        ax.step(group["time_s"] / 3600, group["heap_bytes"] / 1024**2, where="post", label=label)
    if pinot_bytes is not None:
        ax.axhline(pinot_bytes / 1024**2, color="grey", linestyle=":", label="Pinot's estimate")
    ax.set_xlabel("time (h)")
    ax.set_ylabel("heap (MiB)")
    ax.set_title(title)
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return fig


def pruning_by_kind(study: pd.DataFrame, title: str = "Share of segments a query touches after pruning") -> Figure:
    """Mean share of segments kept per query kind, one bar group per workload variant."""
    fig = InlineFigure(figsize=(9, 5))
    ax = fig.add_subplot()
    table = study.groupby(["kind", "variant"], sort=False)["kept_share"].mean().unstack("variant")
    x = np.arange(len(table.index))
    width = 0.8 / max(1, len(table.columns))
    for i, variant in enumerate(table.columns):
        ax.bar(x + i * width - 0.4 + width / 2, table[variant].to_numpy(), width, label=str(variant))
    ax.set_xticks(x, [str(k) for k in table.index])
    ax.set_ylim(0, 1)
    ax.set_ylabel("segments kept / all segments")
    ax.set_title(title)
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def gc_delay_by_fanout(table: pd.DataFrame, label: str = "config",
                       title: str = "Queries that met a GC pause, against servers per query") -> Figure:
    """Each configuration's share of queries that met a pause at its servers per query, beside the
    fan-out rule ``1 - (1 - p)^n`` with ``p`` read from the configuration with the smallest fan-out.

    ``table`` has ``servers_queried_mean`` and ``gc_delayed_rate`` (a summary or sweep table).
    """
    from workbench.analysis.theory import fanout_delay_probability

    fig = InlineFigure(figsize=(8, 4.5))
    ax = fig.add_subplot()
    n = table["servers_queried_mean"].to_numpy(dtype=float)
    share = table["gc_delayed_rate"].to_numpy(dtype=float)
    ax.scatter(n, 100 * share, s=60, color="#4C72B0", zorder=3, label="simulated")
    for x, y, name in zip(n, share, table[label].astype(str), strict=True):
        ax.annotate(name, (x, 100 * y), xytext=(5, 4), textcoords="offset points", fontsize=8)
    if len(n) and n.min() > 0:
        i = int(np.argmin(n))
        p = 1.0 - (1.0 - share[i]) ** (1.0 / n[i])
        grid = np.arange(1, int(np.ceil(n.max())) + 1)
        ax.plot(grid, [100 * fanout_delay_probability(p, int(k)) for k in grid], linestyle="--", color="grey",
                label=f"1 - (1 - p)^n, p = {p:.2%} per server")
    finish_axes(ax, "servers per query", "queries that met a pause (%)", title)
    fig.tight_layout()
    return fig


def latency_by_routing_and_degradation(frame: pd.DataFrame, title: str = "Routings under one degraded server"
                                       ) -> Figure:
    """p50 and p99 per routing (x) and degradation (bars), with 95% interval bars, on a log axis (a wedged
    server's timeouts sit orders of magnitude above a healthy median). ``frame`` is
    :func:`workbench.studies.degraded_routing.routing_under_degradation`'s."""
    routings = list(dict.fromkeys(frame["routing"]))
    degraded = list(dict.fromkeys(frame["degradation"]))
    fig = InlineFigure(figsize=(11, 5))
    axes = fig.subplots(1, 2, sharey=True)
    x = np.arange(len(routings))
    width = 0.8 / max(1, len(degraded))
    for ax, stat in zip(axes, ("p50", "p99"), strict=True):
        for i, d in enumerate(degraded):
            rows = frame[frame["degradation"] == d].set_index("routing").reindex(routings)
            value = rows[latency_column(stat)]
            vals = value.to_numpy(dtype=float)
            lo = np.nan_to_num(vals - rows.get(latency_column(stat, "ci_low"), value).to_numpy(dtype=float))
            hi = np.nan_to_num(rows.get(latency_column(stat, "ci_high"), value).to_numpy(dtype=float) - vals)
            ax.bar(x + (i - (len(degraded) - 1) / 2) * width, vals, width,
                   yerr=np.vstack([np.maximum(lo, 0), np.maximum(hi, 0)]), capsize=2, label=str(d))
        ax.set_yscale("log")
        ax.set_xticks(x, routings, rotation=25, ha="right", fontsize=8)
        ax.set_title(stat)
        ax.grid(True, axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("latency (ms)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncols=len(degraded), fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    return fig
