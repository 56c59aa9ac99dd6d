"""The sizing report's studies: every run the report of a sweep reads besides the sweep's own points.

The report recommends a configuration and then asks what happens when things change: the what-ifs of
the recommendation, its headroom, the cheapest configuration that survives a lost server, and the
rebalance to the recommendation and to the next size up (:mod:`workbench.report.whatif`). Those are
runs of the model, so they are made here, before the report, by walking the report's own searches
with a fetch that runs (:func:`~workbench.studies.whatif.run_whatif`) instead of one that reads: the
report then finds every run it asks for, in the same order, and never simulates. ``workbench studies
SWEEP`` and ``workbench sweep`` (after its points) call :func:`run_sizing_studies`.

Written under the sweep directory::

    whatif/POINT/NAME/          one run directory per what-if (summary.json and its records)
    whatif/POINT/movement.json  the rebalance plans of the recommended point, per step
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from workbench.io import write_json_atomic
from workbench.report.data import SizingData, load_sizing_data, recommend, workload_of
from workbench.report.findings import candidates
from workbench.report.options import ReportOptions
from workbench.report.whatif import (
    WhatIf,
    cheapest_surviving,
    headroom,
    movement_path,
    movement_steps,
    point_of,
    whatif_table,
)
from workbench.studies.scale_out import rebalance_layout
from workbench.studies.whatif import run_whatif

__all__ = ["run_sizing_studies", "write_movement"]


def run_sizing_studies(sweep_dir: str | Path, options: ReportOptions | None = None) -> Path | None:
    """Run every what-if the sizing report of ``sweep_dir`` reads; returns the recommended point's
    what-if directory (``None`` when no configuration meets the SLO: there is nothing to ask of it).

    ``options`` replaces the report options the sweep recorded, as for the report itself.
    """
    d = load_sizing_data(sweep_dir, options)
    best, _ = recommend(d.combined)
    if best is None:
        return None
    whatif_table(d, best, fetch=run_whatif)
    headroom(d, best, fetch=run_whatif)
    if d.options.whatif:
        cheapest_surviving(d, candidates(d), fetch=run_whatif)
    write_movement(d, best)
    return point_of(d, best)[1]


def write_movement(d: SizingData, best: pd.Series) -> Path:
    """Pinot's rebalance plan for each of :func:`~workbench.report.whatif.movement_steps`, and the run on
    the first one's rebalanced ideal state (p99 once the move is done), as ``movement.json``."""
    sc, scratch, seed = point_of(d, best)
    data = workload_of(d.base_scenario)
    has_segments = data is not None and data.has_segments()
    steps: list[dict[str, Any]] = []
    for i, (before, after, label) in enumerate(movement_steps(d, best) if has_segments else []):
        plan, total = rebalance_layout(sc.with_overrides({"cluster.servers": before}), after,
                                       data=data.path if data is not None else None)
        run = None
        if i == 0:
            moved = WhatIf(f"rebalanced-{before}-to-{after}", f"rebalanced to {after}", {"cluster.servers": after},
                           ideal_state=plan.assignment)
            run_whatif(sc, moved, scratch / moved.name, seed)
            run = moved.name
        steps.append({"label": label, "before": before, "after": after, "segments_moved": plan.segments_moved,
                      "bytes_moved": plan.bytes_moved, "table_bytes": total,
                      "minimize_data_movement": plan.minimize_data_movement, "rows": plan.table_rows(), "run": run})
    path = movement_path(d, best)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {"point": str(best["point"]), "steps": steps})
    return path
