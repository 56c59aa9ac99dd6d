"""Parameter sweeps: a base scenario, a grid or list of overrides, one run directory per point.

Sweep file::

    base: default.yaml              # scenario, relative to the sweep file
    grid:                           # every combination (or `points:` a list of override mappings)
      cluster.servers: [6, 12]
      workload.arrival.qps: [50, 100]

Each point writes ``OUT/<point-id>/`` (Parquet records, ``summary.json`` with its overrides); then
``OUT/combined.parquet`` holds one row per point. Points whose ``summary.json`` exists are skipped,
so an interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from workbench.errors import InputError
from workbench.scenario import load_scenario

__all__ = ["expand_points", "run_sweep"]


def expand_points(sweep: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The override mappings of a sweep: the grid's cartesian product, or the explicit list.

    >>> expand_points({"grid": {"a": [1, 2], "b": ["x"]}})
    [{'a': 1, 'b': 'x'}, {'a': 2, 'b': 'x'}]
    """
    if "grid" in sweep:
        grid = sweep["grid"]
        if not isinstance(grid, Mapping) or not all(isinstance(v, list) and v for v in grid.values()):
            raise InputError("grid", "must map dotted keys to non-empty lists of values")
        keys = list(grid)
        return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]
    points = sweep.get("points")
    if not isinstance(points, list) or not all(isinstance(p, Mapping) for p in points):
        raise InputError("points", "give `grid:` (key -> list) or `points:` (a list of override mappings)")
    return [dict(p) for p in points]


def _point_id(i: int, overrides: Mapping[str, Any]) -> str:
    return f"point-{i:03d}"


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = value


def run_sweep(sweep_path: str | Path, out: str | Path) -> pd.DataFrame:
    """Run (or resume) a sweep and return its combined table, also written to ``combined.parquet``."""
    from workbench.api import write_run
    from workbench.sim.run import simulate

    path = Path(sweep_path)
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(spec, Mapping) or "base" not in spec:
        raise InputError(str(path), "a sweep needs `base:` (a scenario file) and `grid:` or `points:`")
    base = load_scenario(path.parent / str(spec["base"]))
    out_dir = Path(out)
    rows = []
    for i, overrides in enumerate(expand_points(spec)):
        point_dir = out_dir / _point_id(i, overrides)
        if not (point_dir / "summary.json").is_file():
            result = simulate(base.with_overrides(overrides))
            result.parameters["overrides"] = overrides
            write_run(result, point_dir, overwrite=True)
        summary = json.loads((point_dir / "summary.json").read_text(encoding="utf-8"))
        row: dict[str, Any] = {"point": point_dir.name, **{f"param.{k}": v for k, v in overrides.items()}}
        _flatten("", summary["summary"], row)
        rows.append(row)
    combined = pd.DataFrame(rows)
    out_dir.mkdir(parents=True, exist_ok=True)
    combined.to_parquet(out_dir / "combined.parquet", index=False)
    return combined
