"""The calibration's back-test run: the log's first queries replayed through the calibrated model.

The comparison of the percentiles is pure and lives with the calibration
(:mod:`workbench.calibrate.backtest`); this study writes the window's workload, runs it through the one
run verb (:func:`workbench.runs.run_scenario`) into ``workdir/backtest-run`` and compares that run's
query records with the log. :func:`workbench.api.calibrate` hands it to the calibration, which writes
its document as ``backtest.json``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.calibrate.backtest import backtest_scenario, backtest_window, compare_backtest
from workbench.calibrate.workload_dir import write_workload
from workbench.io.run_dir import RunDir
from workbench.runs import run_scenario

__all__ = ["backtest"]


def backtest(scenario: Mapping[str, Any], base_dir: Path, queries: pd.DataFrame, kinds: Sequence[str],
             segments: pd.DataFrame, workdir: Path, *, max_queries: int = 20_000, replications: int = 3,
             seed: int = 0) -> dict[str, Any]:
    """Replay the first ``max_queries`` logged queries through ``scenario`` and compare percentiles.

    Parameters
    ----------
    scenario
        The calibrated scenario's data (its ``workload.data`` and ``simulation`` are replaced here).
    base_dir
        Where the scenario's relative paths (table config, schema) point.
    queries, kinds
        The replayed queries (``queries.parquet`` rows with the log's ``time_ms``) and each one's kind.
    segments
        The table's segments, as written to the workload directory.
    workdir
        A scratch directory for the window's workload and run (inside the output being written).

    Returns
    -------
    dict
        :func:`~workbench.calibrate.backtest.compare_backtest`'s document.
    """
    window = backtest_window(queries, kinds, max_queries)
    data = workdir / "backtest-workload"
    write_workload(data, segments, window.queries.drop(columns=["kind_of_query"]), "", "", {})
    run = workdir / "backtest-run"
    run_scenario(backtest_scenario(scenario, data, window, replications, seed), run, base_dir=base_dir)
    records = RunDir(run).read_table("queries", what="back-test query records")
    return compare_backtest(window, records, replications=replications, seed=seed)
