"""Benchmark: what the ground truth costs, Apache Pinot 1.5.1's own code run by ``workbench.groundtruth``.

* Start-up: one driver run on a two-row table, the first in this process (cold: the JVM reads Pinot's
  221 jars, the page cache may not hold them) and the best of three after it (warm). Each run starts a
  JVM and an in-process ZooKeeper and stops both.
* A 100k-row table (40 segments, replication 2, balanced, time and partition pruning), 600 queries:
  Pinot's run, the model's side of the comparison, and the peak resident memory of the driver JVM
  (``ru_maxrss`` of this process's children).

No ratio is promised here: the figures say what ``make test``'s ground-truth tier and a user's check
cost on this machine. Run: ``python benchmarks/bench_groundtruth.py``.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "groundtruth"))

import tables  # the ground-truth tests' table maker: one definition of the test tables

from workbench.groundtruth import PinotTable, agreement, ensure_built, run_pinot
from workbench.pinot.table_config import TableConfig
from workbench.sim.layout import assign_layout


def _tiny() -> PinotTable:
    import pandas as pd

    config = {"tableName": "clicks_OFFLINE", "tableType": "OFFLINE", "segmentsConfig": {"replication": "1"},
              "tableIndexConfig": {}, "tenants": {}, "metadata": {}}
    rows = pd.DataFrame({"ts": [tables.T0, tables.T0 + 1], "memberId": [1, 2], "country": ["us", "de"],
                         "clicks": [1, 2]})
    server = tables.SERVERS[0]
    return PinotTable(config, tables.schema("ts", day=False), {"s0": rows}, (server,), {"s0": {server: "ONLINE"}})


def _seconds(run: object) -> float:
    start = time.perf_counter()
    run()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    start = time.perf_counter()
    jars = ensure_built()
    count = len(list(jars.lib.glob("*.jar")))
    count = len(list(jars.lib.glob("*.jar")))
    print(f"Pinot {jars.version} jars ready in {time.perf_counter() - start:.1f} s ({count} jars)")
    tiny, query = _tiny(), [("SELECT COUNT(*) FROM clicks", 0)]
    cold = _seconds(lambda: run_pinot(tiny, query))
    warm = min(_seconds(lambda: run_pinot(tiny, query)) for _ in range(3))
    print(f"driver start-up and stop, two-row table: cold {cold:.2f} s, warm {warm:.2f} s")

    frame = tables.rows(seed=3, n=100_000, time_column="ts", day=False)
    segments = tables.cut(frame, "ts", 6 * tables.HOUR, 8)
    config = {"tableName": "clicks_OFFLINE", "tableType": "OFFLINE",
              "segmentsConfig": {"timeColumnName": "ts", "replication": "2"}, "tenants": {}, "metadata": {},
              "tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
                  "memberId": {"functionName": "Murmur", "numPartitions": 8}}}},
              "routing": {"segmentPrunerTypes": ["time", "partition"], "instanceSelectorType": "balanced"}}
    names = tuple(segments)
    ideal = assign_layout(TableConfig.from_json(config), tables.SERVERS, names, np.zeros(len(names), bool),
                          np.zeros(len(names), int))
    sql = tables.queries(seed=1, n=600, time_column="ts", lo=int(frame.ts.min()), hi=int(frame.ts.max()),
                         span=6 * tables.HOUR)
    start = time.perf_counter()
    pinot = run_pinot(PinotTable(config, tables.schema("ts", day=False), segments, tables.SERVERS, ideal),
                      [(q, i) for i, q in enumerate(sql)])
    pinot_s = time.perf_counter() - start
    start = time.perf_counter()
    result, _ = agreement(config, tables.schema("ts", day=False), segments, sql, servers=tables.SERVERS,
                          ideal_state=ideal, pinot=pinot)
    model_s = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"100k rows, {len(segments)} segments, {len(sql)} queries: Pinot {pinot_s:.1f} s, model side "
          f"{model_s:.1f} s, agreed {result.agreed}/{result.queries}; driver JVM peak RSS {peak_mib:.0f} MiB")


if __name__ == "__main__":
    main()
