"""The brokers' side of every query, compiled: gather, QueryErrorCodes, reduce on the broker's cores.

Mirrors :class:`workbench.sim.gather.Gather` and :class:`workbench.sim.broker.ReduceSlots`: a query's
gather closes at the earliest of its deadline, its first failed channel and its last response (when all
arrive); what arrived by then counts. Reduces run FCFS on each broker's slots in the order gathers close.
"""

from __future__ import annotations

import math

import numpy as np

from workbench.sim.fast.jit import kernel
from workbench.sim.fast.pauses import HINTS, intersects
from workbench.sim.fast.sorting import stable_order
from workbench.sim.records import CODE_BITS

__all__ = ["CODE_BITS", "gather_and_reduce"]

_INF = math.inf


@kernel
def _bit(code: int) -> int:
    if code == 211:
        return 1
    if code == 240:
        return 2
    if code == 250:
        return 4
    return 0


def gather_and_reduce(arrival: np.ndarray, timeout: np.ndarray, broker: np.ndarray, template: np.ndarray,
                      unavailable: np.ndarray, query_requests: np.ndarray, template_requests: np.ndarray,
                      server: np.ndarray, rows: np.ndarray, entry_of: np.ndarray, resp_at: np.ndarray,
                      code: np.ndarray, responded: np.ndarray, delays: np.ndarray, paused: np.ndarray, wait: np.ndarray,
                      pause_start: np.ndarray, pause_end: np.ndarray, pause_offset: np.ndarray,
                      overhead: float, per_server: float, per_row: float, slots: np.ndarray, horizon: float,
                      after: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per query: the reply time (inf when not before the horizon), the code mask, whether a queried server
    paused while holding it, and the longest queue wait among the responses counted.

    Query ``q``'s requests are ``query_requests[q]:query_requests[q + 1]``, routed by its template
    (``template_requests`` CSR into ``server`` and ``rows``, per template ``unavailable`` segments);
    request ``r``'s response is entry ``entry_of[r]`` of ``resp_at``...``wait`` and travels back for
    ``delays[2 r + 1]``. ``slots[b]`` is broker ``b``'s reduce capacity, each slot kept ``after`` ms past a
    reply (``cluster.broker.off_path_ms``); pauses of server ``s`` are
    ``pause_start[pause_offset[s]:pause_offset[s + 1]]`` (and ``pause_end``).
    """
    nq = len(arrival)
    closed, reduce_work, qwait = np.empty(nq), np.empty(nq), np.empty(nq)
    mask, delayed = np.empty(nq, dtype=np.int8), np.empty(nq, dtype=np.bool_)
    _gather(arrival, timeout, template, unavailable, query_requests, template_requests, server, rows, entry_of,
            resp_at, code, responded, delays, paused, wait, pause_start, pause_end, pause_offset, overhead, per_server,
            per_row, closed, mask, delayed, qwait, reduce_work)
    reply = np.full(nq, _INF)
    _reduce(stable_order(closed), closed, reduce_work, broker, slots, horizon, after, reply)
    return reply, mask, delayed, qwait


@kernel
def _gather(arrival: np.ndarray, timeout: np.ndarray, template: np.ndarray, unavailable: np.ndarray,
            query_requests: np.ndarray, template_requests: np.ndarray, server: np.ndarray, rows: np.ndarray,
            entry_of: np.ndarray, resp_at: np.ndarray, code: np.ndarray, responded: np.ndarray, delays: np.ndarray,
            paused: np.ndarray, wait: np.ndarray, pause_start: np.ndarray, pause_end: np.ndarray,
            pause_offset: np.ndarray, overhead: float, per_server: float, per_row: float, closed: np.ndarray,
            mask: np.ndarray, delayed: np.ndarray, qwait: np.ndarray, reduce_work: np.ndarray) -> None:
    """Each query's gather: when it closed, its code mask, GC flag, queue wait and reduce work."""
    hints = np.zeros((len(pause_offset), HINTS), np.int64)  # per server: where its last look-up ended
    for q in range(len(arrival)):
        a, b = query_requests[q], query_requests[q + 1]
        first = template_requests[template[q]] - a  # request r's template request is first + r
        deadline = arrival[q] + timeout[q]
        if a == b:
            closed[q] = arrival[q]
        else:
            first_fail, last, all_known = _INF, -_INF, True
            for r in range(a, b):
                e = entry_of[r]
                if not responded[e]:
                    all_known = False
                    continue
                back = resp_at[e] + delays[2 * r + 1]
                if code[e] == -1:
                    first_fail = min(first_fail, back)
                else:
                    last = max(last, back)
            close = deadline
            if first_fail < deadline:  # at the deadline itself the deadline's timer runs first
                close = first_fail
            if all_known and first_fail == _INF and last <= deadline:
                close = min(close, last)
            closed[q] = close
        close = closed[q]
        answered, ok_rows, failed, m, w, pz = 0, 0, False, 0, 0.0, False
        for r in range(a, b):
            e = entry_of[r]
            back = resp_at[e] + delays[2 * r + 1]
            if responded[e] and code[e] != -1 and back <= close:
                answered += 1
                m |= _bit(code[e])
                w = max(w, wait[e])
                pz = pz or paused[e]
                if code[e] == 0:
                    ok_rows += rows[first + r]
                continue
            if responded[e] and code[e] == -1 and back == close and back < deadline:
                failed = True
            # no DataTable from this server: was it paused while the broker waited for it?
            s = server[first + r]
            lo, hi = pause_offset[s], pause_offset[s + 1]
            if hi > lo and intersects(pause_start[lo:hi], pause_end[lo:hi], arrival[q], close, hints[s]):
                pz = True
        if failed:
            m |= 16
        if answered < b - a:
            m |= 32
        if unavailable[template[q]] > 0:
            m |= 8
        mask[q], qwait[q], delayed[q] = m, w, pz
        reduce_work[q] = overhead + per_server * answered + per_row * ok_rows


@kernel
def _reduce(order: np.ndarray, closed: np.ndarray, reduce_work: np.ndarray, broker: np.ndarray, slots: np.ndarray,
            horizon: float, after: float, reply: np.ndarray) -> None:
    """Reduces FCFS on each broker's slots, in the order the gathers close (``order``: ties by arrival); a slot
    stays busy ``after`` ms past each reply (:meth:`workbench.sim.broker.ReduceSlots.run`'s decision)."""
    free = np.zeros((len(slots), int(slots.max()) if len(slots) else 1))
    for b_ in range(len(slots)):
        free[b_, slots[b_]:] = _INF
    for k in range(len(order)):
        q = order[k]
        if closed[q] >= horizon:
            break
        b_ = broker[q]
        j = np.argmin(free[b_])
        start = max(closed[q], free[b_, j])
        end = start + reduce_work[q]
        free[b_, j] = end + after
        if end < horizon:
            reply[q] = end
