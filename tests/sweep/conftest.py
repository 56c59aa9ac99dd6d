"""Sweep fixtures: a standalone Spark cluster (paths and helpers are in ``sweep_fixtures``).

``spark_standalone`` starts a real standalone master and one worker from the installed PySpark,
both bound to 127.0.0.1, so a sweep can run through ``spark://`` exactly as on a cluster. They run
as separate process groups and are killed (group and all) when the session ends, pass or fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

#: How long the master and worker may take to come up on a loaded 2-core machine, s.
_START_TIMEOUT_S = 120.0


@pytest.fixture(scope="session")
def spark_standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A standalone Spark master with one 2-core worker on 127.0.0.1; yields the master URL."""
    home = _spark_home()
    logs = tmp_path_factory.mktemp("spark-standalone")
    env = _cluster_env(home, logs)
    port, ui_port = _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(_start(home, ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                                   "--port", str(port), "--webui-port", str(ui_port)], env, logs / "master.log"))
        procs.append(_start(home, ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
                                   "--cores", "2", "--memory", "1g", "--webui-port", str(_free_port()),
                                   "--work-dir", str(logs / "work")], env, logs / "worker.log"))
        _wait_for_worker(ui_port, procs, logs)
        yield url
    finally:
        for proc in procs:
            _kill_group(proc)


def _spark_home() -> Path:
    import pyspark

    home = Path(pyspark.__path__[0])
    if not (home / "bin" / "spark-class").is_file():
        pytest.skip(f"no bin/spark-class in the installed pyspark ({home})")
    return home


def _cluster_env(home: Path, logs: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(logs),
        "PYSPARK_PYTHON": sys.executable, "SPARK_WORKER_DIR": str(logs / "work"),
    })
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _start(home: Path, args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """Start ``spark-class ARGS`` in its own process group (so the JVM and its children die together)."""
    with log.open("wb") as out:
        return subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)


def _wait_for_worker(ui_port: int, procs: list[subprocess.Popen[bytes]], logs: Path) -> None:
    """Poll the master's JSON status until a worker is ALIVE (then it accepts applications)."""
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        if _alive_workers(ui_port) > 0:
            return
        time.sleep(1.0)
    tails = "\n".join(f"--- {f.name}\n{f.read_text(errors='replace')[-2000:]}" for f in sorted(logs.glob("*.log")))
    pytest.fail(f"the standalone Spark master/worker did not come up:\n{tails}")


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as reply:
            status = json.load(reply)
    except (OSError, ValueError):
        return 0
    return int(status.get("aliveworkers", 0))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """TERM the process group (the JVM stops its executors), then KILL whatever is left of it."""
    for sig, wait_s in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=wait_s)
