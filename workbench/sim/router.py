"""The broker's routing step in the model: Pinot's own instance selector on the layout's ideal state.

Selection without adaptive feedback depends only on the segment list and on the request id modulo
the candidate counts (balanced takes candidate ``(requestId + k) % n``, replica groups rotate the same
way), so those routes are computed once per residue and reused: the decision is Pinot's, the cost is
a dictionary look-up. With adaptive server selection every query is routed afresh from live stats.
As Pinot's routing manager does, the router hands the selector the segments in the order of the
broker's hash sets (:mod:`workbench.pinot.routing.hashorder`), which is what k counts along.
"""

from __future__ import annotations

from collections.abc import Mapping
from math import lcm
from typing import Any

from workbench.pinot.routing import InstanceSelector, instance_selector_for, routing_state_from_assignment
from workbench.pinot.routing.adaptive import ServerRoutingStatsManager
from workbench.pinot.routing.hashorder import hash_set_order
from workbench.pinot.routing.options import routing_options_set
from workbench.pinot.sql.query import Query
from workbench.pinot.table_config import TableConfig
from workbench.sim.layout import Layout

__all__ = ["Route", "Router", "own_routing_options"]

#: A routed query: per server index, the indices of the segments it serves; plus unavailable segments.
Route = tuple[list[tuple[int, list[int]]], int]


def own_routing_options(query: Query | None) -> tuple[tuple[str, str], ...]:
    """The routing options a query sets itself (``SET numReplicaGroupsToQuery = 2;``), under Pinot's
    spelling, as sorted pairs: with its segment list, what its route depends on."""
    if query is None or not query.options:
        return ()
    return tuple(sorted(routing_options_set(query.options).items()))


class Router:
    """Routes queries for one replication; call :meth:`set_server_health` when a server fails/recovers and
    :meth:`set_server_excluded` when the broker's failure detector excludes it or lets it back."""

    def __init__(self, layout: Layout, table: TableConfig, options: Mapping[str, Any] | None = None,
                 stats: ServerRoutingStatsManager | None = None, adaptive: Any = None, *,
                 broker_config: Mapping[str, Any] | None = None) -> None:
        self.layout = layout
        self.options = dict(options or {})
        self.stats = stats
        self._index = {s: i for i, s in enumerate(layout.servers)}
        self._seg_index = {s: i for i, s in enumerate(layout.segments)}
        ips = (layout.instance_partitions or {}).get(table.table_name_with_type)
        self.selector: InstanceSelector = instance_selector_for(
            table, routing_state_from_assignment(layout.ideal_state), adaptive=adaptive, broker_config=broker_config,
            instance_partitions=ips)
        max_replicas = max((len(r) for r in layout.replicas), default=1)
        self._period = lcm(*range(1, max_replicas + 1), self.selector.request_period())
        self._cache: dict[tuple[int, int], Route] = {}
        self._listings: dict[int, list[str]] = {}  # key -> the list in the broker's order (health-independent)

    def _listing(self, key: int, segments: tuple[str, ...] | None) -> list[str]:
        """The broker lists a query's segments in its hash sets' order, which balanced routing counts along;
        it depends on the list alone, so it is made once per key (adaptive routing asks every query)."""
        listed = self._listings.get(key)
        if listed is None:
            names = self.layout.segments if segments is None else segments
            listed = self._listings[key] = hash_set_order(names, len(self.layout.segments))
        return listed

    @property
    def period(self) -> int:
        """Routes without adaptive feedback repeat with the request id modulo this (the lcm of replica counts)."""
        return self._period

    def set_server_health(self, server: int, healthy: bool) -> None:
        """A crash or recovery: the broker's routing state changes and cached routes are dropped."""
        state = self.selector.state.with_server(self.layout.servers[server], healthy=healthy)
        self.selector.update(state)
        self._cache.clear()

    def set_server_excluded(self, server: int, excluded: bool) -> None:
        """The broker's failure detector excludes a server from routing, or lets it back: Pinot's
        ``BrokerRoutingManager.excludeServerFromRouting`` / ``includeServerToRouting``, which take it out of the
        enabled servers whatever Helix says of it (a crash is :meth:`set_server_health`, kept apart)."""
        state = self.selector.state.with_server(self.layout.servers[server], enabled=not excluded)
        self.selector.update(state)
        self._cache.clear()

    def options_for(self, own: tuple[tuple[str, str], ...]) -> Mapping[str, Any]:
        """The query options a query is routed with: the workload's, overridden by the routing options the
        query sets itself (:func:`own_routing_options`), as Pinot's broker passes them on."""
        return {**self.options, **dict(own)} if own else self.options

    def route(self, request_id: int, segments: tuple[str, ...] | None = None, key: int = 0,
              options: Mapping[str, Any] | None = None) -> Route:
        """Route one query over ``segments`` (all segments when ``None``) with ``options`` (the workload's
        when ``None``; see :meth:`options_for`); ``key`` identifies the list and the options."""
        cacheable = self.selector.adaptive is None
        if cacheable:
            hit = self._cache.get((key, request_id % self._period))
            if hit is not None:
                return hit
        names = self._listing(key, segments)
        selection = self.selector.select(names, request_id, self.options if options is None else options)
        per_server: dict[int, list[int]] = {}
        index, seg_index = self._index, self._seg_index
        for seg, server in selection.segment_to_server.items():
            per_server.setdefault(index[server], []).append(seg_index[seg])
        # each server's segments in table order, whatever order the broker listed them in (only which
        # server serves a segment follows the listing)
        route: Route = ([(server, sorted(segs)) for server, segs in per_server.items()],
                        len(selection.unavailable_segments))
        if cacheable:
            self._cache[(key, request_id % self._period)] = route
        return route

