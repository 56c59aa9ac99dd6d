"""Segment metadata from the controller (bulk server form) and from ZK records lands in one table."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from importer_fixtures import FIXTURES, line_of, write

from workbench.errors import InputError
from workbench.pinot.segment import SegmentMetadata
from workbench.workload.importers import SEGMENT_COLUMNS, read_segments
from workbench.workload.schema import SEGMENTS_SCHEMA


def _rows(name: str) -> pd.DataFrame:
    return read_segments(FIXTURES / name).frame.set_index("segment_name")


def test_controller_bulk_metadata() -> None:
    frame = _rows("segments_controller.json")
    first = frame.loc["events_OFFLINE_1767225600000_1767311999000_0"]
    assert (first["start_time_ms"], first["end_time_ms"], first["total_docs"]) == (1767225600000, 1767311999000, 250000)
    assert (first["crc"], first["creation_time_ms"], first["size_bytes"]) == (3251475672, 1767315600000, -1)
    assert (first["table_type"], first["status"], first["sequence"]) == ("OFFLINE", "DONE", -1)
    assert (first["partition"], first["num_partitions"]) == (3, 8)  # the one id of the one partition column
    assert json.loads(str(first["partition_metadata"])) == {"columnPartitionMap": {"user_id": {
        "functionName": "Murmur", "numPartitions": 8, "partitions": [3], "functionConfig": None}}}
    assert (first["seal_time_ms"], first["start_offset"], first["end_offset"]) == (-1, -1, -1)


def test_controller_records_get_the_zk_fields_they_imply() -> None:
    first = _rows("segments_controller.json").loc["events_OFFLINE_1767225600000_1767311999000_0"]
    zk = json.loads(str(first["zk_metadata"]))
    assert zk["segment.start.time"] == "1767225600000" and zk["segment.time.unit"] == "MILLISECONDS"
    assert (zk["segment.total.docs"], zk["segment.crc"], zk["segment.type"]) == ("250000", "3251475672", "OFFLINE")
    assert zk["segment.partition.metadata"] == first["partition_metadata"]


def test_controller_nulls_and_long_min_mean_unknown_and_a_two_partition_segment_has_no_partition() -> None:
    second = _rows("segments_controller.json").loc["events_OFFLINE_1767312000000_1767398399000_1"]
    assert (second["start_time_ms"], second["end_time_ms"], second["creation_time_ms"]) == (-1, -1, -1)
    assert (second["crc"], second["total_docs"]) == (12345, 0)
    assert (second["partition"], second["num_partitions"]) == (-1, 4)
    assert json.loads(str(second["partition_metadata"]))["columnPartitionMap"]["user_id"]["partitions"] == [0, 2]


def test_zk_simple_fields_for_realtime_llc_segments() -> None:
    frame = _rows("segments_zk.json")
    done = frame.loc["events__3__12__20260101T0000Z"]
    assert (done["start_time_ms"], done["end_time_ms"], done["total_docs"]) == (1767225600000, 1767229199999, 100000)
    assert (done["size_bytes"], done["crc"], done["creation_time_ms"]) == (43574, 1985214537, 1767225600000)
    assert (done["table_type"], done["status"], done["partition"], done["sequence"]) == ("REALTIME", "DONE", 3, 12)
    assert (done["start_offset"], done["end_offset"], done["num_partitions"]) == (1200000, 1300000, 4)
    consuming = frame.loc["events__3__13__20260101T0100Z"]
    assert (consuming["start_time_ms"], consuming["end_time_ms"], consuming["total_docs"]) == (-1, -1, -1)
    assert (consuming["status"], consuming["sequence"], consuming["partition"]) == ("IN_PROGRESS", 13, 3)
    assert (consuming["start_offset"], consuming["end_offset"]) == (1300000, -1)


def test_zk_metadata_keeps_every_simple_field_and_adds_the_name() -> None:
    done = _rows("segments_zk.json").loc["events__3__12__20260101T0000Z"]
    source = json.loads((FIXTURES / "segments_zk.json").read_text())["events__3__12__20260101T0000Z"]
    assert json.loads(str(done["zk_metadata"])) == {**source, "segment.name": "events__3__12__20260101T0000Z"}


def test_days_unit_and_legacy_partition_ranges() -> None:
    row = _rows("segments_zk.json").loc["events_OFFLINE_20190101_20190102_0"]
    assert (row["start_time_ms"], row["end_time_ms"]) == (17897 * 86_400_000, 17898 * 86_400_000)
    assert (row["table_type"], row["partition"], row["num_partitions"]) == ("OFFLINE", 5, 10)
    assert json.loads(str(row["partition_metadata"]))["columnPartitionMap"]["memberId"]["partitions"] == [5]


def test_znrecord_lists_with_seconds_and_microseconds() -> None:
    frame = _rows("segments_znrecords.json")
    seconds = frame.loc["events__0__0__20260101T0000Z"]
    assert (seconds["start_time_ms"], seconds["end_time_ms"]) == (1767225600000, 1767229199000)
    micros = frame.loc["events__1__0__20260101T0000Z"]  # TimeUnit.toMillis truncates: ...000123 us -> ...000 ms
    assert (micros["start_time_ms"], micros["end_time_ms"]) == (1767225600000, 1767229199999)
    entry = json.loads(str(micros["partition_metadata"]))["columnPartitionMap"]["user_id"]
    assert entry["functionConfig"] == {"seed": "9001"} and entry["functionName"] == "Murmur3"
    assert entry["partitions"] == [1, 3]


def test_an_llc_name_decides_the_partition_before_the_metadata() -> None:
    """Pinot's SegmentUtils.getRealtimeSegmentPartitionId reads the LLC name first; rows [1, 3] do not matter."""
    micros = _rows("segments_znrecords.json").loc["events__1__0__20260101T0000Z"]
    assert (micros["partition"], micros["num_partitions"]) == (1, 4)


def test_a_single_segment_file_is_named_after_the_file() -> None:
    """``GET /segments/{t}/{segment}/metadata`` returns the fields without the name; users save it as <segment>.json."""
    row = read_segments(FIXTURES / "events__2__5__20260101T0300Z.json").frame.iloc[0]
    assert (row["segment_name"], row["total_docs"], row["size_bytes"]) == ("events__2__5__20260101T0300Z", 77, 2048)
    assert (row["partition"], row["sequence"], row["num_partitions"]) == (2, 5, -1)
    assert row["partition_metadata"] is None


def test_partition_metadata_reads_back_through_the_pruners_segment_model() -> None:
    row = _rows("segments_zk.json").loc["events__3__12__20260101T0000Z"]
    segment = SegmentMetadata.from_zk_metadata("s", json.loads(str(row["zk_metadata"])))
    assert segment.partitions["user_id"].partitions == frozenset({3})
    assert (segment.partitions["user_id"].num_partitions, segment.time_range) == (4, (1767225600000, 1767229199999))


def test_columns_and_types_are_the_shared_segments_schema_then_extras() -> None:
    frame = read_segments(FIXTURES / "segments_zk.json").frame
    assert tuple(frame.columns) == SEGMENT_COLUMNS == (*SEGMENTS_SCHEMA.names, "num_partitions")
    arrow = pa.Schema.from_pandas(frame, preserve_index=False)
    for field in SEGMENTS_SCHEMA:
        assert arrow.field(field.name).type == field.type, field.name


def test_json_lines_report_a_bad_line_and_go_on_in_lenient_mode() -> None:
    path = FIXTURES / "segments.jsonl"
    with pytest.raises(InputError, match="not valid JSON") as err:
        read_segments(path)
    assert err.value.where == f"{path}:3"
    result = read_segments(path, lenient=True)
    assert result.frame["segment_name"].tolist() == ["events__0__1__20260101T0100Z", "events__0__2__20260101T0200Z",
                                                     "events_OFFLINE_x_y_0"]
    assert result.frame["total_docs"].tolist() == [10, 20, 30]
    assert [line for line, _ in result.skipped] == [3]


MALFORMED = [
    ("bad_docs", "segment.total.docs must be an integer, got 'ten'"),
    ("bad_partition_json", "segment.partition.metadata must be JSON"),
    ("bad_unit", "'WEEKS' is not a Java TimeUnit"),
    ("bad_num_partitions", "numPartitions must be at least 1"),
    ("not_a_record", "not a segment metadata record"),
    ("bad_crc", "crc must be an integer, got 1.5"),
]


def test_strict_mode_stops_at_the_first_bad_record_with_its_line() -> None:
    path = FIXTURES / "segments_malformed.json"
    with pytest.raises(InputError) as err:
        read_segments(path)
    assert err.value.where == f"{path}:{line_of(path, 'bad_docs')}"
    assert err.value.problem.startswith("bad_docs: ") and MALFORMED[0][1] in err.value.problem


def test_lenient_mode_reports_every_kind_of_bad_record_with_its_line() -> None:
    path = FIXTURES / "segments_malformed.json"
    result = read_segments(path, lenient=True)
    skipped = dict(result.skipped)
    for key, problem in MALFORMED:
        assert problem in skipped[line_of(path, f'"{key}"')]
    duplicate = [n for n, line in enumerate(path.read_text().splitlines(), 1) if '"good_0"' in line][1]
    assert "already appeared at line 2" in skipped[duplicate]
    assert result.frame["segment_name"].tolist() == ["good_0", "good_1"]
    assert result.counts["skipped"] == len(MALFORMED) + 1


@pytest.mark.parametrize(("text", "problem"), [
    ('[{"simpleFields": {"segment.total.docs": "1"}}]', "no segment name"),
    ('{"a": {"segment.total.docs": "1"},\n "b": {"segment.total.docs": 2,}}', "not valid JSON"),
    ("[]", "holds no segment records"),
    ('"just a string"', "expected a JSON object or list"),
])
def test_documents_that_cannot_be_read(tmp_path: Path, text: str, problem: str) -> None:
    path = write(tmp_path, "segments.json", text)
    with pytest.raises(InputError, match=problem):
        read_segments(path)
    if problem == "not valid JSON":  # even lenient mode cannot read half a document
        with pytest.raises(InputError) as err:
            read_segments(path, lenient=True)
        assert err.value.where == f"{path}:2"


def test_lenient_mode_keeps_going_past_a_record_without_a_name(tmp_path: Path) -> None:
    path = write(tmp_path, "segments.json", '[{"simpleFields": {"segment.total.docs": "1"}},',
                 ' {"id": "s1", "simpleFields": {"segment.total.docs": "2"}}]')
    result = read_segments(path, lenient=True)
    assert result.frame["segment_name"].tolist() == ["s1"] and [n for n, _ in result.skipped] == [1]


def test_a_shared_column_the_input_cannot_know_is_filled_with_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """If the shared schema grows, imports keep conforming: -1 for integers, null for strings."""
    import workbench.workload.importers.segments as segments

    grown = SEGMENTS_SCHEMA.append(pa.field("tier_rank", pa.int32())).append(pa.field("tier", pa.string()))
    monkeypatch.setattr(segments, "SEGMENTS_SCHEMA", grown)
    frame = read_segments(FIXTURES / "segments_zk.json").frame
    assert frame["tier_rank"].tolist() == [-1, -1, -1] and str(frame["tier_rank"].dtype) == "int32"
    assert frame["tier"].tolist() == [None, None, None]
