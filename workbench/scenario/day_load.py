"""The load of each step of the day, one factor per table, and the hours a cluster must be sized for.

Each table's ``workload.profile.hourly`` gives a factor on its query rate per step of the day; a table
without one is flat (factor 1 all day). A step's load is the vector of its tables' factors (one entry for a
classic scenario). Profiles of different resolutions are laid on the finest common step (24 hourly factors
beside 48 half-hourly: each hour's factor twice).

**Worst hours.** One load *dominates* another when no table's factor is lower (componentwise ``>=``): if the
cluster meets its SLO at the dominating load it meets it at the other (p99 does not fall as any table's rate
rises with everything else unchanged, the assumption of :mod:`workbench.studies.day`). The hours no other
hour dominates are the worst: for one table, the peak; for a tenant whose tables peak at different hours
(dashboards at noon, a batch at night), each of those. Sizing for the worst hour means meeting the SLO in
every one of them.

**A table at factor 0 in a step where another table has load** is taken at its own lowest positive
factor: a stream needs a rate (``arrival.qps > 0``), and more load never shortens a queue, so the step's
verdict errs on the safe side. A step where every table is at 0 has no load and is never run.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench import defaults as D

if TYPE_CHECKING:
    from workbench.scenario import Scenario

__all__ = ["HourLoad", "day_loads", "dominates", "load_record", "non_dominated", "peak_phrase", "run_note",
           "table_names", "worst_hours"]

#: The rule as ``sweep.json``, ``sizing.json`` and the report state it.
WORST_RULE = ("each point is run at the day's worst hours (workload.profile: the hours whose load no other hour "
              "exceeds for every table; for one table, the peak) and judged on the worst of them")


@dataclass(frozen=True)
class HourLoad:
    """One load of the day: the first step that has it (``index``, starting at ``hour`` hours after
    midnight, ``step_s`` long) and each table's factor, in the scenario's table order."""

    index: int
    hour: float
    factors: tuple[float, ...]
    step_s: float = 3600.0

    def label(self, names: Sequence[str] = ()) -> str:
        """``hour 15, x3`` (one table) or ``hour 12: orders x3, clicks x0.5`` (several); a step finer than
        an hour is written as a clock (``15:30``).

        >>> HourLoad(15, 15.0, (3.0,)).label(), HourLoad(1, 0.5, (2.0, 1.0), 1800).label(["a", "b"])
        ('hour 15, x3', '00:30: a x2, b x1')
        """
        minutes = round(self.hour * 60)
        when = f"hour {minutes // 60}" if self.step_s % 3600 == 0 else f"{minutes // 60:02d}:{minutes % 60:02d}"
        if len(self.factors) == 1:
            return f"{when}, x{self.factors[0]:g}"
        return f"{when}: " + ", ".join(f"{n} x{f:g}" for n, f in zip(names, self.factors, strict=True))

    def to_json(self, names: Sequence[str]) -> dict[str, Any]:
        """The hour as ``sweep.json`` and ``sizing.json`` record it."""
        return {"step": self.index, "hour": self.hour, "step_s": self.step_s,
                "factors": dict(zip(names, self.factors, strict=True)), "label": self.label(names)}


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether load ``a`` is at least ``b`` for every table.

    >>> dominates((3, 1), (2, 1)), dominates((3, 1), (2, 2))
    (True, False)
    """
    return all(x >= y for x, y in zip(a, b, strict=True))


def non_dominated(vectors: Sequence[tuple[float, ...]]) -> list[tuple[float, ...]]:
    """The distinct loads with some load that no other distinct load dominates, in first-seen order.

    >>> non_dominated([(1, 1), (3, 1), (1, 3), (2, 1), (3, 1), (0, 0)])
    [(3.0, 1.0), (1.0, 3.0)]
    """
    distinct = [v for v in dict.fromkeys(tuple(float(x) for x in v) for v in vectors) if max(v) > 0]
    return [v for v in distinct if not any(w != v and dominates(w, v) for w in distinct)]


def _expanded(hourly: Sequence[float] | None, steps: int) -> list[float]:
    return [1.0] * steps if hourly is None else [float(f) for f in hourly for _ in range(steps // len(hourly))]


def _raised(factors: list[float]) -> list[float]:
    """A table's factors with each 0 at its lowest positive factor (module text); all-zero stays."""
    low = min((f for f in factors if f > 0), default=0.0)
    return [f if f > 0 else low for f in factors]


def day_loads(sc: Scenario) -> tuple[tuple[tuple[float, ...], ...], float] | None:
    """Each step's load (one factor per table, module text) and the step's length in seconds; ``None``
    when no table of ``sc`` has a profile.

    A step where every table is at 0 keeps its zeros (no load); elsewhere a table at 0 is raised to its
    lowest positive factor.
    """
    profiles = [v.workload.profile.hourly if v.workload.profile is not None else None for v in sc.table_scenarios]
    if all(p is None for p in profiles):
        return None
    steps = math.lcm(*(len(p) for p in profiles if p is not None))
    columns = [_expanded(p, steps) for p in profiles]
    idle = [all(c[i] <= 0 for c in columns) for i in range(steps)]
    raised = [_raised(c) for c in columns]
    loads = tuple(tuple(0.0 if idle[i] else r[i] for r in raised) for i in range(steps))
    return loads, D.DAY_SECONDS / steps


def _total(load: Sequence[float], rates: Sequence[float]) -> float:
    return sum(f * r for f, r in zip(load, rates, strict=True))


def worst_hours(sc: Scenario, rates: Sequence[float] | None = None) -> tuple[HourLoad, ...]:
    """The day's worst hours (module text), heaviest first by total queries per second (each table's rate
    x its factor; ``rates`` default each table's ``arrival.qps``); ``()`` without a profile."""
    day = day_loads(sc)
    if day is None:
        return ()
    loads, step_s = day
    weights = list(rates) if rates is not None else [v.workload.arrival.qps for v in sc.table_scenarios]
    worst = sorted(non_dominated(loads), key=lambda v: -_total(v, weights))
    return tuple(HourLoad(loads.index(v), loads.index(v) * step_s / 3600, v, step_s) for v in worst)


def table_names(sc: Scenario) -> tuple[str, ...]:
    """The scenario's tables, by name, in order."""
    return tuple(v.table.table_name for v in sc.table_scenarios)


def peak_phrase(sc: Scenario) -> str:
    """How a sizing states its load: ``at the peak hour (hour 15, x3)``, or the worst hours of a tenant;
    ``""`` without a profile.

    >>> from workbench.scenario import load_scenario
    >>> peak_phrase(load_scenario({"workload": {"synthetic": {}, "profile": {"hourly": [1, 3] * 12}}}))
    'at the peak hour (hour 1, x3)'
    """
    hours = worst_hours(sc)
    names = table_names(sc)
    if not hours:
        return ""
    if len(hours) == 1:
        return f"at the peak hour ({hours[0].label(names)})"
    return (f"at each of the day's {len(hours)} worst hours ({'; '.join(h.label(names) for h in hours)}), "
            "judged on the worst")


def run_note(sc: Scenario) -> str:
    """What a single run (``workbench simulate``) of a profiled scenario is: the rate as written, not the
    day; ``""`` without a profile.

    >>> from workbench.scenario import load_scenario
    >>> run_note(load_scenario({"workload": {"synthetic": {}, "profile": {"hourly": [1, 3] * 12}}}))[:62]
    'the day profile peaks at x3 (hour 1); this run is the rate as '
    """
    hours = worst_hours(sc)
    if not hours:
        return ""
    peak = (f"peaks at x{hours[0].factors[0]:g} ({hours[0].label().split(',')[0]})" if len(hours) == 1 and
            len(hours[0].factors) == 1 else f"has {len(hours)} worst hour{'s' if len(hours) > 1 else ''} "
            f"({'; '.join(h.label(table_names(sc)) for h in hours)})")
    return (f"the day profile {peak}; this run is the rate as written (factor 1): `workbench day` runs the "
            "day, and `workbench sweep` and `workbench size` size for the worst hour")


def load_record(sc: Scenario) -> dict[str, Any] | None:
    """What ``sweep.json`` and ``sizing.json`` record of the load a profiled scenario is sized at: the worst
    hours, the first (heaviest) one's ``hour`` and ``factor`` (its highest table factor), the rule;
    ``None`` without a profile."""
    hours = worst_hours(sc)
    if not hours:
        return None
    names = table_names(sc)
    return {"hour": hours[0].hour, "factor": max(hours[0].factors), "step": hours[0].index,
            "hours": [h.to_json(names) for h in hours], "phrase": peak_phrase(sc), "rule": WORST_RULE}
