"""Routing options added since the seeds: fixed replica from the broker config, orderedPreferredPools and
its older name, numReplicaGroupsToQuery with fixed replica, and adaptive selection under strict replica
groups (one whole replica group per query, Pinot #18947). Expectations are derived by hand from the
rules quoted in each docstring.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from workbench.errors import TableConfigError
from workbench.pinot.jvm import java_string_hash
from workbench.pinot.routing import (
    ReplicaGroupInstanceSelector,
    StrictReplicaGroupInstanceSelector,
    instance_selector_for,
    parse_routing_options,
    routing_state_from_assignment,
)
from workbench.pinot.routing.adaptive import (
    AdaptiveConfig,
    AdaptiveSelectorType,
    AdaptiveServerSelector,
    ServerRoutingStatsManager,
    adaptive_server_selector,
)
from workbench.pinot.table_config import TableConfig

MIRRORED = {f"seg{k}": {"s0": "ONLINE", "s1": "ONLINE", "s2": "ONLINE"} for k in range(12)}


def table(**routing: object) -> TableConfig:
    return TableConfig.from_json({"tableName": "testTable", "tableType": "OFFLINE", "routing": routing})


def adaptive(latencies: dict[str, float], *, strict_group: bool = False) -> AdaptiveServerSelector:
    config = AdaptiveConfig(AdaptiveSelectorType.LATENCY, ewma_alpha=1.0, autodecay_window_ms=0,
                            enable_strict_replica_group=strict_group)
    stats = ServerRoutingStatsManager(config)
    for server, latency in latencies.items():
        stats.record_submission(server, 0)
        stats.record_response(server, latency, 0)
    selector = adaptive_server_selector(config, stats, np.random.default_rng(0))
    assert selector is not None
    return selector


def test_broker_config_key_turns_fixed_replica_on_and_the_table_overrides_it() -> None:
    state = routing_state_from_assignment(MIRRORED)
    broker = {"pinot.broker.use.fixed.replica": "true"}
    assert instance_selector_for(table(), state, broker_config=broker).use_fixed_replica
    assert not instance_selector_for(table(useFixedReplica=False), state, broker_config=broker).use_fixed_replica
    with pytest.raises(TableConfigError, match="cannot be enabled at the same time"):
        instance_selector_for(table(), state, broker_config=broker, adaptive=adaptive({"s0": 1}))


def test_fixed_replica_with_num_replica_groups_spreads_from_the_table_hash() -> None:
    """§3.4: idx = (hash(raw table) & 0x7FFFFFFF + offset) % 3, offset cycling over G = 2 groups."""
    selector = ReplicaGroupInstanceSelector(routing_state_from_assignment(MIRRORED), table_name="testTable_OFFLINE",
                                            use_fixed_replica=True)
    h = java_string_hash("testTable") & 0x7FFFFFFF
    expected = [f"s{(h + k % 2) % 3}" for k in range(12)]
    for request_id in (0, 7):
        routed = selector.select(list(MIRRORED), request_id, {"numReplicaGroupsToQuery": "2"}).segment_to_server
        assert [routed[s] for s in MIRRORED] == expected


def test_ordered_preferred_replicas_is_read_with_a_warning() -> None:
    with pytest.warns(UserWarning, match=r"queryOptions\.orderedPreferredPools"):
        assert parse_routing_options({"orderedPreferredReplicas": "2|1"}).ordered_preferred_pools == (2, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        both = {"orderedPreferredPools": "0", "orderedPreferredReplicas": "2|1"}
        assert parse_routing_options(both).ordered_preferred_pools == (0,)


def test_num_replica_groups_is_ignored_under_adaptive_selection_with_a_warning() -> None:
    selector = ReplicaGroupInstanceSelector(routing_state_from_assignment(MIRRORED),
                                            adaptive=adaptive({"s0": 9, "s1": 2, "s2": 5}))
    with pytest.warns(UserWarning, match="numReplicaGroupsToQuery is not supported"):
        routed = selector.select(list(MIRRORED), 0, {"numReplicaGroupsToQuery": "3"}).segment_to_server
    assert set(routed.values()) == {"s1"}


def test_broker_config_reads_the_strict_replica_group_flag() -> None:
    key = "pinot.broker.adaptive.server.selector."
    config = AdaptiveConfig.from_broker_config({key + "type": "LATENCY", key + "enable.stats.collection": "true",
                                                key + "enable.strict.replica.group": "TRUE"})
    assert config.enable_strict_replica_group
    assert not AdaptiveConfig.from_broker_config({}).enable_strict_replica_group


# Issue #12507's layout: 2 partitions x 2 replica groups; partition 0 on (A, C), partition 1 on (B, D).
UPSERT = {**{f"p0_{k}": {"A": "ONLINE", "C": "ONLINE"} for k in range(3)},
          **{f"p1_{k}": {"B": "ONLINE", "D": "ONLINE"} for k in range(3)}}
LATENCY = {"A": 5.0, "D": 6.0, "C": 20.0, "B": 100.0}


def test_strict_adaptive_without_the_flag_mixes_replica_groups() -> None:
    """Per-segment best server: A for partition 0, D for partition 1 (groups 0 and 1), the #12507 report."""
    selector = StrictReplicaGroupInstanceSelector(routing_state_from_assignment(UPSERT), adaptive=adaptive(LATENCY))
    assert set(selector.select(list(UPSERT), 0).segment_to_server.values()) == {"A", "D"}


def test_strict_adaptive_with_the_flag_picks_the_group_whose_worst_server_is_best() -> None:
    """Groups by sorted ideal-state index: group 0 = {A, B}, group 1 = {C, D}. Ranking A < D < C < B, so group
    0's worst is B (rank 3) and group 1's is C (rank 2): the whole query goes to C and D."""
    selector = StrictReplicaGroupInstanceSelector(routing_state_from_assignment(UPSERT),
                                                  adaptive=adaptive(LATENCY, strict_group=True))
    result = selector.select(list(UPSERT), 0)
    assert set(result.segment_to_server.values()) == {"C", "D"}
    assert result.unavailable_segments == []


def test_strict_adaptive_prefers_a_group_covering_every_segment() -> None:
    """With C down, strict candidates leave partition 0 only on A; group 1 no longer covers every segment,
    so group 0 (A, B) serves the query despite B being the slowest server."""
    state = routing_state_from_assignment(UPSERT).with_server("C", healthy=False)
    selector = StrictReplicaGroupInstanceSelector(state, adaptive=adaptive(LATENCY, strict_group=True))
    result = selector.select(list(UPSERT), 0)
    assert set(result.segment_to_server.values()) == {"A", "B"}
    assert result.unavailable_segments == []
