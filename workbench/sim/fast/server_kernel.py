"""One Pinot server's whole run, compiled: :class:`workbench.sim.server.PinotServer` step for step.

The Python server is the reference: this kernel mirrors its state machine (the scheduler, runner and
worker pools, the action stack that orders every consequence of an event, the processor-sharing CPU
with its checkpoints, pauses and crashes) operation for operation, so the two compute the same bits.
What the server decides at each event (admission, dispatch, deadlines, the processor-sharing
arithmetic) is not mirrored but shared: both call the functions of :mod:`workbench.sim.decisions`.
It runs one server over all its requests at once, in the order the SimPy engine delivers them, which
is exact whenever nothing that happens in time changes what is sent to the server (the fast engine's
coverage, :mod:`workbench.sim.fast.engine`).

Its configuration is a :class:`~workbench.sim.fast.server_settings.ServerSettings`, read by field name.
The server's scalars live in two small arrays (``I`` integers, ``F`` floats, indexed by the constants
below) so that the pieces can be separate compiled functions. Each request is a row of two tables (``RF``
floats, ``RI`` integers), each task a row of one (``TI``): a row sits in one or two cache lines, and the
compiled code keeps one base address per table instead of one per field (with some thirty arrays it ran
out of registers and reloaded addresses from the stack at every access). Codes: 0, 211, 240, 250, or -1
(failed).
"""

from __future__ import annotations

import math

import numpy as np

from workbench.sim.decisions import (
    STEP_DONE,
    STEP_TIMED_OUT,
    admission_code,
    checkpoint,
    group_can_start,
    is_due,
    queue_expired,
    reservation,
    share,
    start_code,
    step,
    task_count,
    tasks_done_code,
)
from workbench.sim.fast.jit import helper, kernel
from workbench.sim.fast.pauses import HINTS, finish, intersects, release, run_time
from workbench.sim.fast.server_settings import SCHED_BINARY, SCHED_BOUNDED, SCHED_FCFS, ServerSettings

__all__ = ["advance_server", "finish_server", "heap_pop", "heap_push", "server_state", "set_request", "simulate_server",
           "workspace"]

_DISPATCH_RUNNERS, _RUNNER_WORK, _DISPATCH_WORKERS, _STEP, _FINISHED, _RUNNER_DONE = 0, 1, 2, 3, 4, 5
_PREPARE, _SEGMENT, _MERGE, _OFF_PATH = 0, 1, 2, 3
_INF = math.inf

# integer state
(I_RUNNERS_BUSY, I_WORKERS_BUSY, I_F_HEAD, I_F_LEN, I_G_HEAD, I_G_LEN, I_G_RESERVED, I_G_RUNNING,
 I_WQ_HEAD, I_WQ_LEN, I_HN, I_TN, I_SEQ, I_TASKS, I_G_MAX_RUNNING, I_G_MAX_PENDING, I_CRASH, I_NEXT,
 I_CPU_CHANGED) = range(19)
# float state
F_T0, F_V0, F_BUSY, F_G_DEADLINE, F_CPU_AT, F_NEXT = 0, 1, 2, 3, 4, 5
#: A request's columns: floats (``RF``: when the server reads it, when it was delivered, its timeout, its
#: runner work before and after the fan-out, when a runner took it, its longest task wait, the CPU it leaves off
#: its path after the response) ...
RF_ARRIVAL, RF_DELIVERED, RF_TIMEOUT, RF_PREPARE, RF_MERGE, RF_STARTED, RF_TASK_WAIT, RF_OFF_PATH = range(8)
RF = 8
#: ... and integers (``RI``: its first segment in the work array, segments, ``maxExecutionThreads``, flags,
#: the next segment to take, tasks not done, permits reserved, timed out, held by the server).
(RI_SEG_START, RI_NSEG, RI_OPTION, RI_GROUP_BY, RI_SECONDARY, RI_NEXT_SEGMENT, RI_TASKS_LEFT, RI_RESERVED,
 RI_TIMED_OUT, RI_HELD) = range(10)
RI = 10
#: A task's columns: its request, its next own segment and its stride (``fcfs_threads``).
TI_REQ, TI_POS, TI_STRIDE = range(3)
TI = 3


@helper
def heap_push(keys: np.ndarray, seqs: np.ndarray, kinds: np.ndarray, refs: np.ndarray, size: int,
             key: float, seq: int, kind: int, ref: int) -> int:
    i = size
    keys[i], seqs[i], kinds[i], refs[i] = key, seq, kind, ref
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] < keys[i] or (keys[parent] == keys[i] and seqs[parent] < seqs[i]):
            break
        keys[i], keys[parent] = keys[parent], keys[i]
        seqs[i], seqs[parent] = seqs[parent], seqs[i]
        kinds[i], kinds[parent] = kinds[parent], kinds[i]
        refs[i], refs[parent] = refs[parent], refs[i]
        i = parent
    return size + 1


@helper
def heap_pop(keys: np.ndarray, seqs: np.ndarray, kinds: np.ndarray, refs: np.ndarray, size: int) -> int:
    """Remove the root (read it first); returns the new size."""
    size -= 1
    keys[0], seqs[0], kinds[0], refs[0] = keys[size], seqs[size], kinds[size], refs[size]
    i = 0
    while True:
        left, right, smallest = 2 * i + 1, 2 * i + 2, i
        if left < size and (keys[left] < keys[smallest]
                            or (keys[left] == keys[smallest] and seqs[left] < seqs[smallest])):
            smallest = left
        if right < size and (keys[right] < keys[smallest]
                             or (keys[right] == keys[smallest] and seqs[right] < seqs[smallest])):
            smallest = right
        if smallest == i:
            return size
        keys[i], keys[smallest] = keys[smallest], keys[i]
        seqs[i], seqs[smallest] = seqs[smallest], seqs[i]
        kinds[i], kinds[smallest] = kinds[smallest], kinds[i]
        refs[i], refs[smallest] = refs[smallest], refs[i]
        i = smallest


@helper
def _checkpoint(fs: np.ndarray, ist: np.ndarray, cores: int, ps: np.ndarray, pe: np.ndarray, pr: np.ndarray,
                t: float, ph: np.ndarray) -> None:
    """``SharedCPU._checkpoint``."""
    t0 = fs[F_T0]
    if t <= t0:
        return
    run = (run_time(ps, pe, pr, t, ph) - run_time(ps, pe, pr, t0, ph)) if len(ps) > 0 else t - t0
    fs[F_V0], fs[F_BUSY] = checkpoint(fs[F_V0], fs[F_BUSY], run, ist[I_HN], ist[I_TN], cores)
    fs[F_T0] = t


@helper
def _respond(r: int, now: float, code: int, rf: np.ndarray, ps: np.ndarray, pe: np.ndarray, ph: np.ndarray,
             out_at: np.ndarray, out_code: np.ndarray, out_paused: np.ndarray, out_wait: np.ndarray,
             responded: np.ndarray) -> None:
    """``PinotServer._respond``."""
    arrival = rf[r, RF_ARRIVAL]
    out_at[r], out_code[r], responded[r] = now, code, True
    out_wait[r] = (min(rf[r, RF_STARTED], now) - arrival) + rf[r, RF_TASK_WAIT]
    dl = min(rf[r, RF_DELIVERED], arrival)
    out_paused[r] = len(ps) > 0 and intersects(ps, pe, dl, max(now, arrival), ph)


@helper
def _group_next(ist: np.ndarray, fs: np.ndarray, gq: np.ndarray, rf: np.ndarray, ri: np.ndarray, hard: int,
                mtpq: int, now: float) -> int:
    """``BoundedGroup.next`` (expired requests are no longer held); -1 when nothing is eligible."""
    while ist[I_G_LEN] > 0 and queue_expired(now, rf[gq[ist[I_G_HEAD]], RF_ARRIVAL], fs[F_G_DEADLINE]):
        ri[gq[ist[I_G_HEAD]], RI_HELD] = 0
        ist[I_G_HEAD] += 1
        ist[I_G_LEN] -= 1
    if ist[I_G_LEN] == 0 or not group_can_start(ist[I_G_RUNNING], ist[I_G_MAX_RUNNING], ist[I_G_RESERVED], hard):
        return -1
    r = gq[ist[I_G_HEAD]]
    ist[I_G_HEAD] += 1
    ist[I_G_LEN] -= 1
    ri[r, RI_RESERVED] = reservation(mtpq, ri[r, RI_NSEG], hard, ist[I_G_RESERVED])
    ist[I_G_RESERVED] += ri[r, RI_RESERVED]
    ist[I_G_RUNNING] += 1
    return int(r)


@helper
def _dispatch_secondary(ist: np.ndarray, fs: np.ndarray, gq: np.ndarray, fifo: np.ndarray, rf: np.ndarray,
                        ri: np.ndarray, hard: int, mtpq: int, now: float) -> None:
    """``BinaryWorkloadScheduler._dispatch_secondary``."""
    while True:
        r = _group_next(ist, fs, gq, rf, ri, hard, mtpq, now)
        if r < 0:
            return
        fifo[ist[I_F_HEAD] + ist[I_F_LEN]] = r
        ist[I_F_LEN] += 1


@helper
def _scheduler_next(ist: np.ndarray, fs: np.ndarray, kind: int, hard: int, mtpq: int, fifo: np.ndarray, gq: np.ndarray,
                    rf: np.ndarray, ri: np.ndarray, now: float) -> int:
    if kind == SCHED_BOUNDED:
        return _group_next(ist, fs, gq, rf, ri, hard, mtpq, now)
    if kind == SCHED_BINARY:
        _dispatch_secondary(ist, fs, gq, fifo, rf, ri, hard, mtpq, now)
    if ist[I_F_LEN] == 0:
        return -1
    r = fifo[ist[I_F_HEAD]]
    ist[I_F_HEAD] += 1
    ist[I_F_LEN] -= 1
    return int(r)


@helper
def _scheduler_finished(ist: np.ndarray, kind: int, ri: np.ndarray, r: int) -> None:
    if kind == SCHED_BOUNDED or (kind == SCHED_BINARY and ri[r, RI_SECONDARY] != 0):
        ist[I_G_RESERVED] -= ri[r, RI_RESERVED]
        ist[I_G_RUNNING] -= 1


@helper
def _next_cpu(ist: np.ndarray, fs: np.ndarray, cores: int, hk: np.ndarray, tk: np.ndarray, ps: np.ndarray,
              pe: np.ndarray, pr: np.ndarray, pp: np.ndarray, ptotal: float, ph: np.ndarray) -> float:
    """``SharedCPU.next_time``."""
    best = _INF
    t0, hn, tn = fs[F_T0], ist[I_HN], ist[I_TN]
    paused = len(ps) > 0
    if hn > 0:
        need = max(0.0, (hk[0] - fs[F_V0]) / share(hn, cores))
        best = finish(ps, pe, pr, pp, ptotal, t0, need, ph) if paused else t0 + need
    if tn > 0:
        need = max(0.0, tk[0] - (run_time(ps, pe, pr, t0, ph) if paused else t0))
        best = min(best, finish(ps, pe, pr, pp, ptotal, t0, need, ph) if paused else t0 + need)
    return best


def workspace(requests: int, tasks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Working tables for servers of up to ``requests`` requests and ``tasks`` segments plus requests:
    the request tables (``RF`` and ``RI`` columns), the task table (``TI`` columns), the tasks' queue times,
    and the queues (runner FIFO, bounded group, worker queue). Allocated once per run (by numpy, which asks
    for huge pages), reused by every server: touching fresh pages costs more than simulating a request."""
    return (np.empty((requests + 1, RF)), np.empty((requests + 1, RI), np.int64), np.empty((tasks + 1, TI), np.int64),
            np.empty(tasks + 1), np.empty((3, max(requests, tasks) + 1), np.int64))


@helper
def set_request(rf: np.ndarray, ri: np.ndarray, i: int, arrival: float, delivered: float, timeout: float,
                prepare: float, merge: float, seg_start: int, segments: int, option: int, group_by: bool,
                secondary: bool, off_path: float) -> None:
    """Row ``i`` of the request tables: what the request asks (times and work in ms) and its fresh state."""
    rf[i, RF_ARRIVAL], rf[i, RF_DELIVERED], rf[i, RF_TIMEOUT] = arrival, delivered, timeout
    rf[i, RF_PREPARE], rf[i, RF_MERGE], rf[i, RF_STARTED], rf[i, RF_TASK_WAIT] = prepare, merge, _INF, 0.0
    rf[i, RF_OFF_PATH] = off_path
    ri[i, RI_SEG_START], ri[i, RI_NSEG], ri[i, RI_OPTION] = seg_start, segments, option
    ri[i, RI_GROUP_BY], ri[i, RI_SECONDARY] = group_by, secondary
    ri[i, RI_NEXT_SEGMENT], ri[i, RI_TASKS_LEFT], ri[i, RI_RESERVED] = 0, 0, 0
    ri[i, RI_TIMED_OUT], ri[i, RI_HELD] = 0, 0


@kernel
def simulate_server(rf: np.ndarray, ri: np.ndarray, seg_work: np.ndarray, n: int, cfg: ServerSettings,
                    ps: np.ndarray, pe: np.ndarray, pr: np.ndarray, pp: np.ndarray, ptotal: float,
                    gs: np.ndarray, ge: np.ndarray, cs: np.ndarray, ce: np.ndarray, horizon: float, ti: np.ndarray,
                    t_queued: np.ndarray,
                    queues: np.ndarray, out_at: np.ndarray, out_code: np.ndarray, out_paused: np.ndarray,
                    out_wait: np.ndarray, responded: np.ndarray) -> tuple[np.ndarray, float]:
    """Run one server over its first ``n`` requests (in submit order) until ``horizon``.

    ``rf`` and ``ri``: the requests, rows set by :func:`set_request` (``RI_SEG_START`` indexes
    ``seg_work``, each segment's work). ``cfg``: the server's scheduler, pools and task counts. ``ti``,
    ``t_queued``, ``queues``: the rest of a :func:`workspace` at least this large (overwritten). ``ps``..
    ``ptotal``: the server's stops (GC pauses joined with wedges), which it runs on; ``gs``, ``ge``: its GC
    pauses alone, which set a response's paused flag; ``cs``, ``ce``: its crashes.

    Writes per request the response time, code, paused flag, queue wait and whether a response was
    sent by the horizon (``out_at``...``responded``); returns the meters (requests, scheduling timeouts,
    execution timeouts, rejected, failed) and the core time used up to the horizon.
    """
    cap = n if n == 0 else ri[n - 1, RI_SEG_START] + ri[n - 1, RI_NSEG] - ri[0, RI_SEG_START] + n
    state = server_state(n, cap, cfg)
    advance_server(state, rf, ri, seg_work, n, cfg, ps, pe, pr, pp, ptotal, gs, ge, cs, ce, horizon, _INF, ti,
                   t_queued, queues, out_at, out_code, out_paused, out_wait, responded)
    return finish_server(state, n, cfg.cores, ps, pe, pr, horizon, out_at, out_code, out_paused, out_wait,
                         responded)


#: A server's state between events (:func:`server_state`): its CPU's item heap (keys, sequence numbers,
#: kinds, references) and timer heap (the same), the scratch of one moment (due items, the action
#: stack), its integer and float scalars, pause and crash look-up hints, and its meters.
ServerState = tuple[np.ndarray, ...]


@kernel
def server_state(n: int, cap: int, cfg: ServerSettings) -> ServerState:
    """A fresh server's state, sized for up to ``n`` requests of ``cap`` segments plus requests in all."""
    static_mode = cfg.static
    # at most one work item per busy runner and worker, and (``cfg.off_path``) one per request answered whose CPU
    # off the query's path is still running; timers only for the simplification's runners
    heap = ((min(n, cfg.cores) + n + 8) if static_mode
            else (min(cfg.runner_threads, n) + min(cfg.worker_threads, cap) + 8)) + (n if cfg.off_path else 0)
    theap = n + 8 if static_mode else 8
    due = heap + theap
    # the action stack grows by at most two per thread started in one cascade: 2 x (runners + workers)
    stack = 2 * (heap + theap) + 64
    ist, fs = np.zeros(19, np.int64), np.zeros(6)
    if cfg.scheduler == SCHED_BOUNDED:
        ist[I_G_MAX_RUNNING], ist[I_G_MAX_PENDING] = cfg.runner_threads, cfg.max_pending_per_group
        fs[F_G_DEADLINE] = cfg.query_deadline_ms
    else:
        ist[I_G_MAX_RUNNING], ist[I_G_MAX_PENDING] = cfg.secondary_runner_threads, cfg.secondary_max_pending
        fs[F_G_DEADLINE] = cfg.secondary_timeout_ms
    # the CPU's next finish is a function of its state alone (checkpoint, heap tops): computed again only
    # after the state changed (a CPU or crash event, or an item started), which is every other event
    fs[F_CPU_AT], ist[I_CPU_CHANGED] = _INF, 1
    return (np.zeros(heap), np.zeros(heap, np.int64), np.zeros(heap, np.int64), np.zeros(heap, np.int64),
            np.zeros(theap), np.zeros(theap, np.int64), np.zeros(theap, np.int64), np.zeros(theap, np.int64),
            np.zeros(due, np.int64), np.zeros(due, np.int64), np.zeros(due, np.int64), np.zeros(due, np.int64),
            np.zeros(stack, np.int64), ist, fs, np.zeros(HINTS, np.int64), np.zeros(HINTS, np.int64),
            np.zeros(5, dtype=np.int64))


@kernel
def finish_server(state: ServerState, n: int, cores: int, ps: np.ndarray, pe: np.ndarray, pr: np.ndarray,
                  horizon: float, out_at: np.ndarray, out_code: np.ndarray, out_paused: np.ndarray,
                  out_wait: np.ndarray, responded: np.ndarray) -> tuple[np.ndarray, float]:
    """After the last :func:`advance_server` (to the horizon): requests never submitted are marked unanswered,
    and core time is counted up to the horizon. Returns the meters and the core time."""
    ist, fs, ph, meters = state[13], state[14], state[15], state[17]
    for i in range(ist[I_NEXT], n):  # never submitted
        out_at[i], out_code[i], out_paused[i], out_wait[i], responded[i] = _INF, 0, False, 0.0, False
    _checkpoint(fs, ist, cores, ps, pe, pr, horizon, ph)
    return meters, fs[F_BUSY]


@kernel
def advance_server(state: ServerState, rf: np.ndarray, ri: np.ndarray, seg_work: np.ndarray, n: int,
                   cfg: ServerSettings, ps: np.ndarray, pe: np.ndarray, pr: np.ndarray, pp: np.ndarray, ptotal: float,
                   gs: np.ndarray, ge: np.ndarray, cs: np.ndarray, ce: np.ndarray, horizon: float, limit: float,
                   ti: np.ndarray, t_queued: np.ndarray, queues: np.ndarray, out_at: np.ndarray, out_code: np.ndarray,
                   out_paused: np.ndarray, out_wait: np.ndarray, responded: np.ndarray) -> None:
    """Run the server's events before ``limit`` (every event up to ``horizon`` when ``limit`` is infinite).

    Resumable: the state is kept in ``state`` (:func:`server_state`), so a run may advance in steps, and
    rows may be appended to the request tables between steps (``n`` grows) as long as each new request
    is read no earlier than the last ``limit``: the live router (:mod:`workbench.sim.fast.live`) advances
    every server to each query's arrival before routing it. A step that stops at ``limit`` leaves the time
    of the server's next event in ``state``'s floats (``F_NEXT``): until then (and until a new request)
    there is nothing to advance. Arguments as for :func:`simulate_server`.
    """
    hk, hs, hkd, hr, tk, tsq, tkd, tr, due_seq, due_kind, due_ref, due_action, st_kind, ist, fs, ph, ch, meters = state
    cores, kind = cfg.cores, cfg.scheduler
    # the settings read per request, as scalars: the scheduler helpers take these rather than the whole record
    hard, mtpq = cfg.hard_limit, cfg.max_threads_per_query
    max_exec, default_exec = cfg.max_execution_threads, cfg.default_execution_threads
    fifo, gq, wq = queues[0], queues[1], queues[2]
    static = cfg.static
    runners = cfg.runner_threads if not static else 1 << 30
    workers = cfg.worker_threads if not static else cores
    crash, nxt = ist[I_CRASH], ist[I_NEXT]
    cpu_at, cpu_changed = fs[F_CPU_AT], ist[I_CPU_CHANGED] != 0
    while True:
        # the next moment: a CPU item finishing, a crash, or an arrival (internal events first at a tie)
        if cpu_changed:
            cpu_at = _next_cpu(ist, fs, cores, hk, tk, ps, pe, pr, pp, ptotal, ph)
            cpu_changed = False
        crash_at = cs[crash] if crash < len(cs) else _INF
        first = min(cpu_at, crash_at)
        arr_at = rf[nxt, RF_ARRIVAL] if nxt < n and rf[nxt, RF_ARRIVAL] < horizon else _INF
        if min(first, arr_at) >= limit:  # later events wait for the next step (requests may still come)
            fs[F_NEXT] = min(first, arr_at)
            break
        nd = 0
        if first <= arr_at and first <= horizon and first != _INF:
            now = first
            cpu_changed = True
            _checkpoint(fs, ist, cores, ps, pe, pr, now, ph)
            if crash_at < cpu_at:  # PinotServer._go_down: every request held fails now
                for i in range(nxt):
                    if ri[i, RI_HELD] != 0:
                        meters[4] += 1
                        out_at[i], out_code[i], out_paused[i], out_wait[i], responded[i] = now, -1, False, 0.0, True
                        ri[i, RI_HELD] = 0
                ist[I_HN] = ist[I_TN] = ist[I_F_LEN] = ist[I_G_LEN] = ist[I_G_RESERVED] = ist[I_G_RUNNING] = 0
                ist[I_WQ_LEN] = ist[I_RUNNERS_BUSY] = ist[I_WORKERS_BUSY] = 0
                crash += 1
                continue
            # SharedCPU.pop(now): the items and timers due, then each is finished in start order
            v0 = fs[F_V0]
            if ist[I_HN] > 0 and is_due(hk[0], v0, now):
                fs[F_V0] = max(v0, hk[0])
                while ist[I_HN] > 0 and hk[0] <= fs[F_V0]:
                    due_seq[nd], due_kind[nd], due_ref[nd] = hs[0], hkd[0], hr[0]
                    nd += 1
                    ist[I_HN] = heap_pop(hk, hs, hkd, hr, ist[I_HN])
            rt = (run_time(ps, pe, pr, now, ph) if len(ps) > 0 else now) if ist[I_TN] > 0 else _INF
            if ist[I_TN] > 0 and is_due(tk[0], rt, now):
                rt = max(rt, tk[0])
                while ist[I_TN] > 0 and tk[0] <= rt:
                    due_seq[nd], due_kind[nd], due_ref[nd] = tsq[0], tkd[0], tr[0]
                    nd += 1
                    ist[I_TN] = heap_pop(tk, tsq, tkd, tr, ist[I_TN])
            for d in range(1, nd):  # start order (seq): insertion sort, nd is almost always 1
                j = d
                while j > 0 and due_seq[j - 1] > due_seq[j]:
                    due_seq[j - 1], due_seq[j] = due_seq[j], due_seq[j - 1]
                    due_kind[j - 1], due_kind[j] = due_kind[j], due_kind[j - 1]
                    due_ref[j - 1], due_ref[j] = due_ref[j], due_ref[j - 1]
                    j -= 1
            for d in range(nd):
                due_action[d] = _FINISHED
        elif arr_at == _INF:
            break
        else:  # PinotServer.submit
            now, i = arr_at, nxt
            nxt += 1
            meters[0] += 1
            out_at[i], out_code[i], out_paused[i], out_wait[i], responded[i] = _INF, 0, False, 0.0, False
            if len(cs) > 0 and release(cs, ce, now, ch) != now:
                meters[4] += 1
                out_at[i], out_code[i], out_paused[i], out_wait[i], responded[i] = now, -1, False, 0.0, True
                continue
            code = 0
            if kind == SCHED_FCFS or (kind == SCHED_BINARY and ri[i, RI_SECONDARY] == 0):
                fifo[ist[I_F_HEAD] + ist[I_F_LEN]] = i
                ist[I_F_LEN] += 1
            else:
                code = admission_code(ist[I_G_LEN], ist[I_G_MAX_PENDING], ist[I_G_RESERVED], hard)
                if code == 0:
                    gq[ist[I_G_HEAD] + ist[I_G_LEN]] = i
                    ist[I_G_LEN] += 1
                if kind == SCHED_BINARY:
                    _dispatch_secondary(ist, fs, gq, fifo, rf, ri, hard, mtpq, now)
            if code != 0:
                meters[3] += 1
                _respond(i, now, code, rf, gs, ge, ph, out_at, out_code, out_paused, out_wait, responded)
                continue
            ri[i, RI_HELD] = 1
            due_action[0], due_ref[0], due_kind[0] = _DISPATCH_RUNNERS, 0, 0
            nd = 1
        # PinotServer._run for each action due now, in the same order. An action that ends by pushing the
        # next one to run (the stack's top, popped at once) runs it directly instead ("chain"); only the
        # loops that resume after that work (dispatch runners, dispatch workers) wait on the stack.
        for d in range(nd):
            a, x, y = due_action[d], due_ref[d], due_kind[d]
            sp = 0
            while True:
                chain = False
                if a == _DISPATCH_RUNNERS:
                    if ist[I_RUNNERS_BUSY] < runners:
                        req = _scheduler_next(ist, fs, kind, hard, mtpq, fifo, gq, rf, ri, now)
                        if req >= 0:
                            chain = True
                            code = start_code(now, rf[req, RF_ARRIVAL], rf[req, RF_TIMEOUT])
                            if code != 0:
                                meters[1] += 1
                                _scheduler_finished(ist, kind, ri, req)
                                ri[req, RI_HELD] = 0
                                _respond(req, now, code, rf, gs, ge, ph, out_at, out_code, out_paused, out_wait,
                                         responded)
                            else:
                                st_kind[sp] = _DISPATCH_RUNNERS
                                sp += 1
                                ist[I_RUNNERS_BUSY] += 1
                                rf[req, RF_STARTED] = now
                                a, x, y = _RUNNER_WORK, req, _PREPARE
                elif a == _RUNNER_WORK:
                    work = rf[x, RF_PREPARE] if y == _PREPARE else rf[x, RF_MERGE]
                    if work <= 0:
                        a, chain = _FINISHED, True
                    else:
                        _checkpoint(fs, ist, cores, ps, pe, pr, now, ph)
                        if static:
                            key = (run_time(ps, pe, pr, now, ph) if len(ps) > 0 else now) + work
                            ist[I_TN] = heap_push(tk, tsq, tkd, tr, ist[I_TN], key, ist[I_SEQ], y, x)
                        else:
                            ist[I_HN] = heap_push(hk, hs, hkd, hr, ist[I_HN], fs[F_V0] + work, ist[I_SEQ], y, x)
                        ist[I_SEQ] += 1
                        cpu_changed = True
                elif a == _DISPATCH_WORKERS:
                    if ist[I_WORKERS_BUSY] < workers and ist[I_WQ_LEN] > 0:
                        task = wq[ist[I_WQ_HEAD]]
                        ist[I_WQ_HEAD] += 1
                        ist[I_WQ_LEN] -= 1
                        ist[I_WORKERS_BUSY] += 1
                        r = ti[task, TI_REQ]
                        rf[r, RF_TASK_WAIT] = max(rf[r, RF_TASK_WAIT], now - t_queued[task])
                        st_kind[sp] = _DISPATCH_WORKERS
                        sp += 1
                        a, x, chain = _STEP, task, True
                elif a == _STEP:
                    task, r = x, ti[x, TI_REQ]
                    deadline = rf[r, RF_ARRIVAL] + rf[r, RF_TIMEOUT]
                    nseg = ri[r, RI_NSEG]
                    running = False
                    while True:
                        left = (1 if ti[task, TI_POS] < nseg else 0) if static else nseg - ri[r, RI_NEXT_SEGMENT]
                        what = step(now, deadline, left)
                        if what == STEP_DONE:
                            break
                        if what == STEP_TIMED_OUT:
                            ri[r, RI_TIMED_OUT] = 1
                            if static:
                                ti[task, TI_POS] = nseg
                            else:
                                ri[r, RI_NEXT_SEGMENT] = nseg
                            break
                        if static:
                            index = ti[task, TI_POS]
                            ti[task, TI_POS] += ti[task, TI_STRIDE]
                        else:
                            index = ri[r, RI_NEXT_SEGMENT]
                            ri[r, RI_NEXT_SEGMENT] += 1
                        w = seg_work[ri[r, RI_SEG_START] + index]
                        if w > 0:
                            _checkpoint(fs, ist, cores, ps, pe, pr, now, ph)
                            ist[I_HN] = heap_push(hk, hs, hkd, hr, ist[I_HN], fs[F_V0] + w, ist[I_SEQ], _SEGMENT, task)
                            ist[I_SEQ] += 1
                            cpu_changed = True
                            running = True
                            break
                    if not running:
                        ist[I_WORKERS_BUSY] -= 1
                        ri[r, RI_TASKS_LEFT] -= 1
                        if ri[r, RI_TASKS_LEFT] == 0:
                            chain = True
                            code = tasks_done_code(ri[r, RI_TIMED_OUT] != 0, now, deadline)
                            if code != 0:
                                meters[2] += 1
                                a, x, y = _RUNNER_DONE, r, code
                            else:
                                a, x, y = _RUNNER_WORK, r, _MERGE
                elif a == _FINISHED:
                    chain = y != _OFF_PATH  # no thread waits for the CPU off the query's path
                    if y == _SEGMENT:
                        st_kind[sp] = _DISPATCH_WORKERS
                        sp += 1
                        a = _STEP
                    elif y == _PREPARE:
                        tasks = task_count(ri[x, RI_NSEG], ri[x, RI_GROUP_BY] != 0, ri[x, RI_OPTION],
                                           max_exec, default_exec, cores,
                                           ri[x, RI_RESERVED])
                        ri[x, RI_TASKS_LEFT] = tasks
                        for t in range(tasks):
                            task = ist[I_TASKS]
                            ist[I_TASKS] += 1
                            ti[task, TI_REQ], ti[task, TI_POS], ti[task, TI_STRIDE] = x, t, tasks
                            t_queued[task] = now
                            wq[ist[I_WQ_HEAD] + ist[I_WQ_LEN]] = task
                            ist[I_WQ_LEN] += 1
                        a = _DISPATCH_WORKERS
                    elif y == _MERGE:
                        a, y = _RUNNER_DONE, 0
                else:  # _RUNNER_DONE
                    ist[I_RUNNERS_BUSY] -= 1
                    _scheduler_finished(ist, kind, ri, x)
                    ri[x, RI_HELD] = 0
                    _respond(x, now, y, rf, gs, ge, ph, out_at, out_code, out_paused, out_wait, responded)
                    if rf[x, RF_OFF_PATH] > 0:  # PinotServer._a_runner_done: the CPU off the query's path
                        _checkpoint(fs, ist, cores, ps, pe, pr, now, ph)
                        ist[I_HN] = heap_push(hk, hs, hkd, hr, ist[I_HN], fs[F_V0] + rf[x, RF_OFF_PATH], ist[I_SEQ],
                                              _OFF_PATH, x)
                        ist[I_SEQ] += 1
                        cpu_changed = True
                    a, chain = _DISPATCH_RUNNERS, True
                if not chain:
                    if sp == 0:
                        break
                    sp -= 1
                    a = st_kind[sp]
    ist[I_CRASH], ist[I_NEXT] = crash, nxt
    fs[F_CPU_AT], ist[I_CPU_CHANGED] = cpu_at, 1 if cpu_changed else 0
