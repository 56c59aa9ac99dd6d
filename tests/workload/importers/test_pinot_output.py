"""The importers read what Pinot 1.5.1 itself wrote (fixtures made by Pinot's own code, not by ours).

``pinot-1.5.1_querylog.log`` is the broker ``QueryLogger``'s file and ``pinot-1.5.1_zkmetadata.json`` the
segment ZK metadata the controller's ``SegmentZKMetadataUtils`` wrote, both from ``workbench.groundtruth``
running Pinot 1.5.1's jars on a two-segment table (``clicks_0``: ts = T0, T0+1 s, T0+2 s, memberId 1, 1, 1,
country us, de, us, clicks 3, 4, 5; ``clicks_1``: ts = T0+60 s, T0+61 s, memberId 2, 3, country fr, us,
clicks 6, 7; T0 = 1,700,000,000,000; one server each). Every expected value below is counted by hand from
those five rows.
"""

from __future__ import annotations

import json

from importer_fixtures import FIXTURES

from workbench.pinot.partition import get_partition_function
from workbench.workload.importers import read_segments
from workbench.workload.importers.query_log import read_query_log

T0 = 1_700_000_000_000


def test_every_query_line_of_a_real_broker_log_is_read_with_its_numbers() -> None:
    result = read_query_log(FIXTURES / "pinot-1.5.1_querylog.log")
    frame = result.frame.set_index("request_id")
    assert list(frame.index) == [100, 101, 102, 103] and list(result.skipped) == []
    # country = 'us': rows 1 and 3 of clicks_0, row 2 of clicks_1; both segments, both servers
    us = frame.loc[100]
    assert (us["num_docs_scanned"], us["total_docs"], us["num_servers_queried"]) == (3, 5, 2)
    # ts >= T0 + 60 s: the time pruner keeps clicks_1 alone, both its rows match
    late = frame.loc[101]
    assert (late["num_docs_scanned"], late["total_docs"], late["num_segments_queried"]) == (2, 2, 1)
    assert late["num_servers_queried"] == 1
    # memberId = 1 (no partition pruning on the broker: one Murmur bucket can hold 1 and 2 or 3); the
    # server's value pruner drops clicks_1 (memberId 2..3), so 2 queried, 1 processed, 1 matched, 3 docs
    member = frame.loc[102]
    assert (member["num_segments_queried"], member["num_segments_processed"], member["num_segments_matched"]) == (
        2, 1, 1)
    assert member["num_docs_scanned"] == 3
    assert frame.loc[103, "sql"] == "SELECT * FROM clicks LIMIT 2"
    # the log's other lines ("SQL query for request", debug "Broker Response") are Pinot's too, and not queries
    assert result.counts["lines"] == 12


def test_segment_zk_metadata_as_pinot_writes_it() -> None:
    frame = read_segments(FIXTURES / "pinot-1.5.1_zkmetadata.json").frame.set_index("segment_name")
    first, second = frame.loc["clicks_0"], frame.loc["clicks_1"]
    assert (first["start_time_ms"], first["end_time_ms"], first["total_docs"]) == (T0, T0 + 2000, 3)
    assert (second["start_time_ms"], second["end_time_ms"], second["total_docs"]) == (T0 + 60_000, T0 + 61_000, 2)
    murmur = get_partition_function("Murmur", 4)
    for row, members in ((first, [1, 1, 1]), (second, [2, 3])):
        partitions = json.loads(str(row["partition_metadata"]))["columnPartitionMap"]["memberId"]["partitions"]
        assert sorted(partitions) == sorted({murmur.get_partition(m, "INT") for m in members})
