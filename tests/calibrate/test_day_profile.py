"""``workbench calibrate`` writes ``workload.profile`` from the broker log's own arrivals when the log spans a day.

Hand computation: one query in each hour of a 25-hour log and two more at 08:00, so hour 8 holds three
queries in one hour of exposure against one in every other hour seen once: its factor is three times
theirs, and the factors average the log's mean rate. A log shorter than a day writes none, and says why.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import synthetic_cluster as cluster

from workbench.calibrate import CalibrateOptions, calibrate
from workbench.calibrate.profile import day_profile
from workbench.io.tables import read_json_file
from workbench.scenario import load_scenario


def test_calibrate_writes_the_logs_hourly_profile(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    start = cluster.T0_MS + 24 * cluster.HOUR_MS  # 2026-01-02T00:00Z
    hours = np.concatenate([np.arange(25), [8, 8]])
    arrivals = sorted(start + h * cluster.HOUR_MS + float(rng.uniform(0, cluster.HOUR_MS)) for h in hours)
    paths = cluster.write_cluster(tmp_path / "in", [cluster._query(rng, a) for a in arrivals])
    calibrate(paths["table_config"], paths["schema"], paths["segments"], paths["query_log"], tmp_path / "cal",
              options=CalibrateOptions(server_cores=1, backtest_queries=0, seed=3, bootstrap=20))
    profile = load_scenario(tmp_path / "cal" / "scenario.yaml").workload.profile
    assert profile is not None and profile.hourly is not None and len(profile.hourly) == 24
    assert profile.peak() == 8
    assert profile.hourly[8] / profile.hourly[5] == pytest.approx(3.0, rel=1e-3)
    assert read_json_file(tmp_path / "cal" / "calibration.json", "c")["profile"]["hourly"] == list(profile.hourly)


def test_a_log_shorter_than_a_day_has_no_profile() -> None:
    short = day_profile(np.arange(0, 23 * 3_600_000, 60_000))
    assert short.hourly is None and "less than a day" in short.why
