"""``simulate(scenario)``: build each replication's model from the scenario's sections, run it, collect records.

This module is the composition root of the engine: it is the one place that reads the whole
:class:`~workbench.scenario.Scenario`. Every part it builds receives only its own section (servers
their ``ServerSpec``, brokers their ``BrokerSpec``, GC its ``GCSpec``...), its own random stream and the
replication's SimPy environment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import simpy

from workbench.errors import InputError, ScenarioError, check_seed
from workbench.gcpause import cycle_collection_paused
from workbench.scenario import Scenario, load_scenario
from workbench.scenario.limits import check_work
from workbench.sim.engines import ENGINES, Replication, build_cluster
from workbench.sim.fast.engine import coverage
from workbench.sim.layout import Layout, build_layout
from workbench.sim.memory import Memory, server_memory
from workbench.sim.model import Window
from workbench.sim.plan import Plan, build_plan
from workbench.sim.planner import Planner, default_schema, logged_docs, logged_filter_entries
from workbench.sim.records import (
    ENGINE_LATENCY_COLUMNS,
    FAILURE_COLUMNS,
    GC_PAUSE_COLUMNS,
    SERVER_COLUMNS,
    WINDOW_COLUMNS,
    Result,
    frame,
)
from workbench.sim.routes import RouteCache
from workbench.sim.streams import Streams
from workbench.sim.tenant import TablePart, build_tenant_plan, check_tenant, merge_layouts, merge_memory, table_streams
from workbench.workload.directory import WorkloadDir, read_replay_queries
from workbench.workload.replay import scale_query_log

__all__ = ["build_cluster", "check_run", "choose_engine", "simulate", "workload_dir"]


def _replay_queries(sc: Scenario, data: Path | None) -> pd.DataFrame | None:
    if sc.workload.arrival.process != "replay":
        return None
    if data is None or not WorkloadDir(Path(data)).has_queries():
        raise ScenarioError("workload.arrival.process",
                            "replay needs a workload directory with queries.parquet (simulate --data DIR)")
    queries = read_replay_queries(data)
    speed = sc.workload.arrival.speed
    return queries if speed == 1 else scale_query_log(queries, speed, sc.simulation.duration_s)


def _plan_all(planner: Planner, replay: pd.DataFrame, horizon_s: float, data: Path) -> None:
    """Plan, before the run, every query the run will plan (those inside the horizon): SQL the model
    cannot read is one error naming the row, not an exception half-way through a replication."""
    for row, (arrival_s, sql) in enumerate(zip(replay["arrival_s"], replay["sql"], strict=True)):
        if float(arrival_s) >= horizon_s:
            return
        try:
            planner.plan(str(sql))
        except InputError as exc:
            raise InputError(str(WorkloadDir(Path(data)).queries_path),
                             f"sql (row {row}) cannot be planned: {exc}") from None


def _planner(sc: Scenario, layout: Layout, replay: pd.DataFrame | None, data: Path | None) -> Planner | None:
    """One planner for every replication (plans are deterministic: each SQL text is parsed and pruned once)."""
    if replay is None or data is None:
        return None
    planner = Planner(layout.segments, layout.docs, sc.table, sc.schema or default_schema(sc.table), layout.metadata,
                      logged_docs(replay), logged_filter_entries(replay))
    _plan_all(planner, replay, sc.simulation.duration_s, data)
    return planner


def workload_dir(sc: Scenario, data: Path | None) -> Path | None:
    """The workload directory a run reads: ``data`` when given, else the scenario's ``workload.data``
    (relative to the scenario's file), else none (a synthetic layout)."""
    return sc.base_dir / sc.workload.data if data is None and sc.workload.data is not None else data


def check_run(sc: Scenario, data: Path | None = None, *, data_to_come: bool = False) -> None:
    """Build everything :func:`simulate` builds before its first event, then drop it.

    ``validate`` and a sweep's pre-validation call this, so they reject exactly what a run would:
    Pinot's assignment of the segments (replicas or replica groups the servers cannot hold), the
    workload directory's tables, the engine choice, each server's memory (an upsert table's keys) and
    the parts' own checks. The plan and the cluster are built over a 1 ms horizon, so GC and crash
    schedules cost nothing. ``data_to_come``: a workload directory that does not exist yet
    (``workbench generate`` will write it) is not an error; the rest is checked without it. A scenario of
    several tables checks each table so (over its tenant's servers), and what the tenant model runs.
    """
    if sc.tables:
        check_tenant(sc)
        for view in sc.tables:
            check_run(view, data if len(sc.tables) == 1 else None, data_to_come=data_to_come)
        return
    data = workload_dir(sc, data)
    if data_to_come and data is not None and not Path(data).exists():
        data = None
    layout = build_layout(sc, data)
    check_work(float(len(layout.segments)), sc.limits, "segments", "workload.data", "segments")
    replay = _replay_queries(sc, data) if data is not None or not data_to_come else None
    if replay is not None:
        check_work(float(len(replay)) * sc.simulation.replications, sc.limits, "simulated_queries",
                   "workload.arrival.process", "replayed queries (the log's queries x replications)")
    choose_engine(sc)
    if data is None and data_to_come and sc.table.is_upsert and sc.cluster.gc.upsert_keys is None:
        return  # its keys come from the data generate will write
    probe = replace(sc, simulation=replace(sc.simulation, duration_s=0.001, warmup_s=0.0))
    streams = Streams.spawn(np.random.SeedSequence(0), layout.num_servers)
    planner = _planner(sc, layout, replay, data)
    plan = build_plan(probe, layout, streams, horizon_ms=1.0, replay=replay, planner=planner,
                      memory=server_memory(probe, layout, data))
    build_cluster(probe, layout, simpy.Environment(), streams, plan)


def choose_engine(sc: Scenario) -> tuple[str, str]:
    """The engine that runs ``sc`` (``simulation.engine``) and why, in one sentence."""
    asked = sc.simulation.engine
    outside = coverage(sc)
    if asked == "simpy":
        return "simpy", "simulation.engine is simpy"
    if outside is None:
        return "fast", "the compiled engine reproduces the SimPy engine exactly here"
    if asked == "fast":
        raise ScenarioError("simulation.engine", f"fast cannot reproduce this scenario exactly: {outside}; "
                                                 "use auto or simpy")
    return "simpy", f"SimPy, because {outside}"


def simulate(
    scenario: Scenario | str | Path | dict[str, Any],
    seed: int | None = None,
    *,
    data: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    threads: int = 1,
    ideal_state: Mapping[str, Mapping[str, str]] | None = None,
) -> Result:
    """Run every replication of ``scenario`` and return its records.

    Parameters
    ----------
    scenario
        A :class:`~workbench.scenario.Scenario`, or anything :func:`~workbench.load_scenario` reads.
    seed
        Overrides ``simulation.seed``. Replication ``r`` uses child ``r`` of ``SeedSequence(seed)``,
        so replications are independent and a run is reproducible.
    data
        A workload directory from ``workbench generate`` (or an import): its ``segments.parquet`` is
        the table's segments, and with ``workload.arrival.process: replay`` its ``queries.parquet``
        gives arrival times and SQL. Without it the scenario's ``workload.data`` (or its synthetic
        layout) is used.
    progress
        Called with (replications done, replications) after each replication (the CLI's progress bar).
    threads
        Threads the compiled engine runs servers on (servers are independent: the records are the same for
        any count). A sweep already runs one point per core, so it leaves this at 1.
    ideal_state
        Where the table's segments live (segment -> server -> state) instead of the assignment Pinot
        builds from scratch: the ideal state after a rebalance, for example (see :mod:`.layout`). For a
        scenario of several tables, every table's segments (their names differ; each table takes its own).
    """
    check_seed(seed)  # one check with the run verb's: the argument named, not numpy's bare message
    with cycle_collection_paused():  # a run makes no reference cycles (workbench.gcpause)
        return _simulate(scenario, seed, data, progress, threads, ideal_state)


@dataclass(frozen=True)
class _Tables:
    """What a run builds once for its tables: each table's part (:class:`~workbench.sim.tenant.TablePart`),
    their merged layout and memory, and each table's name (the ``table`` column's values)."""

    parts: tuple[TablePart, ...]
    layout: Layout
    memory: Memory
    names: tuple[str, ...]

    @classmethod
    def of(cls, sc: Scenario, data: Path | None, ideal_state: Mapping[str, Mapping[str, str]] | None) -> _Tables:
        views = sc.table_scenarios
        if len(views) > 1 and data is not None:
            raise InputError("data", "names one table's data; a scenario of several tables reads each table's "
                                     "workload.data (give it there)")
        parts, memories = [], []
        for view in views:
            own = workload_dir(view, data)
            layout = build_layout(view, own, ideal_state)
            replay = _replay_queries(view, own)
            parts.append(TablePart(view, layout, replay, _planner(view, layout, replay, own),
                                   RouteCache(layout, view.table, view.workload.query_options,
                                              view.cluster.broker.config)))
            memories.append(server_memory(view, layout, own))
        layouts = [p.layout for p in parts]
        return cls(tuple(parts), merge_layouts(layouts), merge_memory(memories, layouts, sc.cluster.gc),
                   tuple(v.table.table_name for v in views))

    def plan(self, sc: Scenario, child: np.random.SeedSequence, horizon_ms: float) -> tuple[Plan, Streams, np.ndarray]:
        """One replication's plan, the streams its engine draws from, and each query's table."""
        n = self.layout.num_servers
        if not sc.tables:  # the classic one-table form: exactly as it always ran
            streams = Streams.spawn(child, n)
            part = self.parts[0]
            plan = build_plan(sc, part.layout, streams, horizon_ms=horizon_ms, replay=part.replay,
                              planner=part.planner, memory=self.memory, routing=part.routing)
            return plan, streams, np.zeros(plan.num_queries, dtype=np.int32)
        streams_of = [table_streams(child, n, k) for k in range(len(self.parts))]
        plan, table = build_tenant_plan(sc, self.parts, self.layout, streams_of, horizon_ms=horizon_ms,
                                        memory=self.memory)
        return plan, streams_of[0], table


def _with_table(queries: pd.DataFrame, table: np.ndarray, names: tuple[str, ...]) -> pd.DataFrame:
    """The ``table`` column: each query's table name (by its ``query_id``), as a categorical (a code per row:
    a run of millions of queries keeps one byte per query for it)."""
    codes = table[queries["query_id"].to_numpy(dtype=np.int64)]
    of = pd.Categorical.from_codes(codes, categories=pd.Index(list(names), dtype=object))
    return queries.assign(table=pd.Series(of, index=queries.index))


def _simulate(scenario: Scenario | str | Path | dict[str, Any], seed: int | None, data: Path | None,
              progress: Callable[[int, int], None] | None, threads: int,
              ideal_state: Mapping[str, Mapping[str, str]] | None) -> Result:
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    check_tenant(sc)
    base_seed = sc.simulation.seed if seed is None else seed
    tables = _Tables.of(sc, data, ideal_state)
    layout, memory = tables.layout, tables.memory
    window = Window(sc.simulation.warmup_s * 1000.0, sc.simulation.duration_s * 1000.0)
    engine, reason = choose_engine(sc)
    execute = ENGINES[engine]
    queries, servers, pauses, windows, failures = [], [], [], [], []
    for rep, child in enumerate(np.random.SeedSequence(base_seed).spawn(sc.simulation.replications)):
        plan, streams, table = tables.plan(sc, child, window.horizon_ms)
        run = execute.run(Replication(sc, layout, plan, streams, window, rep, sc.simulation.records, threads))
        servers += run.servers
        pauses += run.pauses
        failures += run.failures
        windows.append(run.window)
        kept = run.queries if sc.simulation.records == "all" else run.queries[list(ENGINE_LATENCY_COLUMNS)]
        queries.append(_with_table(kept, table, tables.names))
        del plan
        if progress is not None:
            progress(rep + 1, sc.simulation.replications)
    return Result(
        queries=pd.concat(queries, ignore_index=True),
        servers=frame(servers, SERVER_COLUMNS),
        gc_pauses=frame(pauses, GC_PAUSE_COLUMNS),
        windows=frame(windows, WINDOW_COLUMNS),
        failures=frame(failures, FAILURE_COLUMNS),
        heap=memory.timeline,
        parameters={"scenario": sc.to_dict(), "seed": base_seed, "engine": engine, "engine_reason": reason,
                    "heap_at_s": memory.at_s, "upsert_keys_from": memory.source,
                    "upsert_keys": max((m.live.upsert_keys for m in memory.servers), default=0)},
    )
