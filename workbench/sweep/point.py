"""One sweep point: a picklable task in, an outcome out, its run directory written on the way.

A point is a pure function of (base scenario data, overrides, seed): the task carries the point's
scenario as the sweep validated it (it pickles), so the same point gives the same numbers in the driver,
in a spawned worker process or in a Spark executor, and is validated once. :func:`run_point` never
raises for a failing point; it reports the failure in its outcome and in ``error.txt``, so one bad point
cannot take the sweep down or vanish from it.
"""

from __future__ import annotations

import json
import shutil
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.api import SUMMARY_FILE
from workbench.errors import InputError
from workbench.io import redact
from workbench.io.run_dir import RunDir, RunRecord
from workbench.runs import check_seed, resolve
from workbench.scenario import Scenario
from workbench.studies.day import run_at_worst
from workbench.sweep.notebook import execute_point_notebook
from workbench.sweep.task import ERROR_FILE, NOTEBOOK_FILE, PointOutcome, PointTask

__all__ = ["PointOutcome", "PointTask", "load_done", "run_point", "simulate_point"]


def simulate_point(
    scenario: str | Path | Mapping[str, Any],
    overrides: Mapping[str, Any],
    out_dir: str | Path,
    *,
    seed: int | None = None,
    base_dir: str | Path | None = None,
    checked: Scenario | None = None,
) -> RunRecord:
    """Simulate one point and write its run directory; returns what ``summary.json`` holds.

    The one function both sweep paths call: the direct path in a worker, and a sweep notebook's
    cell (``summary = simulate_point(scenario, overrides, out_dir, seed=seed)``), so a notebook
    sweep and an API sweep give the same records.

    Parameters
    ----------
    scenario
        Base scenario file or mapping.
    overrides
        Dotted-key overrides (``{"cluster.servers": 12}``).
    out_dir
        Run directory, replaced atomically (Parquet records and ``summary.json``).
    seed
        Simulation seed; ``None`` keeps the scenario's ``simulation.seed``.
    base_dir
        Where relative paths of a mapping scenario point (a file's own directory otherwise).
    checked
        The point's scenario as the sweep already validated it (``scenario`` with ``overrides``): it runs
        as it is, and ``overrides`` are only recorded, so the point is not validated a second time.

    A scenario with a day profile (``workload.profile``) is sized for its worst hour: the point runs at
    the profile's peak (a tenant's: each of its worst hours, keeping the worst), as
    :func:`workbench.studies.day.run_at_worst` says; the run's recorded scenario holds that load.
    """
    check_seed(seed)
    sc = checked if checked is not None else resolve(scenario, overrides, base_dir)
    return run_at_worst(sc, out_dir, overrides=overrides, seed=seed, overwrite=True)


def run_point(task: PointTask, attempt: int = 1) -> PointOutcome:
    """Run one attempt at a point from a clean directory; never raises for a failing point."""
    point_dir = Path(task.out_dir)
    shutil.rmtree(point_dir, ignore_errors=True)
    try:
        summary, failure = _execute(task)
    except Exception as exc:  # a failing point is recorded, not propagated (the sweep goes on)
        summary, failure = None, (f"{type(exc).__name__}: {exc}", traceback.format_exc())
    if summary is not None:
        return PointOutcome(task.point_id, "ok", attempt, summary=summary)
    assert failure is not None
    _record_failure(point_dir, failure[1])
    return PointOutcome(task.point_id, "failed", attempt, error=failure[0])


def _execute(task: PointTask) -> tuple[RunRecord | None, tuple[str, str] | None]:
    """Run the point through the API (which returns its summary) or its notebook (which writes it).

    Returns ``(summary, None)``, or ``(None, (one line, full text))`` for a failed notebook cell or a
    notebook that wrote no usable summary.
    """
    if task.notebook is None:
        return simulate_point(task.base, task.overrides, task.out_dir, seed=task.seed, base_dir=task.base_dir,
                              checked=task.scenario), None
    failure = execute_point_notebook(task)
    if failure is not None:
        return None, failure
    summary, problem = _read_summary(Path(task.out_dir))
    return (summary, None) if summary is not None else (None, (problem or "", problem or ""))


def _read_summary(point_dir: Path) -> tuple[RunRecord | None, str | None]:
    """The point's ``summary.json``, or why it is not a usable one."""
    run = RunDir(point_dir)
    if not run.is_run():
        return None, f"finished without writing {SUMMARY_FILE} into out_dir ({point_dir})"
    try:
        data = json.loads(run.summary_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return None, f"{SUMMARY_FILE} is not valid JSON: {exc.msg}"
    try:
        return RunRecord.from_json(data, SUMMARY_FILE), None
    except InputError as exc:
        return None, str(exc)


def _record_failure(point_dir: Path, detail: str) -> None:
    """Leave the failure's full text beside anything the point wrote, and withdraw its summary.

    A summary written before a later notebook cell failed is not trusted: removing it means a
    resumed sweep runs the point again instead of counting it as done.
    """
    point_dir.mkdir(parents=True, exist_ok=True)
    RunDir(point_dir).withdraw()
    (point_dir / ERROR_FILE).write_text(detail.rstrip() + "\n", encoding="utf-8")


def load_done(task: PointTask) -> PointOutcome | None:
    """The outcome of a point finished by an earlier run of this sweep, or ``None`` to run it.

    Raises
    ------
    InputError
        When the directory holds a different point (the sweep file changed under the same output),
        since mixing the two would silently combine results of different configurations.
    """
    point_dir = Path(task.out_dir)
    if task.notebook is not None and not (point_dir / NOTEBOOK_FILE).is_file():
        return None
    summary, _ = _read_summary(point_dir)
    if summary is None:
        return None
    recorded = (_normal(summary.overrides), summary.seed)
    if recorded != (_normal(redact(task.overrides)), task.seed):  # summary.json holds them redacted
        raise InputError(str(point_dir), f"holds another point (overrides {recorded[0]}, seed {recorded[1]}) than "
                                         f"the sweep's {task.point_id} (overrides {task.overrides}, seed {task.seed}); "
                                         "resume with the same sweep file or write to a new --out")
    return PointOutcome(task.point_id, "ok", 0, summary=summary)


def _normal(value: Any) -> Any:
    """``value`` as it reads back from ``summary.json`` (tuples become lists, keys strings)."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))
