"""Broker instance selection (pinot-behaviour.md §3.1-3.5, §3.7).

The scenarios are Pinot's InstanceSelectorTest as quoted in the reference; other expectations are
derived by hand from the reference's rules, cited in each docstring.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import InputError, TableConfigError
from workbench.pinot.assignment import InstancePartitions, assign_segments
from workbench.pinot.routing import (
    INSTANCE_SELECTORS,
    BalancedInstanceSelector,
    InstanceSelector,
    ReplicaGroupInstanceSelector,
    RequestIdGenerator,
    RoutingState,
    ServerInfo,
    StrictReplicaGroupInstanceSelector,
    instance_selector_for,
    routing_state_from_assignment,
)
from workbench.pinot.routing.adaptive import AdaptiveConfig, AdaptiveSelectorType, AdaptiveServerSelector
from workbench.pinot.routing.adaptive import ServerRoutingStatsManager as Stats
from workbench.pinot.table_config import TableConfig

SELECTORS: list[type[InstanceSelector]] = [
    BalancedInstanceSelector,
    ReplicaGroupInstanceSelector,
    StrictReplicaGroupInstanceSelector,
]
REPLICA_GROUP_TYPES = [ReplicaGroupInstanceSelector, StrictReplicaGroupInstanceSelector]
SEGS = ["seg0", "seg1", "seg2", "seg3"]


def pinot_test_state() -> RoutingState:
    """testInstanceSelector: seg0/1 on [instance0, instance2, errorInstance0 (ERROR in EV)], seg2/3 on
    [instance1, instance3, errorInstance1 (ERROR)]."""
    ideal: dict[str, dict[str, str]] = {}
    view: dict[str, dict[str, str]] = {}
    for segs, (a, b, err) in (
        ((SEGS[:2]), ("instance0", "instance2", "errorInstance0")),
        ((SEGS[2:]), ("instance1", "instance3", "errorInstance1")),
    ):
        for seg in segs:
            ideal[seg] = {a: "ONLINE", b: "ONLINE", err: "ONLINE"}
            view[seg] = {a: "ONLINE", b: "ONLINE", err: "ERROR"}
    return RoutingState(ideal, external_view=view)


def route(
    selector: InstanceSelector, request_id: int, segments: list[str] = SEGS, options: dict[str, Any] | None = None
) -> list[str]:
    mapping = selector.select(segments, request_id, options).segment_to_server
    return [mapping[s] for s in segments]


def table(selector_type: str | None = None, **extra: Any) -> TableConfig:
    raw: dict[str, Any] = {"tableName": "testTable", "tableType": "OFFLINE", **extra}
    if selector_type is not None:
        raw.setdefault("routing", {})["instanceSelectorType"] = selector_type
    return TableConfig.from_json(raw)


# -- the InstanceSelectorTest scenario ---------------------------------------------------------------
def test_balanced_scenario() -> None:
    """[PINOT-TEST] Balanced: request 0 -> i0, i2, i1, i3; request 1 -> i2, i0, i3, i1; after disabling
    instance0, request 2 -> i2, i2, i1, i3."""
    selector = BalancedInstanceSelector(pinot_test_state())
    assert route(selector, 0) == ["instance0", "instance2", "instance1", "instance3"]
    assert route(selector, 1) == ["instance2", "instance0", "instance3", "instance1"]
    selector.update(selector.state.with_server("instance0", enabled=False))
    assert route(selector, 2) == ["instance2", "instance2", "instance1", "instance3"]


@pytest.mark.parametrize("cls", REPLICA_GROUP_TYPES)
def test_replica_group_scenario(cls: type[InstanceSelector]) -> None:
    """[PINOT-TEST] ReplicaGroup/Strict: request 0 -> i0, i0, i1, i1; request 1 -> i2, i2, i3, i3; after
    disabling instance0, request 2 -> i2, i2, i1, i1."""
    selector = cls(pinot_test_state())
    assert route(selector, 0) == ["instance0", "instance0", "instance1", "instance1"]
    assert route(selector, 1) == ["instance2", "instance2", "instance3", "instance3"]
    selector.update(selector.state.with_server("instance0", enabled=False))
    assert route(selector, 2) == ["instance2", "instance2", "instance1", "instance1"]


TWELVE = {f"segment{k}": {"instance0": "ONLINE", "instance1": "ONLINE", "instance2": "ONLINE"} for k in range(12)}


def test_num_replica_groups_to_query() -> None:
    """[PINOT-TEST] testReplicaGroupInstanceSelectorNumReplicaGroupsToQuery: 12 segments on instance0..2."""
    selector = ReplicaGroupInstanceSelector(routing_state_from_assignment(TWELVE))
    segments = list(TWELVE)
    assert route(selector, 0, segments, {"numReplicaGroupsToQuery": "2"}) == ["instance0", "instance1"] * 6
    assert route(selector, 0, segments, {"numReplicaGroupsToQuery": "4"}) == ["instance0", "instance1", "instance2"] * 4
    assert route(selector, 0, segments) == ["instance0"] * 12
    assert route(selector, 1, segments) == ["instance1"] * 12


def test_num_replica_groups_cap_is_lowered_permanently_for_the_query() -> None:
    """§3.4: once G exceeds a segment's candidate count, G stays lowered for the rest of the query."""
    ideal = {
        "a": {"s0": "ONLINE"},
        "b": {"s0": "ONLINE", "s1": "ONLINE", "s2": "ONLINE"},
        "c": {"s0": "ONLINE", "s1": "ONLINE", "s2": "ONLINE"},
    }
    selector = ReplicaGroupInstanceSelector(routing_state_from_assignment(ideal))
    # a: idx 0, G -> 1, offset 0; b, c: idx 0.
    assert route(selector, 0, ["a", "b", "c"], {"numReplicaGroupsToQuery": 3}) == ["s0", "s0", "s0"]


def test_request_id_only_counts_modulo_a_billion() -> None:
    """§3.2: selectors use requestId mod 10**9 (base = random int x 10**9)."""
    selector = BalancedInstanceSelector(pinot_test_state())
    assert route(selector, 7 * 10**9 + 1) == route(selector, 1)
    ids = RequestIdGenerator(np.random.default_rng(3))
    first, second = ids.next(), ids.next()
    assert (first % 10**9, second % 10**9) == (0, 1) and first // 10**9 == second // 10**9
    with pytest.raises(ValueError, match="request_id"):
        selector.select(SEGS, -1)


# -- unavailable, skipped and optional segments --------------------------------------------------------
@pytest.mark.parametrize("cls", SELECTORS)
def test_unavailable_segments_are_reported_in_request_order(cls: type[InstanceSelector]) -> None:
    """§3.2: an old segment with no enabled online candidate is unavailable; segments unknown to the
    routing table are skipped silently; segments whose replicas are all OFFLINE/ERROR are unavailable."""
    ideal = {"ok": {"s0": "ONLINE"}, "down": {"s1": "ONLINE"}, "error": {"s2": "ONLINE"}}
    state = RoutingState(
        ideal,
        external_view={"ok": {"s0": "ONLINE"}, "down": {"s1": "ONLINE"}, "error": {"s2": "ERROR"}},
        servers={"s1": ServerInfo(healthy=False)},
    )
    result = cls(state).select(["error", "ok", "unknown", "down"], 0)
    assert result.segment_to_server == {"ok": "s0"}
    assert result.unavailable_segments == ["error", "down"]


def test_segment_missing_from_external_view_is_unavailable_unless_new() -> None:
    """§3.2: a new segment (recent, not converged, no ERROR) is never unavailable; when its chosen
    replica is not online it is routed as optional."""
    ideal = {"old": {"s0": "ONLINE", "s1": "ONLINE"}, "new": {"s0": "ONLINE", "s1": "ONLINE"}}
    state = RoutingState(ideal, external_view={"new": {"s1": "ONLINE"}}, recent_segments=frozenset({"new"}))
    selector = BalancedInstanceSelector(state)
    at0 = selector.select_detailed(["old", "new"], 0)
    assert at0.unavailable_segments == ["old"]
    assert (at0.segment_to_server, at0.optional_segments) == ({}, {"new": "s0"})
    at1 = selector.select_detailed(["new"], 1)
    assert (at1.segment_to_server, at1.optional_segments) == ({"new": "s1"}, {})


def test_recent_segment_with_error_replica_is_old() -> None:
    ideal = {"seg": {"s0": "ONLINE", "s1": "ONLINE"}}
    state = RoutingState(
        ideal, external_view={"seg": {"s0": "ERROR", "s1": "OFFLINE"}}, recent_segments=frozenset({"seg"})
    )
    assert BalancedInstanceSelector(state).select(["seg"], 0).unavailable_segments == ["seg"]


def test_consuming_replicas_route_and_ideal_offline_replicas_do_not() -> None:
    """§3.2: online for routing means ONLINE or CONSUMING in both ideal state and external view."""
    ideal = {"seg": {"s0": "CONSUMING", "s1": "OFFLINE", "s2": "ONLINE"}}
    state = RoutingState(ideal, external_view={"seg": {"s0": "CONSUMING", "s1": "ONLINE", "s2": "CONSUMING"}})
    selector = BalancedInstanceSelector(state)
    assert {route(selector, r, ["seg"])[0] for r in range(4)} == {"s0", "s2"}


# -- strict replica groups -------------------------------------------------------------------------
def test_strict_excludes_a_server_missing_any_segment_of_its_instance_group() -> None:
    """§3.5: s1 lacks b, so s1 is removed for every segment with ideal-state servers {s0, s1}."""
    ideal = {seg: {"s0": "ONLINE", "s1": "ONLINE"} for seg in ("a", "b")}
    view = {"a": {"s0": "ONLINE", "s1": "ONLINE"}, "b": {"s0": "ONLINE", "s1": "OFFLINE"}}
    state = RoutingState(ideal, external_view=view)
    assert route(StrictReplicaGroupInstanceSelector(state), 1, ["a", "b"]) == ["s0", "s0"]
    assert route(ReplicaGroupInstanceSelector(state), 1, ["a", "b"]) == ["s1", "s0"]


def test_strict_makes_segments_unavailable_when_no_replica_has_them_all() -> None:
    ideal = {seg: {"s0": "ONLINE", "s1": "ONLINE"} for seg in ("a", "b")}
    view = {"a": {"s0": "ONLINE"}, "b": {"s1": "ONLINE"}}
    result = StrictReplicaGroupInstanceSelector(RoutingState(ideal, external_view=view)).select(["a", "b"], 0)
    assert result == ({}, ["a", "b"])


def test_strict_ignores_new_segments_when_excluding() -> None:
    """§3.5: new segments do not cause exclusions."""
    ideal = {seg: {"s0": "ONLINE", "s1": "ONLINE"} for seg in ("a", "new")}
    view = {"a": {"s0": "ONLINE", "s1": "ONLINE"}, "new": {"s0": "ONLINE"}}
    state = RoutingState(ideal, external_view=view, recent_segments=frozenset({"new"}))
    assert route(StrictReplicaGroupInstanceSelector(state), 1, ["a"]) == ["s1"]


def test_dedup_table_with_replica_group_gets_strict_candidates() -> None:
    """§3.4: replicaGroup uses the strict computation for upsert and dedup tables."""
    ideal = {seg: {"s0": "ONLINE", "s1": "ONLINE"} for seg in ("a", "b")}
    view = {"a": {"s0": "ONLINE", "s1": "ONLINE"}, "b": {"s0": "ONLINE", "s1": "OFFLINE"}}
    tc = TableConfig.from_json(
        {
            "tableName": "t",
            "tableType": "REALTIME",
            "dedupConfig": {"dedupEnabled": True},
            "routing": {"instanceSelectorType": "replicaGroup"},
        }
    )
    selector = instance_selector_for(tc, RoutingState(ideal, external_view=view))
    assert isinstance(selector, ReplicaGroupInstanceSelector) and selector.strict
    assert route(selector, 1, ["a", "b"]) == ["s0", "s0"]


# -- fixed replica ---------------------------------------------------------------------------------
def test_fixed_replica_uses_raw_table_name_hash() -> None:
    """§3.3/3.4: index = (hash(raw table) & 0x7FFFFFFF) % n; "t".hashCode() = 116, 116 % 3 = 2, for both
    t_OFFLINE and t_REALTIME and every request id."""
    ideal = {f"seg{k}": {"s0": "ONLINE", "s1": "ONLINE", "s2": "ONLINE"} for k in range(4)}
    for name in ("t_OFFLINE", "t_REALTIME"):
        for cls in SELECTORS:
            selector = cls(routing_state_from_assignment(ideal), table_name=name, use_fixed_replica=True)
            assert {s for r in range(5) for s in route(selector, r, list(ideal))} == {"s2"}


def test_fixed_replica_with_num_replica_groups_steps_from_the_hash() -> None:
    ideal = {f"seg{k}": {"s0": "ONLINE", "s1": "ONLINE", "s2": "ONLINE"} for k in range(3)}
    selector = ReplicaGroupInstanceSelector(
        routing_state_from_assignment(ideal), table_name="t_OFFLINE", use_fixed_replica=True
    )
    assert route(selector, 0, list(ideal), {"numReplicaGroupsToQuery": 2}) == ["s2", "s0", "s2"]


def test_use_fixed_replica_query_option_overrides_the_table() -> None:
    """§3.1: the query option wins over table config and broker config (Java parseBoolean)."""
    state = routing_state_from_assignment({"seg": {"s0": "ONLINE", "s1": "ONLINE", "s2": "ONLINE"}})
    selector = BalancedInstanceSelector(state, table_name="t_OFFLINE")
    assert route(selector, 0, ["seg"], {"useFixedReplica": "TRUE"}) == ["s2"]
    fixed = BalancedInstanceSelector(state, table_name="t_OFFLINE", use_fixed_replica=True)
    assert route(fixed, 0, ["seg"], {"useFixedReplica": "yes"}) == ["s0"]


def test_table_use_fixed_replica_overrides_broker_default() -> None:
    state = routing_state_from_assignment({"seg": {"s0": "ONLINE", "s1": "ONLINE"}})
    assert instance_selector_for(table(), state, broker_use_fixed_replica=True).use_fixed_replica
    off = table(routing={"useFixedReplica": False})
    assert not instance_selector_for(off, state, broker_use_fixed_replica=True).use_fixed_replica


# -- adaptive --------------------------------------------------------------------------------------
def latency_adaptive(latencies: dict[str, float], seed: int = 0) -> AdaptiveServerSelector:
    stats = Stats(AdaptiveConfig(AdaptiveSelectorType.LATENCY, ewma_alpha=1.0, autodecay_window_ms=0))
    for server, latency in latencies.items():
        stats.record_submission(server, 0)
        stats.record_response(server, latency, 0)
    return AdaptiveServerSelector(stats, AdaptiveSelectorType.LATENCY, np.random.default_rng(seed))


MIRRORED = {f"seg{k}": {"s0": "ONLINE", "s1": "ONLINE", "s2": "ONLINE"} for k in range(6)}


@pytest.mark.parametrize("cls", SELECTORS)
def test_adaptive_routes_every_segment_to_the_best_server(cls: type[InstanceSelector]) -> None:
    selector = cls(routing_state_from_assignment(MIRRORED), adaptive=latency_adaptive({"s0": 9, "s1": 2, "s2": 5}))
    assert set(route(selector, 3, list(MIRRORED))) == {"s1"}


def test_adaptive_replica_group_ranks_a_server_without_stats_first() -> None:
    """§3.4: a server without stats scores -1 and ranks first, so the query goes to it entirely."""
    selector = ReplicaGroupInstanceSelector(
        routing_state_from_assignment(MIRRORED), adaptive=latency_adaptive({"s0": 9, "s1": 2})
    )
    assert set(route(selector, 0, list(MIRRORED))) == {"s2"}


def test_adaptive_balanced_picks_randomly_when_a_candidate_has_no_stats() -> None:
    """§3.6: with a candidate lacking stats, each segment's pick is uniform over its candidates."""
    selector = BalancedInstanceSelector(
        routing_state_from_assignment(MIRRORED), adaptive=latency_adaptive({"s0": 9, "s1": 2})
    )
    counts = Counter(s for r in range(200) for s in route(selector, r, list(MIRRORED)))
    assert set(counts) == {"s0", "s1", "s2"} and min(counts.values()) > 300


def test_adaptive_respects_ordered_preferred_pools() -> None:
    state = routing_state_from_assignment(MIRRORED, pools={"s0": 0, "s1": 1, "s2": 2})
    for cls in SELECTORS:
        selector = cls(state, adaptive=latency_adaptive({"s0": 9, "s1": 2, "s2": 5}))
        assert set(route(selector, 0, list(MIRRORED), {"orderedPreferredPools": "2|0"})) == {"s2"}


def test_adaptive_and_fixed_replica_are_rejected_together() -> None:
    with pytest.raises(TableConfigError, match=r"routing\.useFixedReplica"):
        BalancedInstanceSelector(
            routing_state_from_assignment(MIRRORED), use_fixed_replica=True, adaptive=latency_adaptive({})
        )


# -- configuration ---------------------------------------------------------------------------------
def test_selector_registry_and_factory() -> None:
    """§3.1: exact names; unset -> balanced; legacy PartitionAware* builder -> replicaGroup."""
    state = routing_state_from_assignment(MIRRORED)
    assert set(INSTANCE_SELECTORS) == {"balanced", "replicaGroup", "strictReplicaGroup", "multiStageReplicaGroup"}
    assert type(instance_selector_for(table(), state)) is BalancedInstanceSelector
    assert type(instance_selector_for(table("strictReplicaGroup"), state)) is StrictReplicaGroupInstanceSelector
    legacy = table(routing={"routingTableBuilderName": "PartitionAwareOffline"})
    assert type(instance_selector_for(legacy, state)) is ReplicaGroupInstanceSelector


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("replicagroup", "case-sensitively"),
        ("multiStageReplicaGroup", "instance partitions"),
        ("com.example.MySelector", "plugin class"),
    ],
)
def test_unknown_selector_type_names_the_key(name: str, message: str) -> None:
    with pytest.raises(TableConfigError, match=message) as err:
        instance_selector_for(table(name), routing_state_from_assignment(MIRRORED))
    assert err.value.where == "routing.instanceSelectorType"


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({"numReplicaGroupsToQuery": "0"}, "numReplicaGroupsToQuery"),
        ({"numReplicaGroupsToQuery": "two"}, "numReplicaGroupsToQuery"),
        ({"orderedPreferredPools": "1|x"}, "orderedPreferredPools"),
    ],
)
def test_bad_query_options_name_the_key(options: dict[str, str], key: str) -> None:
    with pytest.raises(InputError) as err:
        ReplicaGroupInstanceSelector(routing_state_from_assignment(MIRRORED)).select(["seg0"], 0, options)
    assert err.value.where == f"queryOptions.{key}"


def test_bad_replica_state_names_the_entry() -> None:
    with pytest.raises(InputError, match=r"ideal_state\.seg\.s0"):
        RoutingState({"seg": {"s0": "online"}})


def test_replica_group_follows_name_order_not_instance_partitions() -> None:
    """§3.4/3.5: the same candidate index is used for every segment and candidates are sorted by name,
    so a query hits one server per mirror set, but not necessarily one replica group: with groups
    rg0 = [S5, S1] and rg1 = [S0, S2], index 0 is S0 (rg1) for one mirror set and S1 (rg0) for the other."""
    ip = InstancePartitions("t", {"0_0": ("S5", "S1"), "0_1": ("S0", "S2")})
    ideal = assign_segments(["a", "b"], ip, strategy="replicaGroup", replication=2)
    assert ideal == {"a": {"S5": "ONLINE", "S0": "ONLINE"}, "b": {"S1": "ONLINE", "S2": "ONLINE"}}
    assert route(ReplicaGroupInstanceSelector(routing_state_from_assignment(ideal)), 0, ["a", "b"]) == ["S0", "S1"]


# -- properties --------------------------------------------------------------------------------------
STATES = st.sampled_from(["ONLINE", "CONSUMING", "OFFLINE", "ERROR"])
SERVER_NAMES = [f"s{k}" for k in range(5)]


@st.composite
def routing_states(draw: st.DrawFn) -> RoutingState:
    segments = [f"seg{k}" for k in range(draw(st.integers(1, 8)))]
    ideal = {
        seg: draw(st.dictionaries(st.sampled_from(SERVER_NAMES), STATES, min_size=1, max_size=4)) for seg in segments
    }
    view = {
        seg: {s: draw(STATES) for s in replicas if draw(st.integers(0, 3)) > 0}
        for seg, replicas in ideal.items()
        if draw(st.integers(0, 9)) > 0
    }
    servers = {
        s: ServerInfo(draw(st.integers(0, 2)), draw(st.booleans()), draw(st.booleans()) or draw(st.booleans()))
        for s in SERVER_NAMES
    }
    recent = frozenset(s for s in segments if draw(st.integers(0, 4)) == 0)
    return RoutingState(ideal, view, servers, recent)


@settings(max_examples=150, deadline=None)
@given(
    state=routing_states(),
    request_id=st.integers(0, 3 * 10**9),
    cls=st.sampled_from(SELECTORS),
    groups=st.one_of(st.none(), st.integers(1, 4)),
    order=st.randoms(use_true_random=False),
)
def test_selected_servers_host_the_segment_and_are_routable(
    state: RoutingState, request_id: int, cls: type[InstanceSelector], groups: int | None, order: Any
) -> None:
    """Property: a chosen server is routable and ONLINE/CONSUMING for the segment in ideal state and
    external view; every requested segment is chosen, optional, unavailable or unknown, exactly once."""
    segments = [*state.ideal_state, "not-in-table"]
    order.shuffle(segments)
    options = None if groups is None else {"numReplicaGroupsToQuery": groups}
    result = cls(state).select_detailed(segments, request_id, options)
    for seg, server in result.segment_to_server.items():
        assert state.server(server).routable
        assert state.ideal_state[seg][server] in ("ONLINE", "CONSUMING")
        assert (state.view_of(seg) or {}).get(server) in ("ONLINE", "CONSUMING")
    for seg, server in result.optional_segments.items():
        assert seg in state.recent_segments and state.server(server).routable
    buckets = [set(result.segment_to_server), set(result.optional_segments), set(result.unavailable_segments)]
    assert sum(len(b) for b in buckets) == len(set().union(*buckets))
    assert "not-in-table" not in set().union(*buckets)


@settings(max_examples=60, deadline=None)
@given(
    groups=st.integers(1, 4),
    width=st.integers(1, 5),
    n_segments=st.integers(1, 30),
    request_id=st.integers(0, 10**6),
    strict=st.booleans(),
)
def test_replica_group_query_touches_one_server_per_mirror_set(
    groups: int, width: int, n_segments: int, request_id: int, strict: bool
) -> None:
    """Property: with mirrored assignment, all healthy and numReplicaGroupsToQuery=1, a query uses
    exactly one server of each mirror set it touches; when server names sort in replica-group order
    (as here) those servers all belong to one replica group."""
    ip = InstancePartitions("t", {f"0_{r}": tuple(f"rg{r}_s{k}" for k in range(width)) for r in range(groups)})
    ideal = assign_segments([f"seg{k}" for k in range(n_segments)], ip, strategy="replicaGroup", replication=groups)
    cls = StrictReplicaGroupInstanceSelector if strict else ReplicaGroupInstanceSelector
    chosen = set(cls(routing_state_from_assignment(ideal)).select(list(ideal), request_id).segment_to_server.values())
    mirror_sets_used = {server.split("_")[1] for server in chosen}
    assert len(chosen) == len(mirror_sets_used)
    assert len({server.split("_")[0] for server in chosen}) == 1


@settings(max_examples=60, deadline=None)
@given(replicas=st.integers(1, 5), n_segments=st.integers(1, 12), start=st.integers(0, 10**6))
def test_balanced_spreads_each_segment_evenly_over_its_replicas(replicas: int, n_segments: int, start: int) -> None:
    """Property: over any `replicas` consecutive request ids, each segment visits each replica once."""
    ideal = {f"seg{k}": {f"s{j}": "ONLINE" for j in range(replicas)} for k in range(n_segments)}
    selector = BalancedInstanceSelector(routing_state_from_assignment(ideal))
    for seg in ideal:
        seen = Counter(selector.select([seg, *ideal], r).segment_to_server[seg] for r in range(start, start + replicas))
        assert seen == Counter({f"s{j}": 1 for j in range(replicas)})


@settings(max_examples=60, deadline=None)
@given(state=routing_states(), request_id=st.integers(0, 10**6))
def test_strict_routes_an_instance_group_to_one_server(state: RoutingState, request_id: int) -> None:
    """Property: strict candidates are identical within an instance group, so with G=1 all its routed
    old segments go to the same server."""
    result = StrictReplicaGroupInstanceSelector(state).select(list(state.ideal_state), request_id)
    by_group: dict[frozenset[str], set[str]] = {}
    for seg, server in result.segment_to_server.items():
        if seg not in state.recent_segments:
            by_group.setdefault(frozenset(state.ideal_state[seg]), set()).add(server)
    assert all(len(servers) == 1 for servers in by_group.values())


@settings(max_examples=40, deadline=None)
@given(
    state=routing_states(), request_id=st.integers(0, 10**9 - 1), k=st.integers(1, 5), cls=st.sampled_from(SELECTORS)
)
def test_request_id_wraps_at_a_billion(
    state: RoutingState, request_id: int, k: int, cls: type[InstanceSelector]
) -> None:
    selector = cls(state)
    segments = list(state.ideal_state)
    assert selector.select(segments, request_id) == selector.select(segments, request_id + k * 10**9)
