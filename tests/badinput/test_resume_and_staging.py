"""Resuming a sweep needs the same base scenario (or --restart); killed runs' staging is cleaned up."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
import yaml

from workbench.cli import main
from workbench.errors import InputError
from workbench.io import atomic_dir, check_output, clean_staging, staged_sibling
from workbench.sweep import run_sweep

ROOT = Path(__file__).resolve().parents[2]


def _sweep(path: Path, servers: int = 4, qps: int = 30) -> Path:
    base = yaml.safe_load((ROOT / "scenarios" / "synthetic.yaml").read_text())
    base["cluster"]["servers"] = servers
    base["workload"]["arrival"]["qps"] = qps
    base["simulation"].update({"duration_s": 3, "warmup_s": 0.5, "replications": 1})
    (path.parent / "base.yaml").write_text(yaml.safe_dump(base))
    path.write_text("base: base.yaml\ngrid:\n  cluster.server.cores: [1, 2]\n")
    return path


def _host() -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in socket.gethostname())


def _dead_pid() -> int:
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


def test_resuming_with_an_edited_base_is_an_error_naming_the_change(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    sweep = _sweep(tmp_path / "s.yaml")
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    first = json.loads((tmp_path / "out" / "point-000" / "summary.json").read_text())
    _sweep(sweep, qps=60)  # the base changes under the same sweep file
    capsys.readouterr()
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "holds a sweep of a different base scenario" in err and "workload.arrival.qps: 30 -> 60" in err
    assert "--restart" in err
    assert json.loads((tmp_path / "out" / "point-000" / "summary.json").read_text()) == first  # nothing mixed
    assert main(["sweep", str(sweep), "--out", str(tmp_path / "out"), "--quiet", "--restart"]) == 0
    again = json.loads((tmp_path / "out" / "point-000" / "summary.json").read_text())
    assert again["scenario"]["workload"]["arrival"]["qps"] == 60


def test_resuming_with_the_same_base_skips_done_points(tmp_path: Path) -> None:
    sweep = _sweep(tmp_path / "s.yaml")
    run_sweep(sweep, tmp_path / "out", parallel=1)
    stamp = (tmp_path / "out" / "point-001" / "summary.json").stat().st_mtime_ns
    run_sweep(sweep, tmp_path / "out", parallel=1)
    assert (tmp_path / "out" / "point-001" / "summary.json").stat().st_mtime_ns == stamp
    manifest = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert len(manifest["fingerprint"]) == 64 and manifest["base_resolved"]["cluster"]["servers"] == 4


def test_staging_of_dead_runs_is_removed_and_live_ones_kept(tmp_path: Path) -> None:
    dead = tmp_path / f".run.{_host()}-{_dead_pid()}.abcd1234.tmp"
    live = tmp_path / f".run.{_host()}-1.efgh5678.tmp"  # pid 1 is alive
    other = tmp_path / f".run.otherhost-{_dead_pid()}.ijkl9012.tmp"  # another machine's, on a shared disk
    for path in (dead, live, other):
        path.mkdir()
    (tmp_path / "keep.txt").write_text("user file\n")
    assert clean_staging(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name, "keep.txt"])


def test_a_notebook_point_staged_by_a_dead_worker_is_removed(tmp_path: Path) -> None:
    """papermill writes a running point's notebook beside the point (named for its worker); a worker
    terminated by Ctrl-C left it behind, and no clean-up knew the name."""
    dead = tmp_path / f".point-003.{_host()}-{_dead_pid()}.abcd1234.tmp.ipynb"
    dead.write_text("{}")
    mine = staged_sibling(tmp_path / "point-004", ".tmp.ipynb")  # this process's: alive, so kept
    assert mine.name.startswith(".point-004.") and mine.name.endswith(".tmp.ipynb")
    assert clean_staging(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == [mine.name]


def test_an_interrupted_swap_is_rolled_back_before_writing(tmp_path: Path) -> None:
    target = tmp_path / "run"
    aside = tmp_path / ".run.old"  # a run killed between its two renames: the old output is here
    aside.mkdir()
    (aside / "summary.json").write_text("{}\n")
    with pytest.raises(InputError, match="already exists"), atomic_dir(target):
        pass
    assert (target / "summary.json").is_file() and not aside.exists()


def test_output_checks_happen_before_work(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file, not the directory"):
        check_output(tmp_path / "file")
    with pytest.raises(InputError, match="is a directory, not the file"):
        check_output(tmp_path, kind="file")
    with pytest.raises(InputError, match="not writable"):
        check_output("/proc/workbench-probe")
    check_output(tmp_path / "new" / "deeper")  # creatable: fine, and nothing is created
    assert not (tmp_path / "new").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["file"]
