"""Every notebook runs top to bottom under papermill with small parameters (as CI and sweeps run them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import papermill as pm
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


def small_parameters(tmp: Path) -> dict[str, dict[str, Any]]:
    sweep = tmp / "sweep.yaml"
    sweep.write_text(f"base: {ROOT / 'scenarios' / 'synthetic.yaml'}\n"
                     "grid:\n  cluster.servers: [2, 4]\n  simulation.duration_s: [10]\n  simulation.warmup_s: [1]\n"
                     "  slo.p99_ms: [80]\n")
    return {
        "01_routing_and_fanout.ipynb": {"duration_s": 40, "replications": 2},
        "02_pruning.ipynb": {"events": 10000, "segment_rows": 1000, "query_duration_s": 30},
        "03_caching.ipynb": {"requests": 3000, "objects": 300, "sizes_mib": [0.1, 0.5]},
        "04_upsert_heap.ipynb": {"ttls_h": [0, 1], "segments": 6, "records_per_segment": 2000},
        "05_sizing_report.ipynb": {"sweep_file": str(sweep), "out_dir": str(tmp / "sweep-out"),
                                   "report_pdf": str(tmp / "report.pdf")},
    }


def test_every_notebook_has_small_parameters(tmp_path: Path) -> None:
    assert {p.name for p in NOTEBOOKS.glob("*.ipynb")} == set(small_parameters(tmp_path))


@pytest.mark.parametrize("name", sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebook_runs_headless(name: str, tmp_path: Path) -> None:
    source = NOTEBOOKS / name
    nb = nbformat.read(source, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, "exactly one parameters cell"
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "committed with outputs"
    params = {"project_dir": str(ROOT), **small_parameters(tmp_path).get(name, {})}
    out = tmp_path / name
    pm.execute_notebook(str(source), str(out), parameters=params, kernel_name="python3", cwd=str(NOTEBOOKS),
                        progress_bar=False)
    executed = json.loads(out.read_text())
    errors = [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
