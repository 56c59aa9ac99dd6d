"""The model's view of a streamed table's segments (no JVM): Pinot's LLC segments hold their partition's events by
offset, as their ZK records say, and a consuming segment's metadata is what Pinot's controller writes when it opens
one (``PinotLLCRealtimeSegmentManager``: its stream partition of the table's one partition column, no time range)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from workbench.errors import InputError
from workbench.groundtruth.helix_cluster import StreamTable
from workbench.groundtruth.streamed import PARTITION_FIELD, StreamedTable, pinot_segments, streamed_table
from workbench.pinot.table_config import TableConfig
from workbench.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
CONFIG = {"tableName": "ev", "tableType": "REALTIME", "segmentsConfig": {"timeColumnName": "ts"},
          "tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
              "k": {"functionName": "Modulo", "numPartitions": 2}}}}}


def test_each_llc_segment_holds_its_partitions_events_from_its_start_to_its_end_offset() -> None:
    # partition 0: offsets 0..4 (k even), partition 1: offsets 0..2 (k odd), interleaved in arrival order
    events = pd.DataFrame({"k": [0, 1, 2, 3, 4, 5, 6, 8], "ts": [10, 11, 12, 13, 14, 15, 16, 17],
                           "__partition": [0, 1, 0, 1, 0, 1, 0, 0], "__offset": [0, 0, 1, 1, 2, 2, 3, 4],
                           "__order": range(8)})
    rows = events[["k", "ts"]].assign(**{PARTITION_FIELD: events["__partition"]})
    st = StreamedTable(StreamTable(CONFIG, {}, rows, "k", 2, PARTITION_FIELD), events, TableConfig.from_json(CONFIG))
    zk = {"ev__0__0__20260101T0000Z": {"segment.realtime.status": "DONE", "segment.realtime.startOffset": "0",
                                       "segment.realtime.endOffset": "3"},
          "ev__0__1__20260101T0000Z": {"segment.realtime.status": "IN_PROGRESS", "segment.realtime.startOffset": "3"},
          "ev__1__0__20260101T0000Z": {"segment.realtime.status": "IN_PROGRESS", "segment.realtime.startOffset": "0"}}
    segments, consuming = pinot_segments(st, zk)
    assert {n: list(f["k"]) for n, f in segments.items()} == {
        "ev__0__0__20260101T0000Z": [0, 2, 4], "ev__0__1__20260101T0000Z": [6, 8],
        "ev__1__0__20260101T0000Z": [1, 3, 5]}
    assert all(list(f.columns) == ["k", "ts"] for f in segments.values())  # the table's columns only
    assert sorted(consuming) == ["ev__0__1__20260101T0000Z", "ev__1__0__20260101T0000Z"]
    head = consuming["ev__1__0__20260101T0000Z"]
    assert head.time_range is None and head.total_docs == 3
    assert head.partitions["k"].partitions == frozenset({1}) and head.partitions["k"].num_partitions == 2


def test_events_without_a_stream_partition_are_refused_naming_the_fix(tmp_path: Path) -> None:
    (tmp_path / "events").mkdir()
    pd.DataFrame({"segment_name": ["s"], "key_id": [1]}).to_parquet(tmp_path / "events" / "part-00000.parquet")
    sc = load_scenario(ROOT / "scenarios" / "default.yaml")
    with pytest.raises(InputError, match=r"no 'partition' column.*--cluster processes"):
        streamed_table(sc, tmp_path, {})
