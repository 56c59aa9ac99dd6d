"""The one path from a scenario to a run: validate, simulate, summarise, write the run directory.

Every caller that runs the model goes through :func:`run_scenario`: ``workbench simulate``, each sweep
point (API or notebook) and every study (:mod:`workbench.studies`: what-ifs, scale-out, comparisons,
uncertainty, back-tests). Composing simulate-then-summarise in one place keeps the records, the summary
and the files a run leaves identical whoever asked for it; :mod:`workbench.api` re-exports it. It sits
below the API so that studies can call it while the API calls the studies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from workbench.errors import check_seed
from workbench.io import check_output
from workbench.io.run_dir import SUMMARY_FILE, RunDir, RunRecord
from workbench.io.summary import Summary
from workbench.scenario import Scenario, load_scenario
from workbench.sim.records import Result

__all__ = ["SUMMARY_FILE", "check_seed", "resolve", "run_checked", "run_scenario", "segments_out_of_range",
           "servers_without_data", "write_run"]


def write_run(result: Result, out: str | Path, *, overwrite: bool = False, summary: Summary | None = None) -> RunRecord:
    """Write a run's Parquet tables and ``summary.json`` into ``out`` atomically; returns its record as the
    file holds it (tuples as lists, keys as strings, credentials redacted), as a resumed sweep reads it.

    ``summary`` is the run's summary statistics when the caller has them already (else they are
    computed here, once).
    """
    from workbench.analysis.stats import summarise

    stats = summary if summary is not None else summarise(result)
    return RunDir(Path(out)).write(result.tables(), _record(result, stats), overwrite=overwrite)


def _record(result: Result, summary: Summary) -> RunRecord:
    return RunRecord(scenario=result.parameters.get("scenario", {}), seed=result.parameters.get("seed"),
                     overrides=result.parameters.get("overrides", {}), summary=summary)


def run_scenario(
    scenario: Scenario | str | Path | Mapping[str, Any], out: str | Path | None, *,
    overrides: Mapping[str, Any] | None = None, seed: int | None = None, data: str | Path | None = None,
    base_dir: str | Path | None = None, overwrite: bool = False, progress: Callable[[int, int], None] | None = None,
    ideal_state: Mapping[str, Mapping[str, str]] | None = None,
) -> RunRecord:
    """Simulate a scenario, summarise it and write the run directory ``out``; returns its ``summary.json``
    record.

    Parameters
    ----------
    scenario
        A scenario, its file, or its data; validated once, with ``overrides`` applied first.
    out
        The run directory (Parquet records and ``summary.json``), written atomically. ``None`` writes
        nothing, for studies that only read the summary of many runs (a parameter-uncertainty draw);
        the record is then returned as computed, not as JSON would hold it.
    overrides
        Dotted-key overrides (``{"cluster.servers": 12}``), recorded in the summary.
    seed
        Simulation seed; ``None`` keeps ``simulation.seed``.
    data
        Workload directory (``workbench generate`` or an import); default ``workload.data``.
    base_dir
        Where relative paths of a mapping scenario point (a file's own directory otherwise).
    overwrite
        Replace an existing run directory.
    progress
        Called with (replications done, replications) after each replication.
    ideal_state
        Where the segments live instead of a fresh assignment (a rebalance's result), segment ->
        server -> state.
    """
    check_seed(seed)
    sc = resolve(scenario, overrides, base_dir)
    return run_checked(sc, out, overrides=overrides, seed=seed, data=data, overwrite=overwrite, progress=progress,
                       ideal_state=ideal_state)


def run_checked(sc: Scenario, out: str | Path | None, *, overrides: Mapping[str, Any] | None = None,
                seed: int | None = None, data: str | Path | None = None, overwrite: bool = False,
                progress: Callable[[int, int], None] | None = None,
                ideal_state: Mapping[str, Mapping[str, str]] | None = None) -> RunRecord:
    """:func:`run_scenario` of a scenario already validated with its ``overrides`` applied (a sweep
    point's): ``overrides`` are only recorded, so the point is not validated a second time."""
    from workbench.analysis.stats import summarise
    from workbench.sim.run import simulate

    check_seed(seed)
    if out is not None:
        check_output(out, overwrite=overwrite)
    result = simulate(sc, seed, data=Path(data) if data is not None else None, progress=progress,
                      ideal_state=ideal_state)
    result.parameters["overrides"] = dict(overrides or {})
    given = Path(data) if data is not None else None
    if len(sc.tables) > 1:
        idle, why = _tenant_servers_without_data(sc, ideal_state)
        segments = ""
    else:
        layout, directory = _layout(sc, given, ideal_state)
        (idle, why), segments = _idle(sc, layout), _out_of_range(sc, layout, directory)
    result.parameters["servers_without_data"], result.parameters["servers_without_data_why"] = list(idle), why
    result.parameters["segments_out_of_range"] = segments
    summary = summarise(result, slo=sc.slo)
    if out is None:
        return _record(result, summary)
    return write_run(result, out, overwrite=overwrite, summary=summary)


def resolve(scenario: Scenario | str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None,
            base_dir: str | Path | None) -> Scenario:
    """The validated scenario of a run: loaded (with ``overrides``) exactly once."""
    root = Path(base_dir) if base_dir is not None else None
    if isinstance(scenario, Scenario):
        return scenario.with_overrides(overrides) if overrides else scenario
    return load_scenario(scenario, base_dir=root, overrides=overrides)


def servers_without_data(sc: Scenario, data: Path | None = None,
                         ideal_state: Mapping[str, Mapping[str, str]] | None = None) -> tuple[tuple[str, ...], str]:
    """The servers Pinot's assignment gives no segment of the table, and one sentence naming them with the
    shape that would use them (``""`` when every server holds data).

    A server with no segment answers no query: it costs money and adds nothing, and a sizing that counts
    it overstates the cluster. The assignment is Pinot's own (:func:`workbench.sim.layout.build_layout`);
    before ``workbench generate`` has written a realtime table's data, the segments it will write are
    assigned instead (:func:`_segments_to_come`). An offline table whose data is still to come is not
    judged (``((), "")``).
    """
    if len(sc.tables) > 1:
        return _tenant_servers_without_data(sc, ideal_state)
    layout, _ = _layout(sc, data, ideal_state)
    return _idle(sc, layout)


def segments_out_of_range(sc: Scenario, data: Path | None = None,
                          ideal_state: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """One sentence on the table's segments far outside Pinot's comfortable range (their median size, the
    most on one server), naming the figure and what to change; ``""`` when they are within it, for a
    scenario of several tables, and for an offline table whose data is still to come
    (:mod:`workbench.sim.segment_range`)."""
    if len(sc.tables) > 1:
        return ""
    layout, directory = _layout(sc, data, ideal_state)
    return _out_of_range(sc, layout, directory)


def _out_of_range(sc: Scenario, layout: Any, directory: Path | None) -> str:
    from workbench.sim.segment_range import segment_sizes
    from workbench.sim.segment_range import segments_out_of_range as judge

    if layout is None or (directory is None and sc.workload.synthetic is None and sc.workload.generate is None):
        return ""
    present = directory is not None and directory.exists()
    sizes = segment_sizes(layout, directory if present else None)
    return judge(sc, layout, sizes, generated=present or sc.workload.generate is not None)


def _layout(sc: Scenario, data: Path | None, ideal_state: Mapping[str, Mapping[str, str]] | None,
            ) -> tuple[Any, Path | None]:
    """The table's layout as Pinot would assign it (or as ``workbench generate`` will write it), and the
    workload directory it was read from."""
    from workbench.sim.layout import build_layout
    from workbench.sim.run import workload_dir

    directory = workload_dir(sc, data)
    if sc.workload.generate is not None and (directory is None or not directory.exists()):
        return _segments_to_come(sc), directory
    return build_layout(sc, directory, ideal_state), directory


def _idle(sc: Scenario, layout: Any) -> tuple[tuple[str, ...], str]:
    if layout is None:
        return (), ""
    holding = {server for states in layout.ideal_state.values() for server in states}
    idle = tuple(s for s in layout.servers if s not in holding)
    if not idle:
        return (), ""
    used = len(layout.servers) - len(idle)
    return idle, f"{_named(idle)} hold no data: {_shape(sc, layout.partitions, used, len(layout.servers))}"


def _tenant_servers_without_data(sc: Scenario, ideal_state: Mapping[str, Mapping[str, str]] | None,
                                 ) -> tuple[tuple[str, ...], str]:
    """:func:`servers_without_data` of a scenario of several tables: the servers no table gives a segment
    (on ``ideal_state``, every table's segments, when a rebalance placed them)."""
    holding: set[str] = set()
    for view in sc.tables:
        idle, _ = servers_without_data(view, None, ideal_state)
        holding |= {f"Server_{i}" for i in range(sc.cluster.servers)} - set(idle)
    idle = tuple(f"Server_{i}" for i in range(sc.cluster.servers) if f"Server_{i}" not in holding)
    if not idle:
        return (), ""
    return idle, (f"{_named(idle)} hold no data: no table of the scenario places a segment on them (each table "
                  "lands on its tenant's servers, cluster.tenants); give them to a tenant with tables, or run fewer "
                  "servers")


def _segments_to_come(sc: Scenario) -> Any:
    """The layout ``workbench generate`` will write for a realtime table, as Pinot would assign it: per
    stream partition, its rows over ``segment_rows`` (or its span over ``segment_time_s``, whichever seals
    more) segments, or with ``segment_size`` the segments Pinot's size-based thresholds give at the partition's
    mean rate (:func:`workbench.sim.segment_range.size_based_partition_rows`), the last one consuming; ``None`` for an
    offline table (its files are not known yet)."""
    import math

    import numpy as np

    from workbench.sim.layout import Layout, assign_layout

    spec, table = sc.workload.generate, sc.table
    if spec is None or table.table_type != "REALTIME":
        return None
    if spec.segment_size is not None:  # size-based: Pinot's successive thresholds at the partition's mean rate
        from workbench.sim.segment_range import size_based_partition_rows

        steps = size_based_partition_rows(sc)
        per = len(steps)
        rows = np.tile(steps, spec.partitions)
    else:
        by_rows = math.ceil(spec.events / spec.partitions / spec.segment_rows)
        by_time = math.ceil(spec.span_s / spec.segment_time_s) if spec.segment_time_s else 1
        per = max(1, by_rows, by_time)
        rows = np.full(per * spec.partitions, spec.events / spec.partitions / per)  # each one's share
    names = tuple(f"{table.table_name}__{p}__{n}__0" for p in range(spec.partitions) for n in range(per))
    partitions = np.repeat(np.arange(spec.partitions), per)
    consuming = np.tile(np.arange(per) == per - 1, spec.partitions)
    servers = tuple(f"Server_{i}" for i in range(sc.cluster.servers))
    ideal = assign_layout(table, tuple(servers[i] for i in sc.table_servers()), names, consuming, partitions)
    index = {s: i for i, s in enumerate(servers)}
    replicas = tuple(tuple(index[s] for s in ideal[n]) for n in names)
    return Layout(servers, names, rows, consuming, ideal, replicas, None, partitions)


def _named(servers: tuple[str, ...]) -> str:
    shown = ", ".join(servers[:6]) + (f" and {len(servers) - 6} more" if len(servers) > 6 else "")
    return f"{len(servers)} server{'s' if len(servers) > 1 else ''} ({shown})"


def _shape(sc: Scenario, partitions: Any, used: int, servers: int) -> str:
    """Why only ``used`` of ``servers`` hold data, and the shape that would use them all."""
    table, replicas = sc.table, sc.table.replication
    if sc.table.instance_assignment_config_map:
        return (f"the table's instanceAssignmentConfigMap places its segments on {used} of {servers} servers; "
                f"size its replica groups (numReplicaGroups x numInstancesPerReplicaGroup) to {servers} servers, "
                f"or run {used} servers")
    count = len(set(int(p) for p in partitions)) if partitions is not None else 0
    what = "stream partitions" if table.table_type == "REALTIME" else "segments"
    fit = -(-servers // replicas)  # ceil: the partitions that would give every server a replica
    return (f"the table's {count} {what} x {replicas} replica{'s' if replicas > 1 else ''} (segmentsConfig) place "
            f"data on {used} of {servers} servers; run {used} servers, or give the table at least {fit} {what} "
            f"so that {what} x replicas covers {servers} servers")
