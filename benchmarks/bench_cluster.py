"""Benchmark: client latency of Pinot's own query path across processes, at a low and a higher open-loop rate.

Two ``workbench.cluster.PinotServer`` JVMs (Pinot 1.5.1's Netty ``QueryServer``, ``InstanceRequestHandler``,
FCFS scheduler, ``ServerQueryExecutorV1Impl``) each hold half of a 20k-row table (8 segments of 2,500 rows), and the
``LoadGenerator`` JVM (Pinot's ``QueryRouter`` and ``BrokerReduceService``) sends four query shapes in turn at
Poisson arrivals. Each rate is a fresh cluster; 200 warm-up queries (one at a time, not recorded) come first so the
JIT has compiled the query path. Printed per rate: p50/p99 of the broker-side latency (compile, scatter over Netty,
gather, reduce), of the latency since the scheduled arrival (adds any wait for a generator thread), the slowest
server's ``timeUsedMs`` and its thread CPU time, and how far the generator fell behind its schedule.

No threshold: the figures say what this machine does (it is shared; run it when idle). Run:
``python benchmarks/bench_cluster.py [LOW_RATE HIGH_RATE]`` (queries/s, default 10 and 100).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "groundtruth"))

import tables  # the ground-truth tests' table maker: one definition of the test tables

from workbench.groundtruth.cluster import LoadSpec, run_cluster

CONFIG = {"tableName": "clicks_OFFLINE", "tableType": "OFFLINE",
          "segmentsConfig": {"timeColumnName": "ts", "replication": "1"}, "tenants": {}, "metadata": {},
          "tableIndexConfig": {}}
QUERIES = ["SELECT COUNT(*) FROM clicks",
           "SELECT COUNT(*) FROM clicks WHERE country = 'us'",
           "SELECT country, SUM(clicks) FROM clicks GROUP BY country ORDER BY country",
           "SELECT memberId, COUNT(*) FROM clicks WHERE clicks >= 50 GROUP BY memberId ORDER BY COUNT(*) DESC LIMIT 10"]
SERVER_CONFIG = {"pinot.server.instance.enableThreadCpuTimeMeasurement": "true"}


def _pct(values: pd.Series, q: float) -> float:
    return float(np.percentile(values.to_numpy(dtype=float), q))


def main() -> None:
    low, high = (float(a) for a in sys.argv[1:3]) if len(sys.argv) >= 3 else (10.0, 100.0)
    rows = tables.rows(seed=3, n=20_000, time_column="ts", day=False)
    segments = {f"clicks_{i}": rows.iloc[i * 2500:(i + 1) * 2500].reset_index(drop=True) for i in range(8)}
    for rate in (low, high):
        load = LoadSpec(rate_per_s=rate, num_queries=int(min(1000, max(200, 10 * rate))), seed=11,
                        timeout_ms=10_000, warmup_queries=200)
        start = time.perf_counter()
        run = run_cluster(CONFIG, tables.schema("ts", day=False), segments, QUERIES, load,
                          scheduler_config=SERVER_CONFIG)
        wall = time.perf_counter() - start
        r = run.records
        failed = int((r["exceptions"].map(len) > 0).sum())
        cpu_ms = r["servers"].map(lambda ss: max(s.get("threadCpuTimeNs", 0) for s in ss) / 1e6)
        print(f"rate {rate:g}/s, {len(r)} queries ({failed} with exceptions), 2 servers, wall {wall:.1f} s")
        print(f"  broker latency ms    p50 {_pct(r['latencyMs'], 50):7.2f}  p99 {_pct(r['latencyMs'], 99):7.2f}")
        print(f"  broker phases p50 ms compile {_pct(r['compileMs'], 50):.2f}, scatter-gather "
              f"{_pct(r['scatterGatherMs'], 50):.2f}, reduce {_pct(r['reduceMs'], 50):.2f}")
        print(f"  since arrival ms     p50 {_pct(r['sinceArrivalMs'], 50):7.2f}  "
              f"p99 {_pct(r['sinceArrivalMs'], 99):7.2f}")
        print(f"  server timeUsedMs    p50 {_pct(r['maxServerTimeUsedMs'], 50):7.2f}  "
              f"p99 {_pct(r['maxServerTimeUsedMs'], 99):7.2f}")
        print(f"  server thread CPU ms p50 {_pct(cpu_ms, 50):7.2f}  p99 {_pct(cpu_ms, 99):7.2f}")
        print(f"  generator behind ms  max dispatch {r['dispatchLagMs'].max():.2f}, "
              f"max wait for a worker {(r['startLagMs'] - r['dispatchLagMs']).max():.2f}")


if __name__ == "__main__":
    main()
