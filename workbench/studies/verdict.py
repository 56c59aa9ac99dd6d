"""A verdict on today's cluster: UNDER, OVER or RIGHT-sized for today's peak and for stated growth.

An operator with a running cluster first asks whether it is over- or under-provisioned. Given a calibrated
directory (``workbench calibrate``: the cluster's own shape, costs and query log), :func:`verdict` answers
for two loads, today's peak and the peak grown by ``growth`` (default +50% in 12 months), each with:

* **the verdict**, by the sizing report's own rule (:func:`~workbench.report.data.recommend`: the cheapest
  configuration, by the whole cluster's monthly bill, whose p99 interval is under the SLO with every server
  up *and* in the failure case of ``slo.survive``): UNDER when today's shape does not meet it, OVER when a
  cheaper shape does, RIGHT when today's shape is that cheapest one;
* **the smallest change that fixes it**: the shapes tried are today's layout (its table config, replica
  groups and heap) with neighbouring server counts, walked from today's count (down while a shape meets
  the SLO, up until one does; in steps of the replica groups) at today's cores and at the instance type a
  size up (UNDER) or down (OVER) (twice or half the cores). The walk assumes fewer servers never lower
  p99; a count Pinot cannot place the table on counts as not meeting;
* **the data Pinot's rebalance moves** for it (:func:`~workbench.studies.scale_out.rebalance_layout`, with the
  table's ``minimizeDataMovement``), or, for a new instance type, every replica loaded onto its replacement;
* **the money**: the monthly bill of today's cluster and of the change (:mod:`workbench.report.cluster_cost`,
  the default price table), and the difference;
* **why**: which SLO check binds (``p99_ms`` or ``max_heap``), at which step of the day (the profile's peak,
  where the verdict binds, :mod:`workbench.studies.day`), under which failure case.

The load of a step is the day study's (:func:`workbench.studies.day.load_at`): Poisson ``qps x factor``, or
the calibrated log's queries at steady times of ``factor x`` its mean rate; every run uses one seed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.errors import InputError
from workbench.io import write_json_atomic
from workbench.io.summary import P99, P99_HIGH
from workbench.report.cluster_cost import cluster_parts, total
from workbench.report.data import layout_of, recommend, size_text, table_bytes
from workbench.report.day_record import clock
from workbench.report.judging import Judging
from workbench.report.options import ReportOptions
from workbench.report.prices import PriceTable, load_prices
from workbench.report.survival import MODE_TEXT, failure_cases
from workbench.report.whatif import WhatIf, whatif_row
from workbench.scenario import Scenario
from workbench.sim.layout import build_layout
from workbench.sim.run import check_run, workload_dir
from workbench.studies.day import load_at
from workbench.studies.scale_out import rebalance_layout, segment_sizes
from workbench.studies.survival import plan_after_loss, run_failure_case
from workbench.studies.whatif import run_whatif

__all__ = ["VERDICT_FILE", "Answer", "Candidate", "Verdict", "judge"]

#: The verdict's record under the output directory (the report's first section reads it).
VERDICT_FILE = "verdict.json"
#: Servers tried above today's count at most: max(2 x today's, today's + this).
_SCAN_UP = 8


@dataclass(frozen=True)
class Candidate:
    """One shape at one load: ``servers`` x ``cores``, its instance and monthly bill, and whether it meets
    the SLO with every server up (``meets``) and in its failure cases (``survives``); ``why`` says what
    broke (empty when it meets and survives), ``case`` the failure case that broke it."""

    servers: int
    cores: int
    instance: str | None
    monthly: float
    meets: bool
    survives: bool
    p99_ms: float = math.nan
    p99_high_ms: float = math.nan
    utilisation: float = math.nan
    why: str = ""
    check: str = ""
    case: str = ""

    @property
    def ok(self) -> bool:
        return self.meets and self.survives

    @property
    def label(self) -> str:
        return f"{self.servers} x {self.instance or f'{self.cores}-core servers'}"


@dataclass(frozen=True)
class Answer:
    """The verdict at one load: ``UNDER``, ``OVER`` or ``RIGHT``, today's shape, the change (``None``: none
    needed, or none found in the scan), what Pinot moves for it and the money."""

    label: str
    factor: float
    verdict: str
    today: Candidate
    change: Candidate | None
    segments_moved: int = 0
    bytes_moved: int = 0
    moved_how: str = ""
    monthly_delta: float = math.nan
    why: str = ""
    tried: tuple[Candidate, ...] = field(default=())

    def lines(self, currency: str) -> list[str]:
        """One fact per line."""
        out = [f"{self.label}: {self.verdict}"]
        t = self.today
        out.append(f"{self.label}: today {t.label}: p99 {t.p99_ms:.1f} ms [upper {t.p99_high_ms:.1f}], "
                   f"utilisation {t.utilisation:.0%}, {_money(t.monthly, currency)}/month")
        if self.change is not None:
            c = self.change
            out.append(f"{self.label}: change to {c.label}: {_delta(c.servers - t.servers, 'server')}"
                       f"{_instance_change(t, c)}; p99 {c.p99_ms:.1f} ms [upper {c.p99_high_ms:.1f}]")
            out.append(f"{self.label}: Pinot moves {self.segments_moved} segment replicas "
                       f"({size_text(self.bytes_moved)}B) {self.moved_how}")
            word = "saves" if self.monthly_delta < 0 else "costs"
            out.append(f"{self.label}: the change {word} {_money(abs(self.monthly_delta), currency)}/month")
        elif self.verdict == "UNDER":
            out.append(f"{self.label}: no shape in the scan meets the SLO (up to {max(c.servers for c in self.tried)} "
                       "servers): change the layout or the SLO")
        out.append(f"{self.label}: why: {self.why}")
        return out


@dataclass(frozen=True)
class Verdict:
    """Both answers, the SLO and where the load comes from; :meth:`to_json` is ``verdict.json``."""

    source: str
    slo_p99_ms: float | None
    survive: str
    growth: float
    peak: str
    currency: str
    answers: tuple[Answer, ...]

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "slo_p99_ms": self.slo_p99_ms, "survive": self.survive,
                "growth": self.growth, "peak": self.peak, "currency": self.currency,
                "answers": [_answer_json(a) for a in self.answers]}

    def lines(self) -> list[str]:
        head = [f"verdict on {self.source}: SLO p99 {self.slo_p99_ms:g} ms, surviving {MODE_TEXT[self.survive]}",
                f"load: {self.peak}"]
        return head + [line for a in self.answers for line in a.lines(self.currency)]


def _answer_json(a: Answer) -> dict[str, Any]:
    data = asdict(a)
    data["tried"] = [asdict(c) for c in a.tried]
    clean: dict[str, Any] = _finite(data)
    return clean


def _finite(value: Any) -> Any:
    """NaN as ``null`` throughout (JSON has no NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, Mapping):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _money(value: float, currency: str) -> str:
    return "unknown" if value != value else f"{value:,.0f} {currency}"


def _instance_change(today: Candidate, change: Candidate) -> str:
    """``, instance m6i.xlarge -> m6i.2xlarge`` or ``, cores 1 -> 2 on the same instance type``."""
    if change.cores == today.cores:
        return ""
    if change.instance == today.instance:
        return f", cores {today.cores} -> {change.cores} on the same instance type ({change.instance})"
    return f", instance {today.instance} -> {change.instance} ({today.cores} -> {change.cores} cores)"


def _delta(n: int, noun: str) -> str:
    """``add 2 servers``, ``remove 1 server``, ``same servers``."""
    if n == 0:
        return f"same {noun}s"
    return f"{'add' if n > 0 else 'remove'} {abs(n)} {noun}{'s' if abs(n) != 1 else ''}"


@dataclass
class _Search:
    """One load's shapes, each run once (with its failure cases when it meets the SLO with every server up)."""

    base: Scenario
    out: Path
    seed: int
    prices: PriceTable
    memory_per_heap: float
    data_bytes: float | None
    tried: dict[tuple[int, int], Candidate] = field(default_factory=dict)

    def shape(self, servers: int, cores: int) -> Scenario:
        return self.base.with_overrides({"cluster.servers": servers, "cluster.server.cores": cores})

    def bill(self, sc: Scenario) -> tuple[str | None, float]:
        inst = self.prices.cheapest_fit(sc.cluster.server.cores, sc.cluster.server.heap, self.memory_per_heap)
        parts = cluster_parts(self.prices, servers=(sc.cluster.servers, inst), brokers=sc.cluster.brokers,
                              table_bytes=self.data_bytes, replication=sc.table.replication)
        return (inst.name if inst is not None else None), total(parts)

    def evaluate(self, servers: int, cores: int) -> Candidate:
        key = (servers, cores)
        if key not in self.tried:
            self.tried[key] = self._run(servers, cores)
        return self.tried[key]

    def _run(self, servers: int, cores: int) -> Candidate:
        try:
            sc = self.shape(servers, cores)
            check_run(sc)
        except InputError as exc:
            return Candidate(servers, cores, None, math.nan, False, False, why=f"Pinot cannot place it: {exc}",
                             check="placement")
        instance, monthly = self.bill(sc)
        judging = Judging.of(sc)
        slo = judging.p99_ms  # None for a tenant: its tables' own SLOs are in the run's verdict
        scratch = self.out / f"{servers}x{cores}"
        up = run_whatif(sc, WhatIf("up", "every server up", {}), scratch / "up", self.seed)
        row = whatif_row(up, judging)
        figures: dict[str, Any] = {"p99_ms": float(row[P99]), "p99_high_ms": float(up.summary.latency_ms.p99.bound()),
                                   "utilisation": float(up.summary.utilisation.mean)}
        if not row["meets_slo"]:
            check, why = _broken(up.summary, slo)
            return Candidate(servers, cores, instance, monthly, False, False, **figures, why=why, check=check,
                             case="every server up")
        cases = failure_cases(sc, scratch, plan_after_loss)
        if cases.cannot is not None:
            return Candidate(servers, cores, instance, monthly, True, False, **figures, why=cases.cannot,
                             check="survive", case=sc.slo.survive)
        for what in cases.cases:
            run = run_failure_case(sc, what, scratch / what.name, self.seed)
            if not whatif_row(run, judging)["meets_slo"]:
                check, why = _broken(run.summary, slo)
                return Candidate(servers, cores, instance, monthly, True, False, **figures, why=why, check=check,
                                 case=what.label)
        return Candidate(servers, cores, instance, monthly, True, True, **figures)

    def walk(self, start: int, cores: int, step: int) -> None:
        """From ``start`` servers: down while the shapes meet the SLO and survive, else up until one does."""
        if self.evaluate(start, cores).ok:
            n = start - step
            while n >= step and self.evaluate(n, cores).ok:
                n -= step
            return
        n, top = start + step, max(2 * start, start + _SCAN_UP)
        while n <= top and not self.evaluate(n, cores).ok:
            n += step


def _broken(summary: Any, slo: float | None) -> tuple[str, str]:
    """Which SLO check a run broke, and how (``p99_ms`` first: the latency the operator sized for)."""
    checks = summary.slo.checks
    if slo is not None and summary.latency_ms.p99.bound() > slo:
        return "p99_ms", f"p99 upper {summary.latency_ms.p99.bound():.1f} ms over the SLO's {slo:g} ms"
    for key, check in checks.items():
        if not check.met:
            return key, f"{key}: {check.why or f'{check.bound:g} over {check.limit:g}'}"
    return "slo", summary.slo.why or "the run's SLO verdict"


def _frame(candidates: Sequence[Candidate]) -> pd.DataFrame:
    """The shapes as the sizing report's table (:func:`~workbench.report.data.recommend` reads it)."""
    rows = [{"point": f"{c.servers}x{c.cores}", "servers": c.servers, "cores": c.cores,
             "cost": c.servers * c.cores, "cluster_cost": c.monthly, P99: c.p99_ms, P99_HIGH: c.p99_high_ms,
             "meets_slo": c.meets, "robust": c.meets, "survives": c.survives, "at_load": True} for c in candidates]
    return pd.DataFrame(rows)


def _replicas(sc: Scenario) -> tuple[int, int]:
    """Segment replicas and their bytes: what replacing every server (a new instance type) loads."""
    directory = workload_dir(sc, None)
    layout = build_layout(sc, directory)
    sizes = segment_sizes(layout, directory)
    return (sum(len(layout.ideal_state[n]) for n in layout.segments),
            sum(sizes[n] * len(layout.ideal_state[n]) for n in layout.segments))


def _moves(sc: Scenario, today: Candidate, change: Candidate) -> tuple[int, int, str]:
    """Segment replicas and bytes Pinot loads for the change, and how."""
    if change.instance != today.instance:
        count, moved = _replicas(sc.with_overrides({"cluster.servers": change.servers}))
        return count, moved, "onto the new instances (every replica reloads on its replacement, server by server)"
    if change.servers == today.servers:
        return 0, 0, ""
    plan, _ = rebalance_layout(sc, change.servers)
    how = "in Pinot's rebalance" + (" with minimizeDataMovement" if plan.minimize_data_movement else "")
    return plan.segments_moved, plan.bytes_moved, how


def _why(today: Candidate, chosen: Candidate, tried: Sequence[Candidate], verdict: str, when: str) -> str:
    """Which SLO binds, where in the day, under which failure case: today's breach (UNDER), else what
    breaks the next smaller shape than the one chosen."""
    if verdict == "UNDER":
        return f"{today.check} binds at {when}, {today.case}: {today.why}"
    cost = chosen.servers * chosen.cores
    smaller = [c for c in tried if not c.ok and c.servers * c.cores < cost]
    if not smaller:
        least = min(tried, key=lambda c: (c.servers * c.cores, c.servers))
        return (f"every shape tried meets it at {when}, down to {least.label} (p99 upper {least.p99_high_ms:.1f} ms); "
                "no smaller shape of this layout to try")
    nearest = max(smaller, key=lambda c: (c.servers * c.cores, c.servers))
    return f"the next smaller shape, {nearest.label}, breaks {nearest.check} at {when}, {nearest.case}: {nearest.why}"


def _answer(label: str, factor: float, search: _Search, today_servers: int, cores: int, when: str) -> Answer:
    step = max(1, layout_of(search.base)[1])
    search.walk(today_servers, cores, step)
    today = search.evaluate(today_servers, cores)
    other = cores * 2 if not today.ok else cores // 2
    if other >= 1:
        search.walk(today_servers, other, step)
    tried = tuple(search.tried.values())
    best_row, _ = recommend(_frame(tried))
    best = None if best_row is None else search.tried[(int(best_row["servers"]), int(best_row["cores"]))]
    if not today.ok:
        verdict = "UNDER"
    elif best is None or best == today or not best.monthly < today.monthly:
        verdict, best = "RIGHT", None
    else:
        verdict = "OVER"
    why = _why(today, best or today, tried, verdict, when)
    if best is None:
        return Answer(label, factor, verdict, today, None, why=why, tried=tried)
    segments, moved, how = _moves(search.base, today, best)
    return Answer(label, factor, verdict, today, best, segments, moved, how, best.monthly - today.monthly, why,
                  tried)


def _peak(sc: Scenario) -> tuple[float, str]:
    """The profile's peak factor and where it is in the day (factor 1 without a profile)."""
    profile = sc.workload.profile
    if profile is None or profile.hourly is None:
        return 1.0, "no day profile: the rate as written" if sc.workload.arrival.process != "replay" else \
            "no day profile: the log's mean rate"
    i = profile.peak()
    start = i * profile.step_s / 3600
    span = f"{clock(start)}-{clock(start + profile.step_s / 3600)}"
    return float(profile.hourly[i]), f"the day's peak, {span} (x{profile.hourly[i]:g} the rate)"


def judge(sc: Scenario, out: str | Path, *, growth: float = 0.5, source: str = "",
          prices: PriceTable | None = None, memory_per_heap: float | None = None) -> Verdict:
    """The verdict on ``sc`` (today's cluster) for today's peak and for the peak grown by ``growth``: the runs
    under ``out/runs/load-x<factor>/<servers>x<cores>/`` (reused when there), the answer in ``out/verdict.json``.

    Raises
    ------
    InputError
        Without a p99 SLO (``slo.p99_ms``), or with a negative ``growth``.
    """
    if sc.slo.p99_ms is None:
        raise InputError("slo.p99_ms", "a verdict needs the p99 target: give --p99-ms (or slo.p99_ms in the "
                                       "scenario)")
    if not growth >= 0:
        raise InputError("growth", f"must be 0 or more (0.5: +50% in 12 months), got {growth!r}")
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    table = prices or load_prices(None)
    mph = memory_per_heap if memory_per_heap is not None else ReportOptions().memory_per_heap
    seed = sc.simulation.seed
    factor, where = _peak(sc)
    answers = []
    for label, f in (("today's peak", factor), (f"+{growth:.0%} growth", factor * (1 + growth))):
        runs = root / "runs" / f"load-x{f:g}"
        base = load_at(sc, f, runs, seed)
        search = _Search(base, runs, seed, table, mph, table_bytes(sc))
        answers.append(_answer(label, f, search, sc.cluster.servers, sc.cluster.server.cores,
                               f"{where}{'' if f == factor else f' +{growth:.0%}'}"))
    result = Verdict(source or sc.name, sc.slo.p99_ms, sc.slo.survive, growth, where, table.currency,
                     tuple(answers))
    write_json_atomic(root / VERDICT_FILE, result.to_json())
    return result
