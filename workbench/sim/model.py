"""The SimPy engine: one replication's plan executed in time, the reference semantics of the workbench.

Structure (PE §0, §4-§5): a query arrives at a broker, which checks its result cache, sends one request
per server (the routing and every draw come from the replication's :class:`~workbench.sim.plan.Plan`),
each carrying the query's timeout. The servers (:mod:`workbench.sim.server`, each driven by
:mod:`workbench.sim.driver`) schedule and execute their requests as Pinot does. The broker waits for
every response, a failed channel, or the deadline (:mod:`workbench.sim.gather`), then reduces what
arrived on one of its cores and replies with the QueryErrorCodes of what went wrong. With adaptive
server selection the broker routes live from its stats, and the network delays are drawn as messages
are sent.

Every recorded time is computed exactly from the plan's times and delays; SimPy orders the moments.
The model is handed everything it uses (its environment, streams, parts and plan), so a test can build
servers with known pauses and assert every latency by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simpy

from workbench.distributions import Deterministic, Distribution
from workbench.pinot.cache.base import Cached
from workbench.pinot.cache.flight import Leader, Waiter
from workbench.pinot.failure_detector import ExponentialBackoffRetryFailureDetector, ServerState
from workbench.sim.broker import Broker
from workbench.sim.caches import ModelSegmentCache
from workbench.sim.driver import ServerDriver
from workbench.sim.fast.plan_kernels import segment_sums
from workbench.sim.gather import Gather, error_codes
from workbench.sim.layout import Layout
from workbench.sim.plan import Plan, delay_row_draws
from workbench.sim.planner import QueryPlan, result_rows
from workbench.sim.records import QueryRecords, failure_rows, pause_rows, server_row
from workbench.sim.router import own_routing_options
from workbench.sim.server import PinotServer, Request, Response
from workbench.sim.service import ServiceModel
from workbench.sim.streams import Buffered, Streams

__all__ = ["Cluster", "ClusterModel", "Window"]

#: A request on its way: server, request, delay out, delay back, rows its server returns.
_Outgoing = tuple[int, Request, float, float, int]


@dataclass(frozen=True)
class Window:
    """The simulated time ``[0, horizon_ms)`` and the warm-up ``[0, warmup_ms)`` left out of the records."""

    warmup_ms: float
    horizon_ms: float


@dataclass
class Cluster:
    """The model's parts: where segments live, the servers (with their segment caches) and the brokers.

    ``service`` and ``network`` are used only when the broker routes live (adaptive selection).
    """

    layout: Layout
    servers: Sequence[PinotServer]
    segment_caches: Sequence[ModelSegmentCache]
    brokers: Sequence[Broker]
    service: ServiceModel
    network: Distribution
    query_options: Mapping[str, str] = field(default_factory=dict)
    #: Each server request's own delay, added to its way back (``cluster.network.request_delay_ms``; read live
    #: like ``network``; routed plans hold it in their delays already).
    request_delay: Distribution = field(default_factory=lambda: Deterministic(0.0))
    #: With kinds of query given their own (``request_delay_by_kind_ms``): all of them, drawn side by side
    #: (``NetworkSpec.request_delays``); empty: ``request_delay`` alone.
    request_delays: tuple[Distribution, ...] = ()


class ClusterModel:
    """One replication of one cluster executing ``plan``. Call :meth:`run` once, then read the records.

    Query ``i`` goes to broker ``plan.broker[i]`` (``i mod brokers``: a load balancer's round robin);
    each broker keeps its own adaptive stats and result cache, as Pinot brokers do.
    """

    def __init__(self, env: simpy.Environment, streams: Streams, cluster: Cluster, plan: Plan,
                 window: Window) -> None:
        self.env, self.rng, self.cluster, self.plan, self.window = env, streams, cluster, plan, window
        self.layout = cluster.layout
        self.servers, self.brokers = list(cluster.servers), list(cluster.brokers)
        self.drivers = [ServerDriver(env, i, s, self._on_response) for i, s in enumerate(self.servers)]
        network = cluster.network
        self._latency = Buffered(lambda n: network.sample(streams.network, n))
        delay, side = cluster.request_delay, cluster.request_delays
        self._request_delay = (None if isinstance(delay, Deterministic) and delay.value == 0
                               else Buffered(lambda n: delay.sample(streams.request_delay, n)))
        # by kind: one row of all of them per request, read as the plan and the compiled router read it
        self._delay_row = None if len(side) <= 1 else Buffered(*delay_row_draws(side, streams.request_delay))
        self._waiting: dict[int, tuple[Gather, float]] = {}
        self._next_rid = 0
        self.records = QueryRecords()
        self.churn_events = 0
        self.in_flight_area = 0.0
        self._done = np.zeros(plan.num_queries, dtype=bool)
        self._server_index = {name: i for i, name in enumerate(self.layout.servers)}
        #: Each broker's failure detector (``pinot.broker.failure.detector.type``; none for NO_OP) and when its
        #: next retry wakes it.
        self.detectors = [self._detector(b) for b in self.brokers if b.spec.failure_detector.enabled]
        self._retry_wake = [np.inf] * len(self.detectors)

    # -- the broker's failure detector ----------------------------------------------------------------
    def _detector(self, broker: Broker) -> ExponentialBackoffRetryFailureDetector:
        """Pinot's ``ConnectionFailureDetector`` for one broker: it excludes a failed server from the broker's
        routing, and its retries (the request handler's ``retryUnhealthyServer``: can a connection be opened?)
        let the server back once it is up again."""
        index = self._server_index
        detector = ExponentialBackoffRetryFailureDetector(
            broker.spec.failure_detector,
            on_healthy=lambda name: broker.router.set_server_excluded(index[name], False),
            on_unhealthy=lambda name: broker.router.set_server_excluded(index[name], True))
        detector.register_unhealthy_server_retrier(
            lambda name: ServerState.UNHEALTHY if self.servers[index[name]].is_down(self.env.now)
            else ServerState.HEALTHY)
        return detector

    def _failed_server(self, broker: int, server: int, at: float) -> None:
        """A query's gather ended with a failed channel to ``server`` (Pinot's ``AsyncQueryResponse``'s failed
        server; a timeout is not one): its broker's detector marks it unhealthy."""
        number = sum(1 for b in self.brokers[:broker] if b.spec.failure_detector.enabled)
        detector = self.detectors[number]
        detector.mark_server_unhealthy(self.layout.servers[server], at)
        self._wake_for_retries(number)

    def _wake_for_retries(self, number: int) -> None:
        """Run the detector's retries when the next is due (one wake-up pending at a time, the earliest)."""
        due = self.detectors[number].next_retry_ms
        if due >= self._retry_wake[number]:
            return
        self._retry_wake[number] = due

        def retry(_: simpy.Event) -> None:
            if self._retry_wake[number] != due:
                return  # an earlier wake-up replaced this one
            self._retry_wake[number] = np.inf
            self.detectors[number].run_retries(self.env.now)
            self._wake_for_retries(number)

        self.env.timeout(max(0.0, due - self.env.now)).callbacks.append(retry)

    # -- what a request asks of a server -------------------------------------------------------------
    def _segment_work(self, segments: np.ndarray, work: np.ndarray, query: QueryPlan, server: int,
                      at: float) -> list[float]:
        """Worker work of each of the request's segments; a segment in the server's segment cache costs nothing."""
        times: list[float] = work.tolist()
        cache = self.cluster.segment_caches[server]
        if cache.enabled and query.query is not None:
            names = self.layout.segments
            times = [0.0 if cache.hit(query.query, names[int(i)], at) else t
                     for i, t in zip(segments, times, strict=True)]
        return times

    def _request(self, q: int, server: int, segments: np.ndarray, work: np.ndarray, prepare: float,
                 merge: float, at: float, scale: float) -> Request:
        plan = self.plan
        rid = self._next_rid
        self._next_rid += 1
        threads = int(plan.execution_threads[q])
        return Request(rid, at, float(plan.timeout_ms[q]), prepare, merge,
                       self._segment_work(segments, work, plan.plans[int(plan.plan_index[q])], server, at),
                       group_by=bool(plan.group_by[q]), secondary=bool(plan.secondary[q]),
                       execution_threads=threads if threads > 0 else None,
                       off_path=float(plan.off_path_ms[q] * scale))

    def _send(self, requests: list[_Outgoing], gather: Gather) -> None:
        """Each request reaches its server after its way-out delay; requests due at the same moment are
        delivered by one event, in send order."""
        by_time: dict[float, list[tuple[int, Request]]] = {}
        for server, request, out, back, _ in requests:
            self._waiting[request.rid] = (gather, back)
            by_time.setdefault(request.arrival + out, []).append((server, request))
        for at, batch in by_time.items():
            self.env.timeout(max(0.0, at - self.env.now)).callbacks.append(self._deliverer(batch, at))

    def _deliverer(self, batch: list[tuple[int, Request]], at: float) -> Callable[[simpy.Event], None]:
        def deliver(_: simpy.Event) -> None:
            for server, request in batch:
                self.drivers[server].deliver(request, at)
        return deliver

    def _on_response(self, server: int, response: Response) -> None:
        """A server sent ``response``: it reaches the waiting broker after the request's way-back delay."""
        waiting = self._waiting.pop(response.rid, None)
        if waiting is not None:
            gather, back = waiting
            gather.sent_back(server, response, response.at + back)

    # -- processes ----------------------------------------------------------------------------------
    def _planned(self, q: int, arrival: float) -> tuple[list[_Outgoing], int]:
        """The plan's requests of query ``q`` (routing, work, delays), built at its arrival."""
        plan = self.plan
        segments, work = plan.query_work(q)
        out = []
        for r in range(int(plan.query_requests[q]), int(plan.query_requests[q + 1])):
            pos = plan.request_position[plan.request_segments[r]:plan.request_segments[r + 1]]
            server = int(plan.server[r])
            scale = plan.scale(server, arrival + float(plan.out_delay[r]))
            request = self._request(q, server, segments[pos], work[pos] * scale, float(plan.prepare[r] * scale),
                                    float(plan.merge[r] * scale), arrival, scale)
            out.append((server, request, float(plan.out_delay[r]), float(plan.back_delay[r]), int(plan.rows[r])))
        return out, int(plan.unavailable[q])

    def _live(self, q: int, broker: Broker, arrival: float) -> tuple[list[_Outgoing], int]:
        """Adaptive selection routes from the broker's live stats; delays are drawn as messages go."""
        plan, service = self.plan, self.cluster.service
        query = plan.plans[int(plan.plan_index[q])]
        routing, unavailable = broker.router.route(q // len(self.brokers), query.names, query.key,
                                                   broker.router.options_for(own_routing_options(query.query)))
        segments, work = plan.query_work(q)
        position = {int(s): i for i, s in enumerate(segments)}
        docs = np.asarray(query.docs_scanned if query.docs_scanned is not None else self.layout.docs[segments])
        out = []
        for server, segs in routing:
            pos = np.array([position[s] for s in segs], dtype=np.int64)
            out_delay, back_delay = self._latency.next(), self._latency.next()
            if self._delay_row is not None:  # its kind's of one row (plan.request_delays)
                row = self._delay_row.take(len(self.cluster.request_delays))
                back_delay += row[int(plan.delay_column[q])] * plan.jvm_scale(server, arrival + out_delay)
            elif self._request_delay is not None:  # as the plan's way back (plan.service_delays), slowed with a JVM
                back_delay += self._request_delay.next() * plan.jvm_scale(server, arrival + out_delay)
            scale = plan.scale(server, arrival + out_delay)
            merge = 0.0 if plan.group_by[q] else service.merge_ms_per_segment * len(segs)
            seg_work = (work[pos] + (service.merge_ms_per_segment if plan.group_by[q] else 0.0)) * scale
            request = self._request(q, server, segments[pos], seg_work, float(plan.prepare_ms[q] * scale),
                                    float(merge * scale), arrival, scale)
            rows = result_rows(query.query, float(segment_sums(docs[pos], np.array([0, len(pos)]))[0]))  # as planned
            out.append((server, request, out_delay, back_delay, rows))
        return out, unavailable

    def _reply(self, broker: Broker, ready: float, servers: int, rows: int) -> float:
        """When the broker's reply leaves: its reduce on the first free core."""
        return broker.slots.run(ready, broker.reduce_ms(servers, rows), broker.spec.off_path_ms)

    def _query(self, q: int) -> simpy.events.ProcessGenerator:
        env, plan = self.env, self.plan
        arrival = float(plan.arrival_ms[q])
        broker = self.brokers[int(plan.broker[q])]
        query = plan.plans[int(plan.plan_index[q])]
        leader = None
        if broker.cache.enabled and query.query is not None:
            decision = broker.cache.begin(query.query, query.names or self.layout.segments, arrival)
            if isinstance(decision, Cached | Waiter):
                ready = arrival
                if isinstance(decision, Waiter):
                    ready = yield broker.cache.wait(decision)
                # no server request, so no delay carries the broker's off-path part: a hit pays all its broker work
                reply = broker.slots.run(ready, broker.reduce_ms(0, 0) + broker.spec.off_path_ms)
                yield env.timeout(max(0.0, reply - env.now))
                self._record(q, arrival, reply, None, "", "broker" if isinstance(decision, Cached) else "singleflight")
                return
            leader = decision if isinstance(decision, Leader) else None
        requests, unavailable = self._planned(q, arrival) if plan.routed else self._live(q, broker, arrival)
        names = self.layout.servers
        if broker.stats is not None:
            for server, *_ in requests:
                broker.stats.record_submission(names[server], arrival)
        servers = [s for s, *_ in requests]
        gather = Gather(env, servers, [names[s] for s in servers], arrival, float(plan.timeout_ms[q]), broker.stats)
        self._send(requests, gather)
        yield gather.done
        gather.close()
        if self.detectors and gather.failed:
            for server in sorted(gather.failed):
                self._failed_server(int(plan.broker[q]), server, gather.closed_at)
        codes = gather.codes(unavailable)
        ok = {s for s in gather.answered if gather.responses[s].code == 0}
        rows = sum(r for s, *_, r in requests if s in ok)
        reply = self._reply(broker, gather.closed_at, len(gather.answered), rows)
        yield env.timeout(max(0.0, reply - env.now))
        if leader is not None:
            assert query.query is not None
            broker.cache.complete(leader, query.query, bool(codes), reply)
        self._record(q, arrival, reply, gather, error_codes(codes), "", len(requests),
                     sum(r.num_segments for _, r, *_ in requests))

    def _record(self, q: int, arrival: float, reply: float, gather: Gather | None, codes: str, cache_hit: str,
                servers: int = 0, segments: int = 0) -> None:
        """One query's row (queries that arrived during the warm-up are not recorded)."""
        w = self.window
        self._done[q] = True
        self.in_flight_area += max(0.0, min(reply, w.horizon_ms) - max(arrival, w.warmup_ms))
        if arrival < w.warmup_ms:
            return
        responses = list(gather.responses.values()) if gather is not None else []
        r = self.records
        r.query.append(q)
        r.arrival_ms.append(arrival)
        r.latency_ms.append(reply - arrival)
        r.servers_queried.append(servers)
        r.segments_queried.append(segments)
        r.partial.append(bool(codes))
        r.gc_delayed.append(gather is not None and self._gc_delayed(gather))
        r.queue_wait_ms.append(max((x.queue_wait for x in responses), default=0.0))
        r.segments_pruned.append(self.plan.plans[int(self.plan.plan_index[q])].pruned)
        r.cache_hit.append(cache_hit)
        r.error_codes.append(codes)

    def _gc_delayed(self, gather: Gather) -> bool:
        """A queried server was paused while it held the request (for one that has not answered: between
        the query's arrival and the broker's close)."""
        if any(r.paused for r in gather.responses.values()):
            return True
        return any(self.servers[s].pauses.intersects(gather.sent, gather.closed_at)
                   for s in gather.servers if s not in gather.responses and self.servers[s].pauses)

    def _arrivals(self) -> simpy.events.ProcessGenerator:
        for q, at in enumerate(self.plan.arrival_ms.tolist()):
            yield self.env.timeout(max(0.0, at - self.env.now))
            self.env.process(self._query(q))

    def _health(self, server: int) -> simpy.events.ProcessGenerator:
        """Tell the live routers (adaptive brokers) when a server goes down and comes back."""
        for start, end in self.servers[server].crashes.intervals():
            yield self.env.timeout(max(0.0, start - self.env.now))
            self._set_health(server, False)
            yield self.env.timeout(max(0.0, end - self.env.now))
            self._set_health(server, True)

    def _churn(self) -> simpy.events.ProcessGenerator:
        """The plan's segment refreshes and reloads; every cache invalidates the segment."""
        plan, names = self.plan, self.layout.segments
        for t, segment, event in zip(plan.churn_ms.tolist(), plan.churn_segment.tolist(), plan.churn_event,
                                     strict=True):
            yield self.env.timeout(max(0.0, t - self.env.now))
            for broker in self.brokers:
                broker.cache.on_segment(event, names[segment])
            for cache in self.cluster.segment_caches:
                cache.on_segment(event, names[segment])
            self.churn_events += 1

    def _set_health(self, server: int, healthy: bool) -> None:
        for router in {id(b.router): b.router for b in self.brokers}.values():
            router.set_server_health(server, healthy)

    def run(self) -> None:
        """Simulate ``[0, horizon)``; queries still in flight at the end are not recorded."""
        self.env.process(self._arrivals())
        if not self.plan.routed:
            for i, server in enumerate(self.servers):
                if server.crashes:
                    self.env.process(self._health(i))
        if len(self.plan.churn_ms):
            self.env.process(self._churn())
        self.env.run(until=self.window.horizon_ms)
        w, arrivals = self.window, self.plan.arrival_ms[~self._done]
        self.in_flight_area += float(np.maximum(0.0, w.horizon_ms - np.maximum(arrivals, w.warmup_ms)).sum())

    # -- records ------------------------------------------------------------------------------------
    def server_rows(self, replication: int) -> list[dict[str, Any]]:
        """One ``servers`` row per server (columns in :data:`~workbench.sim.records.SERVER_COLUMNS`)."""
        horizon = self.window.horizon_ms
        rows: list[dict[str, Any]] = []
        for driver, cache in zip(self.drivers, self.cluster.segment_caches, strict=True):
            driver.close(horizon)  # core time up to the horizon (responses after the run are not wanted)
            s = driver.server
            m = s.meters
            rows.append(server_row(replication, s.name, m.requests, m.scheduling_timeouts, m.execution_timeouts,
                                   s.busy_ms, s.cores, horizon, m.failed, cache.hits, self.plan.heaps[len(rows)]))
        return rows

    def pause_rows(self, replication: int) -> list[dict[str, Any]]:
        """One ``gc_pauses`` row per pause of every server."""
        return pause_rows(self.layout.servers, self.plan.pauses, replication)

    def failure_rows(self, replication: int) -> list[dict[str, Any]]:
        """One ``failures`` row per crash of every server (down and up times, s)."""
        return failure_rows(self.layout.servers, self.plan.crashes, replication)

    def window_row(self, replication: int) -> dict[str, Any]:
        """The ``windows`` row: the measured window (s) and the time-average queries in flight."""
        window_ms = self.window.horizon_ms - self.window.warmup_ms
        return {"replication": replication, "window_s": window_ms / 1000.0,
                "mean_in_flight": self.in_flight_area / window_ms}
