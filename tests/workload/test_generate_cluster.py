"""The cluster path is real: a Spark standalone master and worker on 127.0.0.1 generate the same bytes.

The test starts both daemons from the installed pyspark (``spark-class``), runs a small generation
through ``spark://127.0.0.1:PORT`` and on ``local[1]`` in a fresh Python process, checks both equal
the in-process engine's output (which the Spark tests show equals ``local[2]``), and stops both.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest
from workload_fixtures import spec_of, table

from workbench.workload.pure import generate_local

pytestmark = pytest.mark.spark

HERE = Path(__file__).resolve().parent
SPEC = {"events": 15_000, "keys": 500, "key_distribution": "zipf", "segment_rows": 1_000, "span_s": "2h",
        "disorder": {"late_fraction": 0.1}, "queries": {"duration_s": 60}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_env() -> dict[str, str]:
    home = Path(pyspark.__file__).resolve().parent
    return {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1",
            "PYSPARK_PYTHON": sys.executable, "SPARK_NO_DAEMONIZE": "1"}


def _daemon(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    spark_class = Path(pyspark.__file__).resolve().parent / "bin" / "spark-class"
    with log.open("wb") as out:
        return subprocess.Popen([str(spark_class), *args], stdout=out, stderr=subprocess.STDOUT, env=_spark_env())


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def _wait_for_worker(ui_port: int, procs: list[subprocess.Popen[bytes]], timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert all(p.poll() is None for p in procs), "a Spark daemon exited early"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as resp:
                if json.load(resp).get("aliveworkers", 0) >= 1:
                    return
        except (OSError, ValueError):  # not listening yet, or its UI answering before it has JSON to give
            pass
        time.sleep(1)
    raise AssertionError("the Spark worker did not register with the master in time")


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A master and a one-core worker on 127.0.0.1; yields the master URL; stops both afterwards."""
    logs = tmp_path_factory.mktemp("spark-standalone")
    port, ui = _free_port(), _free_port()
    master = _daemon(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                      "--webui-port", str(ui)], logs / "master.log")
    worker = _daemon(["org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host", "127.0.0.1",
                      "--cores", "1", "--memory", "1g", "--webui-port", str(_free_port()),
                      "--work-dir", str(logs / "work")], logs / "worker.log")
    try:
        _wait_for_worker(ui, [master, worker])
        yield f"spark://127.0.0.1:{port}"
    finally:
        _stop(worker)
        _stop(master)
    assert master.poll() is not None and worker.poll() is not None


def test_cluster_and_local1_generate_the_same_bytes_as_the_local_engine(standalone: str, tmp_path: Path) -> None:
    job = subprocess.run([sys.executable, str(HERE / "cluster_job.py"), str(tmp_path / "spark"), json.dumps(SPEC),
                          standalone, "local[1]"], capture_output=True, text=True, env=_spark_env(), timeout=600,
                         check=False)
    assert job.returncode == 0, job.stderr[-3000:]
    results = json.loads(job.stdout.strip().splitlines()[-1])
    reference = generate_local(spec_of(**SPEC), tmp_path / "local", table_config=table(), seed=9)["checksums"]
    assert results[standalone]["executor"]["spark_master"] == standalone
    assert results[standalone]["checksums"] == reference
    assert results["local[1]"]["checksums"] == reference
