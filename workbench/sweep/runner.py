"""Where the points run: a runner takes tasks and returns one outcome per task, in any order.

:class:`LocalRunner` runs points in *spawned* worker processes: a fresh interpreter per worker
inherits no threads, locks or JVM from the driver (forking a process that holds a Spark gateway or a
zmq context is how sweeps hang), and each point is a pure function of its task, so the numbers are the
same whatever the pool size. The pool is the runner's own, small, so that it can keep three promises
a stock pool does not:

- a worker that dies (killed, segfault, out of memory) fails its point, which is retried; the sweep goes on;
- the driver stops promptly: on Ctrl-C (or any error) :meth:`LocalRunner.close` terminates busy
  workers instead of waiting for their points (workers ignore SIGINT: the driver decides), then
  removes the staging their unfinished points leave;
- workers never outlive the driver: each watches its parent and exits when it dies, even by SIGKILL.

The Spark runner lives in :mod:`workbench.sweep.spark_runner`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Protocol

from workbench.io import clean_staging
from workbench.sim.allocator import keep_freed_memory
from workbench.sweep.point import run_point
from workbench.sweep.task import PointOutcome, PointTask

__all__ = ["LocalRunner", "Progress", "Runner", "dead_worker_outcome", "default_parallel"]

#: How long a worker asked to stop may take before it is terminated, then killed, s.
_STOP_GRACE_S = 2.0


class Progress(Protocol):
    """What a runner reports finished attempts to (a tqdm bar fits)."""

    def update(self, n: float | None = 1) -> bool | None:
        """``n`` more attempts have finished."""


class Runner(Protocol):
    """Runs attempts at points; kept open across the retry round so start-up is paid once."""

    def run(self, tasks: Sequence[PointTask], attempt: int, progress: Progress) -> list[PointOutcome]:
        """Run ``tasks`` (attempt number ``attempt``); one outcome per task, failures included."""

    def close(self) -> None:
        """Release workers or sessions the runner started."""


def default_parallel() -> int:
    """One worker per core: a point is single-threaded CPU work (SimPy), so more only contend."""
    return os.cpu_count() or 1


def dead_worker_outcome(task: PointTask, attempt: int, exitcode: int | None) -> PointOutcome:
    """The outcome of a point whose worker process died under it (to be retried like any failure)."""
    how = f"killed by signal {-exitcode}" if exitcode is not None and exitcode < 0 else f"exit code {exitcode}"
    return PointOutcome(task.point_id, "failed", attempt, error=f"worker process died: {how}")


def _exit_with_parent() -> None:
    """Kill this worker as soon as its parent (the sweep driver) is gone, however it went."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    wait([parent.sentinel])
    os.kill(os.getpid(), signal.SIGKILL)


def _serve(conn: Connection) -> None:
    """A worker's loop: receive ``(task, attempt)``, send back the outcome; ``None`` or EOF stops it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the driver handles it
    keep_freed_memory()  # this process only simulates: replications reuse the pages their predecessors touched
    threading.Thread(target=_exit_with_parent, name="exit-with-parent", daemon=True).start()
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        task, attempt = message
        conn.send(run_point(task, attempt))


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection
    task: PointTask | None = None
    attempt: int = 0


class LocalRunner:
    """Points on this machine: in the driver when ``parallel == 1``, else in spawned worker processes.

    Parameters
    ----------
    parallel
        Worker processes; never more are started than there are tasks.
    """

    def __init__(self, parallel: int) -> None:
        self.parallel = parallel
        self._workers: list[_Worker] = []
        self._context = multiprocessing.get_context("spawn")

    def run(self, tasks: Sequence[PointTask], attempt: int, progress: Progress) -> list[PointOutcome]:
        """Run ``tasks``; a worker that dies fails its point (to be retried) rather than the sweep."""
        if self.parallel == 1 or len(tasks) == 1:
            return [self._inline(task, attempt, progress) for task in tasks]
        pending = list(reversed(tasks))
        outcomes: list[PointOutcome] = []
        self._start(min(self.parallel, len(tasks)))
        while pending or any(w.task is not None for w in self._workers):
            self._dispatch(pending, attempt)
            for outcome in self._collect():
                outcomes.append(outcome)
                progress.update()
        return outcomes

    def close(self) -> None:
        """Stop every worker: idle ones are asked to, busy ones (after an interrupt) are terminated."""
        workers, self._workers = self._workers, []
        for worker in workers:
            if worker.task is None and worker.process.is_alive():
                with contextlib.suppress(OSError):
                    worker.conn.send(None)
            else:
                worker.process.terminate()
        for worker in workers:
            worker.process.join(_STOP_GRACE_S)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()
            if worker.task is not None:  # terminated mid-point: its staging has no live owner left
                point = Path(worker.task.out_dir)
                clean_staging(point.parent, point.name)

    @staticmethod
    def _inline(task: PointTask, attempt: int, progress: Progress) -> PointOutcome:
        outcome = run_point(task, attempt)
        progress.update()
        return outcome

    def _start(self, count: int) -> None:
        self._workers = [w for w in self._workers if w.process.is_alive()]
        while len(self._workers) < count:
            parent_end, child_end = self._context.Pipe()
            process = self._context.Process(target=_serve, args=(child_end,), name="workbench-sweep-worker",
                                            daemon=True)
            process.start()
            child_end.close()
            self._workers.append(_Worker(process, parent_end))

    def _dispatch(self, pending: list[PointTask], attempt: int) -> None:
        for worker in self._workers:
            if worker.task is None and pending:
                worker.task, worker.attempt = pending.pop(), attempt
                with contextlib.suppress(OSError):  # died while idle: its sentinel fails the point in _collect
                    worker.conn.send((worker.task, attempt))

    def _collect(self) -> list[PointOutcome]:
        """Outcomes of the workers that finished (or died) next; a dead worker is replaced."""
        busy = [w for w in self._workers if w.task is not None]
        ready = set(wait([w.conn for w in busy] + [w.process.sentinel for w in busy]))
        outcomes = []
        for worker in busy:
            if worker.conn in ready:
                try:
                    outcomes.append(worker.conn.recv())
                    worker.task = None
                    continue
                except (EOFError, OSError):
                    worker.process.join()
            elif worker.process.sentinel not in ready:
                continue
            assert worker.task is not None
            worker.process.join()
            outcomes.append(dead_worker_outcome(worker.task, worker.attempt, worker.process.exitcode))
            self._replace(worker)
        return outcomes

    def _replace(self, dead: _Worker) -> None:
        dead.conn.close()
        self._workers.remove(dead)
        self._start(len(self._workers) + 1)
