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
sizing at the peak's rate). ``every_step`` runs every distinct factor (the full curve).

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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench import defaults as D
from workbench.errors import InputError
from workbench.io import write_json_atomic
from workbench.io.summary import Summary
from workbench.report.data import workload_of
from workbench.report.day_record import DAY_FILE, Day, Step
from workbench.report.whatif import WhatIf
from workbench.runs import resolve
from workbench.scenario import Scenario
from workbench.studies.whatif import run_whatif
from workbench.workload.directory import WorkloadDir

__all__ = ["load_at", "mean_rate", "simulate_day", "steady_queries", "steady_replay", "steps_to_run"]

def steps_to_run(factors: Sequence[float], bound: Callable[[float], float], slo_p99_ms: float | None,
                 margin: float = D.DAY_MARGIN, every_step: bool = False) -> list[float]:
    """The distinct factors to simulate, in the order the rule runs them; ``bound(f)`` runs factor ``f``
    and returns its p99 upper end, ms.

    >>> runs = []
    >>> steps_to_run([1, 3, 2, 3, 0.5], lambda f: runs.append(f) or 50 * f, slo_p99_ms=120)
    [3.0, 2.0, 1.0]
    >>> steps_to_run([1, 3], lambda f: 10 * f, slo_p99_ms=None)
    [3.0]
    """
    order = sorted({float(f) for f in factors if f > 0}, reverse=True)
    done: list[float] = []
    for f in order:
        high = bound(f)
        done.append(f)
        if every_step:
            continue
        if slo_p99_ms is None or high <= (1 - margin) * slo_p99_ms:
            break
    return done


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


def load_at(sc: Scenario, factor: float, out: Path, seed: int) -> Scenario:
    """``sc`` at ``factor`` times its rate, the load in the scenario itself (module text): ``qps x factor``,
    or a replayed log's steady replay (written under ``out/workloads``) as its ``workload.data``."""
    what = _at(sc, factor, out, seed)
    if what.data is not None:
        return sc.with_overrides({"workload.data": str(Path(what.data).resolve())})
    return sc.with_overrides(what.overrides) if what.overrides else sc


def _at(sc: Scenario, factor: float, out: Path, seed: int) -> WhatIf:
    """The run of ``factor`` times the scenario's rate (module text)."""
    if sc.workload.arrival.process == "replay":
        return steady_replay(sc, factor, out, seed)
    if factor == 1.0:
        return WhatIf("rate-x1", "as written", {})
    return WhatIf(f"rate-x{factor:g}", f"x{factor:g}", {"workload.arrival.qps": sc.workload.arrival.qps * factor},
                  factor, note=f"Poisson arrivals at {sc.workload.arrival.qps * factor:g} queries/s")


def _step(i: int, hour: float, factor: float, name: str | None, s: Summary | None, slo: float | None,
          inferred: bool | None) -> Step:
    if s is None:
        return Step(i, hour, factor, None, inferred)
    high = s.latency_ms.p99.bound()
    meets = None if slo is None else bool(high <= slo and s.slo.met is not False)
    return Step(i, hour, factor, name, meets, float(s.latency_ms.p99.value), float(high),
                float(s.throughput_qps), float(s.utilisation.mean), float(s.utilisation.max))


def simulate_day(scenario: Scenario | str | Path | Mapping[str, Any], out: str | Path, *, seed: int | None = None,
                 every_step: bool = False, margin: float = D.DAY_MARGIN) -> Day:
    """Run the steps of ``scenario``'s ``workload.profile`` that the rule (module text) needs, into ``out``.

    Runs already in ``out`` with the same seed and change are reused. Returns the :class:`Day`, also
    written to ``out/day.json``.

    Raises
    ------
    InputError
        When the scenario has no ``workload.profile``.
    """
    sc = resolve(scenario, None, None)
    profile = sc.workload.profile
    if profile is None or profile.hourly is None:
        raise InputError("workload.profile", "the scenario has no day profile: add e.g. "
                                             "`profile: {hourly: [24 factors]}` under workload (docs/scenario.md)")
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    used = sc.simulation.seed if seed is None else seed
    slo = sc.slo.p99_ms
    summaries: dict[float, tuple[str, Summary]] = {}

    def bound(f: float) -> float:
        what = _at(sc, f, root, used)
        run = run_whatif(sc, what, root / what.name, used)
        summaries[f] = (what.name, run.summary)
        return float(run.summary.latency_ms.p99.bound())

    ran = steps_to_run(profile.hourly, bound, slo, margin, every_step)
    lowest = min(ran)
    hours = [i * profile.step_s / 3600 for i in range(len(profile.hourly))]
    steps = []
    for i, (hour, f) in enumerate(zip(hours, profile.hourly, strict=True)):
        name, summary = summaries.get(float(f), (None, None))
        inferred = None if slo is None or summary is not None else (True if f < lowest else None)
        steps.append(_step(i, hour, float(f), name, summary, slo, inferred))
    simulated = [s for s in steps if s.run is not None]
    binding = max(simulated, key=lambda s: (s.p99_high_ms, s.factor, -s.index)).index
    day = Day(tuple(steps), profile.step_s, slo, margin, binding, sc.name)
    write_json_atomic(root / DAY_FILE, day.to_json())
    return day
