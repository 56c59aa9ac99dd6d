"""The sizing report's studies: every run the report of a sweep reads besides the sweep's own points.

First every configuration that meets the SLO is run in the failure it must survive (``slo.survive``,
:mod:`workbench.report.survival`), since the recommendation is the cheapest that meets the SLO in both.
The report then asks what happens when things change: the what-ifs of the recommendation, its
headroom, its assumptions at the ends of their plausible range (:mod:`workbench.report.assumptions`),
and the rebalance to the recommendation and to the next size up (:mod:`workbench.report.whatif`). Those are
runs of the model, so they are made here, before the report, by walking the report's own searches
with a fetch that runs (:func:`~workbench.studies.whatif.run_whatif`) instead of one that reads: the
report then finds every run it asks for, in the same order, and never simulates. ``workbench studies
SWEEP`` and ``workbench sweep`` (after its points) call :func:`run_sizing_studies`.

Written under the sweep directory::

    whatif/POINT/NAME/          one run directory per what-if (summary.json and its records)
    whatif/POINT/movement.json  the rebalance plans of the recommended point, per step
    whatif/POINT/after-loss.json  the rebalance (or replacement) after the point loses a server
    whatif/studies.json         how many failure-case and assumption runs the studies made and their time
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.io import write_json_atomic
from workbench.io.tables import read_json_file
from workbench.report.assumptions import assumption_checks
from workbench.report.data import SizingData, load_sizing_data, meeting, recommend, workload_of
from workbench.report.findings import cheaper_than
from workbench.report.options import ReportOptions
from workbench.report.survival import survival_frame, with_survival
from workbench.report.tenant import table_effects
from workbench.report.whatif import (
    STUDIES_FILE,
    WHATIF_DIR,
    WhatIf,
    headroom,
    movement_path,
    movement_steps,
    point_of,
    whatif_table,
)
from workbench.studies.scale_out import rebalance_layout
from workbench.studies.survival import plan_after_loss, run_failure_case
from workbench.studies.whatif import run_whatif

__all__ = ["run_sizing_studies", "studies_note", "write_movement"]


def run_sizing_studies(sweep_dir: str | Path, options: ReportOptions | None = None) -> Path | None:
    """Run every what-if the sizing report of ``sweep_dir`` reads; returns the recommended point's
    what-if directory (``None`` when no configuration meets the SLO: there is nothing to ask of it).

    ``options`` replaces the report options the sweep recorded, as for the report itself.
    """
    d = load_sizing_data(sweep_dir, options)
    started = time.perf_counter()
    survivals = survival_frame(d, meeting(d.combined, every_load=True), fetch=run_failure_case, loss=plan_after_loss)
    spent = time.perf_counter() - started
    path = d.sweep_dir / WHATIF_DIR / STUDIES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    record: dict[str, Any] = {"failure_cases": {"configurations": len(survivals), "seconds": round(spent, 2),
                                                "runs": sum(len(s.rows) for s in survivals.values())}}
    write_json_atomic(path, record)
    best, _ = recommend(with_survival(d.combined, survivals))
    if best is None:
        return None
    whatif_table(d, best, fetch=run_whatif)
    headroom(d, best, fetch=run_whatif)
    table_effects(d, best, fetch=run_whatif)  # a tenant's: what each table adds to the others
    started = time.perf_counter()
    checks = assumption_checks(d, best, cheaper_than(d, best), fetch=run_failure_case, loss=plan_after_loss)
    record["assumptions"] = {"checked": len(checks), "seconds": round(time.perf_counter() - started, 2),
                             "runs": sum(len(c.rows_best) + len(c.rows_cheaper) for c in checks)}
    write_json_atomic(path, record)
    write_movement(d, best)
    return point_of(d, best)[1]


def studies_note(sweep_dir: str | Path) -> str | None:
    """One line on the failure-case runs of the last studies of ``sweep_dir`` (``None`` before any)."""
    path = Path(sweep_dir) / WHATIF_DIR / STUDIES_FILE
    if not path.is_file():
        return None
    record = read_json_file(path, "studies record")
    cases, assumed = record.get("failure_cases", {}), record.get("assumptions")
    text = (f"studies: {cases.get('configurations', 0)} configurations meeting the SLO run in their failure case "
            f"({cases.get('runs', 0)} runs, reused when on disk) in {cases.get('seconds', 0):.1f} s")
    if assumed:
        text += (f"; {assumed.get('checked', 0)} assumptions at the ends of their range ({assumed.get('runs', 0)} "
                 f"runs) in {assumed.get('seconds', 0):.1f} s")
    return text


def write_movement(d: SizingData, best: pd.Series) -> Path:
    """Pinot's rebalance plan for each of :func:`~workbench.report.whatif.movement_steps`, and the run on
    each one's rebalanced ideal state (p99 once the move is done), as ``movement.json``: the report's
    movement page and notebook 05 read them (:func:`~workbench.report.whatif.read_movement`)."""
    sc, scratch, seed = point_of(d, best)
    data = workload_of(d.base_scenario)
    estimated = data is None or not data.has_segments()  # sizes from document counts (scale_out.segment_sizes)
    steps: list[dict[str, Any]] = []
    for before, after, label in movement_steps(d, best):
        plan, total = rebalance_layout(sc.with_overrides({"cluster.servers": before}), after,
                                       data=data.path if data is not None else None)
        moved = WhatIf(f"rebalanced-{before}-to-{after}", f"rebalanced to {after}", {"cluster.servers": after},
                       ideal_state=plan.assignment)
        run_whatif(sc, moved, scratch / moved.name, seed)
        steps.append({"label": label, "before": before, "after": after, "segments_moved": plan.segments_moved,
                      "bytes_moved": plan.bytes_moved, "table_bytes": total, "estimated": estimated,
                      "minimize_data_movement": plan.minimize_data_movement, "rows": plan.table_rows(),
                      "run": moved.name})
    path = movement_path(d, best)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, {"point": str(best["point"]), "steps": steps})
    return path
