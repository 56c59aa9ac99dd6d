"""Spark generation of events, the segments Pinot would cut from them, and the queries against them.

The pipeline (:mod:`workbench.workload.engine`) is a list of independent tasks; here Spark runs
them: one Spark task per block of events (pass A) and per ingestion window (pass B), executed by
``mapInArrow`` in the executors' Python workers, which draw with numpy, hash with the real Pinot
partition functions and write their Parquet part file with pyarrow straight into the output
directory. The driver only plans and collects small results. Every task's output is a pure function
of ``(spec, seed, table config, task index)``, so the same seed gives byte-identical files on
``local[1]``, ``local[2]`` or a cluster.

Executors write into the output directory, so on a multi-host cluster it must be on a filesystem
every executor mounts at the same path (as for any Spark job writing ``file:`` paths).

Output layout (``docs/data.md``)::

    OUT/events/part-NNNNN.parquet   one row per event, grouped by segment, in doc order
    OUT/segments.parquet            one row per segment, with the metadata Pinot records
    OUT/queries.parquet             one row per query: SQL text, arrival time, kind, template
    OUT/manifest.json               parameters, seed, row counts, checksums (written last)
"""

from __future__ import annotations

import pickle
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from workbench.pinot.schema import Schema
from workbench.pinot.table_config import TableConfig
from workbench.workload.engine import PROGRESS_EVENTS, run_generation
from workbench.workload.schema import SCHEMA_VERSION
from workbench.workload.segments import llc_segment_name
from workbench.workload.spec import GenerateSpec

__all__ = ["SCHEMA_VERSION", "SparkExecutor", "generate_events", "llc_segment_name"]

T = TypeVar("T")
_POLL_S = 0.5


def _task_runner(fn: Callable[[int], Any]) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The ``mapInArrow`` function: run ``fn`` on each index it is given, return pickled results."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            for index in batch.column(0).to_pylist():
                payload = pickle.dumps(fn(index), protocol=pickle.HIGHEST_PROTOCOL)
                yield pa.RecordBatch.from_arrays([pa.array([index], pa.int64()), pa.array([payload], pa.binary())],
                                                 names=["item", "payload"])

    return run


class SparkExecutor:
    """Runs pipeline tasks as Spark tasks, with an optional progress bar.

    Parameters
    ----------
    spark
        The session.
    progress
        Draw a progress bar (Spark tasks done) on stderr.
    tasks
        Spark tasks per pass; each runs a contiguous range of pipeline indices. ``None`` uses twice
        the session's default parallelism, which keeps every core busy without paying Spark's
        per-task cost (most of a second on a loaded machine) once per block. The output does not
        depend on it.
    """

    name = "spark"

    def __init__(self, spark: Any, progress: bool = False, tasks: int | None = None) -> None:
        self.spark = spark
        self.progress = progress
        self.tasks = tasks

    def _task_count(self, count: int) -> int:
        if self.tasks is not None:
            return max(1, min(count, self.tasks))
        try:
            slots = int(self.spark.sparkContext.defaultParallelism)
        except Exception:  # Spark Connect: no SparkContext; one task per index
            return count
        return max(1, min(count, 2 * slots))

    def map(self, fn: Callable[[int], T], count: int, label: str) -> list[T]:
        """Run ``fn(0..count-1)`` as Spark tasks; results come back pickled, in index order."""
        if count == 0:
            return []
        tasks = self._task_count(count)
        frame = self.spark.range(0, count, 1, numPartitions=tasks)
        result = frame.mapInArrow(_task_runner(fn), "item long, payload binary")
        table = self._collect_with_progress(result, tasks, label) if self.progress else result.toArrow()
        items = table.column("item").to_pylist()
        payloads = table.column("payload").to_pylist()
        by_item = dict(zip(items, payloads, strict=True))
        return [pickle.loads(by_item[i]) for i in range(count)]

    def _collect_with_progress(self, result: Any, count: int, label: str) -> Any:
        """Collect on a helper thread while this thread draws the bar from Spark's status tracker."""
        from tqdm import tqdm

        sc = self.spark.sparkContext
        group = f"workbench-generate-{label}-{time.monotonic_ns()}"
        box: dict[str, Any] = {}

        def collect() -> None:
            sc.setJobGroup(group, f"workbench generate: {label}")
            try:
                box["table"] = result.toArrow()
            except BaseException as exc:  # re-raised on the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=collect, daemon=True)
        worker.start()
        tracker = sc.statusTracker()
        with tqdm(total=count, desc=label, unit="task", file=sys.stderr) as bar:
            while worker.is_alive():
                worker.join(_POLL_S)
                done = sum(info.numCompletedTasks for job in tracker.getJobIdsForGroup(group)
                           if (job_info := tracker.getJobInfo(job)) is not None
                           for stage in job_info.stageIds if (info := tracker.getStageInfo(stage)) is not None)
                bar.update(max(0, min(done, count) - bar.n))
            bar.update(count - bar.n)
        if "error" in box:
            raise box["error"]
        return box["table"]

    def describe(self) -> dict[str, Any]:
        """What ran the generation, for the manifest: the master and Spark's version."""
        try:
            master = self.spark.sparkContext.master
        except Exception:  # Spark Connect sessions have no SparkContext
            master = self.spark.conf.get("spark.master", "unknown")
        return {"engine": "spark", "spark_master": master, "spark_version": self.spark.version}


def generate_events(
    spark: Any, spec: GenerateSpec, out: Path, *, table: str = "events", seed: int | None = None,
    overwrite: bool = False, table_config: TableConfig | None = None, progress: bool | None = None,
    schema: Schema | None = None,
) -> dict[str, Any]:
    """Generate events, segments and queries with Spark into ``out``; return the manifest.

    Parameters
    ----------
    spark
        A Spark session (:func:`workbench.workload.spark.get_spark`); any master.
    spec
        The ``workload.generate`` section.
    out
        Output directory; it appears only when complete, and an existing one is replaced only when
        ``overwrite`` is true.
    table
        Raw table name used in segment names and SQL when there is no ``table_config``.
    seed
        Seed of every random stream; ``None`` takes the spec's seed, then 0.
    table_config
        The scenario's Pinot table config: partition columns and functions (stream routing and
        segment partition metadata), table type (realtime or offline segments), upsert comparison
        column. Without it: a realtime table partitioned by ``Murmur`` of ``key``, no metadata.
    progress
        Show progress bars on stderr; ``None`` shows them for a million events or more on a terminal.
    schema
        The scenario's Pinot schema: with the spec's ``from_schema`` the rows have its columns and types
        and the queries filter on them (:mod:`workbench.workload.user_schema`); otherwise unused.

    Returns
    -------
    dict
        The manifest (also written to ``out/manifest.json``).
    """
    chosen = seed if seed is not None else (spec.seed if spec.seed is not None else 0)
    show = progress if progress is not None else (spec.events >= PROGRESS_EVENTS and sys.stderr.isatty())
    return run_generation(SparkExecutor(spark, show), spec, Path(out), table=table, table_config=table_config,
                          seed=chosen, overwrite=overwrite, schema=schema)
