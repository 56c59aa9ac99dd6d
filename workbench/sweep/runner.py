"""Where the points run: a runner takes tasks and returns one outcome per task, in any order.

:class:`LocalRunner` uses a pool of *spawned* processes: a fresh interpreter per worker inherits
no threads, locks or JVM from the driver (forking a process that holds a Spark gateway or a zmq
context is how sweeps hang), and each point is a pure function of its task, so the numbers are the
same whatever the pool size. The Spark runner lives in :mod:`workbench.sweep.spark_runner`.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol

from workbench.sweep.point import run_point
from workbench.sweep.task import PointOutcome, PointTask

__all__ = ["LocalRunner", "Progress", "Runner", "default_parallel"]


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


class LocalRunner:
    """Points on this machine: in the driver when ``parallel == 1``, else in a spawned process pool.

    Parameters
    ----------
    parallel
        Worker processes; the pool never starts more than there are tasks.
    """

    def __init__(self, parallel: int) -> None:
        self.parallel = parallel
        self._pool: ProcessPoolExecutor | None = None

    def run(self, tasks: Sequence[PointTask], attempt: int, progress: Progress) -> list[PointOutcome]:
        """Run ``tasks``; a worker that dies fails its point (to be retried) rather than the sweep."""
        if self.parallel == 1 or len(tasks) == 1:
            return [self._inline(task, attempt, progress) for task in tasks]
        pool = self._get_pool(len(tasks))
        futures = {pool.submit(run_point, task, attempt): task for task in tasks}
        outcomes = []
        for future in as_completed(futures):
            outcomes.append(self._outcome(future, futures[future], attempt))
            progress.update()
        return outcomes

    def close(self) -> None:
        """Shut the pool down (waits for nothing: every submitted point has finished)."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    @staticmethod
    def _inline(task: PointTask, attempt: int, progress: Progress) -> PointOutcome:
        outcome = run_point(task, attempt)
        progress.update()
        return outcome

    def _get_pool(self, n_tasks: int) -> ProcessPoolExecutor:
        if self._pool is None:
            workers = min(self.parallel, n_tasks)
            self._pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        return self._pool

    def _outcome(self, future: Future[PointOutcome], task: PointTask, attempt: int) -> PointOutcome:
        try:
            return future.result()
        except BrokenProcessPool as exc:
            self.close()  # the pool is unusable now; the retry round starts a fresh one
            return PointOutcome(task.point_id, "failed", attempt, error=f"worker process died: {exc}")
