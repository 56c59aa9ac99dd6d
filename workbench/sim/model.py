"""The discrete-event model of one Pinot cluster, on SimPy: the brokers' side of every query.

Structure (PE §0, §4-§5): a query arrives at a broker, which checks its result cache, routes the query
with Pinot's own instance selector (one replica of each segment), works out the query's timeout
(query option ``timeoutMs``, else the table's ``queryConfig.timeoutMs``, else the broker default), and
sends one request per server carrying that timeout. The servers (:mod:`workbench.sim.server`, each
driven by :mod:`workbench.sim.driver`) schedule and execute their requests as Pinot does. The broker
waits for every response, a failed channel, or the deadline (:mod:`workbench.sim.gather`), then
reduces what arrived on one of its cores and replies with the QueryErrorCodes of what went wrong.

The model is handed everything it uses: its SimPy environment, its random streams, and its parts
(:class:`Cluster`), each built from its own section of the scenario by
:func:`workbench.sim.run.build_cluster`. So a test can build servers with known pauses and assert
every latency by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import simpy

from workbench.distributions import Distribution
from workbench.pinot.cache.base import Cached
from workbench.pinot.cache.flight import Leader, Waiter
from workbench.pinot.execution_config import query_timeout_ms
from workbench.scenario.schema import ChurnSpec
from workbench.sim.broker import Broker
from workbench.sim.caches import ModelSegmentCache
from workbench.sim.driver import ServerDriver
from workbench.sim.gather import Gather, error_codes
from workbench.sim.layout import Layout
from workbench.sim.planner import FULL_SCAN, Planner, QueryPlan, result_rows
from workbench.sim.records import QueryRecords
from workbench.sim.server import PinotServer, Request, Response
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

    ``query_options`` are the Pinot query options every query carries (a query's own ``SET``/``OPTION``
    wins); ``table_timeout_ms`` is the table config's ``queryConfig.timeoutMs``.
    """

    layout: Layout
    servers: Sequence[PinotServer]
    segment_caches: Sequence[ModelSegmentCache]
    brokers: Sequence[Broker]
    service: ServiceModel
    network: Distribution
    query_options: Mapping[str, str] = field(default_factory=dict)
    table_timeout_ms: float | None = None


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


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() == "true"


def _int_option(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


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
        self.drivers = [ServerDriver(env, i, s, self._on_response) for i, s in enumerate(self.servers)]
        network = cluster.network
        self._latency = Buffered(lambda n: network.sample(streams.network, n))
        draw = self.service.draw
        self._draws = None if draw is None else Buffered(lambda n: draw.sample(streams.service, n))
        self._cost: list[float] = [float(c) for c in self.service.segment_times(streams.service, self.layout.docs)]
        self._plan_cost: dict[int, dict[int, float]] = {}
        self._waiting: dict[int, Gather] = {}
        self._next_rid = 0
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

    # -- what a request asks of a server -------------------------------------------------------------
    def _costs(self, plan: QueryPlan) -> dict[int, float] | list[float]:
        """Per-segment worker work of a plan under the cost model (docs scanned after the filter)."""
        if plan.docs_scanned is None:
            return self._cost
        cached = self._plan_cost.get(plan.key)
        if cached is None:
            assert plan.segments is not None
            times = self.service.segment_times(self.rng.service, np.asarray(plan.docs_scanned, dtype=float))
            cached = dict(zip(plan.segments, (float(t) for t in times), strict=True))
            self._plan_cost[plan.key] = cached
        return cached

    def _segment_work(self, segments: list[int], plan: QueryPlan, server: int, at: float) -> list[float]:
        """Worker work of each of the request's segments; a segment in the server's segment cache costs nothing."""
        if self._draws is not None:
            times = self._draws.take(len(segments))
        else:
            cost = self._costs(plan)
            times = self.service.vary(self.rng.service, [cost[i] for i in segments])
        cache = self.cluster.segment_caches[server]
        if cache.enabled and plan.query is not None:
            names = self.layout.segments
            times = [0.0 if cache.hit(plan.query, names[i], at) else t for i, t in zip(segments, times, strict=True)]
        return times

    def _request(self, server: int, segments: list[int], plan: QueryPlan, options: Mapping[str, str],
                 timeout_ms: float) -> Request:
        """The request a server receives now: its segments' work, the runner's work, and the broker's timeout."""
        group_by = plan.query is not None and bool(plan.query.group_by)
        work = self._segment_work(segments, plan, server, self.env.now)
        merge = self.service.merge_ms_per_segment
        if group_by and merge > 0:  # group-by workers upsert into one shared table: the merge is theirs
            work = [w + merge for w in work]
        rid = self._next_rid
        self._next_rid += 1
        return Request(rid, self.env.now, timeout_ms, self.service.per_request_ms,
                       0.0 if group_by else merge * len(segments), work, group_by=group_by,
                       secondary=_truthy(options.get("isSecondaryWorkload")),
                       execution_threads=_int_option(options.get("maxExecutionThreads")))

    def _send(self, requests: list[tuple[int, Request]], gather: Gather) -> None:
        """Each request travels to its server (one network delay each) and is delivered there; requests with
        the same delay are delivered by one event, in send order."""
        by_delay: dict[float, list[tuple[int, Request]]] = {}
        for server, request in requests:
            self._waiting[request.rid] = gather
            by_delay.setdefault(self._latency.next(), []).append((server, request))
        for delay, batch in by_delay.items():
            self.env.timeout(delay).callbacks.append(self._deliverer(batch))

    def _deliverer(self, batch: list[tuple[int, Request]]) -> Callable[[simpy.Event], None]:
        def deliver(_: simpy.Event) -> None:
            for server, request in batch:
                self.drivers[server].deliver(request)
        return deliver

    def _on_response(self, server: int, response: Response) -> None:
        """A server sent ``response``: it reaches the waiting broker one network delay later."""
        gather = self._waiting.pop(response.rid, None)
        if gather is not None:
            gather.sent_back(server, response, response.at + self._latency.next())

    # -- processes ----------------------------------------------------------------------------------
    def _options(self, plan: QueryPlan) -> Mapping[str, str]:
        if plan.query is None or not plan.query.options:
            return self.cluster.query_options
        return {**self.cluster.query_options, **dict(plan.query.options)}

    def _reduce(self, broker: Broker, servers: int, rows: int) -> simpy.events.ProcessGenerator:
        """The broker's own work on one of its cores (waiting for a free one first)."""
        with broker.slots.request() as slot:
            yield slot
            yield self.env.timeout(broker.reduce_ms(servers, rows))

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
                yield from self._reduce(broker, 0, 0)
                self._count(-1)
                self._record(arrival, None, "", plan, "broker" if isinstance(decision, Cached) else "singleflight")
                return
            leader = decision if isinstance(decision, Leader) else None
        options = self._options(plan)
        timeout = query_timeout_ms(options, self.cluster.table_timeout_ms, broker.spec.query)
        routing, unavailable = broker.router.route(query_id // len(self.brokers), plan.names, plan.key)
        names = self.layout.servers
        if broker.stats is not None:
            for server, _ in routing:
                broker.stats.record_submission(names[server], arrival)
        gather = Gather(env, [s for s, _ in routing], [names[s] for s, _ in routing], arrival, timeout, broker.stats)
        self._send([(server, self._request(server, segs, plan, options, timeout)) for server, segs in routing], gather)
        yield gather.done
        gather.close(env.now)
        codes = gather.codes(unavailable)
        ok = [s for s in gather.answered if gather.responses[s].code == 0]
        rows = sum(self._rows(plan, segs) for s, segs in routing if s in ok)
        yield from self._reduce(broker, len(gather.answered), rows)
        if leader is not None:
            assert plan.query is not None
            broker.cache.complete(leader, plan.query, bool(codes))
        self._count(-1)
        self._record(arrival, gather, error_codes(codes), plan, "", routing)

    def _rows(self, plan: QueryPlan, segments: list[int]) -> int:
        """Rows one server returns for its segments of the plan."""
        if plan.docs_scanned is None or plan.segments is None:
            return result_rows(plan.query, float(self.layout.docs[segments].sum()))
        docs = dict(zip(plan.segments, plan.docs_scanned, strict=True))
        return result_rows(plan.query, sum(docs[i] for i in segments))

    def _record(self, arrival: float, gather: Gather | None, codes: str, plan: QueryPlan, cache_hit: str,
                routing: list[tuple[int, list[int]]] | None = None) -> None:
        """One query's row (queries that arrived during the warm-up are not recorded)."""
        if arrival < self.window.warmup_ms:
            return
        responses = list(gather.responses.values()) if gather is not None else []
        r = self.records
        r.arrival_ms.append(arrival)
        r.latency_ms.append(self.env.now - arrival)
        r.servers_queried.append(len(routing or ()))
        r.segments_queried.append(sum(len(s) for _, s in routing or ()))
        r.partial.append(bool(codes))
        r.gc_delayed.append(gather is not None and self._gc_delayed(gather))
        r.queue_wait_ms.append(max((x.queue_wait for x in responses), default=0.0))
        r.segments_pruned.append(plan.pruned)
        r.cache_hit.append(cache_hit)
        r.error_codes.append(codes)

    def _gc_delayed(self, gather: Gather) -> bool:
        """A queried server was paused while it held the request (for one that has not answered: since the
        request was sent)."""
        if any(r.paused for r in gather.responses.values()):
            return True
        now = self.env.now
        return any(self.servers[s].pauses.intersects(gather.sent, now)
                   for s in gather.servers if s not in gather.responses and self.servers[s].pauses)

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
        """Tell the brokers' routing when a server goes down and comes back."""
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
        rows = []
        for s, cache in zip(self.servers, self.cluster.segment_caches, strict=True):
            s.advance(horizon, [])  # core time up to the horizon (responses after the run are not wanted)
            m = s.meters
            rows.append({"replication": replication, "server": s.name, "requests": m.requests,
                         "scheduling_timeouts": m.scheduling_timeouts, "execution_timeouts": m.execution_timeouts,
                         "busy_ms": s.busy_ms, "cores": s.cores, "utilisation": s.busy_ms / (s.cores * horizon),
                         "failed_requests": m.failed, "segment_cache_hits": cache.hits,
                         "paused_ms": s.pauses.overlap(0.0, horizon)})
        return rows

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
