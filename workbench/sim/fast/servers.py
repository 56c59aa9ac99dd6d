"""Every server's run, compiled: its requests gathered from the plan in delivery order, then executed.

The plan keeps requests as routing templates plus per-request delays (:mod:`workbench.sim.routes`), and
each server's requests in the order they reach it (:class:`~workbench.sim.plan.Delivery`). For each
server this gathers what :func:`~workbench.sim.fast.server_kernel.simulate_server` reads (the time the
server reads each request: its delivery, or the end of a pause in progress; its deadline, flags and
work, stretched by the server's CPU scale), runs it, and scatters the responses back by request id. One
workspace serves every server, so a run allocates its working memory once.

Every number is computed by the same operations as the SimPy engine's (``work x scale``,
``(merge per segment x segments) x scale``), so the two agree to the bit.
"""

from __future__ import annotations

import numpy as np

from workbench.sim.fast.jit import kernel
from workbench.sim.fast.pauses import release
from workbench.sim.fast.server_kernel import simulate_server, workspace

__all__ = ["run_servers"]


@kernel
def _largest(servers: np.ndarray, offsets: np.ndarray, request: np.ndarray, query: np.ndarray,
             template: np.ndarray, query_requests: np.ndarray, template_requests: np.ndarray,
             template_segments: np.ndarray) -> tuple[int, int]:
    """The most requests, and the most segments plus requests, of any of ``servers``."""
    most_requests, most_tasks = 0, 0
    for s in servers:
        segments = 0
        for k in range(offsets[s], offsets[s + 1]):
            q, r = query[k], request[k]
            j = template_requests[template[q]] + r - query_requests[q]
            segments += template_segments[j + 1] - template_segments[j]
        n = offsets[s + 1] - offsets[s]
        most_requests, most_tasks = max(most_requests, n), max(most_tasks, segments + n)
    return most_requests, most_tasks


def run_servers(servers: np.ndarray, offsets: np.ndarray, request: np.ndarray, query: np.ndarray,
                delivered: np.ndarray, timeout_ms: np.ndarray, group_by: np.ndarray, secondary: np.ndarray,
                threads: np.ndarray, query_segments: np.ndarray, template: np.ndarray, query_requests: np.ndarray,
                template_requests: np.ndarray, template_segments: np.ndarray, position: np.ndarray,
                work: np.ndarray, cpu_scale: np.ndarray, prepare_ms: float, merge_each: float,
                pauses: tuple[np.ndarray, ...], crashes: tuple[np.ndarray, ...], cfg: np.ndarray,
                limits: np.ndarray, horizon: float, out: tuple[np.ndarray, ...]) -> None:
    """Run each of ``servers``; write every request's response (by request id) and each server's meters.

    Requests of server ``s`` are ``offsets[s]:offsets[s + 1]`` of ``request``, ``query`` and ``delivered``
    (delivery order). Per query: ``timeout_ms``, ``group_by``, ``secondary``, ``threads`` (its
    ``maxExecutionThreads``, -1 when unset) and its kept segments' ``work`` (``query_segments`` CSR).
    Templates: ``template_requests`` CSR by template; per template request its segment positions
    (``template_segments`` CSR into ``position``). ``pauses``: offsets by server, starts, ends, run time
    at each start, paused time before it, and each server's total; ``crashes``: offsets, starts, ends.
    ``out``: per request its response time, code, whether it was sent, paused flag and queue wait; per
    server its meters (rows of 5) and core time.
    """
    most_requests, most_tasks = _largest(servers, offsets, request, query, template, query_requests,
                                         template_requests, template_segments)
    m = most_requests
    inputs = (np.empty(m), np.empty(m), np.empty(m), np.empty(m), np.empty(m), np.empty(m, np.bool_),
              np.empty(m, np.bool_), np.empty(m, np.int64), np.empty(m + 1, np.int64), np.empty(most_tasks))
    outputs = (np.empty(m), np.empty(m, np.int64), np.empty(m, np.bool_), np.empty(m), np.empty(m, np.bool_))
    _run(servers, offsets, request, query, delivered, timeout_ms, group_by, secondary, threads, query_segments,
         template, query_requests, template_requests, template_segments, position, work, cpu_scale, prepare_ms,
         merge_each, pauses, crashes, cfg, limits, horizon, workspace(most_requests, most_tasks), inputs, outputs,
         out)


@kernel
def _run(servers: np.ndarray, offsets: np.ndarray, request: np.ndarray, query: np.ndarray, delivered: np.ndarray,
         timeout_ms: np.ndarray, group_by: np.ndarray, secondary: np.ndarray, threads: np.ndarray,
         query_segments: np.ndarray, template: np.ndarray, query_requests: np.ndarray,
         template_requests: np.ndarray, template_segments: np.ndarray, position: np.ndarray, work: np.ndarray,
         cpu_scale: np.ndarray, prepare_ms: float, merge_each: float, pauses: tuple[np.ndarray, ...],
         crashes: tuple[np.ndarray, ...], cfg: np.ndarray, limits: np.ndarray, horizon: float,
         ws: tuple[np.ndarray, ...], inputs: tuple[np.ndarray, ...], outputs: tuple[np.ndarray, ...],
         out: tuple[np.ndarray, ...]) -> None:
    pause_offsets, pause_start, pause_end, pause_run, pause_before, pause_total = pauses
    crash_offsets, crash_start, crash_end = crashes
    wi, wf, wb, wt, wq_at = ws
    at, read_at, timeouts, prepare, merge, gb, sec, option, seg_start, seg_work = inputs
    out_at, out_code, out_paused, out_wait, out_responded = outputs
    resp_at, code, responded, paused, wait, meters, busy = out
    for s in servers:
        lo, hi = offsets[s], offsets[s + 1]
        n = hi - lo
        p0, p1 = pause_offsets[s], pause_offsets[s + 1]
        ps, pe, pr, pp = pause_start[p0:p1], pause_end[p0:p1], pause_run[p0:p1], pause_before[p0:p1]
        scale = cpu_scale[s]
        cursor = 0
        for i in range(n):
            q, r, d = query[lo + i], request[lo + i], delivered[lo + i]
            at[i] = d
            read_at[i] = release(ps, pe, d)
            timeouts[i] = timeout_ms[q]
            gb[i], sec[i], option[i] = group_by[q], secondary[q], threads[q]
            j = template_requests[template[q]] + r - query_requests[q]
            a, b = template_segments[j], template_segments[j + 1]
            prepare[i] = prepare_ms * scale
            merge[i] = (0.0 if group_by[q] else merge_each * (b - a)) * scale
            seg_start[i] = cursor
            base = query_segments[q]
            for k in range(a, b):
                seg_work[cursor] = work[base + position[k]] * scale
                cursor += 1
        seg_start[n] = cursor
        c0, c1 = crash_offsets[s], crash_offsets[s + 1]
        counts, used = simulate_server(read_at, at, timeouts, prepare, merge, gb, sec, option, seg_start, seg_work,
                                       n, cfg, limits, ps, pe, pr, pp, pause_total[s], crash_start[c0:c1],
                                       crash_end[c0:c1], horizon, wi, wf, wb, wt, wq_at, out_at, out_code,
                                       out_paused, out_wait, out_responded)
        meters[s, :] = counts
        busy[s] = used
        for i in range(n):
            r = request[lo + i]
            resp_at[r], code[r], responded[r] = out_at[i], out_code[i], out_responded[i]
            paused[r], wait[r] = out_paused[i], out_wait[i]
