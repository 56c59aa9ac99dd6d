"""Page 1 of the sizing report: what to buy, what it costs, how sure we are, what if things change.

Written for an engineering lead who reads one page: the question and the load, the recommendation
with its shape and monthly cost, the what-ifs and the headroom, how sure the numbers are, the
runner-up and what it would save or risk, and the warnings. Every sentence is built from the
findings (:mod:`workbench.report.findings`); the helpers that build them are pure and tested.
"""

from __future__ import annotations

import datetime as _dt
import functools
import math
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from workbench.io.summary import (
    P99,
    P99_HIGH,
    P99_LOW,
    P99_MODEL_HIGH,
    P99_MODEL_LOW,
    PARTIAL_RATE,
    THROUGHPUT,
    UTILISATION_MEAN,
    latency_column,
)
from workbench.report.assumptions import checks_lead
from workbench.report.cluster_cost import part_line, total
from workbench.report.data import RANKING_RULE, SizingData, bill, binary_size, search_note, size_text, table_bytes
from workbench.report.findings import Findings, LoadFacts
from workbench.report.judging import Judging
from workbench.report.layout import Page, fitted
from workbench.report.prices import PriceTable
from workbench.report.survival import MODE_TEXT
from workbench.report.tenant import table_lines
from workbench.report.verdict_section import verdict_sentences

__all__ = ["assumption_sentences", "bill_text", "cost_of", "fragile_sentence", "headroom_sentence", "load_rows",
           "money", "ms", "per_load_sentences", "resilience_sentence", "runner_up_sentences", "shape_sentence",
           "summary_page", "summary_pages", "sureness_sentences", "whatif_frame"]


def money(value: float, currency: str) -> str:
    """``1,104 USD``; a dash when unknown.

    >>> money(1104.4, "USD"), money(float("nan"), "USD")
    ('1,104 USD', 'unknown')
    """
    return "unknown" if value != value else f"{value:,.0f} {currency}"


def ms(row: pd.Series | dict[str, Any], stat: str = "p99") -> str:
    """``191 ms [186, 196]``: a latency statistic with its 95% interval.

    >>> ms({"latency_ms.p99.value": 190.6, "latency_ms.p99.ci_low": 186.0, "latency_ms.p99.ci_high": 195.9})
    '191 ms [186, 196]'
    """
    value = float(row[latency_column(stat)])
    low, high = row.get(latency_column(stat, "ci_low")), row.get(latency_column(stat, "ci_high"))
    if low is None or high is None or low != low or high != high:
        return f"{value:.0f} ms"
    return f"{value:.0f} ms [{float(low):.0f}, {float(high):.0f}]"


def shape_sentence(row: pd.Series, prices: PriceTable | None) -> str:
    """The configuration as a purchase: instances, heap, routing, replica groups, replication."""
    inst = prices.instances.get(str(row["instance"])) if prices is not None and row.get("instance") else None
    machine = (f"{row['servers']} x {inst.name} ({inst.vcpus} vCPU, {size_text(inst.memory_bytes)} memory)"
               if inst is not None else f"{row['servers']} servers with {row['cores']} cores")
    heap = f"a {size_text(float(row['heap_bytes']))} JVM heap each"
    if int(row["replica_groups"]) > 0:
        groups, per = int(row["replica_groups"]), int(row["servers"]) // max(1, int(row["replica_groups"]))
        routing = (f"{groups} replica groups of {per} servers (numReplicaGroups {groups}, numInstancesPerReplicaGroup "
                   f"{per}), instanceSelectorType {row['selector']}: each query goes to one group")
    else:
        routing = (f"instanceSelectorType {row['selector']}, no replica groups: each query spreads over every "
                   f"server holding its segments; replication {int(row['replication'])}")
    return f"{machine} as Pinot servers, {heap}; {routing}."


def load_rows(load: LoadFacts) -> list[tuple[str, str]]:
    """The load block of page 1: queries, data, keys."""
    mix = ", ".join(f"{share:.0%} {kind}" for kind, share in sorted(load.kinds.items(), key=lambda kv: -kv[1]))
    source = "the workload's query log, replayed" if load.process == "replay" else "Poisson arrivals"
    peak = f" {load.peak}" if load.peak else ""
    queries = f"{load.qps:,.1f} queries/s at the brokers{peak} ({source}{': ' + mix if mix else ''})"
    rows = [("Queries", queries)]
    if load.segments is not None:
        parts = [f"{load.rows:,} rows in {load.segments:,} segments"]
        if load.data_bytes:  # a size of 0 is a workload that records none, not an empty table
            parts.append(f"{binary_size(float(load.data_bytes))} of column values")
        if load.partitions and load.table_type == "REALTIME":
            parts.append(f"{load.partitions} stream partitions")
        rows.append(("Data", ", ".join(parts)))
    keys = []
    if load.keys:
        keys.append(f"{load.keys:,} distinct keys")
    if load.upsert_keys_per_server:
        keys.append(f"{load.upsert_keys_per_server:,} upsert primary keys per server on the heap")
    if keys:
        rows.append(("Keys", "; ".join(keys)))
    return rows


def whatif_frame(f: Findings, judged: bool) -> pd.DataFrame:
    """The what-if table as printed: what changes, p99 with its interval, the verdict, how busy the
    busiest server is (a mean would count a server that is down as idle and hide its replicas' load)."""
    if f.whatifs is None:
        return pd.DataFrame()
    rows = []
    for _, r in f.whatifs.iterrows():
        verdict = "–" if not judged else ("meets" if r["meets_slo"] else "BREAKS")
        p99 = ms(r) if r[P99] == r[P99] else "not simulated"
        rows.append({"case": str(r["label"]), "how it is modelled": str(r["note"]),
                     "queries/s": round(float(r.get(THROUGHPUT, math.nan)), 1), "p99 [95% interval]": p99,
                     "SLO": verdict, "busiest server": _share(r.get("utilisation.max"))})
    return pd.DataFrame(rows)


def _share(value: Any) -> str:
    """``37%``, or a dash when unknown."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "–"
    return "–" if math.isnan(number) else f"{number:.0%}"


def headroom_sentence(f: Findings) -> str:
    """Where the SLO breaks as load grows, in queries per second."""
    room = f.headroom
    if room is None:
        return "Headroom not computed (no SLO, or report.headroom is empty)."
    if room.holds_to < 1.0:
        return "Headroom: none; the recommendation does not meet the SLO at today's load."
    today = room.qps
    if room.breaks_at is None:
        return (f"Headroom: the SLO still holds at {room.holds_to:g}x today's load ({room.holds_to * today:,.0f} "
                "queries/s), the most tried.")
    holds = ("at today's load" if room.holds_to == 1.0 else
             f"up to {room.holds_to:g}x today's load ({room.holds_to * today:,.0f} queries/s)")
    text = (f"Headroom: the SLO holds {holds} and breaks by {room.breaks_at:g}x "
            f"({room.breaks_at * today:,.0f} queries/s)")
    if room.estimate is not None:
        text += f"; interpolating, at about {room.estimate:.2g}x ({room.estimate * today:,.0f} queries/s)"
    return text + "."


def sureness_sentences(d: SizingData, f: Findings) -> list[str]:
    """How sure the answer is: the simulation's interval, and the model's (calibrated or not)."""
    best = f.best if f.best is not None else _closest(d)
    if best is None:
        return []
    reps = int(best.get("replications", 0) or 0)
    sc = d.scenarios[str(best["point"])]
    window = sc.simulation.duration_s - sc.simulation.warmup_s
    high, low = best.get(P99_HIGH, math.nan), best.get(P99_LOW, math.nan)
    half = (float(high) - float(low)) / 2
    which = "" if f.best is not None else f" (of the configuration closest to the SLO, {best['shape']})"
    out = [f"Simulation{which}: {reps} independent replication(s) of {window:g} s after warm-up, "
           f"{int(best.get('queries', 0)):,} queries; p99 is known to within +/-{half:.0f} ms (95%)."]
    cal = f.calibration
    if cal.has_model_interval:
        m_low, m_high = best.get(P99_MODEL_LOW, math.nan), best.get(P99_MODEL_HIGH, math.nan)
        draws = best.get("model_uncertainty.draws")
        count = f" ({int(draws)} draws)" if draws is not None and draws == draws else ""
        out.append(f"Model: calibrated; across the fitted parameters' uncertainty{count} p99 lies in "
                   f"[{float(m_low):.0f}, {float(m_high):.0f}] ms.")
    elif cal.directory is not None:
        out.append(f"Model: calibrated from {cal.directory.name}/, without the model interval on these points.")
    else:
        out.append("Model: not calibrated. The cost per document, per segment and per request and the GC settings "
                   "are the scenario's assumptions, so the answer is only as good as they are; `workbench calibrate` "
                   "fits them to your broker log and GC logs, and the report then shows the model's interval.")
    if cal.backtest is not None and cal.backtest.get("verdict"):
        out.append(f"Back-test against the log: {cal.backtest['verdict']}.")
    return out


def assumption_sentences(d: SizingData, f: Findings) -> list[str]:
    """The assumptions that drive the answer: the long-lived heap against G1's IHOP (read from the runs),
    then each assumption varied within its plausible range, those that move the answer first."""
    if f.best is None:
        return []
    currency = d.prices.currency if d.prices is not None else ""
    out = [f.ihop] if f.ihop else []
    lead = checks_lead(f.assumptions, f.best, currency, cost_of, f.survive)
    out += [lead] if lead else []
    return out + [c.sentence() for c in sorted(f.assumptions, key=lambda c: not c.drives)]


def cost_of(row: pd.Series) -> float:
    """A configuration's monthly cost as the report ranks it: the whole cluster's, else the servers'."""
    value = row.get("cluster_cost", math.nan)
    return float(value) if value is not None and value == value else float(row["monthly_cost"])


def bill_text(d: SizingData, row: pd.Series, currency: str) -> str:
    """The whole cluster's monthly cost, then one line per part with its money."""
    if d.prices is None:
        return ""
    parts = bill(d.prices, d.scenarios[str(row["point"])], row, table_bytes(d.base_scenario))
    lines = [f"Monthly cost of the whole cluster: {money(total(parts), currency)}"]
    lines += [f"  {part_line(p, currency)}" for p in parts]
    if not any(p.role == "storage" for p in parts):
        lines.append("  storage: not priced (the workload has no segment sizes)")
    return "\n".join(lines)


def _margin(row: pd.Series | Mapping[str, Any]) -> float:
    """The upper end of the p99 interval (the number the SLO is judged on), ms."""
    high = row.get(P99_HIGH, math.nan)
    return float(high) if high is not None and high == high else float(row[P99])


def _closest(d: SizingData) -> pd.Series | None:
    """The configuration with the lowest p99 at the sized load (what page 1 quotes when nothing meets the SLO)."""
    at_load = d.combined[d.combined["at_load"]] if "at_load" in d.combined else d.combined
    return at_load.sort_values(P99).iloc[0] if len(at_load) else None


def runner_up_sentences(d: SizingData, f: Findings) -> list[str]:
    """The runner-up and what it adds; the cheaper configuration that breaks in its failure case; the
    cheaper shape that fails the SLO and what it would save and risk."""
    out: list[str] = []
    currency = d.prices.currency if d.prices is not None else ""
    best = f.best
    if best is None:
        return out
    if f.runner is not None:
        r = f.runner
        extra = cost_of(r) - cost_of(best)
        more = "the same cost" if round(extra) == 0 else f"{money(extra, currency)} more"
        diff = _margin(best) - _margin(r)
        margin = (f"{diff:.0f} ms more margin under the SLO" if diff > 0.5 else
                  f"{-diff:.0f} ms less margin under the SLO" if diff < -0.5 else "the same margin under the SLO")
        out.append(f"Runner-up: {r['shape']} ({r['instance']}), {money(cost_of(r), currency)}/month: "
                   f"{more} for p99 {ms(r)}: {margin} (its interval ends at {_margin(r):.0f} ms against "
                   f"{_margin(best):.0f}).")
    if f.fragile is not None:
        out.append(fragile_sentence(f, f.fragile, best, currency))
    if f.cheaper is not None:
        c = f.cheaper
        saving = cost_of(best) - cost_of(c)
        if f.fragile is not None and str(c["point"]) == str(f.fragile["point"]):
            pass  # said above
        elif bool(c.get("meets_slo")) and str(c["point"]) in f.survival:  # meets it until a server is lost
            out.append("Cheaper but failing: " + fragile_sentence(f, c, best, currency))
        else:
            out.append(f"Cheaper but failing: {c['shape']} ({c['instance']}) would save "
                       f"{money(saving, currency)}/month but {why_it_fails(c, d.judging)}.")
    return out


def why_it_fails(row: pd.Series, judging: Judging) -> str:
    """Why a configuration does not meet the SLO, by the check that fails first in the report's rule
    (:func:`~workbench.report.judging.slo_verdicts` by ``judging``): its p99 interval, the model's interval, or
    the run's own verdict (the heap, or a tenant's table over its own SLO).

    >>> row = pd.Series({P99: 30.0, P99_LOW: 28.0, P99_HIGH: 32.0, P99_MODEL_HIGH: 41.0, "slo.why": ""})
    >>> why_it_fails(row, Judging(35.0)).split(", ")[2:4]
    ['under the SLO in the simulation', "but the model interval reaches 41 ms (the calibration's uncertainty)"]
    >>> why_it_fails(row, Judging(31.0))
    'its p99 is 30 ms [28, 32], over the SLO'
    """
    slo = judging.p99_ms
    high = row.get(P99_HIGH)
    high = row[P99] if high is None or high != high else high
    if slo is not None and float(high) > slo:
        return f"its p99 is {ms(row)}, over the SLO"
    model = row.get(P99_MODEL_HIGH)
    if slo is not None and model is not None and model == model and float(model) > slo:
        return (f"its p99 is {ms(row)}, under the SLO in the simulation, but the model interval reaches "
                f"{float(model):.0f} ms (the calibration's uncertainty), over it")
    why = str(row.get("slo.why") or "")
    return f"it breaks the SLO: {why}" if why else f"its p99 is {ms(row)}, over the SLO"


def fragile_sentence(f: Findings, row: pd.Series, best: pd.Series | None, currency: str) -> str:
    """Why the cheapest configuration meeting the SLO with every server up is not the answer: its failure case."""
    s = f.survival.get(str(row["point"]))
    saving = ""
    if best is not None:
        saving = f", {money(cost_of(best) - cost_of(row), currency)}/month less"
    head = f"{row['shape']} ({row['instance']}{saving}) meets the SLO with every server up (p99 {ms(row)})"
    if s is None:
        return head + "."
    if s.cannot is not None:
        return f"{head}, but cannot survive {MODE_TEXT[s.mode].split(' (')[0]}: {s.cannot}."
    worst = s.worst()
    if worst is None:
        return head + "."
    return f"{head}, but breaks it with {worst['label']}: p99 {ms(pd.Series(dict(worst)))} ({worst['note']})."


def resilience_sentence(f: Findings) -> str | None:
    """Page 1's statement of the failure the SLO includes and how the recommendation fares in it."""
    if f.survive == "none":
        return "Resilience: not part of this SLO (slo.survive: none): no failure case was run."
    if not f.survival:
        return None
    text = (f"Resilience is part of the SLO: it must also hold with {MODE_TEXT[f.survive]}; each of the "
            f"{len(f.survival)} configurations meeting it with every server up was run in that failure")
    s = f.survival.get(str(f.best["point"])) if f.best is not None else None
    if s is None:
        return text + "."
    if f.whatifs is not None and s.rows and all(r["name"] in set(f.whatifs["name"]) for r in s.rows):
        text += " (the recommendation's cases are in the table below)"  # said once, in the table
    else:
        cases = "; ".join(f"{r['label']}: p99 {ms(pd.Series(dict(r)))} ({r['note']})" for r in s.rows)
        text += f". The recommendation: {cases}"
    if s.after_loss is not None:
        text += (". The state before the rebalance lasts until the lost server is made good: "
                 + s.after_loss.sentence())
    return text + "."


def per_load_sentences(d: SizingData, f: Findings) -> list[str]:
    """One answer per load level, lightest first, when the sweep varies the load (empty when it does not).

    Each level's shape was ranked against that level's points only; a level where nothing meets the SLO
    says so with its lowest p99 rather than borrowing another level's answer.
    """
    if len(f.per_load) < 2:
        return []
    currency = d.prices.currency if d.prices is not None else ""
    out = []
    for a in f.per_load:
        head = f"At {a.qps:,.0f} queries/s ({a.level}): "
        if a.best is None:
            c = a.closest
            out.append(head + f"no configuration meets the SLO; the lowest p99 is {ms(c)} ({c['shape']}, servers "
                       f"{float(c[UTILISATION_MEAN]):.0%} busy).")
            continue
        b = a.best
        cost = f", {money(cost_of(b), currency)}/month" if d.prices is not None else ""
        out.append(head + f"buy {b['shape']} ({b['instance']}){cost}: p99 {ms(b)}, servers "
                   f"{float(b[UTILISATION_MEAN]):.0%} busy.")
    return out


def _title(d: SizingData) -> tuple[str, str]:
    table = d.base.get("table", {}) if isinstance(d.base.get("table"), dict) else {}
    name = f"{table.get('tableName', d.scenario_name)}_{table.get('tableType', '')}".rstrip("_")
    searched = search_note(d.sweep_dir)
    sub = (f"Sizing report of sweep '{d.sweep_name}' ({searched or f'{len(d.combined)} configurations simulated'}), "
           f"{_dt.date.today().isoformat()}")
    return f"Pinot sizing: {name}", sub


#: Where page one's content must end: above its prices footer (two 7-pt lines from 2% up), figure fraction.
_FOOTER_TOP = 0.055


#: Page 1's readable sizes: below the smallest, blocks move to a continuation page instead.
_READABLE = (1.0, 0.94, 0.88, 0.82)
#: Page 1's sizes when even without the blocks it hands on it would run into the footer.
_SMALLEST = (0.82, 0.76, 0.71, 0.66, 0.62)
#: The blocks page 1 hands to its continuation page, in this order, when it would not fit at a readable
#: size: the routing question (it has its own evidence page), then the alternatives. The answer, its
#: failure cases, its assumptions, how sure it is and the warnings stay, in smaller type if need be.
_OVERFLOW = ("routing", "alternatives")


def summary_page(d: SizingData, f: Findings) -> Figure:
    """Page 1 (A4 portrait): the first of :func:`summary_pages`."""
    return summary_pages(d, f)[0]


def summary_pages(d: SizingData, f: Findings) -> list[Figure]:
    """Page 1 (A4 portrait), its type made smaller when the content would run into the footer, and when
    even that is not enough, its last blocks (:data:`_OVERFLOW`) on a second page that says it continues
    the first."""
    bottom = _FOOTER_TOP if d.prices is not None else 0.02
    moved: tuple[str, ...] = ()
    for n in range(len(_OVERFLOW) + 1):
        moved = _OVERFLOW[:n]
        page = fitted(functools.partial(_summary, d, f, skip=moved), bottom, _READABLE)
        if page.y >= bottom:
            break
    else:  # not even then: smaller type, down to two thirds (small, but never over the footer's text)
        page = fitted(functools.partial(_summary, d, f, skip=moved), bottom, _SMALLEST)
    pages = [page.fig]
    rest = Page("Executive summary, continued", f"{_title(d)[0]}: what page 1 had no room for")
    added = [_BLOCKS[name](d, f, rest) for name in moved]  # every block, not up to the first that adds
    if any(added):
        pages.append(rest.fig)
    return pages


def question_target(d: SizingData) -> str:
    """What the sizing is for: ``this table's load with p99 under 200 ms (...)``, or a tenant's tables, each
    held to its own SLO.

    >>> from workbench.report.data import SizingData
    >>> tenant = Judging(tables={"orders": 120.0, "clicks": None})
    >>> question_target(SizingData(pd.DataFrame(), {}, tenant, "s", {})).split(" with ")[1]
    "each table's p99 under its own SLO (orders 120 ms, clicks none; the whole 95% interval)"
    """
    judging = d.judging
    if judging.tenant:
        return (f"this tenant's {len(judging.tables)} tables ({', '.join(judging.tables)}) with each table's p99 "
                f"under its own SLO ({judging.each()}; the whole 95% interval)")
    slo = judging.p99_ms
    target = f"p99 under {slo:g} ms (the whole 95% interval)" if slo is not None else "no latency SLO (none was set)"
    return f"this table's load with {target}"


def _answer(d: SizingData, f: Findings, page: Page) -> bool:
    """The question, the load and the answer (or why there is none)."""
    page.heading("Executive summary")
    page.paragraph(f"The question: which cluster shape serves {question_target(d)}, for the least money?", size=9)
    page.facts(load_rows(f.load), size=9)
    today = verdict_sentences(d)
    if today:
        page.heading("Today's cluster")
        page.paragraph(today[0], size=9)
        page.bullets(today[1:], size=9)
    currency = d.prices.currency if d.prices is not None else ""
    if f.best is None and f.fragile is not None:
        page.callout(f"No configuration in this sweep meets the SLO with {MODE_TEXT[f.survive]}. "
                     f"{fragile_sentence(f, f.fragile, None, currency)} Widen the sweep (more servers, replicas or "
                     "replica groups), or say the SLO need not hold through a failure (slo.survive: none).", "bad",
                     weight="bold")
    elif f.best is None:
        at_load = d.combined[d.combined["at_load"]] if "at_load" in d.combined else d.combined
        best_p99 = at_load.sort_values(P99).iloc[0]
        where = (f"meets the SLO at the highest load simulated ({f.per_load[-1].qps:,.0f} queries/s, "
                 f"{f.per_load[-1].level})" if len(f.per_load) > 1 else "in this sweep meets the SLO")
        page.callout(f"No configuration {where}. The lowest p99 was {ms(best_p99)} "
                     f"({best_p99['shape']}); widen the sweep: more servers, more cores, or replica groups.", "bad",
                     weight="bold")
    else:
        b = f.best
        level = (f"At the highest load simulated, {f.per_load[-1].qps:,.0f} queries/s ({f.per_load[-1].level}): "
                 if len(f.per_load) > 1 else "")
        each = "".join(f"  {line}\n" for line in table_lines(d, b))
        tenant = "every table's queries: " if each else ""
        page.callout(f"{level}Buy {shape_sentence(b, d.prices)}\n{tenant}p99 {ms(b)}, p50 {ms(b, 'p50')}, "
                     f"servers {float(b[UTILISATION_MEAN]):.0%} busy, partial results "
                     f"{float(b.get(PARTIAL_RATE, 0.0)):.2%}.\n" + each + bill_text(d, b, currency), "good", size=9.5)
    per_load = per_load_sentences(d, f)
    if per_load:
        page.heading("One answer per load")
        page.bullets(per_load, size=9)
    page.paragraph(f"Ranking: {RANKING_RULE}.", size=9)
    return True


def _resilience(d: SizingData, f: Findings, page: Page) -> bool:
    resilience = resilience_sentence(f)
    if resilience is not None:
        page.paragraph(resilience, size=9)
    return resilience is not None


def _whatifs(d: SizingData, f: Findings, page: Page) -> bool:
    if f.whatifs is None or not len(f.whatifs):
        return False
    page.heading("What if load grows or a server dies")
    page.table(whatif_frame(f, d.judging.judged), size=8)
    page.paragraph(headroom_sentence(f), size=9)
    return True


def _routing(d: SizingData, f: Findings, page: Page) -> bool:
    if not f.routing:
        return False
    page.heading("Balanced routing or replica groups?")
    page.paragraph(f.routing, size=9)
    return True


def _assumptions(d: SizingData, f: Findings, page: Page) -> bool:
    assumed = assumption_sentences(d, f)
    if not assumed:
        return False
    page.heading("Assumptions behind the answer")
    for sentence in assumed[:-len(f.assumptions) or None]:
        page.paragraph(sentence, size=9)
    if f.assumptions:
        page.bullets(assumed[-len(f.assumptions):], size=9)
    return True


def _sureness(d: SizingData, f: Findings, page: Page) -> bool:
    sure = sureness_sentences(d, f)
    if not sure:
        return False
    page.heading("How sure we are")
    for sentence in sure:
        page.paragraph(sentence, size=9)
    return True


def _alternatives(d: SizingData, f: Findings, page: Page) -> bool:
    runner = runner_up_sentences(d, f)
    if not runner:
        return False
    page.heading("The alternatives")
    page.bullets(runner, size=9)
    return True


def _warnings(d: SizingData, f: Findings, page: Page) -> bool:
    if f.warnings:
        page.heading("Warnings")
        page.callout("\n".join(f"- {w}" for w in f.warnings), "warn", size=9)
    elif f.best is not None:
        page.heading("Warnings")
        page.paragraph("None: the recommendation meets the SLO with its whole interval, is not near saturation and "
                       "returned no partial results.", size=9)
    return bool(f.warnings) or f.best is not None


#: Page 1's blocks in order; each adds its part to a page and says whether it added anything.
_BLOCKS: dict[str, Callable[[SizingData, Findings, Page], bool]] = {
    "answer": _answer, "resilience": _resilience, "whatifs": _whatifs, "routing": _routing,
    "assumptions": _assumptions, "sureness": _sureness, "alternatives": _alternatives, "warnings": _warnings}


def _summary(d: SizingData, f: Findings, scale: float, skip: tuple[str, ...] = ()) -> Page:
    title, sub = _title(d)
    page = Page(title, sub, scale=scale)
    for name, block in _BLOCKS.items():
        if name not in skip:
            block(d, f, page)
    if d.prices is not None:
        page.footer(f"Prices: {d.prices.describe()}. Instances need >= cores vCPUs and >= heap x "
                    f"{d.options.memory_per_heap:g} memory.")
    return page
