"""Benchmark: the cluster model against a bare SimPy fork-join written the obvious way.

Both simulate Poisson queries fanned out to 12 single-core servers with exponential service, in this
process, on the same machine and at the same moment, so the printed ratio is meaningful even on a
noisy shared machine. The model runs with GC pauses on, once per execution model (``pinot``: runner and
worker pools on shared cores; ``fcfs_threads``: the simplification). Run:
``python benchmarks/bench_model.py [N]``; ``--before REV`` also runs this benchmark as it was at git
revision REV (in a temporary worktree, in a subprocess, right after), so the cost of a change to the
engine's semantics is printed in events and queries per second; ``--memory 1000000`` measures 1M
simulated queries with their records.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import simpy

from workbench.scenario import load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.model import ClusterModel, Window
from workbench.sim.plan import build_plan
from workbench.sim.run import build_cluster
from workbench.sim.streams import Streams

K, QPS, MEAN_MS = 12, 50.0, 10.0


def bare_forkjoin(n_queries: int, seed: int = 1) -> tuple[float, int]:
    """Resource request/release per server plus all_of per query; returns (seconds, events)."""
    env = simpy.Environment()
    servers = [simpy.Resource(env, capacity=1) for _ in range(K)]
    rng = np.random.default_rng(seed)
    latencies: list[float] = []

    def task(server: simpy.Resource) -> Any:
        with server.request() as req:
            yield req
            yield env.timeout(rng.exponential(MEAN_MS))

    def query() -> Any:
        start = env.now
        yield env.all_of([env.process(task(s)) for s in servers])
        latencies.append(env.now - start)

    def arrivals() -> Any:
        for _ in range(n_queries):
            yield env.timeout(rng.exponential(1000.0 / QPS))
            env.process(query())

    env.process(arrivals())
    steps = _count_steps(env)
    t = time.perf_counter()
    env.run()
    return time.perf_counter() - t, steps[0]


def _count_steps(env: simpy.Environment) -> list[int]:
    counter = [0]
    original = env.step

    def step() -> None:
        counter[0] += 1
        original()

    env.step = step  # type: ignore[method-assign]
    return counter


def model(n_queries: int, seed: int = 1, execution: str = "pinot") -> tuple[float, int, int]:
    duration = n_queries / QPS
    sc = load_scenario({
        "cluster": {"servers": K, "server": {"cores": 1, "execution": execution}, "network": {"latency_ms": 0.1},
                    "gc": {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": 30},
                           "pause_ms": {"dist": "lognormal", "mean": 200, "sigma": 0.5}}},
        "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000}, "arrival": {"qps": QPS}},
        "service": {"model": "exponential", "mean_ms": MEAN_MS},
        "simulation": {"duration_s": duration, "warmup_s": 0, "replications": 1, "seed": seed},
    })
    layout = build_layout(sc)
    env = simpy.Environment()
    streams = Streams.spawn(np.random.SeedSequence(seed), K)
    plan = build_plan(sc, layout, streams, horizon_ms=duration * 1000.0)
    m = ClusterModel(env, streams, build_cluster(sc, layout, env, streams, plan), plan, Window(0.0, duration * 1000.0))
    steps = _count_steps(env)
    t = time.perf_counter()
    m.run()
    return time.perf_counter() - t, steps[0], len(m.records.latency_ms)


def memory_for(n_queries: int) -> tuple[float, float]:
    """Run ``simulate()`` for ``n_queries`` with records kept; return (seconds, peak RSS MiB)."""
    from workbench.sim.run import simulate

    sc = {
        "cluster": {"servers": K, "server": {"cores": 1}, "network": {"latency_ms": 0.1},
                    "gc": {"collector": "g1"}},
        "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000}, "arrival": {"qps": QPS}},
        "service": {"model": "exponential", "mean_ms": MEAN_MS},
        "simulation": {"duration_s": n_queries / QPS, "warmup_s": 1, "replications": 1, "seed": 2},
    }
    t = time.perf_counter()
    result = simulate(sc)
    elapsed = time.perf_counter() - t
    assert len(result.queries) > 0.98 * n_queries
    return elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def before(rev: str, n: int) -> str:
    """This benchmark's output at git revision ``rev`` (run in a temporary worktree, in a subprocess)."""
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="bench-before-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(root), "worktree", "add", "-q", "--detach", str(tree), rev], check=True)
        try:
            env = {**os.environ, "PYTHONPATH": str(tree)}
            run = subprocess.run([sys.executable, str(tree / "benchmarks" / "bench_model.py"), str(n)],
                                 env=env, cwd=tree, capture_output=True, text=True, check=True)
            return run.stdout
        finally:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)], check=True)


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--memory":
        n = int(args[1]) if len(args) > 1 else 1_000_000
        seconds, rss = memory_for(n)
        print(f"{n:,} simulated queries with records: {seconds:.1f} s, peak RSS {rss:,.0f} MiB (goal < 2048)")
        return
    rev = None
    if "--before" in args:
        i = args.index("--before")
        rev = args[i + 1]
        del args[i:i + 2]
    n = int(args[0]) if args else 20_000
    bare_s, bare_events = bare_forkjoin(n)
    bare_qps = n / bare_s
    print(f"bare SimPy fork-join (k={K}): {bare_qps:10,.0f} queries/s  {bare_events / n:6.1f} events/query")
    for execution in ("pinot", "fcfs_threads"):
        model_s, model_events, done = model(n, execution=execution)
        model_qps = done / model_s
        print(f"workbench model (k={K}, GC, {execution:>12}): {model_qps:10,.0f} queries/s  "
              f"{model_events / done:6.1f} events/query  ({model_qps / bare_qps:.2f}x bare)")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    if rev is not None:
        print(f"--- the same benchmark at {rev}:")
        print(before(rev, n), end="")


if __name__ == "__main__":
    main()
