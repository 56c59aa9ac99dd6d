"""The assumptions that drive a sizing answer, named on page 1 with how far they move it.

A sweep varies what the user can buy; every other figure in the scenario (the long-lived heap on each
server, the cost per document, the allocation rate) is an assumption, and the recommendation is only
as good as the ones it leans on. Two kinds of evidence:

* **Read from the runs** (nothing simulated): G1 starts concurrent cycles when the old generation
  passes ``ihop`` of the heap; a long-lived heap past it keeps G1 cycling, with its young generation
  at its minimum, and the share of queries that met a pause shows what that costs (:func:`ihop_sentence`).
* **Varied within a plausible range** (:data:`~workbench.defaults.ASSUMPTION_RANGES`): the recommendation
  is run at the unkind end of each range, and the configuration just cheaper than it at the kind end,
  each with every server up and in its failure case (``slo.survive``). An assumption *drives the answer*
  when the recommendation breaks at one end, or the cheaper configuration meets the SLO at the other.

The runs are the studies' (:func:`workbench.studies.sizing.run_sizing_studies`), under
``SWEEP/whatif/POINT/assume-KEY-xF[-CASE]``; the report reads them through the same search
(:func:`assumption_checks` with a ``fetch`` that reads), so it simulates nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench import defaults as D
from workbench.io.summary import GC_DELAYED_RATE, P99, P99_HIGH
from workbench.report.data import SizingData, binary_size
from workbench.report.survival import Loss, failure_cases, read_after_loss
from workbench.report.whatif import Fetch, WhatIf, point_of, read_whatif, whatif_row
from workbench.scenario import TABLE_KEYS, Scenario

__all__ = ["ASSUMPTIONS", "Assumption", "AssumptionCheck", "assumption_checks", "checks_lead", "ihop_sentence"]


@dataclass(frozen=True)
class Assumption:
    """One scenario figure the answer may lean on: its key, how page 1 names it, how its value reads,
    and when it applies (a GC figure only matters under a collector that uses it)."""

    key: str
    label: str
    applies: Callable[[Scenario], bool]
    text: Callable[[float], str]

    def value(self, sc: Scenario) -> float | None:
        """The scenario's value of the key (``None`` when unset)."""
        node: Any = sc
        for part in self.key.split("."):
            node = getattr(node, part, None)
        return None if node is None else float(node)

    def _views(self, sc: Scenario) -> list[tuple[str, Scenario]]:
        """Where the key lives: the scenario itself, or for a tenant's table key (``service.*``) each table it
        applies to, by the override prefix that reaches it (``tables.K.``)."""
        if not sc.tables or self.key.split(".")[0] not in TABLE_KEYS:
            return [("", sc)]
        return [(f"tables.{k}.", t) for k, t in enumerate(sc.tables) if self.applies(t)]

    def holds_for(self, sc: Scenario) -> bool:
        """Whether the assumption applies to ``sc`` (to any of a tenant's tables, for a table key)."""
        return any(self.applies(view) and self.value(view) for _, view in self._views(sc))

    def today(self, sc: Scenario) -> float | None:
        """The value the report names: the scenario's, or the first table's it applies to."""
        return next((self.value(view) for _, view in self._views(sc) if self.value(view)), None)

    def change(self, sc: Scenario, factor: float) -> dict[str, float]:
        """The overrides that put the assumption at ``factor`` times its value: on every table of a tenant
        it applies to (each at ``factor`` times its own), else on the key itself."""
        out = {}
        for prefix, view in self._views(sc):
            value = self.value(view)
            if value:
                out[prefix + self.key] = value * factor
        return out


def _g1_or_zgc(sc: Scenario) -> bool:
    return sc.cluster.gc.collector in ("g1", "zgc")


#: Every assumption the report varies, by key, in the order page 1 names them.
ASSUMPTIONS: dict[str, Assumption] = {
    "cluster.gc.live_heap": Assumption("cluster.gc.live_heap", "long-lived heap per server", _g1_or_zgc,
                                       binary_size),
    "service.ns_per_doc": Assumption("service.ns_per_doc", "cost per document scanned",
                                     lambda sc: sc.service.model == "cost", lambda v: f"{v:,.0f} ns"),
    "cluster.gc.allocation_rate": Assumption("cluster.gc.allocation_rate", "allocation rate per server",
                                             lambda sc: _g1_or_zgc(sc) and sc.cluster.gc.allocation_rate is not None,
                                             lambda v: f"{binary_size(v)}/s"),
}


@dataclass(frozen=True)
class AssumptionCheck:
    """One assumption at both ends of its range: the recommendation at the unkind end (``rows_best``,
    its runs with every server up and in its failure cases) and the next cheaper configuration at the
    kind end (``rows_cheaper``; empty when there is none)."""

    assumption: Assumption
    today: float
    low: float
    high: float
    rows_best: tuple[Mapping[str, Any], ...]
    cheaper: pd.Series | None = None
    rows_cheaper: tuple[Mapping[str, Any], ...] = ()

    @property
    def best_holds(self) -> bool:
        return all(bool(r["meets_slo"]) for r in self.rows_best)

    @property
    def cheaper_meets(self) -> bool:
        return bool(self.rows_cheaper) and all(bool(r["meets_slo"]) for r in self.rows_cheaper)

    @property
    def drives(self) -> bool:
        """Whether the answer moves within the range."""
        return not self.best_holds or self.cheaper_meets

    def sentence(self) -> str:
        """One line: the assumption, its range, whether it moves the answer and why."""
        a, text = self.assumption, self.assumption.text
        tried = f"tried {text(self.low)}-{text(self.high)}"
        head = f"{a.label[0].upper()}{a.label[1:]} ({a.key}: {text(self.today)}, {tried})"
        worst = max(self.rows_best, key=_bound)
        at_high = (f"at {text(self.high)} the recommendation "
                   + (f"still meets the SLO (p99 up to {_bound(worst):.0f} ms)" if self.best_holds
                      else f"breaks it ({_case(worst)})"))
        if self.cheaper is None:
            at_low = ""
        elif self.cheaper_meets:
            cases = ", its failure case included" if len(self.rows_cheaper) > 1 else ""
            at_low = f"; at {text(self.low)} the cheaper shape meets it{cases}"
        else:
            failing = max(self.rows_cheaper, key=_bound)
            at_low = f"; at {text(self.low)} the cheaper shape still fails ({_case(failing)})"
        return f"{head}: {'MOVES the answer' if self.drives else 'does not move the answer'}: {at_high}{at_low}."


def _case(row: Mapping[str, Any]) -> str:
    """``one server down: p99 to 223 ms`` (the upper end the SLO is judged on)."""
    bound = _bound(row)
    return str(row["label"]) if math.isinf(bound) else f"{row['label']}: p99 to {bound:.0f} ms"


def _bound(row: Mapping[str, Any]) -> float:
    high = row.get(P99_HIGH, math.nan)
    value = float(high) if high is not None and high == high else float(row.get(P99, math.nan))
    return value if value == value else math.inf


def _tag(key: str, factor: float) -> str:
    return f"assume-{key.rsplit('.', 1)[-1].replace('_', '-')}-x{factor:g}"


def _runs(d: SizingData, row: pd.Series, key: str, factor: float, fetch: Fetch,
          loss: Loss) -> tuple[Mapping[str, Any], ...]:
    """Configuration ``row`` with ``key`` at ``factor`` times its value: every server up, then each
    failure case ``slo.survive`` asks for (stopping at the first that breaks the SLO)."""
    sc, scratch, seed = point_of(d, row)
    value = ASSUMPTIONS[key].today(sc)
    assert value is not None
    change = ASSUMPTIONS[key].change(sc, factor)
    name = _tag(key, factor)
    every = f" (each table's x{factor:g})" if len(change) > 1 else ""
    cases = [WhatIf(name, f"with every server up at {ASSUMPTIONS[key].text(value * factor)}{every}", change)]
    failures = failure_cases(sc, scratch, loss)
    cases += [WhatIf(f"{name}-{w.name}", w.label, {**w.overrides, **change}, note=w.note, rebalance_to=w.rebalance_to)
              for w in failures.cases]
    rows: list[Mapping[str, Any]] = []
    for w in cases:
        rows.append(whatif_row(fetch(sc, w, scratch / w.name, seed), d.judging))
        if not rows[-1]["meets_slo"]:
            break
    if failures.cannot is not None and rows[-1]["meets_slo"]:
        rows.append({"label": failures.cannot, "meets_slo": False, P99: math.nan})
    return tuple(rows)


def assumption_checks(d: SizingData, best: pd.Series, cheaper: pd.Series | None, fetch: Fetch = read_whatif,
                      loss: Loss = read_after_loss) -> list[AssumptionCheck]:
    """Each assumption that applies to ``best`` at both ends of its range (none without an SLO)."""
    if not d.judging.judged:
        return []
    sc = d.scenarios[str(best["point"])]
    out = []
    for key, assumption in ASSUMPTIONS.items():
        today = assumption.today(sc)
        if not assumption.holds_for(sc) or not today:
            continue
        low, high = D.ASSUMPTION_RANGES[key]
        other = cheaper if cheaper is not None and assumption.today(d.scenarios[str(cheaper["point"])]) else None
        out.append(AssumptionCheck(assumption, today, today * low, today * high, _runs(d, best, key, high, fetch, loss),
                                   other, _runs(d, other, key, low, fetch, loss) if other is not None else ()))
    return out


def checks_lead(checks: list[AssumptionCheck], best: pd.Series, currency: str,
                cost: Callable[[pd.Series], float], survive: str = "server") -> str | None:
    """The sentence before the checks: what was run at which end, and which the cheaper shape is."""
    if not checks:
        return None
    cheaper = next((c.cheaper for c in checks if c.cheaper is not None), None)
    text = "Each tried at both ends of a plausible range: the recommendation at the unkind end"
    if cheaper is not None:
        saving = cost(best) - cost(cheaper)
        money = f", {saving:,.0f} {currency}/month less" if currency else ""
        text += f", the next cheaper shape ({cheaper['shape']}{money}) at the kind end"
    failure = "" if survive == "none" else " and in its failure case"
    return text + f", each with every server up{failure}."


def ihop_sentence(d: SizingData, row: pd.Series, table_bytes: float | None) -> str | None:
    """The long-lived heap against G1's IHOP on ``row``'s heap, with the share of queries that met a
    pause (``None`` unless the collector is G1 and the long-lived heap is past the IHOP)."""
    sc = d.scenarios[str(row["point"])]
    gc = sc.cluster.gc
    if gc.collector != "g1":
        return None
    heap = float(sc.cluster.server.heap)
    measured = row.get("heap.live_max")  # the long-lived heap and the upsert map the run held
    live = float(measured) if measured is not None and measured == measured and measured > 0 else float(gc.live_heap)
    ihop = gc.ihop * heap
    if live < ihop:
        return None
    table = f" (the table's column values are {binary_size(table_bytes)})" if table_bytes else ""
    share = row.get(GC_DELAYED_RATE)
    met = f": {float(share):.0%} of queries met a GC pause" if share is not None and share == share else ""
    upsert = " with the upsert map" if live > float(gc.live_heap) else ""
    return (f"The scenario assumes {binary_size(live)} of long-lived heap per server (cluster.gc.live_heap"
            f"{upsert}){table}. "
            f"On the recommended {binary_size(heap)} heap that is past G1's IHOP ({gc.ihop:.0%}, {binary_size(ihop)}), "
            f"so G1 runs concurrent cycles back to back and keeps its young generation at its minimum{met}.")
