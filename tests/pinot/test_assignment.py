"""Replica-group instance assignment and segment assignment (pinot-behaviour.md §4).

Expected values come from the reference (Pinot's InstanceAssignmentTest, worked through in §4.2) or
are derived by hand from the rules quoted in each test's docstring, never from this code's output.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import TableConfigError
from workbench.pinot.assignment import (
    Instance,
    InstanceAssignmentConfig,
    InstancePartitions,
    ReplicaGroupPartitionConfig,
    TagPoolConfig,
    assign_consuming_segment,
    assign_instances,
    assign_segment,
    assign_segments,
    default_instance_partitions,
    instance_assignment_config,
    instance_partitions_for,
    java_string_hash,
    partition_column,
    segment_assignment_strategy,
    segment_partition_id,
)
from workbench.pinot.assignment.instances import select_replica_group_instances, table_hash
from workbench.pinot.table_config import TableConfig

# These tests use the 0.x strategy spelling on purpose; its warning is tested in test_rebalance.py.
pytestmark = [pytest.mark.filterwarnings("ignore:.*older spelling"),
              pytest.mark.filterwarnings("ignore:.*replica-group segment assignment over")]

TAG = "DefaultTenant_OFFLINE"
SERVERS = [Instance(f"Server_localhost_{i}", tags=(TAG,)) for i in range(10)]


def i(n: int) -> str:
    return f"Server_localhost_{n}"


def offline_table(segments_config: dict[str, Any], **extra: Any) -> TableConfig:
    return TableConfig.from_json(
        {"tableName": "myTable", "tableType": "OFFLINE", "segmentsConfig": segments_config, **extra}
    )


def legacy_table(**rg_strategy: Any) -> TableConfig:
    extra: dict[str, Any] = {}
    if "partitionColumn" in rg_strategy:
        extra["tableIndexConfig"] = {
            "segmentPartitionConfig": {
                "columnPartitionMap": {rg_strategy["partitionColumn"]: {"functionName": "Modulo", "numPartitions": 2}}
            }
        }
    return offline_table(
        {
            "replication": "3",
            "segmentAssignmentStrategy": "ReplicaGroupSegmentAssignmentStrategy",
            "replicaGroupStrategyConfig": rg_strategy,
        },
        **extra,
    )


def iac_table(entry: dict[str, Any], kind: str = "OFFLINE", table_type: str = "OFFLINE") -> TableConfig:
    return TableConfig.from_json(
        {"tableName": "myTable", "tableType": table_type, "instanceAssignmentConfigMap": {kind: entry}}
    )


def rg_entry(**rg: Any) -> dict[str, Any]:
    return {"tagPoolConfig": {"tag": TAG}, "replicaGroupPartitionConfig": {"replicaGroupBased": True, **rg}}


# -- Java hash ---------------------------------------------------------------------------------------
def test_java_hash_of_table_name_matches_reference() -> None:
    """§4.2: abs("myTable_OFFLINE".hashCode()) = 438536198, and 438536198 % 10 = 8."""
    assert abs(java_string_hash("myTable_OFFLINE")) == 438536198
    assert abs(java_string_hash("myTable_OFFLINE")) % 10 == 8


def test_java_hash_known_values() -> None:
    """Java's documented s[0]*31^(n-1) + ... + s[n-1], wrapping at 32 bits: "" is 0, "a" is 97."""
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("ab") == 97 * 31 + 98


def _slow_java_hash(text: str) -> int:
    data = text.encode("utf-16-be", "surrogatepass")
    units = [int.from_bytes(data[k : k + 2], "big") for k in range(0, len(data), 2)]
    total: int = sum(u * pow(31, len(units) - 1 - n) for n, u in enumerate(units)) % 2**32
    return total - 2**32 if total >= 2**31 else total


@given(st.text(max_size=40))
def test_java_hash_equals_the_polynomial_definition(text: str) -> None:
    """Property: the hash is the UTF-16 polynomial modulo 2**32, read as a signed int."""
    assert java_string_hash(text) == _slow_java_hash(text)
    assert -(2**31) <= java_string_hash(text) < 2**31


# -- instance assignment: the InstanceAssignmentTest example -----------------------------------------
def test_default_offline_replica_group_without_partition_column() -> None:
    """§4.2 InstanceAssignmentTest.testDefaultOfflineReplicaGroup, first half, with the 0.x strategy value."""
    ip = instance_partitions_for(legacy_table(numInstancesPerPartition=2), "OFFLINE", SERVERS)
    assert ip.name == "myTable_OFFLINE"
    assert dict(ip.partitions) == {"0_0": (i(8), i(1)), "0_1": (i(9), i(2)), "0_2": (i(0), i(3))}


def test_default_offline_replica_group_with_partition_column() -> None:
    """§4.2 InstanceAssignmentTest.testDefaultOfflineReplicaGroup, second half: partitionColumn (Modulo,
    2 partitions), numInstancesPerPartition=2."""
    ip = instance_partitions_for(
        legacy_table(partitionColumn="memberId", numInstancesPerPartition=2), "OFFLINE", SERVERS
    )
    assert dict(ip.partitions) == {
        "0_0": (i(8), i(1)),
        "1_0": (i(4), i(8)),
        "0_1": (i(9), i(2)),
        "1_1": (i(5), i(9)),
        "0_2": (i(0), i(3)),
        "1_2": (i(6), i(0)),
    }
    assert (ip.num_partitions, ip.num_replica_groups) == (2, 3)


def pinot_test_table(**where: dict[str, Any]) -> TableConfig:
    """InstanceAssignmentTest's table: tenant "tenant", 3 replicas, numInstancesPerPartition 2."""
    segments = {"replication": 3, "replicaGroupStrategyConfig": {"numInstancesPerPartition": 2},
                **where.pop("segmentsConfig", {})}
    return TableConfig.from_json({"tableName": "myTable", "tableType": "OFFLINE", "tenants": {"server": "tenant"},
                                  "segmentsConfig": segments, **where})


PINOT_TEST_SERVERS = [Instance(i(n), tags=("tenant_OFFLINE",)) for n in range(10)]


def test_default_offline_replica_group_with_the_current_strategy_constant() -> None:
    """InstanceAssignmentTest.testDefaultOfflineReplicaGroup (release-1.5.1), first half:
    ``setSegmentAssignmentStrategy(REPLICA_GROUP_SEGMENT_ASSIGNMENT_STRATEGY)`` writes "replicagroup" into
    segmentsConfig; Pinot asserts 3 groups x 1 partition, [i8 i1], [i9 i2], [i0 i3]."""
    table = pinot_test_table(segmentsConfig={"segmentAssignmentStrategy": "replicagroup"})
    ip = instance_partitions_for(table, "OFFLINE", PINOT_TEST_SERVERS)
    assert (ip.num_replica_groups, ip.num_partitions) == (3, 1)
    assert [ip.instances(0, r) for r in range(3)] == [(i(8), i(1)), (i(9), i(2)), (i(0), i(3))]


def test_segment_assignment_config_map_alone_does_not_make_replica_groups() -> None:
    """The same table with the strategy only in segmentAssignmentConfigMap.OFFLINE: at release-1.5.1
    ``InstanceAssignmentConfigUtils.allowInstanceAssignment`` reads only
    ``segmentsConfig.segmentAssignmentStrategy`` (and instanceAssignmentConfigMap), so Pinot builds the
    default instance partitions: one group of every tagged server rotated by hash % 10 = 8
    (the rotation testDefaultOfflineReplicaGroup's comment gives: [i8 i9 i0 ... i7])."""
    table = pinot_test_table(segmentAssignmentConfigMap={"OFFLINE": {"segmentAssignmentStrategy": "replicaGroup"}})
    ip = instance_partitions_for(table, "OFFLINE", PINOT_TEST_SERVERS)
    assert dict(ip.partitions) == {"0_0": tuple(i(n) for n in [8, 9, 0, 1, 2, 3, 4, 5, 6, 7])}


def rg(name: str) -> str:
    return f"Server_pinot-server-{name}.pinot-server-headless.pinot.svc.cluster.local_8098"


SELECTOR_CONFIG = ReplicaGroupPartitionConfig(True, 0, 2, 2, 1, 2, None)  # (true, 0, 2, 2, 1, 2, true, null)


def test_selector_keeps_a_group_whose_server_moved_pool() -> None:
    """InstanceReplicaGroupPartitionSelectorTest.testSelectPoolsWhenExistingReplicaGroupMapsToMultiplePools
    (release-1.5.1): rg0-2 moved from pool 1 to pool 0, so group 1 spans both pools; Pinot keeps group 1
    on pool 1 (rg1-0 stays in its slot, rg1-1 takes rg0-2's) instead of failing."""
    existing = InstancePartitions.of("0f97dac8-4123-47c6-9a4d-b8ce039c5ea5_OFFLINE",
                                     {"0_0": (rg("rg0-0"), rg("rg0-1")), "0_1": (rg("rg0-2"), rg("rg1-0"))})
    pools = {0: [rg("rg0-0"), rg("rg0-1"), rg("rg0-2")], 1: [rg("rg1-0"), rg("rg1-1"), rg("rg1-2")]}
    got = select_replica_group_instances(SELECTOR_CONFIG, pools, table_hash("tableNameBlah"), existing=existing)
    assert got == {"0_0": (rg("rg0-0"), rg("rg0-1")), "0_1": (rg("rg1-1"), rg("rg1-0"))}


def test_selector_puts_a_new_group_on_the_new_pool() -> None:
    """InstanceReplicaGroupPartitionSelectorTest.testPoolsWhenOneMorePoolAddedAndOneMoreReplicaGroupsNeeded
    (release-1.5.1): one existing group on pool 0, a second pool and a second group added; the new
    group takes pool 1's servers."""
    existing = InstancePartitions.of("0f97dac8-4123-47c6-9a4d-b8ce039c5ea5_OFFLINE",
                                     {"0_0": (rg("rg0-0"), rg("rg0-1"))})
    pools = {0: [rg("rg0-0"), rg("rg0-1")], 1: [rg("rg1-0"), rg("rg1-1")]}
    got = select_replica_group_instances(SELECTOR_CONFIG, pools, table_hash("tableNameBlah"), existing=existing)
    assert got == {"0_0": (rg("rg0-0"), rg("rg0-1")), "0_1": (rg("rg1-0"), rg("rg1-1"))}


def test_explicit_config_equivalent_to_legacy_gives_same_partitions() -> None:
    """The legacy form maps to numReplicaGroups=replication, numPartitions, numInstancesPerPartition."""
    table = iac_table(rg_entry(numReplicaGroups=3, numPartitions=2, numInstancesPerPartition=2))
    assert dict(instance_partitions_for(table, "OFFLINE", SERVERS).partitions)["1_2"] == (i(6), i(0))


def test_legacy_config_is_used_only_with_replica_group_strategy() -> None:
    """§4.1: the legacy form applies to OFFLINE tables with the replica-group segment assignment strategy."""
    plain = offline_table({"replication": "3", "replicaGroupStrategyConfig": {"numInstancesPerPartition": 2}})
    assert instance_assignment_config(plain, "OFFLINE") is None
    cfg = instance_assignment_config(legacy_table(numInstancesPerPartition=2), "OFFLINE")
    assert cfg is not None
    assert cfg.replica_group_partition == ReplicaGroupPartitionConfig(True, 0, 3, 2, 0, 0, None)
    assert cfg.tag_pool == TagPoolConfig(TAG)


def test_default_instance_partitions_rotate_all_tagged_servers() -> None:
    """No config: all tagged servers sorted, rotated left by abs(hash) % n (8 for myTable_OFFLINE, n=10)."""
    ip = instance_partitions_for(offline_table({"replication": "2"}), "OFFLINE", SERVERS)
    assert dict(ip.partitions) == {"0_0": tuple(i(n) for n in (8, 9, 0, 1, 2, 3, 4, 5, 6, 7))}


def test_default_instance_partitions_keep_disabled_servers() -> None:
    """Disabling a server must not reshuffle data, so the default partitions include disabled servers."""
    servers = [Instance(s.name, s.tags, enabled=(s.name != i(3))) for s in SERVERS]
    assert i(3) in default_instance_partitions("myTable_OFFLINE", TAG, servers).instances(0, 0)


def test_non_replica_group_takes_first_num_instances_of_rotated_list() -> None:
    """§4.2 step 3: non-replica-group mode takes the first numInstances of the (rotated) pool."""
    table = iac_table({"tagPoolConfig": {"tag": TAG}, "replicaGroupPartitionConfig": {"numInstances": 3}})
    assert dict(instance_partitions_for(table, "OFFLINE", SERVERS).partitions) == {"0_0": (i(8), i(9), i(0))}


def test_disabled_and_untagged_servers_are_not_assigned() -> None:
    """§4.2 step 1: keep the enabled instances that have the tag, sorted by name."""
    servers = [*SERVERS[:3], Instance("zz_other", tags=("other",)), Instance(i(9), tags=(TAG,), enabled=False)]
    # 3 qualified servers, rotation 438536198 % 3 = 2 (digit sum 47 -> 2).
    table = iac_table({"tagPoolConfig": {"tag": TAG}, "replicaGroupPartitionConfig": {}})
    assert instance_partitions_for(table, "OFFLINE", servers).instances(0, 0) == (i(2), i(0), i(1))


def pooled_servers() -> list[Instance]:
    return [Instance(f"{p}{n}", tags=(TAG,), pools={TAG: pool}) for pool, p in ((0, "a"), (1, "b")) for n in range(4)]


def test_pool_based_replica_groups_each_come_from_one_pool() -> None:
    """Pools 0 and 1 with 4 servers each; rotation 438536198 % 4 = 2; rg r -> pool[(h + r) % 2]."""
    entry = {
        "tagPoolConfig": {"tag": TAG, "poolBased": True},
        "replicaGroupPartitionConfig": {
            "replicaGroupBased": True,
            "numReplicaGroups": 2,
            "numInstancesPerReplicaGroup": 2,
        },
    }
    ip = instance_partitions_for(iac_table(entry), "OFFLINE", pooled_servers())
    assert dict(ip.partitions) == {"0_0": ("a2", "a3"), "0_1": ("b2", "b3")}


def test_num_pools_picks_pool_by_table_hash() -> None:
    """numPools=1 of 2 pools: start at abs(hash) % 2 = 0 -> pool 0 only."""
    entry = {
        "tagPoolConfig": {"tag": TAG, "poolBased": True, "numPools": 1},
        "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": 2},
    }
    ip = instance_partitions_for(iac_table(entry), "OFFLINE", pooled_servers())
    # One pool, two groups dealt round-robin from [a2, a3, a0, a1]; floor(4 / 2) = 2 per group.
    assert dict(ip.partitions) == {"0_0": ("a2", "a0"), "0_1": ("a3", "a1")}


def test_explicit_pools_are_kept() -> None:
    entry = {
        "tagPoolConfig": {"tag": TAG, "poolBased": True, "pools": [1]},
        "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": 1},
    }
    assert instance_partitions_for(iac_table(entry), "OFFLINE", pooled_servers()).instances(0, 0) == (
        "b2",
        "b3",
        "b0",
        "b1",
    )


def test_realtime_kinds_use_their_own_entries() -> None:
    """CONSUMING/COMPLETED entries apply to REALTIME tables; partitions are named <raw>_<kind>."""
    table = iac_table(rg_entry(numReplicaGroups=1), kind="CONSUMING", table_type="REALTIME")
    realtime = [Instance(s.name, tags=(TAG,)) for s in SERVERS]
    assert instance_partitions_for(table, "CONSUMING", realtime).name == "myTable_CONSUMING"
    assert instance_assignment_config(table, "OFFLINE") is None


def test_partition_column_lookup() -> None:
    assert partition_column(iac_table(rg_entry(numReplicaGroups=1, partitionColumn="id"))) == "id"
    assert partition_column(legacy_table(partitionColumn="memberId", numInstancesPerPartition=1)) == "memberId"
    assert partition_column(offline_table({})) is None


# -- instance assignment: bad configs ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"replicaGroupPartitionConfig": {}}, "tagPoolConfig"),
        ({"tagPoolConfig": {"tag": TAG}}, "replicaGroupPartitionConfig"),
        ({"tagPoolConfig": {}, "replicaGroupPartitionConfig": {}}, "tagPoolConfig.tag"),
        (rg_entry(numReplicaGroups=0), "replicaGroupPartitionConfig.numReplicaGroups"),
        (rg_entry(numReplicaGroups="three"), "replicaGroupPartitionConfig.numReplicaGroups"),
        ({**rg_entry(numReplicaGroups=1), "partitionSelector": "NOPE"}, "partitionSelector"),
        ({"tagPoolConfig": {"tag": TAG, "numPools": -1}, "replicaGroupPartitionConfig": {}}, "tagPoolConfig.numPools"),
    ],
)
def test_bad_instance_assignment_config_names_the_key(entry: dict[str, Any], key: str) -> None:
    with pytest.raises(TableConfigError, match=key.replace(".", r"\.")) as err:
        instance_assignment_config(iac_table(entry), "OFFLINE")
    assert err.value.where == f"instanceAssignmentConfigMap.OFFLINE.{key}"


@pytest.mark.parametrize(
    ("entry", "key", "message"),
    [
        (
            rg_entry(numReplicaGroups=3, numInstancesPerReplicaGroup=4),
            "numInstancesPerReplicaGroup",
            "Not enough qualified instances from pool: 0 (10 in the pool, asked for 12)",
        ),
        (rg_entry(numReplicaGroups=11), "numReplicaGroups", "cannot select 11 replica-groups from 10 instances"),
        (
            rg_entry(numReplicaGroups=2, numInstancesPerReplicaGroup=2, numInstancesPerPartition=3),
            "numInstancesPerPartition",
            "must be smaller or equal to number of instances per replica-group: 2",
        ),
        (
            {"tagPoolConfig": {"tag": TAG}, "replicaGroupPartitionConfig": {"numInstances": 11}},
            "numInstances",
            "asked for 11",
        ),
        (
            {"tagPoolConfig": {"tag": "nobody"}, "replicaGroupPartitionConfig": {}},
            "tag",
            "No enabled instance has the tag: nobody",
        ),
        (
            {**rg_entry(numReplicaGroups=1), "constraintConfig": {"constraints": ["x"]}},
            "constraintConfig",
            "UnsupportedOperationException",
        ),
        (
            {**rg_entry(numReplicaGroups=1), "partitionSelector": "FD_AWARE_INSTANCE_PARTITION_SELECTOR"},
            "partitionSelector",
            "not modelled",
        ),
    ],
)
def test_infeasible_assignment_names_the_key(entry: dict[str, Any], key: str, message: str) -> None:
    with pytest.raises(TableConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        instance_partitions_for(iac_table(entry), "OFFLINE", SERVERS)
    assert err.value.where.endswith(key)


def test_pool_errors_name_the_key() -> None:
    too_many = {"tagPoolConfig": {"tag": TAG, "poolBased": True, "numPools": 3}, "replicaGroupPartitionConfig": {}}
    with pytest.raises(TableConfigError, match=r"numPools.*Not enough instance pools \(2 in the cluster"):
        instance_partitions_for(iac_table(too_many), "OFFLINE", pooled_servers())
    missing = {"tagPoolConfig": {"tag": TAG, "poolBased": True, "pools": [7]}, "replicaGroupPartitionConfig": {}}
    with pytest.raises(TableConfigError, match=r"pools: Cannot find all instance pools configured: \[7\]"):
        instance_partitions_for(iac_table(missing), "OFFLINE", pooled_servers())
    no_pools = {"tagPoolConfig": {"tag": TAG, "poolBased": True}, "replicaGroupPartitionConfig": {}}
    with pytest.raises(TableConfigError, match="poolBased: No enabled instance has the pool configured"):
        instance_partitions_for(iac_table(no_pools), "OFFLINE", SERVERS)


def test_unknown_map_key_and_legacy_errors_name_the_key() -> None:
    with pytest.raises(TableConfigError, match=r"instanceAssignmentConfigMap\.OFLINE"):
        instance_assignment_config(iac_table(rg_entry(numReplicaGroups=1), kind="OFLINE"), "OFFLINE")
    bad_legacy = offline_table(
        {
            "segmentAssignmentStrategy": "ReplicaGroupSegmentAssignmentStrategy",
            "replicaGroupStrategyConfig": {"partitionColumn": "c", "numInstancesPerPartition": 1},
        }
    )
    with pytest.raises(TableConfigError, match=r"partitionColumn: Number of partitions for column: c"):
        instance_assignment_config(bad_legacy, "OFFLINE")


# -- instance assignment: properties -----------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    n_servers=st.integers(1, 24),
    groups=st.integers(1, 4),
    partitions=st.integers(0, 4),
    per_partition=st.integers(0, 4),
    name=st.text(min_size=1, max_size=12),
)
def test_replica_groups_are_disjoint_equal_and_partitions_stay_inside(
    n_servers: int, groups: int, partitions: int, per_partition: int, name: str
) -> None:
    """Property: groups are disjoint, equally sized (floor(n / groups)), and each partition holds
    numInstancesPerPartition (or all) servers of its own group."""
    servers = [Instance(f"s{k:02d}", tags=(TAG,)) for k in range(n_servers)]
    rg = ReplicaGroupPartitionConfig(True, 0, groups, 0, partitions, per_partition)
    config = InstanceAssignmentConfig(TagPoolConfig(TAG), rg)
    per_group = n_servers // groups
    if per_group == 0 or per_partition > per_group:
        with pytest.raises(TableConfigError):
            assign_instances(f"{name}_OFFLINE", config, servers)
        return
    ip = assign_instances(f"{name}_OFFLINE", config, servers)
    members = [{s for p in range(ip.num_partitions) for s in ip.instances(p, r)} for r in range(groups)]
    used = min(per_group, max(partitions, 1) * (per_partition or per_group))
    assert all(len(m) == used for m in members)
    assert sum(len(m) for m in members) == len(set().union(*members))
    for p in range(max(partitions, 1)):
        for r in range(groups):
            assert len(ip.instances(p, r)) == (per_partition or per_group)


# -- segment assignment ------------------------------------------------------------------------------
THREE_BY_TWO = InstancePartitions("t_OFFLINE", {"0_0": ("a0", "a1"), "0_1": ("b0", "b1"), "0_2": ("c0", "c1")})


def test_replica_group_assignment_mirrors_the_least_loaded_index() -> None:
    """§4.3: least-loaded server of rg 0 (lowest index on ties), same index in every other group."""
    ideal = assign_segments(["s0", "s1", "s2"], THREE_BY_TWO, strategy="replicaGroup", replication=3)
    assert ideal == {
        "s0": {"a0": "ONLINE", "b0": "ONLINE", "c0": "ONLINE"},
        "s1": {"a1": "ONLINE", "b1": "ONLINE", "c1": "ONLINE"},
        "s2": {"a0": "ONLINE", "b0": "ONLINE", "c0": "ONLINE"},
    }


def test_replica_group_assignment_counts_existing_segments() -> None:
    current = {"old": {"a0": "ONLINE", "b0": "ONLINE", "c0": "ONLINE"}}
    assert assign_segment(current, THREE_BY_TWO, strategy="replicaGroup", replication=3) == ("a1", "b1", "c1")


def test_partitioned_assignment_uses_segment_partition() -> None:
    """§4.3: partition = segment partition % numInstancePartitions (LLC name gives the partition)."""
    ip = InstancePartitions("t_OFFLINE", {"0_0": ("a0",), "1_0": ("a1",), "0_1": ("b0",), "1_1": ("b1",)})
    ideal = assign_segments(
        ["t__3__0__20250101T0000Z", "t__4__0__20250101T0000Z"], ip, strategy="replicaGroup", replication=2
    )
    assert ideal["t__3__0__20250101T0000Z"] == {"a1": "ONLINE", "b1": "ONLINE"}
    assert ideal["t__4__0__20250101T0000Z"] == {"a0": "ONLINE", "b0": "ONLINE"}


def test_balanced_assignment_picks_fewest_segments_lowest_index() -> None:
    ip = InstancePartitions("t_OFFLINE", {"0_0": ("x", "y", "z")})
    ideal = assign_segments(["s0", "s1", "s2"], ip, strategy="balanced", replication=2)
    assert [tuple(ideal[s]) for s in ("s0", "s1", "s2")] == [("x", "y"), ("z", "x"), ("y", "z")]


def test_balanced_assignment_errors_name_the_key() -> None:
    with pytest.raises(TableConfigError, match=r"segmentsConfig\.replication: There are less instances: 2"):
        assign_segments(["s"], InstancePartitions("t", {"0_0": ("x", "y")}), strategy="balanced", replication=3)
    with pytest.raises(TableConfigError, match="should contain 1 replica and 1 partition"):
        assign_segments(["s"], THREE_BY_TWO, strategy="balanced", replication=1)


def test_consuming_assignment_non_replica_group() -> None:
    """§4.3: replica j of partition p on instances[(p*replication + j) % n] (6 servers, 4 replicas)."""
    ip = InstancePartitions("t_CONSUMING", {"0_0": tuple(f"i{k}" for k in range(6))})
    assert assign_consuming_segment(0, ip, 4) == ("i0", "i1", "i2", "i3")
    assert assign_consuming_segment(1, ip, 4) == ("i4", "i5", "i0", "i1")
    assert assign_consuming_segment(2, ip, 4) == ("i2", "i3", "i4", "i5")


def test_consuming_assignment_replica_groups() -> None:
    """§4.3: one partition -> instances_rg[p % len]; explicit partitions -> first of p % numPartitions."""
    assert assign_consuming_segment(4, THREE_BY_TWO, 3) == ("a0", "b0", "c0")
    assert assign_consuming_segment(5, THREE_BY_TWO, 3) == ("a1", "b1", "c1")
    ip = InstancePartitions(
        "t_CONSUMING", {"0_0": ("a0", "a1"), "1_0": ("a2", "a3"), "0_1": ("b0", "b1"), "1_1": ("b2", "b3")}
    )
    assert assign_consuming_segment(3, ip, 2) == ("a2", "b2")


def test_segment_partition_id_sources_in_order() -> None:
    """§4.3: LLC name, uploaded name, single-partition metadata, else abs(hashCode % 10000)."""
    assert segment_partition_id("myTable__7__12__20250101T0000Z") == 7
    assert segment_partition_id("uploaded__myTable__5__20250101T0000Z__x") == 5
    assert segment_partition_id("seg", {"memberId": [3]}, "memberId") == 3
    assert segment_partition_id("x", {"memberId": [1, 2]}, "memberId") == 120  # "x".hashCode() = 120
    assert segment_partition_id("x", {"a": [1], "b": [2]}) == 120  # two columns, none named: no choice


def test_strategy_choice() -> None:
    """§4.3: configured name lower-cased (unknown -> balanced); else 1x1 partitions -> balanced."""
    one = InstancePartitions("t", {"0_0": ("x",)})
    assert segment_assignment_strategy(offline_table({}), "OFFLINE", one) == "balanced"
    assert segment_assignment_strategy(offline_table({}), "OFFLINE", THREE_BY_TWO) == "replicaGroup"
    rg_map = {"OFFLINE": {"segmentAssignmentStrategy": "ReplicaGroup"}}
    configured = offline_table({}, segmentAssignmentConfigMap=rg_map)
    assert segment_assignment_strategy(configured, "OFFLINE", one) == "replicaGroup"
    odd = offline_table({}, segmentAssignmentConfigMap={"OFFLINE": {"segmentAssignmentStrategy": "whatever"}})
    assert segment_assignment_strategy(odd, "OFFLINE", THREE_BY_TWO) == "balanced"
    rr = offline_table({}, segmentAssignmentConfigMap={"OFFLINE": {"segmentAssignmentStrategy": "RoundRobin"}})
    with pytest.raises(TableConfigError, match=r"segmentAssignmentConfigMap\.OFFLINE\.segmentAssignmentStrategy"):
        segment_assignment_strategy(rr, "OFFLINE", one)


def test_unknown_strategy_name_is_rejected() -> None:
    with pytest.raises(TableConfigError, match="segmentAssignmentStrategy"):
        assign_segments(["s"], THREE_BY_TWO, strategy="fancy", replication=3)


@settings(max_examples=60, deadline=None)
@given(groups=st.integers(1, 4), width=st.integers(1, 5), n_segments=st.integers(0, 60))
def test_replica_group_assignment_is_mirrored_and_even(groups: int, width: int, n_segments: int) -> None:
    """Property: each segment sits on exactly one server per group, at the same index in every group,
    and rg 0's servers differ by at most one segment."""
    ip = InstancePartitions("t", {f"0_{r}": tuple(f"g{r}s{k}" for k in range(width)) for r in range(groups)})
    ideal = assign_segments([f"seg{k}" for k in range(n_segments)], ip, strategy="replicaGroup", replication=groups)
    counts = dict.fromkeys(ip.instances(0, 0), 0)
    for servers in ideal.values():
        indexes = {ip.instances(0, r).index(next(s for s in servers if s.startswith(f"g{r}s"))) for r in range(groups)}
        assert len(servers) == groups and len(indexes) == 1
        counts[ip.instances(0, 0)[indexes.pop()]] += 1
    assert max(counts.values()) - min(counts.values()) <= 1
