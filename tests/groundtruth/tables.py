"""Small tables for the ground-truth tests: seeded rows, cut into segments as a user's jobs would cut them.

Rows arrive over a day with some late events (their time moved earlier, so time ranges overlap); most
segments hold one partition of the partition column (a partitioned push job), a few mix every
partition (an unpartitioned backfill), so both pruners have something to prune and something to keep.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from workbench.pinot.partition import get_partition_function

T0 = 1_700_000_000_000
HOUR = 3_600_000
DAY0 = 19_000
SERVERS = tuple(f"Server_127.0.0.{i + 2}_8098" for i in range(4))


def schema(time_column: str, day: bool) -> dict[str, Any]:
    time_spec = ({"name": time_column, "dataType": "INT", "format": "1:DAYS:EPOCH", "granularity": "1:DAYS"} if day
                 else {"name": time_column, "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                       "granularity": "1:MILLISECONDS"})
    return {"schemaName": "clicks",
            "dimensionFieldSpecs": [{"name": "memberId", "dataType": "INT"}, {"name": "country", "dataType": "STRING"}],
            "metricFieldSpecs": [{"name": "clicks", "dataType": "LONG"}], "dateTimeFieldSpecs": [time_spec]}


def rows(seed: int, n: int, time_column: str, day: bool) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    if day:
        times = DAY0 + np.sort(rng.integers(0, 12, n))
        late = rng.random(n) < 0.05
        times[late] -= rng.integers(1, 3, late.sum())
    else:
        times = T0 + np.sort(rng.integers(0, 24 * HOUR, n))
        late = rng.random(n) < 0.05
        times[late] -= rng.integers(1, 6 * HOUR, late.sum())
    return pd.DataFrame({time_column: times.astype(np.int32 if day else np.int64),
                         "memberId": rng.integers(0, 500, n).astype(np.int32),
                         "country": rng.choice(["us", "de", "fr", "in"], n),
                         "clicks": rng.integers(0, 100, n).astype(np.int64)})


def cut(frame: pd.DataFrame, time_column: str, width: int, num_partitions: int) -> dict[str, pd.DataFrame]:
    """Segments of ``width`` time units per partition, in arrival order; every fifth window mixed."""
    part = get_partition_function("Murmur", num_partitions).get_partitions(frame["memberId"].to_numpy(), "INT")
    window = (frame[time_column] - frame[time_column].min()) // width
    out: dict[str, pd.DataFrame] = {}
    for w, rows_w in frame.groupby(window, sort=True):
        if int(w) % 5 == 4:
            out[f"clicks_{int(w)}_mixed"] = rows_w.reset_index(drop=True)
            continue
        for p, rows_p in rows_w.groupby(part[rows_w.index]):
            out[f"clicks_{int(w)}_{int(p)}"] = rows_p.reset_index(drop=True)
    return out


def queries(seed: int, n: int, time_column: str, lo: int, hi: int, span: int) -> list[str]:
    """``n`` queries over the table: time ranges of every form, partition lookups, and both mixed."""
    rng = np.random.default_rng(seed)
    t = time_column
    out = []
    for i in range(n):
        a = int(rng.integers(lo, hi))
        b = a + int(rng.integers(0, span))
        m = int(rng.integers(0, 500))
        out.append([
            f"SELECT COUNT(*) FROM clicks WHERE {t} >= {a} AND {t} < {b}",
            f"SELECT SUM(clicks) FROM clicks WHERE memberId = {m}",
            f"SELECT country, COUNT(*) FROM clicks WHERE {t} BETWEEN {a} AND {b} AND memberId IN ({m}, {m + 7}) "
            "GROUP BY country",
            f"SELECT COUNT(*) FROM clicks WHERE {t} > {a} OR memberId = {m}",
            f"SELECT MAX(clicks) FROM clicks WHERE NOT ({t} < {a}) AND country = 'us'",
            f"SELECT COUNT(*) FROM clicks WHERE {t} = {a} OR {t} IN ({b}, {b + 1})",
            f"SELECT SUM(clicks) FROM clicks WHERE memberId IN ({m}, {m + 1}, {m + 2}) AND {t} <= {b}",
            f"SELECT memberId, clicks FROM clicks WHERE {t} >= {a} LIMIT 10",
        ][i % 8])
    return out


def config(time_column: str, routing: dict[str, Any], replication: int, num_partitions: int,
           assignment: dict[str, Any] | None = None) -> dict[str, Any]:
    """An OFFLINE ``clicks`` table partitioned by ``memberId`` (Murmur), with ``routing`` and, given ``assignment``,
    a replica-group instance assignment over the default tenant's servers."""
    out: dict[str, Any] = {
        "tableName": "clicks_OFFLINE", "tableType": "OFFLINE",
        "segmentsConfig": {"timeColumnName": time_column, "replication": str(replication)},
        "tenants": {}, "metadata": {},
        "tableIndexConfig": {"loadMode": "MMAP", "segmentPartitionConfig": {"columnPartitionMap": {
            "memberId": {"functionName": "Murmur", "numPartitions": num_partitions}}}},
        "routing": routing}
    if assignment is not None:
        out["instanceAssignmentConfigMap"] = {"OFFLINE": {"tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"},
                                                             "replicaGroupPartitionConfig": assignment}}
    return out


#: Table configs whose every query the model must agree with Pinot on: (config, time column, day column?).
AGREEMENT_CASES = {
    # time pruning on epoch milliseconds, partition pruning (Murmur, 4), replica groups 2 x 2
    "ms-murmur-replica-groups": (
        config("ts", {"segmentPrunerTypes": ["time", "partition"], "instanceSelectorType": "replicaGroup"}, 2, 4,
                {"replicaGroupBased": True, "numReplicaGroups": 2, "numInstancesPerReplicaGroup": 2}),
        "ts", False),
    # time pruning on a day column, balanced routing with replication 2
    "day-balanced-replication-2": (
        config("day", {"segmentPrunerTypes": ["time", "partition"], "instanceSelectorType": "balanced"}, 2, 4),
        "day", True),
    # strict replica groups, partition pruning only (Murmur, 8), one replica
    "ms-partition-only-strict": (
        config("ts", {"segmentPrunerTypes": ["partition"], "instanceSelectorType": "strictReplicaGroup"}, 1, 8),
        "ts", False),
}
