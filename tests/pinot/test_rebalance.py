"""Segment reassignment on rebalance and the scale-out what-if (workbench.pinot.rebalance).

Replica-group vectors are Pinot's ``SegmentAssignmentUtilsTest.testRebalanceReplicaGroupBasedTable``; the
balanced rebalance is checked against the totals of ``testRebalanceTableWithHelixAutoRebalanceStrategy`` (and
replica for replica against Pinot 1.5.1 itself in ``tests/groundtruth/test_controller.py``);
scale-out expectations are derived by hand from the algorithm's rules, stated in each docstring.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from workbench.errors import InputError
from workbench.pinot.assignment import (
    InstancePartitions,
    instance_assignment_config,
    instance_partitions_for,
    reassign_balanced,
    reassign_replica_group,
    segment_assignment_strategy,
)
from workbench.pinot.rebalance import compare_minimize, plan_rebalance, servers_for_table
from workbench.pinot.table_config import TableConfig


def seg(i: int) -> str:
    return f"segment_{i}"


def inst(i: int) -> str:
    return f"instance_{i}"


def counts(ideal: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for servers in ideal.values():
        for s in servers:
            out[s] = out.get(s, 0) + 1
    return out


def moved_to(before: Any, after: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for segment, servers in after.items():
        for s in set(servers) - set(before[segment]):
            out[s] = out.get(s, 0) + 1
    return out


# -- replica-group reassignment: SegmentAssignmentUtilsTest ------------------------------------------
RG3 = InstancePartitions.of("t", {"0_0": (inst(0), inst(1), inst(2)), "0_1": (inst(3), inst(4), inst(5)),
                                  "0_2": (inst(6), inst(7), inst(8))})
SPRAYED = {seg(k): dict.fromkeys((inst(k % 3), inst(k % 3 + 3), inst(k % 3 + 6)), "ONLINE") for k in range(90)}


def test_balanced_replica_group_table_is_left_alone() -> None:
    """90 segments sprayed over 3 groups of 3: already balanced, the rebalance changes nothing."""
    assert reassign_replica_group(SPRAYED, RG3, "testTable_OFFLINE") == SPRAYED


def test_replacing_one_server_per_group_moves_only_its_segments() -> None:
    """instance_0 -> instance_9 (group 0), instance_4 -> instance_10 (group 1): 30 segments to each, nothing else."""
    new = InstancePartitions.of("t", {"0_0": (inst(9), inst(1), inst(2)), "0_1": (inst(3), inst(10), inst(5)),
                                      "0_2": (inst(6), inst(7), inst(8))})
    after = reassign_replica_group(SPRAYED, new, "testTable_OFFLINE")
    assert set(counts(after).values()) == {30}
    assert moved_to(SPRAYED, after) == {inst(9): 30, inst(10): 30}


def test_growing_a_group_moves_ceil_share_to_the_new_server() -> None:
    """90 segments on 3 servers per group, grown to 4: target ceil(90/4) = 23, so the old servers keep 23,
    23, 23 and the new one takes the other 21, mirrored in every group."""
    grown = InstancePartitions.of("t", {"0_0": (inst(0), inst(1), inst(2), inst(20)),
                                        "0_1": (inst(3), inst(4), inst(5), inst(21)),
                                        "0_2": (inst(6), inst(7), inst(8), inst(22))})
    after = reassign_replica_group(SPRAYED, grown, "testTable_OFFLINE")
    assert moved_to(SPRAYED, after) == {inst(20): 21, inst(21): 21, inst(22): 21}
    assert counts(after)[inst(0)] == 23


# -- balanced rebalance: totals of testRebalanceTableWithHelixAutoRebalanceStrategy ------------------
BALANCED = {seg(k): dict.fromkeys((inst(3 * k % 10), inst((3 * k + 1) % 10), inst((3 * k + 2) % 10)), "ONLINE")
            for k in range(100)}


def test_balanced_rebalance_matches_helix_movement_totals() -> None:
    """Replace one server: 30 to the newcomer; add 5: 20 to each newcomer, all at 20; remove 5: 150 moved;
    replace all: 30 to each new server."""
    assert reassign_balanced(BALANCED, [inst(i) for i in range(10)], 3) == BALANCED
    replaced = reassign_balanced(BALANCED, [inst(10), *(inst(i) for i in range(1, 10))], 3)
    assert moved_to(BALANCED, replaced) == {inst(10): 30}
    grown = reassign_balanced(BALANCED, [inst(i) for i in range(15)], 3)
    assert moved_to(BALANCED, grown) == {inst(i): 20 for i in range(10, 15)}
    assert set(counts(grown).values()) == {20}
    shrunk = reassign_balanced(BALANCED, [inst(i) for i in range(5)], 3)
    assert sum(moved_to(BALANCED, shrunk).values()) == 150
    assert all(len(servers) == 3 for servers in shrunk.values())
    renamed = reassign_balanced(BALANCED, [f"i_{i}" for i in range(10)], 3)
    assert moved_to(BALANCED, renamed) == {f"i_{i}": 30 for i in range(10)}


# -- the scale-out what-if ---------------------------------------------------------------------------
def rg_table(groups: int, *, minimize: bool = False) -> TableConfig:
    return TableConfig.from_json({"tableName": "myTable", "tableType": "OFFLINE",
                                  "segmentsConfig": {"replication": groups},
                                  "instanceAssignmentConfigMap": {"OFFLINE": {
                                      "minimizeDataMovement": minimize,
                                      "tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"},
                                      "replicaGroupPartitionConfig": {"replicaGroupBased": True,
                                                                      "numReplicaGroups": groups}}}})


SIZES = {f"seg{i:02d}": 1_000 + i for i in range(24)}


def test_growing_replica_groups_with_minimize_keeps_slots_and_fills_only_newcomers() -> None:
    """2 groups x 3 -> 2 x 4: existing servers keep their slots, the new ones are appended; target
    ceil(24/4) = 6, so each newcomer loads 6 segments and nobody else loads any."""
    plan = plan_rebalance(rg_table(2, minimize=True), [f"s{i}" for i in range(6)], [f"s{i}" for i in range(8)], SIZES)
    old, new = plan.previous_instance_partitions["OFFLINE"], plan.instance_partitions["OFFLINE"]
    for r in range(2):
        assert new.instances(0, r)[:3] == old.instances(0, r)
    assert {s: n for s, n in plan.segments_in.items() if n} == {"s6": 6, "s7": 6}
    moved = [s for s, servers in plan.assignment.items() if set(servers) - set(plan.previous_assignment[s])]
    assert plan.bytes_moved == 2 * sum(SIZES[s] for s in moved)
    assert plan.minimize_data_movement


def test_minimize_avoids_the_reshuffle_a_fresh_assignment_makes() -> None:
    """3 groups of 2 on 6 servers, grown to 8: groups stay at floor(8/3) = 2, so with minimize nothing moves.
    Without it the rotation changes (hash % 8 = 6: [s6 s7 s0 s1 s2 s3 s4 s5] dealt r0 = s6 s1, r1 = s7 s2,
    r2 = s0 s3, against r0 = s2 s5, r1 = s3 s0, r2 = s4 s1 before), so segments move."""
    plans = compare_minimize(rg_table(3), [f"s{i}" for i in range(6)], [f"s{i}" for i in range(8)], SIZES)
    assert plans["minimize"].segments_moved == 0
    fresh = plans["no_minimize"]
    assert dict(fresh.instance_partitions["OFFLINE"].partitions) == {
        "0_0": ("s6", "s1"), "0_1": ("s7", "s2"), "0_2": ("s0", "s3")}
    assert dict(fresh.previous_instance_partitions["OFFLINE"].partitions) == {
        "0_0": ("s2", "s5"), "0_1": ("s3", "s0"), "0_2": ("s4", "s1")}
    assert fresh.segments_moved > 0
    assert not fresh.minimize_data_movement


def test_losing_a_server_empties_it_and_keeps_one_replica_per_group() -> None:
    plan = plan_rebalance(rg_table(2, minimize=True), [f"s{i}" for i in range(6)], [f"s{i}" for i in range(5)], SIZES)
    rows = {m.server: m for m in plan.moves}
    assert rows["s5"].segments_after == 0 and rows["s5"].segments_out == rows["s5"].segments_before
    ip = plan.instance_partitions["OFFLINE"]
    group_of = ip.replica_group_of()
    for servers in plan.assignment.values():
        assert sorted(group_of[s] for s in servers) == [0, 1]
    assert sum(m.segments_in for m in plan.moves) == sum(m.segments_out for m in plan.moves)


def test_balanced_table_grows_by_moving_only_to_newcomers() -> None:
    """Default (no instance config) table, replication 2: 48 replicas on 4 servers -> 6 servers, cap 8."""
    table = TableConfig.from_json({"tableName": "events", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}})
    plan = plan_rebalance(table, ["a", "b", "c", "d"], ["a", "b", "c", "d", "e", "f"], SIZES)
    assert {s: n for s, n in plan.segments_in.items() if n} == {"e": 8, "f": 8}
    assert all(m.segments_after == 8 for m in plan.moves)


def test_realtime_completed_segments_follow_their_stream_partition() -> None:
    """No COMPLETED config: completed segments are placed like consuming ones, replica j of partition p
    on instances[(p * 2 + j) % n] (here 4 servers, so partition 1 -> servers 2, 3)."""
    table = TableConfig.from_json({"tableName": "rt", "tableType": "REALTIME", "segmentsConfig": {"replication": 2}})
    sizes = {f"rt__{p}__{q}__20250101T0000Z": 10 for p in range(4) for q in range(2)}
    plan = plan_rebalance(table, ["a", "b", "c", "d"], ["a", "b", "c", "d"], sizes,
                          consuming=["rt__0__1__20250101T0000Z"])
    ip = plan.instance_partitions["CONSUMING"].instances(0, 0)
    assert set(plan.assignment["rt__1__0__20250101T0000Z"]) == {ip[2], ip[3]}
    assert plan.assignment["rt__0__1__20250101T0000Z"] == dict.fromkeys((ip[0], ip[1]), "CONSUMING")
    assert plan.segments_moved == 0


def test_bad_sizes_and_options_are_rejected() -> None:
    with pytest.raises(InputError, match=r"segment_sizes\.x"):
        plan_rebalance(rg_table(2), ["a", "b"], ["a", "b"], {"x": -1})
    with pytest.raises(InputError, match="minimize_data_movement"):
        compare_minimize(rg_table(2), ["a", "b"], ["a", "b"], SIZES, minimize_data_movement=True)


def test_server_names_get_the_table_tags() -> None:
    table = TableConfig.from_json({"tableName": "rt", "tableType": "REALTIME", "tenants": {"server": "T"}})
    assert servers_for_table(table, ["a"])[0].tags == ("T_REALTIME",)


# -- the strategy spellings ----------------------------------------------------------------------------
def offline(**segments_config: Any) -> TableConfig:
    return TableConfig.from_json({"tableName": "myTable", "tableType": "OFFLINE", "segmentsConfig": {
        "replication": 3, "replicaGroupStrategyConfig": {"numInstancesPerPartition": 2}, **segments_config}})


@pytest.mark.parametrize("spelling", ["replicagroup", "replicaGroup", "REPLICAGROUP"])
def test_current_replica_group_spelling_builds_replica_groups_without_warning(spelling: str) -> None:
    """InstanceAssignmentConfigUtils: equalsIgnoreCase("replicagroup") on segmentsConfig.segmentAssignmentStrategy."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg = instance_assignment_config(offline(segmentAssignmentStrategy=spelling), "OFFLINE")
    assert cfg is not None and cfg.replica_group_partition.num_replica_groups == 3


def test_legacy_spelling_still_works_and_names_the_current_key() -> None:
    with pytest.warns(UserWarning, match=r"segmentsConfig\.segmentAssignmentStrategy = 'replicagroup'"):
        cfg = instance_assignment_config(offline(segmentAssignmentStrategy="ReplicaGroupSegmentAssignmentStrategy"),
                                         "OFFLINE")
    assert cfg is not None and cfg.replica_group_partition.num_instances_per_replica_group == 2


def test_strategy_map_alone_gives_one_group_and_warns_about_replication() -> None:
    """segmentAssignmentConfigMap picks the *segment* strategy only; Pinot reads replicaGroupStrategyConfig
    only with segmentsConfig.segmentAssignmentStrategy = replicagroup, so the partitions are 1 x all servers
    and each segment gets one replica; Pinot logs the replication mismatch, the workbench warns."""
    table = TableConfig.from_json({"tableName": "myTable", "tableType": "OFFLINE",
                                   "segmentAssignmentConfigMap": {
                                       "OFFLINE": {"segmentAssignmentStrategy": "ReplicaGroup"}},
                                   "segmentsConfig": {"replication": 3,
                                                      "replicaGroupStrategyConfig": {"numInstancesPerPartition": 2}}})
    assert instance_assignment_config(table, "OFFLINE") is None
    ip = instance_partitions_for(table, "OFFLINE", servers_for_table(table, [f"s{i}" for i in range(6)]))
    with pytest.warns(UserWarning, match="segmentsConfig.replication is 3"):
        assert segment_assignment_strategy(table, "OFFLINE", ip) == "replicaGroup"


def test_realtime_key_is_not_read_for_completed_segments() -> None:
    table = TableConfig.from_json({"tableName": "rt", "tableType": "REALTIME",
                                   "segmentAssignmentConfigMap": {
                                       "REALTIME": {"segmentAssignmentStrategy": "replicagroup"}}})
    one = InstancePartitions.of("rt_CONSUMING", {"0_0": ("a", "b")})
    with pytest.warns(UserWarning, match=r"segmentAssignmentConfigMap\.COMPLETED"):
        assert segment_assignment_strategy(table, "COMPLETED", one) == "balanced"


def test_deprecated_minimize_keys_warn_and_still_count() -> None:
    table = TableConfig.from_json({"tableName": "t", "tableType": "OFFLINE", "instanceAssignmentConfigMap": {
        "OFFLINE": {"tagPoolConfig": {"tag": "x"}, "replicaGroupPartitionConfig": {
            "replicaGroupBased": True, "numReplicaGroups": 1, "minimizeDataMovement": True}}}})
    with pytest.warns(UserWarning, match=r"instanceAssignmentConfigMap\.OFFLINE\.minimizeDataMovement"):
        cfg = instance_assignment_config(table, "OFFLINE")
    assert cfg is not None and cfg.minimize_data_movement
    legacy = offline(segmentAssignmentStrategy="replicagroup", minimizeDataMovement=True)
    with pytest.warns(UserWarning, match=r"instanceAssignmentConfigMap\.OFFLINE\.minimizeDataMovement"):
        cfg = instance_assignment_config(legacy, "OFFLINE")
    assert cfg is not None and cfg.minimize_data_movement
