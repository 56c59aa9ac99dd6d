"""Resilience is part of the SLO: every configuration that meets it is run again in the failure it must survive.

A cluster sized only for the day every server is up breaks its SLO the first time one dies, which is the
day the lead is asked why. ``slo.survive`` names the failure (:data:`SURVIVE`, a registry from mode to
the failure cases of one configuration), and a configuration *survives* when it meets the SLO in every
case. The sizing report recommends the cheapest configuration that meets the SLO and survives.

* ``server`` (the default): one server lost. What Pinot serves then depends on how long the loss lasts.
  First (and for a short outage, throughout) the table is **not rebalanced**: the brokers route around
  the server and the other replicas of its segments carry its share (``server-down``). After the
  rebalance a lasting loss calls for, the table sits on **one server fewer**, where Pinot's instance and
  segment assignment put it (``server-lost``, run on the rebalanced ideal state). Both are run. The first
  state lasts as long as the rebalance takes: the most bytes one server must load, at
  :data:`~workbench.defaults.SEGMENT_LOAD_BYTES_PER_S`. A table Pinot cannot place on one server fewer
  (a fixed ``numInstancesPerReplicaGroup``, or as many replicas as servers) is restored by a replacement
  server instead, which loads the lost server's segments: only the first state exists. A table with one
  replica cannot survive: its segments are gone until the server is back.
* ``replica_group``: every server of replica group 0 down (a zone or a rack); the other groups answer
  every query. A balanced layout places replicas without groups, so it cannot promise this.
* ``none``: no failure case; every configuration that meets the SLO survives.

The runs are the study's (:mod:`workbench.studies.survival`), in ``SWEEP/whatif/POINT/NAME/``, with the
rebalance after a loss in ``SWEEP/whatif/POINT/after-loss.json`` (:class:`AfterLoss`); this module only
reads them, through the same ``fetch`` and ``loss`` hooks the study fills in by running.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from workbench import defaults as D
from workbench.io.summary import P99, P99_HIGH
from workbench.io.tables import read_json_file
from workbench.report.data import SizingData, binary_size, layout_of
from workbench.report.whatif import Fetch, StudyMissing, WhatIf, first_group, point_of, read_whatif, whatif_row
from workbench.scenario import Scenario

__all__ = ["AFTER_LOSS_FILE", "SURVIVE", "AfterLoss", "FailureCases", "Loss", "Survival", "after_loss_path",
           "failure_cases", "read_after_loss", "survival", "survival_frame", "with_survival"]

#: The rebalance after one server is lost, per point, beside its what-ifs: ``whatif/POINT/after-loss.json``.
AFTER_LOSS_FILE = "after-loss.json"


@dataclass(frozen=True)
class AfterLoss:
    """What Pinot does about a server lost for good, as the study planned it (``after-loss.json``).

    ``rebalanced`` is whether the table can be placed on ``servers_after`` servers (else a replacement
    server restores today's layout); ``busiest_bytes`` the most bytes one server loads (rebalance) or
    the lost server's bytes (replacement); ``seconds`` the time that takes at ``load_bytes_per_s``.
    """

    servers_before: int
    servers_after: int
    rebalanced: bool
    segments_moved: int
    bytes_moved: int
    busiest_bytes: int
    load_bytes_per_s: float
    why_not: str = ""

    @property
    def seconds(self) -> float:
        """How long the table runs without the lost server's replicas: its busiest loader's bytes / rate."""
        return self.busiest_bytes / self.load_bytes_per_s if self.load_bytes_per_s > 0 else math.inf

    def to_json(self) -> dict[str, Any]:
        """The record as ``after-loss.json`` holds it."""
        return {"servers_before": self.servers_before, "servers_after": self.servers_after,
                "rebalanced": self.rebalanced, "segments_moved": self.segments_moved, "bytes_moved": self.bytes_moved,
                "busiest_bytes": self.busiest_bytes, "load_bytes_per_s": self.load_bytes_per_s,
                "why_not": self.why_not}

    def sentence(self) -> str:
        """How long the state before the rebalance lasts, and why.

        >>> AfterLoss(6, 5, True, 12, 3 * 2**20, 2**20 * 100, 50 * 2**20).sentence()
        'Pinot rebalances the table onto 5 servers, loading 100MiB on the busiest one: about 2 s at 50MiB/s'
        """
        rate = f"{binary_size(self.load_bytes_per_s)}/s"  # 2^20 bytes: MiB, not MB
        took = f"{'' if self.seconds < 1 else 'about '}{_duration(self.seconds)} at {rate}"
        if self.rebalanced:
            return (f"Pinot rebalances the table onto {self.servers_after} servers, loading "
                    f"{binary_size(self.busiest_bytes)} on the busiest one: {took}")
        return (f"Pinot cannot place the table on {self.servers_after} servers ({self.why_not}); a replacement server "
                f"loads the lost one's {binary_size(self.busiest_bytes)}: {took}")


def _duration(seconds: float) -> str:
    """``2 s``, ``4 min``, ``1.5 h``.

    >>> _duration(0.2), _duration(2.4), _duration(250), _duration(9000)
    ('under a second', '2 s', '4 min', '2.5 h')
    """
    if seconds < 1:
        return "under a second"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.2g} h"


def after_loss_path(scratch: Path) -> Path:
    """Where the study writes a point's :class:`AfterLoss` (``scratch`` is ``whatif/POINT``)."""
    return scratch / AFTER_LOSS_FILE


#: How a search gets a point's :class:`AfterLoss`: ``(point's scenario, its what-if directory)``.
Loss = Callable[[Scenario, Path], AfterLoss]


def read_after_loss(sc: Scenario, scratch: Path) -> AfterLoss:
    """The study's :class:`AfterLoss` of a point (raises :class:`StudyMissing` when it is not there)."""
    path = after_loss_path(scratch)
    if not path.is_file():
        raise StudyMissing(path)
    data = read_json_file(path, "rebalance after a server loss")
    return AfterLoss(**{k: data[k] for k in AfterLoss.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class FailureCases:
    """The failure cases of one configuration, or why it cannot survive without running any.

    ``cannot`` is a sentence when no run could make the configuration survive (one replica, no replica
    group to lose); ``after_loss`` the rebalance the ``server`` mode planned (``None`` otherwise).
    """

    cases: tuple[WhatIf, ...] = ()
    cannot: str | None = None
    after_loss: AfterLoss | None = None


def _server_down(sc: Scenario) -> WhatIf:
    groups = layout_of(sc)[1]
    lost = first_group(sc)[0] if groups else "Server_0"
    return WhatIf("server-down", "one server down", {"cluster.failures.down": [lost]},
                  note=f"{lost} down, not yet rebalanced: its replicas answer for it")


def _server(sc: Scenario, scratch: Path, loss: Loss) -> FailureCases:
    if sc.table.replication < 2:
        return FailureCases(cannot="with one replica, a lost server's segments are gone until it is back, so "
                                   "queries miss data")
    plan = loss(sc, scratch)
    cases = [_server_down(sc)]
    if plan.rebalanced:
        n = plan.servers_after
        cases.append(WhatIf("server-lost", "one server lost, rebalanced", {"cluster.servers": n},
                            note=f"after Pinot's rebalance onto the {n} servers left", rebalance_to=n))
    return FailureCases(tuple(cases), after_loss=plan)


def _replica_group(sc: Scenario, scratch: Path, loss: Loss) -> FailureCases:
    groups = layout_of(sc)[1]
    if groups < 2:
        return FailureCases(cannot="a balanced layout has no replica group: losing a zone can take every replica "
                                   "of a segment")
    group = first_group(sc)
    return FailureCases((WhatIf("group-down", "one replica group down", {"cluster.failures.down": list(group)},
                                note=f"replica group 0 ({len(group)} servers) down: the other groups answer"),))


#: ``slo.survive`` -> the failure cases of a configuration (its scenario, what-if directory, loss hook).
SURVIVE: dict[str, Callable[[Scenario, Path, Loss], FailureCases]] = {
    "none": lambda sc, scratch, loss: FailureCases(),
    "server": _server,
    "replica_group": _replica_group,
}

#: How page 1 names each mode.
MODE_TEXT = {"none": "no failure (slo.survive: none)", "server": "one server lost (slo.survive: server)",
             "replica_group": "one replica group lost (slo.survive: replica_group)"}


def failure_cases(sc: Scenario, scratch: Path, loss: Loss = read_after_loss) -> FailureCases:
    """The failure cases ``sc.slo.survive`` asks of configuration ``sc``."""
    return SURVIVE[sc.slo.survive](sc, scratch, loss)


@dataclass(frozen=True)
class Survival:
    """One configuration in its failure cases: ``rows`` are what-if rows (``label``, ``note``, the run's
    flattened summary, ``meets_slo``); ``survives`` whether it met the SLO in every one."""

    point: str
    mode: str
    survives: bool
    rows: tuple[Mapping[str, Any], ...] = ()
    cannot: str | None = None
    after_loss: AfterLoss | None = None

    def worst(self) -> Mapping[str, Any] | None:
        """The case with the highest p99 upper end (``None`` when nothing was run)."""
        return max(self.rows, key=lambda r: _bound(r), default=None)


def _bound(row: Mapping[str, Any]) -> float:
    high = row.get(P99_HIGH, math.nan)
    value = float(high) if high is not None and high == high else float(row.get(P99, math.nan))
    return value if value == value else math.inf


def survival(d: SizingData, row: pd.Series, fetch: Fetch = read_whatif, loss: Loss = read_after_loss) -> Survival:
    """Configuration ``row`` in its failure cases (raises :class:`StudyMissing` when a run is not on disk)."""
    sc, scratch, seed = point_of(d, row)
    cases = failure_cases(sc, scratch, loss)
    rows = tuple(whatif_row(fetch(sc, w, scratch / w.name, seed), d.judging) for w in cases.cases)
    ok = cases.cannot is None and all(bool(r["meets_slo"]) for r in rows)
    return Survival(str(row["point"]), sc.slo.survive, ok, rows, cases.cannot, cases.after_loss)


def survival_frame(d: SizingData, ordered: pd.DataFrame, fetch: Fetch = read_whatif,
                   loss: Loss = read_after_loss) -> dict[str, Survival]:
    """Every configuration of ``ordered`` (those that meet the SLO) in its failure cases, by point."""
    return {str(r["point"]): survival(d, r, fetch, loss) for _, r in ordered.iterrows()}


def load_bytes_per_s() -> float:
    """The segment load rate the study assumes (:data:`~workbench.defaults.SEGMENT_LOAD_BYTES_PER_S`)."""
    return float(D.SEGMENT_LOAD_BYTES_PER_S)


def with_survival(combined: pd.DataFrame, survivals: Mapping[str, Survival]) -> pd.DataFrame:
    """``combined`` with a ``survives`` column: True or False for the configurations run in their failure
    case, ``None`` for the others (they do not meet the SLO with every server up)."""
    verdicts = [survivals[str(p)].survives if str(p) in survivals else None for p in combined["point"]]
    return combined.assign(survives=pd.Series(verdicts, index=combined.index, dtype=object))
