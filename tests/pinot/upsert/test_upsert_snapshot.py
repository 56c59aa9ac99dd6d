"""validDocIds snapshots, the watermark file, preload and recovery (reference §5.4-§5.5)."""

from __future__ import annotations

import logging
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pyroaring import BitMap

from workbench.pinot.upsert import PartitionUpsertMetadataManager, SegmentInput
from workbench.pinot.upsert import snapshot as snap

S0, S1, S2 = (f"t__0__{i}__20240101T0000Z" for i in range(3))


def manager(root: Path, **kw: Any) -> PartitionUpsertMetadataManager:
    return PartitionUpsertMetadataManager.of(enable_snapshot=True, snapshot_dir=root, partition_id=3, **kw)


def build(root: Path, **kw: Any) -> tuple[PartitionUpsertMetadataManager, list[SegmentInput]]:
    """Two committed segments and a consuming one, then a snapshot at the next segment start."""
    m = manager(root, **kw)
    inputs = []
    for name, keys, values in ((S0, [1, 2, 3, 4], [1, 1, 1, 1]), (S1, [2, 5, 3], [2, 2, 0])):
        m.start_new_consuming_segment(name)
        m.add_records(name, keys, values)
        m.seal_consuming_segment(name)
        inputs.append(SegmentInput(name, keys, values))
    m.start_new_consuming_segment(S2)  # snapshot of S0 and S1 happens here
    return m, inputs


def test_files_have_pinots_names_and_portable_roaring_format(tmp_path: Path) -> None:
    m, _ = build(tmp_path)
    path = tmp_path / S0 / "validdocids.bitmap.snapshot"
    assert sorted(BitMap.deserialize(path.read_bytes())) == sorted(m.valid_doc_ids(S0)) == [0, 2, 3]
    assert not list(tmp_path.rglob("*_tmp"))
    assert not (tmp_path / S0 / "queryabledocids.bitmap.snapshot").exists()  # no deleteRecordColumn


def test_queryable_snapshot_written_with_delete_column(tmp_path: Path) -> None:
    m = manager(tmp_path, delete_record_column="d")
    m.start_new_consuming_segment(S0)
    m.add_records(S0, [1, 2], [1, 1], is_delete=[True, False])
    m.seal_consuming_segment(S0)
    m.start_new_consuming_segment(S1)
    got = BitMap.deserialize((tmp_path / S0 / "queryabledocids.bitmap.snapshot").read_bytes())
    assert sorted(got) == [1]


def test_no_snapshot_before_the_first_consumed_record(tmp_path: Path) -> None:
    m = manager(tmp_path)
    m.add_segment(S0, [1], [1])
    assert m.take_snapshot() == 0 and not (tmp_path / S0).exists()


def test_only_changed_segments_are_rewritten(tmp_path: Path) -> None:
    m, _ = build(tmp_path)
    assert m.take_snapshot() == 0
    m.add_record(S2, 0, 1, 9)  # invalidates a doc of S0
    assert m.take_snapshot() == 1


def test_watermark_file_is_an_8_byte_big_endian_double(tmp_path: Path) -> None:
    m, _ = build(tmp_path, deleted_keys_ttl=100, delete_record_column="d")
    raw = (tmp_path / "ttl.watermark.partition.3").read_bytes()
    assert raw == struct.pack(">d", 2.0) and m.watermark == 2.0
    assert manager(tmp_path, deleted_keys_ttl=100, delete_record_column="d").watermark == 2.0
    manager(tmp_path)  # TTL off: the file is deleted
    assert not (tmp_path / "ttl.watermark.partition.3").exists()


def test_preload_rebuilds_the_same_state_as_a_full_rebuild(tmp_path: Path) -> None:
    original, inputs = build(tmp_path)
    fresh = manager(tmp_path, enable_preload=True)
    assert fresh.recover(inputs) == [S0, S1]
    rebuilt = PartitionUpsertMetadataManager.of()
    rebuilt.add_segments(inputs)
    for m in (fresh, rebuilt):
        assert {n: sorted(m.valid_doc_ids(n)) for n in (S0, S1)} == {S0: [0, 2, 3], S1: [0, 1]}
        assert m.primary_key_locations() == {k: v for k, v in original.primary_key_locations().items()}


def test_corrupt_snapshot_falls_back_to_a_full_rebuild(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _, inputs = build(tmp_path)
    (tmp_path / S0 / "validdocids.bitmap.snapshot").write_bytes(b"not roaring")
    fresh = manager(tmp_path, enable_preload=True)
    with caplog.at_level(logging.WARNING):
        assert fresh.recover(inputs) == [S1]
    assert "corrupt snapshot" in caplog.text
    assert sorted(fresh.valid_doc_ids(S0)) == [0, 2, 3] and fresh.num_primary_keys() == 5


def test_snapshot_naming_docs_past_the_segment_end_is_rejected(tmp_path: Path,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    snap.write_bitmap(snap.snapshot_path(tmp_path, S0, snap.VALID_DOC_IDS), BitMap([0, 9]))
    with caplog.at_level(logging.WARNING):
        assert snap.read_bitmap(snap.snapshot_path(tmp_path, S0, snap.VALID_DOC_IDS), num_docs=4) is None
    assert "names doc 9" in caplog.text


def test_missing_snapshot_means_normal_load(tmp_path: Path) -> None:
    _, inputs = build(tmp_path)
    (tmp_path / S1 / "validdocids.bitmap.snapshot").unlink()
    fresh = manager(tmp_path, enable_preload=True)
    assert fresh.recover(inputs) == [S0]
    assert sorted(fresh.valid_doc_ids(S1)) == [0, 1]


def test_out_of_ttl_segment_loads_its_bitmap_from_the_snapshot(tmp_path: Path) -> None:
    m = manager(tmp_path, metadata_ttl=10)
    m.start_new_consuming_segment(S0)
    m.add_records(S0, [1, 2, 1], [0, 0, 1])
    m.seal_consuming_segment(S0)
    m.start_new_consuming_segment(S1)
    m.add_records(S1, [3], [100])
    m.seal_consuming_segment(S1)
    m.start_new_consuming_segment(S2)  # snapshot S1, watermark 100 persisted; S0 unchanged since its own snapshot
    restarted = manager(tmp_path, metadata_ttl=10)
    assert restarted.watermark == 100
    restarted.add_segment(S0, [1, 2, 1], [0, 0, 1])  # out of TTL: bitmap from snapshot, no keys
    assert sorted(restarted.valid_doc_ids(S0)) == [1, 2] and restarted.num_primary_keys() == 0


def test_reload_with_ttl_uses_only_the_snapshots_valid_docs(tmp_path: Path) -> None:
    m = manager(tmp_path, metadata_ttl=1000)
    m.start_new_consuming_segment(S0)
    m.add_records(S0, [1, 2], [1, 1])
    m.seal_consuming_segment(S0)
    m.start_new_consuming_segment(S1)  # snapshot of S0: {0, 1}
    m.add_record(S1, 0, 2, 5)
    m.start_new_consuming_segment(S2)  # snapshot of S0: {0}
    m.replace_segment(S0, [1, 2], [1, 1], reload=True)
    assert sorted(m.valid_doc_ids(S0)) == [0] and m.record_location(2) == (S1, 0, 5)


def test_snapshots_disabled_deletes_existing_files(tmp_path: Path) -> None:
    build(tmp_path)
    PartitionUpsertMetadataManager.of(snapshot_dir=tmp_path).add_segment(S0, [1], [1])
    assert not (tmp_path / S0 / "validdocids.bitmap.snapshot").exists()


def test_ten_thousand_doc_round_trip(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    bitmap = BitMap(np.flatnonzero(rng.random(10_000) < 0.3).tolist())
    size = snap.write_bitmap(tmp_path / "x", bitmap)
    assert snap.read_bitmap(tmp_path / "x", 10_000) == bitmap and size == (tmp_path / "x").stat().st_size


# -- snapshots as Pinot writes them: a bare file, no workbench checksum beside it ----------------------
def pinot_bitmap_bytes(docs: list[int]) -> bytes:
    """Java RoaringBitmap's portable serialisation of a few docs below 65536, from the format spec.

    One array container: cookie 12346 (no run containers), container count, then per container the
    high 16 bits and cardinality - 1, then its byte offset (header 4 + 4 + 4 + 4 = 16), then the low
    16 bits of each doc. This is what ``ImmutableSegmentImpl.persistDocIdsSnapshot`` writes.
    """
    return struct.pack(f"<IIHHI{len(docs)}H", 12346, 1, 0, len(docs) - 1, 16, *docs)


def pinot_snapshot(root: Path, segment: str, data: bytes, file_name: str = snap.VALID_DOC_IDS) -> Path:
    path = root / segment / file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_pinot_bitmap_bytes_are_roaring_portable_format() -> None:
    assert BitMap.deserialize(pinot_bitmap_bytes([0, 2, 3])) == BitMap([0, 2, 3])


def test_replace_segment_on_reload_rebuilds_from_a_bare_snapshot(tmp_path: Path) -> None:
    """Pinot's ConcurrentMapPartitionUpsertMetadataManagerTest.testReplaceSegmentOnReloadRebuildsFromSnapshot.

    That test (and the reload path it checks, apache/pinot #18860) is on Pinot's master after
    release-1.5.1 (commit cd6dd61ce32). metadataTTL 30 with snapshots; pks 10, 30, 40 at 1500, 3500,
    4000 are loaded, then reloaded with a snapshot (as Pinot writes it: no checksum file) marking
    docs {0, 2}: pk 30 is not resurrected, pks 10 and 40 point into the reloaded copy.
    """
    name = "reload_snapshot_segment"
    keys, values = [10, 30, 40], [1500, 3500, 4000]
    m = manager(tmp_path, metadata_ttl=30)
    m.add_segment(name, keys, values)
    assert m.num_primary_keys() == 3
    pinot_snapshot(tmp_path, name, pinot_bitmap_bytes([0, 2]))
    m.replace_segment(name, keys, values, reload=True)
    assert m.num_primary_keys() == 2
    assert m.record_location(10) == (name, 0, 1500) and m.record_location(40) == (name, 2, 4000)
    assert m.record_location(30) is None
    assert sorted(m.valid_doc_ids(name)) == [0, 2]


@pytest.mark.parametrize(("delete_flags", "expected"), [
    ([False, False, False, True, True, False], [2, 5]),
    ([False] * 6, [2, 4, 5]),  # no record deleted
    ([None] * 6, [2, 4, 5]),  # the delete column is null: not a delete
    ([True] * 6, []),  # every record a delete
])
def test_get_queryable_doc_ids_from_a_bare_snapshot(tmp_path: Path, delete_flags: list[bool | None],
                                                    expected: list[int]) -> None:
    """Pinot's ConcurrentMapPartitionUpsertMetadataManagerTest.testGetQueryableDocIds (release-1.5.1).

    Pinot computes queryableDocIds from a validDocIds snapshot (here {2, 4, 5} of a 6-doc segment)
    as its docs whose deleteRecordColumn is not true; it does so when a segment out of metadataTTL is
    loaded from its snapshot, which is the path taken here, with the snapshot as Pinot writes it.
    """
    m = manager(tmp_path, metadata_ttl=10, delete_record_column="d")
    m.start_new_consuming_segment(S1)
    m.add_record(S1, 0, 99, 100)  # watermark 100: a segment whose max is 0 is out of TTL
    pinot_snapshot(tmp_path, S0, pinot_bitmap_bytes([2, 4, 5]))
    m.add_segment(S0, [1, 2, 3, 4, 5, 6], [0] * 6, is_delete=delete_flags)
    assert sorted(m.valid_doc_ids(S0)) == [2, 4, 5]
    assert sorted(m.queryable_doc_ids(S0)) == expected
    assert m.num_primary_keys() == 1  # out of TTL: nothing of S0 entered the map


def test_restart_preloads_bare_snapshots_and_watermark(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A table directory as a Pinot server leaves it (pyroaring's portable bitmaps, a bare watermark,
    no .crc anywhere) is preloaded, not rebuilt: S0's doc 1 (pk 2, superseded in S1) stays invalid."""
    inputs = [SegmentInput(S0, [1, 2, 3, 4], [1, 1, 1, 1]), SegmentInput(S1, [2, 5, 3], [2, 2, 0])]
    pinot_snapshot(tmp_path, S0, BitMap([0, 2, 3]).serialize())
    pinot_snapshot(tmp_path, S1, BitMap([0, 1]).serialize())
    (tmp_path / "ttl.watermark.partition.3").write_bytes(struct.pack(">d", 2.0))
    with caplog.at_level(logging.WARNING):
        m = manager(tmp_path, metadata_ttl=100, enable_preload=True)
        assert m.watermark == 2.0
        assert m.recover(inputs) == [S0, S1]
    assert caplog.text == ""
    assert {n: sorted(m.valid_doc_ids(n)) for n in (S0, S1)} == {S0: [0, 2, 3], S1: [0, 1]}
    assert m.num_primary_keys() == 5 and m.record_location(2) == (S1, 0, 2)


@pytest.mark.parametrize(("data", "warning"), [
    (b"not roaring", "corrupt snapshot"),
    (pinot_bitmap_bytes([0, 9]), "names doc 9"),  # a 4-doc segment
], ids=["unreadable", "docs-past-the-end"])
def test_bare_snapshot_that_cannot_be_used_is_treated_as_missing(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                                 data: bytes, warning: str) -> None:
    """No checksum to fail, but Pinot's reader would throw (unreadable) or the docs do not fit: rebuilt."""
    pinot_snapshot(tmp_path, S0, data)
    m = manager(tmp_path, enable_preload=True)
    with caplog.at_level(logging.WARNING):
        assert m.recover([SegmentInput(S0, [1, 2, 3, 1], [1, 1, 1, 2])]) == []
    assert warning in caplog.text
    assert sorted(m.valid_doc_ids(S0)) == [1, 2, 3]  # rebuilt by comparison


def test_an_unreadable_checksum_file_still_rejects_the_snapshot(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    path = pinot_snapshot(tmp_path, S0, pinot_bitmap_bytes([0]))
    (tmp_path / S0 / (snap.VALID_DOC_IDS + snap.CHECKSUM_SUFFIX)).write_bytes(b"\xff\xfe")
    with caplog.at_level(logging.WARNING):
        assert snap.read_bitmap(path, num_docs=4) is None
    assert "corrupt snapshot" in caplog.text


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_bare_watermark_that_is_nan_or_inf_reads_as_unset(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                           value: float) -> None:
    """NaN would stop expiry (no comparison with it is true); +inf would put every key out of TTL."""
    snap.watermark_path(tmp_path, 3).write_bytes(struct.pack(">d", value))
    with caplog.at_level(logging.WARNING):
        assert snap.read_watermark(tmp_path, 3) == float("-inf")
    assert "ignoring it" in caplog.text
    snap.watermark_path(tmp_path, 3).write_bytes(struct.pack(">d", float("-inf")))  # Pinot's "not set"
    assert snap.read_watermark(tmp_path, 3) == float("-inf")
