"""Local sweeps: same numbers at any parallelism, resumable, and no failed point is ever dropped."""

from __future__ import annotations

import json
import pickle
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sweep_fixtures import read_combined, write_sweep

import workbench.api as api_module
import workbench.scenario as scenario_module
import workbench.sim.run as run_module
import workbench.sweep.point as point_module
import workbench.sweep.spec as spec_module
from workbench.cli import main
from workbench.errors import InputError
from workbench.scenario import Scenario
from workbench.sweep import failed_points, load_sweep, make_tasks, run_sweep
from workbench.sweep.runner import dead_worker_outcome

GRID = "grid:\n  cluster.servers: [2, 3]\n"


def _mtimes(out: Path) -> dict[str, int]:
    done = sorted(p for p in out.glob("point-*") if (p / "summary.json").is_file())
    return {p.name: (p / "summary.json").stat().st_mtime_ns for p in done}


def test_results_do_not_depend_on_parallelism_and_a_rerun_skips_done_points(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", GRID)
    serial = run_sweep(sweep, tmp_path / "serial", parallel=1)
    pooled = run_sweep(sweep, tmp_path / "pooled", parallel=2)
    pd.testing.assert_frame_equal(serial, pooled)
    pd.testing.assert_frame_equal(read_combined(tmp_path / "pooled"), pooled)
    assert serial["status"].tolist() == ["ok", "ok"]
    assert serial["servers_queried_mean"].tolist() == [2.0, 3.0]  # each point really ran its override

    before = _mtimes(tmp_path / "serial")
    again = run_sweep(sweep, tmp_path / "serial", parallel=1)
    assert _mtimes(tmp_path / "serial") == before
    pd.testing.assert_frame_equal(again, serial)


def test_output_layout_and_combined_columns(tmp_path: Path) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", "points:\n  - {cluster.servers: 2}\n"
                                             "  - {cluster.servers: 3, cluster.gc: {collector: none}}\n")
    out = tmp_path / "out"
    combined = run_sweep(sweep, out, parallel=1)
    assert sorted(p.name for p in out.iterdir()) == [
        "combined.parquet", "failures.json", "point-000", "point-001", "sweep.json"]  # no temporary files
    assert {p.name for p in (out / "point-000").iterdir()} == {
        "queries.parquet", "servers.parquet", "gc_pauses.parquet", "windows.parquet", "failures.parquet",
        "heap.parquet", "summary.json"}
    summary = json.loads((out / "point-001" / "summary.json").read_text())
    assert summary["overrides"] == {"cluster.servers": 3, "cluster.gc": {"collector": "none"}}
    assert summary["seed"] == 3
    assert list(combined.columns[:6]) == ["point", "status", "error", "seed", "param.cluster.servers",
                                          "param.cluster.gc"]
    assert pd.isna(combined["param.cluster.gc"][0])
    assert combined["param.cluster.gc"][1] == '{"collector": "none"}'  # nested values as JSON text
    assert {"latency_ms.p99.value", "latency_ms.p99.ci_low", "throughput_qps", "queries"} <= set(combined.columns)
    assert json.loads((out / "failures.json").read_text()) == []
    manifest = json.loads((out / "sweep.json").read_text())
    assert [p["point"] for p in manifest["points"]] == ["point-000", "point-001"]


def test_resume_refuses_an_output_holding_another_sweep(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run_sweep(write_sweep(tmp_path / "a.yaml", "grid: {cluster.servers: [2]}\n"), out, parallel=1)
    with pytest.raises(InputError, match=r"holds another point .* resume with the same sweep file"):
        run_sweep(write_sweep(tmp_path / "b.yaml", "grid: {cluster.servers: [3]}\n"), out, parallel=1)


def _failing_when(servers: int, calls: Counter[int], times: int) -> Any:
    """A stand-in for simulate_point that fails its first ``times`` calls for ``servers`` servers."""
    real = point_module.simulate_point

    def fake(scenario: Any, overrides: Any, out_dir: Any, **kw: Any) -> dict[str, Any]:
        calls[overrides["cluster.servers"]] += 1
        if overrides["cluster.servers"] == servers and calls[servers] <= times:
            raise RuntimeError(f"simulated crash #{calls[servers]}")
        return real(scenario, overrides, out_dir, **kw)

    return fake


def test_failed_point_is_retried_once_then_reported_and_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    calls: Counter[int] = Counter()
    monkeypatch.setattr(point_module, "simulate_point", _failing_when(3, calls, times=99))
    sweep, out = write_sweep(tmp_path / "s.yaml", GRID), tmp_path / "out"
    assert main(["sweep", str(sweep), "--out", str(out), "--parallel", "1", "--quiet"]) == 3
    assert calls == Counter({2: 1, 3: 2})  # the failing point ran twice, the good one once
    err = capsys.readouterr().err
    assert "point-001 failed: RuntimeError: simulated crash #2" in err
    assert "1 of 2 points failed" in err

    combined = read_combined(out)
    assert combined["status"].tolist() == ["ok", "failed"]
    assert combined["error"].tolist() == [None, "RuntimeError: simulated crash #2"]
    assert failed_points(combined)["point"].tolist() == ["point-001"]
    assert json.loads((out / "failures.json").read_text()) == [{
        "point": "point-001", "overrides": {"cluster.servers": 3}, "seed": 3, "attempts": 2,
        "error": "RuntimeError: simulated crash #2"}]
    assert "Traceback" in (out / "point-001" / "error.txt").read_text()
    assert not (out / "point-001" / "summary.json").exists()

    monkeypatch.undo()  # the cause is fixed: resuming runs only the failed point, and clears the report
    done = _mtimes(out)
    assert main(["sweep", str(sweep), "--out", str(out), "--parallel", "1", "--quiet"]) == 0
    assert _mtimes(out)["point-000"] == done["point-000"]
    assert read_combined(out)["status"].tolist() == ["ok", "ok"]
    assert json.loads((out / "failures.json").read_text()) == []
    assert not (out / "point-001" / "error.txt").exists()


def test_a_point_that_fails_once_succeeds_on_its_retry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: Counter[int] = Counter()
    monkeypatch.setattr(point_module, "simulate_point", _failing_when(3, calls, times=1))
    combined = run_sweep(write_sweep(tmp_path / "s.yaml", GRID), tmp_path / "out", parallel=1)
    assert combined["status"].tolist() == ["ok", "ok"] and calls[3] == 2


def test_without_retries_a_failure_is_final(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: Counter[int] = Counter()
    monkeypatch.setattr(point_module, "simulate_point", _failing_when(3, calls, times=1))
    combined = run_sweep(write_sweep(tmp_path / "s.yaml", GRID), tmp_path / "out", parallel=1, retries=0)
    assert combined["status"].tolist() == ["ok", "failed"] and calls[3] == 1


def test_a_dead_worker_process_fails_its_point_instead_of_the_sweep(tmp_path: Path) -> None:
    task = make_tasks(load_sweep(write_sweep(tmp_path / "s.yaml", GRID)), tmp_path / "out")[0]
    outcome = dead_worker_outcome(task, 1, -9)  # the runner's own pool reports a SIGKILLed worker so
    assert (outcome.point_id, outcome.status, outcome.error) == (
        "point-000", "failed", "worker process died: killed by signal 9")


def test_cli_reports_a_bad_sweep_file_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = write_sweep(tmp_path / "s.yaml", "grid: {cluster.servrs: [2]}\n")
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"workbench sweep: {sweep}: grid.cluster.servrs: unknown key (did you mean 'servers'?)")
    assert "\n" not in err and not (tmp_path / "out").exists()


def test_each_point_is_validated_once_from_sweep_file_to_its_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  ) -> None:
    """The sweep validates the base and each point; the worker runs the scenario it is handed."""
    loads: Counter[str] = Counter()
    real = scenario_module.load_scenario

    def counting(source: Any, *, base_dir: Any = None, overrides: Any = None) -> Scenario:
        loads[json.dumps(dict(overrides or {}), sort_keys=True)] += 1
        return real(source, base_dir=base_dir, overrides=overrides)

    for module in (scenario_module, spec_module, api_module, run_module):  # every name it is called by
        monkeypatch.setattr(module, "load_scenario", counting)
    combined = run_sweep(write_sweep(tmp_path / "s.yaml", GRID), tmp_path / "out", parallel=1)
    assert combined["status"].tolist() == ["ok", "ok"]
    assert combined["servers_queried_mean"].tolist() == [2.0, 3.0]
    assert loads == Counter({"{}": 1, '{"cluster.servers": 2}': 1, '{"cluster.servers": 3}': 1})


def test_a_task_carries_its_points_validated_scenario_through_pickling(tmp_path: Path) -> None:
    spec = load_sweep(write_sweep(tmp_path / "s.yaml", GRID))
    for task, point in zip(make_tasks(spec, tmp_path / "out"), spec.points, strict=True):
        sent = pickle.loads(pickle.dumps(task))  # what a spawned worker or Spark executor receives
        assert isinstance(sent.scenario, Scenario)
        assert sent.scenario == point.scenario and sent.scenario.to_dict() == point.scenario.to_dict()
        assert sent.scenario.cluster.servers == point.overrides["cluster.servers"]
