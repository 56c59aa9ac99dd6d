"""Readings and plots of notebook 04's replay results: TTL duplicates and restart work.

Each reading is computed from the frame it is given (:class:`~workbench.analysis.readings.Reading`:
a sentence and the facts it rests on, which ``tests/notebooks`` checks against the claim).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from workbench.analysis.figure import InlineFigure, finish_axes
from workbench.analysis.readings import Reading

__all__ = ["duplicates_and_restart", "duplicates_reading", "restart_reading"]


def _ttl_name(ttl_s: float) -> str:
    return "no TTL" if ttl_s == 0 else f"TTL {ttl_s / 3600:g} h"


def duplicates_reading(dup: pd.DataFrame, active_s: float) -> Reading:
    """Duplicates TTL let through per TTL (:func:`workbench.studies.upsert.duplicates_by_ttl`).

    A TTL *lets through* duplicates when some commit had any; it is *clean* otherwise.
    """
    facts: dict[str, Any] = {"active_s": active_s, "ttl": {}}
    parts = []
    for r in dup.to_dict(orient="records"):
        name = _ttl_name(float(r["ttl_s"]))
        most = int(r["max_duplicates"])
        claim = "lets through" if most > 0 else "clean"
        facts["ttl"][name] = {"ttl_s": float(r["ttl_s"]), "max_duplicates": most, "end_keys": int(r["end_keys"]),
                              "claim": claim}
        parts.append(f"{name}: " + (f"up to {most:,} duplicate rows visible to queries"
                                    if claim == "lets through" else "no duplicates"))
    short = [n for n, e in facts["ttl"].items() if 0 < e["ttl_s"] < active_s]
    text = "; ".join(parts) + "."
    if short:
        text += (f" {', '.join(short)} {'is' if len(short) == 1 else 'are'} shorter than a key's "
                 f"{active_s / 3600:g} h of updates: the map forgets keys that still change, and their old rows "
                 "stay queryable beside the new ones.")
    return Reading(text, facts)


def restart_reading(work: pd.DataFrame) -> Reading:
    """Restart work without and with validDocIds snapshots (:func:`workbench.studies.upsert.restart_cost`)."""
    by: dict[str, dict[str, Any]] = {str(r["mode"]): {str(k): v for k, v in r.items()}
                                     for r in work.to_dict(orient="records")}
    rebuild, preload = by["rebuild"], by["preload"]
    facts: dict[str, Any] = {m: {c: float(by[m][c]) for c in ("snapshots_read", "docs_read", "key_comparisons",
                                                                "keys", "seconds")} for m in ("rebuild", "preload")}
    saved = 1 - float(preload["docs_read"]) / float(rebuild["docs_read"])
    facts["docs_saved_share"] = saved
    text = (f"Without snapshots a restart reads all {int(rebuild['docs_read']):,} docs and compares "
            f"{int(rebuild['key_comparisons']):,} keys; with them it reads {int(preload['snapshots_read'])} "
            f"snapshots and puts only the {int(preload['docs_read']):,} valid docs in the map with "
            f"{int(preload['key_comparisons']):,} comparisons ({saved:.0%} fewer docs), ending with the same "
            f"{int(preload['keys']):,} keys. Measured here: {float(rebuild['seconds']) * 1e3:.0f} ms against "
            f"{float(preload['seconds']) * 1e3:.0f} ms")
    if float(preload["seconds"]) >= float(rebuild["seconds"]):
        text += (": the wall time says more about this re-implementation (its rebuild is vectorised, its preload "
                 "reads one bitmap file per segment) than about a Pinot server, whose rebuild reads and compares "
                 "every doc as counted above")
    return Reading(text + ".", facts)


def duplicates_and_restart(heap: pd.DataFrame, work: pd.DataFrame) -> Figure:
    """Left: duplicates visible to queries at each commit, per TTL. Right: restart work by mode."""
    fig = InlineFigure(figsize=(10, 4.2))
    left, right = fig.subplots(1, 2)
    for ttl, g in heap.groupby("ttl_s", sort=True):
        g = g.sort_values("time_s")
        left.plot(g["time_s"] / 3600, g["duplicate_keys"], marker=".", label=_ttl_name(float(str(ttl))),
                  linestyle="-" if g["duplicate_keys"].any() else ":")
    finish_axes(left, "hours of stream", "duplicate rows", "duplicates TTL lets through")
    modes = list(work["mode"])
    width = 0.38
    for i, (col, label) in enumerate((("docs_read", "docs read"), ("key_comparisons", "keys compared"))):
        right.bar([j + (i - 0.5) * width for j in range(len(modes))], work[col] / 1e3, width, label=label)
    right.set_xticks(range(len(modes)), [f"{m}\n({'snapshots' if m == 'preload' else 'no snapshots'})"
                                         for m in modes])
    finish_axes(right, "restart", "docs or keys (thousands)", "restart work, one partition")
    fig.tight_layout()
    return fig
