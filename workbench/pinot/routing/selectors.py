"""Pinot's broker instance selectors: balanced, replicaGroup, strictReplicaGroup and multiStageReplicaGroup.

A selector maps each queried segment to one server (``pinot-behaviour.md`` §3.3-3.5). It is built once
from a :class:`~workbench.pinot.routing.state.RoutingState` (and rebuilt with :meth:`update` when the
state changes) and then answers :meth:`InstanceSelector.select` per query with dictionary lookups only.

Pinot's ``InstanceSelectorTest.testInstanceSelector`` at request 0 (``errorInstance*`` are in ERROR):

>>> from workbench.pinot.routing.state import RoutingState
>>> ideal = {s: {"instance0": "ONLINE", "instance2": "ONLINE", "errorInstance0": "ONLINE"} for s in ("seg0", "seg1")}
>>> ideal |= {s: {"instance1": "ONLINE", "instance3": "ONLINE", "errorInstance1": "ONLINE"} for s in ("seg2", "seg3")}
>>> view = {s: {**m, next(k for k in m if k.startswith("error")): "ERROR"} for s, m in ideal.items()}
>>> state = RoutingState(ideal, external_view=view)
>>> BalancedInstanceSelector(state).select(["seg0", "seg1", "seg2", "seg3"], request_id=0).segment_to_server
{'seg0': 'instance0', 'seg1': 'instance2', 'seg2': 'instance1', 'seg3': 'instance3'}
>>> ReplicaGroupInstanceSelector(state).select(["seg0", "seg1", "seg2", "seg3"], 0).segment_to_server
{'seg0': 'instance0', 'seg1': 'instance0', 'seg2': 'instance1', 'seg3': 'instance1'}
"""

from __future__ import annotations

import re
import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple

from workbench.errors import TableConfigError
from workbench.pinot.assignment import java_string_hash
from workbench.pinot.assignment.partitions import InstancePartitions
from workbench.pinot.routing.adaptive import AdaptiveServerSelector, rank_in_pools, select_in_pools
from workbench.pinot.routing.candidates import Candidates, SegmentStates, compute_segment_states
from workbench.pinot.routing.group_adaptive import best_replica_group
from workbench.pinot.routing.multistage import assign_by_instance_partitions
from workbench.pinot.routing.options import (
    MAX_REQUEST_ID,
    NUM_REPLICA_GROUPS_TO_QUERY,
    USE_FIXED_REPLICA,
    RoutingOptions,
    parse_routing_options,
)
from workbench.pinot.routing.options import broker_use_fixed_replica as broker_use_fixed_replica_key
from workbench.pinot.routing.state import RoutingState
from workbench.pinot.table_config import TableConfig

__all__ = [
    "INSTANCE_SELECTORS", "BalancedInstanceSelector", "InstanceSelector", "MultiStageReplicaGroupSelector",
    "ReplicaGroupInstanceSelector", "Selection", "SelectionResult", "StrictReplicaGroupInstanceSelector",
    "consults_adaptive", "instance_selector_for",
]

Picks = tuple[dict[str, str], dict[str, str]]


class Selection(NamedTuple):
    """What a query is routed to: segment -> server, and the requested segments that are unavailable
    (Pinot then adds error 305 "N segments unavailable" and counts them in the query log)."""

    segment_to_server: dict[str, str]
    unavailable_segments: list[str]


class SelectionResult(NamedTuple):
    """:class:`Selection` plus the *optional* segments: new segments whose chosen replica is not loaded
    yet, which Pinot still sends but lets the server skip."""

    segment_to_server: dict[str, str]
    unavailable_segments: list[str]
    optional_segments: dict[str, str]


def _place(segment: str, cand: Candidates, i: int, chosen: dict[str, str], optional: dict[str, str]) -> None:
    servers, _pools, online = cand
    (chosen if online is None or online[i] else optional)[segment] = servers[i]


class InstanceSelector(ABC):
    """Shared state and request handling of every selector (Pinot's ``BaseInstanceSelector``).

    Parameters
    ----------
    state
        The routing state to select from.
    table_name
        Table name, with or without type suffix; fixed-replica routing hashes the raw name, so the
        OFFLINE and REALTIME halves of a hybrid table pick the same replica.
    use_fixed_replica
        Always pick the same replica (overridable per query with ``useFixedReplica``).
    adaptive
        An adaptive server selector, or ``None`` for round-robin routing. Not combinable with
        ``use_fixed_replica``.
    strict
        Use strict replica-group candidates (defaults to the selector's own rule).
    """

    #: Name in ``routing.instanceSelectorType``.
    name: ClassVar[str]
    strict_candidates: ClassVar[bool] = False
    #: Whether the selector consults an adaptive server selector (Pinot's multiStageReplicaGroup does not).
    adaptive_capable: ClassVar[bool] = True

    def __init__(self, state: RoutingState, *, table_name: str = "table", use_fixed_replica: bool = False,
                 adaptive: AdaptiveServerSelector | None = None, strict: bool | None = None) -> None:
        if adaptive is not None and use_fixed_replica:
            raise TableConfigError("routing.useFixedReplica", "AdaptiveServerSelector and consistent routing "
                                                              "cannot be enabled at the same time")
        self.table_name = table_name
        self.use_fixed_replica = use_fixed_replica
        self.adaptive = adaptive
        self.strict = self.strict_candidates if strict is None else strict
        raw = re.sub(r"_(OFFLINE|REALTIME)$", "", table_name)
        self.fixed_replica_hash = java_string_hash(raw) & 0x7FFFFFFF
        self.update(state)

    def update(self, state: RoutingState) -> None:
        """Adopt a new routing state (after an assignment, external-view or server change)."""
        self.state = state
        self.segment_states: SegmentStates = compute_segment_states(state, strict=self.strict)

    def select(self, segments: Sequence[str], request_id: int,
               query_options: Mapping[str, Any] | None = None) -> Selection:
        """Route one query: ``(segment_to_server, unavailable_segments)``.

        Parameters
        ----------
        segments
            The segments left after pruning, in the order the broker iterates them (Pinot's is a hash
            set's arbitrary order; balanced selection depends on it).
        request_id
            The broker's request id (>= 0); only ``request_id % 10**9`` matters, i.e. the per-broker
            query counter.
        query_options
            Pinot query options (``numReplicaGroupsToQuery``, ``useFixedReplica``,
            ``orderedPreferredPools``); other keys are ignored.
        """
        result = self.select_detailed(segments, request_id, query_options)
        return Selection(result.segment_to_server, result.unavailable_segments)

    def select_detailed(self, segments: Sequence[str], request_id: int,
                        query_options: Mapping[str, Any] | None = None) -> SelectionResult:
        """Like :meth:`select`, also returning the optional (not yet loaded, new) segments."""
        if request_id < 0:
            raise ValueError(f"request_id must be >= 0, got {request_id}")
        states = self.segment_states
        options = parse_routing_options(query_options)
        if self.adaptive is not None:
            _warn_ignored_with_adaptive(options)
        chosen, optional = self._pick(segments, request_id % MAX_REQUEST_ID, options, states.candidates)
        unavailable = [s for s in segments if s in states.unavailable] if states.unavailable else []
        return SelectionResult(chosen, unavailable, optional)

    def request_period(self) -> int:
        """Routes repeat with the request id modulo this, beyond the replica counts (see ``Router.period``)."""
        return 1

    def _fixed(self, options: RoutingOptions) -> bool:
        return self.use_fixed_replica if options.use_fixed_replica is None else options.use_fixed_replica

    @abstractmethod
    def _pick(self, segments: Sequence[str], request_id: int, options: RoutingOptions,
              table: Mapping[str, Candidates]) -> Picks:
        """Choose a server per segment: (chosen, optional)."""


def _warn_ignored_with_adaptive(options: RoutingOptions) -> None:
    """Pinot's adaptive paths never read these options; say so rather than silently ignore them."""
    if options.num_replica_groups is not None:
        warnings.warn(f"queryOptions.{NUM_REPLICA_GROUPS_TO_QUERY} is not supported with adaptive server "
                      "selection; Pinot ignores it", UserWarning, stacklevel=4)
    if options.use_fixed_replica:
        warnings.warn(f"queryOptions.{USE_FIXED_REPLICA} is ignored under adaptive server selection (fixed "
                      "replica and adaptive selection cannot be combined)", UserWarning, stacklevel=4)


class BalancedInstanceSelector(InstanceSelector):
    """Spread segments over replicas: the k-th routed segment takes candidate ``(requestId + k) % n``;
    with fixed replica always ``hash(raw table) % n``; with ASS the best server per segment."""

    name = "balanced"

    def _pick(self, segments: Sequence[str], request_id: int, options: RoutingOptions,
              table: Mapping[str, Candidates]) -> Picks:
        if self.adaptive is not None:
            return self._pick_adaptive(segments, options, table, self.adaptive)
        counter, step = (self.fixed_replica_hash, 0) if self._fixed(options) else (request_id, 1)
        chosen: dict[str, str] = {}
        optional: dict[str, str] = {}
        lookup = table.get
        for segment in segments:
            cand = lookup(segment)
            if cand is None:
                continue
            servers, _pools, online = cand
            i = counter % len(servers)
            counter += step
            if online is None or online[i]:
                chosen[segment] = servers[i]
            else:
                optional[segment] = servers[i]
        return chosen, optional

    @staticmethod
    def _pick_adaptive(segments: Sequence[str], options: RoutingOptions, table: Mapping[str, Candidates],
                       adaptive: AdaptiveServerSelector) -> Picks:
        chosen: dict[str, str] = {}
        optional: dict[str, str] = {}
        preferred = options.ordered_preferred_pools
        scores: dict[str, float | None] = {}  # stats cannot change while one query is routed
        decided: dict[tuple[str, ...], int] = {}  # picks made without a random draw repeat exactly
        for segment in segments:
            cand = table.get(segment)
            if cand is None:
                continue
            i = decided.get(cand.servers)
            if i is None:
                i = select_in_pools(adaptive, cand.servers, cand.pools, preferred, scores)
                if all(scores.get(s) is not None for s in cand.servers):
                    decided[cand.servers] = i
            _place(segment, cand, i, chosen, optional)
        return chosen, optional


class ReplicaGroupInstanceSelector(InstanceSelector):
    """Pick the same candidate index for every segment, so a query hits one mirrored "column" of servers
    and consecutive queries rotate replicas; ``numReplicaGroupsToQuery`` = G spreads a query over G
    indexes. Upsert and dedup tables get strict candidates automatically."""

    name = "replicaGroup"

    def _pick(self, segments: Sequence[str], request_id: int, options: RoutingOptions,
              table: Mapping[str, Candidates]) -> Picks:
        if self.adaptive is not None:
            return self._pick_adaptive(segments, request_id, options, table, self.adaptive)
        base = self.fixed_replica_hash if self._fixed(options) else request_id
        groups = options.num_replica_groups or 1
        offset = 0
        chosen: dict[str, str] = {}
        optional: dict[str, str] = {}
        lookup = table.get
        for segment in segments:
            cand = lookup(segment)
            if cand is None:
                continue
            servers, _pools, online = cand
            n = len(servers)
            i = (base + offset) % n
            if online is None or online[i]:
                chosen[segment] = servers[i]
            else:
                optional[segment] = servers[i]
            if groups > n:
                groups = n
            offset = (offset + 1) % groups
        return chosen, optional

    @staticmethod
    def _pick_adaptive(segments: Sequence[str], request_id: int, options: RoutingOptions,
                       table: Mapping[str, Candidates], adaptive: AdaptiveServerSelector) -> Picks:
        """Rank every candidate of the query once, then give each segment its best-ranked server."""
        found = [(segment, cand) for segment in segments if (cand := table.get(segment)) is not None]
        pool_of: dict[str, int] = {}
        for cand in {cand.servers: cand for _segment, cand in found}.values():
            pool_of.update(zip(cand.servers, cand.pools, strict=True))
        ranked = rank_in_pools(adaptive, list(pool_of), list(pool_of.values()), options.ordered_preferred_pools)
        rank = {server: i for i, server in enumerate(ranked)}
        best: dict[tuple[str, ...], int] = {}
        chosen: dict[str, str] = {}
        optional: dict[str, str] = {}
        for segment, (servers, _pools, online) in found:
            i = best.get(servers)
            if i is None:
                i = best[servers] = _best_ranked(servers, rank, request_id)
            if online is None or online[i]:
                chosen[segment] = servers[i]
            else:
                optional[segment] = servers[i]
        return chosen, optional


def _best_ranked(servers: tuple[str, ...], rank: Mapping[str, int], request_id: int) -> int:
    if all(s in rank for s in servers):
        return min(range(len(servers)), key=lambda j: rank[servers[j]])
    return request_id % len(servers)  # Pinot's fallback; unreachable because every candidate is ranked


class StrictReplicaGroupInstanceSelector(ReplicaGroupInstanceSelector):
    """replicaGroup selection over strict candidates: a server missing one segment of its instance group
    is dropped for the whole group, so a partition is always served by one replica (required for upsert
    tables); if no replica has every segment, those segments are unavailable.

    With adaptive selection and ``enable.strict.replica.group`` the whole query goes to one replica
    group, the one whose worst server ranks best (:mod:`~workbench.pinot.routing.group_adaptive`).
    """

    name = "strictReplicaGroup"
    strict_candidates = True

    def select_detailed(self, segments: Sequence[str], request_id: int,
                        query_options: Mapping[str, Any] | None = None) -> SelectionResult:
        """Like the base class; with group-level adaptive routing, segments the chosen group lacks are
        reported unavailable too."""
        adaptive = self.adaptive
        if adaptive is None or not adaptive.strict_replica_group:
            return super().select_detailed(segments, request_id, query_options)
        if request_id < 0:
            raise ValueError(f"request_id must be >= 0, got {request_id}")
        options = parse_routing_options(query_options)
        _warn_ignored_with_adaptive(options)
        table = self.segment_states.candidates
        unavailable = [s for s in segments if s in self.segment_states.unavailable]
        picked = best_replica_group(segments, table, self.state.ideal_state, adaptive, options.ordered_preferred_pools)
        chosen: dict[str, str] = {}
        optional: dict[str, str] = {}
        if picked is not None:
            members = picked[1]
            for segment in segments:
                if segment in members:
                    _place(segment, table[segment], members[segment], chosen, optional)
                elif segment in table:
                    unavailable.append(segment)
        return SelectionResult(chosen, unavailable, optional)


class MultiStageReplicaGroupSelector(InstanceSelector):
    """Pinot's ``MultiStageReplicaGroupSelector`` routing a single-stage query: replica groups come from the
    table's instance partitions, not the ideal state; the query prefers group ``requestId % numReplicaGroups``
    (group 0 with fixed replica) and each instance partition falls over to the next group when a server of the
    preferred one cannot serve its segments (:mod:`~workbench.pinot.routing.multistage`). Pinot never consults
    adaptive server selection here; a partition no group can serve fails the query in Pinot and is reported as
    unavailable segments here.

    Parameters
    ----------
    instance_partitions
        The table's OFFLINE instance partitions (CONSUMING for a realtime table), as the controller
        computed them; required.
    """

    name = "multiStageReplicaGroup"
    adaptive_capable = False

    def __init__(self, state: RoutingState, *, table_name: str = "table", use_fixed_replica: bool = False,
                 adaptive: AdaptiveServerSelector | None = None, strict: bool | None = None,
                 instance_partitions: InstancePartitions | None = None) -> None:
        if instance_partitions is None:
            raise TableConfigError("routing.instanceSelectorType", "multiStageReplicaGroup routes from the table's "
                                   "instance partitions; none were given (Pinot fails the same way without them)")
        self.instance_partitions = instance_partitions
        # Pinot's base init still refuses adaptive selection with fixed replica; then the selector ignores it
        super().__init__(state, table_name=table_name, use_fixed_replica=use_fixed_replica, adaptive=adaptive,
                         strict=strict)
        self.adaptive = None

    def request_period(self) -> int:
        return self.instance_partitions.num_replica_groups

    def select_detailed(self, segments: Sequence[str], request_id: int,
                        query_options: Mapping[str, Any] | None = None) -> SelectionResult:
        """Like the base class, with segments of a partition no replica group can serve unavailable too."""
        if request_id < 0:
            raise ValueError(f"request_id must be >= 0, got {request_id}")
        states = self.segment_states
        options = parse_routing_options(query_options)
        ip = self.instance_partitions
        preferred = 0 if self._fixed(options) else (request_id % MAX_REQUEST_ID) % ip.num_replica_groups
        chosen, optional, unroutable = assign_by_instance_partitions(segments, states.candidates, ip, preferred)
        unavailable = [s for s in segments if s in states.unavailable] if states.unavailable else []
        return SelectionResult(chosen, unavailable + unroutable, optional)

    def _pick(self, segments: Sequence[str], request_id: int, options: RoutingOptions,
              table: Mapping[str, Candidates]) -> Picks:  # pragma: no cover - select_detailed routes
        raise NotImplementedError


#: Selector classes by ``routing.instanceSelectorType`` (matched exactly, as Pinot does since #17364).
INSTANCE_SELECTORS: Mapping[str, type[InstanceSelector]] = MappingProxyType({
    cls.name: cls
    for cls in (BalancedInstanceSelector, ReplicaGroupInstanceSelector, StrictReplicaGroupInstanceSelector,
                MultiStageReplicaGroupSelector)
})


def consults_adaptive(selector_type: str) -> bool:
    """Whether a ``routing.instanceSelectorType`` routes by adaptive server selection when the broker enables it
    (Pinot's ``MultiStageReplicaGroupSelector`` never does); unknown names answer ``True``, their error comes
    from building the selector."""
    cls = INSTANCE_SELECTORS.get(selector_type)
    return cls is None or cls.adaptive_capable


def _selector_class(name: str) -> type[InstanceSelector]:
    if name in INSTANCE_SELECTORS:
        return INSTANCE_SELECTORS[name]
    where = "routing.instanceSelectorType"
    known = sorted(INSTANCE_SELECTORS)
    close = [k for k in known if k.lower() == name.lower()]
    if close:
        raise TableConfigError(where, f"{name!r} is not a selector: Pinot matches names case-sensitively (since "
                                      f"#17364; release 1.4.0 did not), did you mean {close[0]!r}?")
    raise TableConfigError(where, f"unknown selector {name!r} (Pinot would try to load it as a plugin class); "
                                  f"known: {known}")


def instance_selector_for(table_config: TableConfig, state: RoutingState, *,
                          adaptive: AdaptiveServerSelector | None = None,
                          broker_use_fixed_replica: bool = False,
                          broker_config: Mapping[str, Any] | None = None,
                          instance_partitions: InstancePartitions | None = None) -> InstanceSelector:
    """Build the selector Pinot's broker would use for a table.

    ``routing.instanceSelectorType`` picks the class (legacy ``routingTableBuilderName`` honoured),
    ``routing.useFixedReplica`` overrides the broker's ``pinot.broker.use.fixed.replica`` (given as
    ``broker_use_fixed_replica`` or read from ``broker_config``), and upsert or dedup tables get strict
    candidates. Fixed replica together with adaptive selection is an error, as in Pinot.
    ``instance_partitions`` (the table's OFFLINE, or CONSUMING, ones) is what ``multiStageReplicaGroup``
    routes from; that selector ignores ``adaptive``, as Pinot's does.
    """
    cls = _selector_class(table_config.instance_selector_type)
    table_fixed = table_config.section("routing").get("useFixedReplica")
    broker_fixed = broker_use_fixed_replica or broker_use_fixed_replica_key(broker_config)
    fixed = broker_fixed if table_fixed is None else table_config.use_fixed_replica
    strict = cls.strict_candidates or (issubclass(cls, ReplicaGroupInstanceSelector)
                                       and (table_config.is_upsert or table_config.is_dedup))
    name = table_config.table_name_with_type
    if cls is MultiStageReplicaGroupSelector:
        return MultiStageReplicaGroupSelector(state, table_name=name, use_fixed_replica=fixed, adaptive=adaptive,
                                              strict=strict, instance_partitions=instance_partitions)
    return cls(state, table_name=name, use_fixed_replica=fixed, adaptive=adaptive, strict=strict)
