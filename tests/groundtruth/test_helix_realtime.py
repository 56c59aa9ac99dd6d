"""REALTIME tables for real (issue #23): events streamed through a Kafka broker (KRaft) into Pinot's servers, whose
CONSUMING segments the controller commits as COMPLETED ones, and a full-upsert table with ``metadataTTL``.

The session fixture ``stream_run`` is the REALTIME half of the session's one cluster (``helix_run.py``,
``stream_run.py``). Expected answers come from the rows the test produced (counted with pandas) and from Pinot's
documented rules: a segment completes at the table's segment rows (``realtime.segment.flush.threshold.segment.rows``),
so a partition of ``n`` events holds ``n // 300`` COMPLETED segments of 300 rows and one CONSUMING segment with the
rest; segments are LLC-named ``table__partition__sequence__creationTime``; upsert keeps the latest version of each
key, except that a key whose last version fell below the TTL watermark (largest time seen minus ``metadataTTL``) is
forgotten when the next segment starts, and a later version of it then counts as a new key while the old one stays
valid.
"""

from __future__ import annotations

import os
import re

import pandas as pd
import pytest
from procs import cmdline, descendants, proc_stats
from stream_run import EVENTS_CONFIG, EVENTS_ROWS, SEGMENT_ROWS, StreamRun

from workbench.groundtruth.helix_cluster import StreamTable, helix_cluster

LLC_NAME = re.compile(r"^events__(\d+)__(\d+)__\d{8}T\d{4}Z$")


def test_kafka_took_every_event_and_each_partition_commits_a_segment_every_300_rows(stream_run: StreamRun) -> None:
    produced = stream_run.produced["events"]
    assert sum(produced.values()) == len(stream_run.events) == EVENTS_ROWS
    assert sorted(produced) == [0, 1]
    assert stream_run.external_view == stream_run.ideal_state
    by_partition: dict[int, dict[int, str]] = {}
    for name, states in stream_run.external_view.items():
        match = LLC_NAME.match(name)
        assert match is not None, name
        (state,) = set(states.values())
        by_partition.setdefault(int(match.group(1)), {})[int(match.group(2))] = state
    for partition, n in produced.items():
        completed = n // SEGMENT_ROWS
        assert completed >= 2, produced  # 2,000 events on two partitions
        expected = {seq: "ONLINE" for seq in range(completed)} | {completed: "CONSUMING"}
        assert by_partition[partition] == expected


def test_every_event_is_queryable_from_committed_and_consuming_segments(stream_run: StreamRun) -> None:
    events, count = stream_run.events, stream_run.responses["count"]
    assert count["exceptions"] == []
    assert count["resultTable"]["rows"] == [[len(events), float(events["clicks"].sum())]]
    assert count["numSegmentsQueried"] == len(stream_run.external_view)
    assert count["numConsumingSegmentsQueried"] == 2
    by_country = events.groupby("country")["clicks"].sum().sort_index()
    assert stream_run.responses["by_country"]["resultTable"]["rows"] == [[c, float(v)] for c, v in by_country.items()]
    produced = stream_run.produced["events"]
    per_segment = {name: n for name, n in stream_run.responses["by_segment"]["resultTable"]["rows"]}
    for name, n in per_segment.items():
        match = LLC_NAME.match(name)
        assert match is not None, name
        partition, seq = int(match.group(1)), int(match.group(2))
        completed = produced[partition] // SEGMENT_ROWS
        assert n == (SEGMENT_ROWS if seq < completed else produced[partition] - completed * SEGMENT_ROWS)


def test_upsert_with_metadata_ttl_forgets_keys_older_than_the_ttl(stream_run: StreamRun) -> None:
    r = stream_run.profiles_responses
    for response in r.values():
        assert response["exceptions"] == []
    assert all(n >= SEGMENT_ROWS + 100 for n in stream_run.produced["profiles"].values())  # a segment starts in F
    assert set(state for states in stream_run.profiles_view.values() for state in states.values()) == {
        "ONLINE", "CONSUMING"}
    # every document: 100 (A) + 1,200 (F) + 100 (C)
    assert r["all_docs"]["resultTable"]["rows"] == [[len(stream_run.profiles)]] == [[1400]]
    # 1,300 keys, and keys 0-49 twice: their phase-A versions were forgotten before their updates came
    assert r["count"]["resultTable"]["rows"] == [[1350]]
    assert r["out_of_ttl"]["resultTable"]["rows"] == [[100]]
    assert r["not_updated"]["resultTable"]["rows"] == [[50]]
    # keys updated within the TTL: the update replaced the old version
    assert r["within_ttl"]["resultTable"]["rows"] == [[k, 3] for k in range(2150, 2200)]


def test_no_jvm_outlives_the_block_kafka_included(stream_run: StreamRun) -> None:
    assert (stream_run.logs / "kafka.log").read_text().count("READY bootstrap=") == 1
    assert [pid for pid, state, _, group in proc_stats() if group in stream_run.pids and state != "Z"] == []
    # nor a producer (a JVM of its own per table, ended before the block did)
    assert [pid for pid in descendants(os.getpid()) if b"workbench.kafka" in cmdline(pid)] == []


def test_a_stream_table_without_its_key_column_is_refused_before_any_jvm_starts() -> None:
    events = pd.DataFrame({"ts": [1], "clicks": [2]})
    cluster = helix_cluster(StreamTable(EVENTS_CONFIG, {}, events, "memberId"))
    with pytest.raises(ValueError, match=r"events: the key column 'memberId' must be one of the events' columns"):
        cluster.__enter__()
