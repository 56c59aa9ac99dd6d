"""Every query's routing, decided once per distinct case: Pinot's instance selector on the layout.

Without adaptive feedback a route depends only on the query's plan, its request id modulo the replica
counts (:attr:`~workbench.sim.router.Router.period`) and which servers are up, whose crash times are
known in advance. A run of a million queries has a handful of such cases; each is routed once into a
*template* (its requests: server, segment positions, rows returned, documents scanned) and every query
names its template. The plan's per-request arrays are views of these templates.

Pinot's selector sees a plan only through its segment list and the routing options the query sets itself
(``SET numReplicaGroupsToQuery = 2;``), and a replayed log has many SQL texts (filters, time ranges) but
few lists after pruning: the demo's 1,922 cases have 75. So the selector runs once per list and options
(a *shape*: servers and segment positions), and each case adds its own plan's documents and row rule; the
requests' document sums and rows are computed for all templates at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.pinot.table_config import TableConfig
from workbench.sim.fast.plan_kernels import first_seen, offsets, segment_sums
from workbench.sim.layout import Layout
from workbench.sim.pauses import PauseSchedule
from workbench.sim.planner import QueryPlan, result_rows
from workbench.sim.router import Router, own_routing_options

__all__ = ["RouteCache", "Routes", "route_queries"]


@dataclass(frozen=True)
class Routes:
    """Routing templates and the template of each query.

    A template's requests are ``requests[t]:requests[t + 1]`` of the template-request arrays, in routing
    order; request ``j`` goes to ``server[j]`` and scans the query plan's segments at positions
    ``position[segments[j]:segments[j + 1]]``.
    """

    #: Per query: its template (int32).
    template: np.ndarray
    #: Per template: unavailable segments (int32), its query plan, and its requests (CSR, int64).
    unavailable: np.ndarray
    plan: np.ndarray
    requests: np.ndarray
    #: Per template request: server (int32), segment positions (CSR, int64), rows its server returns
    #: (int64) and documents it scans (float, summed in position order).
    server: np.ndarray
    segments: np.ndarray
    position: np.ndarray
    rows: np.ndarray
    docs: np.ndarray

    @property
    def request_counts(self) -> np.ndarray:
        """Requests per template."""
        return np.diff(self.requests)

    @property
    def segment_counts(self) -> np.ndarray:
        """Segments per template request."""
        return np.diff(self.segments)


def _health_events(crashes: Sequence[PauseSchedule]) -> list[tuple[float, int, bool]]:
    events = [(t, s, up) for s, c in enumerate(crashes) for start, end in c.intervals()
              for t, up in ((start, False), (end, True))]
    events.sort(key=lambda e: (e[0], e[1]))
    return events


def _templates(epoch: np.ndarray, plan_index: np.ndarray, residue: np.ndarray, period: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """Each query's template number and the first query of each (numbered by first appearance, so in
    epoch order). Keys are ``plan x period + residue``; when there are far more possible keys than
    queries they are first renumbered densely."""
    key = plan_index.astype(np.int64) * period + residue
    n_keys = (int(plan_index.max()) + 1) * period if len(key) else 0
    if n_keys > 4 * len(key) + 1024:
        _, key = np.unique(key, return_inverse=True)
        key = key.reshape(-1).astype(np.int64)
        n_keys = int(key.max()) + 1
    return first_seen(epoch, key, n_keys)


@dataclass(frozen=True)
class _Shape:
    """One routing decision over a segment list: its requests' servers, how many segments each serves and
    their plan positions (request after request), plus the count of unavailable segments."""

    unavailable: int
    server: np.ndarray
    sizes: np.ndarray
    position: np.ndarray


@dataclass(frozen=True)
class _Template:
    """One routed case: its routing, the documents each of its segments scans (position order), and its
    plan's row rule (:attr:`_PlanSegments.aggregate`, :attr:`_PlanSegments.cap`)."""

    shape: _Shape
    docs: np.ndarray
    aggregate: int
    cap: int


@dataclass(frozen=True)
class _PlanSegments:
    """A plan's segments (layout indices, plan order), the documents each scans, and the rows a server returns
    for a request: one for an aggregation, else its documents up to the query's cap (:func:`result_rows`)."""

    segments: np.ndarray
    docs: np.ndarray
    aggregate: int
    cap: int
    #: Whether ``segments`` ascend (the planner keeps the layout's order): positions are then a binary search.
    ascending: bool
    #: The query options the plan is routed with, and the run's number for its segment list and those
    #: options: plans pruned to the same list route alike unless their own routing options differ.
    options: Mapping[str, Any]
    listed: int

    @classmethod
    def of(cls, plan: QueryPlan, layout: Layout, options: Mapping[str, Any], listed: int) -> _PlanSegments:
        segments, docs = plan.arrays(layout.docs)
        none, many = result_rows(plan.query, 0.0), result_rows(plan.query, float(2**62))
        return cls(segments, docs, none if none == many else -1, many, bool(np.all(segments[1:] > segments[:-1])),
                   options, listed)

    def positions(self, chosen: Sequence[int]) -> np.ndarray:
        """Where each chosen segment (layout index) sits in the plan."""
        if self.ascending:
            pos = np.searchsorted(self.segments, np.asarray(chosen, dtype=np.int64))
        else:
            lookup = {int(seg): i for i, seg in enumerate(self.segments.tolist())}
            pos = np.fromiter((lookup[seg] for seg in chosen), dtype=np.int64, count=len(chosen))
        return np.asarray(pos, dtype=np.int64)


class RouteCache:
    """The routing of one run (one layout, table, broker configuration and planner), shared by its
    replications: each distinct case (servers down, plan, request-id residue) is routed once per run.

    Pinot's selectors without adaptive feedback are functions of exactly these, so a replication routes
    only the cases earlier ones did not meet. The selector itself depends on the plan only through its
    segment list (in order) and its own routing options, and many plans share both (different filters
    pruned to the same time range), so it runs once per distinct pair; each plan then takes its own
    documents and row rule.
    """

    def __init__(self, layout: Layout, table: TableConfig, options: Mapping[str, Any],
                 broker_config: Mapping[str, Any] | None) -> None:
        self.layout = layout
        self.router = Router(layout, table, options, broker_config=broker_config)
        self._down: set[int] = set()
        self._templates: dict[tuple[frozenset[int], int, int], _Template] = {}
        self._shapes: dict[tuple[frozenset[int], int, int], _Shape] = {}
        self._plans: dict[int, _PlanSegments] = {}
        self._lists: dict[tuple[tuple[int, ...] | None, tuple[tuple[str, str], ...]], int] = {}

    @property
    def period(self) -> int:
        """Routes repeat with the request id modulo this."""
        return self.router.period

    def template(self, down: frozenset[int], plan: QueryPlan, residue: int) -> _Template:
        """The route of a query of ``plan`` with request id ``residue`` while the servers ``down`` are down."""
        key = (down, plan.key, residue)
        hit = self._templates.get(key)
        if hit is None:
            of_plan = self._plan(plan)
            shape = self._shape(down, plan, of_plan, residue)
            hit = self._templates[key] = _Template(shape, of_plan.docs[shape.position], of_plan.aggregate,
                                                   of_plan.cap)
        return hit

    def _shape(self, down: frozenset[int], plan: QueryPlan, of_plan: _PlanSegments, residue: int) -> _Shape:
        key = (down, of_plan.listed, residue)
        hit = self._shapes.get(key)
        if hit is not None:
            return hit
        for server in sorted(self._down - down):
            self.router.set_server_health(server, True)
        for server in sorted(down - self._down):
            self.router.set_server_health(server, False)
        self._down = set(down)
        route, missing = self.router.route(residue, plan.names, of_plan.listed, of_plan.options)
        chosen = [segment for _, segments in route for segment in segments]
        sizes = np.array([len(segments) for _, segments in route], dtype=np.int64)
        hit = self._shapes[key] = _Shape(missing, np.array([server for server, _ in route], dtype=np.int32),
                                         sizes, of_plan.positions(chosen))
        return hit

    def _plan(self, plan: QueryPlan) -> _PlanSegments:
        hit = self._plans.get(plan.key)
        if hit is None:
            own = own_routing_options(plan.query)
            listed = self._lists.setdefault((plan.segments, own), len(self._lists))
            hit = self._plans[plan.key] = _PlanSegments.of(plan, self.layout, self.router.options_for(own), listed)
        return hit


def route_queries(cache: RouteCache, brokers: int, arrival_ms: np.ndarray, plan_index: np.ndarray,
                  plans: Sequence[QueryPlan], crashes: Sequence[PauseSchedule],
                  ids: np.ndarray | None = None) -> Routes:
    """Pinot's routing of every query (request id = its broker's counter), around servers that are down.

    ``ids``: each query's number among all the brokers' queries (default: its own index), which sets its
    broker and its request id: with several tables, a table's queries are numbered among every table's, as
    a broker's request counter runs over all the tables it serves."""
    health = _health_events(crashes)
    times = np.array([h[0] for h in health], dtype=float)
    epoch = np.searchsorted(times, arrival_ms, side="right").astype(np.int64)
    number = np.arange(len(arrival_ms), dtype=np.int64) if ids is None else np.asarray(ids, dtype=np.int64)
    residue = (number // brokers) % cache.period
    template, first = _templates(epoch, plan_index, residue, cache.period)
    chosen: list[_Template] = []
    down: set[int] = set()
    applied = 0
    for q in first.tolist():  # templates in epoch order: health changes are applied in time order
        while applied < epoch[q]:
            _, server, healthy = health[applied]
            (down.discard if healthy else down.add)(server)
            applied += 1
        chosen.append(cache.template(frozenset(down), plans[int(plan_index[q])], int(residue[q])))
    return _assemble(template, np.asarray(plan_index[first], dtype=np.int64), chosen)


def _assemble(template: np.ndarray, of_plan: np.ndarray, chosen: Sequence[_Template]) -> Routes:
    """The templates as flat arrays: a request's documents are its segments' summed left to right (as
    ``np.bincount`` with weights adds them), its rows its plan's rule applied to them."""
    shapes = [t.shape for t in chosen]
    counts = np.array([len(s.server) for s in shapes], dtype=np.int64)
    sizes = np.concatenate([s.sizes for s in shapes]) if shapes else np.empty(0, dtype=np.int64)
    segments = offsets(sizes)
    docs = segment_sums(np.concatenate([t.docs for t in chosen]) if chosen else np.empty(0), segments)
    aggregate = np.repeat(np.array([t.aggregate for t in chosen], dtype=np.int64), counts)
    cap = np.repeat(np.array([t.cap for t in chosen], dtype=np.int64), counts)
    rows = np.where(aggregate >= 0, aggregate, np.minimum(np.maximum(docs, 0.0).astype(np.int64), cap))
    return Routes(template, np.array([s.unavailable for s in shapes], dtype=np.int32), of_plan, offsets(counts),
                  (np.concatenate([s.server for s in shapes]) if shapes else np.empty(0)).astype(np.int32), segments,
                  (np.concatenate([s.position for s in shapes]) if shapes else np.empty(0)).astype(np.int32),
                  rows.astype(np.int64), docs)

