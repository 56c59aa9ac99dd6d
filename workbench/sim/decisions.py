"""A Pinot server's decisions, written once for both engines (PE §1-§4).

The SimPy engine (:class:`~workbench.sim.server.PinotServer`, :mod:`~workbench.sim.schedulers`,
:class:`~workbench.sim.cpu.SharedCPU`) and the compiled one
(:func:`~workbench.sim.fast.server_kernel.simulate_server`) keep a server's state in different forms
(objects and queues against integer slots) and advance time differently (SimPy wake-ups against one
loop over a server's requests). What the server *decides* at each event is the same, and lives here:

- **admission** (:func:`admission_code`): a bounded scheduler group turns a request away with 211;
- **dispatch** (:func:`queue_expired`, :func:`group_can_start`, :func:`reservation`, :func:`task_count`):
  which pending request a free runner may take, what it reserves, how many worker tasks it fans out to;
- **deadline checks** (:func:`start_code`, :func:`step`, :func:`tasks_done_code`): 240 when a request
  reaches a runner having waited its whole timeout, the check a worker task makes before each further
  segment, and 250 when the last task ends past the deadline;
- **a degraded server's pace** (:func:`slow_scale`): how much longer a request's work takes on a slow
  server (``failures.slow``), by when the request reaches it; from a scale of 1 on the windows' ``jvm``
  factors, how much longer a slow JVM's request delay and GC pause take (by delivery, by the pause's start);
- **a wake-up's work** (:func:`wake_work`): the runner work a request adds when it arrives after the
  cluster was idle (``service.wake_ms``), by the idle gap before it; the plan computes it once per query
  into the runner's work both engines read;
- **the processor-sharing arithmetic** (:func:`share`, :func:`checkpoint`, :func:`is_due`): how far the
  CPU's virtual time and core time move between two checkpoints, and when an item counts as finished.

And the broker's one decision that depends on time, adaptive server selection's per-server stats
(:mod:`workbench.pinot.routing.adaptive` states them, its classes call them in the SimPy engine's brokers,
and they are compiled here, as :func:`task_count` is, for the compiled engine's live router):

- **the moving averages** (:func:`ema_decay`, :func:`ema_feed`): Pinot's ``ExponentialMovingAverage``
  with its auto-decay timer applied lazily, and a new value fed in;
- **the scores** (:func:`hybrid_score`): ``(floor + inFlight + EMA(inFlight))^N x EMA(latency)``
  (the other two scores are the in-flight count and the latency average themselves).

Each is a small pure function compiled by :func:`~workbench.sim.fast.jit.helper`, so the kernel calls
it at native speed; the SimPy engine calls the very same function object's Python body
(:func:`~workbench.sim.fast.jit.python`), which costs a plain call instead of numba's dispatch (so no
function here calls another: from Python, that inner call would go through numba's dispatch again). A
change to the server's behaviour is therefore made once, and both engines see it
(``tests/validation/test_shared_decisions.py`` mutates one function and watches both engines' records
change). The operations are written exactly as the engines had them inline (``now - arrival >= timeout``
is not ``now >= arrival + timeout`` in floating point), so the records keep their bits.

numba caches a compiled kernel on disk by its own source file: after editing this module, the kernels
that call it are recompiled only when their files change too (or their ``__pycache__`` is cleared).
"""

from __future__ import annotations

import numpy as np

from workbench.pinot import execution_config
from workbench.pinot.routing import adaptive
from workbench.sim.fast.jit import helper

__all__ = [
    "EXECUTION_TIMEOUT",
    "OUT_OF_CAPACITY",
    "SCHEDULING_TIMEOUT",
    "STEP_DONE",
    "STEP_TAKE",
    "STEP_TIMED_OUT",
    "admission_code",
    "checkpoint",
    "ema_decay",
    "ema_feed",
    "group_can_start",
    "hybrid_score",
    "is_due",
    "queue_expired",
    "reservation",
    "share",
    "slow_scale",
    "start_code",
    "step",
    "task_count",
    "tasks_done_code",
    "wake_work",
]

#: Pinot QueryErrorCodes a server answers with (PE §1.6, §4.3): SERVER_OUT_OF_CAPACITY,
#: QUERY_SCHEDULING_TIMEOUT, EXECUTION_TIMEOUT.
OUT_OF_CAPACITY = 211
SCHEDULING_TIMEOUT = 240
EXECUTION_TIMEOUT = 250
#: What a worker task does next (:func:`step`).
STEP_DONE, STEP_TIMED_OUT, STEP_TAKE = 0, 1, 2


# -- admission and dispatch (the scheduler) -----------------------------------------------------------
@helper
def admission_code(pending: int, max_pending: int, reserved: int, hard_limit: int) -> int:
    """A bounded group's answer to a new request: 211 when ``max_pending`` requests are pending *and* its
    worker reservation is at the hard limit (Pinot rejects only when both hold), else 0 (queue it)."""
    if pending >= max_pending and reserved >= hard_limit:
        return OUT_OF_CAPACITY
    return 0


@helper
def queue_expired(now: float, arrival: float, deadline_ms: float) -> bool:
    """A pending request older than the group's queue deadline is dropped unanswered (strictly older:
    Pinot compares the time in queue with ``>``)."""
    return now - arrival > deadline_ms


@helper
def group_can_start(running: int, max_running: int, reserved: int, hard_limit: int) -> bool:
    """Whether a bounded group's dispatcher may start its oldest pending request: fewer than
    ``max_running`` of its requests run and its reserved worker threads are below the hard limit."""
    return running < max_running and reserved < hard_limit


@helper
def reservation(max_threads_per_query: int, segments: int, hard_limit: int, reserved: int) -> int:
    """Worker threads a started request reserves in its group: ``min(maxThreadsPerQuery, segments)``,
    at least 1, at most what the hard limit leaves (it also caps the request's tasks)."""
    want = min(max_threads_per_query, max(1, segments))
    return max(1, min(want, hard_limit - reserved))


#: Worker tasks a request's segments are spread over (PE §2.1; ``ServerQueryConfig.tasks``): Pinot's
#: rule is stated once, in :func:`workbench.pinot.execution_config.task_count` (calibration reads it
#: there), and compiled here for the server kernel, so the two cannot drift apart.
task_count = helper(execution_config.task_count)


# -- deadlines ----------------------------------------------------------------------------------------
@helper
def start_code(now: float, arrival: float, timeout: float) -> int:
    """A request reaching a runner thread at ``now``: 240 (QUERY_SCHEDULING_TIMEOUT, answered at once
    without running) when it already waited its whole ``timeoutMs``, else 0 (it runs)."""
    if now - arrival >= timeout:
        return SCHEDULING_TIMEOUT
    return 0


@helper
def step(now: float, deadline: float, left: int) -> int:
    """What a worker task does before each further segment: :data:`STEP_DONE` when none is left,
    :data:`STEP_TIMED_OUT` when the deadline has passed (the task stops and leaves the rest undone; Pinot
    checks between segments, never inside one), else :data:`STEP_TAKE` (take the next one)."""
    if left == 0:
        return STEP_DONE
    if now >= deadline:
        return STEP_TIMED_OUT
    return STEP_TAKE


@helper
def tasks_done_code(timed_out: bool, now: float, deadline: float) -> int:
    """When a request's last task ends: 250 (EXECUTION_TIMEOUT) if a task stopped at the deadline or the
    deadline has passed (the runner's wait for the combine's blocks expired), else 0 (merge and answer)."""
    if timed_out or now >= deadline:
        return EXECUTION_TIMEOUT
    return 0


# -- degraded servers ---------------------------------------------------------------------------------
@helper
def slow_scale(scale: float, delivered: float, starts: np.ndarray, ends: np.ndarray, factors: np.ndarray) -> float:
    """The factor a request's work (runner and segments) is multiplied by on its server: the server's CPU
    ``scale``, times a slow window's ``factor`` when the request reaches the server (``delivered``) inside
    that window ``[start, end)``. Deciding by delivery, not while the work runs, keeps a request's work
    one number fixed before it starts (a window is seconds to minutes long, a request milliseconds).
    Outside every window it is ``scale`` itself, so a run without slow servers keeps its bits."""
    for i in range(len(starts)):
        if starts[i] <= delivered < ends[i]:
            return float(scale * factors[i])
    return scale


# -- a wake-up after an idle stretch ----------------------------------------------------------------------
#: Where the wake-up's ``gap / tau`` is capped: beyond it the curve is 1 to the last bit, and an infinite gap
#: (the first query's) would make ``exp(-x) x (1 + x)`` a NaN.
_WAKE_X_CAP = 700.0


@helper
def wake_work(gap_ms: float | np.ndarray, wake_ms: float, tau_ms: float) -> float | np.ndarray:
    """The runner work a request adds for waking the cluster up, ms: ``wake_ms x (1 - exp(-x) x (1 + x))`` with
    ``x = gap_ms / tau_ms``, ``gap_ms`` the time since the previous query arrived (``inf`` for the first: the whole
    ``wake_ms``).

    Why: Apache Pinot 1.5.1 on one core (``docs/validation.md``, "Why Pinot's median falls with load") takes a
    query longer the longer it found the server and broker idle, by up to about 2.8 ms, at every rate alike; so a
    hotter, busier cluster does each query with less, and its median falls with load. Why this shape (the
    distribution function of a sum of two exponential stages, 2 ``tau_ms`` on average): in Pinot's logs the
    cost does not start at once. A query that found the cluster idle for 0-5 ms and one idle for 5-10 ms took the
    same (-2.70 and -2.65 ms against the long-idle ones at 75.6/s), the broker's compile time the same for gaps of
    1 to 8 ms (2.12, 2.00, 2.04 ms at 13.7/s, then 2.34 at 15 ms and 3.09 at 120 ms); the cost builds up after
    some ten ms of idle time, where ``1 - exp(-gap / tau)`` has already charged a third of it. A gap is known
    before the run (arrival times are planned), so the cost is one number per query fixed up front; with
    ``wake_ms`` 0 it is 0 exactly. ``x`` is capped at 700 (``exp(-700) x 701`` is below 1e-300), so an infinite
    gap gives ``wake_ms`` itself. The body is elementwise, so the plan calls it with arrays
    (:func:`~workbench.sim.fast.jit.python`).

    >>> from workbench.sim.fast.jit import python
    >>> float(python(wake_work)(float("inf"), 2.0, 20.0)), float(python(wake_work)(0.0, 2.0, 20.0))
    (2.0, 0.0)
    >>> round(float(python(wake_work)(20.0, 2.0, 20.0)), 4)  # one time constant: 1 - 2/e of it
    0.5285
    """
    x = np.minimum(gap_ms / tau_ms, _WAKE_X_CAP)
    out: float | np.ndarray = wake_ms * (1.0 - np.exp(-x) * (1.0 + x))
    return out


# -- processor sharing --------------------------------------------------------------------------------
@helper
def share(runnable: int, cores: int) -> float:
    """Work each of ``runnable`` threads receives per ms of run time on ``cores`` cores (egalitarian
    processor sharing: 1 while every thread has a core, else ``cores / runnable``)."""
    return 1.0 if runnable <= cores else cores / runnable


@helper
def checkpoint(v0: float, busy: float, run: float, runnable: int, timers: int, cores: int) -> tuple[float, float]:
    """Virtual time and core time after ``run`` ms of run time with the runnable set unchanged.

    Virtual time (the work every runnable item has received) moves only while something is runnable, so
    an idle stretch leaves it, and every finish value keyed on it, untouched; core time counts the cores
    in use plus one per timer.
    """
    if runnable:
        v0 += run * (1.0 if runnable <= cores else cores / runnable)  # share(), inline: see the module's notes
    return v0, busy + run * (min(runnable, cores) + timers)


@helper
def is_due(key: float, value: float, now: float) -> bool:
    """Whether an item keyed ``key`` has finished when its clock reads ``value`` at wall time ``now``: a
    rounding allowance of a few ulps, since the finish time was computed from the key and back.

    The allowance scales with the wall time as well as with ``value``: a finish time is a wall time, and
    after a long idle stretch the wall clock (hours of ms) is far larger than the virtual time (work done
    while busy), so the last few picoseconds of work before a finish can be below the wall clock's
    resolution: the finish time then equals the checkpoint and the item would never be due.
    """
    return key <= value + 4e-12 * max(1.0, abs(value), abs(now))


# -- adaptive server selection (the broker) -------------------------------------------------------------
#: Pinot's moving averages and HYBRID score are stated once, in :mod:`workbench.pinot.routing.adaptive` (whose
#: stats the SimPy brokers keep; ``pinot`` may not import ``sim``), and compiled here for the live router.
ema_decay = helper(adaptive.ema_decay)
ema_feed = helper(adaptive.ema_feed)
hybrid_score = helper(adaptive.hybrid_score)
