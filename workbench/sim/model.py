"""The discrete-event model of one Pinot cluster, on SimPy.

Structure (PE §0): a query arrives at a broker, which routes it with Pinot's own instance selector
(choosing one replica of each segment), sends one request per server after the network delay, and
waits for every response or the timeout; then it merges (broker overhead) and replies. A server runs
a request's per-request overhead, then spreads the request's segments over at most
``tasks_per_query`` tasks that queue FCFS for its worker threads (:mod:`workbench.sim.server`).
Pauses freeze a server: no progress, no responses. A crashed server fails the requests it holds and
those sent to it; the broker stops routing to it until it recovers, as Pinot's broker does when the
external view changes.

The model is handed everything it uses: its SimPy environment, its random streams, and its parts
(:class:`Cluster`), each built from its own section of the scenario by :func:`workbench.sim.run.build_cluster`.
So a test can build two servers with known pauses and assert every latency by hand.

Why so few events: under FCFS a request's start and finish on a server are fixed the moment it
arrives, and pauses and crashes are schedules drawn up front, so the server's work is computed in
closed form when the request is delivered. SimPy still drives time: arrivals, deliveries, completions,
crashes and (with adaptive selection) responses are events, so feedback sees the order a task-by-task
simulation would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pandas as pd
import simpy

from workbench.distributions import Deterministic, Distribution
from workbench.pinot.cache.base import Cached
from workbench.pinot.cache.flight import Leader, Waiter
from workbench.pinot.routing.adaptive import ServerRoutingStatsManager
from workbench.scenario.schema import ChurnSpec
from workbench.sim.broker import Broker
from workbench.sim.caches import ModelSegmentCache
from workbench.sim.layout import Layout
from workbench.sim.planner import FULL_SCAN, Planner, QueryPlan
from workbench.sim.records import QueryRecords
from workbench.sim.server import RequestOutcome, Server
from workbench.sim.service import ServiceModel
from workbench.sim.streams import Buffered, Streams

__all__ = ["Arrivals", "Cluster", "ClusterModel", "Window"]


@dataclass(frozen=True)
class Window:
    """The simulated time ``[0, horizon_ms)`` and the warm-up ``[0, warmup_ms)`` left out of the records."""

    warmup_ms: float
    horizon_ms: float


@dataclass
class Cluster:
    """The model's parts: where segments live, the servers (with their segment caches) and the brokers.

    ``tasks_per_query`` caps the worker tasks one request's segments are spread over (PE §2.1).
    """

    layout: Layout
    servers: Sequence[Server]
    segment_caches: Sequence[ModelSegmentCache]
    brokers: Sequence[Broker]
    service: ServiceModel
    network: Distribution
    tasks_per_query: int


@dataclass
class Arrivals:
    """What arrives, and the segment churn during the run.

    Queries come from the first of: ``replay`` (a query log's ``arrival_s`` and ``sql``, each planned by
    ``planner`` with Pinot's pruners), ``at_ms`` (queries without a filter at these times, ms: a trace of
    arrival times only), or Poisson arrivals at ``qps`` of queries without a filter.
    """

    qps: float = 1.0
    replay: pd.DataFrame | None = None
    planner: Planner | None = None
    churn: ChurnSpec = field(default_factory=ChurnSpec)
    at_ms: Sequence[float] | None = None


class ClusterModel:
    """One replication of one cluster. Call :meth:`run` once, then read the records.

    With several brokers, query ``i`` goes to broker ``i mod brokers`` (a load balancer's round
    robin), whose request counter is ``i div brokers``; each broker keeps its own adaptive stats and
    result cache, as Pinot brokers do.
    """

    def __init__(self, env: simpy.Environment, streams: Streams, cluster: Cluster, arrivals: Arrivals,
                 window: Window) -> None:
        self.env, self.rng, self.cluster, self.arrivals, self.window = env, streams, cluster, arrivals, window
        self.layout = cluster.layout
        self.servers, self.brokers = list(cluster.servers), list(cluster.brokers)
        self.service = cluster.service
        network = cluster.network
        self.const_latency = isinstance(network, Deterministic) and all(b.stats is None for b in self.brokers)
        self._latency = Buffered(lambda n: network.sample(streams.network, n))
        draw = self.service.draw
        self._draws = None if draw is None else Buffered(lambda n: draw.sample(streams.service, n))
        self._cost: list[float] = [float(c) for c in self.service.segment_times(streams.service, self.layout.docs)]
        self._plan_cost: dict[int, dict[int, float]] = {}
        self.records = QueryRecords()
        self.churn_events = 0
        self.in_flight_area = 0.0
        self._in_flight = 0
        self._last_change = window.warmup_ms

    # -- time accounting ----------------------------------------------------------------------------
    def _count(self, delta: int) -> None:
        now = self.env.now
        if now > self.window.warmup_ms:
            self.in_flight_area += self._in_flight * (now - max(self._last_change, self.window.warmup_ms))
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

    def _task_work(self, segments: list[int], plan: QueryPlan, server: int, at: float) -> list[float]:
        """Per-task work of one request: its segments dealt round-robin over at most ``tasks_per_query``.

        A segment whose partial result is in the server's segment cache costs nothing.
        """
        if self._draws is not None:
            times = self._draws.take(len(segments))
        else:
            cost = self._costs(plan)
            times = [cost[i] for i in segments]
        cache = self.cluster.segment_caches[server]
        if cache.enabled and plan.query is not None:
            names = self.layout.segments
            times = [0.0 if cache.hit(plan.query, names[i], at) else t for i, t in zip(segments, times, strict=True)]
        tasks = self.cluster.tasks_per_query
        if tasks >= len(times):
            return times
        return [sum(times[t::tasks]) for t in range(tasks)]

    def _net(self) -> float:
        return self._latency.next()

    def _deliver(self, at: float, server: int, segs: list[int], plan: QueryPlan, broker: Broker,
                 sent: float) -> RequestOutcome:
        """Execute a request delivered to ``server`` at ``at``; the response reaches the broker later."""
        outcome = self.servers[server].execute(at, self.service.per_request_ms, self._task_work(segs, plan, server, at))
        back = outcome.response_at + self._net()
        if broker.stats is not None:
            self._report_response(broker.stats, server, back, sent)
        return RequestOutcome(back, outcome.paused, outcome.queue_wait, outcome.failed)

    def _report_response(self, stats: ServerRoutingStatsManager, server: int, back: float, sent: float) -> None:
        """Adaptive selection learns the latency when the response arrives (an event at that time)."""
        name = self.layout.servers[server]
        event = self.env.timeout(back - self.env.now)
        event.callbacks.append(lambda _: stats.record_response(name, back - sent, back))

    def _delayed(self, server: int, segs: list[int], plan: QueryPlan,
                 broker: Broker) -> simpy.events.ProcessGenerator:
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
                yield env.timeout(broker.spec.overhead_ms)
                self._count(-1)
                self._record(arrival, [], False, plan, "broker" if isinstance(decision, Cached) else "singleflight")
                return
            leader = decision if isinstance(decision, Leader) else None
        routing, unavailable = broker.router.route(query_id // len(self.brokers), plan.names, plan.key)
        if broker.stats is not None:
            for server, _ in routing:
                broker.stats.record_submission(self.layout.servers[server], arrival)
        deadline = arrival + broker.spec.timeout_ms
        if self.const_latency:  # equal delays keep delivery order = send order: compute now
            outcomes = [self._deliver(env.now + self._net(), server, segs, plan, broker, arrival)
                        for server, segs in routing]
        else:
            events = [env.process(self._delayed(server, segs, plan, broker)) for server, segs in routing]
            yield env.all_of(events)
            outcomes = [cast(RequestOutcome, e.value) for e in events]
        done = max((o.response_at for o in outcomes), default=arrival)
        partial = done > deadline or unavailable > 0 or any(o.failed for o in outcomes)
        end = min(done, deadline) + broker.spec.overhead_ms
        yield env.timeout(end - env.now)
        if leader is not None:
            assert plan.query is not None
            broker.cache.complete(leader, plan.query, partial)
        self._count(-1)
        self._record(arrival, outcomes, partial, plan, "", routing)

    def _record(self, arrival: float, outcomes: list[RequestOutcome], partial: bool, plan: QueryPlan,
                cache_hit: str, routing: list[tuple[int, list[int]]] | None = None) -> None:
        """One query's row (queries that arrived during the warm-up are not recorded)."""
        if arrival < self.window.warmup_ms:
            return
        r = self.records
        r.arrival_ms.append(arrival)
        r.latency_ms.append(self.env.now - arrival)
        r.servers_queried.append(len(routing or ()))
        r.segments_queried.append(sum(len(s) for _, s in routing or ()))
        r.partial.append(partial)
        r.gc_delayed.append(any(o.paused for o in outcomes))
        r.queue_wait_ms.append(max((o.queue_wait for o in outcomes), default=0.0))
        r.segments_pruned.append(plan.pruned)
        r.cache_hit.append(cache_hit)

    def _replay(self, queries: pd.DataFrame, planner: Planner) -> simpy.events.ProcessGenerator:
        """Queries at the log's arrival times, each planned (pruned) from its SQL."""
        for query_id, (arrival_s, sql) in enumerate(zip(queries["arrival_s"], queries["sql"], strict=True)):
            at = float(arrival_s) * 1000.0
            if at >= self.window.horizon_ms:
                return
            yield self.env.timeout(max(0.0, at - self.env.now))
            self.env.process(self._query(query_id, planner.plan(str(sql))))

    def _trace(self, times_ms: Sequence[float]) -> simpy.events.ProcessGenerator:
        """Queries without a filter at the given times (ms, non-decreasing)."""
        for query_id, at in enumerate(times_ms):
            if at >= self.window.horizon_ms:
                return
            yield self.env.timeout(max(0.0, at - self.env.now))
            self.env.process(self._query(query_id))

    def _poisson(self) -> simpy.events.ProcessGenerator:
        mean_gap = 1000.0 / self.arrivals.qps
        gaps = Buffered(lambda n: self.rng.arrivals.exponential(mean_gap, n))
        query_id = 0
        while True:
            yield self.env.timeout(gaps.next())
            if self.env.now >= self.window.horizon_ms:
                return
            self.env.process(self._query(query_id))
            query_id += 1

    def _health(self, server: int) -> simpy.events.ProcessGenerator:
        """Tell the broker's routing when a server goes down and comes back."""
        for start, end in self.servers[server].crashes.intervals():
            yield self.env.timeout(start - self.env.now)
            self._set_health(server, False)
            yield self.env.timeout(end - self.env.now)
            self._set_health(server, True)

    def _churn(self, per_hour: float, event: str) -> simpy.events.ProcessGenerator:
        """Refresh uploads or reloads of random segments (the churn stream); every cache invalidates it."""
        rng, names = self.rng.churn, self.layout.segments
        mean_gap_ms = 3_600_000.0 / per_hour
        while True:
            yield self.env.timeout(float(rng.exponential(mean_gap_ms)))
            name = names[int(rng.integers(len(names)))]
            for broker in self.brokers:
                broker.cache.on_segment(event, name)
            for cache in self.cluster.segment_caches:
                cache.on_segment(event, name)
            self.churn_events += 1

    def _set_health(self, server: int, healthy: bool) -> None:
        for router in {id(b.router): b.router for b in self.brokers}.values():
            router.set_server_health(server, healthy)

    def run(self) -> None:
        """Simulate ``[0, horizon)``; queries still in flight at the end are not recorded."""
        a = self.arrivals
        if a.replay is not None:
            if a.planner is None:
                raise ValueError("replayed arrivals need a planner (the table's pruners on the layout)")
            self.env.process(self._replay(a.replay, a.planner))
        elif a.at_ms is not None:
            self.env.process(self._trace(a.at_ms))
        else:
            self.env.process(self._poisson())
        for i, server in enumerate(self.servers):
            if server.crashes:
                self.env.process(self._health(i))
        for rate, event in ((a.churn.replace_per_hour, "replaced"), (a.churn.reload_per_hour, "reloaded")):
            if rate > 0:
                self.env.process(self._churn(rate, event))
        self.env.run(until=self.window.horizon_ms)
        self._count(0)

    # -- records ------------------------------------------------------------------------------------
    def server_rows(self, replication: int) -> list[dict[str, Any]]:
        """One ``servers`` row per server (columns in :data:`~workbench.sim.records.SERVER_COLUMNS`)."""
        horizon = self.window.horizon_ms
        return [
            {"replication": replication, "server": s.name, "requests": s.requests, "busy_ms": s.busy_ms,
             "cores": s.cores, "utilisation": s.busy_ms / (s.cores * horizon), "failed_requests": s.failed,
             "segment_cache_hits": cache.hits, "paused_ms": s.pauses.overlap(0.0, horizon)}
            for s, cache in zip(self.servers, self.cluster.segment_caches, strict=True)
        ]

    def pause_rows(self, replication: int) -> list[dict[str, Any]]:
        """One ``gc_pauses`` row per pause of every server."""
        return [{"replication": replication, "server": s.name, "start_s": start / 1000.0, "duration_ms": end - start}
                for s in self.servers for start, end in s.pauses.intervals()]

    def failure_rows(self, replication: int) -> list[dict[str, Any]]:
        """One ``failures`` row per crash of every server (down and up times, s)."""
        return [{"replication": replication, "server": s.name, "down_s": down / 1000.0, "up_s": up / 1000.0}
                for s in self.servers for down, up in s.crashes.intervals()]

    def window_row(self, replication: int) -> dict[str, Any]:
        """The ``windows`` row: the measured window (s) and the time-average queries in flight."""
        window_ms = self.window.horizon_ms - self.window.warmup_ms
        return {"replication": replication, "window_s": window_ms / 1000.0,
                "mean_in_flight": self.in_flight_area / window_ms}
