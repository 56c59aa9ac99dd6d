"""One Pinot server executing requests as Pinot does (PE §1-§4): scheduler, runner and worker threads, deadlines.

A request arrives (the Netty thread stamps its arrival), waits in the scheduler, and starts on a
**runner thread** (``query_runner_threads``, default ``c``). If it already waited its whole
``timeoutMs`` it is answered at once with 240 (QUERY_SCHEDULING_TIMEOUT) without running. Otherwise the
runner prepares it (T1: per-request work), then fans its segments out to tasks on the **worker pool**
(``query_worker_threads``, default ``2c``, one FIFO queue shared by every query). Each task takes the next
unprocessed segment from the request's shared counter until none is left (dynamic work stealing), and
checks the deadline before each further segment (not inside one): past it, the task stops. When every
task is done the runner merges (T4) and sends the response, unless the deadline has passed: then,
as Pinot's combine does when its wait for result blocks expires, it answers 250 (EXECUTION_TIMEOUT)
once the segments already running have finished. After answering, a request may leave CPU on the cores that no
thread of it waits for (``service.off_path_ms``: the JVM's work off the query's path). Threads run on the server's
cores by processor sharing (:mod:`workbench.sim.cpu`), and everything freezes during a stop-the-world pause.
A crash fails every request the server holds. Each decision on the way (admission, which request and how many tasks,
the 240/250 deadline checks, the check before each segment) is a function of
:mod:`workbench.sim.decisions`, which the compiled engine calls too.

:class:`ExecutionModel` ``fcfs_threads`` is the older simplification kept for comparison: one worker
thread per core, segments dealt round-robin to tasks up front, runner threads unlimited and per-request
work off the cores.

The server is a state machine over explicit times: :meth:`PinotServer.next_time` says when its next
internal event happens and :meth:`PinotServer.advance` processes events up to a time, appending
:class:`Response` rows; the SimPy engine wakes it at those times and delivers requests with
:meth:`PinotServer.submit`. Events at the same time run in this order: CPU completions, then a crash,
then arrivals. ``trace`` (a list) receives ``(time, event, request id)`` for tests and debugging.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from workbench.pinot.execution_config import ServerQueryConfig
from workbench.sim import decisions
from workbench.sim.cpu import SharedCPU
from workbench.sim.decisions import STEP_DONE, STEP_TIMED_OUT
from workbench.sim.fast.jit import python
from workbench.sim.pauses import PauseSchedule
from workbench.sim.schedulers import Scheduler, make_scheduler

__all__ = ["FAILED", "ExecutionModel", "PinotServer", "Request", "Response"]

#: Not a Pinot code: the request was lost with the server (the broker sees the channel go inactive).
FAILED = -1
_INF = math.inf
# The server's decisions, shared with the compiled engine (workbench.sim.decisions), as plain Python calls.
_start_code = python(decisions.start_code)
_task_count = python(decisions.task_count)
_step = python(decisions.step)
_tasks_done_code = python(decisions.tasks_done_code)


class ExecutionModel(StrEnum):
    """How a server runs a request's work (``cluster.server.execution``)."""

    #: Pinot's structure: runner and worker pools sharing the cores, dynamic segment assignment.
    PINOT = "pinot"
    #: The simplification: ``cores`` FCFS worker threads, static round-robin, per-request work off-core.
    FCFS_THREADS = "fcfs_threads"


@dataclass(eq=False)
class Request:
    """One server request (all times and work in ms).

    ``prepare`` and ``merge`` are the runner thread's work before and after the fan-out (T1, T4);
    ``segments`` the worker work of each segment (0 for a segment answered from the segment cache).
    ``timeout`` is the ``timeoutMs`` the broker sent: the server's deadline is ``arrival + timeout``.
    ``off_path`` is the CPU the request leaves on the cores once its runner is done (``service.off_path_ms``).
    """

    rid: int
    arrival: float
    timeout: float
    prepare: float
    merge: float
    segments: list[float]
    group_by: bool = False
    secondary: bool = False
    execution_threads: int | None = None
    off_path: float = 0.0
    #: When the request reached the server's socket (before ``arrival`` if a pause kept it unread).
    delivered: float = _INF
    reserved: int = 0
    started: float = _INF
    task_wait: float = 0.0
    timed_out: bool = False
    next_segment: int = 0
    tasks_left: int = 0

    @property
    def num_segments(self) -> int:
        return len(self.segments)

    @property
    def deadline(self) -> float:
        return self.arrival + self.timeout


@dataclass(eq=False)
class _Task:
    request: Request
    queued_at: float
    #: The segment indices dealt to this task up front (``fcfs_threads``); ``None`` takes from the shared counter.
    own: deque[int] | None = None
    #: The segment it is processing.
    current: int = -1


class Response(NamedTuple):
    """A server's answer to one request.

    Attributes
    ----------
    rid
        The request's id.
    at
        When the server sent it (for a failed request: when the server went down).
    code
        0, or the Pinot QueryErrorCode of an error response (211, 240, 250), or :data:`FAILED`.
    paused
        A stop-the-world pause stopped the server while it held the request.
    queue_wait
        Time waiting for a runner thread plus the longest time one of its tasks waited for a worker.
    """

    rid: int
    at: float
    code: int
    paused: bool
    queue_wait: float


@dataclass
class _Meters:
    requests: int = 0
    scheduling_timeouts: int = 0
    execution_timeouts: int = 0
    rejected: int = 0
    failed: int = 0


@dataclass
class PinotServer:
    """One server's threads, cores, pauses and crashes.

    Parameters
    ----------
    name
        The instance name routing uses.
    config
        The server's Pinot query settings (scheduler, pools, task counts).
    pauses, crashes
        Stop-the-world pauses and down intervals (ms).
    execution
        :class:`ExecutionModel`.
    trace
        When a list, receives ``(time, event, rid)`` for every start and finish.
    stops
        Every interval the server makes no progress in: its pauses joined with its wedges
        (:func:`workbench.sim.failures.stops`); ``None``: the pauses. The server runs on these, while a
        response's ``paused`` flag (a GC pause held the request) reads the pauses alone.
    """

    name: str
    config: ServerQueryConfig
    pauses: PauseSchedule
    crashes: PauseSchedule
    execution: ExecutionModel = ExecutionModel.PINOT
    trace: list[tuple[float, str, int]] | None = None
    meters: _Meters = field(default_factory=_Meters)
    stops: PauseSchedule | None = None

    def __post_init__(self) -> None:
        static = self.execution is ExecutionModel.FCFS_THREADS
        if self.stops is None:
            self.stops = self.pauses
        self.cpu = SharedCPU(self.config.cores, self.stops)
        self.scheduler: Scheduler = make_scheduler(self.config)
        self.runners = self.config.runner_threads if not static else 1 << 30
        self.workers = self.config.worker_threads if not static else self.config.cores
        self.static = static
        self.runners_busy = 0
        self.workers_busy = 0
        self.worker_queue: deque[_Task] = deque()
        self.held: dict[int, Request] = {}
        self._crash = 0  # index of the next crash interval
        self.clock = 0.0  # the latest time advanced to

    @property
    def cores(self) -> int:
        return self.config.cores

    @property
    def busy_ms(self) -> float:
        """Core time used on requests so far (runner and worker threads, and the CPU requests leave off their path
        after answering; for ``fcfs_threads`` also its off-core per-request work), ms, up to the last time
        :meth:`advance` reached."""
        return self.cpu.busy_core_ms(self.clock)

    # -- the clock ----------------------------------------------------------------------------------
    def _next_crash(self) -> float:
        return self.crashes.interval(self._crash)[0] if self._crash < len(self.crashes) else _INF

    def next_time(self) -> float:
        """When the next internal event (a thread finishing, a crash) happens; ``inf`` when idle."""
        return min(self.cpu.next_time(), self._next_crash() if self.held else _INF)

    def advance(self, until: float, out: list[Response]) -> None:
        """Process every internal event at or before ``until``."""
        while True:
            cpu_at, crash_at = self.cpu.next_time(), self._next_crash()
            first = min(cpu_at, crash_at)
            if first > until or first == _INF:
                break
            if crash_at < cpu_at:
                self._go_down(crash_at, out)
            else:
                for item in self.cpu.pop(cpu_at):
                    self._finished(item, cpu_at, out)
        if until != _INF:
            self.clock = max(self.clock, until)

    def is_down(self, t: float) -> bool:
        """Whether the server is crashed at ``t``."""
        return self.crashes.release(t) != t if self.crashes else False

    # -- requests -----------------------------------------------------------------------------------
    def submit(self, request: Request, out: list[Response]) -> None:
        """A request arrives at ``request.arrival`` (call :meth:`advance` to that time first)."""
        now = request.arrival
        self.meters.requests += 1
        if self.is_down(now):
            self.meters.failed += 1
            out.append(Response(request.rid, now, FAILED, False, 0.0))
            return
        code = self.scheduler.admit(request, now)
        for dropped in self.scheduler.drain_expired():  # admitting may trim the queue (binary_workload)
            self._log(now, "expired", self.held.pop(dropped.rid).rid)
        if code is not None:
            self.meters.rejected += 1
            self._respond(request, now, code, out, held=False)
            return
        self.held[request.rid] = request
        self._dispatch_runners(now, out)

    def _log(self, t: float, event: str, rid: int) -> None:
        if self.trace is not None:
            self.trace.append((t, event, rid))

    # -- the thread logic: an explicit stack of actions, run depth first --------------------------------
    # Each action may push the actions that follow from it; a loop ("start requests while a runner is
    # free") pushes itself back beneath the work of one iteration. This runs in exactly the order plain
    # nested calls would, and it is the form the compiled engine mirrors step for step.
    def _run(self, stack: list[tuple[int, Any]], now: float, out: list[Response]) -> None:
        while stack:
            action, what = stack.pop()
            _ACTIONS[action](self, what, now, out, stack)

    def _dispatch_runners(self, now: float, out: list[Response]) -> None:
        self._run([(_DISPATCH_RUNNERS, None)], now, out)

    def _a_dispatch_runners(self, _: Any, now: float, out: list[Response], stack: list[tuple[int, Any]]) -> None:
        if self.runners_busy >= self.runners:
            return
        request = self._next(now)
        if request is None:
            return
        stack.append((_DISPATCH_RUNNERS, None))
        code = _start_code(now, request.arrival, request.timeout)
        if code:
            self.meters.scheduling_timeouts += 1
            self.scheduler.finished(request)
            self._log(now, "scheduling_timeout", request.rid)
            self._respond(request, now, code, out, held=True)
            return
        self.runners_busy += 1
        request.started = now
        self._log(now, "runner_start", request.rid)
        stack.append((_RUNNER_WORK, (request, _PREPARE)))

    def _next(self, now: float) -> Request | None:
        """The scheduler's next request; requests it trimmed from its queue are no longer held."""
        request = self.scheduler.next(now)
        for dropped in self.scheduler.drain_expired():
            self._log(now, "expired", self.held.pop(dropped.rid).rid)
        assert request is None or isinstance(request, Request)
        return request

    def _a_runner_work(self, what: Any, now: float, out: list[Response], stack: list[tuple[int, Any]]) -> None:
        """Work on the request's runner thread: on the cores (Pinot) or as off-core time (the simplification)."""
        request, phase = what
        work = request.prepare if phase == _PREPARE else request.merge
        if work <= 0:
            stack.append((_FINISHED, (phase, request)))
        elif self.static:
            self.cpu.start_timer(now, work, (phase, request))
        else:
            self.cpu.start(now, work, (phase, request))

    def _fan_out(self, request: Request, now: float) -> None:
        config = self.config
        tasks = _task_count(request.num_segments, request.group_by, request.execution_threads or 0,
                            config.max_execution_threads, config.default_execution_threads, config.cores,
                            request.reserved)  # capped by the bounded executor's per-query permits
        request.tasks_left = tasks
        for t in range(tasks):
            own = deque(range(t, request.num_segments, tasks)) if self.static else None
            self.worker_queue.append(_Task(request, now, own))

    def _a_dispatch_workers(self, _: Any, now: float, out: list[Response], stack: list[tuple[int, Any]]) -> None:
        if self.workers_busy >= self.workers or not self.worker_queue:
            return
        task = self.worker_queue.popleft()
        self.workers_busy += 1
        task.request.task_wait = max(task.request.task_wait, now - task.queued_at)
        stack.append((_DISPATCH_WORKERS, None))
        stack.append((_STEP, task))

    def _a_step(self, what: Any, now: float, out: list[Response], stack: list[tuple[int, Any]]) -> None:
        """A task takes its next segment (checking the deadline first) or ends."""
        task = what
        assert isinstance(task, _Task)
        request = task.request
        deadline = request.deadline
        while True:
            left = len(task.own) if task.own is not None else request.num_segments - request.next_segment
            what = _step(now, deadline, left)
            if what == STEP_DONE:
                break
            if what == STEP_TIMED_OUT:
                request.timed_out = True
                self._skip(task)
                break
            if task.own is not None:
                index = task.own.popleft()
            else:
                index = request.next_segment
                request.next_segment += 1
            if request.segments[index] > 0:
                task.current = index
                self._log(now, f"segment_start {index}", request.rid)
                self.cpu.start(now, request.segments[index], (_SEGMENT, task))
                return
        self.workers_busy -= 1
        request.tasks_left -= 1
        if request.tasks_left == 0:
            self._log(now, "tasks_done", request.rid)
            code = _tasks_done_code(request.timed_out, now, deadline)
            if code:  # the runner's wait for blocks expired
                self.meters.execution_timeouts += 1
                stack.append((_RUNNER_DONE, (request, code)))
            else:
                stack.append((_RUNNER_WORK, (request, _MERGE)))

    def _skip(self, task: _Task) -> None:
        """A timed-out task leaves its segments undone."""
        if task.own is not None:
            task.own.clear()
        else:
            task.request.next_segment = task.request.num_segments

    def _finished(self, item: tuple[int, Any], now: float, out: list[Response]) -> None:
        self._run([(_FINISHED, item)], now, out)

    def _a_finished(self, what: Any, now: float, out: list[Response], stack: list[tuple[int, Any]]) -> None:
        phase, thing = what
        if phase == _SEGMENT:
            self._log(now, f"segment_done {thing.current}", thing.request.rid)
            stack.append((_DISPATCH_WORKERS, None))
            stack.append((_STEP, thing))
        elif phase == _PREPARE:
            self._log(now, "fan_out", thing.rid)
            self._fan_out(thing, now)
            stack.append((_DISPATCH_WORKERS, None))
        elif phase == _MERGE:
            stack.append((_RUNNER_DONE, (thing, 0)))
        else:  # _OFF_PATH: no thread waits for it
            self._log(now, "off_path_done", thing.rid)

    def _a_runner_done(self, what: Any, now: float, out: list[Response], stack: list[tuple[int, Any]]) -> None:
        request, code = what
        self.runners_busy -= 1
        self.scheduler.finished(request)
        self._respond(request, now, code, out, held=True)
        if request.off_path > 0:
            # the JVM's CPU off the query's path (Netty, the query log, GC, JIT): on the cores from the response on,
            # so the requests behind it share the cores with it, and no thread of the request waits for it
            self.cpu.start(now, request.off_path, (_OFF_PATH, request))
        stack.append((_DISPATCH_RUNNERS, None))

    def _respond(self, request: Request, now: float, code: int, out: list[Response], *, held: bool) -> None:
        if held:
            self.held.pop(request.rid, None)
        self._log(now, "respond" if code == 0 else f"respond_{code}", request.rid)
        wait = (min(request.started, now) - request.arrival) + request.task_wait
        delivered = min(request.delivered, request.arrival)
        paused = bool(self.pauses) and self.pauses.intersects(delivered, max(now, request.arrival))
        out.append(Response(request.rid, now, code, paused, wait))

    # -- crashes ------------------------------------------------------------------------------------
    def _go_down(self, at: float, out: list[Response]) -> None:
        """A crash: every request held fails now; threads and queues restart empty after recovery."""
        for request in self.held.values():
            self.meters.failed += 1
            self._log(at, "failed", request.rid)
            out.append(Response(request.rid, at, FAILED, False, 0.0))
        self.held.clear()
        self.cpu.clear(at)
        self.scheduler.clear()
        self.worker_queue.clear()
        self.runners_busy = self.workers_busy = 0
        self._crash += 1


# Actions of the thread logic and the phases of work items (small ints: the compiled engine uses the same).
_DISPATCH_RUNNERS, _RUNNER_WORK, _DISPATCH_WORKERS, _STEP, _FINISHED, _RUNNER_DONE = range(6)
_PREPARE, _SEGMENT, _MERGE, _OFF_PATH = range(4)
_ACTIONS = {
    _DISPATCH_RUNNERS: PinotServer._a_dispatch_runners,
    _RUNNER_WORK: PinotServer._a_runner_work,
    _DISPATCH_WORKERS: PinotServer._a_dispatch_workers,
    _STEP: PinotServer._a_step,
    _FINISHED: PinotServer._a_finished,
    _RUNNER_DONE: PinotServer._a_runner_done,
}
