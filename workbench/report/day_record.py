"""The record of a day of load (``day.json``): every step of the profile, how its verdict is known, the worst.

The day study (:mod:`workbench.studies.day`) runs the steps and writes it; the report
(:mod:`workbench.report.day`) only reads it, so the record lives here, below both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import InputError
from workbench.io.tables import read_json_file

__all__ = ["DAY_FILE", "RULE", "Day", "Step", "TableLine", "TableStep", "clock", "read_day"]

#: The day's record under the output directory.
DAY_FILE = "day.json"


@dataclass(frozen=True)
class TableStep:
    """One table's result in a simulated step of a ``tables:`` scenario: its p99, the interval's upper end
    (ms) and its own SLO verdict (``None`` without a p99 SLO)."""

    table: str
    p99_ms: float
    p99_high_ms: float
    meets: bool | None

    def to_json(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass(frozen=True)
class TableLine:
    """A table of a ``tables:`` scenario's day and its p99 SLO, ms (``None``: none)."""

    table: str
    slo_p99_ms: float | None


@dataclass(frozen=True)
class Step:
    """One step of the day: its index, start (hours since midnight), factor, and how its verdict is known.

    ``run`` names the run directory of its factor (``None``: inferred, not simulated); ``p99_ms``,
    ``p99_high_ms`` (the interval's upper end), ``qps`` (measured), ``utilisation`` (mean busy share of
    the servers' cores) and ``busiest`` (the busiest server's) are NaN for an inferred step. ``meets``
    is the SLO verdict (``None`` without a p99 SLO).

    In a ``tables:`` scenario's day, ``factors`` holds each table's factor (its profile's, or 1 without one),
    ``factor`` is the step's total rate over the total at factor 1, the figures are every table's queries
    together (the tenant's), ``meets`` holds when every table meets its own SLO, and ``tables`` holds each
    table's p99 (simulated steps only).
    """

    index: int
    hour: float
    factor: float
    run: str | None
    meets: bool | None
    p99_ms: float = math.nan
    p99_high_ms: float = math.nan
    qps: float = math.nan
    utilisation: float = math.nan
    busiest: float = math.nan
    factors: tuple[float, ...] = ()
    tables: tuple[TableStep, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The step as ``day.json`` holds it (NaN as ``null``; a classic scenario's without ``factors`` and
        ``tables``)."""
        data = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in vars(self).items()
                if k not in ("factors", "tables")}
        if self.factors:
            data["factors"] = list(self.factors)
            data["tables"] = [t.to_json() for t in self.tables]
        return data


@dataclass(frozen=True)
class Day:
    """A day of load: every step of the profile, the rule that chose what ran, and the worst step.

    ``binding`` is the index of the step the verdict binds on: the worst of the peaks (the loads no other
    step's is at least for every table; one table's: its peak), which by the rule's assumption is the worst
    simulated step.
    """

    steps: tuple[Step, ...]
    step_s: float
    slo_p99_ms: float | None
    margin: float
    binding: int
    scenario: str = ""
    #: A ``tables:`` scenario's tables and their SLOs (empty for a classic scenario); ``slo_p99_ms`` is then
    #: the tightest of them (the judging SLO's :attr:`~workbench.report.judging.Judging.tightest_ms`).
    tables: tuple[TableLine, ...] = ()

    @property
    def met(self) -> bool | None:
        """Whether every step meets the p99 SLO (``None`` without one)."""
        verdicts = [s.meets for s in self.steps]
        return None if self.slo_p99_ms is None else all(v is True for v in verdicts)

    @property
    def peak(self) -> Step:
        return self.steps[self.binding]

    def simulated(self) -> list[Step]:
        return [s for s in self.steps if s.run is not None]

    def step_line(self, s: Step) -> str:
        """One simulated step in one line (``workbench day`` prints them): its start, load, p99 against its
        interval's upper end, utilisation and verdict; a tenant's each table's factor and p99."""
        verdict = "" if s.meets is None else "meets" if s.meets else "BREAKS"
        text = (f"  {s.hour:5.2f} h  x{s.factor:<5.3g} p99 {s.p99_ms:8.1f} ms [upper {s.p99_high_ms:.1f}]  "
                f"utilisation {s.utilisation:.0%}  {verdict}")
        if s.tables:
            text += " (" + ", ".join(f"{t.table} x{f:g} p99 {t.p99_ms:.1f} ms" for t, f in
                                     zip(s.tables, s.factors, strict=True)) + ")"
        return text

    def sentence(self) -> str:
        """The day in one line: the binding step, its p99 against the SLO, and how many steps break it."""
        s = self.peak
        when = f"{clock(s.hour)}-{clock(s.hour + self.step_s / 3600)}"
        what = "the tenant's total rate" if self.tables else "the rate"
        text = (f"day: the worst step is {when} (x{s.factor:.3g} {what}): p99 {s.p99_ms:.1f} ms "
                f"[upper {s.p99_high_ms:.1f}], utilisation {s.utilisation:.0%}")
        if self.slo_p99_ms is None:
            return text + "; no p99 SLO, so only the peak was run"
        broken = sum(1 for x in self.steps if x.meets is False)
        slo = ("a table's SLO" if self.tables else f"the SLO of {self.slo_p99_ms:g} ms")
        verdict = ("meets the SLO all day" if broken == 0 else f"{broken} of {len(self.steps)} steps break {slo}")
        if self.tables:
            slos = {t.table: t.slo_p99_ms for t in self.tables}
            text += "; " + ", ".join(f"{t.table} p99 {t.p99_ms:.1f} ms [upper {t.p99_high_ms:.1f}]"
                                     + (f" (SLO {slos[t.table]:g})" if slos.get(t.table) is not None else "")
                                     for t in s.tables)
        loads = {x.factors or x.factor for x in self.simulated()}
        every = {x.factors or x.factor for x in self.steps}
        return f"{text}; {verdict} ({len(loads)} of {len(every)} distinct loads simulated)"

    def to_json(self) -> dict[str, Any]:
        """``day.json``: the steps, the rule and the verdict."""
        data = {"scenario": self.scenario, "step_s": self.step_s, "slo_p99_ms": self.slo_p99_ms,
                "margin": self.margin, "binding": self.binding, "met": self.met, "rule": RULE,
                "steps": [s.to_json() for s in self.steps]}
        if self.tables:
            data["tables"] = [vars(t) for t in self.tables]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Day:
        steps = tuple(_step_of(s) for s in data["steps"])
        tables = tuple(TableLine(str(t["table"]), t.get("slo_p99_ms")) for t in data.get("tables") or ())
        return cls(steps, float(data["step_s"]), data.get("slo_p99_ms"), float(data["margin"]),
                   int(data["binding"]), str(data.get("scenario", "")), tables)


def _step_of(data: Mapping[str, Any]) -> Step:
    """A :class:`Step` from ``day.json`` (``null`` figures back to NaN)."""
    figures = {k: math.nan if data.get(k) is None else float(data[k])
               for k in ("p99_ms", "p99_high_ms", "qps", "utilisation", "busiest")}
    tables = tuple(TableStep(str(t["table"]), float(t["p99_ms"]), float(t["p99_high_ms"]), t.get("meets"))
                   for t in data.get("tables") or ())
    return Step(int(data["index"]), float(data["hour"]), float(data["factor"]), data.get("run"), data.get("meets"),
                **figures, factors=tuple(float(f) for f in data.get("factors") or ()), tables=tables)


#: The rule as ``day.json`` and the report state it.
RULE = ("distinct loads (one factor per table) simulated in decreasing order of total rate, from the peak, each "
        "unless a simulated load that meets the p99 SLO with the margin to spare is at least as high for every "
        "table; those are inferred to meet it (p99 does not fall as a rate rises); the peaks always run, and "
        "without a p99 SLO only they do")


def clock(hour: float) -> str:
    """``07:30`` from 7.5 hours.

    >>> clock(7.5), clock(24)
    ('07:30', '24:00')
    """
    minutes = round(hour * 60)
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def read_day(directory: str | Path) -> Day:
    """The :class:`Day` a :func:`simulate_day` wrote to ``directory``."""
    path = Path(directory) / DAY_FILE
    if not path.is_file():
        raise InputError(str(directory), f"has no {DAY_FILE}; run `workbench day SCENARIO --out DIR` first")
    return Day.from_json(read_json_file(path, "day record"))
