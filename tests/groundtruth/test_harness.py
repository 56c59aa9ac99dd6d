"""Running Pinot's parts: Pinot's own refusals reach the user, and no JVM outlives a call."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
import tables
from procs import ctrl_c_after, proc_stats

from workbench.groundtruth import GroundTruthError, PinotTable, run_pinot
from workbench.groundtruth.harness import run_jvm

DRIVER = "workbench.groundtruth.PinotParts"


def _drivers() -> list[int]:
    """Pids of running driver JVMs (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if DRIVER.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _table(partition_function: str) -> PinotTable:
    config = {"tableName": "clicks_OFFLINE", "tableType": "OFFLINE",
              "segmentsConfig": {"timeColumnName": "ts", "replication": "1"}, "tenants": {}, "metadata": {},
              "tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
                  "memberId": {"functionName": partition_function, "numPartitions": 2}}}},
              "routing": {"segmentPrunerTypes": ["partition"]}}
    rows = pd.DataFrame({"ts": [tables.T0, tables.T0 + 1], "memberId": [1, 2], "country": ["us", "de"],
                         "clicks": [3, 4]})
    server = tables.SERVERS[0]
    return PinotTable(config, tables.schema("ts", day=False), {"clicks_0": rows}, (server,),
                      {"clicks_0": {server: "ONLINE"}})


def test_a_two_row_table_answers_as_counted_by_hand_and_leaves_no_jvm() -> None:
    run = run_pinot(_table("Murmur"), [("SELECT COUNT(*) FROM clicks WHERE country = 'us'", 0)])
    answer = run.answers[0]
    assert answer["numDocsScanned"] == 1 and answer["totalDocs"] == 2 and answer["numServersQueried"] == 1
    assert answer.segment_to_server == {"clicks_0": tables.SERVERS[0]}
    assert _drivers() == []


def test_a_table_config_pinot_refuses_gets_pinots_own_message() -> None:
    with pytest.raises(GroundTruthError, match=r"Pinot refused the request: .*NoSuchFunction"):
        run_pinot(_table("NoSuchFunction"), [("SELECT COUNT(*) FROM clicks", 0)])
    assert _drivers() == []


def test_ctrl_c_kills_the_whole_process_group(tmp_path: Path) -> None:
    """The JVM and anything it started are killed when the caller is interrupted (here after 1 s of a
    60 s child that itself started a grandchild)."""
    pid_file = tmp_path / "pid"

    with ctrl_c_after(1), pytest.raises(KeyboardInterrupt):
        run_jvm(["bash", "-c", f"echo $$ > {pid_file}; sleep 60 & sleep 60"], tmp_path / "log")
    group = int(pid_file.read_text())
    deadline = time.monotonic() + 10  # SIGKILL is delivered asynchronously; a killed process may linger as Z
    while _living_in_group(group) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _living_in_group(group) == []


def _living_in_group(group: int) -> list[int]:
    """Processes of process group ``group`` that are not dead (zombies count as dead)."""
    return [pid for pid, state, _, pgrp in proc_stats() if pgrp == group and state != "Z"]
