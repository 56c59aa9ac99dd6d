"""What the sizing report reads: a sweep's combined table, each point's scenario, prices and options.

:func:`load_sizing_data` adds to the combined table, per point, the cluster shape the reader buys
(servers, cores, heap, replica groups, instance selector, replication), the instance type that fits
it, its monthly cost in money, and whether its p99 interval lies under the SLO. :func:`recommend`
then picks the first configuration in the report's order (:func:`rank`) that meets the SLO, and the
runner-up.

Columns added (``combined``):

========================  ====================================================================
``config``                the swept values of the point (``servers=6, heap=16G, layout=2 groups of 3``)
``shape``                 the configuration in words (``6 servers x 4 cores, 16G heap, balanced``)
``servers``, ``cores``    server count, cores per server
``heap_bytes``            JVM heap per server, bytes
``layout``                ``balanced`` or ``2 groups of 3`` (replica groups x servers per group)
``layout_kind``           ``balanced`` or ``2 replica groups``
``replica_groups``        replica groups (0 without replica-group assignment)
``selector``              ``routing.instanceSelectorType``
``replication``           replicas of each segment
``instance``              the cheapest instance type that fits (``None`` when none does)
``per_hour``              its price per instance-hour, in the price table's currency
``monthly_cost``          the servers' cost: ``servers x per_hour x hours per month`` (NaN when no instance fits)
``cluster_cost``          the whole cluster's: servers, brokers, controllers, ZooKeeper and segment storage
                          (:mod:`workbench.report.cluster_cost`; NaN when a part has no instance)
``cost``                  server cores (``servers x cores``), the cost when prices are unknown
``meets_slo``             the point meets the sweep's judging SLO (:mod:`workbench.report.judging`): the whole
                          p99 interval at or under the scenario's p99 SLO, a tenant's every table under its own
                          (the run's verdict); True when no SLO is set
``robust``                ``meets_slo`` and, when the point carries the calibration's model
                          interval (:data:`~workbench.io.summary.P99_MODEL_HIGH`), that too is under the SLO
``load_level``            the load the point runs at, named by the swept ``workload`` keys
                          (``arrival.qps=40``; empty when the sweep varies no workload key)
``at_load``               the point runs at the highest load level (by measured queries/s): the
                          level the detailed recommendation, its what-ifs and alternatives are for
========================  ====================================================================

A sizing answers "which shape for *this* load". A sweep that varies the workload (the query rate,
``workload.arrival.qps``, or the data and its replayed log, ``workload.data``) asks that question once
per load, so the load is a grouping and never a choice: :func:`recommend_per_load` answers each level
on its own, and no answer is ever the cheapest row across loads (a lower load's shape would be sized
for traffic the cluster does not have).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.errors import InputError
from workbench.io import summary as S
from workbench.io.run_dir import RunDir
from workbench.io.tables import read_json_file, read_parquet
from workbench.pinot.assignment import instance_assignment_config
from workbench.report.cluster_cost import Part, cluster_parts, total
from workbench.report.judging import Judging, slo_verdicts
from workbench.report.options import ReportOptions, parse_report_options
from workbench.report.prices import PriceTable, load_prices
from workbench.scenario import Scenario, recorded_scenario
from workbench.workload.directory import WorkloadDir

__all__ = ["LOAD_KEY", "RANKING_RULE", "SIZING_FILE", "LoadAnswer", "SizingData", "bill", "binary_size", "cost_column",
           "layout_of", "load_keys", "load_levels", "load_sizing_data", "meeting", "rank", "recommend",
           "recommend_per_load", "search_note", "shape_costs", "size_text", "table_bytes", "workload_of"]


@dataclass(frozen=True)
class SizingData:
    """A sweep ready to report on.

    Attributes
    ----------
    combined
        One row per successful point with the columns above.
    point_dirs
        Point id -> its run directory.
    scenarios
        Point id -> its validated scenario (relative paths resolve against ``base_dir``).
    judging
        What the configurations are judged by (:class:`~workbench.report.judging.Judging`): the scenario's p99
        target, a tenant's tables each against its own, or none. Decided once, from the first point's scenario.
    scenario_name
        The base scenario's name.
    base
        The first point's scenario as plain data.
    base_scenario
        The sweep's base scenario file, when the sweep recorded one (gives the workload directory).
    sweep_dir
        The sweep directory (what-if runs are written under it).
    options
        The report options recorded with the sweep (``report:`` in the sweep file).
    prices
        The instance price table in use.
    sweep_name
        The sweep's name.
    """

    combined: pd.DataFrame
    point_dirs: Mapping[str, RunDir]
    judging: Judging
    scenario_name: str
    base: Mapping[str, Any]
    base_scenario: Scenario | None = None
    sweep_dir: Path = Path(".")
    scenarios: Mapping[str, Scenario] = field(default_factory=dict)
    options: ReportOptions = field(default_factory=ReportOptions)
    prices: PriceTable | None = None
    sweep_name: str = ""


def size_text(num_bytes: float) -> str:
    """A heap or memory size as operators write it (``16G``, ``512M``).

    >>> size_text(16 * 1024**3), size_text(1.5 * 1024**3), size_text(512 * 1024**2)
    ('16G', '1.5G', '512M')
    """
    for unit, scale in (("T", 1024**4), ("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if num_bytes >= scale:
            return f"{num_bytes / scale:.3g}{unit}"
    return f"{num_bytes:.0f}B"


def binary_size(num_bytes: float) -> str:
    """A byte count with its binary unit spelled right (``size_text`` scales by 1024, so ``M`` is MiB).

    >>> binary_size(100 * 2**20), binary_size(3 * 2**30), binary_size(500)
    ('100MiB', '3GiB', '500B')
    """
    text = size_text(num_bytes)
    return text if text.endswith("B") else text + "iB"


def layout_of(sc: Scenario) -> tuple[str, int]:
    """``("balanced", 0)`` or ``("2 groups of 3", 2)``: how the table's servers are used by queries."""
    kinds = ("OFFLINE",) if sc.table.table_type == "OFFLINE" else ("CONSUMING", "COMPLETED")
    for kind in kinds:
        config = instance_assignment_config(sc.table, kind)
        if config is not None and config.replica_group_partition.replica_group_based:
            rg = config.replica_group_partition
            groups = rg.num_replica_groups
            per_group = rg.num_instances_per_replica_group or sc.cluster.servers // max(1, groups)
            return f"{groups} groups of {per_group}", groups
    return "balanced", 0


def _labels(combined: pd.DataFrame, layouts: list[str]) -> list[str]:
    """A short label per point from the parameters that vary across the sweep (a swept table config
    is named by the layout it gives)."""
    varying = [str(c) for c in combined.columns
               if str(c).startswith("param.") and combined[c].astype(str).nunique() > 1]

    def part(column: str, value: Any, layout: str) -> str:
        key = column.removeprefix("param.")
        if key == "table":
            return f"layout={layout}"
        return f"{key.split('.')[-1]}={_short(value)}"

    return [", ".join(part(c, row[c], layouts[i]) for c in varying) or str(row["point"])
            for i, (_, row) in enumerate(combined.iterrows())]


def _short(value: Any) -> str:
    """A swept value as a label shows it: a file by its name, a long mapping by its start."""
    text = str(value)
    if text.endswith(".json") or text.endswith(".yaml"):
        return Path(text).stem
    return text if len(text) <= 24 else text[:21] + "..."


def _shape(sc: Scenario, layout: str) -> str:
    selector = sc.table.instance_selector_type
    route = layout if layout == "balanced" and selector == "balanced" else f"{layout}, {selector}"
    return (f"{sc.cluster.servers} servers x {sc.cluster.server.cores} cores, "
            f"{size_text(sc.cluster.server.heap)} heap, {route}")


def _shape_columns(combined: pd.DataFrame, scenarios: list[Scenario], prices: PriceTable,
                   options: ReportOptions) -> pd.DataFrame:
    rows = []
    for sc in scenarios:
        layout, groups = layout_of(sc)
        inst = prices.cheapest_fit(sc.cluster.server.cores, sc.cluster.server.heap, options.memory_per_heap)
        rows.append({
            "shape": _shape(sc, layout), "servers": sc.cluster.servers, "cores": sc.cluster.server.cores,
            "heap_bytes": sc.cluster.server.heap, "layout": layout, "replica_groups": groups,
            "layout_kind": "balanced" if groups == 0 else f"{groups} replica groups",
            "selector": sc.table.instance_selector_type, "replication": sc.table.replication,
            "instance": inst.name if inst is not None else None,
            "per_hour": inst.per_hour if inst is not None else math.nan,
            "monthly_cost": prices.monthly(inst, sc.cluster.servers) if inst is not None else math.nan,
            "cost": sc.cluster.servers * sc.cluster.server.cores,
        })
    extra = pd.DataFrame(rows, index=combined.index)
    return pd.concat([combined.drop(columns=[c for c in extra.columns if c in combined]), extra], axis=1)


#: What ``workbench size`` writes beside a sweep's files (:mod:`workbench.sizing`): how the shapes were chosen.
SIZING_FILE = "sizing.json"


def search_note(sweep_dir: Path) -> str | None:
    """How ``workbench size`` chose the configurations of ``sweep_dir`` (``None`` for a sweep's grid):
    ``8 of 216 shapes simulated by search in 57 runs, the others ruled out: sizing.json``."""
    path = sweep_dir / SIZING_FILE
    if not path.is_file():
        return None
    record = read_json_file(path, "sizing record")
    space = record.get("space", {}) if isinstance(record, dict) else {}
    how = "by search" if record.get("mode") == "search" else "exhaustively"
    evaluated, shapes = space.get("evaluated", "?"), space.get("shapes", "?")
    rest = ", the others ruled out" if evaluated != shapes else ""
    return f"{evaluated} of {shapes} shapes simulated {how} in {record.get('runs', '?')} runs{rest}: {SIZING_FILE}"


#: The swept key that changes the load rather than the shape.
LOAD_KEY = "param.workload.arrival.qps"


def load_keys(combined: pd.DataFrame) -> list[str]:
    """The swept ``param.workload*`` columns that take more than one value: they change the question
    (how much traffic, which data and query log), not the shape that answers it.

    >>> load_keys(pd.DataFrame({"param.workload.arrival.qps": [20, 40], "param.cluster.servers": [2, 4],
    ...                         "param.workload.data": ["wl", "wl"]}))
    ['param.workload.arrival.qps']
    """
    return [str(c) for c in combined.columns
            if (str(c) == "param.workload" or str(c).startswith("param.workload."))
            and combined[c].astype(str).nunique() > 1]


def load_levels(combined: pd.DataFrame) -> pd.Series:
    """Each point's load level as a label (``arrival.qps=40``); empty when the sweep varies no workload key.

    >>> load_levels(pd.DataFrame({"param.workload.arrival.qps": [20, 40, 20]})).tolist()
    ['arrival.qps=20', 'arrival.qps=40', 'arrival.qps=20']
    """
    keys = load_keys(combined)
    labels = [", ".join(f"{k.removeprefix('param.workload').lstrip('.') or 'workload'}={_short(row[k])}"
                        for k in keys) for _, row in combined.iterrows()]
    return pd.Series(labels, index=combined.index, dtype=object)


def _level_order(combined: pd.DataFrame) -> list[str]:
    """The load levels, lightest first: by the queries/s the points measured (a replayed log's load is
    its own, so the swept value need not be a number), then by the swept rate."""
    levels = combined["load_level"]
    measured = pd.to_numeric(combined[S.THROUGHPUT], errors="coerce") if S.THROUGHPUT in combined else None
    swept = pd.to_numeric(combined[LOAD_KEY], errors="coerce") if LOAD_KEY in combined else None
    keys = pd.DataFrame({"level": levels,
                         "measured": measured if measured is not None else 0.0,
                         "swept": swept if swept is not None else 0.0}).groupby("level", sort=False).mean()
    return [str(v) for v in keys.sort_values(["measured", "swept"], kind="stable").index]


def _at_load(combined: pd.DataFrame) -> pd.Series:
    """The points at the highest load level (every point when the sweep varies no workload key)."""
    order = _level_order(combined)
    highest: pd.Series = combined["load_level"] == order[-1]
    return highest


@dataclass(frozen=True)
class LoadAnswer:
    """The answer at one load level: its label, the queries/s its points measured (mean), the
    recommendation there (``None``: nothing meets the SLO at this load) and the configuration with the
    lowest p99 there (what the report quotes when nothing meets it)."""

    level: str
    qps: float
    best: pd.Series | None
    closest: pd.Series


def recommend_per_load(combined: pd.DataFrame) -> list[LoadAnswer]:
    """One :func:`recommend` per load level, lightest first: each level's points ranked only against
    each other, so a shape is never chosen because it was cheap at a load the cluster does not have.

    >>> t = pd.DataFrame({"point": list("abcd"), "cost": [2, 4, 2, 4], "servers": [2, 4, 2, 4],
    ...                   "load_level": ["qps=1", "qps=1", "qps=2", "qps=2"], "throughput_qps": [1.0, 1, 2, 2],
    ...                   "latency_ms.p99.value": [50.0, 40, 900, 60], "meets_slo": [True, True, False, True]})
    >>> [(a.level, None if a.best is None else a.best["point"]) for a in recommend_per_load(t)]
    [('qps=1', 'a'), ('qps=2', 'd')]
    """
    frame = combined if "load_level" in combined else combined.assign(load_level="")
    answers = []
    for level in _level_order(frame):
        rows = frame[frame["load_level"] == level].assign(at_load=True)
        qps = float(pd.to_numeric(rows[S.THROUGHPUT], errors="coerce").mean()) if S.THROUGHPUT in rows else math.nan
        answers.append(LoadAnswer(level, qps, recommend(rows)[0], rows.sort_values(S.P99).iloc[0]))
    return answers


def _manifest(root: Path) -> dict[str, Any]:
    path = root / "sweep.json"
    if not path.is_file():
        return {}
    recorded = read_json_file(path, "sweep manifest")
    data: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    return data


def load_sizing_data(sweep_dir: str | Path, options: ReportOptions | None = None) -> SizingData:
    """Read a sweep directory and add each point's shape, instance, monthly cost and SLO verdict.

    ``options`` replaces the report options recorded in the sweep's ``sweep.json``.
    """
    root = Path(sweep_dir)
    table = root / "combined.parquet"
    if not table.is_file():
        raise InputError(str(root), "is not a sweep directory (no combined.parquet); run `workbench sweep` first")
    combined = read_parquet(table, ["point"], what="combined sweep table")
    if "status" in combined:
        combined = combined[combined["status"] == "ok"].reset_index(drop=True)
    if combined.empty or S.P99 not in combined:
        raise InputError(str(table), "has no successful points to report on")
    manifest = _manifest(root)
    base_file = manifest.get("base") if isinstance(manifest.get("base"), str) else None
    base_dir = Path(base_file).parent if base_file else root
    opts = options or parse_report_options(manifest.get("report"), str(root / "sweep.json"))
    dirs = {str(p): RunDir(root / str(p)) for p in combined["point"]}
    raw = [dirs[str(p)].record().scenario for p in combined["point"]]
    loaded = [recorded_scenario(s, base_dir=base_dir) for s in raw]
    prices = load_prices(opts.prices)
    combined["config"] = _labels(combined, [layout_of(sc)[0] for sc in loaded])
    base_scenario = _base_scenario(manifest, base_dir) if base_file else None
    combined = shape_costs(combined, loaded, prices, opts, table_bytes(base_scenario))
    judging = Judging.of(loaded[0])
    combined["meets_slo"], combined["robust"] = slo_verdicts(combined, judging)
    combined["load_level"] = load_levels(combined)
    combined["at_load"] = _at_load(combined)
    return SizingData(combined, dirs, judging, loaded[0].name, raw[0], base_scenario, root,
                      {str(p): sc for p, sc in zip(combined["point"], loaded, strict=True)}, opts, prices,
                      str(manifest.get("name", root.name)))


def shape_costs(combined: pd.DataFrame, scenarios: list[Scenario], prices: PriceTable, options: ReportOptions,
                data_bytes: float | None) -> pd.DataFrame:
    """``combined`` (one row per scenario) with each configuration's shape, instance and costs: the columns
    above from ``shape`` to ``cost``, and ``cluster_cost``. The one cost rule of the report, which the
    sizing search (:mod:`workbench.sizing`) also ranks shapes by before it simulates them."""
    frame = _shape_columns(combined, scenarios, prices, options)
    frame["cluster_cost"] = [total(bill(prices, sc, row, data_bytes))
                             for sc, (_, row) in zip(scenarios, frame.iterrows(), strict=True)]
    return frame


def table_bytes(sc: Scenario | None) -> float | None:
    """The table's segment bytes (one replica) from the workload's segments (``None``: unknown)."""
    data = workload_of(sc)
    if data is None or not data.has_segments():
        return None
    return float(data.segment_columns(["size_bytes"])["size_bytes"].clip(lower=0).sum())


def bill(prices: PriceTable, sc: Scenario, row: pd.Series, data_bytes: float | None) -> list[Part]:
    """The monthly bill of configuration ``row`` (scenario ``sc``), part by part
    (:func:`~workbench.report.cluster_cost.cluster_parts`)."""
    instance = prices.instances.get(str(row["instance"])) if row.get("instance") else None
    return cluster_parts(prices, servers=(sc.cluster.servers, instance), brokers=sc.cluster.brokers,
                         table_bytes=data_bytes, replication=sc.table.replication)


def workload_of(sc: Scenario | None) -> WorkloadDir | None:
    """The scenario's workload directory when it exists (the report reads its segments and queries)."""
    path = None if sc is None or sc.workload.data is None else sc.base_dir / sc.workload.data
    return WorkloadDir(path) if path is not None and path.is_dir() else None


def _base_scenario(manifest: Mapping[str, Any], base_dir: Path) -> Scenario | None:
    """The sweep's base scenario as ``sweep.json`` recorded it (resolved: table config and schema inlined),
    typed without validating it again; relative paths (the workload directory) resolve beside the base
    file. ``None`` for a sweep that recorded none."""
    resolved = manifest.get("base_resolved")
    return recorded_scenario(resolved, base_dir=base_dir) if isinstance(resolved, Mapping) else None


#: The report's ranking rule, stated once on page 1 (:func:`rank`).
RANKING_RULE = ("cheapest first; at equal cost, the configuration whose p99 interval ends lower (more margin under "
                "the SLO); then the one with fewer servers")


def cost_column(frame: pd.DataFrame) -> str:
    """The cost :func:`rank` orders by: the whole cluster's monthly cost when every row has one, else the
    servers', else server cores (``cost``)."""
    return next((c for c in ("cluster_cost", "monthly_cost") if c in frame and bool(frame[c].notna().all())), "cost")


def rank(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` in the report's order (:data:`RANKING_RULE`): the whole cluster's monthly cost when every
    row has one (else the servers', else server cores, ``cost``), then the upper end of the p99 interval
    (the number the SLO is judged on, so the margin under it), then fewer servers.

    >>> t = pd.DataFrame({"point": ["a", "b", "c"], "cost": [8, 8, 8], "servers": [4, 2, 4],
    ...                   "latency_ms.p99.value": [160.0, 162.0, 161.0],
    ...                   "latency_ms.p99.ci_high": [175.0, 172.0, 172.0]})
    >>> rank(t)["point"].tolist()
    ['b', 'c', 'a']
    """
    column = cost_column(frame)
    bound = frame[S.P99_HIGH].fillna(frame[S.P99]) if S.P99_HIGH in frame else frame[S.P99]
    servers = frame["servers"] if "servers" in frame else pd.Series(0, index=frame.index)
    keys = pd.DataFrame({"cost": frame[column], "bound": bound, "servers": servers},
                        index=frame.index).sort_values(["cost", "bound", "servers"], kind="stable")
    ordered: pd.DataFrame = frame.loc[keys.index]
    return ordered


def meeting(combined: pd.DataFrame, every_load: bool = False) -> pd.DataFrame:
    """Configurations that meet the SLO with every server up (across the model interval when the points
    carry it) at the load the report sizes for (at every load level with ``every_load``: the studies run
    each level's candidates in their failure case, as each level has its own answer), in the report's order."""
    ok = combined[combined["robust"] if "robust" in combined else combined["meets_slo"]]
    if "at_load" in ok and not every_load:
        ok = ok[ok["at_load"].astype(bool)]
    return rank(ok)


def recommend(combined: pd.DataFrame) -> tuple[pd.Series | None, pd.Series | None]:
    """The first configuration in the report's order (:func:`rank`) that meets the SLO and, when the table
    says which configurations survive their failure case (``survives``, :mod:`workbench.report.survival`),
    survives it; and the runner-up by the same rule.

    When the points carry the calibration's model interval, only configurations that meet the SLO across
    it too (``robust``) are candidates.
    """
    ordered = meeting(combined)
    if "survives" in ordered:
        ordered = ordered[ordered["survives"].map(lambda v: v is True or v is np.True_).astype(bool)]
    first = ordered.iloc[0] if len(ordered) else None
    second = ordered.iloc[1] if len(ordered) > 1 else None
    return first, second
