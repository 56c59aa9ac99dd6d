"""What-ifs of the recommended configuration: more load, a slow, wedged or lost server, a replica group down,
headroom.

The sweep answers "which shape meets the SLO today"; a lead also asks what happens when load grows or
a machine dies. Each what-if is the recommended point's own scenario with one change, simulated with
the point's seed (common random numbers, so the difference is the change and not noise):

* **load x m**: the query rate times ``m``. A Poisson workload gets ``workload.arrival.qps x m``; a
  replayed query log is replayed ``m`` times faster (the same queries, arrival times divided by ``m``,
  repeated when the faster log no longer covers the simulated horizon).
* **one server slow (x5)** and **one server wedged**: the first server (of replica group 0 for a
  replica-group table) takes five times longer for all its work (its whole JVM: ``scope: jvm``, the default, so
  its GC pauses and its requests' own delays too), or accepts requests and answers none, for the whole run
  (``cluster.failures.slow`` / ``cluster.failures.wedged``). Neither leaves routing:
  Helix and Pinot's failure detector see no failure; a wedge costs each query routed to it its timeout
  (427, a partial result), unless adaptive selection steers queries away.
* **one server down**: with replication 1 nothing is simulated: the server's segments have no other
  replica, so queries miss them until it is back. With replicas, one server (the first of replica
  group 0 for a replica-group table) is down for the whole run (``cluster.failures.down``) on the
  same layout: the brokers route around it and the surviving replicas of its segments carry its
  share, as between a failure and the rebalance that follows it.
* **one replica group down**: every server of replica group 0 down; the other groups answer every
  query (replica-group tables only).
* **headroom**: the load multipliers of ``report.headroom`` in increasing order, until the p99
  interval passes the SLO; the load at which it breaks is interpolated between the last multiplier that
  met it and the first that did not.

The runs are a study (:mod:`workbench.studies.sizing`): ``workbench studies SWEEP`` (which ``workbench
sweep`` runs after its points) writes each under ``SWEEP/whatif/POINT/NAME/`` (a run directory), and
this module only reads them. Each search below (the what-if table, the headroom; the failure cases of
:mod:`workbench.report.survival`) takes a ``fetch`` that returns one what-if's run: the report
reads it from disk (:func:`read_whatif`, raising :class:`StudyMissing` when it is not there), the study
runs it (:func:`workbench.studies.whatif.run_whatif`), so both walk the same runs in the same order.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.io.run_dir import RunDir, RunRecord
from workbench.io.summary import GC_DELAYED_RATE, P99, P99_HIGH, P99_LOW, PARTIAL_RATE, THROUGHPUT, Summary
from workbench.pinot.rebalance import servers_for_table, table_instance_partitions
from workbench.report.data import SizingData, layout_of
from workbench.report.judging import Judging, slo_verdicts
from workbench.scenario import Scenario

__all__ = [
    "MOVEMENT_FILE",
    "SLOW_FACTOR",
    "STUDIES_COMMAND",
    "STUDIES_FILE",
    "WHATIF_DIR",
    "Fetch",
    "Headroom",
    "Move",
    "StudyMissing",
    "WhatIf",
    "WhatIfRun",
    "degraded_variants",
    "first_group",
    "headroom",
    "load_variant",
    "movement_frame",
    "movement_path",
    "movement_steps",
    "point_of",
    "read_movement",
    "read_whatif",
    "today_row",
    "whatif_row",
    "whatif_table",
    "whatif_variants",
]

#: Where a sweep's what-if runs live, under the sweep directory: ``whatif/POINT/NAME/``.
WHATIF_DIR = "whatif"
#: The rebalance plans of the recommended point, beside its what-ifs: ``whatif/POINT/movement.json``.
MOVEMENT_FILE = "movement.json"
#: What the studies record about themselves (runs, time), under the what-if directory.
STUDIES_FILE = "studies.json"
#: The command that writes them (``workbench sweep`` runs it after its points).
STUDIES_COMMAND = "workbench studies"


@dataclass(frozen=True)
class WhatIf:
    """One change to a scenario: its directory name, how the report labels it, and what it changes.

    ``load`` is the query-rate multiplier; ``data`` a replacement workload directory (a faster replay);
    ``ideal_state`` where the segments live instead of a fresh assignment (after a rebalance);
    ``note`` says how the change is modelled, for the report's reading; ``rebalance_to`` marks the state
    after Pinot's rebalance of the table onto that many servers (the study computes its ideal state).
    """

    name: str
    label: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    load: float = 1.0
    data: Path | None = None
    note: str = ""
    ideal_state: Mapping[str, Mapping[str, str]] | None = None
    rebalance_to: int | None = None


def load_variant(sc: Scenario, factor: float, scratch: Path) -> WhatIf:
    """The scenario at ``factor`` times its query rate: Poisson arrivals at ``qps x factor``, a replayed log
    ``factor`` times faster (``workload.arrival.speed``: its queries in their order, repeated to fill the run);
    a ``tables:`` scenario's every table so (its keys are inside each entry, even for one table). ``scratch`` is the
    point's what-if directory (unused: the load is a key)."""
    name, label = f"load-x{factor:g}", f"load x{factor:g}"
    if sc.tables:
        return _tenant_load(sc, factor, name, label)
    overrides, note = _faster(sc, factor, "")
    return WhatIf(name, label, overrides, factor, note=note)


def _faster(sc: Scenario, factor: float, prefix: str) -> tuple[dict[str, Any], str]:
    """One table's load at ``factor`` times: the override (under ``prefix``, ``tables.K.`` for a tenant's table)
    and how it is modelled."""
    arrival = sc.workload.arrival
    if arrival.process != "replay":
        return {f"{prefix}workload.arrival.qps": arrival.qps * factor}, \
            f"Poisson arrivals at {arrival.rate * factor:g} queries/s"
    return {f"{prefix}workload.arrival.speed": arrival.speed * factor}, \
        f"the query log replayed {factor:g} times faster"


def _tenant_load(sc: Scenario, factor: float, name: str, label: str) -> WhatIf:
    """A tenant at ``factor`` times its load: every table's (:func:`_faster`)."""
    overrides: dict[str, Any] = {}
    parts = []
    for k, table in enumerate(sc.tables):
        more, note = _faster(table, factor, f"tables.{k}.")
        overrides.update(more)
        parts.append(f"{table.table.table_name}: {note}")
    return WhatIf(name, label, overrides, factor, note="every table's load: " + "; ".join(parts))


def first_group(sc: Scenario) -> tuple[str, ...]:
    """The servers of replica group 0 as Pinot's instance assignment forms it (the completed segments'
    instance partitions when the table has them, else the table's only kind)."""
    servers = [f"Server_{i}" for i in range(sc.cluster.servers)]
    ips = table_instance_partitions(sc.table, servers_for_table(sc.table, servers))
    ip = ips.get("COMPLETED") or ips.get("OFFLINE") or ips["CONSUMING"]
    return tuple(dict.fromkeys(s for p in range(ip.num_partitions) for s in ip.instances(p, 0)))


#: How many times longer the slow server's work takes in the "one server slow" what-if.
SLOW_FACTOR = 5.0


def degraded_variants(sc: Scenario, server: str) -> list[WhatIf]:
    """One server slow (x :data:`SLOW_FACTOR`) and one server wedged, each the whole run: the fail-slow cases
    Pinot operators meet most (a noisy neighbour or failing disk; stuck threads behind an open connection).
    Both keep the server in routing: Pinot's failure detector sees neither (no connection fails)."""
    routing = ("adaptive selection steers queries from it as its latency shows"
               if sc.cluster.broker.adaptive_selection else "brokers keep routing to it")
    return [WhatIf("server-slow", f"one server slow (x{SLOW_FACTOR:g})",
                   {"cluster.failures.slow": [{"server": server, "factor": SLOW_FACTOR}]},
                   note=f"{server}'s work {SLOW_FACTOR:g}x slower all run; {routing}"),
            WhatIf("server-wedged", "one server wedged", {"cluster.failures.wedged": [{"server": server}]},
                   note=f"{server} never answers (all run): its requests time out (427, partial); {routing}")]


def whatif_variants(sc: Scenario, scratch: Path) -> list[WhatIf]:
    """+50% load, one server slow, one wedged, one down and one replica group down for ``sc`` (those that
    apply to it: losing a server needs replicas)."""
    out = [load_variant(sc, 1.5, scratch)]
    _, groups = layout_of(sc)
    group = first_group(sc) if groups else ("Server_0",)
    out += degraded_variants(sc, group[0])
    if sc.table.replication < 2:
        return out
    out.append(WhatIf("server-down", "one server down", {"cluster.failures.down": [group[0]]},
                      note=f"{group[0]} down, not yet rebalanced: its replicas answer for it"))
    if groups > 1:
        out.append(WhatIf("group-down", "one replica group down", {"cluster.failures.down": list(group)},
                          note=f"replica group 0 ({len(group)} servers) down: the other "
                               f"{'group answers' if groups == 2 else f'{groups - 1} groups answer'} every query"))
    return out


class StudyMissing(LookupError):
    """A what-if run the report reads is not on disk (or was run with another seed or change)."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path


@dataclass(frozen=True)
class WhatIfRun:
    """One what-if and the summary of its run."""

    what: WhatIf
    summary: Summary


#: How a search gets one what-if's run: ``(point's scenario, what-if, its directory, seed)``.
Fetch = Callable[[Scenario, WhatIf, Path, int], WhatIfRun]


def _matches(run: RunDir, what: WhatIf, seed: int) -> RunRecord | None:
    if not run.is_run():
        return None
    stored = run.record()
    same = stored.seed == seed and stored.overrides == json.loads(json.dumps(what.overrides, default=str))
    return stored if same else None


def read_whatif(sc: Scenario, what: WhatIf, out_dir: Path, seed: int) -> WhatIfRun:
    """The run of one what-if from its run directory ``out_dir`` (raises :class:`StudyMissing` when it is
    not there, or was run with another seed or change)."""
    stored = _matches(RunDir(out_dir), what, seed)
    if stored is None:
        raise StudyMissing(out_dir)
    return WhatIfRun(what, stored.summary)


def whatif_row(run: WhatIfRun, judging: Judging) -> dict[str, Any]:
    """One what-if as a row: its change, its flattened summary and ``meets_slo``, judged as the sweep's points
    are (:func:`~workbench.report.judging.slo_verdicts` by ``judging``: the p99 interval's upper end against the
    scenario's p99 SLO and the run's own verdict, or a tenant's run by its verdict alone, which holds every
    table to its own SLO)."""
    what = run.what
    row = {"name": what.name, "label": what.label, "load": what.load, "note": what.note, **run.summary.columns()}
    meets, _ = slo_verdicts(pd.DataFrame([row]), judging)
    row["meets_slo"] = bool(meets.iloc[0])
    return row


def point_of(d: SizingData, row: pd.Series) -> tuple[Scenario, Path, int]:
    """Configuration ``row``'s scenario, the directory of its what-ifs and its seed."""
    point = str(row["point"])
    return d.scenarios[point], d.sweep_dir / WHATIF_DIR / point, int(row["seed"]) if "seed" in row else 0


def today_row(best: pd.Series) -> dict[str, Any]:
    """The what-if table's first row: configuration ``best`` as the sweep simulated it."""
    return {"name": "today", "label": "today", "load": 1.0, "note": "as simulated in the sweep",
            **{k: best[k] for k in best.index if "." in str(k) or str(k) in (THROUGHPUT, PARTIAL_RATE,
                                                                            GC_DELAYED_RATE)},
            "meets_slo": bool(best["meets_slo"])}


def whatif_table(d: SizingData, best: pd.Series, fetch: Fetch = read_whatif) -> pd.DataFrame:
    """One row per what-if of the recommended point ``best`` (``label``, ``note``, flattened summary,
    ``meets_slo``), after a ``today`` row from the sweep itself."""
    sc, scratch, seed = point_of(d, best)
    rows = [today_row(best)]
    if d.options.whatif:
        rows += [whatif_row(fetch(sc, w, scratch / w.name, seed), d.judging) for w in whatif_variants(sc, scratch)]
        if layout_of(sc)[1] == 0 and sc.table.replication < 2:
            rows.append({"name": "server-down", "label": "one server down", "load": 1.0, "meets_slo": False,
                         "note": "no replica: queries miss its segments until it is back",
                         P99: math.nan})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class Headroom:
    """Where the recommendation's SLO breaks as load grows.

    ``runs`` has one row per multiplier run (``load``, ``throughput_qps``, p99 columns, ``meets_slo``);
    ``holds_to`` is the largest multiplier that met the SLO (1.0 when only today's load did),
    ``breaks_at`` the first that did not (``None`` when every one met it), ``estimate`` the multiplier
    where the p99 interval's upper end crosses the SLO by linear interpolation (``None`` without a
    break), and ``qps`` today's query rate, queries/s.
    """

    runs: pd.DataFrame
    holds_to: float
    breaks_at: float | None
    estimate: float | None
    qps: float


def _finite(value: Any, fallback: Any) -> float:
    """``value`` as a float, or ``fallback`` when it is missing or NaN."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return float(fallback)
    return float(fallback) if math.isnan(number) else number


def _crossing(low: Mapping[str, Any], high: Mapping[str, Any], slo: float) -> float:
    y0, y1 = float(low["p99_high"]), float(high["p99_high"])
    x0, x1 = float(low["load"]), float(high["load"])
    if y1 <= y0:
        return x1
    return x0 + (x1 - x0) * min(1.0, max(0.0, (slo - y0) / (y1 - y0)))


def headroom(d: SizingData, best: pd.Series, multipliers: Sequence[float] | None = None,
             fetch: Fetch = read_whatif) -> Headroom | None:
    """Run the recommendation at growing load until its p99 interval passes the SLO (``None`` without
    an SLO or multipliers)."""
    steps = tuple(multipliers if multipliers is not None else d.options.headroom)
    if not d.judging.judged or not steps:
        return None
    sc, scratch, seed = point_of(d, best)
    p99_high = best.get(P99_HIGH, best[P99])
    rows = [{"load": 1.0, THROUGHPUT: float(best[THROUGHPUT]), "p99": float(best[P99]),
             "p99_low": _finite(best.get(P99_LOW), best[P99]),
             "p99_high": _finite(p99_high, best[P99]), "meets_slo": bool(best["meets_slo"])}]
    for m in steps:
        what = load_variant(sc, m, scratch)
        row = whatif_row(fetch(sc, what, scratch / what.name, seed), d.judging)
        value = row[P99]
        rows.append({"load": m, THROUGHPUT: float(row[THROUGHPUT]), "p99": float(value),
                     "p99_low": _finite(row.get(P99_LOW), value),
                     "p99_high": _finite(row.get(P99_HIGH), value),
                     "meets_slo": bool(row["meets_slo"])})
        if not row["meets_slo"]:
            break
    runs = pd.DataFrame(rows)
    passed, failed = runs[runs["meets_slo"]], runs[~runs["meets_slo"]]
    holds = float(passed["load"].max()) if len(passed) else 0.0
    breaks = float(failed["load"].min()) if len(failed) else None
    estimate = None
    slo = d.judging.p99_ms  # None for a tenant: its tables each have their own SLO, its p99 crosses none
    if breaks is not None and len(passed) and slo is not None:
        low = runs[runs["load"] == holds].iloc[0]
        high_row = runs[runs["load"] == breaks].iloc[0]
        estimate = _crossing({str(k): v for k, v in low.items()}, {str(k): v for k, v in high_row.items()}, slo)
    return Headroom(runs, holds, breaks, estimate, float(best[THROUGHPUT]))


def movement_steps(d: SizingData, best: pd.Series) -> list[tuple[int, int, str]]:
    """The rebalances the report shows for ``best``, as ``(servers before, after, label)``: today's
    servers to the recommendation (when the base scenario has another count and the same table), then
    the recommendation to the sweep's next size up (two servers more when it is the largest). Empty when the
    sweep has one server count."""
    sc = d.scenarios[str(best["point"])]
    rec = sc.cluster.servers
    base = d.base_scenario
    if d.combined["servers"].nunique() < 2 and (base is None or base.cluster.servers == int(best["servers"])):
        return []
    now = base.cluster.servers if base is not None else rec
    bigger = [n for n in sorted(set(int(s) for s in d.combined["servers"])) if n > rec]
    steps = []
    if now != rec and base is not None and base.table.to_json() == sc.table.to_json():
        steps.append((now, rec, f"{now} (base scenario) -> {rec} (recommended)"))
    if bigger:
        steps.append((rec, bigger[0], f"{rec} -> {bigger[0]} (the next size up)"))
    else:  # the largest size swept: growing later still means more servers than any tried
        steps.append((rec, rec + 2, f"{rec} -> {rec + 2} (two more than the largest size swept)"))
    return steps


def movement_path(d: SizingData, best: pd.Series) -> Path:
    """Where the study writes the rebalance plans of ``best`` (:func:`movement_steps`) and the run after
    the first: ``whatif/POINT/movement.json``."""
    return point_of(d, best)[1] / MOVEMENT_FILE


@dataclass(frozen=True)
class Move:
    """One rebalance of the recommendation as the studies wrote it (``movement.json``): what Pinot's
    rebalance loads, and p99 before (the recommendation's own, when the step starts from it) and once
    the move is done (a run on the rebalanced ideal state, the point's seed). The report's movement page
    and notebook 05 both read these, so they print the same figures for the same growth.
    """

    label: str
    before: int
    after: int
    segments_moved: int
    bytes_moved: int
    table_bytes: int
    minimize_data_movement: bool
    rows: tuple[Mapping[str, Any], ...]
    #: ``(value, low, high)`` of p99, ms (``None``: not known).
    p99_before: tuple[float, float, float] | None = None
    p99_after: tuple[float, float, float] | None = None
    #: Segment sizes estimated from document counts (the workload records none).
    estimated: bool = False

    @property
    def moved_share(self) -> float:
        """Bytes loaded as a share of the table's replicated bytes."""
        return self.bytes_moved / self.table_bytes if self.table_bytes else 0.0

    def sentence(self) -> str:
        """``4 -> 6 (the next size up): 18 segment replicas, 5.24MiB (33% of ...) are loaded; p99 ...``."""
        from workbench.analysis.provisioning import binary_bytes

        sizes = ", sizes estimated from document counts" if self.estimated else ""
        text = (f"{self.label}: {self.segments_moved} segment replicas, {binary_bytes(self.bytes_moved)} "
                f"({self.moved_share:.0%} of the table's replicated bytes{sizes}) are loaded"
                f"{' with minimizeDataMovement' if self.minimize_data_movement else ''}")
        if self.p99_after is not None:
            value, low, high = self.p99_after
            before = f" (from {self.p99_before[0]:.1f} ms before)" if self.p99_before is not None else ""
            text += f"; once moved, p99 is {value:.1f} ms (interval {low:.1f}-{high:.1f}){before}"
        return text


def _p99(summary: Summary) -> tuple[float, float, float]:
    p99 = summary.latency_ms.p99
    return float(p99.value), float(p99.ci_low), float(p99.ci_high)


def read_movement(d: SizingData, best: pd.Series) -> list[Move]:
    """The rebalances of ``best`` the studies planned and ran (:func:`movement_steps`), in order; empty
    when ``movement.json`` is not on disk."""
    path = movement_path(d, best)
    if not path.is_file():
        return []
    from workbench.io.tables import read_json_file

    moves = []
    for step in read_json_file(path, "rebalance plans")["steps"]:
        after = _p99(RunDir(path.parent / step["run"]).summary()) if step.get("run") else None
        before = None
        if int(step["before"]) == int(best["servers"]):  # the step starts from the recommendation itself
            before = (float(best[P99]), float(best.get(P99_LOW, best[P99])), float(best.get(P99_HIGH, best[P99])))
        moves.append(Move(step["label"], int(step["before"]), int(step["after"]), int(step["segments_moved"]),
                          int(step["bytes_moved"]), int(step["table_bytes"]), bool(step["minimize_data_movement"]),
                          tuple(step["rows"]), before, after, bool(step.get("estimated", False))))
    return moves


def movement_frame(moves: Sequence[Move]) -> pd.DataFrame:
    """One row per server and move (``plan`` is the move's label), as
    :func:`~workbench.analysis.sizing_plots.data_movement` draws them."""
    return pd.DataFrame([{**r, "plan": m.label} for m in moves for r in m.rows])
