"""A whole Pinot cluster with Helix (issue #23): real controller and broker JVMs, two servers joined as participants.

One module fixture starts ZooKeeper and the controller, two servers and the broker (each its own JVM), creates the
table and uploads two segments through the controller's REST API, waits for the external view, sends a few queries
to the broker's ``POST /query/sql`` and leaves the ``with`` block. Expected answers are counted with pandas over
the rows the segments are built from; the placement expected is Pinot's balanced segment assignment (each new
segment to the server holding fewest: two segments on two servers, one each).
"""

from __future__ import annotations

import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import tables
from procs import proc_stats

from workbench.groundtruth.helix_cluster import helix_cluster

CONFIG = {"tableName": "clicks_OFFLINE", "tableType": "OFFLINE",
          "segmentsConfig": {"timeColumnName": "ts", "replication": "1"}, "tenants": {}, "metadata": {},
          "tableIndexConfig": {}}
QUERIES = {"count": "SELECT COUNT(*), SUM(clicks) FROM clicks",
           "us": "SELECT COUNT(*) FROM clicks WHERE country = 'us'",
           "by_country": "SELECT country, SUM(clicks) FROM clicks GROUP BY country ORDER BY country"}


@dataclass(frozen=True)
class Run:
    rows: pd.DataFrame
    health: str
    servers: tuple[str, ...]
    ideal_state: dict[str, dict[str, str]]
    external_view: dict[str, dict[str, str]]
    responses: dict[str, dict[str, Any]]
    query_log: str
    pids: tuple[int, ...]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    rows = tables.rows(5, 600, "ts", day=False)
    segments = {f"clicks_{i}": rows.iloc[i * 300:(i + 1) * 300].reset_index(drop=True) for i in range(2)}
    logs = tmp_path_factory.mktemp("helix-logs")
    with helix_cluster(CONFIG, tables.schema("ts", day=False), segments, num_servers=2, logs_dir=logs) as cluster:
        with urllib.request.urlopen(f"{cluster.broker_url}/health", timeout=30) as response:
            health = response.read().decode()
        responses = {name: cluster.query(sql) for name, sql in QUERIES.items()}
        result = Run(rows, health, cluster.servers, cluster.ideal_state("clicks"), cluster.external_view("clicks"),
                     responses, "", cluster.pids)
    return Run(**{**result.__dict__, "query_log": (Path(logs) / "broker-querylog.log").read_text()})


def test_the_broker_is_healthy_and_the_external_view_is_the_controllers_balanced_assignment(run: Run) -> None:
    assert run.health == "OK"
    assert run.external_view == run.ideal_state
    assert sorted(run.ideal_state) == ["clicks_0", "clicks_1"]
    holders = sorted(server for states in run.ideal_state.values() for server, state in states.items()
                     if state == "ONLINE")
    assert holders == sorted(run.servers)  # one segment on each of the two servers


def test_queries_through_the_broker_answer_as_counted_by_hand(run: Run) -> None:
    rows = run.rows
    count = run.responses["count"]
    assert count["exceptions"] == []
    assert count["resultTable"]["rows"] == [[len(rows), float(rows["clicks"].sum())]]
    assert (count["numServersQueried"], count["numServersResponded"]) == (2, 2)
    assert (count["numSegmentsQueried"], count["numDocsScanned"], count["totalDocs"]) == (2, len(rows), len(rows))
    us = run.responses["us"]
    assert us["resultTable"]["rows"] == [[int((rows["country"] == "us").sum())]]
    assert us["numDocsScanned"] == int((rows["country"] == "us").sum())
    by_country = rows.groupby("country")["clicks"].sum().sort_index()
    assert run.responses["by_country"]["resultTable"]["rows"] == [[c, float(v)] for c, v in by_country.items()]


def test_each_query_is_in_the_brokers_query_log_and_no_jvm_outlives_the_block(run: Run) -> None:
    for response in run.responses.values():
        assert f"requestId={response['requestId']},table=clicks," in run.query_log
    assert [pid for pid, state, _, group in proc_stats() if group in run.pids and state != "Z"] == []
