"""Write one workload directory from imported segments and queries (the layout of ``docs/data.md``).

The simulator replays a workload directory: ``segments.parquet`` gives the table's segments (the
layout the broker routes over) and ``queries.parquet`` the queries at their arrival times. Imports
write each table to its own directory; calibration writes them together, with the shared columns first
and exactly the shared Arrow types, so the directory is interchangeable with a generated one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.io import write_json_atomic
from workbench.workload.directory import WorkloadDir
from workbench.workload.importers.conform import arrow_schema
from workbench.workload.schema import QUERIES_SCHEMA, SCHEMA_VERSION, SEGMENTS_SCHEMA

__all__ = ["write_workload"]


def _write(frame: pd.DataFrame, shared: Any, path: Path) -> str:
    table = pa.Table.from_pandas(frame, schema=arrow_schema(frame, shared), preserve_index=False)
    pq.write_table(table, path)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_workload(directory: Path, segments: pd.DataFrame, queries: pd.DataFrame, table: str, table_type: str,
                   sources: Mapping[str, Any]) -> dict[str, Any]:
    """Write ``segments.parquet``, ``queries.parquet`` and, last, ``manifest.json`` into ``directory``.

    Returns the manifest: ``schema_version``, ``generator``, ``table``, ``table_type``, ``row_counts``,
    ``time`` (``queries_start_ms``: the first query's wall-clock arrival, and ``queries_duration_s``),
    ``sources`` (the imported files) and ``checksums`` (SHA-256 of each data file).
    """
    directory.mkdir(parents=True, exist_ok=True)
    out = WorkloadDir(directory)
    checksums = {out.segments_path.name: _write(segments, SEGMENTS_SCHEMA, out.segments_path),
                 out.queries_path.name: _write(queries, QUERIES_SCHEMA, out.queries_path)}
    start_ms = int(queries["now_ms"].iloc[0]) if len(queries) else -1
    span = float(queries["arrival_s"].iloc[-1]) if len(queries) else 0.0
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "generator": "workbench calibrate (imported segment metadata and broker query log)",
        "table": table,
        "table_type": table_type,
        "row_counts": {"events": 0, "segments": len(segments), "queries": len(queries)},
        "time": {"queries_start_ms": start_ms, "queries_duration_s": span},
        "sources": dict(sources),
        "checksums": checksums,
    }
    write_json_atomic(out.manifest_path, manifest)
    return manifest
