"""What the sizing report judges a configuration by, decided once from the scenario: the judging SLO.

A configuration *meets the SLO* when its run's own verdict (``slo.met``: the heap SLO, OOM, and each
check of the scenario's ``slo:``) is not broken and, when one p99 target judges it, the upper end of its
p99 interval (and of the calibration's model interval, when the point carries it) is at or under that
target. Which target that is depends on the scenario, and :meth:`Judging.of` says it once:

* **one table with ``slo.p99_ms``**: that number, against the run's p99 interval;
* **a tenant** (a ``tables:`` scenario of several tables, each with its own ``slo:``): no one number.
  The tenant's p99 mixes tables held to different SLOs, so a configuration is judged by the run's
  verdict, which holds each table's p99 interval to that table's own SLO
  (:func:`workbench.analysis.tables.tenant_verdict`); ``tables`` lists them;
* **no SLO**: the run's verdict alone (every configuration meets it unless the heap SLO or OOM breaks it).

A ``tables:`` scenario with one entry is one table: its p99 is that table's, judged by its SLO.

Every part of the report that judges (:func:`slo_verdicts` for the sweep's points,
:func:`workbench.report.whatif.whatif_row` for a what-if, the headroom, the failure cases, the assumption
checks) or says what is judged (page 1's question, the tenant page, the configurations' note) asks the
sweep's :class:`Judging` (``SizingData.judging``); none decides again whether the runs are a tenant's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.io import summary as S

if TYPE_CHECKING:
    from workbench.scenario import Scenario

__all__ = ["Judging", "slo_verdicts"]


@dataclass(frozen=True)
class Judging:
    """What a scenario's configurations are judged by.

    Attributes
    ----------
    p99_ms
        The one p99 target, ms, the run's p99 interval is held to (``None``: no SLO, or a tenant's runs).
    tables
        A tenant's tables in the scenario's order, each with its own p99 target, ms (``None``: none), which the
        run's verdict holds it to; empty for one table.

    >>> Judging(120.0).describe(), Judging().describe()
    ('p99 120 ms', 'p99 none')
    >>> t = Judging(tables={"orders": 120.0, "clicks": None})
    >>> t.tenant, t.judged, t.tightest_ms, t.describe()
    (True, True, 120.0, "each table's own p99 (orders 120 ms, clicks none)")
    """

    p99_ms: float | None = None
    tables: Mapping[str, float | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.tables and self.p99_ms is not None:
            raise ValueError("a tenant's configurations are judged by each table's own SLO, not by one p99_ms")

    @classmethod
    def of(cls, sc: Scenario) -> Judging:
        """The judging SLO of scenario ``sc``: its ``slo.p99_ms``, or a tenant's tables' own (a ``tables:``
        scenario's ``slo`` is its first table's, so it is never the tenant's)."""
        if len(sc.tables) > 1:
            return cls(None, {t.table.table_name: t.slo.p99_ms for t in sc.tables})
        return cls(sc.slo.p99_ms)

    @property
    def tenant(self) -> bool:
        """Whether the configurations are a tenant's: each table judged by its own SLO (the run's verdict)."""
        return bool(self.tables)

    @property
    def judged(self) -> bool:
        """Whether a latency SLO judges the configurations: the scenario's, or any table's of a tenant."""
        return self.p99_ms is not None or any(v is not None for v in self.tables.values())

    @property
    def tightest_ms(self) -> float | None:
        """The lowest p99 target anything is held to (a tenant's tightest table's): the line a plot of the
        tenant's tables draws (``None``: no p99 SLO)."""
        targets = [v for v in self.tables.values() if v is not None]
        return self.p99_ms if not self.tenant else (min(targets) if targets else None)

    def each(self) -> str:
        """A tenant's tables and their targets: ``orders 120 ms, clicks none``."""
        return ", ".join(f"{name} {'none' if v is None else f'{v:g} ms'}" for name, v in self.tables.items())

    def describe(self) -> str:
        """The target in words, as a table's note gives it: ``p99 120 ms``, ``p99 none``, or a tenant's
        ``each table's own p99 (orders 120 ms, clicks none)``."""
        if self.tenant:
            return f"each table's own p99 ({self.each()})"
        return f"p99 {self.p99_ms:g} ms" if self.p99_ms is not None else "p99 none"


def _run_ok(combined: pd.DataFrame) -> pd.Series:
    """The run's own verdict per row: not broken (``slo.met`` True, or unjudged: ``None``/NaN/absent)."""
    verdict = combined[S.SLO_MET] if S.SLO_MET in combined else pd.Series(None, index=combined.index, dtype=object)
    ok: pd.Series = verdict.map(lambda v: v is None or (isinstance(v, float) and np.isnan(v)) or bool(v)).astype(bool)
    return ok


def slo_verdicts(combined: pd.DataFrame, judging: Judging) -> tuple[pd.Series, pd.Series]:
    """Whether each row (a point's or a what-if's flattened summary) meets the SLO, and whether it does across
    the model interval too (``robust``), by ``judging``.

    The run's own verdict (``slo.met``, which also holds ``slo.max_heap`` and OOM, and a tenant's tables each
    against its own SLO) rules a row out whatever its latency; with a p99 target, the check uses the top of
    the interval so noise cannot buy a pass.

    >>> rows = pd.DataFrame({"latency_ms.p99.value": [50.0, 50.0, 90.0],
    ...                      "latency_ms.p99.ci_high": [55.0, 55.0, 95.0], "slo.met": [True, False, True]})
    >>> slo_verdicts(rows, Judging(70.0))[0].tolist(), slo_verdicts(rows, Judging())[0].tolist()
    ([True, False, False], [True, False, True])
    """
    run_ok = _run_ok(combined)
    slo = judging.p99_ms
    if slo is None:
        return run_ok, run_ok
    value = combined[S.P99]
    high = combined[S.P99_HIGH].fillna(value) if S.P99_HIGH in combined else value
    meets = (high <= slo) & run_ok
    if S.P99_MODEL_HIGH in combined:
        return meets, meets & (combined[S.P99_MODEL_HIGH].fillna(high) <= slo)
    return meets, meets
