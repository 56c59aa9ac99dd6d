"""The CLI is a thin layer: every command explains itself, and bad input is one line with exit 2."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workbench.cli import main

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ["validate", "generate", "simulate", "sweep", "import", "report"]


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: workbench {command}" in out and len(out.splitlines()) > 4


def test_top_level_help_lists_all_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(c in out for c in COMMANDS)


def test_validate_reports_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("cluster:\n  servers: -3\n")
    assert main(["validate", str(bad)]) == 2
    assert capsys.readouterr().err.strip() == (
        "workbench validate: cluster.servers: must be a positive integer, got -3")


def test_simulate_writes_records_and_summary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["simulate", str(ROOT / "scenarios" / "synthetic.yaml"), "--out", str(out), "--quiet"]) == 0
    assert {p.name for p in out.iterdir()} >= {"queries.parquet", "servers.parquet", "gc_pauses.parquet",
                                                "summary.json"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["summary"]["queries"] > 1000
    umask = os.umask(0)
    os.umask(umask)
    assert (out / "summary.json").stat().st_mode & 0o777 == 0o666 & ~umask  # as open() would, not private
    # refusing to overwrite leaves the first run intact
    assert main(["simulate", str(ROOT / "scenarios" / "synthetic.yaml"), "--out", str(out), "--quiet"]) == 2
    assert json.loads((out / "summary.json").read_text()) == summary


def test_sweep_resumes_and_combines(tmp_path: Path) -> None:
    sweep = tmp_path / "s.yaml"
    sweep.write_text(
        f"base: {ROOT / 'scenarios' / 'synthetic.yaml'}\n"
        "grid:\n  cluster.servers: [2, 4]\n  simulation.duration_s: [10]\n  simulation.warmup_s: [1]\n"
    )
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out")]) == 0
    first = (tmp_path / "out" / "point-000" / "summary.json").stat().st_mtime_ns
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "point-000" / "summary.json").stat().st_mtime_ns == first
    import pandas as pd

    combined = pd.read_parquet(tmp_path / "out" / "combined.parquet")
    assert combined["param.cluster.servers"].tolist() == [2, 4]
    assert (combined["servers_queried_mean"] == combined["param.cluster.servers"]).all()


def test_import_reports_the_line_of_a_malformed_entry(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = ROOT / "tests" / "workload" / "importers" / "fixtures" / "gc_malformed.log"
    assert main(["import", "gc-log", str(log), "--out", str(tmp_path / "strict")]) == 2
    err = capsys.readouterr().err
    assert "gc_malformed.log:" in err and not (tmp_path / "strict").exists()
    assert main(["import", "gc-log", str(log), "--out", str(tmp_path / "lenient"), "--lenient"]) == 0
    assert (tmp_path / "lenient" / "manifest.json").is_file()
