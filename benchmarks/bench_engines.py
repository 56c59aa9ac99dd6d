"""Benchmark: the compiled engine against the SimPy engine, and the headline sweep of 500M simulated queries.

The SimPy engine is the baseline; every ratio is measured in this process, at the same moment, so it
means something on a noisy shared machine (the load average is printed with the results). A run has
three stages (:func:`workbench.simulate`): the *plan* (timing-free draws: arrivals, routing, service
work, network delays, GC and crash schedules; for a replayed workload also parsing and pruning each
distinct SQL text), shared by both engines; the *execution* (the queueing in time), which is what the
compiled engine replaces; and the records. Four parts (and 1c, ``--adaptive-only`` alone: fan-out 12 with
HYBRID adaptive selection routed live, G1 pauses and one slow server, both engines on one plan):

1. **Fan-out 12**: 12 single-core servers, exponential service (10 ms), 50 queries/s, work-driven G1
   pauses. Both engines execute the *same plan* of ``--simpy-queries`` queries (their records are
   compared), then each runs :func:`~workbench.simulate` end to end. The compiled engine then runs
   ``--queries`` queries: plan and execution timed apart, execution on one thread and on ``--threads``
   (servers are independent; the records are the same for any count).
2. **The demo's replayed workload** (``scenarios/default.yaml``, data from its ``workload.generate``
   section, generated here without Spark): the same two measures, and where the compiled engine's time
   goes (parsing and pruning SQL, the rest of the plan, execution).
3. **The headline sweep**: 100 configurations (servers x arrival rate x collector) x 5 replications x
   1M queries each through :func:`workbench.sweep.run_sweep` on a local pool (one worker per core),
   records and summaries written. By default ``--sweep-points`` configurations at the grid's mean
   fan-out (a query costs in proportion to the servers it fans out to) are timed with 1,000 queries per
   replication (the fixed cost: the workers' start-up) and at full size; the full sweep's time is the
   fixed cost plus 100 times the rest per configuration. ``--full-sweep`` runs it all.
4. **Peak memory** of one ``--queries`` replication (``records: latency``, the sweep's setting, and
   ``all``), each in a fresh process: peak resident memory (``VmHWM``) and tracemalloc's peak (numpy
   arrays and Python objects; memory the compiled kernels allocate is not traced).

Run: ``python benchmarks/bench_engines.py`` (about two minutes on the 2-core machine);
``--queries N``, ``--simpy-queries M``, ``--threads T``, ``--sweep-points P`` (even, up to 100),
``--full-sweep`` (all 500M queries), ``--skip-demo``, ``--skip-sweep``, ``--skip-memory``, ``--adaptive-only``.
"""

from __future__ import annotations

import argparse
import copy
import multiprocessing
import os
import resource
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import simpy
from _timing import best_of

from workbench.scenario import Scenario, load_scenario
from workbench.sim.fast.engine import run_fast
from workbench.sim.layout import Layout, build_layout
from workbench.sim.memory import server_memory
from workbench.sim.model import ClusterModel, Window
from workbench.sim.plan import Plan, build_plan
from workbench.sim.planner import Planner, default_schema
from workbench.sim.routes import RouteCache
from workbench.sim.run import build_cluster, simulate
from workbench.sim.streams import Streams
from workbench.workload.directory import read_replay_queries

ROOT = Path(__file__).resolve().parents[1]
K, QPS, MEAN_MS = 12, 50.0, 10.0
#: The issue's goals: x SimPy on fan-out 12, execution q/s, x SimPy on the demo, the 500M sweep in s.
GOAL_RATIO, GOAL_QPS, GOAL_DEMO_RATIO, GOAL_SWEEP_S = 50.0, 1_000_000.0, 30.0, 600.0
#: Issue #28's goal for adaptive selection routed live: x SimPy on fan-out 12 (HYBRID, G1, one slow server).
GOAL_ADAPTIVE_RATIO = 30.0
#: The headline grid: 5 shapes x 10 loads x 2 collectors = 100 configurations, 5 x 1M queries each.
SWEEP_SERVERS = (8, 10, 12, 14, 16)
SWEEP_QPS = tuple(round(float(q), 2) for q in np.linspace(20.0, 80.0, 10))
SWEEP_GC = ("g1", "zgc")
SWEEP_REPLICATIONS, SWEEP_QUERIES = 5, 1_000_000
#: Compared columns of the same-plan check (floats to 1e-9 relative, the rest exactly).
CHECKED = ("query_id", "latency_ms", "partial", "gc_delayed", "error_codes", "queue_wait_ms")


def fanout(queries: int, seed: int = 1, records: str = "all") -> dict[str, Any]:
    """The fan-out-12 scenario with ``queries`` arrivals expected (no warm-up)."""
    return {
        "cluster": {"servers": K, "server": {"cores": 1}, "network": {"latency_ms": 0.1}, "gc": {"collector": "g1"}},
        "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000}, "arrival": {"qps": QPS}},
        "service": {"model": "exponential", "mean_ms": MEAN_MS},
        "simulation": {"duration_s": queries / QPS, "warmup_s": 0, "replications": 1, "seed": seed,
                       "records": records},
    }


def timed(run: Callable[[], Any]) -> tuple[float, Any]:
    """Wall time of one call, s, and what it returned."""
    start = time.perf_counter()
    out = run()
    return time.perf_counter() - start, out


def rate(n: float, seconds: float) -> str:
    return f"{n / seconds:12,.0f} q/s"


def verdict(value: float, goal: float) -> str:
    return "met" if value >= goal else "NOT met"


class OnePlan:
    """Replication 0 of a scenario, planned as :func:`simulate` plans it (same seed, streams and order)."""

    def __init__(self, sc: Scenario, data: Path | None) -> None:
        self.sc, self.layout = sc, build_layout(sc, data)
        self.window = Window(sc.simulation.warmup_s * 1000.0, sc.simulation.duration_s * 1000.0)
        replay = read_replay_queries(data) if data is not None else None
        planner, self.parse_s, self.texts = None, 0.0, 0
        if replay is not None:
            planner = Planner(self.layout.segments, self.layout.docs, sc.table,
                              sc.schema or default_schema(sc.table), self.layout.metadata)
            texts = replay["sql"][replay["arrival_s"] < sc.simulation.duration_s].astype(str).unique().tolist()
            self.parse_s, _ = timed(lambda: [planner.plan(t) for t in texts])
            self.texts = len(texts)
        self.streams = Streams.spawn(np.random.SeedSequence(sc.simulation.seed).spawn(1)[0], self.layout.num_servers)
        memory = server_memory(sc, self.layout, data)
        horizon = self.window.horizon_ms
        self.plan_s, self.plan = timed(lambda: build_plan(sc, self.layout, self.streams, horizon_ms=horizon,
                                                          replay=replay, planner=planner, memory=memory))
        self._after_plan = copy.deepcopy(self.streams)  # live (adaptive) routing draws during execution

    def fresh(self) -> Streams:
        """The streams as the plan left them: each execution draws from its own copy."""
        return copy.deepcopy(self._after_plan)

    def simpy(self) -> tuple[float, pd.DataFrame]:
        """The SimPy engine's execution of the plan: seconds and its ``queries`` table."""
        env, streams = simpy.Environment(), self.fresh()
        model = ClusterModel(env, streams, build_cluster(self.sc, self.layout, env, streams, self.plan),
                             self.plan, self.window)
        seconds, _ = timed(model.run)
        return seconds, model.records.frame(0)

    def fast(self, threads: int = 1, repeats: int = 1) -> float:
        """Best execution time of the compiled engine on the plan, s."""
        return best_of(lambda: run_fast(self.sc, self.layout, self.plan, self.window, 0,
                                        records=self.sc.simulation.records, parallel=threads,
                                        streams=self.fresh()), repeats)


def check_same(reference: pd.DataFrame, sc: Scenario, layout: Layout, plan: Plan, window: Window,
               streams: Streams) -> None:
    """The compiled engine's records of the plan are the SimPy engine's (the contract, spot-checked here)."""
    mine = run_fast(sc, layout, plan, window, 0, streams=streams).queries
    assert len(mine) == len(reference), (len(mine), len(reference))
    for column in CHECKED:
        x, y = reference[column].to_numpy(), mine[column].to_numpy()
        if x.dtype.kind == "f":
            np.testing.assert_allclose(y, x, rtol=1e-9, atol=1e-9, err_msg=column)
        else:
            assert list(pd.Series(x).astype(str)) == list(pd.Series(y).astype(str)), column


def same_plan(sc: Scenario, data: Path | None, label: str) -> tuple[float, OnePlan]:
    """Both engines execute one plan; prints their rates and returns the ratio (fast / SimPy)."""
    one = OnePlan(sc, data)
    simpy_s, reference = one.simpy()
    check_same(reference, one.sc, one.layout, one.plan, one.window, one.fresh())  # also compiles (or loads) the kernels
    fast_s = one.fast(repeats=3)
    n = len(reference)
    sql = f"; parsing and pruning {one.texts:,} distinct SQL texts {one.parse_s:.2f} s more" if one.texts else ""
    print(f"  {label}: plan {one.plan_s:.2f} s for {one.plan.num_queries:,} queries{sql} (shared by both engines)")
    ratio = simpy_s / fast_s
    print(f"  execution, same plan:  SimPy {rate(n, simpy_s)}   fast {rate(n, fast_s)}   {ratio:6.1f}x "
          f"(same records)")
    return ratio, one


def end_to_end(sc: Scenario, data: Path | None, label: str) -> tuple[float, float]:
    """``simulate()`` on each engine (plan, execution, records): prints the rates; the ratio and fast's seconds."""
    simpy_s, a = timed(lambda: simulate(sc.with_overrides({"simulation.engine": "simpy"}), data=data))
    fast_s, b = timed(lambda: simulate(sc.with_overrides({"simulation.engine": "fast"}), data=data))
    assert a.parameters["engine"] == "simpy" and b.parameters["engine"] == "fast"
    assert len(a.queries) == len(b.queries)
    n = len(a.queries)
    print(f"  {label}:  SimPy {rate(n, simpy_s)}   fast {rate(n, fast_s)}   {simpy_s / fast_s:6.1f}x")
    return simpy_s / fast_s, fast_s


def part_fanout(args: argparse.Namespace) -> None:
    print(f"--- 1. fan-out {K}: one core per server, exponential service {MEAN_MS:.0f} ms, {QPS:.0f} q/s, "
          f"work-driven G1 pauses")
    sc = load_scenario(fanout(args.simpy_queries))
    ratio, _ = same_plan(sc, None, f"{args.simpy_queries:,} queries")
    e2e, _ = end_to_end(sc, None, "end to end, simulate()")
    big_sc = load_scenario(fanout(args.queries, records="latency"))
    first_s = OnePlan(big_sc, None).plan_s  # fresh memory is slow to touch on a virtual machine: shown apart
    big = OnePlan(big_sc, None)
    n = big.plan.num_queries
    print(f"  fast, {n:,} queries (records: latency): plan {big.plan_s:.2f} s ({rate(n, big.plan_s).strip()}; "
          f"{first_s:.2f} s the first time in this process)")
    best = 0.0
    for threads in sorted({1, args.threads}):
        seconds = big.fast(threads, repeats=2)
        best = max(best, n / seconds)
        print(f"    execution, {threads} thread(s): {seconds:.2f} s  {rate(n, seconds)}")
    e2e_big, _ = end_to_end_fast(big.sc, args.threads)
    print(f"    end to end, simulate(), {args.threads} thread(s): {rate(n, e2e_big)}")
    print(f"  goals: >= {GOAL_RATIO:.0f}x SimPy: {verdict(min(ratio, e2e), GOAL_RATIO)} (execution {ratio:.0f}x, "
          f"end to end {e2e:.0f}x); >= {GOAL_QPS:,.0f} q/s executed: {verdict(best, GOAL_QPS)} ({best:,.0f})")
    del big


def part_slow(args: argparse.Namespace) -> None:
    """Fan-out 12 with one server slow (x1.5 all run): the same plan on both engines (records compared)."""
    print(f"--- 1b. fan-out {K} with one slow server (Server_3 x1.5, the whole run: 75% busy), G1 pauses")
    spec = fanout(args.simpy_queries)
    spec["cluster"]["failures"] = {"slow": [{"server": "Server_3", "factor": 1.5}]}
    same_plan(load_scenario(spec), None, f"{args.simpy_queries:,} queries")


def part_adaptive(args: argparse.Namespace) -> None:
    """Fan-out 12 with HYBRID adaptive selection (routed live), replication 2, G1 pauses and one slow server
    (x5 all run): the same plan on both engines (records compared)."""
    print(f"--- 1c. fan-out {K}, HYBRID adaptive selection (replication 2), G1 pauses, Server_3 x5 the whole run")
    spec = adaptive_fanout(args.simpy_queries)
    ratio, _ = same_plan(load_scenario(spec), None, f"{args.simpy_queries:,} queries")
    print(f"  goal >= {GOAL_ADAPTIVE_RATIO:.0f}x SimPy: {verdict(ratio, GOAL_ADAPTIVE_RATIO)}")


def adaptive_fanout(queries: int) -> dict[str, Any]:
    """:func:`fanout` with HYBRID adaptive selection over two replicas and one server five times slower."""
    spec = fanout(queries)
    spec["table"] = {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}}
    spec["cluster"]["failures"] = {"slow": [{"server": "Server_3", "factor": 5}]}
    spec["cluster"]["broker"] = {"config": {"pinot.broker.adaptive.server.selector.type": "HYBRID",
                                            "pinot.broker.adaptive.server.selector.enable.stats.collection": True}}
    return spec


def end_to_end_fast(sc: Scenario, threads: int) -> tuple[float, int]:
    """``simulate()`` on the compiled engine alone: seconds and queries recorded."""
    seconds, result = timed(lambda: simulate(sc.with_overrides({"simulation.engine": "fast"}), threads=threads))
    return seconds, len(result.queries)


def stages(sc: Scenario, data: Path) -> dict[str, float]:
    """The compiled engine's run of a replayed scenario, stage by stage as :func:`simulate` runs it (one
    planner and one route cache for the run, a plan and an execution per replication): seconds per stage."""
    out = dict.fromkeys(("read", "parse", "plans", "execution"), 0.0)
    start = time.perf_counter()
    layout, replay = build_layout(sc, data), read_replay_queries(data)
    memory = server_memory(sc, layout, data)
    window = Window(sc.simulation.warmup_s * 1000.0, sc.simulation.duration_s * 1000.0)
    out["read"] = time.perf_counter() - start
    planner = Planner(layout.segments, layout.docs, sc.table, sc.schema or default_schema(sc.table), layout.metadata)
    out["parse"], _ = timed(lambda: [planner.plan(str(t)) for t in
                                     replay["sql"][replay["arrival_s"] < sc.simulation.duration_s]])
    routing = RouteCache(layout, sc.table, sc.workload.query_options, sc.cluster.broker.config)
    for rep, child in enumerate(np.random.SeedSequence(sc.simulation.seed).spawn(sc.simulation.replications)):
        streams = Streams.spawn(child, layout.num_servers)
        start = time.perf_counter()
        plan = build_plan(sc, layout, streams, horizon_ms=window.horizon_ms, replay=replay, planner=planner,
                          memory=memory, routing=routing)
        out["plans"] += time.perf_counter() - start
        start = time.perf_counter()
        run_fast(sc, layout, plan, window, rep, records=sc.simulation.records)
        out["execution"] += time.perf_counter() - start
    return out


def part_demo(args: argparse.Namespace) -> None:
    from workbench.workload.pure import generate_local

    print("--- 2. the demo's replayed workload (scenarios/default.yaml)")
    base = load_scenario(ROOT / "scenarios" / "default.yaml")
    spec = base.workload.generate
    assert spec is not None
    with tempfile.TemporaryDirectory(prefix="bench-engines-") as tmp:
        data = Path(tmp) / "data"
        gen_s, _ = timed(lambda: generate_local(spec, data, table=base.table.table_name,
                                                table_config=base.table, progress=False))
        print(f"  workload generated without Spark in {gen_s:.1f} s")
        one_rep = base.with_overrides({"simulation.replications": 1})
        ratio, _ = same_plan(one_rep, data, f"{base.simulation.duration_s:.0f} s of replay, replication 0")
        reps = base.simulation.replications
        e2e, fast_s = end_to_end(base, data, f"end to end, simulate(), {reps} replications")
        split = stages(base, data)
        print(f"  the compiled engine's run, stage by stage ({sum(split.values()):.2f} s; simulate() took "
              f"{fast_s:.2f} s with the records): reading the data {split['read']:.2f} s, parsing and pruning SQL "
              f"{split['parse']:.2f} s (once per run), {reps} plans {split['plans']:.2f} s (routes cached across "
              f"replications), {reps} executions {split['execution']:.2f} s")
        print(f"  goal: >= {GOAL_DEMO_RATIO:.0f}x SimPy end to end: {verdict(e2e, GOAL_DEMO_RATIO)} ({e2e:.1f}x); "
              f"execution alone {ratio:.0f}x: the stages both engines share bound the end-to-end ratio")


def sweep_points() -> list[dict[str, Any]]:
    """The headline grid's 100 configurations, each ``SWEEP_REPLICATIONS`` x ``SWEEP_QUERIES`` queries."""
    return [{"cluster.servers": servers, "workload.arrival.qps": qps, "cluster.gc.collector": gc,
             "simulation.duration_s": round(SWEEP_QUERIES / qps + 1.0, 3),
             "simulation.replications": SWEEP_REPLICATIONS}
            for servers in SWEEP_SERVERS for qps in SWEEP_QPS for gc in SWEEP_GC]


def representative(grid: list[dict[str, Any]], count: int) -> list[dict[str, Any]]:
    """``count`` configurations at the grid's mean fan-out (the middle shape), loads spread over the grid,
    both collectors in turn."""
    mean = SWEEP_SERVERS[len(SWEEP_SERVERS) // 2]
    middle = [p for p in grid if p["cluster.servers"] == mean]
    loads = [SWEEP_QPS[int(i)] for i in np.linspace(0, len(SWEEP_QPS) - 1, max(1, count // 2) + 2)[1:-1]]
    chosen = [p for p in middle if p["workload.arrival.qps"] in loads]
    return chosen[:count]


def timed_sweep(points: list[dict[str, Any]], workers: int, queries: int = SWEEP_QUERIES) -> float:
    """Wall time of a fresh sweep of ``points`` with ``queries`` per replication
    (:func:`workbench.sweep.run_sweep`, every record and summary written), s."""
    from workbench.sweep import run_sweep
    from workbench.sweep.spec import parse_sweep

    base = fanout(1000, records="latency")
    base["simulation"] = {**base["simulation"], "warmup_s": 1}
    sized = [{**p, "simulation.duration_s": round(queries / p["workload.arrival.qps"] + 1.0, 3)} for p in points]
    spec = parse_sweep({"name": "bench-engines", "base": base, "points": sized})
    with tempfile.TemporaryDirectory(prefix="bench-sweep-") as tmp:
        seconds, table = timed(lambda: run_sweep(spec, Path(tmp) / "out", parallel=workers))
    assert (table["status"] == "ok").all(), table[["point", "error"]]
    n = len(points) * SWEEP_REPLICATIONS * queries
    shown = ", ".join(sorted({f"{p['workload.arrival.qps']:g} q/s {p['cluster.gc.collector']}" for p in points}))
    print(f"  {len(points):3d} configuration(s) x {SWEEP_REPLICATIONS} x {queries:,} queries "
          f"({n / 1e6:,.2f}M{'' if len(points) == len(sweep_points()) else '; ' + shown}): {seconds:6.1f} s "
          f"end to end, {n / seconds:,.0f} simulated q/s")
    return seconds


def part_sweep(args: argparse.Namespace) -> None:
    """Runs the sweep, or a representative part of it and extrapolates; prints the times."""
    grid = sweep_points()
    workers = os.cpu_count() or 1
    print(f"--- 3. sweep of {len(grid)} configurations x {SWEEP_REPLICATIONS} replications x {SWEEP_QUERIES:,} "
          f"queries, {workers} worker processes (start-up, pre-validation, plans, execution, records written)")
    if args.full_sweep:
        seconds = timed_sweep(grid, workers)
        print(f"  the full sweep: {seconds / 60:.1f} min (goal < {GOAL_SWEEP_S / 60:.0f} min: "
              f"{verdict(GOAL_SWEEP_S, seconds)})")
        return
    chosen = representative(grid, args.sweep_points)
    fixed = timed_sweep(chosen, workers, queries=1000)
    seconds = timed_sweep(chosen, workers)
    per_point = (seconds - fixed) / len(chosen)
    estimate = fixed + per_point * len(grid)
    print(f"  extrapolated: the workers' start-up and the sweep's own work ({fixed:.1f} s, the same points with "
          f"1,000 queries) plus {per_point:.1f} s per configuration (the rest of the full-size run, per "
          f"configuration) x {len(grid)} = {estimate / 60:.1f} min (goal < {GOAL_SWEEP_S / 60:.0f} min: "
          f"{verdict(GOAL_SWEEP_S, estimate)}); the configurations timed fan out to the grid's mean "
          f"({SWEEP_SERVERS[2]} servers); --full-sweep measures it")


def high_water_mib() -> float:
    """This process's peak resident memory (``VmHWM``), MiB. Unlike ``getrusage``'s ``ru_maxrss``, it
    counts only this program (a spawned process inherits its parent's size as the floor of the latter)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return float(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one_replication_memory(queries: int, records: str) -> tuple[float, float, float, float]:
    """In a fresh process: resident memory after a warm-up run, the peak over one replication of ``queries``
    fan-out-12 queries, and tracemalloc's peak over it (numpy arrays and Python objects), MiB; and the
    replication's seconds (tracemalloc slows Python's allocations)."""
    simulate(load_scenario(fanout(2000, records=records)))
    before = high_water_mib()
    tracemalloc.start()
    seconds, result = timed(lambda: simulate(load_scenario(fanout(queries, records=records))))
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(result.queries) > 0.98 * queries
    return before, high_water_mib(), traced / 2**20, seconds


def part_memory(args: argparse.Namespace) -> None:
    n = args.queries
    print(f"--- 4. peak memory of one {n:,}-query replication (fan-out {K}, fast engine, a fresh process each)")
    for records in ("latency", "all"):
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
            before, peak, traced, seconds = pool.submit(one_replication_memory, n, records).result()
        print(f"  records: {records:7s}  peak resident {peak:6,.0f} MiB ({peak - before:5,.0f} MiB above the "
              f"process after imports and a warm-up run); tracemalloc peak {traced:5,.0f} MiB ({seconds:.1f} s)")
    print(f"  (for scale: the latency array alone is {n * 8 / 2**20:.0f} MiB)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", type=int, default=1_000_000, help="fast engine and memory: queries per run")
    p.add_argument("--simpy-queries", type=int, default=20_000, help="queries both engines run")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="fast engine threads (also 1)")
    p.add_argument("--sweep-points", type=int, default=2,
                   help="configurations of the timed sweep (default 2: one per worker on 2 cores)")
    p.add_argument("--full-sweep", action="store_true", help="run all 100 x 5 x 1M (ten minutes or more)")
    p.add_argument("--skip-demo", action="store_true")
    p.add_argument("--skip-sweep", action="store_true")
    p.add_argument("--skip-memory", action="store_true")
    p.add_argument("--adaptive-only", action="store_true", help="only part 1c (adaptive selection, routed live)")
    args = p.parse_args()
    start = time.perf_counter()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    if args.adaptive_only:
        part_adaptive(args)
        return
    part_fanout(args)
    part_slow(args)
    part_adaptive(args)
    if not args.skip_demo:
        part_demo(args)
    if not args.skip_sweep:
        part_sweep(args)
    if not args.skip_memory:
        part_memory(args)
    print(f"peak resident memory of this process: {high_water_mib():,.0f} MiB; "
          f"{time.perf_counter() - start:.0f} s in all; load average at end: "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":  # required: sweep and memory workers are spawned and import this file
    main()
