"""A whole Pinot cluster with Helix (issue #23): real controller and broker JVMs, two servers joined as participants.

The session fixture ``helix_run`` (conftest.py) starts ZooKeeper and the controller, two servers and the broker
(each its own JVM), creates the table and uploads two segments through the controller's REST API, waits for the
external view, sends a few queries to the broker's ``POST /query/sql`` and leaves the ``with`` block. Expected
answers are counted with pandas over the rows the segments are built from; the placement expected is Pinot's
balanced segment assignment (each new segment to the server holding fewest: two segments on two servers, one each).
"""

from __future__ import annotations

from helix_run import HelixRun
from procs import proc_stats


def test_the_broker_is_healthy_and_the_external_view_is_the_controllers_balanced_assignment(
        helix_run: HelixRun) -> None:
    assert helix_run.health == "OK"
    assert helix_run.external_view == helix_run.ideal_state
    assert sorted(helix_run.ideal_state) == ["clicks_0", "clicks_1"]
    holders = sorted(server for states in helix_run.ideal_state.values() for server, state in states.items()
                     if state == "ONLINE")
    assert holders == sorted(helix_run.servers)  # one segment on each of the two servers


def test_queries_through_the_broker_answer_as_counted_by_hand(helix_run: HelixRun) -> None:
    rows = helix_run.rows
    count = helix_run.responses["count"]
    assert count["exceptions"] == []
    assert count["resultTable"]["rows"] == [[len(rows), float(rows["clicks"].sum())]]
    assert (count["numServersQueried"], count["numServersResponded"]) == (2, 2)
    assert (count["numSegmentsQueried"], count["numDocsScanned"], count["totalDocs"]) == (2, len(rows), len(rows))
    us = helix_run.responses["us"]
    assert us["resultTable"]["rows"] == [[int((rows["country"] == "us").sum())]]
    assert us["numDocsScanned"] == int((rows["country"] == "us").sum())
    by_country = rows.groupby("country")["clicks"].sum().sort_index()
    assert helix_run.responses["by_country"]["resultTable"]["rows"] == [[c, float(v)] for c, v in by_country.items()]


def test_each_query_is_in_the_brokers_query_log_and_no_jvm_outlives_the_block(helix_run: HelixRun) -> None:
    for response in helix_run.responses.values():
        assert f"requestId={response['requestId']},table=clicks," in helix_run.query_log
    assert [pid for pid, state, _, group in proc_stats() if group in helix_run.pids and state != "Z"] == []
