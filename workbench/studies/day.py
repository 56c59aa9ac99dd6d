"""A day of load: the steps of ``workload.profile`` whose verdict could differ, simulated on one seed.

A dashboard tenant's peak hour can carry several times its night's load, and the cluster must meet its
SLO at the peak. The profile (``workload.profile.hourly``, :class:`~workbench.scenario.schema.ProfileSpec`)
gives each step of the day a factor on the scenario's query rate. Running all of them is rarely needed:

**The rule.** The distinct factors are simulated in decreasing order, starting with the peak, until one
meets the p99 SLO with :data:`~workbench.defaults.DAY_MARGIN` to spare (the upper end of its interval at
most ``(1 - margin) x slo.p99_ms``). Every lower rate then meets it too. *Assumption*: p99 does not fall
as the query rate rises with everything else unchanged (more load never shortens a queue; with common
random numbers the runs differ only in the rate), and the margin covers the run's noise near the line.
Without a p99 SLO there is nothing to decide, so only the peak runs. The peak is therefore always run
and, by the same assumption, is the worst step: the verdict binds there (sizing for the worst hour is
sizing at the peak's rate, :func:`run_at_worst`). ``every_step`` runs every distinct factor (the full curve).

**Several tables** (``tables:``), each with its own profile (a table without one is flat): a step's load is
the vector of the tables' factors (:mod:`workbench.scenario.day_load`), and the rule generalises
(:func:`hours_to_run`): the distinct loads are simulated in decreasing order of total rate (each table's
rate x its factor), each unless a simulated load that *dominates* it (at least as high for every table)
met every table's p99 SLO with the margin; such a step is inferred to meet it. The loads nothing dominates
(the peaks: a dashboard table's noon beside a batch table's night) always run, and the verdict binds on the
worst of them (:func:`pressure`: a broken SLO first, then the least margin over the tables' own SLOs).

Each step runs the scenario at ``factor`` times its rate. Poisson arrivals: ``qps x factor`` (factor 1
is the scenario exactly as written, so a flat profile of ones gives the single-rate run's answer
exactly). A replayed log: its queries, in their logged order, at steady Poisson times of rate ``factor x``
the log's mean rate (queries over its span), the gaps drawn once from the seed and divided by the factor
(:func:`steady_replay`): a log that spans the day already holds its own peak and night, which a faster
replay of it would carry into every step, so each step keeps the log's mix of queries and takes its
rate from the profile. Every step uses the same seed, so the random streams are the same and the steps
differ only by load.

Written under ``OUT``::

    OUT/day.json           the profile, the rule, one entry per step (simulated or inferred)
    OUT/rate-x<f>/         one run directory per distinct factor simulated
    OUT/workloads/         the steady replays of each rate (a replayed log only)
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench import defaults as D
from workbench.errors import InputError
from workbench.io import check_output, staged_sibling, write_json_atomic
from workbench.io.run_dir import RunRecord
from workbench.io.summary import Summary
from workbench.io.tables import read_json_file
from workbench.report.data import workload_of
from workbench.report.day_record import DAY_FILE, Day, Step, TableLine, TableStep
from workbench.report.judging import Judging
from workbench.report.whatif import WhatIf
from workbench.runs import resolve, run_checked
from workbench.scenario import Scenario
from workbench.scenario.day_load import HourLoad, day_loads, dominates, non_dominated, table_names, worst_hours
from workbench.studies.whatif import run_whatif
from workbench.workload.directory import WorkloadDir

#: What :func:`run_at_worst` writes beside a profiled point's run: the worst hours it ran and which it kept.
HOURS_FILE = "worst_hours.json"

__all__ = ["HOURS_FILE", "hours_ran", "hours_to_run", "kept_hour", "load_at", "mean_rate", "pressure", "run_at_worst",
           "simulate_day", "steady_queries", "steady_replay", "steps_to_run"]

def hours_to_run(loads: Sequence[Sequence[float]], clear: Callable[[tuple[float, ...]], bool],
                 every_step: bool = False) -> list[tuple[float, ...]]:
    """The distinct loads (one factor per table) to simulate, in the order the rule runs them: heaviest
    first (the order ``loads`` sort to: callers pass them by total rate), each unless a load already
    simulated and ``clear`` (meets the SLO with the margin to spare) dominates it; ``clear(v)`` runs ``v``.
    The loads nothing dominates (the peaks) therefore always run. All-zero loads never run.

    >>> runs = []
    >>> hours_to_run([(3, 1), (1, 3), (2, 1), (1, 1)], lambda v: runs.append(v) or v == (1.0, 3.0))
    [(3.0, 1.0), (1.0, 3.0), (2.0, 1.0)]
    """
    order = [v for v in dict.fromkeys(tuple(float(x) for x in v) for v in loads) if max(v) > 0]
    done: list[tuple[float, ...]] = []
    cleared: list[tuple[float, ...]] = []
    for v in order:
        if not every_step and any(dominates(c, v) for c in cleared):
            continue
        done.append(v)
        if clear(v):
            cleared.append(v)
    return done


def steps_to_run(factors: Sequence[float], bound: Callable[[float], float], slo_p99_ms: float | None,
                 margin: float = D.DAY_MARGIN, every_step: bool = False) -> list[float]:
    """The distinct factors of one table to simulate, in the order the rule runs them (:func:`hours_to_run`
    with one table: from the peak down until one meets with the margin); ``bound(f)`` runs factor ``f``
    and returns its p99 upper end, ms.

    >>> runs = []
    >>> steps_to_run([1, 3, 2, 3, 0.5], lambda f: runs.append(f) or 50 * f, slo_p99_ms=120)
    [3.0, 2.0, 1.0]
    >>> steps_to_run([1, 3], lambda f: 10 * f, slo_p99_ms=None)
    [3.0]
    """
    order = sorted(((float(f),) for f in factors), reverse=True)

    def clear(v: tuple[float, ...]) -> bool:
        high = bound(v[0])
        return slo_p99_ms is None or high <= (1 - margin) * slo_p99_ms

    return [v[0] for v in hours_to_run(order, clear, every_step)]


def steady_queries(queries: pd.DataFrame, rate: float, span_s: float, seed: int) -> pd.DataFrame:
    """``queries`` in their order (repeated as needed) at Poisson times of ``rate`` per second up to ``span_s``;
    the gaps are one seed's standard exponentials divided by ``rate``, so two rates differ only in scale.

    >>> q = pd.DataFrame({"arrival_s": [0.0, 5.0], "sql": ["a", "b"]})
    >>> one, two = steady_queries(q, 1.0, 20.0, 7), steady_queries(q, 2.0, 20.0, 7)
    >>> bool(np.allclose(two["arrival_s"].to_numpy()[:len(one)], one["arrival_s"].to_numpy() / 2))
    True
    >>> one["sql"].tolist()[:4]
    ['a', 'b', 'a', 'b']
    """
    rng = np.random.default_rng(seed)
    count = int(rate * span_s + 10 * math.sqrt(rate * span_s) + 10)
    times = np.cumsum(rng.standard_exponential(count)) / rate
    times = times[times < span_s]
    base = queries.sort_values("arrival_s", kind="stable").reset_index(drop=True)
    out = base.iloc[np.arange(len(times)) % len(base)].reset_index(drop=True).assign(arrival_s=times)
    return out.assign(query_id=np.arange(len(out), dtype=np.int64)) if "query_id" in out else out


def mean_rate(queries: pd.DataFrame) -> float:
    """A query log's mean rate, queries per second: its queries over its span (one mean gap added, so a
    log of n evenly spaced queries has exactly their rate)."""
    times = np.sort(queries["arrival_s"].to_numpy(dtype=float))
    if len(times) < 2 or times[-1] <= times[0]:
        raise InputError("workload.data", "a day profile of a replayed log needs at least two queries at "
                                          "different times (the log's mean rate)")
    span = float(times[-1] - times[0])
    return len(times) / (span + span / (len(times) - 1))


def steady_replay(sc: Scenario, factor: float, out: Path, seed: int) -> WhatIf:
    """The run of a replayed scenario at ``factor`` times its log's mean rate (:func:`steady_queries`),
    its workload written under ``out/workloads`` once."""
    source = workload_of(sc)
    if source is None or not source.has_queries():
        raise InputError("workload.data", "a replayed scenario's day profile needs its workload directory's "
                                          "query log")
    name = f"rate-x{factor:g}"
    target = WorkloadDir(out / "workloads" / name)
    queries = source.queries()
    rate = factor * mean_rate(queries)
    if not target.has_queries():
        target.with_queries(source, steady_queries(queries, rate, sc.simulation.duration_s, seed))
    return WhatIf(name, f"x{factor:g}", {}, factor, target.path,
                  note=f"the log's queries at steady Poisson times, {rate:.3g} queries/s")


def load_at(sc: Scenario, factors: float | Sequence[float], out: Path, seed: int) -> Scenario:
    """``sc`` with each table at its factor times its rate (one factor for a classic scenario), the load in
    the scenario itself (module text): ``qps x factor``, or a replayed log's steady replay (written under
    ``out/workloads``) as its ``workload.data``."""
    what = _at(sc, _vector(sc, factors), out, seed)
    if what.data is not None:
        return sc.with_overrides({"workload.data": str(Path(what.data).resolve())})
    return sc.with_overrides(what.overrides) if what.overrides else sc


def _vector(sc: Scenario, factors: float | Sequence[float]) -> tuple[float, ...]:
    vector = (float(factors),) if isinstance(factors, int | float) else tuple(float(f) for f in factors)
    if len(vector) != len(sc.table_scenarios):
        raise ValueError(f"{len(vector)} factors for {len(sc.table_scenarios)} tables")
    return vector


def _at(sc: Scenario, factors: tuple[float, ...], out: Path, seed: int) -> WhatIf:
    """The run of the scenario with each table at its factor times its rate (module text)."""
    if not sc.tables:
        return _table_at(sc, factors[0], out, seed)
    overrides: dict[str, Any] = {}
    notes = []
    for k, (view, f) in enumerate(zip(sc.tables, factors, strict=True)):
        what = _table_at(view, f, out / "tables" / view.table.table_name, seed)
        overrides.update({f"tables.{k}.{key}": v for key, v in what.overrides.items()})
        if what.data is not None:
            overrides[f"tables.{k}.workload.data"] = str(Path(what.data).resolve())
        notes.append(f"{view.table.table_name} x{f:g}")
    name = "load-" + "-".join(f"x{f:g}" for f in factors)
    return WhatIf(name, ", ".join(notes), overrides, note="each table at its factor of the day")


def _table_at(sc: Scenario, factor: float, out: Path, seed: int) -> WhatIf:
    """One table at ``factor`` times its rate: its Poisson rate, or its log's steady replay."""
    if sc.workload.arrival.process == "replay":
        return steady_replay(sc, factor, out, seed)
    if factor == 1.0:
        return WhatIf("rate-x1", "as written", {})
    return WhatIf(f"rate-x{factor:g}", f"x{factor:g}", {"workload.arrival.qps": sc.workload.arrival.qps * factor},
                  factor, note=f"Poisson arrivals at {sc.workload.arrival.qps * factor:g} queries/s")


def run_at_worst(sc: Scenario, out: str | Path, *, overrides: Mapping[str, Any] | None = None,
                 seed: int | None = None, overwrite: bool = False) -> RunRecord:
    """Run ``sc`` as a sizing evaluates a shape: at its day's worst hours
    (:func:`~workbench.scenario.day_load.worst_hours`; as written without a profile), into ``out``.

    With one worst hour (one table: the peak) that hour's run is the shape's run. With several (a tenant
    whose tables peak at different hours), they run heaviest first until one breaks the SLO (the shape then
    fails, whatever the rest would give), and ``out`` keeps the worst run (:func:`pressure`: a broken SLO
    first, then the least margin), so the shape meets only if it meets in every one. A replayed
    log's steady replays are written beside ``out`` (``workloads/NAME``). ``overrides`` are only recorded
    (the load is in the run's recorded scenario), so a resumed sweep finds the point again. ``out``
    also gets :data:`HOURS_FILE`: each worst hour, its queries and p99 upper end, and which one it kept.
    """
    hours = worst_hours(sc, _rates(sc))
    target = Path(out)
    if not hours:
        return run_checked(sc, target, overrides=overrides, seed=seed, overwrite=overwrite)
    check_output(target, overwrite=overwrite)
    runs = _run_hours(sc, hours, target, overrides, seed)
    worst = max(range(len(runs)), key=lambda i: (pressure(runs[i][1].summary, sc), -i))
    shutil.rmtree(target, ignore_errors=True)
    os.replace(runs[worst][0], target)
    for staged, _ in runs:
        shutil.rmtree(staged, ignore_errors=True)
    _write_hours(target, sc, hours[:len(runs)], [r for _, r in runs], worst)
    return runs[worst][1]


def _run_hours(sc: Scenario, hours: Sequence[HourLoad], target: Path, overrides: Mapping[str, Any] | None,
               seed: int | None) -> list[tuple[Path, RunRecord]]:
    """Each worst hour's run in a staging sibling of ``target`` (removed once its owner is gone,
    :func:`~workbench.io.clean_staging`), heaviest first, until one breaks the SLO: the shape then fails,
    whatever the rest would give."""
    used = sc.simulation.seed if seed is None else seed
    scratch = target.parent / "workloads" / target.name
    runs: list[tuple[Path, RunRecord]] = []
    for h in hours:
        staged = staged_sibling(target)
        staged.unlink()
        runs.append((staged, run_checked(load_at(sc, h.factors, scratch, used), staged, overrides=overrides,
                                         seed=seed)))
        if pressure(runs[-1][1].summary, sc)[0]:
            break
    return runs


def _write_hours(target: Path, sc: Scenario, hours: Sequence[HourLoad], runs: Sequence[RunRecord], kept: int) -> None:
    """``HOURS_FILE`` beside the kept run: every worst hour run, its queries and p99, and which one is kept."""
    names = table_names(sc)
    write_json_atomic(target / HOURS_FILE, {"kept": kept, "hours": [
        {**h.to_json(names), "queries": r.summary.queries, "p99_high_ms": r.summary.latency_ms.p99.bound(),
         "breaks_slo": pressure(r.summary, sc)[0]} for h, r in zip(hours, runs, strict=True)]})


def kept_hour(point_dir: str | Path) -> str | None:
    """The worst hour whose run :func:`run_at_worst` kept for the point in ``point_dir`` (its label, e.g.
    ``hour 14, x3``); ``None`` for a point run as written."""
    path = Path(point_dir) / HOURS_FILE
    if not path.is_file():
        return None
    ran = read_json_file(path, "worst hours record")
    return str(ran["hours"][int(ran["kept"])]["label"])


def hours_ran(point_dir: str | Path) -> tuple[int, int] | None:
    """(runs, simulated queries) :func:`run_at_worst` made for the point in ``point_dir`` (``None``: it
    ran the scenario as written, one run)."""
    path = Path(point_dir) / HOURS_FILE
    if not path.is_file():
        return None
    hours = read_json_file(path, "worst hours record")["hours"]
    return len(hours), sum(int(h["queries"]) for h in hours)


def _rates(sc: Scenario) -> list[float]:
    """Each table's queries per second at factor 1: its Poisson rate, or its log's mean rate."""
    rates = []
    for view in sc.table_scenarios:
        source = workload_of(view) if view.workload.arrival.process == "replay" else None
        has_log = source is not None and source.has_queries()
        rates.append(mean_rate(source.queries(["arrival_s"])) if source is not None and has_log
                     else view.workload.arrival.qps)
    return rates


def _tables(s: Summary, sc: Scenario) -> list[tuple[str, float | None, Any]]:
    """(name, p99 SLO, its latency and SLO verdict) per table: the run itself for a classic scenario."""
    if not sc.tables or s.tables is None:
        return [(sc.table.table_name, sc.slo.p99_ms, s)]
    return [(v.table.table_name, v.slo.p99_ms, s.tables[v.table.table_name]) for v in sc.tables]


def pressure(s: Summary, sc: Scenario) -> tuple[bool, float]:
    """How close run ``s`` of ``sc`` is to breaking its SLO: (whether it breaks it, the highest p99 upper
    end over its own p99 SLO among the tables; the run's p99 upper end, ms, when no table sets one)."""
    rows = _tables(s, sc)
    ratios = [t.latency_ms.p99.bound() / slo for _, slo, t in rows if slo is not None]
    broken = s.slo.met is False or any(r > 1 for r in ratios)
    return broken, max(ratios) if ratios else float(s.latency_ms.p99.bound())


def _clear(s: Summary, sc: Scenario, margin: float) -> bool:
    """Whether every table meets its p99 SLO with ``margin`` to spare (true without any p99 SLO)."""
    return all(t.latency_ms.p99.bound() <= (1 - margin) * slo for _, slo, t in _tables(s, sc) if slo is not None)


def _step(i: int, hour: float, load: tuple[float, ...], share: float, name: str | None, s: Summary | None,
          sc: Scenario, inferred: bool | None) -> Step:
    factors = load if sc.tables else ()
    if s is None:
        return Step(i, hour, share, None, inferred, factors=factors)
    rows = _tables(s, sc)
    slos = [slo for _, slo, _ in rows if slo is not None]
    verdicts = [t.latency_ms.p99.bound() <= slo for _, slo, t in rows if slo is not None]
    meets = None if not slos else bool(all(verdicts) and s.slo.met is not False)
    per_table = tuple(TableStep(n, float(t.latency_ms.p99.value), float(t.latency_ms.p99.bound()),
                                None if slo is None else bool(t.latency_ms.p99.bound() <= slo))
                      for n, slo, t in rows) if sc.tables else ()
    return Step(i, hour, share, name, meets, float(s.latency_ms.p99.value), float(s.latency_ms.p99.bound()),
                float(s.throughput_qps), float(s.utilisation.mean), float(s.utilisation.max), factors, per_table)


def simulate_day(scenario: Scenario | str | Path | Mapping[str, Any], out: str | Path, *, seed: int | None = None,
                 every_step: bool = False, margin: float = D.DAY_MARGIN) -> Day:
    """Run the steps of ``scenario``'s day (each table's ``workload.profile``) that the rule (module text)
    needs, into ``out``.

    A step's load is its tables' factors (:func:`~workbench.scenario.day_load.day_loads`); a ``tables:``
    scenario's step records each table's p99 and the step's ``factor`` is its total rate over the total at
    factor 1. Runs already in ``out`` with the same seed and change are reused. Returns the :class:`Day`,
    also written to ``out/day.json``.

    Raises
    ------
    InputError
        When no table of the scenario has a ``workload.profile``.
    """
    sc = resolve(scenario, None, None)
    day = day_loads(sc)
    if day is None:
        key = "tables[0].workload.profile" if sc.tables else "workload.profile"
        raise InputError(key, "the scenario has no day profile: add e.g. `profile: {hourly: [24 factors]}` under "
                              "workload (docs/scenario.md)")
    loads, step_s = day
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    used = sc.simulation.seed if seed is None else seed
    rates = _rates(sc)
    summaries: dict[tuple[float, ...], tuple[str, Summary]] = {}

    def clear(v: tuple[float, ...]) -> bool:
        what = _at(sc, v, root, used)
        run = run_whatif(sc, what, root / what.name, used)
        summaries[v] = (what.name, run.summary)
        return _clear(run.summary, sc, margin)

    heaviest = sorted(set(loads), key=lambda v: -sum(f * r for f, r in zip(v, rates, strict=True)))
    hours_to_run(heaviest, clear, every_step)
    cleared = [v for v, (_, s) in summaries.items() if _clear(s, sc, margin)]
    judging = Judging.of(sc)
    has_slo = judging.judged
    steps = []
    for i, load in enumerate(loads):
        name, summary = summaries.get(load, (None, None))
        inferred = (True if has_slo and summary is None and (max(load) <= 0 or any(dominates(c, load) for c in cleared))
                    else None)
        share = sum(f * r for f, r in zip(load, rates, strict=True)) / sum(rates)
        steps.append(_step(i, i * step_s / 3600, load, share if sc.tables else load[0], name, summary, sc, inferred))
    peaks = set(non_dominated(loads))
    binding = max((s for s in steps if loads[s.index] in peaks),
                  key=lambda s: (pressure(summaries[loads[s.index]][1], sc), s.factor, -s.index)).index
    tables = tuple(TableLine(v.table.table_name, v.slo.p99_ms) for v in sc.tables)
    result = Day(tuple(steps), step_s, judging.tightest_ms, margin, binding, sc.name, tables)
    write_json_atomic(root / DAY_FILE, result.to_json())
    return result
