"""Broker-side routing: the routing state, per-segment candidates, query options and instance selectors.

Split into small modules (:mod:`.state`, :mod:`.candidates`, :mod:`.options`, :mod:`.selectors`);
:mod:`workbench.pinot.instance_selector` re-exports the public names for notebooks.
"""

from workbench.pinot.routing.candidates import Candidates, SegmentStates, compute_segment_states
from workbench.pinot.routing.options import RequestIdGenerator, RoutingOptions, parse_routing_options
from workbench.pinot.routing.selectors import (
    INSTANCE_SELECTORS,
    BalancedInstanceSelector,
    InstanceSelector,
    ReplicaGroupInstanceSelector,
    Selection,
    SelectionResult,
    StrictReplicaGroupInstanceSelector,
    instance_selector_for,
)
from workbench.pinot.routing.state import RoutingState, ServerInfo, routing_state_from_assignment

__all__ = [
    "INSTANCE_SELECTORS", "BalancedInstanceSelector", "Candidates", "InstanceSelector",
    "ReplicaGroupInstanceSelector", "RequestIdGenerator", "RoutingOptions", "RoutingState", "SegmentStates",
    "Selection", "SelectionResult", "ServerInfo", "StrictReplicaGroupInstanceSelector", "compute_segment_states",
    "instance_selector_for", "parse_routing_options", "routing_state_from_assignment",
]
