"""Load as a knob: ``workload.arrival.speed`` replays a log that many times faster, keeping its queries in
their order (repeated to fill the run), and multiplies a Poisson rate; ``--set`` overrides any key."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_planner import TABLE, segments  # type: ignore[import-not-found]

from workbench.cli import main
from workbench.scenario import load_scenario
from workbench.sim.run import simulate

SIM = {"duration_s": 20, "warmup_s": 0, "replications": 1, "seed": 3}


def _log(tmp_path: Path) -> list[str]:
    segments().to_parquet(tmp_path / "segments.parquet")
    sqls = ["SELECT COUNT(*) FROM t WHERE key_id = 5", "SELECT COUNT(*) FROM t"]
    # 12 queries, one every second: at speed 3 one every third of a second, the log played 5 times in 20 s
    pd.DataFrame({"arrival_s": np.arange(12.0), "sql": [sqls[i % 2] for i in range(12)]}).to_parquet(
        tmp_path / "queries.parquet")
    return sqls


def test_a_replayed_log_at_speed_3_comes_three_times_as_fast_in_its_own_order(tmp_path: Path) -> None:
    _log(tmp_path)
    scenario = {"cluster": {"servers": 4}, "table": TABLE, "simulation": SIM,
                "workload": {"arrival": {"process": "replay", "speed": 3}}}
    q = simulate(scenario, data=tmp_path).queries.sort_values("arrival_s")
    # the sped-up log is 12 queries 1/3 s apart; its period 12 x 1/3 = 4 s; 20 s hold 5 periods: 60 queries
    expected = np.arange(60) / 3.0
    assert np.allclose(q["arrival_s"].to_numpy(), expected, atol=1e-3)
    # a key_id = 5 lookup touches 2 of the 8 segments, the full count all 8: alternating, as the log does
    assert q["segments_queried"].tolist() == [2, 8] * 30


def test_poisson_at_speed_2_is_the_same_run_as_twice_the_qps() -> None:
    base = {"cluster": {"servers": 2}, "simulation": {**SIM, "duration_s": 5}, "workload": {"arrival": {"qps": 40}}}
    fast = simulate({**base, "workload": {"arrival": {"qps": 40, "speed": 2}}}).queries
    double = simulate({**base, "workload": {"arrival": {"qps": 80}}}).queries
    pd.testing.assert_frame_equal(fast, double)


def test_speed_must_be_positive() -> None:
    with pytest.raises(Exception, match=r"workload\.arrival\.speed"):
        load_scenario({"workload": {"arrival": {"speed": 0}}})


def test_set_overrides_a_key_from_the_command_line_and_records_it(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(json.dumps({"cluster": {"servers": 2}, "simulation": {**SIM, "duration_s": 3}}))
    assert main(["simulate", str(scenario), "--out", str(tmp_path / "run"), "--quiet",
                 "--set", "cluster.servers=3", "--set", "workload.arrival.speed=1.5"]) == 0
    record = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert record["overrides"] == {"cluster.servers": 3, "workload.arrival.speed": 1.5}
    assert record["scenario"]["cluster"]["servers"] == 3


def test_set_without_an_equals_sign_is_one_line_naming_the_form(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["validate", "x.yaml", "--set", "cluster.servers"])
    assert exit_.value.code == 2
    assert "must be KEY=VALUE" in capsys.readouterr().err
