"""``workbench size``: the sizing question answered by search, written as a sweep directory plus ``sizing.json``.

A shape is *evaluated* by simulating it through the sweep's runner (:func:`workbench.sweep.make_runner`:
the local pool, or Spark tasks with a master), as a sweep point: ``OUT/point-NNN`` (``NNN`` its position
in the space, the same in both modes), on the scenario's seed (common random numbers: every shape sees
the same arrivals and random streams, so their differences are the shape's).

**One verdict rule, sequential replications.** A shape is run with ``1`` replication first, then more
(:func:`replication_stages`, up to the scenario's ``simulation.replications``) only while its p99
interval straddles the SLO: it *meets* as soon as the report's rule says so on the run it has
(:func:`workbench.report.judging.slo_verdicts`: the interval's upper end at or under the SLO, the run's
own SLO checks met, and the model interval when calibrated), *fails* as soon as the interval's lower end
is above the SLO or the run breaks its other checks, and at the last stage the report's rule decides.
Replication ``r`` is the same in every stage (child ``r`` of the seed), and the point directory keeps the
last stage's run, so the report, reading it, gives the same verdict. Both modes apply this rule to every
shape they evaluate, and both judge failure cases with the report's own
(:func:`workbench.report.survival.survival`, run by the studies' hooks), and pick the answer with the
report's :func:`~workbench.report.data.recommend`: the search cannot disagree with the grid on a shape
both evaluated.

**The calibration's parameter uncertainty.** When the scenario is calibrated (the space carries the fit's
:class:`~workbench.calibrate.uncertainty.ParameterDistribution`), a shape that meets the SLO and survives is
run ``draws`` times more on draws of the calibrated parameters (:func:`workbench.studies.uncertainty.draw_summaries`:
the same draws for every shape, each on the shape's seed and replications, so the spread is the parameters').
Its point's summary then carries the model's interval (``latency_ms.p99.model_high``,
:func:`~workbench.analysis.stats.with_model_intervals`), and whether it still meets the SLO is the report's
``robust`` as the report computes it on reading the point (:func:`~workbench.report.judging.slo_verdicts`): the
report then recommends it or not by the same column. The search runs the draws only for the shape that is the
best candidate (a gate like the failure case, :data:`~workbench.sizing.search.Robust`); the exhaustive mode
for every shape that meets the SLO.

Then, unless ``studies=False``, the report's studies run (:func:`workbench.studies.sizing.run_sizing_studies`,
as ``workbench sweep`` does), so ``workbench report OUT`` has every run it reads; their failure-case runs
for shapes the search did not need are counted apart (``studies`` in ``sizing.json``).
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.calibrate.uncertainty import CALIBRATION_FILE
from workbench.errors import InputError
from workbench.io import summary as S
from workbench.io import write_json_atomic
from workbench.io.run_dir import RunDir
from workbench.io.summary import SLOVerdict
from workbench.report.data import SIZING_FILE, SizingData, load_sizing_data, meeting, recommend
from workbench.report.judging import Judging, slo_verdicts
from workbench.report.survival import Survival, survival, with_survival
from workbench.report.whatif import STUDIES_FILE, WHATIF_DIR, WhatIf, WhatIfRun, whatif_row
from workbench.scenario import Scenario, load_scenario
from workbench.scenario.day_load import load_record
from workbench.sim.run import check_run
from workbench.sizing.search import SearchResult, SearchState, Verdict, search
from workbench.sizing.search import exhaustive as every_shape
from workbench.sizing.space import SizingSpace, parse_space
from workbench.studies.day import hours_ran, kept_hour
from workbench.sweep import make_runner, make_tasks
from workbench.sweep.combine import write_combined
from workbench.sweep.resume import MANIFEST_FILE, fingerprint, prepare_output, resolved_base
from workbench.sweep.runner import Progress, Runner, default_parallel
from workbench.sweep.spec import Point, SweepSpec, point_id
from workbench.sweep.task import PointOutcome

__all__ = ["SIZING_FILE", "replication_stages", "size"]


def replication_stages(replications: int) -> list[int]:
    """The replications a shape is run with, in turn, until its interval is clear of the SLO: 1, then x3
    while that stays under half the scenario's count, then the scenario's count.

    >>> replication_stages(1), replication_stages(3), replication_stages(10), replication_stages(30)
    ([1], [1, 3], [1, 3, 10], [1, 3, 9, 30])
    """
    stages, n = [1], 3
    while n * 2 <= replications:
        stages.append(n)
        n *= 3
    return stages if stages[-1] == replications else [*stages, replications]


class _Quiet:
    """A runner's progress sink: the sizing bar counts shapes, not attempts."""

    def update(self, n: float | None = 1) -> bool | None:
        return None


@dataclass
class _Simulations:
    """Shapes simulated through one runner, kept open across batches; their final points and outcomes."""

    space: SizingSpace
    out_dir: Path
    runner: Runner
    base_path: Path | None
    stages: list[int]
    retries: int = 1
    points: dict[int, Point] = field(default_factory=dict)
    outcomes: dict[int, PointOutcome] = field(default_factory=dict)
    invalid: dict[int, str] = field(default_factory=dict)
    survivals: dict[str, Survival] = field(default_factory=dict)
    #: What the runner reports finished first-stage runs to (the exhaustive mode's bar counts shapes by them).
    first_stage: Progress = field(default_factory=_Quiet)
    runs: int = 0
    failure_runs: int = 0
    draw_runs: int = 0
    queries: int = 0
    _data: SizingData | None = None

    @property
    def judging(self) -> Judging:
        """What the shapes are judged by: the report's judging SLO of the sized scenario."""
        return Judging.of(self.space.base)

    def _point(self, i: int, replications: int) -> Point | None:
        ov = dict(self.space.overrides[i])
        if replications != self.space.base.simulation.replications:
            ov["simulation.replications"] = replications
        try:
            sc = self.space.base.with_overrides(ov)
            check_run(sc)
        except InputError as exc:
            self.invalid[i] = str(exc)
            return None
        return Point(i, point_id(i), ov, sc.simulation.seed, sc)

    def _run(self, points: list[Point], progress: Progress) -> dict[int, PointOutcome]:
        spec = SweepSpec("size", self.space.base, self.base_path, tuple(points))
        todo = make_tasks(spec, self.out_dir)
        final: dict[str, PointOutcome] = {}
        for attempt in range(1, self.retries + 2):
            for o in self.runner.run(todo, attempt, progress if attempt == 1 else _Quiet()):
                final[o.point_id] = o
                # a profiled scenario's point ran each of the day's worst hours (and kept the worst)
                ran = hours_ran(self.out_dir / o.point_id) if o.summary is not None else None
                self.runs += ran[0] if ran is not None else 1
                self.queries += ran[1] if ran is not None else o.summary.summary.queries if o.summary else 0
            todo = [t for t in todo if not final[t.point_id].ok]
            if not todo:
                break
        return {p.index: final[p.point_id] for p in points}

    def evaluate(self, ids: Sequence[int]) -> dict[int, Verdict]:
        """Simulate ``ids`` stage by stage; each stops at the first stage whose interval is clear of the SLO."""
        verdicts: dict[int, Verdict] = {}
        pending = list(ids)
        self._data = None
        for k, n in enumerate(self.stages):
            points = [p for i in pending if (p := self._point(i, n)) is not None]
            verdicts.update({i: Verdict(False, float("inf")) for i in pending if i in self.invalid})
            outcomes = self._run(points, self.first_stage if k == 0 else _Quiet()) if points else {}
            self.points.update({p.index: p for p in points})
            self.outcomes.update(outcomes)
            decided = _stage_verdicts(points, outcomes, self.judging, last=k == len(self.stages) - 1)
            verdicts.update(decided)
            pending = [p.index for p in points if p.index not in decided]
            if not pending:
                break
        return verdicts

    def data(self) -> SizingData:
        """The evaluated shapes as the report reads them (written to disk first; reread after new points)."""
        if self._data is None:
            self._data = _write_sweep(self)
        return self._data

    def survives(self, i: int) -> bool | None:
        """Shape ``i`` in its failure case, by the report's rule (:func:`workbench.report.survival.survival`);
        ``None`` when it cannot survive for a reason of its layout (one replica, no replica group), which
        every shape of its line shares."""
        from workbench.studies.survival import plan_after_loss, run_failure_case

        def fetch(sc: Scenario, what: WhatIf, out: Path, seed: int) -> WhatIfRun:
            """The failure case by the same sequential rule as the shape: more replications only while its
            interval straddles the SLO (the report reads the last run: its change and seed match)."""
            for k, n in enumerate(self.stages):
                shutil.rmtree(out, ignore_errors=True)
                run = run_failure_case(sc.with_overrides({"simulation.replications": n}), what, out, seed)
                self.failure_runs += 1
                self.queries += run.summary.queries
                if k == len(self.stages) - 1 or _clear(run, self.judging):
                    break
            return run

        d = self.data()
        row = d.combined[d.combined["point"] == point_id(i)].iloc[0]
        result = survival(d, row, fetch=fetch, loss=plan_after_loss)
        self.survivals[point_id(i)] = result
        return None if result.cannot else result.survives


    def robust(self, i: int) -> bool:
        """Shape ``i`` (meeting the SLO) on ``space.draws`` draws of the calibrated parameters: its point's
        summary gains the model's interval, and the report's rule on the point decides (``robust``)."""
        from workbench.analysis.stats import with_model_intervals
        from workbench.studies.uncertainty import draw_summaries

        params = self.space.params
        assert params is not None
        point, record = self.points[i], self.outcomes[i].summary
        assert record is not None
        draws = draw_summaries(point.scenario, params, self.space.draws, seed=point.seed)
        self.draw_runs += len(draws)
        self.queries += sum(d.queries for d in draws)
        stored = replace(record, summary=with_model_intervals(record.summary, draws)).stored()
        write_json_atomic(RunDir(self.out_dir / point.point_id).summary_path, stored.to_json())
        self.outcomes[i] = replace(self.outcomes[i], summary=stored)
        self._data = None  # combined.parquet is written again with the interval
        combined = self.data().combined
        return bool(combined.loc[combined["point"] == point.point_id, "robust"].iloc[0])


def _broken(slo: SLOVerdict, judging: Judging) -> bool:
    """Whether a run broke an SLO check that more replications cannot change: a check other than the p99's (the
    heap's). The run's own verdict is not that: it holds the p99 interval's upper end to the target too, so a
    p99 whose interval straddles the target fails it, which is what more replications are for. A tenant's tables
    are held to their own SLOs by the run's verdict alone, which decides there."""
    if judging.p99_ms is None:
        return slo.met is False
    return any(not c.met for key, c in slo.checks.items() if key != "p99_ms")


def _clear(run: WhatIfRun, judging: Judging) -> bool:
    """Whether a failure case's run is clear of the SLO: it meets it by the report's rule
    (:func:`~workbench.report.whatif.whatif_row`), or its interval's lower end is above the p99 target (a
    tenant has none: its tables' own are in the run's verdict), or it broke the run's other checks."""
    if bool(whatif_row(run, judging)["meets_slo"]) or _broken(run.summary.slo, judging):
        return True
    p99 = run.summary.latency_ms.p99
    low = p99.value if p99.ci_low != p99.ci_low else p99.ci_low
    return judging.p99_ms is not None and low > judging.p99_ms


def _stage_verdicts(points: Sequence[Point], outcomes: Mapping[int, PointOutcome], judging: Judging,
                    last: bool) -> dict[int, Verdict]:
    """The shapes this stage decides: meets by the report's rule, or clearly fails (the interval's lower end
    above the SLO, or the run's own checks broken); at the last stage the report's rule decides every one."""
    from workbench.sweep.combine import point_row

    decided: dict[int, Verdict] = {}
    ok = [p for p in points if outcomes[p.index].ok]
    for p in points:
        if not outcomes[p.index].ok:
            decided[p.index] = Verdict(False, float("inf"))
    if not ok:
        return decided
    summaries = []
    for p in ok:
        record = outcomes[p.index].summary
        assert record is not None
        summaries.append(record.summary)
    frame = pd.DataFrame([point_row(p.point_id, p.overrides, p.seed, "ok", None, summary)
                          for p, summary in zip(ok, summaries, strict=True)])
    _, robust = slo_verdicts(frame, judging)
    slo = judging.p99_ms  # a tenant's tables are held to their own SLOs by the run's verdict
    high = frame[S.P99_HIGH].fillna(frame[S.P99])
    low = frame[S.P99_LOW].fillna(frame[S.P99])
    for j, p in enumerate(ok):
        clear_fail = _broken(summaries[j].slo, judging) or (slo is not None and float(low.iloc[j]) > slo)
        if bool(robust.iloc[j]) or clear_fail or last:
            decided[p.index] = Verdict(bool(robust.iloc[j]), float(high.iloc[j]))
    return decided


def _write_sweep(sims: _Simulations) -> SizingData:
    """``combined.parquet``, ``failures.json`` and ``sweep.json`` of the shapes simulated so far; read back."""
    order = sorted(sims.points)
    points = [sims.points[i] for i in order]
    write_combined(sims.out_dir, points, {p.point_id: sims.outcomes[p.index] for p in points})
    base = sims.space.base
    resolved = resolved_base(base)
    write_json_atomic(sims.out_dir / MANIFEST_FILE, {
        "name": f"size-{base.name}", "base": str(sims.base_path) if sims.base_path else base.to_dict(),
        "notebook": None, "points": [{"point": p.point_id, "overrides": p.overrides, "seed": p.seed} for p in points],
        "report": sims.space.options.to_json(), "fingerprint": fingerprint(resolved), "base_resolved": resolved,
        "load": load_record(base)})
    return load_sizing_data(sims.out_dir)


def _fresh(out_dir: Path, base: Scenario) -> None:
    """An empty output directory for this sizing: an earlier one's points and failure cases removed."""
    prepare_output(out_dir, base, restart=True)
    shutil.rmtree(out_dir / WHATIF_DIR, ignore_errors=True)
    (out_dir / SIZING_FILE).unlink(missing_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)


def _load(scenario: str | Path | Scenario | Mapping[str, Any], base_dir: Path | None) -> tuple[Scenario, Path | None]:
    if isinstance(scenario, Scenario):
        return scenario, None
    if isinstance(scenario, str | Path):
        return load_scenario(scenario), Path(scenario).resolve()
    return load_scenario(scenario, base_dir=base_dir), None


def size(scenario: str | Path | Scenario | Mapping[str, Any], out: str | Path, *, exhaustive: bool = False,
         parallel: int | None = None, master: str | None = None, progress: bool = False, studies: bool = True,
         base_dir: Path | None = None) -> dict[str, Any]:
    """Answer the sizing question of ``scenario`` (its ``sizing:`` space, its SLO and ``slo.survive``) into
    ``out``; returns what ``out/sizing.json`` holds.

    Parameters
    ----------
    scenario
        The scenario file (or scenario, or mapping with ``base_dir``) with a ``sizing:`` section.
    out
        The output directory: a sweep directory (``workbench report OUT`` works on it) and ``sizing.json``;
        what an earlier sizing or sweep wrote there is replaced.
    exhaustive
        Simulate every shape (the reference the search is checked against) instead of searching.
    parallel, master
        Local worker processes (default one per core), or a Spark master to run the batches on.
    progress
        A progress bar on stderr with the best shape so far and the candidates left.
    studies
        Then run the report's studies (what-ifs, headroom, every meeting shape's failure case).
    """
    started = time.perf_counter()
    base, base_path = _load(scenario, base_dir)
    space = parse_space(base)
    out_dir = Path(out).resolve()
    _fresh(out_dir, base)
    # a batch per round of as many shapes as there are workers (on Spark, at least twice this machine's cores)
    width = (parallel or default_parallel()) if master is None else max(parallel or 0, 2 * default_parallel())
    runner = make_runner(parallel, master)
    sims = _Simulations(space, out_dir, runner, base_path, replication_stages(base.simulation.replications))
    try:
        result = _decide(sims, exhaustive, width, progress)
    finally:
        runner.close()
    record = _record(sims, result, "exhaustive" if exhaustive else "search", time.perf_counter() - started)
    write_json_atomic(out_dir / SIZING_FILE, record)
    if studies and sims.points:
        from workbench.studies.sizing import run_sizing_studies

        run_sizing_studies(out_dir)
        record["studies"] = json.loads((out_dir / WHATIF_DIR / STUDIES_FILE).read_text()).get("failure_cases")
        write_json_atomic(out_dir / SIZING_FILE, record)
    return record


def _decide(sims: _Simulations, exhaustive: bool, width: int, progress: bool) -> SearchResult:
    from tqdm import tqdm

    space = sims.space
    with tqdm(total=len(space), desc="size", unit="shape", disable=not progress) as bar:
        def show(state: SearchState) -> None:
            bar.n = state.evaluated
            best = space.line_labels[space.shapes[state.best].line] if state.best is not None else "none yet"
            servers = f"{space.shapes[state.best].servers} servers, " if state.best is not None else ""
            bar.set_postfix_str(f"best {servers}{best}; {state.left} candidates left")
            bar.refresh()

        if exhaustive:
            sims.first_stage = bar
            cases = 0

            def survives(i: int) -> bool | None:
                nonlocal cases
                cases += 1
                bar.set_postfix_str(f"failure case of shape {cases} meeting the SLO")
                return sims.survives(i)

            def robust(i: int) -> bool:
                bar.set_postfix_str(f"parameter draws of shape {point_id(i)}")
                return sims.robust(i)

            result = every_shape(space.shapes, sims.evaluate, survives, robust=robust if space.params else None)
        else:
            result = search(space.shapes, sims.evaluate, sims.survives, robust=sims.robust if space.params else None,
                            width=width, progress=show)
        bar.n = len(space)  # every shape is decided: evaluated, or ruled out without a run
        bar.set_postfix_str(f"{len(result.verdicts)} evaluated, {len(space) - len(result.verdicts)} ruled out")
        bar.refresh()
    return result


def _record(sims: _Simulations, result: SearchResult, mode: str, seconds: float) -> dict[str, Any]:
    """``sizing.json``: the answer by the report's rule, the cost of finding it, and every evaluated shape."""
    space = sims.space
    d = sims.data() if sims.points else None
    best, closest = None, None
    if d is not None:
        chosen, _ = recommend(with_survival(d.combined, sims.survivals))
        best = int(str(chosen["point"]).removeprefix("point-")) if chosen is not None else None
        if best is None:
            closest = _closest(d, sims)
    if best != result.best:
        result.notes.append(f"the report's rule picks {best}, the search's walk {result.best}")
    rows = d.combined.set_index("point") if d is not None else None
    evaluated = []
    for i in sorted(result.verdicts):
        pid = point_id(i)
        row = rows.loc[pid] if rows is not None and pid in rows.index else None
        s = sims.survivals.get(pid)
        evaluated.append({
            "point": pid, "line": space.line_labels[space.shapes[i].line], "servers": space.shapes[i].servers,
            "overrides": space.overrides[i], "cost": space.shapes[i].cost,
            "instance": None if row is None else row["instance"],
            "replications": None if i not in sims.points else sims.points[i].scenario.simulation.replications,
            "verdict": "invalid" if i in sims.invalid else "failed run" if row is None else
                       "meets" if result.verdicts[i].meets else "fails",
            "p99_ms": None if row is None else _number(row[S.P99]),
            "p99_high_ms": None if row is None else _number(row[S.P99_HIGH]),
            "survives": None if s is None else s.survives,
            "p99_model_high_ms": None if i not in result.robust or row is None else _number(row[S.P99_MODEL_HIGH]),
            "robust": result.robust.get(i), "why": sims.invalid.get(i),
            "hour": kept_hour(sims.out_dir / pid) if row is not None else None})
    return {
        "mode": mode, "slo": {"p99_ms": space.base.slo.p99_ms, "survive": space.base.slo.survive},
        "load": load_record(space.base),
        "recommendation": None if best is None else space.overrides[best],
        "recommended_point": None if best is None else point_id(best),
        "closest": closest,
        "runs": sims.runs + sims.failure_runs + sims.draw_runs, "shape_runs": sims.runs,
        "failure_case_runs": sims.failure_runs, "draw_runs": sims.draw_runs,
        "simulated_queries": sims.queries, "seconds": round(seconds, 2),
        "replication_stages": sims.stages,
        "calibration": None if space.params is None else {
            "file": str(space.base.base_dir.resolve() / CALIBRATION_FILE), "draws": space.draws,
            "parameters": list(space.params.keys)},
        "space": {"shapes": len(space), "lines": len(space.line_labels), "evaluated": len(result.verdicts),
                  "not_evaluated": len(space) - len(result.verdicts), "left_out": list(space.left_out)},
        "skipped_why": ("shapes below a failing one on their line are taken to fail (bisection on servers); "
                        "shapes whose cost cannot beat the answer are not simulated; failure cases (and parameter "
                        "draws, when calibrated) run only for shapes that could be the answer")
                       if mode == "search" else "nothing: every shape simulated",
        "notes": result.notes,
        "failed": [{"point": point_id(i), "overrides": space.overrides[i], "error": o.error}
                   for i, o in sorted(sims.outcomes.items()) if not o.ok],
        "evaluated": evaluated,
    }


def _number(value: Any) -> float | None:
    """A float for JSON (``None`` for NaN: one replication's interval can be undefined)."""
    x = float(value)
    return None if math.isnan(x) else x


def _closest(d: SizingData, sims: _Simulations) -> dict[str, Any] | None:
    """When nothing qualifies: the cheapest shape meeting the SLO with every server up (its worst failure
    case against the SLO, or, when it survives, the model's p99 upper end across the calibration's
    uncertainty), else the shape whose p99 upper end came closest to the SLO."""
    slo = d.judging.p99_ms
    ok = meeting(d.combined.assign(robust=d.combined["meets_slo"]))  # at the fitted parameters
    if len(ok):
        first: pd.Series = ok.iloc[0]
        s = sims.survivals.get(str(first["point"]))
        worst = s.worst() if s is not None else None
        bound = float(worst[S.P99_HIGH]) if worst is not None else None
        why = s.cannot if s is not None and s.cannot else "breaks the SLO in its failure case"
        if s is not None and s.survives and not bool(first["robust"]):
            bound = _number(first[S.P99_MODEL_HIGH])
            why = "meets the SLO at the fitted parameters but not across the calibration's uncertainty"
        return {"point": str(first["point"]), "shape": str(first["shape"]), "p99_high_ms": bound,
                "over_slo_ms": None if bound is None or slo is None else round(bound - slo, 3), "why": why}
    if d.combined.empty:
        return None
    high = d.combined[S.P99_HIGH].fillna(d.combined[S.P99])
    row = d.combined.iloc[int(high.to_numpy().argmin())]
    bound = float(high.min())
    return {"point": str(row["point"]), "shape": str(row["shape"]), "p99_high_ms": bound,
            "over_slo_ms": None if slo is None else round(bound - slo, 3),
            "why": "no shape meets the SLO with every server up"}
