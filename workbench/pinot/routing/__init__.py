"""Broker-side routing as Pinot's broker does it: routing state, per-segment candidates, query options,
instance selectors and Adaptive Server Selection.

Split into small modules (:mod:`.state`, :mod:`.candidates`, :mod:`.options`, :mod:`.selectors`,
:mod:`.adaptive`); this package gathers the public names for notebooks and the simulation.

From a table config to routed queries: three servers, replication 3, replica-group routing.

>>> from workbench.pinot.table_config import TableConfig
>>> tc = TableConfig.from_json({"tableName": "events", "tableType": "OFFLINE",
...     "segmentsConfig": {"replication": 3}, "routing": {"instanceSelectorType": "replicaGroup"}})
>>> ideal = {f"seg{i}": {"s0": "ONLINE", "s1": "ONLINE", "s2": "ONLINE"} for i in range(4)}
>>> selector = instance_selector_for(tc, routing_state_from_assignment(ideal))
>>> sorted(set(selector.select(list(ideal), request_id=0).segment_to_server.values()))
['s0']
>>> sorted(set(selector.select(list(ideal), 0, {"numReplicaGroupsToQuery": "2"}).segment_to_server.values()))
['s0', 's1']

When s0 crashes the broker stops routing to it; nothing is unavailable while replicas remain:

>>> selector.update(selector.state.with_server("s0", healthy=False))
>>> selector.select(list(ideal), 0)
Selection(segment_to_server={'seg0': 's1', 'seg1': 's1', 'seg2': 's1', 'seg3': 's1'}, unavailable_segments=[])

Adaptive Server Selection: the broker model reports sends and responses; the slow server is avoided.

>>> import numpy as np
>>> config = AdaptiveConfig(AdaptiveSelectorType.LATENCY)
>>> stats = ServerRoutingStatsManager(config)
>>> for server in ("s0", "s1", "s2"):
...     stats.record_submission(server, now_ms=0.0)
>>> for server, latency in (("s1", 12.0), ("s2", 15.0), ("s0", 250.0)):
...     stats.record_response(server, latency_ms=latency, now_ms=latency)
>>> adaptive = adaptive_server_selector(config, stats, np.random.default_rng(1))
>>> balanced = instance_selector_for(TableConfig.from_json({"tableName": "events", "tableType": "OFFLINE"}),
...                                  routing_state_from_assignment(ideal), adaptive=adaptive)
>>> set(balanced.select(list(ideal), request_id=5).segment_to_server.values())
{'s1'}
"""

from workbench.pinot.routing.adaptive import (
    AdaptiveConfig,
    AdaptiveSelectorType,
    AdaptiveServerSelector,
    ServerRoutingStatsManager,
    adaptive_server_selector,
)
from workbench.pinot.routing.candidates import Candidates, SegmentStates, compute_segment_states
from workbench.pinot.routing.options import RequestIdGenerator, RoutingOptions, parse_routing_options
from workbench.pinot.routing.selectors import (
    INSTANCE_SELECTORS,
    BalancedInstanceSelector,
    InstanceSelector,
    MultiStageReplicaGroupSelector,
    ReplicaGroupInstanceSelector,
    Selection,
    SelectionResult,
    StrictReplicaGroupInstanceSelector,
    instance_selector_for,
)
from workbench.pinot.routing.state import RoutingState, ServerInfo, routing_state_from_assignment

__all__ = [
    "INSTANCE_SELECTORS", "AdaptiveConfig", "AdaptiveSelectorType", "AdaptiveServerSelector",
    "BalancedInstanceSelector", "Candidates", "InstanceSelector", "MultiStageReplicaGroupSelector",
    "ReplicaGroupInstanceSelector",
    "RequestIdGenerator", "RoutingOptions", "RoutingState", "SegmentStates", "Selection", "SelectionResult",
    "ServerInfo", "ServerRoutingStatsManager", "StrictReplicaGroupInstanceSelector", "adaptive_server_selector",
    "compute_segment_states", "instance_selector_for", "parse_routing_options", "routing_state_from_assignment",
]
