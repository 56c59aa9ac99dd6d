"""Sweep points as Spark tasks, for sweeps one machine cannot finish in time.

One task per point (``sc.parallelize(tasks, len(tasks)).map(run_point)``): each task writes its
point directory to the sweep's output path, which must be a filesystem every executor and the
driver share (NFS, or one machine), and returns its outcome; the driver combines the outcomes.
Tasks run exactly the function the local pool runs, so a cluster sweep equals a local one.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from workbench.errors import InputError
from workbench.sim.allocator import keep_freed_memory
from workbench.sweep.point import run_point
from workbench.sweep.runner import Progress
from workbench.sweep.task import PointOutcome, PointTask

__all__ = ["SparkRunner"]

#: How often the driver polls Spark for finished tasks to move the progress bar, s.
_POLL_S = 0.5


def _run_task(item: tuple[PointTask, int]) -> PointOutcome:
    """The Spark task: module-level, so executors import it rather than unpickle a closure."""
    task, attempt = item
    keep_freed_memory()  # a Python worker of this job's tasks: its points reuse the pages earlier ones touched
    return run_point(task, attempt)


class SparkRunner:
    """Points as tasks on ``master``; the session starts on first use and is reused for retries.

    A session this runner starts is stopped by :meth:`close`; one that was already running in the
    process (a notebook's) is left running, and must be on the same master.
    """

    def __init__(self, master: str) -> None:
        self.master = master
        self._session: Any = None
        self._owned = False

    def run(self, tasks: Sequence[PointTask], attempt: int, progress: Progress) -> list[PointOutcome]:
        """Run one task per point and collect their outcomes, moving ``progress`` as tasks finish."""
        sc = self._context()
        rdd = sc.parallelize([(task, attempt) for task in tasks], len(tasks)).map(_run_task)
        outcomes: list[PointOutcome] = _collect(sc, rdd, progress)
        return outcomes

    def close(self) -> None:
        """Stop the session if this runner started it."""
        if self._session is not None and self._owned:
            self._session.stop()
        self._session = None

    def _context(self) -> Any:
        if self._session is None:
            from pyspark.sql import SparkSession

            from workbench.workload.spark import get_spark

            active = SparkSession.getActiveSession()
            if active is not None and active.sparkContext.master != self.master:
                raise InputError("master", f"this process already runs a Spark session on "
                                           f"{active.sparkContext.master}, not {self.master}; stop it first "
                                           "(workbench.workload.spark.stop_spark)")
            self._owned = active is None
            self._session = active or get_spark(self.master, app_name="workbench-sweep")
        return self._session.sparkContext


def _collect(sc: Any, rdd: Any, progress: Progress) -> list[Any]:
    """``rdd.collect()`` in a helper thread while this one reports finished tasks to ``progress``."""
    group = f"workbench-sweep-{uuid.uuid4().hex}"
    with ThreadPoolExecutor(1, thread_name_prefix="sweep-collect") as pool:
        future = pool.submit(_collect_in_group, sc, rdd, group)
        seen = 0
        while not wait([future], timeout=_POLL_S).done:
            seen = _advance(progress, seen, _finished_tasks(sc, group))
        rows: list[Any] = future.result()
    _advance(progress, seen, len(rows))
    return rows


def _collect_in_group(sc: Any, rdd: Any, group: str) -> list[Any]:
    sc.setJobGroup(group, "workbench sweep points")
    return list(rdd.collect())


def _finished_tasks(sc: Any, group: str) -> int:
    tracker = sc.statusTracker()
    total = 0
    for job_id in tracker.getJobIdsForGroup(group):
        job = tracker.getJobInfo(job_id)
        for stage_id in job.stageIds if job is not None else ():
            stage = tracker.getStageInfo(stage_id)
            total += stage.numCompletedTasks if stage is not None else 0
    return int(total)


def _advance(progress: Progress, seen: int, finished: int) -> int:
    if finished > seen:
        progress.update(finished - seen)
    return max(seen, finished)
