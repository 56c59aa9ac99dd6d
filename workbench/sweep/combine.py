"""The sweep's combined table and failure list: one row per point, failed points included.

A failed point keeps its row (``status="failed"`` and its ``error``) so a sweep can never look
complete while missing a configuration; ``failures.json`` lists the same points with their
overrides. Both files are written atomically, so a reader never sees half a table.

>>> from workbench.io.summary import EXAMPLE, Summary
>>> row = point_row("point-000", {"cluster.servers": 4}, 7, "ok", None, Summary.from_json(EXAMPLE))
>>> {k: row[k] for k in ("point", "status", "error", "seed", "param.cluster.servers", "latency_ms.p99.value")}
{'point': 'point-000', 'status': 'ok', 'error': None, 'seed': 7, 'param.cluster.servers': 4, \
'latency_ms.p99.value': 30.0}
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.io import atomic_file, write_json_atomic
from workbench.io.redact import REDACTED, is_secret_key
from workbench.io.summary import Summary
from workbench.sweep.spec import Point
from workbench.sweep.task import PointOutcome

__all__ = ["COMBINED_FILE", "FAILURES_FILE", "combine", "point_row", "write_combined"]

COMBINED_FILE = "combined.parquet"
FAILURES_FILE = "failures.json"


def point_row(
    point_id: str, overrides: Mapping[str, Any], seed: int, status: str, error: str | None,
    summary: Summary | None,
) -> dict[str, Any]:
    """One row of the combined table: identity, status, ``param.<key>`` per override, the summary's columns
    (:meth:`~workbench.io.summary.Summary.columns`)."""
    row: dict[str, Any] = {"point": point_id, "status": status, "error": error, "seed": seed}
    row.update({f"param.{key}": _cell(REDACTED if is_secret_key(key) else value) for key, value in overrides.items()})
    row.update(summary.columns() if summary is not None else {})
    return row


def _cell(value: Any) -> Any:
    """Scalars stay as they are; a list or mapping override becomes its JSON text (one Parquet type)."""
    return json.dumps(value, sort_keys=True) if isinstance(value, Mapping | list) else value


def combine(points: Sequence[Point], outcomes: Mapping[str, PointOutcome]) -> pd.DataFrame:
    """The combined table, in point order, from each point's final outcome."""
    rows = []
    for p in points:
        o = outcomes[p.point_id]
        summary = o.summary.summary if o.summary is not None else None
        rows.append(point_row(p.point_id, p.overrides, p.seed, o.status, o.error, summary))
    return _one_type_per_column(_params_first(pd.DataFrame(rows)))


def _params_first(frame: pd.DataFrame) -> pd.DataFrame:
    """Identity, then every ``param.`` column (points may override different keys), then metrics."""
    names = [str(c) for c in frame.columns]
    params = [c for c in names if c.startswith("param.")]
    return frame[[*names[:4], *params, *(c for c in names[4:] if c not in params)]]


def _one_type_per_column(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns mixing Python types (``[4, "auto"]``) become text, which Parquet can store."""
    for name in frame.select_dtypes(include="object").columns:
        kinds = {type(v) for v in frame[name] if v is not None and v == v}
        if len(kinds) > 1:
            frame[name] = frame[name].map(lambda v: None if v is None else str(v))
    return frame


def write_combined(out_dir: Path, points: Sequence[Point], outcomes: Mapping[str, PointOutcome]) -> pd.DataFrame:
    """Write ``combined.parquet`` and ``failures.json`` (empty when all points ran); returns the table."""
    table = combine(points, outcomes)
    _write_parquet_atomic(table, out_dir / COMBINED_FILE)
    write_json_atomic(out_dir / FAILURES_FILE, failure_list(points, outcomes))
    return table


def failure_list(points: Sequence[Point], outcomes: Mapping[str, PointOutcome]) -> list[dict[str, Any]]:
    """The failed points, each with its overrides, attempts and last error."""
    return [
        {"point": p.point_id, "overrides": p.overrides, "seed": p.seed, "attempts": o.attempt, "error": o.error}
        for p in points
        if not (o := outcomes[p.point_id]).ok
    ]


def _write_parquet_atomic(table: pd.DataFrame, path: Path) -> None:
    with atomic_file(path) as tmp:
        table.to_parquet(tmp, index=False)
