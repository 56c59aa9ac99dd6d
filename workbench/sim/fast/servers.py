"""Every server's run, compiled: its requests gathered from the plan in delivery order, then executed.

The plan keeps requests as routing templates plus per-request delays (:mod:`workbench.sim.routes`), and
each server's requests in the order they reach it (:class:`~workbench.sim.plan.Delivery`: *entries*,
server by server). For each server this gathers what
:func:`~workbench.sim.fast.server_kernel.simulate_server` reads (the time the server reads each request:
its delivery, or the end of a pause in progress; its deadline, flags and work, stretched by the server's
CPU scale) and runs it. Responses are written by entry, so each server writes one contiguous stretch.

Segment work is laid out by entry first, in blocks of queries: a query's segments sit side by side in
the plan, one per server, so reading them server after server would fetch every cache line once per
server. Every number is computed by the same operations as the SimPy engine's (``work x scale``,
``(merge per segment x segments) x scale``), so the two agree to the bit.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from workbench.sim.decisions import slow_scale
from workbench.sim.fast.jit import kernel
from workbench.sim.fast.pauses import HINTS, release
from workbench.sim.fast.server_kernel import set_request, simulate_server, workspace
from workbench.sim.fast.server_settings import ServerSettings

__all__ = ["by_entry", "run_servers"]

#: Queries per block when segment work is laid out by entry (their segments stay in cache meanwhile).
_BLOCK = 4096


def by_entry(delivery: tuple[np.ndarray, ...], queries: tuple[np.ndarray, ...], templates: tuple[np.ndarray, ...],
             work: np.ndarray, cpu_scale: np.ndarray, slow: tuple[np.ndarray, ...]
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Segment work by delivery entry (CSR offsets and work, stretched by each server's CPU scale and slow
    windows), and the entry of every request (the inverse of the delivery order).

    ``delivery``: offsets by server, then per entry its request, query and delivery time. ``queries``: per
    query its timeout, group-by and secondary flags, ``maxExecutionThreads``, kept-segment offsets into
    ``work`` (CSR), template and request offsets (CSR). ``templates``: request offsets by template (CSR),
    then per template request its segment offsets (CSR) into the segment positions. ``slow``: each
    server's slow windows (:class:`~workbench.sim.failures.SlowWindows`: offsets, starts, ends, factors).
    """
    offsets, request = delivery[0], delivery[1]
    seg_offsets = np.empty(int(offsets[-1]) + 1, dtype=np.int64)
    _segment_offsets(delivery, queries, templates, seg_offsets)
    seg_work = np.empty(int(seg_offsets[-1]))
    entry_of = np.empty(len(request), dtype=np.int64)
    _fill_by_entry(delivery, queries, templates, work, cpu_scale, slow, seg_offsets, seg_work, entry_of, _BLOCK)
    return seg_offsets, seg_work, entry_of


@kernel
def _segment_offsets(delivery: tuple[np.ndarray, ...], queries: tuple[np.ndarray, ...],
                     templates: tuple[np.ndarray, ...], seg_offsets: np.ndarray) -> None:
    _, request, query, _ = delivery
    template, query_requests = queries[5], queries[6]
    template_requests, template_segments, _ = templates
    seg_offsets[0] = 0
    for k in range(len(request)):
        q, r = query[k], request[k]
        j = template_requests[template[q]] + r - query_requests[q]
        seg_offsets[k + 1] = seg_offsets[k] + template_segments[j + 1] - template_segments[j]


@kernel
def _fill_by_entry(delivery: tuple[np.ndarray, ...], queries: tuple[np.ndarray, ...],
                   templates: tuple[np.ndarray, ...], work: np.ndarray, cpu_scale: np.ndarray,
                   slow: tuple[np.ndarray, ...], seg_offsets: np.ndarray, seg_work: np.ndarray, entry_of: np.ndarray,
                   block: int) -> None:
    """Block by block of queries, each server's entries of those queries (entries are nearly in query
    order; one that is not waits for a later block, and every entry is filled once, in order)."""
    offsets, request, query, delivered = delivery
    slow_offsets, slow_start, slow_end, slow_factor = slow
    query_segments, template, query_requests = queries[4], queries[5], queries[6]
    template_requests, template_segments, position = templates
    servers = len(offsets) - 1
    cursor = offsets[:-1].copy()
    until = 0
    left = True
    while left:
        until += block
        left = False
        for s in range(servers):
            k, end, base_scale = cursor[s], offsets[s + 1], cpu_scale[s]
            w0, w1 = slow_offsets[s], slow_offsets[s + 1]
            while k < end and query[k] < until:
                q, r = query[k], request[k]
                scale = slow_scale(base_scale, delivered[k], slow_start[w0:w1], slow_end[w0:w1], slow_factor[w0:w1])
                entry_of[r] = k
                j = template_requests[template[q]] + r - query_requests[q]
                c, base = seg_offsets[k], query_segments[q]
                for p in range(template_segments[j], template_segments[j + 1]):
                    seg_work[c] = work[base + position[p]] * scale
                    c += 1
                k += 1
            cursor[s] = k
            left = left or k < end


def _groups(servers: np.ndarray, load: np.ndarray, parts: int) -> list[np.ndarray]:
    """``servers`` split into up to ``parts`` groups of about equal ``load`` (largest first, to the lightest)."""
    groups: list[list[int]] = [[] for _ in range(max(1, min(parts, len(servers))))]
    totals = [0] * len(groups)
    for s in sorted(servers.tolist(), key=lambda s: -int(load[s])):
        k = totals.index(min(totals))
        groups[k].append(s)
        totals[k] += int(load[s])
    return [np.array(sorted(g), dtype=np.int64) for g in groups if g]


def run_servers(servers: np.ndarray, delivery: tuple[np.ndarray, ...], queries: tuple[np.ndarray, ...],
                segments: tuple[np.ndarray, np.ndarray], cpu_scale: np.ndarray, slow: tuple[np.ndarray, ...],
                prepare_ms: np.ndarray, merge_each: np.ndarray, off_path_ms: np.ndarray,
                pauses: tuple[np.ndarray, ...],
                gc_pauses: tuple[np.ndarray, ...], crashes: tuple[np.ndarray, ...], cfg: ServerSettings,
                horizon: float, out: tuple[np.ndarray, ...], parallel: int = 1) -> None:
    """Run each of ``servers``; write every entry's response and each server's meters.

    ``delivery`` and ``queries`` as for :func:`by_entry`; ``segments``: its segment offsets and work by
    entry; ``slow``: as for :func:`by_entry`. ``pauses``: each server's stops (GC pauses and wedges: what it
    runs on), offsets by server, starts, ends, run time at each start, paused time before it, and each
    server's total; ``gc_pauses``: offsets, starts and ends of the GC pauses alone (a response's paused
    flag); ``crashes``: offsets, starts, ends. ``out``: per entry its response time,
    code, whether it was sent, paused flag and queue wait; per server its meters (rows of 5) and core time.
    ``cfg``: the servers' settings (every server of a run is configured alike). ``prepare_ms``, ``merge_each``,
    ``off_path_ms``: per query, its runner work, its merge work per segment and the CPU it leaves off its path.

    Servers are independent, so ``parallel`` threads may run them (each group with its own working
    memory, writing its own servers' entries): the numbers are the same for any count.
    """
    offsets, seg_offsets = delivery[0], segments[0]
    load = np.diff(offsets)
    groups = _groups(servers, load, parallel)
    args = (delivery, queries, segments, cpu_scale, slow, prepare_ms, merge_each, off_path_ms, pauses, gc_pauses,
            crashes, cfg, horizon, out)
    if len(groups) == 1:
        _run_group(groups[0], load, np.diff(seg_offsets[offsets]), *args)
        return
    with ThreadPoolExecutor(len(groups)) as pool:
        done = [pool.submit(_run_group, g, load, np.diff(seg_offsets[offsets]), *args) for g in groups]
        for future in done:
            future.result()


def _run_group(servers: np.ndarray, load: np.ndarray, segments_of: np.ndarray, delivery: tuple[np.ndarray, ...],
               queries: tuple[np.ndarray, ...], segments: tuple[np.ndarray, np.ndarray], cpu_scale: np.ndarray,
               slow: tuple[np.ndarray, ...], prepare_ms: np.ndarray, merge_each: np.ndarray, off_path_ms: np.ndarray,
               pauses: tuple[np.ndarray, ...],
               gc_pauses: tuple[np.ndarray, ...], crashes: tuple[np.ndarray, ...], cfg: ServerSettings,
               horizon: float, out: tuple[np.ndarray, ...]) -> None:
    """:func:`run_servers` for one group, with its own working memory (sized for its largest server)."""
    m = int(load[servers].max())
    tasks = int((load[servers] + segments_of[servers]).max())
    _run(servers, delivery, queries, segments, cpu_scale, slow, prepare_ms, merge_each, off_path_ms, pauses,
         gc_pauses, crashes, cfg, horizon, workspace(m, tasks), out)


@kernel
def _run(servers: np.ndarray, delivery: tuple[np.ndarray, ...], queries: tuple[np.ndarray, ...],
         segments: tuple[np.ndarray, np.ndarray], cpu_scale: np.ndarray, slow: tuple[np.ndarray, ...],
         prepare_ms: np.ndarray, merge_each: np.ndarray, off_path_ms: np.ndarray, pauses: tuple[np.ndarray, ...],
         gc_pauses: tuple[np.ndarray, ...],
         crashes: tuple[np.ndarray, ...], cfg: ServerSettings, horizon: float, ws: tuple[np.ndarray, ...],
         out: tuple[np.ndarray, ...]) -> None:
    offsets, _, query, delivered = delivery
    timeout_ms, group_by, secondary, exec_threads = queries[0], queries[1], queries[2], queries[3]
    seg_offsets, seg_work = segments
    pause_offsets, pause_start, pause_end, pause_run, pause_before, pause_total = pauses
    gc_offsets, gc_start, gc_end = gc_pauses
    slow_offsets, slow_start, slow_end, slow_factor = slow
    crash_offsets, crash_start, crash_end = crashes
    rf, ri, ti, t_queued, queues = ws
    resp_at, code, responded, paused, wait, meters, busy = out
    hint = np.zeros(HINTS, np.int64)
    for s in servers:
        hint[:] = 0
        lo, hi = offsets[s], offsets[s + 1]
        p0, p1 = pause_offsets[s], pause_offsets[s + 1]
        ps, pe, pr, pp = pause_start[p0:p1], pause_end[p0:p1], pause_run[p0:p1], pause_before[p0:p1]
        g0, g1 = gc_offsets[s], gc_offsets[s + 1]
        w0, w1 = slow_offsets[s], slow_offsets[s + 1]
        base_scale = cpu_scale[s]
        for i in range(hi - lo):
            q, d = query[lo + i], delivered[lo + i]
            scale = slow_scale(base_scale, d, slow_start[w0:w1], slow_end[w0:w1], slow_factor[w0:w1])
            first, count = seg_offsets[lo + i], seg_offsets[lo + i + 1] - seg_offsets[lo + i]
            merge = (0.0 if group_by[q] else merge_each[q] * count) * scale
            set_request(rf, ri, i, release(ps, pe, d, hint), d, timeout_ms[q], prepare_ms[q] * scale, merge, first,
                        count, exec_threads[q], group_by[q], secondary[q], off_path_ms[q] * scale)
        c0, c1 = crash_offsets[s], crash_offsets[s + 1]
        counts, used = simulate_server(rf, ri, seg_work, hi - lo, cfg, ps, pe, pr, pp, pause_total[s],
                                       gc_start[g0:g1], gc_end[g0:g1],
                                       crash_start[c0:c1], crash_end[c0:c1], horizon, ti, t_queued, queues,
                                       resp_at[lo:hi], code[lo:hi], paused[lo:hi], wait[lo:hi], responded[lo:hi])
        meters[s, :] = counts
        busy[s] = used
