"""The compiled engine: a replication's plan executed server by server, then broker by broker.

When nothing that happens in time changes what is sent to a server (no adaptive selection reading
latencies, no broker result cache whose hits depend on when earlier queries finished), every request a
server will receive is known from the plan: when it arrives, what it asks. Each server then runs on its
own (:func:`~workbench.sim.fast.server_kernel.simulate_server`, the Python server's state machine
compiled), and the brokers' gathers and reduces follow from the responses
(:func:`~workbench.sim.fast.broker_kernel.gather_and_reduce`). The records are the SimPy engine's, to
rounding: the SimPy engine is the reference, and a disagreement is a bug here.

When routing depends on what happened earlier (adaptive selection's stats, the failure detector's
exclusions) the plan holds no routes, and servers and brokers run together in time order instead
(:mod:`workbench.sim.fast.live`, the same resumable server state machine), exactly as well.

:func:`coverage` says whether a scenario is inside the engine's domain and, if not, why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from workbench.scenario import Scenario
from workbench.sim.broker import reduce_slots
from workbench.sim.caches import ModelSegmentCache
from workbench.sim.failures import SlowWindows
from workbench.sim.fast.broker_kernel import gather_and_reduce
from workbench.sim.fast.live import route_live
from workbench.sim.fast.server_settings import ServerSettings
from workbench.sim.fast.servers import by_entry, run_servers
from workbench.sim.layout import Layout
from workbench.sim.model import Window
from workbench.sim.pauses import PauseSchedule
from workbench.sim.plan import Delivery, Plan
from workbench.sim.records import (
    ENGINE_LATENCY_COLUMNS,
    ENGINE_QUERY_COLUMNS,
    ReplicationRecords,
    code_text,
    count_window,
    failure_rows,
    pause_rows,
    server_row,
)
from workbench.sim.routes import Routes
from workbench.sim.server import ExecutionModel
from workbench.sim.streams import Streams

__all__ = ["coverage", "run_fast"]


def coverage(sc: Scenario) -> str | None:
    """``None`` when the compiled engine reproduces the SimPy engine exactly for ``sc``; else why not."""
    broker = sc.cluster.broker
    if broker.routes_live and sc.cluster.server.segment_cache.enabled:
        return ("the segment cache with live routing (adaptive selection or a failure detector) is not in the "
                "compiled engine; run it with simulation.engine: simpy (auto picks it)")
    if broker.result_cache.enabled:
        return ("the broker result cache answers a query from earlier queries' results, which depends on when "
                "they finished (timing decides what is sent to the servers)")
    return None


def _segment_cache_pass(sc: Scenario, layout: Layout, plan: Plan, routes: Routes, work: np.ndarray) -> np.ndarray:
    """Segment-cache decisions in the SimPy engine's order (each query at its arrival, requests in routing
    order, churn at its times), with the same cache objects: hits cost nothing. Returns hits per server."""
    hits = np.zeros(layout.num_servers, dtype=np.int64)
    config = sc.cluster.server.segment_cache
    if not config.enabled:
        return hits
    caches = [ModelSegmentCache(config, sc.table, layout) for _ in range(layout.num_servers)]
    names = layout.segments
    churn = list(zip(plan.churn_ms.tolist(), plan.churn_segment.tolist(), plan.churn_event, strict=True))
    c = 0
    for q in range(plan.num_queries):
        at = float(plan.arrival_ms[q])
        while c < len(churn) and churn[c][0] <= at:
            for cache in caches:
                cache.on_segment(churn[c][2], names[churn[c][1]])
            c += 1
        query = plan.plans[int(plan.plan_index[q])].query
        if query is None:
            continue
        segs_of_query, _ = plan.query_work(q)
        base = int(plan.query_segments[q])
        t = int(routes.template[q])
        for j in range(int(routes.requests[t]), int(routes.requests[t + 1])):
            cache = caches[int(routes.server[j])]
            for pos in routes.position[routes.segments[j]:routes.segments[j + 1]].tolist():
                if cache.hit(query, names[int(segs_of_query[pos])], at):
                    work[base + pos] = 0.0
    return np.array([cache.hits for cache in caches], dtype=np.int64)


@dataclass(frozen=True)
class _Schedules:
    """Every server's pauses (or crashes) as flat arrays, server ``s``'s at ``offsets[s]:offsets[s + 1]``."""

    offsets: np.ndarray
    start: np.ndarray
    end: np.ndarray
    run: np.ndarray
    before: np.ndarray
    total: np.ndarray

    @classmethod
    def of(cls, schedules: Sequence[PauseSchedule]) -> _Schedules:
        def flat(name: str) -> np.ndarray:
            parts = [np.asarray(getattr(p, name), dtype=float) for p in schedules]
            return np.ascontiguousarray(np.concatenate(parts) if parts else np.empty(0), dtype=float)

        offsets = np.concatenate(([0], np.cumsum([len(p) for p in schedules]))).astype(np.int64)
        totals = np.array([float((p.ends - p.starts).sum()) if len(p) else 0.0 for p in schedules], dtype=float)
        return cls(offsets, flat("starts"), flat("ends"), flat("run_at_start"), flat("paused_before"), totals)


@dataclass
class _Responses:
    """Every request's response from its server, by delivery entry (``entry_of[r]``: request ``r``'s)."""

    at: np.ndarray
    code: np.ndarray
    responded: np.ndarray
    paused: np.ndarray
    wait: np.ndarray
    meters: np.ndarray
    busy: np.ndarray
    entry_of: np.ndarray


def _run_servers(sc: Scenario, plan: Plan, routes: Routes, delivery: Delivery, work: np.ndarray,
                 pauses: _Schedules, horizon_ms: float, parallel: int) -> _Responses:
    """Every server's run: on its stops (GC pauses joined with wedges), with ``pauses`` (the GC pauses
    alone) setting the responses' paused flags."""
    stops = _Schedules.of(plan.stops) if plan.wedges else pauses
    slow = plan.slow or SlowWindows.of([[] for _ in range(len(plan.cpu_scale))], horizon_ms)
    entries = (delivery.offsets, delivery.request, delivery.query, delivery.delivered)
    queries = (plan.timeout_ms, plan.group_by, plan.secondary, plan.execution_threads, plan.query_segments,
               routes.template, plan.query_requests)
    seg_offsets, seg_work, entry_of = by_entry(entries, queries, (routes.requests, routes.segments, routes.position),
                                               work, plan.cpu_scale, _slow_arrays(slow))
    n, servers = plan.num_requests, len(plan.cpu_scale)
    out = _Responses(np.empty(n), np.empty(n, dtype=np.int16), np.empty(n, dtype=bool), np.empty(n, dtype=bool),
                     np.empty(n), np.zeros((servers, 5), dtype=np.int64), np.zeros(servers), entry_of)
    crashes = _Schedules.of(plan.crashes)
    settings = ServerSettings.of(sc.cluster.server.query,
                                 ExecutionModel(sc.cluster.server.execution) is ExecutionModel.FCFS_THREADS,
                                 bool((plan.off_path_ms > 0).any()))
    run_servers(np.arange(servers, dtype=np.int64), entries, queries, (seg_offsets, seg_work), plan.cpu_scale,
                _slow_arrays(slow), np.ascontiguousarray(plan.prepare_ms, dtype=float),
                np.ascontiguousarray(plan.merge_ms_per_segment, dtype=float),
                np.ascontiguousarray(plan.off_path_ms, dtype=float),
                (stops.offsets, stops.start, stops.end, stops.run, stops.before, stops.total),
                (pauses.offsets, pauses.start, pauses.end), (crashes.offsets, crashes.start, crashes.end), settings,
                horizon_ms,
                (out.at, out.code, out.responded, out.paused, out.wait, out.meters, out.busy), parallel)
    return out


def _slow_arrays(slow: SlowWindows) -> tuple[np.ndarray, ...]:
    return slow.offsets, slow.start, slow.end, slow.factor


def run_fast(sc: Scenario, layout: Layout, plan: Plan, window: Window, replication: int,
             records: str = "all", parallel: int = 1, streams: Streams | None = None) -> ReplicationRecords:
    """Execute ``plan`` with the compiled kernels; the records of one replication (``records``: ``all``, or
    ``latency`` for only :data:`~workbench.sim.records.ENGINE_LATENCY_COLUMNS` of ``queries``). ``parallel``
    threads run the servers (the records are the same for any count). A plan routed live (adaptive
    selection, a failure detector) needs the replication's ``streams`` (:mod:`~workbench.sim.fast.live` draws
    from them)."""
    if not plan.routed:
        assert streams is not None, "live routing draws from the replication's streams"
        return _run_live(sc, layout, plan, window, replication, records, streams)
    routes, delivery = plan.routes, plan.delivery
    assert routes is not None and delivery is not None, "the compiled engine runs routed plans only"
    work = plan.work
    if sc.cluster.server.segment_cache.enabled:
        work = work.copy()
    hits = _segment_cache_pass(sc, layout, plan, routes, work)
    pauses = _Schedules.of(plan.pauses)
    resp = _run_servers(sc, plan, routes, delivery, work, pauses, window.horizon_ms, parallel)
    rows = [server_row(replication, layout.servers[s], m[0], m[1], m[2], resp.busy[s], sc.cluster.server.cores,
                       window.horizon_ms, m[4], hits[s], plan.heaps[s]) for s, m in enumerate(resp.meters.tolist())]
    broker = sc.cluster.broker
    slots = np.full(sc.cluster.brokers, reduce_slots(broker), dtype=np.int64)
    reply, mask, delayed, qwait = gather_and_reduce(
        plan.arrival_ms, plan.timeout_ms, plan.broker, routes.template, routes.unavailable, plan.query_requests,
        routes.requests, routes.server, routes.rows, resp.entry_of, resp.at, resp.code, resp.responded, plan.delays,
        resp.paused, resp.wait, pauses.start, pauses.end, pauses.offsets, broker.overhead_ms,
        broker.reduce_ms_per_server, broker.reduce_ms_per_row, slots, window.horizon_ms, broker.off_path_ms)
    del resp
    outcome = _Outcome(plan, routes, window, reply, mask, delayed, qwait)
    return ReplicationRecords(outcome.queries(replication, records), rows,
                              pause_rows(layout.servers, plan.pauses, replication),
                              failure_rows(layout.servers, plan.crashes, replication),
                              {**outcome.window_row(replication), **outcome.counts()})


def _run_live(sc: Scenario, layout: Layout, plan: Plan, window: Window, replication: int, records: str,
              streams: Streams) -> ReplicationRecords:
    """A replication whose queries are routed live (adaptive selection): servers and brokers run together
    (:func:`~workbench.sim.fast.live.route_live`), then the same gather and reduce as a routed plan."""
    pauses = _Schedules.of(plan.pauses)
    stops = _Schedules.of(plan.stops) if plan.wedges else pauses
    crashes = _Schedules.of(plan.crashes)
    slow = plan.slow or SlowWindows.of([[] for _ in range(len(plan.cpu_scale))], window.horizon_ms)
    live = route_live(sc, layout, plan, streams, window.horizon_ms, (pauses.offsets, pauses.start, pauses.end),
                      (stops.offsets, stops.start, stops.end, stops.run, stops.before, stops.total),
                      (crashes.offsets, crashes.start, crashes.end), (*_slow_arrays(slow), slow.jvm))
    routes = live.routes
    rows = [server_row(replication, layout.servers[s], m[0], m[1], m[2], live.busy[s], sc.cluster.server.cores,
                       window.horizon_ms, m[4], 0, plan.heaps[s]) for s, m in enumerate(live.meters.tolist())]
    broker = sc.cluster.broker
    slots = np.full(sc.cluster.brokers, reduce_slots(broker), dtype=np.int64)
    n = len(live.resp_at)
    reply, mask, delayed, qwait = gather_and_reduce(
        plan.arrival_ms, plan.timeout_ms, plan.broker, routes.template, routes.unavailable, live.query_requests,
        routes.requests, routes.server, routes.rows, np.arange(n, dtype=np.int64), live.resp_at, live.code,
        live.responded, live.delays, live.paused, live.wait, pauses.start, pauses.end, pauses.offsets,
        broker.overhead_ms, broker.reduce_ms_per_server, broker.reduce_ms_per_row, slots, window.horizon_ms,
        broker.off_path_ms)
    outcome = _Outcome(plan, routes, window, reply, mask, delayed, qwait)
    return ReplicationRecords(outcome.queries(replication, records), rows,
                              pause_rows(layout.servers, plan.pauses, replication),
                              failure_rows(layout.servers, plan.crashes, replication),
                              {**outcome.window_row(replication), **outcome.counts()})


@dataclass
class _Outcome:
    """Each query's reply, code mask, GC flag and queue wait; the kept ones are those arrived after the
    warm-up and answered before the horizon."""

    plan: Plan
    routes: Routes
    window: Window
    reply: np.ndarray
    mask: np.ndarray
    delayed: np.ndarray
    qwait: np.ndarray

    @cached_property
    def keep(self) -> np.ndarray:
        return np.flatnonzero((self.plan.arrival_ms >= self.window.warmup_ms) & np.isfinite(self.reply))

    @cached_property
    def servers_queried(self) -> np.ndarray:
        out: np.ndarray = self.routes.request_counts[self.routes.template[self.keep]].astype(np.int32)
        return out

    @cached_property
    def segments_queried(self) -> np.ndarray:
        cumulative = np.concatenate(([0], np.cumsum(self.routes.segment_counts)))
        per_template = cumulative[self.routes.requests[1:]] - cumulative[self.routes.requests[:-1]]
        out: np.ndarray = per_template[self.routes.template[self.keep]].astype(np.int32)
        return out

    def queries(self, replication: int, records: str) -> pd.DataFrame:
        """The ``queries`` table (only the latency columns when ``records`` is ``latency``)."""
        plan, keep = self.plan, self.keep
        latency = {"replication": np.full(len(keep), replication, dtype=np.int32),
                   "query_id": keep.astype(np.int64),
                   "latency_ms": self.reply[keep] - plan.arrival_ms[keep]}
        if records == "latency":
            return pd.DataFrame(latency, columns=list(ENGINE_LATENCY_COLUMNS))
        pruned = np.array([p.pruned for p in plan.plans], dtype=np.int32)[plan.plan_index[keep]]
        mask = self.mask[keep]
        return pd.DataFrame({
            **latency,
            "arrival_s": plan.arrival_ms[keep] / 1000.0,
            "servers_queried": self.servers_queried,
            "segments_queried": self.segments_queried,
            "segments_pruned": pruned,
            "partial": mask != 0,
            "gc_delayed": self.delayed[keep],
            "queue_wait_ms": self.qwait[keep],
            "cache_hit": pd.Series([""] * len(keep), dtype="string"),
            "error_codes": code_text(mask),
        }, columns=list(ENGINE_QUERY_COLUMNS))

    def counts(self) -> dict[str, Any]:
        """What the kept queries add up to, counted by :func:`~workbench.sim.records.count_window` from the
        columns :meth:`queries` writes (no query is a cache hit: the engine does not cover the result cache)."""
        mask = self.mask[self.keep]
        return count_window(mask, mask != 0, self.delayed[self.keep], np.zeros(len(mask), dtype=bool),
                            self.servers_queried, self.segments_queried)

    def window_row(self, replication: int) -> dict[str, Any]:
        """The ``windows`` row's measured window and time-average queries in flight."""
        window, plan = self.window, self.plan
        end = np.minimum(np.where(np.isfinite(self.reply), self.reply, window.horizon_ms), window.horizon_ms)
        area = float(np.maximum(0.0, end - np.maximum(plan.arrival_ms, window.warmup_ms)).sum())
        window_ms = window.horizon_ms - window.warmup_ms
        return {"replication": replication, "window_s": window_ms / 1000.0, "mean_in_flight": area / window_ms}
