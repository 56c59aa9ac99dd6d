"""One sweep point: a picklable task in, an outcome out, its run directory written on the way.

A point is a pure function of (base scenario data, overrides, seed): the task carries plain data
only, so the same point gives the same numbers in the driver, in a spawned worker process or in a
Spark executor. :func:`run_point` never raises for a failing point; it reports the failure in its
outcome and in ``error.txt``, so one bad point cannot take the sweep down or vanish from it.
"""

from __future__ import annotations

import json
import shutil
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.errors import InputError

__all__ = ["PointOutcome", "PointTask", "load_done", "run_point", "simulate_point"]

#: What a point's directory holds when its run failed (with a traceback or the notebook's error).
ERROR_FILE = "error.txt"
#: The executed notebook inside a point's directory (notebook sweeps only).
NOTEBOOK_FILE = "notebook.ipynb"
SUMMARY_FILE = "summary.json"


@dataclass(frozen=True)
class PointTask:
    """Everything one point needs, as plain data that pickles to a worker or a Spark executor.

    Attributes
    ----------
    point_id
        Directory name under the sweep's output (``point-003``).
    overrides
        Dotted-key scenario overrides of this point.
    seed
        Simulation seed (common to all points unless the grid overrides ``simulation.seed``).
    base
        The base scenario as data (``Scenario.to_dict()``, table config inlined).
    base_dir
        Directory that relative paths inside the base scenario are resolved against.
    out_dir
        The point's own directory (absolute), on a filesystem every worker can write.
    scenario_path
        The base scenario's file, handed to notebooks (``None`` when the base was inline).
    notebook
        Notebook to run through papermill, or ``None`` to call the API directly.
    """

    point_id: str
    overrides: dict[str, Any]
    seed: int
    base: dict[str, Any]
    base_dir: str
    out_dir: str
    scenario_path: str | None = None
    notebook: str | None = None


@dataclass(frozen=True)
class PointOutcome:
    """How one attempt at a point ended.

    ``summary`` is the point's ``summary.json`` when ``status == "ok"``; ``error`` is one line
    saying what went wrong when ``status == "failed"`` (the full text is in ``error.txt``).
    """

    point_id: str
    status: str
    attempt: int
    summary: dict[str, Any] | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the point finished and wrote its summary."""
        return self.status == "ok"


def simulate_point(
    scenario: str | Path | Mapping[str, Any],
    overrides: Mapping[str, Any],
    out_dir: str | Path,
    *,
    seed: int | None = None,
    base_dir: str | Path | None = None,
) -> dict[str, Any]:
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
    """
    from workbench.api import write_run
    from workbench.scenario import load_scenario
    from workbench.sim.run import simulate

    base = load_scenario(scenario, base_dir=Path(base_dir) if base_dir is not None else None)
    result = simulate(base.with_overrides(overrides), seed)
    result.parameters["overrides"] = dict(overrides)
    write_run(result, out_dir, overwrite=True)
    summary: dict[str, Any] = json.loads((Path(out_dir) / SUMMARY_FILE).read_text(encoding="utf-8"))
    return summary


def run_point(task: PointTask, attempt: int = 1) -> PointOutcome:
    """Run one attempt at a point from a clean directory; never raises for a failing point."""
    point_dir = Path(task.out_dir)
    shutil.rmtree(point_dir, ignore_errors=True)
    try:
        failure = _execute(task)
    except Exception as exc:  # a failing point is recorded, not propagated (the sweep goes on)
        failure = f"{type(exc).__name__}: {exc}", traceback.format_exc()
    if failure is None:
        summary, problem = _read_summary(point_dir)
        if summary is not None:
            return PointOutcome(task.point_id, "ok", attempt, summary=summary)
        failure = problem or "", problem or ""
    _record_failure(point_dir, failure[1])
    return PointOutcome(task.point_id, "failed", attempt, error=failure[0])


def _execute(task: PointTask) -> tuple[str, str] | None:
    """Run the point's notebook or the API; a notebook's failed cell comes back as (line, full text)."""
    if task.notebook is not None:
        from workbench.sweep.notebook import execute_point_notebook

        return execute_point_notebook(task)
    simulate_point(task.base, task.overrides, task.out_dir, seed=task.seed, base_dir=task.base_dir)
    return None


def _read_summary(point_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The point's ``summary.json``, or why it is not a usable one."""
    path = point_dir / SUMMARY_FILE
    if not path.is_file():
        return None, f"finished without writing {SUMMARY_FILE} into out_dir ({point_dir})"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return None, f"{SUMMARY_FILE} is not valid JSON: {exc.msg}"
    if not isinstance(data, dict) or not isinstance(data.get("summary"), dict):
        return None, f"{SUMMARY_FILE} has no `summary` mapping (write it with workbench's write_run)"
    return data, None


def _record_failure(point_dir: Path, detail: str) -> None:
    """Leave the failure's full text beside anything the point wrote, and withdraw its summary.

    A summary written before a later notebook cell failed is not trusted: removing it means a
    resumed sweep runs the point again instead of counting it as done.
    """
    point_dir.mkdir(parents=True, exist_ok=True)
    (point_dir / SUMMARY_FILE).unlink(missing_ok=True)
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
    recorded = (_normal(summary.get("overrides", {})), summary.get("seed"))
    if recorded != (_normal(task.overrides), task.seed):
        raise InputError(str(point_dir), f"holds another point (overrides {recorded[0]}, seed {recorded[1]}) than "
                                         f"the sweep's {task.point_id} (overrides {task.overrides}, seed {task.seed}); "
                                         "resume with the same sweep file or write to a new --out")
    return PointOutcome(task.point_id, "ok", 0, summary=summary)


def _normal(value: Any) -> Any:
    """``value`` as it reads back from ``summary.json`` (tuples become lists, keys strings)."""
    return json.loads(json.dumps(value, sort_keys=True, default=str))
