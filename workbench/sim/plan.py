"""The timing-free part of a replication, drawn up front and shared by both engines.

Everything the run decides without looking at time goes here, drawn from the replication's streams in
a fixed order: when queries arrive and which SQL plan each is (pruned by Pinot's broker pruners), how
Pinot's instance selector routes each one (including around servers that are down, whose crash times
are known), the work of every segment each query scans, the runner's work per request, the network
delay of every message, the GC pause and crash schedules, and the segment churn. The SimPy engine
(:mod:`workbench.sim.model`) and the compiled engine (:mod:`workbench.sim.fast`) both execute this
plan, so the same seed gives them the same numbers; what remains for them is the queueing in time.

Order of draws: ``arrivals`` (Poisson gaps), ``service`` (per query and kept segment in query order:
a distribution model's times, or the cost model's variability factors), ``network`` (per request in
query and routing order: out, then back), ``request_delay`` (per request in the same order, added to its way
back; only when ``cluster.network.request_delay_ms`` draws), ``churn`` (replace events, then reload events), and per
server ``gc`` and ``failures``. With adaptive server selection or a failure detector routing depends on
feedback, so the plan holds no requests (``routed`` is False) and the engines route live, drawing network
delays as messages are sent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from workbench.distributions import Deterministic, Distribution
from workbench.pinot.execution_config import query_timeout_ms
from workbench.pinot.options import QueryOptions
from workbench.pinot.query_options import resolve_keys, spellings
from workbench.pinot.routing.options import ROUTING_OPTION_KEYS
from workbench.scenario import Scenario
from workbench.sim import decisions
from workbench.sim.arrivals import Queries, churn_events, draw_queries
from workbench.sim.failures import SlowWindows, crash_schedule, slowed_pauses, stops, wedge_schedule
from workbench.sim.fast.jit import python
from workbench.sim.fast.plan_kernels import by_plan, delivered_loads, delivery_order, jvm_factors, offsets
from workbench.sim.gc import Allocation, ServerHeap, server_gc
from workbench.sim.layout import Layout
from workbench.sim.memory import Memory, server_memory
from workbench.sim.pauses import PauseSchedule
from workbench.sim.planner import Planner, QueryPlan, delay_kind
from workbench.sim.routes import RouteCache, Routes, route_queries
from workbench.sim.service import ServiceModel, function_ns_per_doc, make_service_model
from workbench.sim.streams import Streams

__all__ = ["DELAY_ROWS", "Delivery", "Plan", "Schedules", "build_plan", "delay_row_draws", "delay_rows", "draw_table",
           "expand", "prepare_ms", "query_options", "request_columns", "request_targets", "request_work",
           "server_schedules", "with_heaps"]

_slow_scale = python(decisions.slow_scale)
_wake_work = python(decisions.wake_work)


@dataclass(frozen=True)
class Plan:
    """One replication's timing-free decisions (times in ms, work in ms of one core).

    Queries are in arrival order. Each query's kept segments are its plan's segments in plan order
    (``plan_offsets`` CSR by plan into ``plan_segment`` and ``plan_docs``); their work is ``work``
    (``query_segments`` CSR by query). Routed plans hold their requests as routing templates
    (:class:`~workbench.sim.routes.Routes`) plus the network delays of each request; the per-request
    arrays the SimPy engine reads (``server``, ``request_position``...) are built from them on first use.
    """

    arrival_ms: np.ndarray
    plan_index: np.ndarray
    broker: np.ndarray
    timeout_ms: np.ndarray
    group_by: np.ndarray
    secondary: np.ndarray
    execution_threads: np.ndarray
    query_segments: np.ndarray
    work: np.ndarray
    plan_offsets: np.ndarray
    plan_segment: np.ndarray
    plan_docs: np.ndarray
    routed: bool
    #: The routing templates (``None`` without routing in advance: adaptive selection routes live).
    routes: Routes | None
    query_requests: np.ndarray
    #: Per request, its way out then its way back (``delays[2 r]``, ``delays[2 r + 1]``); the way back holds the
    #: request's own delay (``cluster.network.request_delay_ms``) besides the network's.
    delays: np.ndarray
    #: Per query, the runner's work before the fan-out, and its merge work per segment (group-by: the
    #: workers'), ms: its table's service model's (every query's the same with one table).
    prepare_ms: np.ndarray
    merge_ms_per_segment: np.ndarray
    #: Per query, the CPU each of its requests leaves on its server's cores after the response
    #: (``service.off_path_ms``), ms.
    off_path_ms: np.ndarray
    #: Per query, which of the network's request delays its requests take (``NetworkSpec.delay_column``: 0 for
    #: ``request_delay_ms``, else its kind's own, ``request_delay_by_kind_ms``).
    delay_column: np.ndarray
    plans: tuple[QueryPlan, ...]
    heaps: tuple[ServerHeap, ...]
    crashes: tuple[PauseSchedule, ...]
    #: Per server: its work is stretched by this (the share of cores ZGC's concurrent threads take).
    cpu_scale: np.ndarray
    churn_ms: np.ndarray
    churn_segment: np.ndarray
    churn_event: tuple[str, ...]
    #: Each server's requests in the order they reach it (routed plans only).
    delivery: Delivery | None = None
    #: Each server's slow windows (``failures.slow``; none by default).
    slow: SlowWindows | None = None
    #: Each server's wedges (``failures.wedged``), as stop intervals (empty tuple: none anywhere).
    wedges: tuple[PauseSchedule, ...] = ()

    @property
    def num_queries(self) -> int:
        return len(self.arrival_ms)

    @property
    def num_requests(self) -> int:
        return int(self.query_requests[-1])

    @property
    def pauses(self) -> tuple[PauseSchedule, ...]:
        """Each server's stop-the-world pauses."""
        return tuple(h.pauses for h in self.heaps)

    @cached_property
    def stops(self) -> tuple[PauseSchedule, ...]:
        """Each server's stops, what the engines execute: its GC pauses joined with its wedges
        (:func:`~workbench.sim.failures.stops`); the pauses themselves where there are no wedges."""
        if not self.wedges:
            return self.pauses
        return tuple(stops(p, w) for p, w in zip(self.pauses, self.wedges, strict=True))

    def scale(self, server: int, delivered: float) -> float:
        """What the work of a request reaching ``server`` at ``delivered`` is multiplied by: the server's CPU
        scale, and its slow window's factor (:func:`~workbench.sim.decisions.slow_scale`)."""
        scale = float(self.cpu_scale[server])
        if self.slow is None:
            return scale
        return float(_slow_scale(scale, delivered, *self.slow.server(server)))

    def jvm_scale(self, server: int, delivered: float) -> float:
        """What the own delay of a request reaching ``server`` at ``delivered`` is multiplied by: its slow
        window's factor when the window slows the whole JVM (``scope: jvm``), else 1 (the same decision,
        :func:`~workbench.sim.decisions.slow_scale`, on the windows' ``jvm`` factors)."""
        if self.slow is None:
            return 1.0
        return float(_slow_scale(1.0, delivered, *self.slow.server_jvm(server)))

    def query_work(self, query: int) -> tuple[np.ndarray, np.ndarray]:
        """Segment indices and their work for one query (its kept segments, in plan order)."""
        p = int(self.plan_index[query])
        a, b = self.query_segments[query], self.query_segments[query + 1]
        return self.plan_segment[self.plan_offsets[p]:self.plan_offsets[p + 1]], self.work[a:b]

    @cached_property
    def segment(self) -> np.ndarray:
        """The layout index of every query's kept segments (parallel to ``work``)."""
        return by_plan(self.query_segments, self.plan_index, self.plan_offsets, self.plan_segment)

    @cached_property
    def docs(self) -> np.ndarray:
        """Documents each run of a query's segment scans (parallel to ``work``)."""
        return by_plan(self.query_segments, self.plan_index, self.plan_offsets, self.plan_docs)

    @cached_property
    def request_query(self) -> np.ndarray:
        """The query of each request."""
        counts = np.diff(self.query_requests)
        return np.repeat(np.arange(len(counts), dtype=np.int64), counts)

    @cached_property
    def request_template(self) -> np.ndarray:
        """The template request (an index into :class:`~workbench.sim.routes.Routes`' arrays) of each request."""
        if self.routes is None:
            return np.empty(0, dtype=np.int64)
        q = self.request_query
        out: np.ndarray = self.routes.requests[self.routes.template[q]] + np.arange(len(q)) - self.query_requests[q]
        return out

    @cached_property
    def unavailable(self) -> np.ndarray:
        """Unavailable segments of each query (routed plans; zero otherwise)."""
        if self.routes is None:
            return np.zeros(self.num_queries, dtype=np.int32)
        out: np.ndarray = self.routes.unavailable[self.routes.template]
        return out

    @cached_property
    def server(self) -> np.ndarray:
        """The server of each request."""
        return self._template_values("server", np.int32)

    @cached_property
    def rows(self) -> np.ndarray:
        """Rows each request's server returns."""
        return self._template_values("rows", np.int64)

    @cached_property
    def request_segments(self) -> np.ndarray:
        """CSR of each request's segment positions in ``request_position``."""
        if self.routes is None:
            return np.zeros(1, dtype=np.int64)
        counts = self.routes.segment_counts[self.request_template]
        return np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    @cached_property
    def request_position(self) -> np.ndarray:
        """Each request's segments: positions in its query's kept segments, in routing order."""
        if self.routes is None:
            return np.empty(0, dtype=np.int64)
        tr = self.request_template
        counts = self.routes.segment_counts[tr]
        _, request, local = expand(counts)
        out: np.ndarray = self.routes.position[self.routes.segments[tr][request] + local].astype(np.int64)
        return out

    @cached_property
    def prepare(self) -> np.ndarray:
        """The runner's work of each request before the fan-out."""
        out: np.ndarray = self.prepare_ms[self.request_query]
        return out

    @cached_property
    def merge(self) -> np.ndarray:
        """The runner's merge work of each request (none for group-by: its workers merge)."""
        if self.routes is None:
            return np.empty(0)
        nseg = self.routes.segment_counts[self.request_template]
        q = self.request_query
        return np.where(self.group_by[q], 0.0, self.merge_ms_per_segment[q] * nseg)

    @property
    def out_delay(self) -> np.ndarray:
        """Each request's network delay to its server."""
        return self.delays[0::2]

    @property
    def back_delay(self) -> np.ndarray:
        """Each response's network delay back to the broker."""
        return self.delays[1::2]

    def request_work(self, request: int) -> tuple[np.ndarray, np.ndarray]:
        """Segment indices and work of one request (routed plans), in routing order."""
        query = int(self.request_query[request])
        segments, work = self.query_work(query)
        positions = self.request_position[self.request_segments[request]:self.request_segments[request + 1]]
        return segments[positions], work[positions]

    def _template_values(self, name: str, dtype: type) -> np.ndarray:
        if self.routes is None:
            return np.empty(0, dtype=dtype)
        values: np.ndarray = getattr(self.routes, name)
        out: np.ndarray = values[self.request_template]
        return out


@dataclass(frozen=True)
class Delivery:
    """Each server's requests in the order they reach it (by delivery time, ties in request order).

    Server ``s``'s are entries ``offsets[s]:offsets[s + 1]``: the request's id, its query, and when it
    reaches the server, ``arrival_ms[query] + delays[2 request]``.
    """

    offsets: np.ndarray
    request: np.ndarray
    query: np.ndarray
    delivered: np.ndarray


#: The query options the model reads, as Pinot spells them: a query's own keys resolve to these whatever
#: their case (:mod:`workbench.pinot.query_options`).
_OPTION_KEYS = spellings(("timeoutMs", "isSecondaryWorkload", "maxExecutionThreads", *ROUTING_OPTION_KEYS))


def query_options(plan: QueryPlan, base: Mapping[str, str]) -> Mapping[str, str]:
    """The options a query carries: the workload's, overridden by its own ``SET``/``OPTION``."""
    if plan.query is None or not plan.query.options:
        return base
    return {**base, **resolve_keys(plan.query.options, _OPTION_KEYS)}


def expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rows with ``counts`` items each: the CSR offsets, each item's row, and its position in its row."""
    ends = offsets(counts)
    row = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return ends, row, np.arange(int(ends[-1]), dtype=np.int64) - ends[row]


@dataclass(frozen=True)
class _Work:
    query_segments: np.ndarray
    work: np.ndarray
    plan_offsets: np.ndarray
    plan_segment: np.ndarray
    plan_docs: np.ndarray


def _work(queries: Queries, service: ServiceModel, layout: Layout, rng: np.random.Generator) -> _Work:
    """Every query's kept segments (by plan) and the work of each run, drawn in query order."""
    per_plan = [p.arrays(layout.docs) for p in queries.plans]
    plan_offsets = offsets(np.array([len(segs) for segs, _ in per_plan], dtype=np.int64))
    plan_seg = np.concatenate([segs for segs, _ in per_plan]).astype(np.int32)
    plan_docs = np.concatenate([docs for _, docs in per_plan]).astype(float)
    # the cost model's mean time of each kept segment (elementwise, so the same bits as per plan)
    if service.draw is not None:
        plan_mean = plan_docs * 0.0
    elif service.function_costs or service.group_by_ns_per_doc:
        # each plan's documents at ns_per_doc plus its aggregation functions' extra (service.function_ns_per_doc)
        # and a group-by's (service.group_by_ns_per_doc)
        ns = np.repeat([service.ns_per_doc + function_ns_per_doc(p.query, service.function_costs)
                        + (service.group_by_ns_per_doc if p.query is not None and p.query.group_by else 0.0)
                        for p in queries.plans], np.diff(plan_offsets))
        plan_mean = service.per_segment_ms + plan_docs * (ns * 1e-6)
    else:
        plan_mean = service.per_segment_ms + plan_docs * (service.ns_per_doc * 1e-6)
    if service.draw is None and service.ns_per_filter_entry:   # the entries each segment's filter reads
        entries = np.concatenate([np.asarray(p.filter_entries if p.filter_entries is not None else
                                             np.zeros(len(segs)), dtype=float)
                                  for p, (segs, _) in zip(queries.plans, per_plan, strict=True)] or [np.zeros(0)])
        plan_mean = plan_mean + entries * (service.ns_per_filter_entry * 1e-6)
    query_segments = offsets(np.diff(plan_offsets)[queries.plan_index])
    total = int(query_segments[-1])
    if service.draw is not None:
        work = service.draw.sample(rng, total) if total else np.empty(0)
    else:
        means = by_plan(query_segments, queries.plan_index, plan_offsets, plan_mean)
        if service.variability > 0 and total:
            sigma = service.variability
            work = means * rng.lognormal(-sigma * sigma / 2.0, sigma, total)
        else:
            work = means
    return _Work(query_segments, np.asarray(work, dtype=float), plan_offsets, plan_seg, plan_docs)


@dataclass(frozen=True)
class Schedules:
    """Each server's crashes, slow windows and wedges over the run (``cluster.failures``), from the failure
    streams of the servers: shared by every table on them."""

    crashes: tuple[PauseSchedule, ...]
    slow: SlowWindows | None
    wedges: tuple[PauseSchedule, ...]


def server_schedules(sc: Scenario, servers: Sequence[str], streams: Streams, horizon_ms: float) -> Schedules:
    """Crashes (drawn from each server's failure stream; ``down`` servers down throughout), slow windows and
    wedges of ``servers``."""
    fail = sc.cluster.failures
    mtbf = None if fail.mtbf_s is None else fail.mtbf_s * 1000.0
    mttr = None if fail.mttr_s is None else fail.mttr_s * 1000.0
    down = set(fail.down)
    crashes = tuple(PauseSchedule.from_intervals([(0.0, horizon_ms)]) if name in down
                    else crash_schedule(mtbf, mttr, streams.failures[i], horizon_ms)
                    for i, name in enumerate(servers))
    slow = (SlowWindows.of([[(w.from_s, w.until_s, float(w.factor or 1.0), w.scope == "jvm")
                             for w in fail.slow if w.server == name] for name in servers], horizon_ms)
            if fail.slow else None)
    wedges = (tuple(wedge_schedule([(w.from_s, w.until_s) for w in fail.wedged if w.server == name], horizon_ms)
                    for name in servers) if fail.wedged else ())
    return Schedules(crashes, slow, wedges)


def draw_table(sc: Scenario, layout: Layout, streams: Streams, horizon_ms: float, replay: pd.DataFrame | None,
               planner: Planner | None, at_ms: Sequence[float] | None) -> dict[str, Any]:
    """One table's queries, the work of each and its options, and its segment churn, drawn from the table's
    own streams (arrivals, service, churn): the plan's per-query and per-plan fields, before routing."""
    spec = sc.cluster
    queries = draw_queries(streams.arrivals, sc.workload.arrival.rate, horizon_ms, replay, planner, at_ms)
    service = make_service_model(sc.service)
    work = _work(queries, service, layout, streams.service)
    base = sc.workload.options  # read when the scenario was loaded; a query's own SET options are read here
    per_plan = [base if p.query is None or not p.query.options else QueryOptions.read(query_options(p, base.strings))
                for p in queries.plans]
    table_timeout = sc.table.query_timeout_ms
    timeout = np.array([query_timeout_ms(o, table_timeout, spec.broker.query) for o in per_plan])
    group_by = np.array([p.query is not None and bool(p.query.group_by) for p in queries.plans])
    secondary = np.array([o.is_secondary_workload for o in per_plan])
    threads = np.array([o.max_execution_threads for o in per_plan], dtype=np.int32)
    pi = queries.plan_index
    column = np.array([spec.network.delay_column(delay_kind(p.query)) for p in queries.plans], dtype=np.int64)
    churn = churn_events(streams.churn, sc.workload.churn.replace_per_hour, sc.workload.churn.reload_per_hour,
                         len(layout.segments), horizon_ms)
    return dict(
        arrival_ms=queries.arrival_ms, plan_index=pi,
        timeout_ms=timeout[pi], group_by=group_by[pi], secondary=secondary[pi], execution_threads=threads[pi],
        query_segments=work.query_segments, work=work.work, plan_offsets=work.plan_offsets,
        plan_segment=work.plan_segment, plan_docs=work.plan_docs, plans=tuple(queries.plans),
        prepare_ms=prepare_ms(queries.arrival_ms, service),
        merge_ms_per_segment=np.full(len(pi), service.merge_ms_per_segment),
        off_path_ms=np.full(len(pi), service.off_path_ms), delay_column=column[pi],
        churn_ms=np.array([c[0] for c in churn], dtype=float),
        churn_segment=np.array([c[1] for c in churn], dtype=np.int32), churn_event=tuple(c[2] for c in churn))


def prepare_ms(arrival_ms: np.ndarray, service: ServiceModel) -> np.ndarray:
    """Each query's runner work before the fan-out, ms: ``per_request_ms``, plus its wake-up work
    (:func:`~workbench.sim.decisions.wake_work`) by the gap since the previous of these queries arrived (the
    first's gap is infinite). Without a wake-up cost (the default) every query's is ``per_request_ms`` itself,
    bit for bit as before. The gap is the table's (a broker's, for one broker): a server that takes a share of
    the queries idles longer than it says, so with several servers the cost is as the broker saw the quiet."""
    base = np.full(len(arrival_ms), service.per_request_ms)
    if service.wake_ms <= 0 or not len(arrival_ms):
        return base
    gap = np.diff(np.asarray(arrival_ms, dtype=float), prepend=-np.inf)
    out: np.ndarray = base + np.asarray(_wake_work(gap, service.wake_ms, service.wake_tau_ms))
    return out


def build_plan(sc: Scenario, layout: Layout, streams: Streams, *, horizon_ms: float,
               replay: pd.DataFrame | None = None, planner: Planner | None = None,
               at_ms: Sequence[float] | None = None, memory: Memory | None = None,
               routing: RouteCache | None = None) -> Plan:
    """Draw one replication's plan from ``streams`` (see the module docstring for the order).

    ``memory``: each server's long-lived heap (:func:`~workbench.sim.memory.server_memory`, computed once
    per run); by default the scenario's own, without a workload directory. ``routing``: the run's routing
    cache (one per run, as the ``planner``), so replications route each case once; by default a new one."""
    spec = sc.cluster
    schedules = server_schedules(sc, layout.servers, streams, horizon_ms)
    drawn = draw_table(sc, layout, streams, horizon_ms, replay, planner, at_ms)
    pi = drawn["plan_index"]
    common: dict[str, Any] = dict(
        drawn, broker=(np.arange(len(pi)) % spec.brokers).astype(np.int32), heaps=(), crashes=schedules.crashes,
        cpu_scale=np.ones(layout.num_servers), slow=schedules.slow, wedges=schedules.wedges)
    if spec.broker.routes_live:
        plan = Plan(routed=False, routes=None, query_requests=np.zeros(len(pi) + 1, dtype=np.int64),
                    delays=np.empty(0), **common)
    else:
        cache = routing or RouteCache(layout, sc.table, sc.workload.query_options, spec.broker.config)
        routes = route_queries(cache, spec.brokers, drawn["arrival_ms"], pi, drawn["plans"], schedules.crashes)
        plan = _with_requests(common, routes, streams, sc, layout.num_servers)
    return with_heaps(plan, sc, layout, streams, horizon_ms, memory or server_memory(sc, layout, None))


def request_work(common: Mapping[str, Any], routes: Routes) -> tuple[np.ndarray, int]:
    """The work of every query's kept segments with a group-by's merge added to each (its workers merge into
    one shared table), and the number of requests the routes make."""
    query_requests = offsets(routes.request_counts[routes.template])
    n = int(query_requests[-1])
    work, group_by = common["work"], common["group_by"]
    merge_each = common["merge_ms_per_segment"]
    if n and group_by.any() and (merge_each > 0).any():
        counts = np.diff(common["query_segments"])
        seg_group_by, seg_merge = np.repeat(group_by, counts), np.repeat(merge_each, counts)
        work = np.where(seg_group_by & (seg_merge > 0), work + seg_merge, work)
    return work, n


def _with_requests(common: dict[str, Any], routes: Routes, streams: Streams, sc: Scenario,
                   servers: int) -> Plan:
    """The requests of routed queries (from their templates), their network delays and delivery order."""
    work, n = request_work(common, routes)
    query_requests = offsets(routes.request_counts[routes.template])
    slow = common["slow"]
    slowed = (*request_targets(common["arrival_ms"], routes, query_requests), slow) \
        if slow is not None and slow.whole_jvm else None
    delays = service_delays(sc, streams.network, n, streams.request_delay, slowed,
                            request_columns(common["delay_column"], query_requests))
    delivery = Delivery(*delivery_order(common["arrival_ms"], routes.template, query_requests, routes.requests,
                                        routes.server, delays, servers))
    return Plan(routed=True, routes=routes, query_requests=query_requests, delays=delays, delivery=delivery,
                **{**common, "work": work})


def _loads(sc: Scenario, layout: Layout, plan: Plan) -> list[Allocation]:
    """What each server allocates: per request delivered to it, ``bytes_per_request`` plus ``bytes_per_doc``
    per document it scans, at its delivery (in delivery order). With live (adaptive) routing the requests
    are not known in advance: each query's allocation is then spread evenly over the servers."""
    gc, n = sc.cluster.gc, layout.num_servers
    if plan.routes is None or plan.delivery is None:
        counts = np.diff(plan.query_segments)
        docs = plan.docs
        per_query = (gc.bytes_per_request * np.minimum(counts, n)
                     + gc.bytes_per_doc * np.add.reduceat(docs, plan.query_segments[:-1]) * (counts > 0)) / n \
            if len(docs) else np.zeros(plan.num_queries)
        return [Allocation(plan.arrival_ms, np.asarray(per_query, dtype=float)) for _ in range(n)]
    d, routes = plan.delivery, plan.routes
    allocated = delivered_loads(d.request, d.query, routes.template, plan.query_requests, routes.requests,
                                routes.docs, float(gc.bytes_per_request), float(gc.bytes_per_doc))
    return [Allocation(d.delivered[d.offsets[s]:d.offsets[s + 1]], allocated[d.offsets[s]:d.offsets[s + 1]])
            for s in range(n)]


def with_heaps(plan: Plan, sc: Scenario, layout: Layout, streams: Streams, horizon_ms: float,
                memory: Memory) -> Plan:
    """Each server's GC over the run (from its own GC stream) and the CPU its concurrent threads take; a
    server slow as a whole (``failures.slow`` with ``scope: jvm``) has the pauses that start in its window
    stretched (:func:`~workbench.sim.failures.slowed_pauses`), so both engines run the same schedule."""
    gc = sc.cluster.gc
    driven = gc.collector in ("g1", "zgc") and gc.allocation_rate is None
    loads: list[Allocation | None] = list(_loads(sc, layout, plan)) if driven else [None] * layout.num_servers
    heaps = tuple(server_gc(gc, sc.cluster.server.heap, memory.servers[i], streams.gc[i], horizon_ms, loads[i],
                            sc.cluster.server.cores) for i in range(layout.num_servers))
    if plan.slow is not None and plan.slow.whole_jvm:
        heaps = tuple(dataclasses.replace(h, pauses=slowed_pauses(h.pauses, *plan.slow.server_jvm(i)))
                      for i, h in enumerate(heaps))
    scale = np.array([1.0 / (1.0 - min(h.cpu_share, 0.9)) for h in heaps])
    return dataclasses.replace(plan, heaps=heaps, cpu_scale=scale)


def request_targets(arrival_ms: np.ndarray, routes: Routes,
                    query_requests: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each request's send time (its query's arrival) and server, in request order."""
    counts = np.diff(query_requests)
    query = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    template = routes.requests[routes.template[query]] + np.arange(len(query)) - query_requests[query]
    return arrival_ms[query], routes.server[template].astype(np.int64)


def request_columns(delay_column: np.ndarray, query_requests: np.ndarray) -> np.ndarray:
    """Per request (in request order), its query's delay column (:attr:`Plan.delay_column`)."""
    return np.repeat(np.asarray(delay_column, dtype=np.int64), np.diff(query_requests))


def service_delays(sc: Scenario, rng: np.random.Generator, requests: int,
                   delay_rng: np.random.Generator,
                   slowed: tuple[np.ndarray, np.ndarray, SlowWindows] | None = None,
                   columns: np.ndarray | None = None) -> np.ndarray:
    """``2 x requests`` delays: for each request its way out, then its way back.

    Each message's network latency is drawn from ``rng``; each request's own delay
    (``cluster.network.request_delay_ms``, drawn once per request from ``delay_rng``) is added to its way back:
    it comes after the server's work and takes no core, and both engines read the way back from here. With no
    request delay (the default) nothing is added or drawn, so such a scenario's delays are as before, bit for bit.

    ``slowed``: each request's send time and server, and the slow windows, when some window slows a whole JVM:
    a request reaching its server (send time plus its way out) inside such a window has its own delay multiplied
    by the window's factor (:meth:`Plan.jvm_scale`'s decision). That delay is the request's time in Netty, its
    (de)serialisation and its threads' waits for a core; the model cannot tell the server's share of it from
    the broker's, so all of it is slowed: an upper bound for that part.
    """
    latency = sc.cluster.network.latency_ms
    if isinstance(latency, Deterministic):  # draws nothing: one value, held once for every message
        delays = np.broadcast_to(np.float64(latency.value), (2 * requests,))
    else:
        delays = np.ascontiguousarray(latency.sample(rng, 2 * requests), dtype=float)
    extra = request_delays(sc, delay_rng, requests, columns)
    if extra is None:
        return delays
    if slowed is not None:
        sent, server, slow = slowed
        extra = extra * jvm_factors(sent + delays[0::2], server, slow.offsets, slow.start, slow.end, slow.jvm)
    out = np.array(delays, dtype=float)  # a writable copy (the deterministic latency is a broadcast view)
    out[1::2] += extra
    return out


def request_delays(sc: Scenario, rng: np.random.Generator, requests: int,
                   columns: np.ndarray | None = None) -> np.ndarray | None:
    """Each of ``requests`` server requests' own delay (``cluster.network.request_delay_ms``), in request order,
    from its own stream; ``None`` when it is zero (nothing drawn). Adaptive selection's live routing draws it
    one request at a time from the same stream (:class:`~workbench.sim.model.ClusterModel`).

    With kinds given their own (``request_delay_by_kind_ms``), every request draws one value of each side by side
    (:func:`delay_rows`) and takes its kind's (``columns``, per request): the stream is read the same whatever the
    queries' kinds, so the live routers, which do not know a request's kind before they route it, read it alike."""
    network = sc.cluster.network
    delay = network.request_delay_ms
    if len(network.request_delays) > 1:
        table = delay_rows(network.request_delays, rng, requests)
        chosen = np.zeros(requests, dtype=np.int64) if columns is None else columns
        picked: np.ndarray = table[np.arange(requests), chosen]
        return picked
    if isinstance(delay, Deterministic):
        return None if delay.value == 0 else np.full(requests, float(delay.value))
    return np.asarray(delay.sample(rng, requests), dtype=float)


#: Rows of side-by-side request delays drawn at a time by the live routers (both engines alike).
DELAY_ROWS = 4096


def delay_row_draws(delays: Sequence[Distribution], rng: np.random.Generator
                    ) -> tuple[Callable[[int], np.ndarray], int]:
    """What both engines' live routers buffer the side-by-side request delays with: a draw of ``n`` values (``n /
    len(delays)`` rows of :func:`delay_rows`, flattened) and its block, so they read ``rng`` alike."""
    k = len(delays)
    return (lambda n: delay_rows(delays, rng, n // k).ravel()), k * DELAY_ROWS


def delay_rows(delays: Sequence[Distribution], rng: np.random.Generator, rows: int) -> np.ndarray:
    """``rows`` requests' delays, one of each distribution side by side (``rows x len(delays)``), each column
    drawn in turn from ``rng``.

    >>> from workbench.distributions import Exponential
    >>> delay_rows((Deterministic(0.5), Exponential(2.0)), np.random.default_rng(1), 3).shape
    (3, 2)
    """
    return np.column_stack([np.full(rows, float(d.value)) if isinstance(d, Deterministic)
                            else np.asarray(d.sample(rng, rows), dtype=float) for d in delays]) \
        if delays else np.empty((rows, 0))
