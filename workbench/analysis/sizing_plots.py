"""Pure plots of the sizing question: cost in money, layouts compared, what-ifs, headroom, heap, moves.

Like :mod:`workbench.analysis.plots`: data in (tidy frames with documented columns), an
:class:`~workbench.analysis.figure.InlineFigure` out, nothing read or written. The report layer adds
each figure's one-sentence reading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter

from workbench.analysis.figure import InlineFigure, finish_axes
from workbench.io.summary import P99, THROUGHPUT, latency_column

__all__ = ["PAUSE_MARKS_MAX", "cost_vs_p99", "data_movement", "headroom_curve", "heap_and_pauses", "heap_over_day",
           "layout_comparison", "natural_key", "pause_timeline", "whatif_bars"]

_LAYOUT_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#8172B3", "#937860")
_SLO = "#C44E52"


def natural_key(name: object) -> tuple[object, ...]:
    """Sort key that puts ``Server_2`` before ``Server_10``.

    >>> sorted(["Server_10", "Server_2"], key=natural_key)
    ['Server_2', 'Server_10']
    """
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", str(name)))


def _errors(frame: pd.DataFrame, stat: str = "p99") -> np.ndarray:
    value = frame[latency_column(stat)].to_numpy(dtype=float)
    low = frame.get(latency_column(stat, "ci_low"), frame[latency_column(stat)]).to_numpy(dtype=float)
    high = frame.get(latency_column(stat, "ci_high"), frame[latency_column(stat)]).to_numpy(dtype=float)
    out: np.ndarray = np.nan_to_num(np.vstack([value - low, high - value]), nan=0.0).clip(min=0.0)
    return out


def _slo_line(ax: Axes, slo_ms: float | None, horizontal: bool = True) -> None:
    if slo_ms is None:
        return
    line = ax.axhline if horizontal else ax.axvline
    line(slo_ms, color=_SLO, linestyle="--", linewidth=1.2, label=f"SLO: p99 {slo_ms:g} ms")


def cost_vs_p99(combined: pd.DataFrame, slo_ms: float | None, *, currency: str = "USD",
                highlight: str | None = None, title: str = "What each configuration costs and its p99") -> Figure:
    """Monthly cost against p99 (with its interval), one marker colour per layout kind.

    ``combined`` has ``monthly_cost``, ``layout_kind`` (else ``layout``), ``point`` and the
    ``latency_ms.p99.*`` columns;
    ``highlight`` is the point id to circle (the recommendation).
    """
    fig = InlineFigure(figsize=(9, 5.5))
    ax = fig.add_subplot()
    kind = "layout_kind" if "layout_kind" in combined else "layout"
    for i, (layout, group) in enumerate(combined.groupby(kind, sort=True)):
        ax.errorbar(group["monthly_cost"], group[P99], yerr=_errors(group), fmt="o",
                    color=_LAYOUT_COLOURS[i % len(_LAYOUT_COLOURS)], capsize=3, label=str(layout), alpha=0.85)
    if highlight is not None and (combined["point"] == highlight).any():
        row = combined[combined["point"] == highlight].iloc[0]
        ax.scatter([row["monthly_cost"]], [row[P99]], s=260, facecolors="none",
                   edgecolors="black", linewidths=1.5, label="recommended", zorder=5)
    _slo_line(ax, slo_ms)
    ax.set_xlabel(f"monthly cost ({currency}/month)")
    ax.set_ylabel("p99 latency (ms), 95% interval")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(ScalarFormatter())
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def layout_comparison(frame: pd.DataFrame, slo_ms: float | None = None,
                      title: str = "Balanced routing against replica groups, same servers") -> Figure:
    """p99 and p50 (with intervals) against server count, one line per layout kind.

    ``frame`` has ``servers``, ``layout_kind`` (``balanced`` / ``replica groups``), and the
    ``latency_ms.p50.*`` and ``latency_ms.p99.*`` columns, one row per (servers, layout_kind).
    """
    fig = InlineFigure(figsize=(10, 5))
    left, right = fig.subplots(1, 2)
    for ax, stat in ((left, "p99"), (right, "p50")):
        for i, (kind, group) in enumerate(frame.groupby("layout_kind", sort=True)):
            g = group.sort_values("servers")
            ax.errorbar(g["servers"], g[latency_column(stat)], yerr=_errors(g, stat), marker="o", capsize=3,
                        color=_LAYOUT_COLOURS[i % len(_LAYOUT_COLOURS)], label=str(kind))
        if stat == "p99":
            _slo_line(ax, slo_ms)
        ax.set_xlabel("servers")
        ax.set_ylabel(f"{stat} latency (ms)")
        ax.set_xticks(sorted(frame["servers"].unique()))
        ax.set_title(f"{stat}, 95% interval")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def whatif_bars(table: pd.DataFrame, slo_ms: float | None,
                title: str = "The recommendation when things change") -> Figure:
    """p99 (with its interval) of each what-if, green when it meets the SLO and red when not.

    ``table`` has ``label``, ``meets_slo`` and the ``latency_ms.p99.*`` columns, in display order.
    """
    fig = InlineFigure(figsize=(9, 4.5))
    ax = fig.add_subplot()
    y = np.arange(len(table))[::-1]
    colours = ["#55A868" if ok else _SLO for ok in table["meets_slo"]]
    ax.barh(y, table[P99], xerr=_errors(table), color=colours, capsize=4, height=0.6)
    ax.set_yticks(y, table["label"].astype(str).tolist())
    _slo_line(ax, slo_ms, horizontal=False)
    ax.set_xlabel("p99 latency (ms), 95% interval")
    ax.set_title(title)
    ax.grid(True, axis="x", alpha=0.3)
    if slo_ms is not None:
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def headroom_curve(runs: pd.DataFrame, slo_ms: float | None, title: str = "p99 as the load grows") -> Figure:
    """p99 (and its interval's upper end) against queries per second, with the SLO.

    ``runs`` has ``throughput_qps``, ``p99``, ``p99_low``, ``p99_high``, ``load`` and ``meets_slo``.
    """
    fig = InlineFigure(figsize=(9, 4.5))
    ax = fig.add_subplot()
    ax.fill_between(runs[THROUGHPUT], runs["p99_low"], runs["p99_high"], color="#4C72B0", alpha=0.2,
                    label="95% interval")
    ax.plot(runs[THROUGHPUT], runs["p99"], marker="o", color="#4C72B0", label="p99")
    for _, row in runs.iterrows():
        ax.annotate(f"x{row['load']:g}", (row[THROUGHPUT], row["p99"]), xytext=(4, -12),
                    textcoords="offset points", fontsize=8)
    _slo_line(ax, slo_ms)
    finish_axes(ax, "load (queries/s)", "p99 latency (ms)", title)
    fig.tight_layout()
    return fig


#: Above this many pauses a mark per pause overlaps into a smear: the timeline counts them per bin instead.
PAUSE_MARKS_MAX = 300


def pause_timeline(pauses: pd.DataFrame, title: str = "GC pauses per server") -> Figure:
    """Each pause as a mark at its start, one row per server, size and colour by its kind; above
    :data:`PAUSE_MARKS_MAX` pauses, the count and the longest pause per server and time bin instead (hundreds
    of marks on one row overlap and hide both how many there were and how long).

    ``pauses`` has ``server``, ``start_s``, ``duration_ms`` and optionally ``kind`` (young, mixed...).
    """
    if len(pauses) > PAUSE_MARKS_MAX:
        return _pause_bins(pauses, title)
    fig = InlineFigure(figsize=(10, 4.5))
    ax = fig.add_subplot()
    servers = sorted(pauses["server"].unique(), key=natural_key)
    row_of = {s: i for i, s in enumerate(servers)}
    kinds = pauses["kind"] if "kind" in pauses else pd.Series("pause", index=pauses.index)
    for i, kind in enumerate(sorted(kinds.unique(), key=str)):
        sel = pauses[kinds == kind]
        ax.scatter(sel["start_s"], [row_of[s] for s in sel["server"]], s=np.clip(sel["duration_ms"], 4, 400),
                   alpha=0.6, color=_LAYOUT_COLOURS[i % len(_LAYOUT_COLOURS)], label=str(kind))
    ax.set_yticks(range(len(servers)), [str(s) for s in servers], fontsize=7)
    ax.set_ylabel("server")
    ax.set_xlabel("simulated time (s)")
    ax.set_title(f"{title} (mark area ~ pause length)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    return fig


def _pause_bins(pauses: pd.DataFrame, title: str, bins: int = 40) -> Figure:
    """Pauses per (server, time bin) as a coloured grid, with each server's pause-time share beside it."""
    fig = InlineFigure(figsize=(10, 4.5))
    ax = fig.add_subplot()
    servers = sorted(pauses["server"].unique(), key=natural_key)
    row = pauses["server"].map({s: i for i, s in enumerate(servers)}).to_numpy(dtype=float)
    start = pauses["start_s"].to_numpy(dtype=float)
    edges = np.linspace(float(start.min()), float(start.max()) + 1e-9, bins + 1)
    counts, _, _ = np.histogram2d(start, row, bins=[edges, np.arange(len(servers) + 1) - 0.5])
    mesh = ax.pcolormesh(edges, np.arange(len(servers) + 1) - 0.5, counts.T, cmap="Reds", shading="flat", vmin=0)
    fig.colorbar(mesh, ax=ax, label=f"pauses per {edges[1] - edges[0]:.3g} s bin (count)")
    ax.set_yticks(range(len(servers)), [str(s) for s in servers], fontsize=7)
    ax.set_ylabel("server")
    ax.set_xlabel("simulated time (s)")
    ax.set_title(f"{title}: {len(pauses):,} pauses, counted per bin")
    fig.tight_layout()
    return fig


def heap_and_pauses(frame: pd.DataFrame, limits: Mapping[str, float], *, x: str = "hour",
                    xlabel: str = "hours since the table started",
                    title: str = "Heap per server, and the young GC pauses it causes") -> Figure:
    """Live heap per server against ``x``, the heap's limits, and the young pauses that heap gives.

    ``frame`` has ``x``, ``live_bytes``, optionally ``series`` (one line each, e.g. the TTL) and
    ``young_p50_ms`` / ``young_p99_ms`` (rows without them are left out of the pause panel, which is
    drawn only when some row has them); ``limits`` maps a label (``heap``, ``IHOP``...) to bytes.
    """
    pauses = [c for c in ("young_p50_ms", "young_p99_ms") if c in frame and frame[c].notna().any()]
    fig = InlineFigure(figsize=(10, 4.8) if pauses else (7, 4.8))
    axes = fig.subplots(1, 2) if pauses else [fig.add_subplot()]
    left = axes[0]
    groups = list(frame.groupby("series", sort=False)) if "series" in frame else [("live heap", frame)]
    for i, (name, g) in enumerate(groups):
        colour = _LAYOUT_COLOURS[i % len(_LAYOUT_COLOURS)]
        left.plot(g[x], g["live_bytes"] / 1024**3, color=colour, label=str(name))
        for col, style in zip(pauses, ("-", ":"), strict=False):
            p = g.dropna(subset=[col])
            stat = col.split("_")[1]
            axes[1].plot(p[x], p[col], style, marker="o", color=colour,
                         label=f"{name!s}: {stat}" if "series" in frame else stat)
    for i, (label, value) in enumerate(limits.items()):
        left.axhline(value / 1024**3, linestyle="--", color=(_SLO, "#937860", "#8172B3")[i % 3], label=label)
    finish_axes(left, xlabel, "GiB per server", "live heap")
    if pauses:
        finish_axes(axes[1], xlabel, "young pause (ms)", "young GC pause")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def heap_over_day(heap: pd.DataFrame, at_s: float | None, heap_bytes: float, max_heap: float | None,
                  title: str = "Upsert heap per server over the data's day") -> Figure:
    """Each server's live heap (``time_s``, ``live_heap`` of a run's ``heap`` table) as a step line over the
    data's span in hours, with the server heap, the SLO's ``max_heap`` and the moment the run simulated."""
    fig = InlineFigure(figsize=(10, 4.5))
    ax = fig.add_subplot()
    for i, (server, g) in enumerate(sorted(heap.groupby("server"), key=lambda kv: natural_key(kv[0]))):
        ax.step(g["time_s"] / 3600.0, g["live_heap"] / 1024**3, where="post", lw=1.2,
                color=_LAYOUT_COLOURS[i % len(_LAYOUT_COLOURS)], alpha=0.8, label=str(server) if i < 8 else None)
    ax.axhline(heap_bytes / 1024**3, color="#937860", linestyle="--", label="server heap")
    if max_heap is not None:
        ax.axhline(max_heap / 1024**3, color=_SLO, linestyle="--", label="SLO max_heap")
    if at_s is not None:
        ax.axvline(at_s / 3600.0, color="black", linestyle=":", label="moment simulated")
    ax.set_xlabel("hours since the data starts")
    ax.set_ylabel("live heap (GiB)")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="lower right", ncol=2)
    fig.tight_layout()
    return fig


def data_movement(moves: pd.DataFrame, title: str = "Data each server loads in a rebalance") -> Figure:
    """Per server, the bytes it loads in a rebalance (``bytes_in``; GiB, or MiB when all are small).

    ``moves`` has ``server``, ``bytes_in``, ``bytes_out`` (one plan), or also ``plan`` (several plans,
    one bar group each).
    """
    fig = InlineFigure(figsize=(10, 4.5))
    ax = fig.add_subplot()
    plans: Sequence[str] = sorted(moves["plan"].unique(), key=str) if "plan" in moves else ["rebalance"]
    servers = sorted(moves["server"].unique(), key=natural_key)
    x = np.arange(len(servers))
    width = 0.8 / max(1, len(plans))
    unit, scale = ("GiB", 1024**3) if float(moves["bytes_in"].max()) >= 1024**3 else ("MiB", 1024**2)
    for i, plan in enumerate(plans):
        sel = moves[moves["plan"] == plan] if "plan" in moves else moves
        values = sel.set_index("server").reindex(servers)["bytes_in"].fillna(0).to_numpy(dtype=float) / scale
        ax.bar(x + (i - (len(plans) - 1) / 2) * width, values, width, label=str(plan),
               color=_LAYOUT_COLOURS[i % len(_LAYOUT_COLOURS)])
    ax.set_xticks(x, [str(s) for s in servers], rotation=45, ha="right", fontsize=7)
    ax.set_ylabel(f"{unit} loaded")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
