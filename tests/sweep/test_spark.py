"""Sweeps on Spark: each point a Spark task, and the combined table equals the local run's."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sweep_fixtures import read_combined, write_sweep

from workbench.errors import InputError
from workbench.sweep import run_sweep

pytestmark = pytest.mark.spark

GRID = "grid:\n  cluster.servers: [2, 3]\n  workload.arrival.qps: [10, 20]\n"


def test_points_as_tasks_on_local_spark_equal_the_local_pool(spark: Any, tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", GRID)
    local = run_sweep(sweep, tmp_path / "local", parallel=1)
    on_spark = run_sweep(sweep, tmp_path / "spark", master=spark.sparkContext.master)
    pd.testing.assert_frame_equal(on_spark, local)
    assert on_spark["status"].tolist() == ["ok"] * 4
    assert spark.sparkContext._jsc is not None  # the shared session was borrowed, not stopped


def test_a_running_session_on_another_master_is_an_error_not_a_silent_switch(spark: Any, tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", "grid: {cluster.servers: [2]}\n")
    with pytest.raises(InputError, match="already runs a Spark session on local"):
        run_sweep(sweep, tmp_path / "out", master="spark://127.0.0.1:1")


def test_sweep_on_a_standalone_cluster_equals_the_local_run(spark_standalone: str, tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", GRID)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    done = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "sweep", str(sweep), "--out", str(tmp_path / "cluster"),
         "--master", spark_standalone, "--quiet"],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    local = run_sweep(sweep, tmp_path / "local", parallel=1)
    pd.testing.assert_frame_equal(read_combined(tmp_path / "cluster"), local)
    assert sorted(p.name for p in (tmp_path / "cluster").glob("point-*")) == [f"point-00{i}" for i in range(4)]
