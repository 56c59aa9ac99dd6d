"""Benchmark: the local Pinot cluster with Helix, start-up and ``measure`` (issue #23).

1. **Start-up, cold and warm.** A whole cluster (ZooKeeper and Pinot's controller, the broker, two servers, each its
   own JVM) serving a 100k-row table in 10 segments: seconds from calling :func:`helix_cluster` to the external view
   showing every segment ONLINE (the segments built by Pinot's creator and uploaded through the controller included),
   and to every JVM stopped. The first start of the process is "cold" (the OS has not cached the jars' pages and the
   segment builder's JVM since boot or since another program pushed them out); the second, right after, "warm".
2. **``workbench measure``** of the demo's table as an OFFLINE table with 100k rows on two servers at 20 queries/s
   for 60 s (1,200 queries, 200 warm-up queries first): wall seconds, and the peak resident memory of each JVM
   (``VmHWM`` sampled from ``/proc`` every 0.2 s while it runs; the controller's JVM hosts ZooKeeper).

No threshold (the machine is shared): it prints what this machine does. Run
``PYTHONPATH=$PWD python benchmarks/bench_helix.py [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "groundtruth"))

import tables  # the ground-truth tests' table maker: one definition of the test tables

from workbench.api import load_generate_spec, measure
from workbench.groundtruth.helix_cluster import HelixTable, helix_cluster
from workbench.groundtruth.scenario import offline_twin
from workbench.scenario import load_scenario
from workbench.workload.pure import generate_local

ROOT = Path(__file__).resolve().parents[1]
ROLES = {"HelixControllerMain": "controller+zookeeper", "HelixBrokerMain": "broker", "HelixServerMain": "server",
         "HttpLoad": "load generator", "BuildSegments": "segment builder"}


def _descendants(root: int) -> set[int]:
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    out, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parent.items() if ppid in frontier} - out
        out |= frontier
    return out


def _role(pid: int) -> str | None:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    for arg in cmd:
        name = arg.decode(errors="replace").rsplit(".", 1)[-1]
        if name in ROLES:
            return ROLES[name]
    return None


def _hwm_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


@contextmanager
def peak_memory() -> Iterator[dict[str, float]]:
    """While the block runs, the peak resident MiB of each JVM role started under this process (servers: the
    largest)."""
    peaks: dict[str, float] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            for pid in _descendants(os.getpid()):
                role = _role(pid)
                if role is not None:
                    peaks[role] = max(peaks.get(role, 0.0), _hwm_mib(pid))
            stop.wait(0.2)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield peaks
    finally:
        stop.set()
        thread.join()


def _start_up(work: Path) -> tuple[float, float]:
    config = {"tableName": "clicks_OFFLINE", "tableType": "OFFLINE",
              "segmentsConfig": {"timeColumnName": "ts", "replication": "1"}, "tenants": {}, "metadata": {},
              "tableIndexConfig": {}}
    rows = tables.rows(3, 100_000, "ts", day=False)
    segments = {f"clicks_{i}": rows.iloc[i * 10_000:(i + 1) * 10_000].reset_index(drop=True) for i in range(10)}
    started = time.perf_counter()
    with helix_cluster(HelixTable(config, tables.schema("ts", day=False), segments), num_servers=2,
                       work_dir=work) as cluster:
        ready = time.perf_counter() - started
        assert cluster.query("SELECT COUNT(*) FROM clicks")["numDocsScanned"] == len(rows)
    return ready, time.perf_counter() - started


def _scenario(root: Path) -> Path:
    table = offline_twin(json.loads((ROOT / "scenarios" / "tables" / "events_REALTIME.json").read_text()))
    (root / "events_OFFLINE.json").write_text(json.dumps(table))
    sc = load_scenario(ROOT / "scenarios" / "default.yaml").with_overrides({
        "workload.generate.events": 100_000, "workload.generate.segment_rows": 10_000,
        "workload.generate.queries.duration_s": 600, "cluster.servers": 2})
    data = sc.to_dict()
    data["table"] = str(root / "events_OFFLINE.json")
    data["workload"]["data"] = str(root / "workload")
    path = root / "scenario.json"
    path.write_text(json.dumps(data))
    spec, name, _, config = load_generate_spec(load_scenario(path))
    generate_local(spec, root / "workload", table=name, table_config=config, progress=False)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=None, help="where measure's output goes (default: a temporary directory)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-helix-") as tmp:
        work = Path(tmp)
        for label in ("cold", "warm"):
            with peak_memory() as peaks:
                ready, total = _start_up(work)
            print(f"start-up ({label}): ready in {ready:.1f} s, stopped after {total:.1f} s; peak RSS MiB "
                  + ", ".join(f"{k} {v:.0f}" for k, v in sorted(peaks.items())), flush=True)
        scenario = _scenario(work)
        out = Path(args.out) if args.out else work / "measured"
        started = time.perf_counter()
        with peak_memory() as peaks:
            document = measure(scenario, out, rates=[20.0], queries=1200, overwrite=True)
        seconds = time.perf_counter() - started
        summary = document["rates"]["rate-20"]
        print(f"measure 100k rows, 20/s for 60 s ({summary['queries_recorded']} queries, "
              f"{document['warmup_queries']} warm-up): {seconds:.1f} s; client p50/p99 "
              f"{summary['client_latency_ms']['p50']}/{summary['client_latency_ms']['p99']} ms; agreed "
              f"{summary['agreement']['agreed']} of {summary['agreement']['queries']}; peak RSS MiB "
              + ", ".join(f"{k} {v:.0f}" for k, v in sorted(peaks.items())), flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
