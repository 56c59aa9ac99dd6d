"""Benchmark: how far Pinot's execution structure moves latency against the FCFS-threads simplification.

The same scenario (6 servers with 8 cores, 72 segments of 1M documents at replication 2, cost model: each
query spreads ~12 segments of 10 ms over 4 tasks per server) at several loads, once with
``cluster.server.execution: pinot`` (runner and worker pools sharing the cores) and once with
``fcfs_threads`` (one FCFS worker thread per core, per-request work off the cores), with common random
numbers. Prints p50 and p99 with their intervals and the p99 ratio; ``docs/model.md`` ("CPU") quotes it.
Run: ``python benchmarks/bench_execution.py [QPS ...]``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from workbench.analysis.stats import summarise
from workbench.sim.run import simulate


def scenario(execution: str, qps: float) -> dict[str, Any]:
    return {"cluster": {"servers": 6, "server": {"cores": 8, "execution": execution}},
            "table": {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}},
            "workload": {"synthetic": {"segments_per_server": 24, "docs_per_segment": 1_000_000},
                         "arrival": {"qps": qps}},
            "service": {"model": "cost", "ns_per_doc": 10},
            "simulation": {"duration_s": 120, "warmup_s": 20, "replications": 3, "seed": 7}}


def main() -> None:
    loads = [float(x) for x in sys.argv[1:]] or [10.0, 25.0, 40.0, 50.0, 58.0]
    print("  qps  util | fcfs_threads p50    p99 [95% CI]        | pinot p50    p99 [95% CI]        | p99 ratio")
    for qps in loads:
        cells, p99 = [], []
        for execution in ("fcfs_threads", "pinot"):
            t = time.perf_counter()
            s = summarise(simulate(scenario(execution, qps)))
            lat = s.latency_ms
            p99.append(lat.p99.value)
            interval = f"[{lat.p99.ci_low:6.1f},{lat.p99.ci_high:6.1f}]"
            cells.append(f"{lat.p50.value:7.1f} {lat.p99.value:7.1f} {interval} "
                         f"({time.perf_counter() - t:4.1f}s)")
        print(f"{qps:5.0f}  {s.utilisation.mean:.2f} | {cells[0]} | {cells[1]} | {p99[1] / p99[0]:.3f}")


if __name__ == "__main__":
    main()
