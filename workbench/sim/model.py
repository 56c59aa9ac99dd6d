"""The discrete-event model of one Pinot cluster, on SimPy.

Structure (PE §0): a query arrives at the broker, which routes it (choosing one replica of each
segment), sends one request per server after the network delay, and waits for every response or the
timeout; then it merges (broker overhead) and replies. A server runs a request's per-request overhead,
then spreads the request's segments over at most ``tasks_per_query`` tasks that queue FCFS for its
worker threads (cores). Pauses freeze a server: no progress, no responses.

Why so few events: under FCFS a request's start and finish on a server are fixed the moment it
arrives (later arrivals cannot overtake it), and pauses are known schedules, so the server's work is
computed in closed form when the request is delivered (see :mod:`workbench.sim.pauses`). SimPy still
drives time: arrivals, deliveries and completions are events, so feedback (in-flight counts,
timeouts) sees the same order as a task-by-task simulation would.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from math import lcm
from typing import cast

import simpy

from workbench.distributions import Deterministic
from workbench.scenario import Scenario
from workbench.sim.gc import pause_schedule
from workbench.sim.layout import Layout
from workbench.sim.pauses import PauseSchedule
from workbench.sim.service import ServiceModel, make_service_model
from workbench.sim.streams import Buffered, Streams

__all__ = ["ClusterModel", "ReplicationOutput", "Streams"]


@dataclass
class _Server:
    """A server's worker threads, as the times each becomes free, and its pause schedule."""

    cores: int
    pauses: PauseSchedule
    free_at: list[float] = field(default_factory=list)
    busy_ms: float = 0.0
    requests: int = 0

    def __post_init__(self) -> None:
        self.free_at = [0.0] * self.cores

    def execute(self, now: float, overhead: float, task_work: list[float]) -> tuple[float, bool, float]:
        """Run one request arriving at ``now``; return (response send time, paused during it, wait).

        ``wait`` is the longest time one of its tasks queued for a worker thread.

        The request's tasks take the earliest-free worker threads in FCFS order; a task's end is its
        start plus its work, stretched by any pause in between.
        """
        pauses, free_at = self.pauses, self.free_at
        ready = pauses.finish(now, overhead)
        done = ready
        busy = overhead
        wait = 0.0
        for work in task_work:
            free = heapq.heappop(free_at)
            if free > ready:
                wait = max(wait, free - ready)
            end = pauses.finish(free if free > ready else ready, work)
            heapq.heappush(free_at, end)
            if end > done:
                done = end
            busy += work
        self.busy_ms += busy
        self.requests += 1
        send = pauses.release(done)
        return send, pauses.intersects(now, send), wait


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
    in_flight_area: float = 0.0
    servers: list[_Server] = field(default_factory=list)


class ClusterModel:
    """One replication of one scenario. Call :meth:`run` once."""

    def __init__(self, scenario: Scenario, layout: Layout, streams: Streams) -> None:
        self.sc, self.layout, self.rng = scenario, layout, streams
        self.env = simpy.Environment()
        self.service: ServiceModel = make_service_model(scenario.service)
        self.horizon_ms = scenario.simulation.duration_s * 1000.0
        self.warmup_ms = scenario.simulation.warmup_s * 1000.0
        spec = scenario.cluster
        self.servers = [
            _Server(spec.server.cores, pause_schedule(spec.gc, streams.gc[i], self.horizon_ms))
            for i in range(layout.num_servers)
        ]
        self.tasks_cap = spec.server.tasks_per_query
        latency = spec.network.latency_ms
        self.const_latency = isinstance(latency, Deterministic)
        self._latency = Buffered(lambda n: latency.sample(streams.network, n))
        self._draws = (None if self.service.draw is None else
                       Buffered(lambda n: self.service.draw.sample(streams.service, n)))  # type: ignore[union-attr]
        self._cost = self.service.segment_times(streams.service, layout.docs).tolist()
        self._route_cache: dict[int, list[tuple[int, list[int]]]] = {}
        self._route_period = lcm(*(len(r) for r in layout.replicas)) if layout.replicas else 1
        self.out = ReplicationOutput(servers=self.servers)
        self._in_flight = 0
        self._last_change = self.warmup_ms

    # -- routing ----------------------------------------------------------------------------------
    def route(self, request_id: int) -> list[tuple[int, list[int]]]:
        """Balanced routing: segment ``i`` goes to replica ``(request_id + i) mod replicas``.

        The choice depends only on ``request_id`` modulo the replica counts' lcm, so it is cached.
        """
        key = request_id % self._route_period
        cached = self._route_cache.get(key)
        if cached is None:
            per_server: dict[int, list[int]] = {}
            for i, replicas in enumerate(self.layout.replicas):
                per_server.setdefault(replicas[(request_id + i) % len(replicas)], []).append(i)
            cached = self._route_cache[key] = list(per_server.items())
        return cached

    # -- time accounting ----------------------------------------------------------------------------
    def _count(self, delta: int) -> None:
        now = self.env.now
        if now > self.warmup_ms:
            self.out.in_flight_area += self._in_flight * (now - max(self._last_change, self.warmup_ms))
            self._last_change = now
        self._in_flight += delta

    def _task_work(self, segments: list[int]) -> list[float]:
        """Per-task work of one request: its segments dealt round-robin over at most ``tasks_cap`` tasks."""
        if self._draws is not None:
            times = self._draws.take(len(segments))
        else:
            cost = self._cost
            times = [cost[i] for i in segments]
        tasks = self.tasks_cap
        if tasks >= len(times):
            return times
        return [sum(times[t::tasks]) for t in range(tasks)]

    def _net(self) -> float:
        return self._latency.next()

    def _deliver(self, at: float, server: int, segs: list[int]) -> tuple[float, bool, float]:
        """Execute a request delivered to ``server`` at ``at``; return (response arrival, paused, wait)."""
        send, paused, wait = self.servers[server].execute(at, self.service.per_request_ms, self._task_work(segs))
        return send + self._net(), paused, wait

    def _delayed(self, server: int, segs: list[int]) -> simpy.events.ProcessGenerator:
        yield self.env.timeout(self._net())
        return self._deliver(self.env.now, server, segs)

    # -- processes ----------------------------------------------------------------------------------
    def _query(self, query_id: int) -> simpy.events.ProcessGenerator:
        env, arrival = self.env, self.env.now
        self._count(+1)
        routing = self.route(query_id)
        deadline = arrival + self.sc.cluster.broker.timeout_ms
        if self.const_latency:  # equal delays keep delivery order = send order: compute now
            outcomes = [self._deliver(env.now + self._net(), server, segs) for server, segs in routing]
        else:
            events = [env.process(self._delayed(server, segs)) for server, segs in routing]
            yield env.all_of(events)
            outcomes = [cast(tuple[float, bool, float], e.value) for e in events]
        responses = [r for r, _, _ in outcomes]
        delayed = any(p for _, p, _ in outcomes)
        done = max(responses)
        partial = done > deadline
        end = min(done, deadline) + self.sc.cluster.broker.overhead_ms
        yield env.timeout(end - env.now)
        self._count(-1)
        if arrival >= self.warmup_ms:
            o = self.out
            o.arrival_ms.append(arrival)
            o.latency_ms.append(end - arrival)
            o.servers_queried.append(len(routing))
            o.segments_queried.append(sum(len(s) for _, s in routing))
            o.partial.append(partial)
            o.gc_delayed.append(delayed)
            o.queue_wait_ms.append(max(w for _, _, w in outcomes))

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

    def run(self) -> ReplicationOutput:
        """Simulate ``[0, duration)``; queries still in flight at the end are not recorded."""
        self.env.process(self._arrivals())
        self.env.run(until=self.horizon_ms)
        self._count(0)
        return self.out
