"""A tenant's tables in the sizing report: each table against its own SLO, and what each one adds to the others.

Operators size tenants, not tables: the servers tagged for a tenant hold every table assigned to it, and
the question a new table brings is "does it fit, or do we add servers?". A sweep of a ``tables:`` scenario
judges each configuration by every table against its own SLO (the run's verdict,
:func:`workbench.analysis.tables.tenant_verdict`); this page shows the recommendation table by table, then,
for each table, what taking it off the tenant would give back to the others: *adding table X moves table
Y's p99 from a to b*.

**The runs.** For table X, two runs of the recommended configuration on its seed: the tenant without X,
and the tenant with X listed last (a table draws from streams of its own position,
:func:`workbench.sim.tenant.table_streams`, so with X last every other table keeps its position and draws
the same arrivals and work in both runs: the difference is X's load on the shared servers, not noise;
when X is already last, the sweep's own run is the second). They are the studies' runs
(:func:`workbench.studies.sizing.run_sizing_studies`, under ``SWEEP/whatif/POINT/tenant-*``); the report
reads them through :func:`table_effects` with a fetch that reads, so it simulates nothing.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from workbench.io.summary import Summary
from workbench.report.data import SizingData
from workbench.report.layout import Page
from workbench.report.whatif import Fetch, StudyMissing, WhatIf, point_of, read_whatif
from workbench.scenario import Scenario

__all__ = ["EFFECT_COLUMNS", "effect_sentences", "effect_variants", "table_effects", "table_frame", "table_lines",
           "tables_section"]

#: The columns of :func:`table_effects`: one row per (table added, table already there).
EFFECT_COLUMNS = ("added", "table", "p99_without_ms", "p99_with_ms", "p99_with_high_ms", "p99_slo_ms",
                  "meets_without", "meets_with")


def _col(table: str, *path: str) -> str:
    return ".".join(("tables", table, *path))


def _met(value: Any) -> bool | None:
    """A verdict as the combined table holds it (numpy bool, ``None`` or NaN when unjudged) as a plain one."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    return bool(value)


def _names(d: SizingData) -> list[str]:
    """The tenant's tables in the scenario's order (the columns are sorted by name); none for one table."""
    return list(d.judging.tables)


def _p99(row: pd.Series, name: str) -> str:
    """Table ``name``'s p99 in ``row`` with its 95% interval: ``41 ms [38, 45]`` (``41 ms`` when it has none)."""
    value = float(row[_col(name, "latency_ms", "p99", "value")])
    low, high = (row.get(_col(name, "latency_ms", "p99", end)) for end in ("ci_low", "ci_high"))
    if low is None or high is None or low != low or high != high:
        return f"{value:.0f} ms"
    return f"{value:.0f} ms [{float(low):.0f}, {float(high):.0f}]"


def _verdict(d: SizingData, row: pd.Series, name: str) -> str | None:
    """``meets`` or ``BREAKS`` (table ``name`` against its own SLO in ``row``), ``None`` without an SLO."""
    if d.judging.tables.get(name) is None:
        return None
    return "meets" if _met(row.get(_col(name, "slo", "met"))) is True else "BREAKS"


def table_lines(d: SizingData, row: pd.Series) -> list[str]:
    """``orders: p99 41 ms [38, 45] against 120 ms, meets``, one per table of a tenant's row (empty otherwise)."""
    out = []
    for name in _names(d):
        slo, verdict = d.judging.tables.get(name), _verdict(d, row, name)
        against = f" against {slo:g} ms, {verdict}" if slo is not None else " (no SLO)"
        out.append(f"{name}: p99 {_p99(row, name)}{against}")
    return out


def table_frame(d: SizingData, row: pd.Series) -> pd.DataFrame:
    """Each table of a tenant's configuration ``row``: queries/s, p99 with its interval, its SLO and verdict,
    and how busy its tenant's servers are (shared with the tenant's other tables)."""
    rows = []
    for name in _names(d):
        slo = d.judging.tables.get(name)
        rows.append({"table": name, "tenant": str(row.get(_col(name, "tenant"), "")),
                     "queries/s": round(float(row[_col(name, "throughput_qps")]), 1),
                     "p99 [95% interval]": _p99(row, name),
                     "SLO p99": "none" if slo is None else f"{slo:g} ms",
                     "verdict": _verdict(d, row, name) or "–",
                     "tenant's servers busy": f"{float(row[_col(name, 'utilisation', 'mean')]):.0%}"})
    return pd.DataFrame(rows)


def effect_variants(sc: Scenario) -> list[tuple[str, WhatIf | None, WhatIf]]:
    """For each table X of the tenant ``sc``: X's name, the run with X listed last (``None`` when it already
    is: the configuration's own run), and the run without X."""
    entries: list[dict[str, Any]] = sc.to_dict()["tables"]
    names = [t.table.table_name for t in sc.tables]
    out: list[tuple[str, WhatIf | None, WhatIf]] = []
    for i, name in enumerate(names):
        others = entries[:i] + entries[i + 1:]
        last = None if i == len(names) - 1 else WhatIf(f"tenant-{name}-last", f"{name} listed last",
                                                       {"tables": [*others, entries[i]]},
                                                       note=f"the same tables, {name} last: the others keep their "
                                                            "draws")
        out.append((name, last, WhatIf(f"tenant-without-{name}", f"without {name}", {"tables": others},
                                       note=f"the tenant without table {name}")))
    return out


def table_effects(d: SizingData, best: pd.Series, fetch: Fetch = read_whatif) -> pd.DataFrame:
    """What each table of the recommended tenant configuration ``best`` does to the others (columns
    :data:`EFFECT_COLUMNS`): their p99 without it and with it on the same servers, on common random numbers.
    Empty for one table, or without ``report.whatif``."""
    sc, scratch, seed = point_of(d, best)
    if not d.judging.tenant or not d.options.whatif:
        return pd.DataFrame(columns=list(EFFECT_COLUMNS))
    rows = []
    for name, last, without in effect_variants(sc):
        without_run = fetch(sc, without, scratch / without.name, seed).summary
        with_run = fetch(sc, last, scratch / last.name, seed).summary if last is not None else None
        for other in (t for t in sc.tables if t.table.table_name != name):
            rows.append(_effect(name, other, without_run, with_run, best))
    return pd.DataFrame(rows, columns=list(EFFECT_COLUMNS))


def _effect(added: str, other: Scenario, without: Summary, with_: Summary | None, best: pd.Series) -> dict[str, Any]:
    table = other.table.table_name
    assert without.tables is not None
    before = without.tables[table]
    if with_ is not None:
        assert with_.tables is not None
        after = with_.tables[table]
        p99, high, met = after.latency_ms.p99.value, after.latency_ms.p99.bound(), after.slo.met
    else:  # the configuration's own run (the added table is already last)
        p99 = float(best[_col(table, "latency_ms", "p99", "value")])
        high = float(best.get(_col(table, "latency_ms", "p99", "ci_high"), p99))
        high = p99 if high != high else high
        met = _met(best.get(_col(table, "slo", "met")))
    return {"added": added, "table": table, "p99_without_ms": before.latency_ms.p99.value, "p99_with_ms": p99,
            "p99_with_high_ms": high, "p99_slo_ms": other.slo.p99_ms, "meets_without": before.slo.met,
            "meets_with": met}


def effect_sentences(effects: pd.DataFrame) -> list[str]:
    """``Adding clicks moves the p99 of orders from 31 to 44 ms (SLO 120 ms, still met)``, one per row."""
    out = []
    for _, r in effects.iterrows():
        slo = r["p99_slo_ms"]
        if slo is None or slo != slo:
            verdict = ""
        elif r["meets_with"] is True:
            verdict = f" (SLO {slo:g} ms, still met)" if r["meets_without"] is True else f" (SLO {slo:g} ms, met)"
        else:
            verdict = (f" (SLO {slo:g} ms: BROKEN by it)" if r["meets_without"] is True
                       else f" (SLO {slo:g} ms: broken without it too)")
        out.append(f"Adding {r['added']} moves the p99 of {r['table']} from {r['p99_without_ms']:.0f} to "
                   f"{r['p99_with_ms']:.0f} ms{verdict}.")
    return out


def tables_section(d: SizingData, best: pd.Series | None) -> list[Figure]:
    """The page: the recommendation table by table, then what each table adds to the others (none for one
    table, or without a recommendation)."""
    if best is None or not d.judging.tenant:
        return []
    page = Page("The tenant's tables", f"{best['shape']}: each table against its own SLO")
    page.table(table_frame(d, best), size=8,
               note="verdict: the table's whole p99 interval under its own SLO (the configuration meets the SLO when "
                    "every table does). busy: mean share of core time of the servers of the table's tenant, every "
                    "table's queries included.")
    try:
        effects = table_effects(d, best)
    except StudyMissing:
        page.paragraph(f"What each table adds to the others is not on disk: run `workbench studies "
                       f"{d.sweep_dir}` (workbench sweep does after its points).", size=9)
        return [page.fig]
    if len(effects):
        page.heading("What each table adds to the others")
        page.paragraph("Each table taken off the tenant, on the same servers and seed (the other tables draw the "
                       "same queries and work in both runs: the difference is that table's load).", size=9)
        page.bullets(effect_sentences(effects), size=9)
    return [page.fig]
