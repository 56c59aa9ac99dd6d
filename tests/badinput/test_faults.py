"""Faults: a sweep killed at random moments loses, duplicates and tears nothing, and leaves nothing behind.

The sweep runs as a real ``workbench sweep`` process with two worker processes. It is killed (SIGKILL,
so nothing of it can clean up) at seeded random moments, or interrupted (SIGINT, as Ctrl-C does), then
resumed until it finishes. Afterwards every point is in the combined table exactly once, every point's
files equal those of an uninterrupted run of the same sweep, no staging directory or temporary file is
left, and no worker outlived the driver that started it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
POINTS = 6
#: Seed of the kill moments.
KILL_SEED = 18


def _sweep_file(tmp_path: Path) -> Path:
    sweep = tmp_path / "s.yaml"
    sweep.write_text(
        f"base: {ROOT / 'scenarios' / 'synthetic.yaml'}\n"
        f"grid:\n  cluster.servers: {list(range(2, 2 + POINTS))}\n"
        "  workload.arrival.qps: [600]\n  simulation.duration_s: [10]\n  simulation.warmup_s: [0.5]\n"
        "  simulation.replications: [1]\n  simulation.engine: [simpy]\n")  # points slow enough to be hit
    return sweep


def _start(sweep: Path, out: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "workbench.cli", "sweep", str(sweep), "--out", str(out),
                             "--parallel", "2", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (read from /proc, so no extra dependency)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_gone(pids: set[int], timeout_s: float = 10.0) -> set[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    return {p for p in pids if _alive(p)}


def _done(out: Path) -> list[Path]:
    return list(out.glob("point-*/summary.json"))


def _leftovers(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.name.startswith(".") or p.name.endswith("_tmp"))


def _point_files(out: Path) -> dict[str, object]:
    """Each point's summary and records, as comparable values."""
    files: dict[str, object] = {}
    for point in sorted(out.glob("point-*")):
        files[f"{point.name}/summary.json"] = json.loads((point / "summary.json").read_text())
        files[f"{point.name}/queries.parquet"] = pd.read_parquet(point / "queries.parquet").to_dict("list")
    return files


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """The same sweep, run once without interruption."""
    root = tmp_path_factory.mktemp("reference")
    sweep = _sweep_file(root)
    proc = _start(sweep, root / "out")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return sweep, _point_files(root / "out")


def test_killed_sweeps_resume_to_the_uninterrupted_result(reference: tuple[Path, dict[str, object]],
                                                          tmp_path: Path) -> None:
    sweep, expected = reference
    out = tmp_path / "out"
    rng = np.random.default_rng(KILL_SEED)
    done_after_kills = []
    for round_ in range(5):
        proc = _start(sweep, out)
        if round_ in (0, 4):  # during start-up, resume and the first points
            time.sleep(float(rng.uniform(0.2, 3.0)))
        else:  # once one more point is done, plus up to 0.3 s: mid-point, mid-write or mid-combine
            target, deadline = len(_done(out)) + 1, time.monotonic() + 120
            while len(_done(out)) < target and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(float(rng.uniform(0.0, 0.3)))
        workers = _children(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert _wait_gone(workers) == set(), "a worker outlived its killed driver"
        done_after_kills.append(len(_done(out)))
    # the kills hit a sweep at work: some rounds stopped it with points still to run
    assert any(0 < done < POINTS for done in done_after_kills), done_after_kills
    final = _start(sweep, out)
    _, err = final.communicate(timeout=300)
    assert final.returncode == 0, err
    combined = pd.read_parquet(out / "combined.parquet")
    assert sorted(combined["point"]) == [f"point-{i:03d}" for i in range(POINTS)]  # each once: none lost or doubled
    assert set(combined["status"]) == {"ok"}
    assert _point_files(out) == expected  # nothing torn: every file equals the uninterrupted run's
    assert _leftovers(out) == []


def test_ctrl_c_stops_promptly_and_says_what_was_kept(reference: tuple[Path, dict[str, object]],
                                                      tmp_path: Path) -> None:
    sweep, _ = reference
    out = tmp_path / "out"
    proc = _start(sweep, out)
    deadline = time.monotonic() + 120
    while not list(out.glob("point-*/summary.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(proc.pid)
    interrupted = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - interrupted < 10, "Ctrl-C took too long to stop the sweep"
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("workbench sweep: interrupted; kept the ") and "run the same command again" in last
    kept = len(list(out.glob("point-*/summary.json")))
    assert f"kept the {kept} of {POINTS} points" in last
    assert _wait_gone(workers) == set()
    assert _leftovers(out) == []


def test_sigterm_during_simulate_leaves_no_output(tmp_path: Path) -> None:
    scenario = tmp_path / "long.yaml"  # an hour of simulated time: it is still running when terminated
    text = (ROOT / "scenarios" / "synthetic.yaml").read_text()
    scenario.write_text(text.replace("duration_s: 60", "duration_s: 3600, engine: simpy"))  # minutes of work
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", "simulate", str(scenario), "--out",
                             str(tmp_path / "run")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    time.sleep(4.0)  # past start-up, into the first replication
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("workbench simulate: terminated; nothing was written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.yaml"]
