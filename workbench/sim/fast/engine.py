"""The compiled engine: a replication's plan executed server by server, then broker by broker.

When nothing that happens in time changes what is sent to a server (no adaptive selection reading
latencies, no broker result cache whose hits depend on when earlier queries finished), every request a
server will receive is known from the plan: when it arrives, what it asks. Each server then runs on its
own (:func:`~workbench.sim.fast.server_kernel.simulate_server`, the Python server's state machine
compiled), and the brokers' gathers and reduces follow from the responses
(:func:`~workbench.sim.fast.broker_kernel.gather_and_reduce`). The records are the SimPy engine's, to
rounding: the SimPy engine is the reference, and a disagreement is a bug here.

:func:`coverage` says whether a scenario is inside that domain and, if not, why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.scenario import Scenario
from workbench.sim.broker import reduce_slots
from workbench.sim.caches import ModelSegmentCache
from workbench.sim.fast.broker_kernel import CODE_BITS, gather_and_reduce
from workbench.sim.fast.server_kernel import SCHED_BINARY, SCHED_BOUNDED, SCHED_FCFS, simulate_server
from workbench.sim.layout import Layout
from workbench.sim.model import Window
from workbench.sim.pauses import PauseSchedule
from workbench.sim.plan import Plan, expand
from workbench.sim.records import QUERY_COLUMNS, failure_rows, pause_rows, server_row
from workbench.sim.server import ExecutionModel

__all__ = ["FastRun", "coverage", "run_fast"]

_KINDS = {"fcfs": SCHED_FCFS, "workload": SCHED_FCFS, "bounded_fcfs": SCHED_BOUNDED, "tokenbucket": SCHED_BOUNDED,
          "binary_workload": SCHED_BINARY}
_CODES = {bit: code for code, bit in CODE_BITS.items()}
#: The ``error_codes`` text of every code mask.
_CODE_TEXT = np.array([",".join(str(_CODES[b]) for b in sorted(_CODES, key=lambda b: _CODES[b]) if m >> b & 1)
                       for m in range(64)], dtype=object)


def coverage(sc: Scenario) -> str | None:
    """``None`` when the compiled engine reproduces the SimPy engine exactly for ``sc``; else why not."""
    broker = sc.cluster.broker
    if broker.adaptive_selection:
        return ("adaptive server selection routes each query from the latencies of earlier ones "
                "(timing feeds back into routing)")
    if broker.result_cache.enabled:
        return ("the broker result cache answers a query from earlier queries' results, which depends on when "
                "they finished (timing decides what is sent to the servers)")
    return None


@dataclass
class FastRun:
    """One replication's records, as the SimPy engine's :class:`~workbench.sim.model.ClusterModel` gives them."""

    queries: pd.DataFrame
    servers: list[dict[str, Any]]
    pauses: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    window: dict[str, Any]


def _segment_cache_pass(sc: Scenario, layout: Layout, plan: Plan, work: np.ndarray) -> np.ndarray:
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
        segs_of_query = plan.segment[plan.query_segments[q]:plan.query_segments[q + 1]]
        base = int(plan.query_segments[q])
        for r in range(int(plan.query_requests[q]), int(plan.query_requests[q + 1])):
            cache = caches[int(plan.server[r])]
            for pos in plan.request_position[plan.request_segments[r]:plan.request_segments[r + 1]]:
                if cache.hit(query, names[int(segs_of_query[pos])], at):
                    work[base + int(pos)] = 0.0
    return np.array([cache.hits for cache in caches], dtype=np.int64)


def _config(sc: Scenario) -> tuple[np.ndarray, np.ndarray]:
    q = sc.cluster.server.query
    cfg = np.array([q.cores, q.runner_threads, q.worker_threads,
                    int(ExecutionModel(sc.cluster.server.execution) is ExecutionModel.FCFS_THREADS),
                    _KINDS[q.scheduler], q.max_pending_per_group, q.hard_limit, q.max_threads_per_query,
                    q.secondary_runner_threads, q.secondary_max_pending, q.max_execution_threads,
                    q.default_execution_threads], dtype=np.int64)
    return cfg, np.array([q.query_deadline_s * 1000.0, q.secondary_timeout_s * 1000.0])


def _schedule_arrays(p: PauseSchedule) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    return (np.ascontiguousarray(p.starts, dtype=float), np.ascontiguousarray(p.ends, dtype=float),
            np.ascontiguousarray(p.run_at_start, dtype=float), np.ascontiguousarray(p.paused_before, dtype=float),
            float((p.ends - p.starts).sum()) if len(p) else 0.0)


@dataclass
class _Requests:
    """Every request of the plan with what its server needs (work after the segment cache)."""

    query: np.ndarray
    arrival: np.ndarray  # when the server reads it (after a pause in progress)
    delivered: np.ndarray
    seg_start: np.ndarray
    seg_work: np.ndarray


def _requests(plan: Plan, work: np.ndarray) -> _Requests:
    req_query = plan.request_query
    delivered = plan.arrival_ms[req_query] + plan.out_delay
    arrival = delivered.copy()
    for s, p in enumerate(plan.pauses):
        if len(p):
            mine = plan.server == s
            starts, ends = p.starts, p.ends
            t = delivered[mine]
            i = np.searchsorted(starts, t, side="right") - 1
            inside = (i >= 0) & (t < ends[np.maximum(i, 0)])
            arrival[mine] = np.where(inside, ends[np.maximum(i, 0)], t)
    positions = plan.request_position + np.repeat(plan.query_segments[req_query],
                                                  np.diff(plan.request_segments))
    seg_scale = np.repeat(plan.cpu_scale[plan.server], np.diff(plan.request_segments))
    return _Requests(req_query, arrival, delivered, plan.request_segments, work[positions] * seg_scale)


def run_fast(sc: Scenario, layout: Layout, plan: Plan, window: Window, replication: int) -> FastRun:
    """Execute ``plan`` with the compiled kernels; the records of one replication."""
    work = plan.work.copy()
    hits = _segment_cache_pass(sc, layout, plan, work)
    req = _requests(plan, work)
    cfg, limits = _config(sc)
    n_req = len(plan.server)
    resp_at, code = np.full(n_req, np.inf), np.zeros(n_req, dtype=np.int64)
    paused, wait = np.zeros(n_req, dtype=bool), np.zeros(n_req)
    responded = np.zeros(n_req, dtype=bool)
    req_query = req.query
    group_by, secondary = plan.group_by[req_query], plan.secondary[req_query]
    option, timeout = plan.execution_threads[req_query].astype(np.int64), plan.timeout_ms[req_query]
    rows: list[dict[str, Any]] = []
    for s in range(layout.num_servers):
        mine = np.flatnonzero(plan.server == s)
        mine = mine[np.lexsort((mine, req.delivered[mine], req.arrival[mine]))]
        seg_start, row, local = expand(np.diff(req.seg_start)[mine])
        seg_work = req.seg_work[req.seg_start[mine][row] + local]
        ps, pe, pr, pp, ptotal = _schedule_arrays(plan.pauses[s])
        crashes = plan.crashes[s]
        scale = plan.cpu_scale[s]
        out = simulate_server(req.arrival[mine], req.delivered[mine], timeout[mine], plan.prepare[mine] * scale,
                              plan.merge[mine] * scale, group_by[mine], secondary[mine], option[mine], seg_start,
                              np.ascontiguousarray(seg_work, dtype=float), cfg, limits, ps, pe, pr, pp, ptotal,
                              np.ascontiguousarray(crashes.starts, dtype=float),
                              np.ascontiguousarray(crashes.ends, dtype=float), window.horizon_ms)
        resp_at[mine], code[mine], paused[mine], wait[mine], responded[mine] = out[:5]
        meters, busy = out[5], out[6]
        rows.append(server_row(replication, layout.servers[s], meters[0], meters[1], meters[2], busy,
                               sc.cluster.server.cores, window.horizon_ms, meters[4], hits[s], plan.heaps[s]))
    pause_offset = np.concatenate(([0], np.cumsum([len(p) for p in plan.pauses]))).astype(np.int64)
    pause_start = np.concatenate([p.starts for p in plan.pauses]) if plan.pauses else np.empty(0)
    pause_end = np.concatenate([p.ends for p in plan.pauses]) if plan.pauses else np.empty(0)
    broker = sc.cluster.broker
    slots = np.full(sc.cluster.brokers, reduce_slots(broker), dtype=np.int64)
    reply, mask, delayed, qwait, _ = gather_and_reduce(
        plan.arrival_ms, plan.timeout_ms, plan.broker.astype(np.int64), plan.unavailable, plan.query_requests,
        plan.server.astype(np.int64), resp_at, code, responded, plan.back_delay, paused, wait, plan.rows,
        np.ascontiguousarray(pause_start, dtype=float), np.ascontiguousarray(pause_end, dtype=float), pause_offset,
        broker.overhead_ms, broker.reduce_ms_per_server, broker.reduce_ms_per_row, slots, window.horizon_ms)
    return FastRun(_queries(plan, window, reply, mask, delayed, qwait, replication), rows,
                   pause_rows(layout.servers, plan.pauses, replication),
                   failure_rows(layout.servers, plan.crashes, replication), _window(plan, window, reply, replication))


def _queries(plan: Plan, window: Window, reply: np.ndarray, mask: np.ndarray, delayed: np.ndarray,
             qwait: np.ndarray, replication: int) -> pd.DataFrame:
    keep = np.flatnonzero((plan.arrival_ms >= window.warmup_ms) & np.isfinite(reply))
    n_req = np.diff(plan.query_requests)[keep]
    req_query = plan.request_query
    segs = np.bincount(req_query, weights=np.diff(plan.request_segments), minlength=plan.num_queries)[keep] \
        if len(plan.server) else np.zeros(len(keep))
    pruned = np.array([p.pruned for p in plan.plans], dtype=np.int32)[plan.plan_index[keep]]
    return pd.DataFrame({
        "replication": np.full(len(keep), replication, dtype=np.int32),
        "query_id": keep.astype(np.int64),
        "arrival_s": plan.arrival_ms[keep] / 1000.0,
        "latency_ms": reply[keep] - plan.arrival_ms[keep],
        "servers_queried": n_req.astype(np.int32),
        "segments_queried": segs.astype(np.int32),
        "segments_pruned": pruned,
        "partial": mask[keep] != 0,
        "gc_delayed": delayed[keep],
        "queue_wait_ms": qwait[keep],
        "cache_hit": pd.Series([""] * len(keep), dtype="string"),
        "error_codes": pd.Series(_CODE_TEXT[mask[keep]], dtype="string"),
    }, columns=list(QUERY_COLUMNS))


def _window(plan: Plan, window: Window, reply: np.ndarray, replication: int) -> dict[str, Any]:
    end = np.minimum(np.where(np.isfinite(reply), reply, window.horizon_ms), window.horizon_ms)
    area = float(np.maximum(0.0, end - np.maximum(plan.arrival_ms, window.warmup_ms)).sum())
    window_ms = window.horizon_ms - window.warmup_ms
    return {"replication": replication, "window_s": window_ms / 1000.0, "mean_in_flight": area / window_ms}
