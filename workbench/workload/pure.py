"""The generator without Spark: the same tasks run in a loop in this process.

Unit tests, notebooks and small what-ifs use this to get a workload in a second or two, with exactly
the schema (and, for the same seed and spec, exactly the bytes) the Spark generator writes: both run
the tasks of :mod:`workbench.workload.engine`, and a task's output depends only on its index.

>>> from workbench.workload.spec import GenerateSpec
>>> w = generate_frames(GenerateSpec(events=2_000, keys=50, partitions=2, segment_rows=600), seed=3)
>>> len(w.events), w.segments.groupby("partition")["status"].apply(lambda s: (s == "IN_PROGRESS").sum()).tolist()
(2000, [1, 1])
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from workbench.pinot.schema import Schema
from workbench.pinot.table_config import TableConfig
from workbench.workload.engine import PROGRESS_EVENTS, run_generation
from workbench.workload.spec import GenerateSpec

__all__ = ["LocalExecutor", "Workload", "generate_frames", "generate_local"]

T = TypeVar("T")


class LocalExecutor:
    """Runs tasks one after another in this process, with an optional progress bar."""

    name = "local"

    def __init__(self, progress: bool = False) -> None:
        self.progress = progress

    def map(self, fn: Callable[[int], T], count: int, label: str) -> list[T]:
        """Run ``fn(0..count-1)`` in order."""
        if not self.progress:
            return [fn(i) for i in range(count)]
        from tqdm import tqdm

        return [fn(i) for i in tqdm(range(count), desc=label, unit="task", file=sys.stderr)]

    def describe(self) -> dict[str, Any]:
        """What ran the generation, for the manifest."""
        return {"engine": "local"}


def _auto_progress(spec: GenerateSpec, progress: bool | None) -> bool:
    return progress if progress is not None else (spec.events >= PROGRESS_EVENTS and sys.stderr.isatty())


def generate_local(
    spec: GenerateSpec, out: str | Path, *, table: str = "events", table_config: TableConfig | None = None,
    seed: int | None = None, overwrite: bool = False, progress: bool | None = None, schema: Schema | None = None,
) -> dict[str, Any]:
    """Generate a workload directory in this process (no Spark); returns the manifest.

    Parameters are those of :func:`workbench.workload.generate.generate_events`; ``seed`` defaults to
    the spec's seed, then 0.
    """
    chosen = seed if seed is not None else (spec.seed if spec.seed is not None else 0)
    return run_generation(LocalExecutor(_auto_progress(spec, progress)), spec, Path(out), table=table,
                          table_config=table_config, seed=chosen, overwrite=overwrite, schema=schema)


@dataclass(frozen=True)
class Workload:
    """A generated workload read back as pandas frames (the layout of ``docs/data.md``)."""

    events: pd.DataFrame
    segments: pd.DataFrame
    queries: pd.DataFrame
    manifest: dict[str, Any]


def generate_frames(
    spec: GenerateSpec, *, table: str = "events", table_config: TableConfig | None = None, seed: int | None = None,
    schema: Schema | None = None,
) -> Workload:
    """Generate a (small) workload in memory: events sorted by ``event_id`` (``$event_id`` from a schema),
    segments, queries."""
    with tempfile.TemporaryDirectory(prefix="workbench-gen-") as tmp:
        out = Path(tmp) / "workload"
        manifest = generate_local(spec, out, table=table, table_config=table_config, seed=seed, progress=False,
                                  schema=schema)
        order = "event_id" if not manifest["columns"].get("from_schema") else "$event_id"
        events = pd.read_parquet(out / "events").sort_values(order, ignore_index=True)
        return Workload(events, pd.read_parquet(out / "segments.parquet"),
                        pd.read_parquet(out / "queries.parquet"), manifest)
