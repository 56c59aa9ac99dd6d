"""Query plans in the model: Pinot's pruners decide what a query touches; replay uses them end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.pinot.table_config import TableConfig
from workbench.sim.planner import Planner, default_schema, segment_metadata
from workbench.sim.run import simulate

TABLE = {"tableName": "t", "tableType": "OFFLINE",
         "segmentsConfig": {"timeColumnName": "ts", "replication": 1},
         "routing": {"segmentPrunerTypes": ["time", "partition"]},
         "tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
             "key_id": {"functionName": "Modulo", "numPartitions": 4}}}}}


def segments() -> pd.DataFrame:
    def pmeta(p: int) -> str:
        return json.dumps({"columnPartitionMap": {"key_id": {
            "functionName": "Modulo", "numPartitions": 4, "partitions": [p]}}})
    rows = [(f"s{i}", i * 100, i * 100 + 99, 1000, pmeta(i % 4)) for i in range(8)]
    frame = pd.DataFrame(rows, columns=["segment_name", "start_time_ms", "end_time_ms", "total_docs", "pm"])
    frame["zk_metadata"] = [json.dumps({
        "segment.start.time": str(r.start_time_ms), "segment.end.time": str(r.end_time_ms),
        "segment.time.unit": "MILLISECONDS", "segment.total.docs": "1000", "segment.partition.metadata": r.pm})
        for r in frame.itertuples()]
    return frame.drop(columns="pm")


def planner() -> Planner:
    seg = segments()
    names = tuple(seg["segment_name"])
    table = TableConfig.from_json(TABLE)
    return Planner(names, seg["total_docs"].to_numpy(float), table, default_schema(table), segment_metadata(seg))


def test_time_pruning_and_docs_scanned() -> None:
    plan = planner().plan("SELECT COUNT(*) FROM t WHERE ts >= 150 AND ts < 250")
    assert plan.names == ("s1", "s2")
    assert plan.pruned == 6
    # s1 covers 150..199 of 100..199, s2 covers 200..249 of 200..299: half of each segment's docs
    assert plan.docs_scanned == pytest.approx((500.0, 500.0))


def test_partition_pruning_uses_each_segments_metadata() -> None:
    plan = planner().plan("SELECT COUNT(*) FROM t WHERE key_id = 5")  # 5 mod 4 = 1
    assert plan.names == ("s1", "s5")
    assert plan.docs_scanned == (1000.0, 1000.0)


def test_plans_are_cached_per_sql_text() -> None:
    p = planner()
    assert p.plan("SELECT * FROM t WHERE ts < 50") is p.plan("SELECT * FROM t WHERE ts < 50")


def test_replay_prunes_and_routes_each_query(tmp_path: Path) -> None:
    segments().to_parquet(tmp_path / "segments.parquet")
    sqls = ["SELECT COUNT(*) FROM t WHERE key_id = 5", "SELECT COUNT(*) FROM t WHERE ts BETWEEN 0 AND 99",
            "SELECT COUNT(*) FROM t"]
    n = 3000
    pd.DataFrame({"arrival_s": np.arange(n) * 0.01, "sql": [sqls[i % 3] for i in range(n)]}).to_parquet(
        tmp_path / "queries.parquet")
    scenario = {"cluster": {"servers": 4}, "table": TABLE, "workload": {"arrival": {"process": "replay"}},
                "simulation": {"duration_s": 30, "warmup_s": 1, "replications": 1}}
    r = simulate(scenario, data=tmp_path)
    q = r.queries.sort_values("arrival_s")
    expected_kept = {0: 2, 1: 1, 2: 8}
    kinds = np.rint(q["arrival_s"].to_numpy() / 0.01).astype(int) % 3
    assert (q["segments_queried"].to_numpy() == np.vectorize(expected_kept.get)(kinds)).all()
    assert (q["segments_queried"] + q["segments_pruned"] == 8).all()
