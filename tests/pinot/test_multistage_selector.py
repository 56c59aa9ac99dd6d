"""multiStageReplicaGroup: Pinot 1.5.1's ``MultiStageReplicaGroupSelectorTest`` translated (pinned tag
release-1.5.1, pinot-broker/src/test/java/org/apache/pinot/broker/routing/instanceselector/), plus Pinot's three
colocated-join example tables (pinot-tools/src/main/resources/examples/batch/colocated) loaded unchanged.

Pinot's fixture: instances instance-0..3, segments segment0..11; even segments on instance-0 and instance-2,
odd ones on instance-1 and instance-3 (ideal state and external view ONLINE). Where Pinot's selector throws
(no replica group can serve an instance partition, or a segment without servers), the broker fails the query;
the model reports those segments unavailable instead, and the tests assert that.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from workbench.errors import TableConfigError
from workbench.pinot.assignment import InstancePartitions
from workbench.pinot.routing import MultiStageReplicaGroupSelector, RoutingState
from workbench.scenario import load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.router import Router
from workbench.sim.run import simulate

TABLE = "testTable_REALTIME"
SEGMENTS = [f"segment{i}" for i in range(12)]
EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "pinot_examples"
COLOCATED = ("userAttributes", "userFactEvents", "userGroups")


def ideal() -> dict[str, dict[str, str]]:
    """Pinot's ``setupBasicTestEnvironment``: even segments on instance-0/2, odd on instance-1/3."""
    return {s: ({"instance-0": "ONLINE", "instance-2": "ONLINE"} if i % 2 == 0 else
                {"instance-1": "ONLINE", "instance-3": "ONLINE"}) for i, s in enumerate(SEGMENTS)}


def two_groups(g0: tuple[str, str] = ("instance-0", "instance-1"),
               g1: tuple[str, str] = ("instance-2", "instance-3")) -> InstancePartitions:
    """Pinot's ``createInstancePartitions``: one partition, two replica groups of two instances."""
    return InstancePartitions.of(TABLE, {"0_0": g0, "0_1": g1})


def selector(state: RoutingState, ip: InstancePartitions, fixed: bool = False) -> MultiStageReplicaGroupSelector:
    return MultiStageReplicaGroupSelector(state, table_name=TABLE, instance_partitions=ip, use_fixed_replica=fixed)


def expected(group: tuple[str, str]) -> dict[str, str]:
    """Pinot's ``createExpectedAssignment``: even segments to the group's first instance, odd to its second."""
    return {s: group[i % 2] for i, s in enumerate(SEGMENTS)}


def test_basic_replica_group_selection() -> None:
    """``testBasicReplicaGroupSelection``: request 0 -> group 0, again the same, request 1 -> group 1; a segment
    the routing state does not know yet (Pinot's new LLC segment) leaves the selection unchanged."""
    sel = selector(RoutingState(ideal()), two_groups())
    assert sel.select(SEGMENTS, 0).segment_to_server == expected(("instance-0", "instance-1"))
    assert sel.select(SEGMENTS, 0).segment_to_server == expected(("instance-0", "instance-1"))
    assert sel.select(SEGMENTS, 1) == (expected(("instance-2", "instance-3")), [])
    new = f"{TABLE.removesuffix('_REALTIME')}__1__2__20260101T0000Z"
    assert sel.select([*SEGMENTS, new], 1) == (expected(("instance-2", "instance-3")), [])
    assert sel.request_period() == 2  # the route repeats with requestId % numReplicaGroups


def test_instance_failure_handling() -> None:
    """``testInstanceFailureHandling``: instance-0 down -> the whole partition goes to group 1 even at request 0
    (instance-1 alone cannot serve the even segments); instance-2 down too -> no group serves the partition."""
    state = RoutingState(ideal()).with_server("instance-0", enabled=False)
    assert selector(state, two_groups()).select(SEGMENTS, 0) == (expected(("instance-2", "instance-3")), [])
    both_down = state.with_server("instance-2", enabled=False)
    routed, unavailable = selector(both_down, two_groups()).select(SEGMENTS, 0)
    assert sorted(unavailable) == sorted(SEGMENTS[0::2])  # Pinot: the query fails
    assert set(routed) <= set(SEGMENTS[1::2])


def test_error_segment_handling() -> None:
    """``testErrorSegmentHandling``: two partitions of one instance per group; segment1 in ERROR on instance-1 and
    segment2 on instance-2 -> partition 0 keeps group 0 (instance-0), partition 1 falls over to group 1
    (instance-3); segment3 in ERROR on instance-3 as well -> no group serves partition 1."""
    ip = InstancePartitions.of(TABLE, {"0_0": ("instance-0",), "0_1": ("instance-2",),
                                       "1_0": ("instance-1",), "1_1": ("instance-3",)})
    view = ideal()
    view["segment1"] = {**view["segment1"], "instance-1": "ERROR"}
    view["segment2"] = {**view["segment2"], "instance-2": "ERROR"}
    want = {s: "instance-0" if i % 2 == 0 else "instance-3" for i, s in enumerate(SEGMENTS)}
    assert selector(RoutingState(ideal(), external_view=view), ip).select(SEGMENTS, 0) == (want, [])
    view["segment3"] = {**view["segment3"], "instance-3": "ERROR"}
    routed, unavailable = selector(RoutingState(ideal(), external_view=view), ip).select(SEGMENTS, 0)
    assert sorted(unavailable) == sorted(SEGMENTS[1::2])  # Pinot: the query fails
    assert routed == {s: "instance-0" for s in SEGMENTS[0::2]}


def test_instance_partitions_ideal_state_mismatch_drops_segments() -> None:
    """``testInstancePartitionsIdealStateMismatchSegmentsDropped`` (apache/pinot#17179, kept as Pinot has it):
    instance partitions naming other servers than the ideal state route nothing and report nothing."""
    ip = two_groups(("instance-100", "instance-101"), ("instance-102", "instance-103"))
    result = selector(RoutingState(ideal()), ip).select_detailed(SEGMENTS, 0)
    assert result == ({}, [], {})


def test_fixed_replica_always_takes_group_zero() -> None:
    """Pinot's ``select``: with ``useFixedReplica`` the preferred group is 0 whatever the request id."""
    sel = selector(RoutingState(ideal()), two_groups(), fixed=True)
    for request_id in (0, 1, 7):
        assert sel.select(SEGMENTS, request_id).segment_to_server == expected(("instance-0", "instance-1"))
    assert selector(RoutingState(ideal()), two_groups()).select(
        SEGMENTS, 1, {"useFixedReplica": "true"}).segment_to_server == expected(("instance-0", "instance-1"))


def test_without_instance_partitions_is_one_error() -> None:
    with pytest.raises(TableConfigError, match="instance partitions"):
        MultiStageReplicaGroupSelector(RoutingState(ideal()), table_name=TABLE)


def example(name: str, **simulation: Any) -> dict[str, Any]:
    """Pinot's example table config and schema, unchanged, on the 4 servers its instance assignment asks for."""
    return {"cluster": {"servers": 4, "server": {"cores": 2}},
            "table": json.loads((EXAMPLES / f"{name}_offline_table_config.json").read_text()),
            "schema": json.loads((EXAMPLES / f"{name}_schema.json").read_text()),
            "workload": {"synthetic": {"segments_per_server": 2, "docs_per_segment": 50_000}, "arrival": {"qps": 20}},
            "simulation": {"duration_s": 3, "warmup_s": 0.5, "replications": 1, "seed": 3, "engine": "fast",
                           **simulation}}


@pytest.mark.parametrize("name", COLOCATED)
def test_pinot_colocated_examples_load_and_simulate(name: str) -> None:
    """Each of Pinot's colocated-join example tables validates and runs a short fast-engine simulation with every
    query answered in full; the two naming userAttributes' instance partitions are warned that the workbench
    routes them from their own instead (default instance partitions: one group, so every query the same servers).
    userAttributes' own (2 replica groups x 2 partitions x 1 server) send each query to 2 servers, one per
    partition, and consecutive requests to the two disjoint groups."""
    sc = load_scenario(example(name))
    assert sc.table.instance_selector_type == "multiStageReplicaGroup"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = simulate(sc)
    shared = [w for w in caught if "instancePartitionsMap.OFFLINE" in str(w.message)]
    assert bool(shared) == (name != "userAttributes")
    queries = result.queries
    assert len(queries) > 20
    assert not queries["partial"].any()
    assert queries["servers_queried"].nunique() == 1
    if name == "userAttributes":
        assert (queries["servers_queried"] == 2).all()
        router = Router(build_layout(sc), sc.table)
        first, second = ({server for server, _segments in router.route(r)[0]} for r in (0, 1))
        assert len(first) == len(second) == 2 and not first & second


def test_adaptive_selection_is_ignored_but_not_with_fixed_replica() -> None:
    """Pinot's selector never reads the adaptive server selector (routes as without it), yet its base init still
    refuses adaptive selection together with fixed replica."""
    import numpy as np

    from workbench.pinot.routing import (
        AdaptiveConfig,
        AdaptiveSelectorType,
        ServerRoutingStatsManager,
        adaptive_server_selector,
    )

    config = AdaptiveConfig(AdaptiveSelectorType.LATENCY)
    adaptive = adaptive_server_selector(config, ServerRoutingStatsManager(config), np.random.default_rng(1))
    sel = MultiStageReplicaGroupSelector(RoutingState(ideal()), table_name=TABLE, instance_partitions=two_groups(),
                                         adaptive=adaptive)
    assert sel.adaptive is None
    assert sel.select(SEGMENTS, 1).segment_to_server == expected(("instance-2", "instance-3"))
    with pytest.raises(TableConfigError, match="cannot be enabled at the same time"):
        MultiStageReplicaGroupSelector(RoutingState(ideal()), table_name=TABLE, instance_partitions=two_groups(),
                                       adaptive=adaptive, use_fixed_replica=True)
