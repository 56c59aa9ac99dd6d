"""The discrete-event model of one Pinot cluster, on SimPy.

Structure (PE §0): a query arrives at the broker, which routes it with Pinot's own instance selector
(choosing one replica of each segment), sends one request per server after the network delay, and
waits for every response or the timeout; then it merges (broker overhead) and replies. A server runs
a request's per-request overhead, then spreads the request's segments over at most
``tasks_per_query`` tasks that queue FCFS for its worker threads (cores). Pauses freeze a server: no
progress, no responses. A crashed server fails the requests it holds and those sent to it; the
broker stops routing to it until it recovers, as Pinot's broker does when the external view changes.

Why so few events: under FCFS a request's start and finish on a server are fixed the moment it
arrives (later arrivals cannot overtake it), and pauses and crashes are schedules drawn up front, so
the server's work is computed in closed form when the request is delivered (see
:mod:`workbench.sim.pauses`). SimPy still drives time: arrivals, deliveries, completions, crashes and
(with adaptive selection) responses are events, so feedback sees the order a task-by-task simulation
would.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Any, cast

import numpy as np
import pandas as pd
import simpy

from workbench.distributions import Deterministic
from workbench.pinot.cache.base import Cached
from workbench.pinot.cache.flight import Leader, Waiter
from workbench.pinot.routing.adaptive import AdaptiveConfig, ServerRoutingStatsManager, adaptive_server_selector
from workbench.scenario import Scenario
from workbench.scenario.schema import GCSpec
from workbench.sim.gc import pause_schedule
from workbench.sim.layout import Layout
from workbench.sim.pauses import PauseSchedule
from workbench.sim.planner import FULL_SCAN, Planner, QueryPlan, default_schema
from workbench.sim.result_cache import ModelResultCache, ModelSegmentCache
from workbench.sim.router import Router
from workbench.sim.service import ServiceModel, make_service_model
from workbench.sim.streams import Buffered, Streams

__all__ = ["ClusterModel", "ReplicationOutput", "effective_gc"]

_INF = float("inf")
#: What one server request yields: (response time at the broker, paused, queue wait, failed).
Outcome = tuple[float, bool, float, bool]


def crash_schedule(mtbf_ms: float | None, mttr_ms: float | None, rng: np.random.Generator,
                   horizon_ms: float) -> PauseSchedule:
    """Down intervals of one server: up for Exp(MTBF), down for Exp(MTTR), alternating."""
    if mtbf_ms is None or mttr_ms is None:
        return PauseSchedule.empty()
    intervals: list[tuple[float, float]] = []
    t = 0.0
    while True:
        start = t + float(rng.exponential(mtbf_ms))
        if start >= horizon_ms:
            return PauseSchedule.from_intervals(intervals)
        end = start + float(rng.exponential(mttr_ms))
        intervals.append((start, end))
        t = end


def effective_gc(scenario: Scenario) -> GCSpec:
    """The GC spec with the upsert metadata's heap added to the live heap.

    Bytes per key come from the JVM object-layout model of :mod:`workbench.pinot.heap`, for the
    schema's primary-key types (``LONG`` when no schema is given), the table's
    ``upsertConfig.hashFunction`` and a LONG comparison column.
    """
    gc = scenario.cluster.gc
    if gc.upsert_keys == 0:
        return gc
    from workbench.pinot.heap import upsert_bytes_per_key

    schema = scenario.schema or {}
    types = {f.get("name"): f.get("dataType", "LONG") for key in ("dimensionFieldSpecs", "metricFieldSpecs",
             "dateTimeFieldSpecs") for f in schema.get(key) or ()}
    pk_types = tuple(str(types.get(c, "LONG")) for c in schema.get("primaryKeyColumns") or ()) or ("LONG",)
    hash_function = str((scenario.table.upsert_config or {}).get("hashFunction", "NONE"))
    per_key = upsert_bytes_per_key(pk_types, hash_function, num_keys=gc.upsert_keys)
    return replace(gc, live_heap=gc.live_heap + per_key * gc.upsert_keys)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1000.0


@dataclass
class _Server:
    """A server's worker threads (as the times each becomes free), its pauses and its crashes."""

    cores: int
    pauses: PauseSchedule
    crashes: PauseSchedule
    free_at: list[float] = field(default_factory=list)
    busy_ms: float = 0.0
    requests: int = 0
    failed: int = 0
    _recoveries_seen: int = 0

    def __post_init__(self) -> None:
        self.free_at = [0.0] * self.cores

    def _forget_lost_work(self, now: float) -> None:
        """After a crash, threads restart empty at recovery: work that was in progress is lost."""
        done = bisect_right(self.crashes._e, now)
        if done > self._recoveries_seen:
            crash, recovery = self.crashes._s[done - 1], self.crashes._e[done - 1]
            self.free_at = [recovery if f > crash else f for f in self.free_at]
            heapq.heapify(self.free_at)
            self._recoveries_seen = done

    def execute(self, now: float, overhead: float, task_work: list[float]) -> tuple[float, bool, float, bool]:
        """Run one request arriving at ``now``: (response send time, paused, queue wait, failed).

        The request's tasks take the earliest-free worker threads in FCFS order; a task's end is its
        start plus its work, stretched by any pause in between. ``wait`` is the longest time one of
        its tasks queued. A request on a server that is down, or that goes down before the response
        is sent, fails at that moment.
        """
        crashes = self.crashes
        if crashes._s:
            if crashes.release(now) != now:
                self.failed += 1
                return now, False, 0.0, True
            self._forget_lost_work(now)
        pauses, free_at = self.pauses, self.free_at
        # Fast path: until the next pause begins, time is plain arithmetic (no look-ups).
        k = bisect_right(pauses._e, now) if pauses._s else 0
        next_pause = pauses._s[k] if k < len(pauses._s) else _INF
        ready = now + overhead
        if ready >= next_pause:
            ready = pauses.finish(now, overhead)
        done, busy, wait = ready, overhead, 0.0
        for work in task_work:
            free = heapq.heappop(free_at)
            if free > ready:
                wait = max(wait, free - ready)
                start = free
            else:
                start = ready
            end = start + work
            if end >= next_pause:
                end = pauses.finish(start, work)
            heapq.heappush(free_at, end)
            if end > done:
                done = end
            busy += work
        self.busy_ms += busy
        self.requests += 1
        paused = done >= next_pause
        send = pauses.release(done) if paused else done
        if crashes._s and crashes.intersects(now, send):
            crash_at = crashes._s[bisect_right(crashes._e, now)]
            self.failed += 1
            return crash_at, False, wait, True
        return send, paused, wait, False


@dataclass
class ReplicationOutput:
    """Raw arrays from one replication, before they become :class:`~workbench.sim.records.Result`."""

    arrival_ms: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    servers_queried: list[int] = field(default_factory=list)
    segments_queried: list[int] = field(default_factory=list)
    partial: list[bool] = field(default_factory=list)
    gc_delayed: list[bool] = field(default_factory=list)
    queue_wait_ms: list[float] = field(default_factory=list)
    segments_pruned: list[int] = field(default_factory=list)
    cache_hit: list[str] = field(default_factory=list)
    churn_events: int = 0
    in_flight_area: float = 0.0
    servers: list[_Server] = field(default_factory=list)


def _adaptive(scenario: Scenario, rng: np.random.Generator) -> tuple[Any, ServerRoutingStatsManager | None]:
    kind = scenario.cluster.broker.adaptive_server_selector
    if kind is None:
        return None, None
    config = AdaptiveConfig.from_broker_config({"pinot.broker.adaptive.server.selector.type": kind})
    stats = ServerRoutingStatsManager(config)
    return adaptive_server_selector(config, stats, rng), stats


@dataclass
class _Broker:
    """One broker: Pinot's routing (with its own adaptive stats, if any) and its own result cache."""

    router: Router
    stats: ServerRoutingStatsManager | None
    cache: ModelResultCache


class ClusterModel:
    """One replication of one scenario. Call :meth:`run` once.

    With several brokers, query ``i`` goes to broker ``i mod brokers`` (a load balancer's round
    robin), whose request counter is ``i div brokers``; each broker keeps its own adaptive stats and
    result cache, as Pinot brokers do.
    """

    def __init__(self, scenario: Scenario, layout: Layout, streams: Streams,
                 queries: pd.DataFrame | None = None) -> None:
        self.sc, self.layout, self.rng = scenario, layout, streams
        self.env = simpy.Environment()
        self.service: ServiceModel = make_service_model(scenario.service)
        self.horizon_ms = scenario.simulation.duration_s * 1000.0
        self.warmup_ms = scenario.simulation.warmup_s * 1000.0
        spec = scenario.cluster
        fail = spec.failures
        gc = effective_gc(scenario)
        self.servers = [
            _Server(spec.server.cores, pause_schedule(gc, spec.server, streams.gc[i], self.horizon_ms),
                    crash_schedule(_ms(fail.mtbf_s), _ms(fail.mttr_s), streams.failures[i], self.horizon_ms))
            for i in range(layout.num_servers)
        ]
        self.brokers = self._make_brokers()
        self.tasks_cap = spec.server.tasks_per_query
        latency = spec.network.latency_ms
        self.const_latency = isinstance(latency, Deterministic) and all(b.stats is None for b in self.brokers)
        self._latency = Buffered(lambda n: latency.sample(streams.network, n))
        draw = self.service.draw
        self._draws = None if draw is None else Buffered(lambda n: draw.sample(streams.service, n))
        self._cost: list[float] = [float(c) for c in self.service.segment_times(streams.service, layout.docs)]
        self.out = ReplicationOutput(servers=self.servers)
        self.queries = queries
        schema = scenario.schema or default_schema(scenario.table)
        self.planner = Planner(layout.segments, layout.docs, scenario.table, schema, layout.metadata)
        self._plan_cost: dict[int, dict[int, float]] = {}
        self._in_flight = 0
        self._last_change = self.warmup_ms
        self.segment_caches = [ModelSegmentCache(scenario, layout) for _ in self.servers]

    def _make_brokers(self) -> list[_Broker]:
        sc, brokers = self.sc, []
        shared: Router | None = None
        for _ in range(sc.cluster.brokers):
            adaptive, stats = _adaptive(sc, self.rng.routing)
            if stats is None:  # routing without feedback is a pure function of the request id: share it
                shared = shared or Router(self.layout, sc.table, sc.workload.query_options)
                router = shared
            else:
                router = Router(self.layout, sc.table, sc.workload.query_options, stats, adaptive)
            brokers.append(_Broker(router, stats, ModelResultCache(sc, self.layout, self.env)))
        return brokers

    # -- time accounting ----------------------------------------------------------------------------
    def _count(self, delta: int) -> None:
        now = self.env.now
        if now > self.warmup_ms:
            self.out.in_flight_area += self._in_flight * (now - max(self._last_change, self.warmup_ms))
            self._last_change = now
        self._in_flight += delta

    def _costs(self, plan: QueryPlan) -> dict[int, float] | list[float]:
        """Per-segment work of a plan under the cost model (docs scanned after the filter)."""
        if plan.docs_scanned is None:
            return self._cost
        cached = self._plan_cost.get(plan.key)
        if cached is None:
            assert plan.segments is not None
            times = self.service.segment_times(self.rng.service, np.asarray(plan.docs_scanned, dtype=float))
            cached = dict(zip(plan.segments, (float(t) for t in times), strict=True))
            self._plan_cost[plan.key] = cached
        return cached

    def _task_work(self, segments: list[int], plan: QueryPlan = FULL_SCAN, server: int = 0,
                   at: float = 0.0) -> list[float]:
        """Per-task work of one request: its segments dealt round-robin over at most ``tasks_cap`` tasks.

        A segment whose partial result is in the server's segment cache costs nothing.
        """
        if self._draws is not None:
            times = self._draws.take(len(segments))
        else:
            cost = self._costs(plan)
            times = [cost[i] for i in segments]
        cache = self.segment_caches[server]
        if cache.enabled and plan.query is not None:
            names = self.layout.segments
            times = [0.0 if cache.hit(plan.query, names[i], at) else t for i, t in zip(segments, times, strict=True)]
        tasks = self.tasks_cap
        if tasks >= len(times):
            return times
        return [sum(times[t::tasks]) for t in range(tasks)]

    def _net(self) -> float:
        return self._latency.next()

    def _deliver(self, at: float, server: int, segs: list[int], plan: QueryPlan, broker: _Broker,
                 sent: float) -> Outcome:
        """Execute a request delivered to ``server`` at ``at``; the response reaches the broker later."""
        send, paused, wait, failed = self.servers[server].execute(
            at, self.service.per_request_ms, self._task_work(segs, plan, server, at))
        back = send + self._net()
        if broker.stats is not None:
            self._report_response(broker.stats, server, back, sent)
        return back, paused, wait, failed

    def _report_response(self, stats: ServerRoutingStatsManager, server: int, back: float, sent: float) -> None:
        """Adaptive selection learns the latency when the response arrives (an event at that time)."""
        name = self.layout.servers[server]
        event = self.env.timeout(back - self.env.now)
        event.callbacks.append(lambda _: stats.record_response(name, back - sent, back))

    def _delayed(self, server: int, segs: list[int], plan: QueryPlan, broker: _Broker) -> simpy.events.ProcessGenerator:
        sent = self.env.now
        yield self.env.timeout(self._net())
        return self._deliver(self.env.now, server, segs, plan, broker, sent)

    # -- processes ----------------------------------------------------------------------------------
    def _query(self, query_id: int, plan: QueryPlan = FULL_SCAN) -> simpy.events.ProcessGenerator:
        env, arrival = self.env, self.env.now
        self._count(+1)
        broker = self.brokers[query_id % len(self.brokers)]
        leader = None
        if broker.cache.enabled and plan.query is not None:
            decision = broker.cache.begin(plan.query, plan.names or self.layout.segments)
            if isinstance(decision, Cached | Waiter):
                if isinstance(decision, Waiter):
                    yield broker.cache.wait(decision)
                yield env.timeout(self.sc.cluster.broker.overhead_ms)
                self._count(-1)
                kind = "broker" if isinstance(decision, Cached) else "singleflight"
                self._record(arrival, [], False, plan, kind)
                return
            leader = decision if isinstance(decision, Leader) else None
        routing, unavailable = broker.router.route(query_id // len(self.brokers), plan.names, plan.key)
        if broker.stats is not None:
            for server, _ in routing:
                broker.stats.record_submission(self.layout.servers[server], arrival)
        deadline = arrival + self.sc.cluster.broker.timeout_ms
        if self.const_latency:  # equal delays keep delivery order = send order: compute now
            outcomes = [self._deliver(env.now + self._net(), server, segs, plan, broker, arrival)
                        for server, segs in routing]
        else:
            events = [env.process(self._delayed(server, segs, plan, broker)) for server, segs in routing]
            yield env.all_of(events)
            outcomes = [cast(Outcome, e.value) for e in events]
        done = max((o[0] for o in outcomes), default=arrival)
        partial = done > deadline or unavailable > 0 or any(o[3] for o in outcomes)
        end = min(done, deadline) + self.sc.cluster.broker.overhead_ms
        yield env.timeout(end - env.now)
        if leader is not None:
            assert plan.query is not None
            broker.cache.complete(leader, plan.query, partial)
        self._count(-1)
        self._record(arrival, outcomes, partial, plan, "", routing)

    def _record(self, arrival: float, outcomes: list[Outcome], partial: bool, plan: QueryPlan, cache_hit: str,
                routing: list[tuple[int, list[int]]] | None = None) -> None:
        """One query's row (queries that arrived during the warm-up are not recorded)."""
        if arrival < self.warmup_ms:
            return
        o = self.out
        o.arrival_ms.append(arrival)
        o.latency_ms.append(self.env.now - arrival)
        o.servers_queried.append(len(routing or ()))
        o.segments_queried.append(sum(len(s) for _, s in routing or ()))
        o.partial.append(partial)
        o.gc_delayed.append(any(x[1] for x in outcomes))
        o.queue_wait_ms.append(max((x[2] for x in outcomes), default=0.0))
        o.segments_pruned.append(plan.pruned)
        o.cache_hit.append(cache_hit)

    def _replay(self, queries: pd.DataFrame) -> simpy.events.ProcessGenerator:
        """Queries at the log's arrival times, each planned (pruned) from its SQL."""
        plan = self.planner.plan
        for query_id, (arrival_s, sql) in enumerate(zip(queries["arrival_s"], queries["sql"], strict=True)):
            at = float(arrival_s) * 1000.0
            if at >= self.horizon_ms:
                return
            yield self.env.timeout(max(0.0, at - self.env.now))
            self.env.process(self._query(query_id, plan(str(sql))))

    def _arrivals(self) -> simpy.events.ProcessGenerator:
        mean_gap = 1000.0 / self.sc.workload.arrival.qps
        gaps = Buffered(lambda n: self.rng.arrivals.exponential(mean_gap, n))
        query_id = 0
        while True:
            yield self.env.timeout(gaps.next())
            if self.env.now >= self.horizon_ms:
                return
            self.env.process(self._query(query_id))
            query_id += 1

    def _health(self, server: int) -> simpy.events.ProcessGenerator:
        """Tell the broker's routing when a server goes down and comes back."""
        crashes = self.servers[server].crashes
        for start, end in zip(crashes._s, crashes._e, strict=True):
            yield self.env.timeout(start - self.env.now)
            self._set_health(server, False)
            yield self.env.timeout(end - self.env.now)
            self._set_health(server, True)

    def _churn(self, per_hour: float, event: str) -> simpy.events.ProcessGenerator:
        """Refresh uploads or reloads of random segments; every cache invalidates that segment."""
        rng, names = self.rng.routing, self.layout.segments
        mean_gap_ms = 3_600_000.0 / per_hour
        while True:
            yield self.env.timeout(float(rng.exponential(mean_gap_ms)))
            name = names[int(rng.integers(len(names)))]
            caches: list[Any] = [b.cache.cache for b in self.brokers if b.cache.enabled]
            caches += [c.cache for c in self.segment_caches if c.enabled]
            for cache in caches:
                getattr(cache, f"on_segment_{event}")(self.sc.table.table_name_with_type, name)
            self.out.churn_events += 1

    def _set_health(self, server: int, healthy: bool) -> None:
        for router in {id(b.router): b.router for b in self.brokers}.values():
            router.set_server_health(server, healthy)

    def run(self) -> ReplicationOutput:
        """Simulate ``[0, duration)``; queries still in flight at the end are not recorded."""
        self.env.process(self._arrivals() if self.queries is None else self._replay(self.queries))
        for i, server in enumerate(self.servers):
            if len(server.crashes):
                self.env.process(self._health(i))
        churn = self.sc.workload.churn
        for rate, event in ((churn.replace_per_hour, "replaced"), (churn.reload_per_hour, "reloaded")):
            if rate > 0:
                self.env.process(self._churn(rate, event))
        self.env.run(until=self.horizon_ms)
        self._count(0)
        return self.out
