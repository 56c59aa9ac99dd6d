"""A small sizing sweep (synthetic workload, GC pauses, balanced and replica groups) shared by the report tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def layout_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four shapes (2 and 4 servers, balanced and 2 replica groups) of the synthetic scenario, copied so a
    test may put calibration files beside it, with the report's studies run; returns the sweep directory."""
    from workbench.sweep import run_sweep
    from workbench.sweep.sizing import sizing_sweep

    tmp = tmp_path_factory.mktemp("layout-sweep")
    shutil.copy(ROOT / "scenarios" / "synthetic.yaml", tmp / "scenario.yaml")
    spec = sizing_sweep(tmp / "scenario.yaml", servers=[2, 4], replica_groups=[0, 2], slo_p99_ms=130.0, qps=40.0,
                        replications=3, duration_s=20, name="layouts")
    run_sweep(spec, tmp / "out", parallel=1, studies=True)  # as `workbench sweep` runs them
    return tmp / "out"
