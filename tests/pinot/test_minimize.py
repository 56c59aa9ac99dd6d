"""minimizeDataMovement instance assignment, checked against Pinot's own tests at release-1.5.1.

Every expected value below is an assertion of ``pinot-controller/src/test/java/org/apache/pinot/
controller/helix/core/assignment/instance/InstanceAssignmentTest.java`` (``testMinimizeDataMovement``,
``testPoolBased``'s minimizeDataMovement part) or a hand computation from the rules quoted in the
test, replayed step by step: each step passes the previous step's instance partitions as the existing
ones, as a rebalance does.
"""

from __future__ import annotations

from typing import Any

import pytest

from workbench.pinot.assignment import Instance, InstancePartitions, instance_partitions_for
from workbench.pinot.table_config import TableConfig

TAG = "tenant_OFFLINE"


def s(*numbers: int) -> tuple[str, ...]:
    return tuple(f"Server_localhost_{n}" for n in numbers)


def servers(numbers: list[int], pools: dict[int, int] | None = None) -> list[Instance]:
    return [Instance(f"Server_localhost_{n}", tags=(TAG,), pools={TAG: pools[n]} if pools else {}) for n in numbers]


def legacy(replication: int, per_partition: int, *, minimize: bool = True) -> TableConfig:
    """The test's table: tenant "tenant", replica-group strategy, partition column (Modulo, 2)."""
    return TableConfig.from_json({
        "tableName": "myTable", "tableType": "OFFLINE", "tenants": {"server": "tenant"},
        "segmentsConfig": {"replication": replication, "segmentAssignmentStrategy": "replicagroup",
                           "minimizeDataMovement": minimize,
                           "replicaGroupStrategyConfig": {"partitionColumn": "partition",
                                                          "numInstancesPerPartition": per_partition}},
        "tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
            "partition": {"functionName": "Modulo", "numPartitions": 2}}}}})


def assign(table: TableConfig, numbers: list[int], existing: InstancePartitions | None,
           pools: dict[int, int] | None = None) -> InstancePartitions:
    with pytest.warns(UserWarning, match="older spelling"):
        return instance_partitions_for(table, "OFFLINE", servers(numbers, pools), existing)


STEP_C = {"0_0": s(8, 1), "1_0": s(4, 8), "0_1": s(9, 10), "1_1": s(5, 9), "0_2": s(0, 3), "1_2": s(11, 0)}


def config_map(replicas: int, per_partition: int) -> TableConfig:
    """testMinimizeDataMovement's table: tenant "tenant", 2 partitions, minimizeDataMovement on."""
    return TableConfig.from_json({
        "tableName": "myTable", "tableType": "OFFLINE", "segmentsConfig": {"replication": replicas},
        "instanceAssignmentConfigMap": {"OFFLINE": {
            "tagPoolConfig": {"tag": TAG}, "minimizeDataMovement": True,
            "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": replicas,
                                            "numPartitions": 2, "numInstancesPerPartition": per_partition,
                                            "partitionColumn": "partition"}}}})


def test_replica_group_minimize_sequence_matches_pinot() -> None:
    """InstanceAssignmentTest.testMinimizeDataMovement (release-1.5.1): swap two servers, grow and shrink
    the per-partition count, add and remove a replica group; each step passes the previous result."""
    def step(replicas: int, per_partition: int, numbers: list[int],
             existing: InstancePartitions | None) -> InstancePartitions:
        return instance_partitions_for(config_map(replicas, per_partition), "OFFLINE", servers(numbers), existing)

    first = step(3, 2, list(range(10)), None)
    assert dict(first.partitions) == {"0_0": s(8, 1), "1_0": s(4, 8), "0_1": s(9, 2), "1_1": s(5, 9),
                                      "0_2": s(0, 3), "1_2": s(6, 0)}
    cluster = [0, 1, 3, 4, 5, 7, 8, 9, 10, 11]  # i2 and i6 gone, i10 and i11 new: i2 -> i10, i6 -> i11
    swapped = step(3, 2, cluster, first)
    assert dict(swapped.partitions) == STEP_C
    cluster += [12, 13]
    grown = step(3, 3, cluster, swapped)
    assert dict(grown.partitions) == {"0_0": s(8, 1, 12), "1_0": s(4, 8, 1), "0_1": s(9, 10, 13),
                                      "1_1": s(5, 10, 9), "0_2": s(0, 3, 7), "1_2": s(11, 3, 0)}
    back = step(3, 2, cluster, grown)
    assert dict(back.partitions) == {"0_0": s(8, 1), "1_0": s(4, 12), "0_1": s(9, 10), "1_1": s(5, 13),
                                     "0_2": s(0, 3), "1_2": s(11, 7)}
    four = step(4, 2, cluster, back)
    assert dict(four.partitions) == {"0_0": s(8, 12), "1_0": s(4, 12), "0_1": s(13, 10), "1_1": s(5, 13),
                                     "0_2": s(11, 3), "1_2": s(11, 7), "0_3": s(9, 0), "1_3": s(1, 9)}
    three = step(3, 2, cluster, four)
    assert dict(three.partitions) == {"0_0": s(8, 12), "1_0": s(4, 9), "0_1": s(13, 10), "1_1": s(5, 0),
                                      "0_2": s(11, 3), "1_2": s(1, 7)}


def test_legacy_minimize_flag_keeps_servers_in_place() -> None:
    """The legacy form honours segmentsConfig.minimizeDataMovement (with a warning): the swap step of
    testMinimizeDataMovement gives the same partitions from replicaGroupStrategyConfig."""
    first = assign(legacy(3, 2), list(range(10)), None)
    assert assign(legacy(3, 2), list(range(10)), first) == first
    assert dict(assign(legacy(3, 2), [0, 1, 3, 4, 5, 7, 8, 9, 10, 11], first).partitions) == STEP_C


def pool_table(groups: int, *, pools: list[int] | None = None) -> TableConfig:
    tag_pool: dict[str, Any] = {"tag": TAG, "poolBased": True}
    tag_pool.update({"pools": pools} if pools else {"numPools": 2})
    return TableConfig.from_json({"tableName": "myTable", "tableType": "OFFLINE", "instanceAssignmentConfigMap": {
        "OFFLINE": {"tagPoolConfig": tag_pool, "replicaGroupPartitionConfig": {
            "replicaGroupBased": True, "numReplicaGroups": groups, "minimizeDataMovement": True}}}})


def pool_assign(table: TableConfig, numbers: list[int], existing: InstancePartitions | None) -> dict[str, Any]:
    pools = {n: 0 if n in (0, 1, 2, 3, 4, 10, 12) else 1 for n in numbers}
    with pytest.warns(UserWarning, match=r"replicaGroupPartitionConfig\.minimizeDataMovement"):
        ip = instance_partitions_for(table, "OFFLINE", servers(numbers, pools), existing)
    return {"ip": ip, "rows": [ip.instances(0, r) for r in range(ip.num_replica_groups)]}


def test_pool_based_minimize_sequence_matches_pinot() -> None:
    """testPoolBased, minimizeDataMovement part: 2 pools, groups 2 -> 3 -> 2, servers swapped and added."""
    step = pool_assign(pool_table(2), list(range(10)), None)
    assert step["rows"] == [s(3, 4, 0, 1, 2), s(8, 9, 5, 6, 7)]
    step = pool_assign(pool_table(2), list(range(10)), step["ip"])
    assert step["rows"] == [s(3, 4, 0, 1, 2), s(8, 9, 5, 6, 7)]
    step = pool_assign(pool_table(2, pools=[0, 1]), list(range(10)), step["ip"])
    assert step["rows"] == [s(3, 4, 0, 1, 2), s(8, 9, 5, 6, 7)]
    step = pool_assign(pool_table(3, pools=[0, 1]), list(range(10)), step["ip"])
    assert step["rows"] == [s(3, 4), s(8, 9), s(0, 1)]
    cluster = [0, 1, 2, 4, 5, 6, 7, 9, 10, 11]  # i3 and i8 gone, i10 (pool 0) and i11 (pool 1) new
    step = pool_assign(pool_table(3, pools=[0, 1]), cluster, step["ip"])
    assert step["rows"] == [s(2, 4), s(7, 9), s(0, 1)]
    step = pool_assign(pool_table(2, pools=[0, 1]), cluster, step["ip"])
    assert step["rows"] == [s(2, 4, 0, 1, 10), s(7, 9, 11, 5, 6)]
    cluster += [12, 13]
    step = pool_assign(pool_table(2, pools=[0, 1]), cluster, step["ip"])
    assert step["rows"] == [s(2, 4, 0, 1, 10, 12), s(7, 9, 11, 5, 6, 13)]
    cluster = [n for n in cluster if n not in (2, 5)]
    step = pool_assign(pool_table(2, pools=[0, 1]), cluster, step["ip"])
    assert step["rows"] == [s(12, 4, 0, 1, 10), s(7, 9, 11, 13, 6)]


def test_without_minimize_the_existing_partitions_are_ignored() -> None:
    """The same swap without the flag starts afresh: sorted names (_0 _1 _10 _11 _3 _4 _5 _7 _8 _9) rotated
    by 438536198 % 10 = 8 give [8 9 0 1 10 11 3 4 5 7]; dealt over 3 groups r0 = 8 1 3, r1 = 9 10 4,
    r2 = 0 11 5; partitions of 2 walk each group (r2: p0 = 0 11, p1 = 5 0)."""
    swapped = instance_partitions_for(legacy(3, 2, minimize=False), "OFFLINE",
                                      servers([0, 1, 3, 4, 5, 7, 8, 9, 10, 11]),
                                      InstancePartitions.of("myTable_OFFLINE", STEP_C))
    assert swapped.instances(0, 1) == s(9, 10)
    assert swapped.instances(0, 0) == s(8, 1)
    assert swapped.instances(1, 2) == s(5, 0)


def test_rebalance_override_beats_the_table_flag() -> None:
    """ENABLE/DISABLE on the rebalance win over the config (TableRebalancer's minimizeDataMovement)."""
    existing = InstancePartitions.of("myTable_OFFLINE", STEP_C)
    cluster = servers([0, 1, 3, 4, 5, 7, 8, 9, 10, 11])
    kept = instance_partitions_for(legacy(3, 2, minimize=False), "OFFLINE", cluster, existing, True)
    assert dict(kept.partitions) == STEP_C
    with pytest.warns(UserWarning):
        fresh = instance_partitions_for(legacy(3, 2), "OFFLINE", cluster, existing, False)
    assert fresh.instances(1, 2) == s(5, 0)


def test_minimize_keeps_the_pool_holding_the_existing_servers() -> None:
    """InstanceTagPoolSelector (release-1.5.1) with numPools 1 of 2 and minimizeDataMovement: the pool
    holding most existing servers wins; with none of them left, the hash-rotated order decides
    (abs(hash("myTable_OFFLINE")) = 438536198, % 2 = 0, so pool 0)."""
    table = TableConfig.from_json({"tableName": "myTable", "tableType": "OFFLINE", "instanceAssignmentConfigMap": {
        "OFFLINE": {"minimizeDataMovement": True, "tagPoolConfig": {"tag": TAG, "poolBased": True, "numPools": 1},
                    "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": 1}}}})
    cluster = servers([0, 1, 2, 3], {0: 0, 1: 0, 2: 1, 3: 1})
    on_pool_1 = InstancePartitions.of("myTable_OFFLINE", {"0_0": s(2)})
    assert instance_partitions_for(table, "OFFLINE", cluster, on_pool_1).instances(0, 0) == s(2, 3)
    gone = InstancePartitions.of("myTable_OFFLINE", {"0_0": s(7)})
    assert instance_partitions_for(table, "OFFLINE", cluster, gone).instances(0, 0) == s(0, 1)
