"""A sweep point as plain data: the task a worker or Spark executor runs, and the outcome it returns.

Kept apart from :mod:`.point` (which runs tasks) so that the notebook runner and the combiner can
name tasks and outcomes without importing the code that executes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.io.run_dir import RunRecord
from workbench.scenario import Scenario

__all__ = ["ERROR_FILE", "NOTEBOOK_FILE", "PointOutcome", "PointTask"]

#: What a point's directory holds when its run failed (with a traceback or the notebook's error).
ERROR_FILE = "error.txt"
#: The executed notebook inside a point's directory (notebook sweeps only).
NOTEBOOK_FILE = "notebook.ipynb"


@dataclass(frozen=True)
class PointTask:
    """Everything one point needs, pickled to a worker or a Spark executor.

    The point's scenario travels validated (``scenario``), so the worker runs exactly what the sweep
    file was checked against and does not validate it again; ``base`` and ``overrides`` stay for the
    record (``summary.json``) and for notebooks, whose parameters are plain data.

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
    scenario
        The point's scenario (base with ``overrides``), validated once when the sweep file was read.
    """

    point_id: str
    overrides: dict[str, Any]
    seed: int
    base: dict[str, Any]
    base_dir: str
    out_dir: str
    scenario_path: str | None = None
    notebook: str | None = None
    scenario: Scenario | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class PointOutcome:
    """How one attempt at a point ended.

    ``summary`` is the point's ``summary.json`` record when ``status == "ok"``; ``error`` is one line
    saying what went wrong when ``status == "failed"`` (the full text is in ``error.txt``).
    """

    point_id: str
    status: str
    attempt: int
    summary: RunRecord | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the point finished and wrote its summary."""
        return self.status == "ok"
