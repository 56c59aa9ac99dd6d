"""Run a sweep point through a notebook with papermill, keeping the executed notebook either way.

The notebook gets four parameters injected after its ``parameters`` cell: ``scenario`` (the base
scenario's file, or its data when the base was inline), ``overrides`` (the point's dotted-key
overrides, one dict because dotted keys are not Python names), ``seed`` and ``out_dir`` (the
point's directory). It is expected to write ``summary.json`` there, normally through
:func:`workbench.sweep.simulate_point`.

The kernel is ``python3`` and runs in the notebook's own directory, as when a user opens it in
Jupyter, so relative paths in the notebook mean the same in a sweep and by hand.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path
from typing import Any

from workbench.errors import InputError
from workbench.io import redact, staged_sibling
from workbench.sweep.task import NOTEBOOK_FILE, PointTask

__all__ = ["KERNEL", "PARAMETERS", "execute_point_notebook", "missing_parameters", "notebook_parameters"]

KERNEL = "python3"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # colours in kernel tracebacks, unreadable in error.txt
#: The names a sweep notebook's ``parameters`` cell must define; papermill injects them per point.
PARAMETERS = ("scenario", "overrides", "seed", "out_dir")


def missing_parameters(path: Path) -> list[str]:
    """The sweep parameters that ``path``'s ``parameters`` cell does not define (all, without one).

    Checked before the sweep starts: papermill would inject an unknown name silently and the
    notebook would go on with its own default, which is the worst kind of sweep bug.
    """
    cells = [c for c in _cells(path) if "parameters" in c.get("metadata", {}).get("tags", [])]
    if not cells:
        return list(PARAMETERS)
    source = cells[0].get("source", "")
    try:
        tree = ast.parse(source if isinstance(source, str) else "".join(source))
    except SyntaxError as exc:
        raise InputError(f"{path}: parameters cell", f"is not valid Python: {exc.msg}") from None
    defined = {t.id for node in ast.walk(tree) for t in _targets(node) if isinstance(t, ast.Name)}
    return [name for name in PARAMETERS if name not in defined]


def _cells(path: Path) -> list[dict[str, Any]]:
    """The cells of an ``.ipynb`` (nbformat 4 is plain JSON; reading it needs no Jupyter import)."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError) as exc:
        raise InputError(str(path), f"cannot read the notebook: {exc}") from None
    return [c for c in cells if isinstance(c, dict)]


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AnnAssign):
        return [node.target]
    return []


def notebook_parameters(task: PointTask) -> dict[str, Any]:
    """What papermill injects for ``task`` (an inline base with its credentials redacted: the executed
    notebook is an output, and the model reads no credential)."""
    return {
        "scenario": task.scenario_path if task.scenario_path is not None else redact(task.base),
        "overrides": dict(task.overrides),
        "seed": task.seed,
        "out_dir": task.out_dir,
    }


def execute_point_notebook(task: PointTask) -> tuple[str, str] | None:
    """Execute the task's notebook; returns ``None``, or the failed cell's error (one line, full text).

    The executed notebook is written beside the point's directory while it runs (the notebook may
    replace that directory atomically when it writes its records) and then moved into it as
    ``notebook.ipynb``, also when a cell failed: that notebook is where the failure is read.
    """
    import papermill as pm
    from papermill.exceptions import PapermillExecutionError

    if task.notebook is None:
        raise ValueError(f"{task.point_id} has no notebook to run")
    point_dir = Path(task.out_dir)
    staged = staged_sibling(point_dir, ".tmp.ipynb")  # an interrupted point's is removed as its staging
    try:
        pm.execute_notebook(
            task.notebook, str(staged), parameters=notebook_parameters(task), kernel_name=KERNEL,
            cwd=str(Path(task.notebook).parent), progress_bar=False,
        )
    except PapermillExecutionError as exc:
        line = f"{exc.ename}: {exc.evalue} (notebook cell {exc.exec_count}; see {point_dir.name}/{NOTEBOOK_FILE})"
        return line, line + "\n\n" + _ANSI.sub("", "\n".join(exc.traceback))
    finally:
        _keep(staged, point_dir / NOTEBOOK_FILE)
    return None


def _keep(staged: Path, target: Path) -> None:
    """Move the executed notebook into the point; staging papermill never wrote to is only removed."""
    if staged.is_file() and staged.stat().st_size > 0:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged, target)
    else:
        staged.unlink(missing_ok=True)
