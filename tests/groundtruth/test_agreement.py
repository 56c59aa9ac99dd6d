"""The model agrees with a real Apache Pinot (the pinned release, its own jars), query by query.

Each table config runs a few hundred queries through Pinot's segment creator, the controller's ZK
metadata, the broker's pruners and instance selector, the servers' executor and the broker's reduce
(:mod:`workbench.groundtruth`), and through the workbench's parts. Every expected value is Pinot's own
answer. A disagreement names the query, the field, Pinot's value and the model's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tables

from workbench.groundtruth import Agreement, PinotRun, agreement
from workbench.pinot.table_config import TableConfig
from workbench.sim.layout import assign_layout
from workbench.workload.importers.query_log import read_query_log

QUERIES = 240


def _run(case: str) -> tuple[Agreement, PinotRun]:
    config, time_column, day = tables.AGREEMENT_CASES[case]
    frame = tables.rows(seed=11, n=6000, time_column=time_column, day=day)
    num_partitions = config["tableIndexConfig"]["segmentPartitionConfig"]["columnPartitionMap"]["memberId"][
        "numPartitions"]
    segments = tables.cut(frame, time_column, 2 if day else 3 * tables.HOUR, num_partitions)
    lo, hi = int(frame[time_column].min()), int(frame[time_column].max())
    sql = tables.queries(seed=5, n=QUERIES, time_column=time_column, lo=lo, hi=hi,
                         span=4 if day else 6 * tables.HOUR)
    table = TableConfig.from_json(config)
    names = tuple(segments)
    ideal = assign_layout(table, tables.SERVERS, names, np.zeros(len(names), bool), np.zeros(len(names), int))
    return agreement(config, tables.schema(time_column, day), segments, sql, servers=tables.SERVERS,
                     ideal_state=ideal)


@pytest.fixture(scope="module", params=sorted(tables.AGREEMENT_CASES))
def compared(request: pytest.FixtureRequest) -> tuple[str, Agreement, PinotRun]:
    return (request.param, *_run(request.param))


def test_the_model_agrees_with_pinot_on_every_query(compared: tuple[str, Agreement, PinotRun]) -> None:
    case, result, _ = compared
    assert result.queries == QUERIES
    assert result.disagreements == (), f"{case}: {result.to_json()['disagreements'][:5]}"
    assert result.agreed == QUERIES


def test_the_comparison_has_something_to_disagree_about(compared: tuple[str, Agreement, PinotRun]) -> None:
    """Pinot pruned segments and skipped servers in many queries, and scanned some documents: agreement on
    these tables is not agreement on a table where nothing can be pruned."""
    case, _, pinot = compared
    pruned = [a["numSegmentsPrunedByBroker"] for a in pinot.answers]
    assert sum(p > 0 for p in pruned) > QUERIES // 4, case
    assert any(p == 0 for p in pruned), case
    assert sum(a["numDocsScanned"] for a in pinot.answers) > 0
    assert len({a["numServersQueried"] for a in pinot.answers}) > 1, case


def test_pinot_builds_the_pruners_and_selector_the_table_config_asks_for(
    compared: tuple[str, Agreement, PinotRun],
) -> None:
    case, _, pinot = compared
    config = tables.AGREEMENT_CASES[case][0]
    expected_pruners = {"time": "TimeSegmentPruner", "partition": "SinglePartitionColumnSegmentPruner"}
    assert pinot.pruner_types == tuple(expected_pruners[t] for t in config["routing"]["segmentPrunerTypes"])
    selector = {"replicaGroup": "ReplicaGroupInstanceSelector", "balanced": "BalancedInstanceSelector",
                "strictReplicaGroup": "StrictReplicaGroupInstanceSelector"}
    assert pinot.instance_selector_type == selector[config["routing"]["instanceSelectorType"]]
    assert pinot.pinot_version == "1.5.1"


def test_the_importer_reads_every_line_of_the_query_log_pinots_broker_wrote(
    compared: tuple[str, Agreement, PinotRun], tmp_path: Path,
) -> None:
    """Pinot's broker ``QueryLogger`` wrote the log (with its "SQL query for request" and debug "Broker
    Response" lines between the query lines); every query line is read, with Pinot's own numbers."""
    case, _, pinot = compared
    path = tmp_path / "querylog.log"
    path.write_text(pinot.query_log)
    result = read_query_log(path)
    frame = result.frame.set_index("request_id")
    assert len(frame) == QUERIES and list(result.skipped) == []
    for answer in pinot.answers:
        row = frame.loc[answer.request_id]
        assert row["sql"] == answer.sql, case
        assert (row["num_docs_scanned"], row["total_docs"]) == (answer["numDocsScanned"], answer["totalDocs"])
        assert (row["num_segments_queried"], row["num_segments_processed"], row["num_segments_matched"]) == (
            answer["numSegmentsQueried"], answer["numSegmentsProcessed"], answer["numSegmentsMatched"])
        assert (row["num_servers_queried"], row["num_servers_responded"]) == (
            answer["numServersQueried"], answer["numServersResponded"])
