"""The generation pipeline, independent of what runs its tasks (Spark, or a plain loop).

::

    driver: build_context ─▶ pass A (one task per block) ─▶ plan_segments ─▶ pass B (one task per window)
            ─▶ segments.parquet, queries.parquet ─▶ manifest.json (last)

Pass A tasks draw events and stage them by ingestion window; the driver turns their counts into the
segment chain of every stream partition and into event-id and offset bases; pass B tasks order,
number and place each window's rows and write ``events/part-NNNNN.parquet``. Tasks communicate only
through the context they are given, the staging directory and their small return values, so an
:class:`Executor` can run them anywhere that sees the output directory: in-process
(:mod:`workbench.workload.pure`) or as Spark tasks (:mod:`workbench.workload.generate`). Because a
task's output depends only on its index, the result is byte-identical whatever runs it.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from workbench.io import atomic_dir, write_json_atomic
from workbench.pinot.schema import Schema
from workbench.pinot.table_config import TableConfig
from workbench.workload.context import Context, PartitionColumn, build_context
from workbench.workload.events import run_block
from workbench.workload.queries import generate_queries, query_window, templates_of
from workbench.workload.rows import run_window
from workbench.workload.schema import SCHEMA_VERSION
from workbench.workload.segments import plan_segments, segments_table
from workbench.workload.spec import GenerateSpec, spec_to_json
from workbench.workload.user_schema import BOOKKEEPING

__all__ = ["Executor", "read_segment_rows", "run_generation"]

T = TypeVar("T")
#: Generations at least this large show a progress bar when stderr is a terminal.
PROGRESS_EVENTS = 1_000_000


class Executor(Protocol):
    """Runs ``fn(0) ... fn(count - 1)`` (in any order, anywhere) and returns the results in index order."""

    name: str

    def map(self, fn: Callable[[int], T], count: int, label: str) -> list[T]: ...

    def describe(self) -> dict[str, Any]: ...


def _checksums(root: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))):
        yield str(path.relative_to(root)), hashlib.sha256(path.read_bytes()).hexdigest()


def _function_json(p: PartitionColumn) -> dict[str, Any]:
    return {"column": p.column, "source": p.source, "functionName": p.function,
            "numPartitions": p.num_partitions,
            "functionConfig": None if p.function_config is None else dict(p.function_config)}


def _columns(ctx: Context) -> dict[str, Any]:
    """The roles of the events' columns (what readers such as the upsert replay look up by role)."""
    partitions = {"stream_partition": _function_json(ctx.stream),
                  "table_partitions": [_function_json(p) for p in ctx.table_partitions]}
    if ctx.user is None:
        return {"time": ctx.time_column, "comparison": ctx.comparison_column, "primary_key": "key",
                "key_id": "key_id", "delete": "is_delete", "aliases_of_key": list(ctx.alias_columns), **partitions}
    us = ctx.user
    return {"from_schema": True, "time": us.time_column, "comparison": us.comparison,
            "primary_key": us.primary_key[0] if us.primary_key else None, "primary_keys": list(us.primary_key),
            "key_id": BOOKKEEPING["key_id"], "delete": BOOKKEEPING["is_delete"], "aliases_of_key": [],
            "generated": [c.name for c in us.columns], "left_to_pinot": list(us.left_to_pinot),
            "bookkeeping": dict(BOOKKEEPING), **partitions}


def _manifest(ctx: Context, executor: Executor, counts: dict[str, int], started: float) -> dict[str, Any]:
    q_start, q_duration = query_window(ctx)
    return {
        "schema_version": SCHEMA_VERSION,
        "generator": "workbench.workload",
        "table": ctx.table,
        "table_type": ctx.table_type,
        "seed": ctx.seed,
        "mode": ctx.mode,
        "parameters": spec_to_json(ctx.spec),
        "row_counts": counts,
        "keys": ctx.keys_total,
        "time": {"start_ms": ctx.t0_ms, "end_ms": ctx.t_end_ms, "queries_start_ms": q_start,
                 "queries_duration_s": q_duration, "arrival_bin_ms": ctx.bin_ms},
        "columns": _columns(ctx),
        "query_templates": [{"template_id": t.id, "kind": t.kind, "sql": t.sql} for t in templates_of(ctx)],
        "executor": executor.describe(),
        "elapsed_s": round(time.time() - started, 3),
    }


def run_generation(
    executor: Executor, spec: GenerateSpec, out: Path, *, table: str, table_config: TableConfig | None,
    seed: int, overwrite: bool, blocks: tuple[int, int] | None = None, schema: Schema | None = None,
) -> dict[str, Any]:
    """Generate events, segments and queries into ``out`` with ``executor``; return the manifest.

    The output appears at ``out`` only when complete (a temporary sibling renamed at the end), and an
    existing ``out`` is replaced only when ``overwrite`` is true. ``manifest.json`` is written last.

    Parameters
    ----------
    executor
        Runs the tasks: :class:`~workbench.workload.pure.LocalExecutor` or
        :class:`~workbench.workload.generate.SparkExecutor`. It must see ``out``'s parent directory.
    spec, table, table_config, seed, schema
        What to generate (see :func:`~workbench.workload.generate.generate_events`).
    overwrite
        Replace an existing ``out``.
    blocks
        For tests only (see :func:`~workbench.workload.context.build_context`).

    Raises
    ------
    InputError
        ``out`` exists and ``overwrite`` is false, or the spec cannot be generated for the table.
    """
    started = time.time()
    ctx = build_context(spec, table=table, table_config=table_config, seed=seed, blocks=blocks, schema=schema)
    with atomic_dir(Path(out), overwrite=overwrite) as tmp:
        stage, events = tmp / "_stage", tmp / "events"
        events.mkdir()
        counts = executor.map(partial(run_block, ctx, str(stage)), ctx.n_blocks, "events")
        plan = plan_segments(ctx, counts)
        stats = executor.map(partial(run_window, ctx, plan, str(stage), str(events)), ctx.n_windows, "segments")
        shutil.rmtree(stage, ignore_errors=True)
        segments = segments_table(ctx, plan, stats)
        pq.write_table(segments, tmp / "segments.parquet", store_schema=False)
        queries = generate_queries(ctx)
        pq.write_table(queries, tmp / "queries.parquet", store_schema=False)
        rows = {"events": plan.total_events, "segments": segments.num_rows, "queries": queries.num_rows}
        manifest = _manifest(ctx, executor, rows, started)
        manifest["checksums"] = dict(_checksums(tmp))
        write_json_atomic(tmp / "manifest.json", manifest)
    return manifest


def read_segment_rows(out: str | Path, segments: Sequence[str], columns: Sequence[str] | None = None) -> pa.Table:
    """The rows of the named segments from a workload directory, in (segment, doc id) order.

    Reads only what the filter needs: every part file holds a segment's rows contiguously.
    """
    dataset = ds.dataset(Path(out) / "events", format="parquet")
    wanted = list(columns) if columns is not None else None
    if wanted is not None:
        wanted = list(dict.fromkeys([*wanted, "segment_name", "doc_id"]))
    table = dataset.to_table(columns=wanted, filter=ds.field("segment_name").isin(list(segments)))
    return table.sort_by([("segment_name", "ascending"), ("doc_id", "ascending")])
