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
query and routing order: out, then back), ``churn`` (replace events, then reload events), and per
server ``gc`` and ``failures``. With adaptive server selection routing depends on feedback, so the plan
holds no requests (``routed`` is False) and the SimPy engine routes live, drawing network delays as
messages are sent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from workbench.pinot.execution_config import query_timeout_ms
from workbench.scenario import Scenario
from workbench.sim.failures import crash_schedule
from workbench.sim.gc import Allocation, ServerHeap, server_gc
from workbench.sim.layout import Layout
from workbench.sim.memory import Memory, server_memory
from workbench.sim.pauses import PauseSchedule
from workbench.sim.planner import FULL_SCAN, Planner, QueryPlan, result_rows
from workbench.sim.router import Router
from workbench.sim.service import ServiceModel, make_service_model
from workbench.sim.streams import Streams

__all__ = ["Plan", "build_plan", "expand", "query_options"]

_BLOCK = 16_384


@dataclass(frozen=True)
class Plan:
    """One replication's timing-free decisions (times in ms, work in ms of one core).

    Queries are in arrival order. Each query's kept segments (``query_segments`` CSR into ``segment`` and
    ``work``) are its plan's segments in plan order; each request (``query_requests`` CSR, routing order)
    lists positions into its query's segments (``request_segments`` CSR into ``request_position``).
    """

    arrival_ms: np.ndarray
    plan_index: np.ndarray
    broker: np.ndarray
    timeout_ms: np.ndarray
    group_by: np.ndarray
    secondary: np.ndarray
    execution_threads: np.ndarray
    query_segments: np.ndarray
    segment: np.ndarray
    work: np.ndarray
    routed: bool
    unavailable: np.ndarray
    query_requests: np.ndarray
    server: np.ndarray
    request_segments: np.ndarray
    request_position: np.ndarray
    prepare: np.ndarray
    merge: np.ndarray
    out_delay: np.ndarray
    back_delay: np.ndarray
    rows: np.ndarray
    plans: tuple[QueryPlan, ...]
    heaps: tuple[ServerHeap, ...]
    crashes: tuple[PauseSchedule, ...]
    #: Per server: its work is stretched by this (the share of cores ZGC's concurrent threads take).
    cpu_scale: np.ndarray
    #: Documents each run of a query's segment scans (parallel to ``segment`` and ``work``).
    docs: np.ndarray
    churn_ms: np.ndarray
    churn_segment: np.ndarray
    churn_event: tuple[str, ...]

    @property
    def num_queries(self) -> int:
        return len(self.arrival_ms)

    @property
    def pauses(self) -> tuple[PauseSchedule, ...]:
        """Each server's stop-the-world pauses."""
        return tuple(h.pauses for h in self.heaps)

    def query_work(self, query: int) -> tuple[np.ndarray, np.ndarray]:
        """Segment indices and their work for one query (its kept segments, in plan order)."""
        a, b = self.query_segments[query], self.query_segments[query + 1]
        return self.segment[a:b], self.work[a:b]

    def request_work(self, request: int) -> tuple[np.ndarray, np.ndarray]:
        """Segment indices and work of one request (routed plans), in routing order."""
        query = int(self.request_query[request])
        segments, work = self.query_work(query)
        positions = self.request_position[self.request_segments[request]:self.request_segments[request + 1]]
        return segments[positions], work[positions]

    @cached_property
    def request_query(self) -> np.ndarray:
        """The query of each request."""
        counts = np.diff(self.query_requests)
        return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


def query_options(plan: QueryPlan, base: Mapping[str, str]) -> Mapping[str, str]:
    """The options a query carries: the workload's, overridden by its own ``SET``/``OPTION``."""
    if plan.query is None or not plan.query.options:
        return base
    return {**base, **dict(plan.query.options)}


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() == "true"


def _int_option(value: str | None) -> int:
    try:
        return int(value) if value is not None else -1
    except ValueError:
        return -1


def _poisson_times(rng: np.random.Generator, qps: float, horizon_ms: float) -> np.ndarray:
    """Arrival times of a Poisson process, accumulated gap by gap as the SimPy engine's clock would."""
    mean_gap = 1000.0 / qps
    chunks: list[np.ndarray] = []
    last = 0.0
    while True:
        times = np.cumsum(np.concatenate(([last], rng.exponential(mean_gap, _BLOCK))))[1:]
        keep = times[times < horizon_ms]
        chunks.append(keep)
        if len(keep) < _BLOCK:
            return np.concatenate(chunks)
        last = float(times[-1])


def _replay_times(arrival_s: np.ndarray, horizon_ms: float) -> np.ndarray:
    """A log's arrival times as the engines' clock reaches them: ``t = t + max(0, at - t)``, until the horizon."""
    out: list[float] = []
    t = 0.0
    for at in (float(a) * 1000.0 for a in arrival_s):
        if at >= horizon_ms:
            break
        t = t + max(0.0, at - t)
        out.append(t)
    return np.asarray(out, dtype=float)


def _trace_times(times_ms: Sequence[float], horizon_ms: float) -> np.ndarray:
    out: list[float] = []
    t = 0.0
    for at in times_ms:
        if at >= horizon_ms:
            break
        t = t + max(0.0, at - t)
        out.append(t)
    return np.asarray(out, dtype=float)


def _churn(rng: np.random.Generator, per_hour: float, segments: int, horizon_ms: float) -> list[tuple[float, int]]:
    """Events of one Poisson churn process: a gap, then the segment, drawn alternately."""
    if per_hour <= 0:
        return []
    events: list[tuple[float, int]] = []
    t, mean_gap = 0.0, 3_600_000.0 / per_hour
    while True:
        t = t + float(rng.exponential(mean_gap))
        if t >= horizon_ms:
            return events
        events.append((t, int(rng.integers(segments))))


@dataclass
class _Queries:
    arrival_ms: np.ndarray
    plan_index: np.ndarray
    plans: list[QueryPlan]


def _queries(sc: Scenario, layout: Layout, streams: Streams, horizon_ms: float, replay: pd.DataFrame | None,
             planner: Planner | None, at_ms: Sequence[float] | None) -> _Queries:
    plans: list[QueryPlan] = [FULL_SCAN]
    if replay is not None:
        assert planner is not None
        times = _replay_times(replay["arrival_s"].to_numpy(), horizon_ms)
        codes, texts = pd.factorize(replay["sql"].iloc[:len(times)].astype(str), sort=False)
        index: dict[int, int] = {}
        of_text = np.empty(len(texts), dtype=np.int32)
        for k, sql in enumerate(texts):
            p = planner.plan(str(sql))
            if p.key not in index:
                index[p.key] = len(plans)
                plans.append(p)
            of_text[k] = index[p.key]
        return _Queries(times, of_text[codes].astype(np.int32), plans)
    times = _trace_times(at_ms, horizon_ms) if at_ms is not None else _poisson_times(
        streams.arrivals, sc.workload.arrival.qps, horizon_ms)
    return _Queries(times, np.zeros(len(times), dtype=np.int32), plans)


def _segment_costs(service: ServiceModel, plan: QueryPlan, layout: Layout
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A plan's kept segments (layout indices, plan order), the cost model's mean time of each, and the
    documents each scans."""
    if plan.segments is None:
        segments = np.arange(len(layout.segments), dtype=np.int32)
        docs = np.asarray(layout.docs, dtype=float)
    else:
        segments = np.asarray(plan.segments, dtype=np.int32)
        docs = np.asarray(plan.docs_scanned, dtype=float)
    means = service.per_segment_ms + docs * (service.ns_per_doc * 1e-6) if service.draw is None else docs * 0.0
    return segments, means, docs


def expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For rows with ``counts`` items each: the CSR offsets, each item's row, and its position in its row."""
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    row = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    return offsets, row, np.arange(int(offsets[-1]), dtype=np.int64) - offsets[row]


def _work(queries: _Queries, service: ServiceModel, layout: Layout, rng: np.random.Generator
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every query's kept segments, the documents each scans and the work of each run, drawn in query order."""
    per_plan = [_segment_costs(service, p, layout) for p in queries.plans]
    plan_n = np.array([len(segs) for segs, _, _ in per_plan], dtype=np.int64)
    plan_start = np.concatenate(([0], np.cumsum(plan_n)))[:-1]
    plan_seg = np.concatenate([segs for segs, _, _ in per_plan]).astype(np.int32)
    plan_mean = np.concatenate([means for _, means, _ in per_plan]).astype(float)
    plan_docs = np.concatenate([docs for _, _, docs in per_plan]).astype(float)
    offsets, row, local = expand(plan_n[queries.plan_index])
    idx = plan_start[queries.plan_index[row]] + local
    segment, means, docs = plan_seg[idx], plan_mean[idx], plan_docs[idx]
    total = int(offsets[-1])
    if service.draw is not None:
        work = service.draw.sample(rng, total) if total else np.empty(0)
    elif service.variability > 0 and total:
        sigma = service.variability
        work = means * rng.lognormal(-sigma * sigma / 2.0, sigma, total)
    else:
        work = means
    return offsets, segment, docs, np.asarray(work, dtype=float)


def _health_events(crashes: Sequence[PauseSchedule]) -> list[tuple[float, int, bool]]:
    events = [(t, s, up) for s, c in enumerate(crashes) for start, end in c.intervals()
              for t, up in ((start, False), (end, True))]
    events.sort(key=lambda e: (e[0], e[1]))
    return events


@dataclass
class _Routes:
    """Routing templates and, per query, which template it uses (request CSR built from them)."""

    template: np.ndarray  # per query
    unavailable: np.ndarray  # per template
    server: np.ndarray  # per template request
    positions: list[np.ndarray]  # per template request: positions in the plan's segment list
    request_start: np.ndarray  # per template: first template request
    requests: np.ndarray  # per template: how many
    plan: np.ndarray  # per template: its query plan


def _route(sc: Scenario, layout: Layout, queries: _Queries, crashes: Sequence[PauseSchedule]) -> _Routes:
    """Pinot's routing of every query (request id = its broker's counter), around servers that are down.

    Without adaptive feedback a route depends only on the query's plan, its request id modulo the
    replica counts and which servers are up, so each distinct combination is routed once.
    """
    router = Router(layout, sc.table, sc.workload.query_options, broker_config=sc.cluster.broker.config)
    health = _health_events(crashes)
    times = np.array([h[0] for h in health], dtype=float)
    epoch = np.searchsorted(times, queries.arrival_ms, side="right")
    residue = (np.arange(len(queries.arrival_ms), dtype=np.int64) // sc.cluster.brokers) % router.period
    keys = np.stack([epoch, queries.plan_index.astype(np.int64), residue], axis=1) if len(epoch) else \
        np.zeros((0, 3), dtype=np.int64)
    combos, template = np.unique(keys, axis=0, return_inverse=True)
    servers: list[int] = []
    positions: list[np.ndarray] = []
    unavailable, request_start, requests = [], [], []
    applied = 0
    lookups: dict[int, dict[int, int]] = {}
    for e, p, res in combos.tolist():  # sorted by epoch: health changes are applied in time order
        while applied < e:
            router.set_server_health(health[applied][1], health[applied][2])
            applied += 1
        plan = queries.plans[p]
        route, missing = router.route(res, plan.names, plan.key)
        lookup = lookups.get(p)
        if lookup is None:
            segs = plan.segments if plan.segments is not None else range(len(layout.segments))
            lookup = lookups[p] = {int(seg): i for i, seg in enumerate(segs)}
        request_start.append(len(servers))
        requests.append(len(route))
        unavailable.append(missing)
        for server, segs in route:
            servers.append(server)
            positions.append(np.fromiter((lookup[seg] for seg in segs), dtype=np.int64, count=len(segs)))
    return _Routes(np.asarray(template, dtype=np.int64).reshape(-1), np.asarray(unavailable, dtype=np.int32),
                   np.asarray(servers, dtype=np.int32), positions, np.asarray(request_start, dtype=np.int64),
                   np.asarray(requests, dtype=np.int64), combos[:, 1].astype(np.int64))


def build_plan(sc: Scenario, layout: Layout, streams: Streams, *, horizon_ms: float,
               replay: pd.DataFrame | None = None, planner: Planner | None = None,
               at_ms: Sequence[float] | None = None, memory: Memory | None = None) -> Plan:
    """Draw one replication's plan from ``streams`` (see the module docstring for the order).

    ``memory``: each server's long-lived heap (:func:`~workbench.sim.memory.server_memory`, computed once
    per run); by default the scenario's own, without a workload directory."""
    spec = sc.cluster
    fail = spec.failures
    mtbf = None if fail.mtbf_s is None else fail.mtbf_s * 1000.0
    mttr = None if fail.mttr_s is None else fail.mttr_s * 1000.0
    down = set(fail.down)
    crashes = tuple(PauseSchedule.from_intervals([(0.0, horizon_ms)]) if name in down
                    else crash_schedule(mtbf, mttr, streams.failures[i], horizon_ms)
                    for i, name in enumerate(layout.servers))
    queries = _queries(sc, layout, streams, horizon_ms, replay, planner, at_ms)
    service = make_service_model(sc.service)
    query_segments, segment, docs, work = _work(queries, service, layout, streams.service)
    base = {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in sc.workload.query_options.items()}
    per_plan = [query_options(p, base) for p in queries.plans]
    table_timeout = sc.table.query_timeout_ms
    timeout = np.array([query_timeout_ms(o, table_timeout, spec.broker.query) for o in per_plan])
    group_by = np.array([p.query is not None and bool(p.query.group_by) for p in queries.plans])
    secondary = np.array([_truthy(o.get("isSecondaryWorkload")) for o in per_plan])
    threads = np.array([_int_option(o.get("maxExecutionThreads")) for o in per_plan], dtype=np.int32)
    pi = queries.plan_index
    churn = sorted([(t, s, "replaced") for t, s in _churn(streams.churn, sc.workload.churn.replace_per_hour,
                                                            len(layout.segments), horizon_ms)]
                   + [(t, s, "reloaded") for t, s in _churn(streams.churn, sc.workload.churn.reload_per_hour,
                                                            len(layout.segments), horizon_ms)])
    common: dict[str, Any] = dict(
        arrival_ms=queries.arrival_ms, plan_index=pi, broker=(np.arange(len(pi)) % spec.brokers).astype(np.int32),
        timeout_ms=timeout[pi], group_by=group_by[pi], secondary=secondary[pi], execution_threads=threads[pi],
        query_segments=query_segments, segment=segment, work=work, docs=docs, plans=tuple(queries.plans),
        heaps=(), crashes=crashes, cpu_scale=np.ones(layout.num_servers),
        churn_ms=np.array([c[0] for c in churn], dtype=float),
        churn_segment=np.array([c[1] for c in churn], dtype=np.int32), churn_event=tuple(c[2] for c in churn))
    if spec.broker.adaptive_selection:
        empty = np.empty(0)
        plan = Plan(routed=False, unavailable=np.zeros(len(pi), dtype=np.int32),
                    query_requests=np.zeros(len(pi) + 1, dtype=np.int64), server=empty.astype(np.int32),
                    request_segments=np.zeros(1, dtype=np.int64), request_position=empty.astype(np.int64),
                    prepare=empty, merge=empty, out_delay=empty, back_delay=empty, rows=empty.astype(np.int64),
                    **common)
    else:
        plan = _with_requests(common, _route(sc, layout, queries, crashes), queries, service, layout,
                              streams.network, sc)
    return _with_heaps(plan, sc, layout, streams, horizon_ms, memory or server_memory(sc, layout, None))


def _loads(sc: Scenario, layout: Layout, plan: Plan) -> list[Allocation]:
    """What each server allocates: per request delivered to it, ``bytes_per_request`` plus ``bytes_per_doc``
    per document it scans, at its delivery (in delivery order). With live (adaptive) routing the requests
    are not known in advance: each query's allocation is then spread evenly over the servers."""
    gc, n = sc.cluster.gc, layout.num_servers
    if not plan.routed:
        counts = np.diff(plan.query_segments)
        per_query = (gc.bytes_per_request * np.minimum(counts, n)
                     + gc.bytes_per_doc * np.add.reduceat(plan.docs, plan.query_segments[:-1]) * (counts > 0)) / n \
            if len(plan.docs) else np.zeros(plan.num_queries)
        return [Allocation(plan.arrival_ms, np.asarray(per_query, dtype=float)) for _ in range(n)]
    req_query = plan.request_query
    flat = plan.query_segments[req_query][np.repeat(np.arange(len(req_query)), np.diff(plan.request_segments))] \
        + plan.request_position
    docs = np.bincount(np.repeat(np.arange(len(req_query)), np.diff(plan.request_segments)), weights=plan.docs[flat],
                       minlength=len(req_query))
    delivered = plan.arrival_ms[req_query] + plan.out_delay
    allocated = gc.bytes_per_request + gc.bytes_per_doc * docs
    loads = []
    for s in range(n):
        mine = np.flatnonzero(plan.server == s)
        mine = mine[np.argsort(delivered[mine], kind="stable")]
        loads.append(Allocation(delivered[mine], allocated[mine]))
    return loads


def _with_heaps(plan: Plan, sc: Scenario, layout: Layout, streams: Streams, horizon_ms: float,
                memory: Memory) -> Plan:
    """Each server's GC over the run (from its own GC stream) and the CPU its concurrent threads take."""
    gc = sc.cluster.gc
    driven = gc.collector in ("g1", "zgc") and gc.allocation_rate is None
    loads: list[Allocation | None] = list(_loads(sc, layout, plan)) if driven else [None] * layout.num_servers
    heaps = tuple(server_gc(gc, sc.cluster.server.heap, memory.servers[i], streams.gc[i], horizon_ms, loads[i],
                            sc.cluster.server.cores) for i in range(layout.num_servers))
    scale = np.array([1.0 / (1.0 - min(h.cpu_share, 0.9)) for h in heaps])
    return dataclasses.replace(plan, heaps=heaps, cpu_scale=scale)


def _with_requests(common: dict[str, Any], routes: _Routes, queries: _Queries, service: ServiceModel,
                   layout: Layout, rng: np.random.Generator, sc: Scenario) -> Plan:
    """The requests of routed queries: servers, segment positions, runner work, delays and result rows."""
    t_nseg = np.array([len(x) for x in routes.positions], dtype=np.int64)
    t_pos_start = np.concatenate(([0], np.cumsum(t_nseg)))[:-1]
    t_pos = np.concatenate(routes.positions) if routes.positions else np.empty(0, dtype=np.int64)
    t_rows = _template_rows(routes, queries, t_pos, t_pos_start, t_nseg, layout)
    tid = routes.template
    query_requests, request_query, local = expand(routes.requests[tid] if len(tid) else np.zeros(0, np.int64))
    treq = routes.request_start[tid[request_query]] + local
    nseg = t_nseg[treq]
    request_segments, seg_request, seg_local = expand(nseg)
    request_position = t_pos[t_pos_start[treq[seg_request]] + seg_local]
    n = len(treq)
    group_by = common["group_by"][request_query]
    merge_each = service.merge_ms_per_segment
    work = common["work"]
    if merge_each > 0 and n:  # group-by workers upsert into one shared table: the merge is theirs
        seg_group_by = np.repeat(common["group_by"], np.diff(common["query_segments"]))
        work = np.where(seg_group_by, work + merge_each, work)
    delays = service_delays(sc, rng, n)
    common = {**common, "work": work}
    return Plan(routed=True, unavailable=routes.unavailable[tid] if len(tid) else np.zeros(0, np.int32),
                query_requests=query_requests, server=routes.server[treq], request_segments=request_segments,
                request_position=request_position, prepare=np.full(n, service.per_request_ms),
                merge=np.where(group_by, 0.0, merge_each * nseg), out_delay=delays[0::2], back_delay=delays[1::2],
                rows=t_rows[treq], **common)


def _template_rows(routes: _Routes, queries: _Queries, t_pos: np.ndarray, t_pos_start: np.ndarray,
                   t_nseg: np.ndarray, layout: Layout) -> np.ndarray:
    """Rows each template request's server returns (an estimate from the plan, PE §5)."""
    rows = np.empty(len(routes.server), dtype=np.int64)
    for t, p in enumerate(routes.plan.tolist()):
        plan = queries.plans[p]
        docs = (np.asarray(plan.docs_scanned, dtype=float) if plan.docs_scanned is not None
                else np.asarray(layout.docs, dtype=float))
        for r in range(int(routes.request_start[t]), int(routes.request_start[t] + routes.requests[t])):
            pos = t_pos[t_pos_start[r]:t_pos_start[r] + t_nseg[r]]
            rows[r] = result_rows(plan.query, float(docs[pos].sum()))
    return rows


def service_delays(sc: Scenario, rng: np.random.Generator, requests: int) -> np.ndarray:
    """``2 x requests`` network delays: for each request its way out, then its way back."""
    return np.asarray(sc.cluster.network.latency_ms.sample(rng, 2 * requests), dtype=float)
