"""Segments: LLC chains per stream partition, sealing by rows or time, metadata as Pinot records it."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from workload_fixtures import records, spec_of, table

from workbench.pinot.partition import get_partition_function
from workbench.pinot.segment import SegmentMetadata
from workbench.workload.pure import Workload, generate_frames
from workbench.workload.segments import seal_partition


def _rows_of(w: Workload) -> dict[str, pd.DataFrame]:
    return {str(name): rows.sort_values("doc_id") for name, rows in w.events.groupby("segment_name")}


def test_offsets_and_doc_ids_follow_arrival_within_each_partition(zipf_workload: Workload) -> None:
    for _, rows in zipf_workload.events.groupby("partition"):
        assert rows["offset"].tolist() == list(range(len(rows)))  # events sorted by event_id = arrival
    for name, rows in _rows_of(zipf_workload).items():
        assert rows["doc_id"].tolist() == list(range(len(rows)))
        assert rows["event_id"].is_monotonic_increasing, name


def test_each_partition_is_a_chain_sealed_at_segment_rows_with_the_consuming_segment_at_the_head(
    zipf_workload: Workload,
) -> None:
    seg = zipf_workload.segments
    for p, chain in seg.groupby("partition"):
        chain = chain.sort_values("sequence")
        assert chain["sequence"].tolist() == list(range(len(chain)))
        assert chain["status"].tolist() == ["DONE"] * (len(chain) - 1) + ["IN_PROGRESS"]
        assert (chain["total_docs"].iloc[:-1] == 1_500).all() and chain["total_docs"].iloc[-1] <= 1_500
        starts, ends = chain["start_offset"].to_numpy(), chain["end_offset"].to_numpy()
        assert starts[0] == 0 and (starts[1:] == ends[:-1]).all()  # offsets contiguous, end exclusive
        assert (chain["creation_time_ms"].iloc[1:].to_numpy() == chain["seal_time_ms"].iloc[:-1].to_numpy()).all()
        assert (zipf_workload.events["partition"] == p).sum() == chain["total_docs"].sum()


def test_llc_names_carry_table_partition_sequence_and_creation_time(zipf_workload: Workload) -> None:
    for row in records(zipf_workload.segments):
        table_name, partition, sequence, stamp = row["segment_name"].split("__")
        created = datetime.fromtimestamp(row["creation_time_ms"] / 1000, tz=UTC).strftime("%Y%m%dT%H%MZ")
        assert (table_name, int(partition), int(sequence), stamp) == ("events", row["partition"], row["sequence"],
                                                                      created)


def test_time_range_docs_and_partition_sets_are_computed_over_the_rows(zipf_workload: Workload) -> None:
    modulo = get_partition_function("Modulo", 4)  # the table's function (the stream uses Murmur of key)
    rows = _rows_of(zipf_workload)
    for seg in records(zipf_workload.segments):
        mine = rows[seg["segment_name"]]
        assert seg["total_docs"] == len(mine)
        assert (seg["start_time_ms"], seg["end_time_ms"]) == (mine["event_time_ms"].min(), mine["event_time_ms"].max())
        if seg["status"] == "DONE":
            cmap = json.loads(seg["partition_metadata"])["columnPartitionMap"]
            expected = sorted({modulo.get_partition(k) for k in mine["key_id"].tolist()})
            assert cmap == {"key_id": {"functionName": "Modulo", "numPartitions": 4, "partitions": expected,
                                       "functionConfig": None}}
            assert len(expected) > 1  # a producer that hashes differently from the table mixes partitions


def test_matching_producer_gives_single_partition_segments() -> None:
    w = generate_frames(spec_of(events=8_000, keys=900, segment_rows=700),
                        table_config=table(column="key", function="Murmur"), seed=2)
    for seg in records(w.segments):
        cmap = json.loads(seg["partition_metadata"])["columnPartitionMap"]
        assert cmap["key"]["partitions"] == [seg["partition"]]


def test_consuming_segment_zk_record_is_what_the_controller_writes(zipf_workload: Workload) -> None:
    for seg in records(zipf_workload.segments[zipf_workload.segments["status"] == "IN_PROGRESS"]):
        zk = json.loads(seg["zk_metadata"])
        assert zk["segment.realtime.status"] == "IN_PROGRESS"
        assert (zk["segment.start.time"], zk["segment.end.time"], zk["segment.total.docs"]) == ("-1", "-1", "-1")
        assert seg["crc"] == -1 and seg["seal_time_ms"] == -1 and seg["end_offset"] == -1
        # the stream partition, with the stream's partition count, in the table's column and function
        assert json.loads(zk["segment.partition.metadata"])["columnPartitionMap"]["key_id"]["partitions"] == [
            seg["partition"]]
        parsed = SegmentMetadata.from_zk_metadata(seg["segment_name"], zk)
        assert parsed.time_range is None and parsed.total_docs == -1  # never pruned by time, never "empty"


def test_sealed_segment_zk_record_reads_back_into_the_pruners_view(zipf_workload: Workload) -> None:
    seg = records(zipf_workload.segments[zipf_workload.segments["status"] == "DONE"])[0]
    parsed = SegmentMetadata.from_zk_metadata(seg["segment_name"], json.loads(seg["zk_metadata"]))
    assert parsed.time_range == (seg["start_time_ms"], seg["end_time_ms"])
    assert parsed.total_docs == seg["total_docs"]
    assert parsed.partitions["key_id"].function_name == "Modulo"
    assert 0 <= seg["crc"] < 2**32 and seg["size_bytes"] > seg["total_docs"] * 40


def test_crc_changes_with_content_and_is_reproducible(zipf_workload: Workload) -> None:
    crcs = zipf_workload.segments.loc[zipf_workload.segments["status"] == "DONE", "crc"]
    assert crcs.is_unique
    again = generate_frames(spec_of(events=3_000, segment_rows=500), seed=1).segments["crc"].tolist()
    assert again == generate_frames(spec_of(events=3_000, segment_rows=500), seed=1).segments["crc"].tolist()
    assert again != generate_frames(spec_of(events=3_000, segment_rows=500), seed=2).segments["crc"].tolist()


def test_disorder_widens_segment_time_ranges_backwards(zipf_workload: Workload) -> None:
    done = zipf_workload.segments[zipf_workload.segments["status"] == "DONE"]
    # late events reach into earlier time: a segment's rows start before it started consuming
    assert (done["start_time_ms"] < done["creation_time_ms"]).mean() > 0.5
    assert (done["end_time_ms"] <= done["seal_time_ms"]).all()


def test_sealing_by_time_cuts_at_the_threshold() -> None:
    w = generate_frames(spec_of(events=12_000, partitions=2, span_s="3h", segment_rows=100_000,
                                segment_time_s="20m"), seed=3)
    done = w.segments[w.segments["status"] == "DONE"]
    assert len(done) == 2 * 8  # 3 h in 20-minute segments: 8 sealed, the 9th consuming, per partition
    assert ((done["seal_time_ms"] - done["creation_time_ms"]) == 20 * 60_000).all()
    rows = w.events.merge(w.segments[["segment_name", "creation_time_ms", "seal_time_ms"]], on="segment_name")
    sealed = rows[rows["seal_time_ms"] > 0]
    assert (sealed["ingest_time_ms"] >= sealed["creation_time_ms"]).all()
    assert (sealed["ingest_time_ms"] < sealed["seal_time_ms"]).all()


def test_seal_partition_rows_or_time_whichever_first() -> None:
    # 10 rows per 1-second bin (5 in the last); 25 rows or 4 s: the 25th row always comes first, and
    # a rows seal happens at the end of the bin that holds the segment's last row
    cuts = seal_partition(np.array([10] * 9 + [5]), rows=25, time_ms=4_000, bin_ms=1_000, t0_ms=0, span_ms=10_000)
    assert [(c.start, c.end, c.creation_ms, c.seal_ms) for c in cuts] == [
        (0, 25, 0, 3_000), (25, 50, 3_000, 5_000), (50, 75, 5_000, 8_000), (75, 95, 8_000, None)]
    # the row that fills a segment seals it, even the last one: the new consuming segment is empty
    cuts = seal_partition(np.full(10, 10), rows=25, time_ms=None, bin_ms=1_000, t0_ms=0, span_ms=10_000)
    assert [(c.start, c.end, c.seal_ms) for c in cuts][-2:] == [(75, 100, 10_000), (100, 100, None)]
    # a quiet stretch: time seals a small segment, and never an empty one
    cuts = seal_partition(np.array([3, 0, 0, 0, 0, 0, 2, 0]), rows=25, time_ms=2_000, bin_ms=1_000, t0_ms=0,
                          span_ms=8_000)
    assert [(c.start, c.end, c.seal_ms) for c in cuts] == [(0, 3, 2_000), (3, 5, 7_000), (5, 5, None)]


def test_offline_segments_per_batch_and_file_with_pure_files() -> None:
    w = generate_frames(spec_of(events=20_000, keys=2_000, span_s="2d", offline={"batch_s": "1d"}),
                        table_config=table(kind="OFFLINE"), seed=4)
    seg, ev = w.segments, w.events
    assert set(seg["table_type"]) == {"OFFLINE"} and set(seg["status"]) == {"DONE"}
    for s in records(seg):
        rows = ev[ev["segment_name"] == s["segment_name"]]
        name = f"events_{rows['event_time_ms'].min()}_{rows['event_time_ms'].max()}_{s['sequence']}"
        assert s["segment_name"] == name
        day = (rows["event_time_ms"] - w.manifest["time"]["start_ms"]) // 86_400_000
        assert day.nunique() == 1  # a batch is one day of event time
        assert set(rows["key_id"] % 4) == {s["partition"]}  # purity 1: every row of file j is partition j
        assert json.loads(s["partition_metadata"])["columnPartitionMap"]["key_id"]["partitions"] == [s["partition"]]
        assert sorted(rows["doc_id"]) == list(range(len(rows)))


def test_offline_purity_is_the_share_of_rows_in_their_own_file() -> None:
    w = generate_frames(spec_of(events=40_000, keys=5_000, span_s="1d", offline={"purity": 0.6}),
                        table_config=table(kind="OFFLINE"), seed=4)
    merged = w.events.merge(w.segments[["segment_name", "partition"]], on="segment_name", suffixes=("", "_file"))
    strays = (merged["key_id"] % 4 != merged["partition_file"]).mean()
    assert strays == pytest.approx(0.4 * 3 / 4, abs=0.01)  # 40% go to a random file, 1 in 4 lands home
    for s in records(w.segments):  # a mixed file touches every partition
        assert json.loads(s["partition_metadata"])["columnPartitionMap"]["key_id"]["partitions"] == [0, 1, 2, 3]
