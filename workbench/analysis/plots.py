"""Pure plotting functions: data in, :class:`matplotlib.figure.Figure` out.

No function here reads files, computes statistics from model internals, calls ``show()`` or saves
anything; the report layer decides where figures go. Figures are built with the object-oriented
API on a fresh ``Figure`` so they never touch pyplot's global state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

__all__ = ["latency_cdf", "percentile_bars", "server_utilisation", "text_page"]

_PAGE = (8.27, 11.69)  # A4 portrait, inches


def latency_cdf(queries: pd.DataFrame, title: str = "Query latency") -> Figure:
    """Empirical CCDF of ``latency_ms`` on log axes: the tail is what sizing decisions hinge on."""
    fig = Figure(figsize=(8, 5))
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


def percentile_bars(summary: Mapping[str, Any], title: str = "Latency percentiles") -> Figure:
    """Bars of p50..p99.9 with their confidence intervals as error bars."""
    fig = Figure(figsize=(8, 5))
    ax = fig.add_subplot()
    labels = [k for k in ("p50", "p95", "p99", "p99.9") if k in summary["latency_ms"]]
    vals = np.array([summary["latency_ms"][k]["value"] for k in labels])
    lows = np.array([summary["latency_ms"][k]["ci_low"] for k in labels])
    highs = np.array([summary["latency_ms"][k]["ci_high"] for k in labels])
    err = np.nan_to_num(np.vstack([vals - lows, highs - vals]), nan=0.0)
    ax.bar(labels, vals, yerr=err, capsize=6, color="#4C72B0")
    ax.set_ylabel("latency (ms)")
    ax.set_title(f"{title} ({summary.get('confidence', 0.95):.0%} CI)")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def server_utilisation(servers: pd.DataFrame, title: str = "Server utilisation") -> Figure:
    """Mean worker-thread utilisation per server across replications."""
    fig = Figure(figsize=(8, 5))
    ax = fig.add_subplot()
    util = servers.groupby("server", sort=False)["utilisation"].mean()
    ax.bar(range(len(util)), util.to_numpy(), color="#55A868")
    ax.set_xticks(range(len(util)), [str(s) for s in util.index], rotation=60, fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("utilisation")
    ax.set_title(title)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def text_page(title: str, blocks: list[tuple[str, str]]) -> Figure:
    """A page of headed text blocks (for the report's question, inputs and summary)."""
    fig = Figure(figsize=_PAGE)
    fig.text(0.08, 0.95, title, fontsize=18, weight="bold", va="top")
    y = 0.90
    for heading, body in blocks:
        fig.text(0.08, y, heading, fontsize=12, weight="bold", va="top")
        lines = body.splitlines() or [""]
        fig.text(0.08, y - 0.025, "\n".join(lines), fontsize=9, va="top", family="monospace")
        y -= 0.04 + 0.0135 * len(lines)
    return fig
