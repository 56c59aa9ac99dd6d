"""Readings: the sentence under a table or plot, computed from the same numbers, with those numbers.

A notebook (or the report) should never claim what its own numbers do not show: "replica groups win"
only when their interval lies below the other's. Each function here takes a tidy result and returns a
:class:`Reading`, whose text is derived from the data and whose ``facts`` are the numbers behind it.
Jupyter shows a reading as Markdown and keeps the facts in the output's metadata, so a test of the
executed notebook can check every claim against its numbers.

>>> r = compare_intervals({"a": (10.0, 12.0, 14.0), "b": (20.0, 22.0, 25.0)}, "p99")
>>> r.facts["claim"], r.facts["best"]
('separates', 'a')
>>> compare_intervals({"a": (10.0, 12.0, 21.0), "b": (20.0, 22.0, 25.0)}, "p99").facts["claim"]
'overlaps'
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from workbench.io.summary import GC_DELAYED_RATE, P99, P99_HIGH, latency_column

__all__ = [
    "Reading",
    "cache_reading",
    "compare_intervals",
    "degraded_routing_reading",
    "fanout_reading",
    "heap_reading",
    "layout_reading",
    "provisioning_reading",
    "pruning_reading",
    "separated",
    "sizing_reading",
]


def _plain(value: Any) -> Any:
    """Numbers and containers as plain JSON types (numpy scalars become floats and ints)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class Reading:
    """A sentence read off a result, and the numbers it rests on (``facts``, plain JSON types)."""

    text: str
    facts: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.text

    def _repr_markdown_(self) -> tuple[str, dict[str, Any]]:
        """Markdown for Jupyter, with the facts in the output's metadata (``workbench.facts``)."""
        return f"**Reading.** {self.text}", {"workbench": {"facts": _plain(dict(self.facts))}}


def separated(a: tuple[float, float], b: tuple[float, float]) -> int:
    """``-1`` when interval ``a`` lies wholly below ``b``, ``1`` when above, ``0`` when they overlap.

    >>> separated((1, 2), (3, 4)), separated((3, 4), (1, 2)), separated((1, 3), (2, 4))
    (-1, 1, 0)
    """
    if a[1] < b[0]:
        return -1
    if a[0] > b[1]:
        return 1
    return 0


def compare_intervals(values: Mapping[str, tuple[float, float, float]], stat: str, unit: str = "ms",
                      replications: int | None = None) -> Reading:
    """Which configuration has the lowest ``stat``, and whether its interval separates from every other.

    ``values`` maps a configuration to ``(low, value, high)``. The claim is ``separates`` only when the
    best one's interval lies below every other's, else ``overlaps`` (the data cannot rank them).
    """
    best = min(values, key=lambda k: values[k][1])
    lo, val, hi = values[best]
    others = [k for k in values if k != best]
    overlapping = [k for k in others if separated((lo, hi), (values[k][0], values[k][2])) != -1]
    facts = {"stat": stat, "best": best, "claim": "overlaps" if overlapping else "separates",
             "intervals": {k: list(v) for k, v in values.items()}, "overlapping": overlapping,
             "replications": replications}
    head = f"{best} has the lowest {stat}: {val:.1f} {unit} [{lo:.1f}, {hi:.1f}]"
    if not others:
        return Reading(head + ".", facts)
    if overlapping:
        more = f" with {replications} replications" if replications else ""
        return Reading(f"{head}, but its interval overlaps {', '.join(overlapping)}'s, so{more} the model cannot "
                       f"rank them on {stat}: add replications (or simulated time) before choosing on it.", facts)
    gaps = ", ".join(f"{k} {values[k][1]:.1f} {unit} [{values[k][0]:.1f}, {values[k][2]:.1f}]" for k in others)
    return Reading(f"{head}; its interval lies below every other ({gaps}), so the difference is the "
                   "configuration's, not the simulation's noise.", facts)


def _interval(row: pd.Series, stat: str) -> tuple[float, float, float]:
    value = float(row[latency_column(stat)])
    low = float(row.get(latency_column(stat, "ci_low"), value))
    high = float(row.get(latency_column(stat, "ci_high"), value))
    return (value if math.isnan(low) else low, value, value if math.isnan(high) else high)


def layout_reading(table: pd.DataFrame, label: str = "config") -> Reading:
    """The layouts compared on p99 (the tail the routing seed is about) and p50 (its price).

    ``table`` is :func:`workbench.studies.compare.compare`'s summary table (one row per layout).
    """
    reps = int(table["replications"].iloc[0]) if "replications" in table else None
    p99 = compare_intervals({str(r[label]): _interval(r, "p99") for _, r in table.iterrows()}, "p99",
                            replications=reps)
    p50 = compare_intervals({str(r[label]): _interval(r, "p50") for _, r in table.iterrows()}, "p50",
                            replications=reps)
    fan = {str(r[label]): float(r["servers_queried_mean"]) for _, r in table.iterrows() if "servers_queried_mean" in r}
    gc = {str(r[label]): float(r[GC_DELAYED_RATE]) for _, r in table.iterrows() if GC_DELAYED_RATE in r}
    best = str(p99.facts["best"])
    text = p99.text
    if best in fan and best in gc:
        text += (f" {best} sends each query to {fan[best]:.1f} servers and {gc[best]:.1%} of its queries meet a GC "
                 f"pause ({', '.join(f'{k}: {fan[k]:.1f} servers, {gc[k]:.1%}' for k in fan if k != best)}).")
    text += f" On the median: {p50.text}"
    return Reading(text, {"p99": dict(p99.facts), "p50": dict(p50.facts), "servers_queried": fan, "gc_delayed": gc})


def pruning_reading(study: pd.DataFrame, by: str = "window", baseline: str | None = None) -> Reading:
    """How much more of the table each variant's queries keep than the baseline's, per ``by`` group.

    ``study`` has ``variant``, ``by`` and ``kept_share`` (one row per query). A variant keeps *more*
    for a group when its mean share is higher by more than one segment's share of the table (the
    smallest difference pruning can make); otherwise the shares are called equal.
    """
    variants = list(dict.fromkeys(study["variant"]))
    base = baseline or variants[0]
    step = float((1.0 / study["segments"]).mean()) if "segments" in study else 0.0
    means = study.groupby([by, "variant"], sort=False)["kept_share"].mean().unstack("variant")
    more: list[tuple[str, str, float, float]] = []
    same: list[tuple[str, str, float, float]] = []
    facts: dict[str, Any] = {"baseline": base, "step": step, "groups": {}}
    for group, row in means.iterrows():
        for variant in variants:
            if variant == base or variant not in row:
                continue
            diff = float(row[variant] - row[base])
            claim = "more" if diff > step else ("fewer" if diff < -step else "same")
            facts["groups"][str(group)] = {"variant": variant, "baseline_share": float(row[base]),
                                           "share": float(row[variant]), "claim": claim}
            (more if claim == "more" else same).append((str(group), variant, float(row[base]), float(row[variant])))
    parts = []
    if more:
        parts.append("Queries keep more segments with " + "; ".join(
            f"{v} for {g} ({a:.0%} -> {b:.0%} of the table)" for g, v, a, b in more) + ".")
    if same:
        parts.append("No difference beyond one segment for " + "; ".join(
            f"{g} ({a:.0%} against {b:.0%})" for g, _, a, b in same) + ".")
    return Reading(" ".join(parts), facts)


def cache_reading(curve: pd.DataFrame) -> Reading:
    """LRU against the optimum at each cache size: the gap a smarter policy could win, and where
    more bytes stop paying: the smallest size whose hit rate no larger size beats by a point."""
    lru = curve[curve["policy"] == "lru"].sort_values("max_bytes")
    best = curve[curve["policy"] != "lru"].groupby("max_bytes")["hit_rate"].max()
    rows = [{"max_bytes": int(r["max_bytes"]), "lru": float(r["hit_rate"]),
             "optimum": float(best.get(r["max_bytes"], math.nan))} for _, r in lru.iterrows()]
    gaps = [r["optimum"] - r["lru"] for r in rows if not math.isnan(r["optimum"])]
    largest = rows[-1]
    text = (f"At {largest['max_bytes'] / 1024**2:g} MiB LRU hits {largest['lru']:.0%} of requests against an "
            f"optimum of {largest['optimum']:.0%}")
    if gaps:
        worst = max(range(len(gaps)), key=lambda i: gaps[i])
        text += (f"; the widest gap, {gaps[worst]:.0%} points, is at {rows[worst]['max_bytes'] / 1024**2:g} MiB, "
                 "where a policy that knew the future would still win that much")
    # the smallest size that every larger one beats by under a point (not the first size a step to it adds
    # under a point: that step's own start is already flat)
    flat = next((rows[i]["max_bytes"] for i in range(len(rows) - 1)
                 if max(r["lru"] for r in rows[i + 1:]) - rows[i]["lru"] < 0.01), None)
    if flat is not None:
        text += f"; from {flat / 1024**2:g} MiB on, more bytes add under one point of hit rate"
    return Reading(text + ".", {"sizes": rows, "flat_from_bytes": flat})


def _gib(num_bytes: float) -> str:
    return f"{num_bytes / 1024**3:.2f} GiB"


def heap_reading(timeline: pd.DataFrame, heap_bytes: float, ihop: float, gc: pd.DataFrame | None = None) -> Reading:
    """Upsert heap per server by TTL: where it ends, whether it still grows, when it passes G1's IHOP.

    ``timeline`` is :func:`workbench.analysis.upsert_day.heap_timeline` rows for one or more ``ttl_h``
    (``hour``, ``live_bytes``, ``map_bytes``, ``pinot_estimate_bytes``); ``gc`` optionally one row per
    ``ttl_h`` with ``young_p99_ms``, ``full``, ``oom`` and optionally ``young_per_s`` at the end of the
    horizon. A TTL *levels* the heap when the last day added under 1% of it; it *grows* otherwise.
    """
    facts: dict[str, Any] = {"heap_bytes": heap_bytes, "ihop_bytes": ihop * heap_bytes, "ttl": {}}
    parts = []
    for ttl, g in timeline.groupby("ttl_h", sort=True):
        g = g.sort_values("hour")
        end = g.iloc[-1]
        day_before = g[g["hour"] <= float(end["hour"]) - 24.0]
        start = day_before.iloc[-1] if len(day_before) else g.iloc[0]
        growth = float(end["live_bytes"]) - float(start["live_bytes"])
        levels = growth < 0.01 * float(end["live_bytes"])
        over = g[g["live_bytes"] > ihop * heap_bytes]
        ihop_hour = float(over.iloc[0]["hour"]) if len(over) else None
        name = "no TTL" if float(str(ttl)) == 0 else f"TTL {float(str(ttl)):g} h"
        text = (f"{name}: {_gib(float(end['live_bytes']))} per server after {float(end['hour']):g} h "
                + ("and level" if levels else f"and still growing by {_gib(growth)} a day"))
        text += (f", past G1's IHOP ({_gib(ihop * heap_bytes)}) from hour {ihop_hour:g}" if ihop_hour is not None
                 else ", under G1's IHOP")
        entry: dict[str, Any] = {"end_live_bytes": float(end["live_bytes"]), "end_map_bytes": float(end["map_bytes"]),
                                 "growth_last_day_bytes": growth,
                                 "claim": "levels" if levels else "grows", "ihop_hour": ihop_hour,
                                 "pinot_estimate_bytes": float(end["pinot_estimate_bytes"])}
        if gc is not None and (gc["ttl_h"] == ttl).any():
            row = gc[gc["ttl_h"] == ttl].iloc[0]
            entry.update(young_p99_ms=float(row["young_p99_ms"]), full=float(row["full"]), oom=float(row["oom"]))
            per_min = f", {60 * float(row['young_per_s']):.1f} a minute" if "young_per_s" in row else ""
            if "young_per_s" in row:
                entry["young_per_s"] = float(row["young_per_s"])
            if "paused_share" in row:
                entry["paused_share"] = float(row["paused_share"])
                per_min += f", paused {float(row['paused_share']):.1%} of the time"
            text += ("; the JVM runs out of memory" if float(row["oom"]) > 0 else
                     f"; young pauses p99 {float(row['young_p99_ms']):.0f} ms{per_min}"
                     + (f", {int(row['full'])} full GCs in the window" if float(row["full"]) > 0 else ", no full GC"))
        facts["ttl"][name] = entry
        parts.append(text)
    why = _past_ihop(facts["ttl"])
    facts["shorter_past_ihop"] = why is not None
    return Reading(". ".join(parts) + "." + (f" {why}" if why else ""), facts)


def _past_ihop(ttl: dict[str, dict[str, Any]]) -> str | None:
    """Why a heap past G1's IHOP can show shorter young pauses than one under it (``None`` when none does).

    Under the IHOP, G1 grows eden until the young pause nears its goal (MaxGCPauseMillis, 200 ms by
    default): long pauses, seldom. Past it, concurrent cycles run back to back and G1 holds the young
    generation at its minimum (G1NewSizePercent): short pauses, often. The probe's 20M-key JVMs, whose old
    generation stayed above the IHOP, ran about twice the young collections per second of the 2M-key
    ones (docs/gc.md).
    """
    live = {k: v for k, v in ttl.items() if "young_p99_ms" in v and not v.get("oom")}
    over = [k for k, v in live.items() if v["ihop_hour"] is not None and "young_per_s" in v]
    under = [k for k, v in live.items() if v["ihop_hour"] is None and "young_per_s" in v]
    pairs = [(o, u) for o in over for u in under if live[o]["young_p99_ms"] < live[u]["young_p99_ms"]]
    if not pairs:
        return None
    o, u = pairs[0]
    a, b = live[o], live[u]
    text = (f"{o[0].upper()}{o[1:]}'s young pauses are shorter than {u}'s because its heap is past the IHOP, not "
            "because it is healthier: G1 then runs concurrent cycles back to back and holds the young generation at "
            f"its minimum (G1NewSizePercent), so pauses come {a['young_per_s'] / b['young_per_s']:.0f} times as often")
    if "paused_share" in a and "paused_share" in b:
        text += f" and the JVM is paused {a['paused_share']:.1%} of the time against {b['paused_share']:.1%}"
    return (text + "; under the IHOP G1 grows eden until its young pauses near the 200 ms goal (MaxGCPauseMillis). "
            "The probe's JVMs past the IHOP show the same: twice the young collections per second (docs/gc.md).")


def sizing_reading(combined: pd.DataFrame, best: pd.Series | None, currency: str = "USD") -> Reading:
    """The recommendation in one sentence, with the facts that make it one: it meets the SLO (and survives
    its failure case) and every cheaper configuration does not (``combined`` has ``monthly_cost``,
    ``meets_slo``, ``shape``, and ``cluster_cost`` and ``survives`` when the report computed them)."""
    def cost(r: pd.Series) -> float:
        value = r.get("cluster_cost", r["monthly_cost"])
        return float(value) if value == value else float(r["monthly_cost"])

    rows: list[dict[str, Any]] = [
            {"point": str(r["point"]), "shape": str(r["shape"]), "monthly_cost": cost(r),
             "p99_high": float(r.get(P99_HIGH, r[P99])), "meets_slo": bool(r["meets_slo"]),
             "survives": r.get("survives", True) is not False} for _, r in combined.iterrows()]
    if best is None:
        return Reading("No configuration meets the SLO: widen the sweep (more servers, cores or replica groups).",
                       {"best": None, "configurations": rows})
    total = cost(best)
    cheaper = [r for r in rows if float(r["monthly_cost"]) < total]
    text = (f"Recommended: {best['shape']} ({best.get('instance')}), {total:,.0f} {currency}/month, p99 "
            f"{float(best[P99]):.0f} ms with its interval under the SLO; "
            + (f"all {len(cheaper)} cheaper configurations fail it, or break in their failure case." if cheaper
               else "it is the cheapest simulated."))
    return Reading(text, {"best": str(best["point"]), "monthly_cost": total, "configurations": rows})


def fanout_reading(queries: pd.DataFrame) -> Reading:
    """How many servers and segments a query touches, naming a count that every query shares (a histogram
    of one value is one solid bar that says nothing a sentence does not).

    >>> fanout_reading(pd.DataFrame({"servers_queried": [4, 4], "segments_queried": [8, 12]})).text
    'Every query touched exactly 4 servers; segments per query ranged from 8 to 12 (mean 10.0).'
    """
    parts, facts = [], {}
    for col, noun in (("servers_queried", "servers"), ("segments_queried", "segments")):
        values = queries[col]
        facts[col] = sorted(int(v) for v in values.unique())
        if values.nunique() == 1:
            parts.append(f"every query touched exactly {int(values.iloc[0])} {noun}")
        else:
            parts.append(f"{noun} per query ranged from {int(values.min())} to {int(values.max())} "
                         f"(mean {float(values.mean()):.1f})")
    text = "; ".join(parts)
    return Reading(text[0].upper() + text[1:] + ".", facts)


def provisioning_reading(matrix: pd.DataFrame, hosts: int, retention_hours: float) -> Reading:
    """Why the RealtimeProvisioningHelper's memory at ``hosts`` hosts rises and falls as numHours grows.

    Pinot counts the segments a host keeps in memory as ``ceil(R / h)`` for retention ``R`` and
    numHours ``h``: when ``R / h`` is not whole, the last, partial segment counts whole, so the completed
    hours held, ``h x (ceil(R / h) - 1)``, jump (72 h: 68 at 4 h, 70 at 5 h, 66 at 6 h) and the memory
    with them. The jumps are Pinot's own arithmetic, not noise.

    ``matrix`` is :func:`~workbench.analysis.provisioning.provisioning_matrix`'s output.
    """
    col = matrix[matrix["num_hosts"] == hosts].sort_values("num_hours")
    hours = col["num_hours"].astype(int).tolist()
    active = (col["active_bytes"] / 1024**3).tolist()
    held = [h * (math.ceil(retention_hours / h) - 1) for h in hours]
    drops = [(hours[i], hours[i + 1]) for i in range(len(hours) - 1) if active[i + 1] < active[i]]
    facts = {"hosts": hosts, "num_hours": hours, "active_gib": active, "completed_hours_held": held}
    # a small table's memory in GiB would print as 0.0 throughout: MiB below a GiB
    unit, scale = ("GiB", 1.0) if max(active, default=0.0) >= 1.0 else ("MiB", 1024.0)
    shown = [v * scale for v in active]
    if not drops:
        return Reading(f"At {hosts} hosts the active memory grows with numHours, from {shown[0]:.1f} {unit} to "
                       f"{shown[-1]:.1f} {unit}.", facts)
    a, b = drops[0]
    ia, ib = hours.index(a), hours.index(b)
    values = ", ".join(f"{v:.1f}" for v in shown)
    listed = ", ".join(str(h) for h in hours)
    return Reading(f"At {hosts} hosts the active memory is not monotone in numHours ({values} "
                   f"{unit} for {listed} h): Pinot keeps ceil({retention_hours:g} / numHours) "
                   f"segments per partition, and a partial last segment counts whole, so the completed data a host "
                   f"holds is {held[ia]} h at {a} h but {held[ib]} h at {b} h; memory follows it. This is Pinot's "
                   f"own rounding, reproduced, not noise.", facts)


def degraded_routing_reading(frame: pd.DataFrame, baseline: str = "balanced", healthy: str = "none") -> Reading:
    """Which routing protects the table's p99 from one degraded server, and what it costs in p50.

    ``frame`` is :func:`workbench.studies.degraded_routing.routing_under_degradation`'s (``routing``,
    ``degradation`` and the summary columns). Under each degradation but ``healthy``, the *leaders* are the
    routing with the lowest p99 and every routing whose interval overlaps it (the data cannot rank them);
    a routing *protects* the table when it leads under every degradation. Its cost is its p50 minus
    ``baseline``'s, with no degraded server (``healthy``) and under each degradation.
    """
    reps = int(frame["replications"].iloc[0]) if "replications" in frame else None
    routings = list(dict.fromkeys(frame["routing"]))
    cells = {(str(r["routing"]), str(r["degradation"])): r for _, r in frame.iterrows()}
    facts: dict[str, Any] = {"baseline": baseline, "healthy": healthy, "degradations": {}}
    parts: list[str] = []
    for d in dict.fromkeys(frame["degradation"]):
        if d == healthy:
            continue
        p99 = compare_intervals({r: _interval(cells[r, d], "p99") for r in routings if (r, d) in cells}, "p99",
                                replications=reps)
        leaders = [str(p99.facts["best"]), *p99.facts["overlapping"]]
        p50 = {r: float(cells[r, d][latency_column("p50")]) for r in routings if (r, d) in cells}
        partial = {r: float(cells[r, d]["partial_rate"]) for r in routings
                   if (r, d) in cells and "partial_rate" in cells[r, d]}
        fan = {r: float(cells[r, d]["servers_queried_mean"]) for r in routings
               if (r, d) in cells and "servers_queried_mean" in cells[r, d]}
        facts["degradations"][str(d)] = {"p99": dict(p99.facts), "leaders": leaders, "p50": p50, "partial": partial,
                                         "servers_queried": fan}
        shares = ", ".join(f"{r} {partial[r]:.1%}" for r in dict.fromkeys([baseline, *leaders]) if r in partial)
        parts.append(f"Under {d}: {p99.text}" + (f" Partial queries: {shares}." if shares else ""))
    led = [set(v["leaders"]) for v in facts["degradations"].values()]
    protects = [r for r in routings if led and all(r in s for s in led)]
    healthy_p50 = {r: float(cells[r, healthy][latency_column("p50")]) for r in routings if (r, healthy) in cells}
    facts["protects"] = protects
    facts["healthy_p50"] = healthy_p50
    facts["p50_cost_ms"] = {r: {d: v["p50"][r] - v["p50"][baseline] for d, v in facts["degradations"].items()
                                if r in v["p50"] and baseline in v["p50"]} for r in protects}
    facts["healthy_p50_cost_ms"] = {r: healthy_p50[r] - healthy_p50[baseline] for r in protects
                                    if r in healthy_p50 and baseline in healthy_p50}
    if not protects:
        head = ("No routing leads on p99 under every degradation: the one to choose depends on which failure "
                "this table meets (each case below).")
    else:
        costs = []
        for r in protects:
            cost = facts["healthy_p50_cost_ms"].get(r)
            if cost is not None:
                costs.append(f"{r}'s p50 with every server healthy is {healthy_p50[r]:.1f} ms against {baseline}'s "
                             f"{healthy_p50[baseline]:.1f} ms ({cost:+.1f} ms)")
            degraded = ", ".join(f"{c:+.1f} ms with {d}" for d, c in facts["p50_cost_ms"][r].items())
            if degraded:
                costs.append(f"against {baseline} under the degradations, {r}'s p50 differs by {degraded}")
        head = (f"{' and '.join(protects)} {'protects' if len(protects) == 1 else 'protect'} this table's p99 under "
                f"every degradation (lowest, or not separable from the lowest); the cost in p50: "
                + ("; ".join(costs) if costs else "no healthy run to compare") + ".")
    return Reading(" ".join([head, *parts]), facts)
