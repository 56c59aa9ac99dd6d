"""Notebook sweeps: papermill runs each point; the executed notebook is kept, failed cells reported.

One sweep over ``fixtures/fails.ipynb`` serves every test here (a kernel start is the slow part):
its 2-server point succeeds, its 3-server point writes a summary and then fails in a later cell.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from sweep_fixtures import FIXTURES, read_combined, write_sweep

from workbench.cli import main
from workbench.sweep import load_sweep, make_tasks, run_sweep
from workbench.sweep.point import load_done


@pytest.fixture(scope="module")
def notebook_sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sweep file, output) of the fixture notebook sweep, run once through the CLI (exit 3)."""
    root = tmp_path_factory.mktemp("notebook-sweep")
    sweep = write_sweep(root / "s.yaml", f"notebook: {FIXTURES / 'fails.ipynb'}\nparallel: 2\n"
                                         "grid:\n  cluster.servers: [2, 3]\n")
    assert main(["sweep", str(sweep), "--out", str(root / "out"), "--quiet"]) == 3
    return sweep, root / "out"


def test_each_point_keeps_its_executed_notebook_with_the_injected_parameters(
    notebook_sweep: tuple[Path, Path],
) -> None:
    _, out = notebook_sweep
    nb = json.loads((out / "point-000" / "notebook.ipynb").read_text())
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    source = "".join(injected[0]["source"])
    assert 'overrides = {"cluster.servers": 2}' in source
    assert f'out_dir = "{out / "point-000"}"' in source and "seed = 3" in source
    assert (out / "point-000" / "summary.json").is_file()


def test_a_notebook_point_equals_the_same_point_run_through_the_api(
    notebook_sweep: tuple[Path, Path], tmp_path: Path,
) -> None:
    _, out = notebook_sweep
    direct = run_sweep(write_sweep(tmp_path / "d.yaml", "grid: {cluster.servers: [2]}\n"), tmp_path / "d", parallel=1)
    via_notebook = read_combined(out).iloc[[0]].reset_index(drop=True)
    # the other rows' failures made ints float and nulls NaN: compare missing as missing
    pd.testing.assert_frame_equal(via_notebook.astype(object).where(via_notebook.notna(), None),
                                  direct.astype(object).where(direct.notna(), None), check_dtype=False)
    pd.testing.assert_frame_equal(pd.read_parquet(out / "point-000" / "queries.parquet"),
                                  pd.read_parquet(tmp_path / "d" / "point-000" / "queries.parquet"))


def test_a_failed_cell_is_retried_then_reported_with_its_notebook(notebook_sweep: tuple[Path, Path]) -> None:
    _, out = notebook_sweep
    combined = read_combined(out)
    assert combined["status"].tolist() == ["ok", "failed"]
    error = "RuntimeError: this point fails on purpose (notebook cell 4; see point-001/notebook.ipynb)"
    assert combined["error"].tolist() == [None, error]
    assert json.loads((out / "failures.json").read_text())[0]["attempts"] == 2
    failed = out / "point-001"
    assert (failed / "notebook.ipynb").is_file()  # papermill wrote it despite the failure: kept for reading
    assert not (failed / "summary.json").exists()  # written before the failing cell, so withdrawn
    assert "this point fails on purpose" in (failed / "error.txt").read_text()


def test_a_notebook_point_is_done_only_with_its_notebook(notebook_sweep: tuple[Path, Path], tmp_path: Path) -> None:
    sweep, out = notebook_sweep
    task = make_tasks(load_sweep(sweep), out)[0]
    done = load_done(task)
    assert done is not None and done.ok
    shutil.copytree(out / "point-000", tmp_path / "point-000")
    (tmp_path / "point-000" / "notebook.ipynb").unlink()
    assert load_done(make_tasks(load_sweep(sweep), tmp_path)[0]) is None
