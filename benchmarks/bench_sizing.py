"""Benchmark: ``workbench size`` (search) against ``--exhaustive`` (every shape) on one large space.

The space: a fixed table (24 segments of a small generated workload, two replicas; more servers share the
same work), sized for ``slo.p99_ms: 60`` surviving one lost server (``slo.survive: server``), over server
counts x layouts (balanced, 2 and 4 replica groups) x cores x heaps. The issue's space is 2,000 shapes
(``--scale full``, 1,925 here: about 12 minutes on a shared 2-core machine, nearly all of it the exhaustive
reference; measured: the same answer, 73.6x fewer simulated queries, search 36.5 s); the default
(``--scale small``) is 216 shapes (17.8x: twelve lines each need a probe or two whatever the answer). Both
modes run in this process on the same runner settings, the exhaustive first; the goal is the same answer
with at least 20x fewer simulated queries. The report's studies (what-ifs) are left out of both
(``studies=False``): they are the report's, not the decision's. Figures: ``docs/sizing.md``.

Run: ``python benchmarks/bench_sizing.py [--scale small|full] [--workers N] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import copy
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from workbench.scenario import load_scenario
from workbench.sizing import size
from workbench.workload.pure import generate_local

#: The issue's goal: at least this many times fewer simulated queries than the exhaustive grid.
GOAL_RATIO = 20.0

SCENARIO: dict[str, Any] = {
    "name": "bench-sizing",
    "cluster": {"servers": 4, "server": {"cores": 1}, "network": {"latency_ms": 0}, "broker": {"overhead_ms": 0},
                "gc": {"collector": "none"}},
    "table": {"tableName": "events", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}},
    "workload": {"generate": {"events": 2000, "keys": 100, "partitions": 24, "span_s": "1h", "segment_rows": 100,
                              "seed": 3, "queries": {"duration_s": 10}},
                 "data": "data", "arrival": {"process": "poisson", "qps": 120}},
    "service": {"model": "exponential", "mean_ms": 2},
    "simulation": {"duration_s": 6, "warmup_s": 1, "replications": 3, "seed": 1, "engine": "fast",
                   "records": "latency"},
    "slo": {"p99_ms": 60, "survive": "server"},
}

SPACES: dict[str, dict[str, Any]] = {
    "small": {"servers": {"min": 2, "max": 25}, "replica_groups": [0, 2],
              "vary": {"cluster.server.cores": [1, 2, 4], "cluster.server.heap": ["4G", "16G"]}},
    "full": {"servers": {"min": 2, "max": 45}, "replica_groups": [0, 2, 4],
             "vary": {"cluster.server.cores": [1, 2, 4, 8, 16],
                      "cluster.server.heap": ["2G", "4G", "8G", "16G", "32G"]}},
}


def scenario_file(root: Path, scale: str) -> Path:
    """The benchmark's scenario and its generated workload under ``root``."""
    data = copy.deepcopy(SCENARIO)
    data["sizing"] = SPACES[scale]
    sc = load_scenario(data, base_dir=root)
    assert sc.workload.generate is not None
    generate_local(sc.workload.generate, root / "data", table="events", table_config=sc.table, progress=False,
                   overwrite=True)
    path = root / "scenario.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def timed(path: Path, out: Path, exhaustive: bool, workers: int) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    record = size(path, out, exhaustive=exhaustive, parallel=workers, studies=False, progress=True)
    return time.perf_counter() - start, record


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", choices=sorted(SPACES), default="small", help="the space (default: small)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="pool size (default: cores)")
    p.add_argument("--out", type=Path, help="keep the outputs here (default: a temporary directory)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.out or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        path = scenario_file(root, args.scale)
        grid_s, grid = timed(path, root / "exhaustive", True, args.workers)
        search_s, found = timed(path, root / "search", False, args.workers)
    same = found["recommendation"] == grid["recommendation"]
    ratio = grid["simulated_queries"] / max(1, found["simulated_queries"])
    print(f"space ({args.scale}): {grid['space']['shapes']} shapes in {grid['space']['lines']} lines, "
          f"slo.p99_ms {SCENARIO['slo']['p99_ms']}, slo.survive {SCENARIO['slo']['survive']}, "
          f"replication stages {grid['replication_stages']}, {args.workers} workers")
    for name, s, r in (("exhaustive", grid_s, grid), ("search", search_s, found)):
        print(f"{name:>10}: {r['runs']:>6} runs ({r['failure_case_runs']} failure cases), "
              f"{r['simulated_queries']:>10,} simulated queries, {r['space']['evaluated']} shapes evaluated, "
              f"{s:7.1f} s  -> {r['recommended_point']}")
    print(f"same answer: {same}; {ratio:.1f}x fewer simulated queries (goal {GOAL_RATIO:.0f}x), "
          f"{grid_s / search_s:.1f}x less wall time")
    if found["notes"]:
        print("notes:", "; ".join(found["notes"]))


if __name__ == "__main__":
    main()
