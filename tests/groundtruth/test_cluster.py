"""Pinot's query path across processes: two server JVMs and a broker/load JVM answer as counted by hand.

The expected values are counted with pandas over the very rows the segments are built from; nothing is taken
from the cluster's own output. No assertion is about time except the one ordering that must hold whatever the
machine's speed: the broker cannot see a query finish before the slowest server says it did.
"""

from __future__ import annotations

import os
import socket

import pandas as pd
import pytest
import tables
from procs import cmdline, ctrl_c_after, descendants, proc_stats

from workbench.groundtruth import GroundTruthError
from workbench.groundtruth.cluster import LoadSpec, run_cluster

CONFIG = {"tableName": "clicks_OFFLINE", "tableType": "OFFLINE",
          "segmentsConfig": {"timeColumnName": "ts", "replication": "1"}, "tenants": {}, "metadata": {},
          "tableIndexConfig": {}}
QUERIES = ["SELECT COUNT(*) FROM clicks",
           "SELECT COUNT(*) FROM clicks WHERE country = 'us'",
           "SELECT country, SUM(clicks) FROM clicks GROUP BY country ORDER BY country",
           "SELECT COUNT(*) FROM clicks WHERE memberId < 100 AND clicks >= 50"]


def _segments() -> dict[str, pd.DataFrame]:
    rows = tables.rows(3, 4000, "ts", day=False)
    return {f"clicks_{i}": rows.iloc[i * 1000:(i + 1) * 1000].reset_index(drop=True) for i in range(4)}


def _living(groups: tuple[int, ...]) -> list[int]:
    """Processes (not yet reaped zombies excepted) in any of the process groups the run started."""
    return [pid for pid, state, _, group in proc_stats() if group in groups and state != "Z"]


def test_two_server_processes_answer_100_poisson_queries_as_counted_by_hand() -> None:
    segments = _segments()
    rows = pd.concat(segments.values(), ignore_index=True)
    us = int((rows["country"] == "us").sum())
    member_clicks = int(((rows["memberId"] < 100) & (rows["clicks"] >= 50)).sum())
    sums = rows.groupby("country")["clicks"].sum().sort_index()
    # Per query: (rows matched = numDocsScanned, result rows).
    expected = {0: (4000, [[4000]]), 1: (us, [[us]]),
                2: (4000, [[country, float(total)] for country, total in sums.items()]),
                3: (member_clicks, [[member_clicks]])}

    # Pinot's own key names; a wrong prefix would leave Pinot's default (FCFS) and fail the READY check. Bounded
    # FCFS refuses a query (211 ServerOutOfCapacity) when max_pending_per_group queries of its table wait (10 by
    # default, which a slow moment of this shared machine can reach); more than the run's 100 makes it impossible.
    scheduler = {"pinot.query.scheduler.name": "bounded_fcfs", "pinot.query.scheduler.max_pending_per_group": "1000"}
    run = run_cluster(CONFIG, tables.schema("ts", day=False), segments, QUERIES,
                      LoadSpec(rate_per_s=20.0, num_queries=100, seed=7, timeout_ms=15_000),
                      scheduler_config=scheduler)
    records = run.records

    assert len(run.ready) == 2 and all("scheduler=BoundedFCFS segments=2" in line for line in run.ready), run.ready

    assert records["requestId"].tolist() == list(range(1, 101))
    assert records["exceptions"].map(len).sum() == 0, records.loc[records["exceptions"].map(len) > 0, "exceptions"]
    for record in records.itertuples():
        docs, result = expected[record.queryIndex]
        assert record.numDocsScanned == docs, record.sql
        assert record.rows == result, record.sql
        assert record.totalDocs == 4000 and record.numSegmentsQueried == 4
        # Round robin over sorted names: each server holds two segments and was asked for exactly those.
        assert record.numServersResponded == 2
        assert sorted(s["numSegmentsQueried"] for s in record.servers) == [2, 2]
        # The server's timeUsedMs is whole milliseconds of its own clock, so it may round up by one.
        assert record.latencyMs + 1 >= record.maxServerTimeUsedMs >= 0
    assert {s["instance"] for r in records["servers"] for s in r} == {
        "Server_" + s.replace(":", "_") for s in run.servers}
    assert len(run.pids) == 4  # segment builder, two servers, load generator
    assert _living(run.pids) == []


def test_a_server_that_cannot_bind_is_named_with_its_log_and_nothing_is_left_running() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("", 0))
        taken.listen()
        port = taken.getsockname()[1]
        segments = dict(list(_segments().items())[:1])
        with pytest.raises(GroundTruthError, match=rf"Pinot server 127\.0\.0\.2:{port} failed to start: .*"
                                                  r"(?s:.*)Address already in use"):
            run_cluster(CONFIG, tables.schema("ts", day=False), segments, QUERIES[:1],
                        LoadSpec(rate_per_s=1.0, num_queries=1), assignment={"clicks_0": f"127.0.0.2:{port}"})
    # The JVMs are this process's children: none is left (other sessions' JVMs on the machine are not counted).
    assert [pid for pid in descendants(os.getpid()) if b"workbench.cluster" in cmdline(pid)] == []


def test_ctrl_c_during_a_run_leaves_no_pinot_process() -> None:
    """Interrupted (SIGALRM raising KeyboardInterrupt, as Ctrl-C does) while the cluster runs a 60 s load: every JVM
    it started is gone, wherever the interrupt lands (building, starting servers or under load)."""
    with ctrl_c_after(12), pytest.raises(KeyboardInterrupt):
        run_cluster(CONFIG, tables.schema("ts", day=False), dict(list(_segments().items())[:2]), QUERIES[:1],
                    LoadSpec(rate_per_s=1.0, num_queries=60))
    assert [pid for pid in descendants(os.getpid()) if b"workbench.cluster" in cmdline(pid)] == []
