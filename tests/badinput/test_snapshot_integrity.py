"""Snapshots and the TTL watermark: Pinot's files byte for byte, a checksum beside each the workbench
writes (checked where it exists: Pinot writes none), and a rebuild (with a warning) whenever one cannot
be trusted. Segment names never escape the table's directory."""

from __future__ import annotations

import logging
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from pyroaring import BitMap

from workbench.errors import InputError
from workbench.pinot.upsert import PartitionUpsertMetadataManager, SegmentInput
from workbench.pinot.upsert import snapshot as snap

S0, S1, S2 = (f"t__0__{i}__20240101T0000Z" for i in range(3))


def manager(root: Path, **kw: Any) -> PartitionUpsertMetadataManager:
    return PartitionUpsertMetadataManager.of(enable_snapshot=True, snapshot_dir=root, partition_id=3, **kw)


def build(root: Path) -> list[SegmentInput]:
    """Two committed segments, snapshotted when the third starts consuming."""
    m = manager(root)
    inputs = []
    for name, keys, values in ((S0, [1, 2, 3, 4], [1, 1, 1, 1]), (S1, [2, 5, 3], [2, 2, 0])):
        m.start_new_consuming_segment(name)
        m.add_records(name, keys, values)
        m.seal_consuming_segment(name)
        inputs.append(SegmentInput(name, keys, values))
    m.start_new_consuming_segment(S2)
    return inputs


def test_pinots_file_is_unchanged_and_the_checksum_sits_beside_it(tmp_path: Path) -> None:
    build(tmp_path)
    data = (tmp_path / S0 / "validdocids.bitmap.snapshot").read_bytes()
    assert sorted(BitMap.deserialize(data)) == [0, 2, 3]  # still Roaring's portable format, nothing prepended
    assert (tmp_path / S0 / "validdocids.bitmap.snapshot.crc").is_file()


def test_a_flipped_bit_is_caught_and_the_segment_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    inputs = build(tmp_path)
    path = tmp_path / S0 / "validdocids.bitmap.snapshot"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # still a valid bitmap, but another one: only the checksum can tell
    path.write_bytes(bytes(data))
    assert BitMap.deserialize(bytes(data)) != BitMap([0, 2, 3])
    fresh = manager(tmp_path, enable_preload=True)
    with caplog.at_level(logging.WARNING):
        assert fresh.recover(inputs) == [S1]  # S0 was not preloaded from the corrupt snapshot
    assert "corrupt snapshot" in caplog.text and S0 in caplog.text
    assert sorted(fresh.valid_doc_ids(S0)) == [0, 2, 3]  # the full rebuild gives the true bitmap


def test_a_missing_checksum_is_pinots_own_file_and_a_missing_snapshot_falls_back(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Pinot writes no checksum: a snapshot without one is read as Pinot reads it (the checksum is checked
    only where the workbench wrote one); a snapshot that is not there falls back, with a warning."""
    build(tmp_path)
    (tmp_path / S0 / "validdocids.bitmap.snapshot.crc").unlink()
    with caplog.at_level(logging.WARNING):
        assert sorted(snap.read_bitmap(snap.snapshot_path(tmp_path, S0, snap.VALID_DOC_IDS)) or ()) == [0, 2, 3]
        assert snap.read_bitmap(snap.snapshot_path(tmp_path, "t__0__9__20240101T0000Z", snap.VALID_DOC_IDS)) is None
    assert "no snapshot" in caplog.text and S0 not in caplog.text


def test_a_corrupt_watermark_reads_as_unset(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    snap.write_watermark(tmp_path, 3, 120.5)
    path = snap.watermark_path(tmp_path, 3)
    assert struct.unpack(">d", path.read_bytes())[0] == 120.5  # Java's writeDouble layout, unchanged
    path.write_bytes(struct.pack(">d", 9e9))
    with caplog.at_level(logging.WARNING):
        assert snap.read_watermark(tmp_path, 3) == float("-inf")
    assert "corrupt watermark file" in caplog.text


def test_a_nan_watermark_does_not_stop_ttl_expiry(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    snap.write_watermark(tmp_path, 3, math.nan)  # a checksum-valid NaN: what a buggy writer leaves
    with caplog.at_level(logging.WARNING):
        m = manager(tmp_path, metadata_ttl=10)
    assert m.watermark == float("-inf") and "holds nan" in caplog.text
    m.start_new_consuming_segment(S0)
    m.add_records(S0, [1, 2], [0, 100])
    m.seal_consuming_segment(S0)
    m.start_new_consuming_segment(S1)  # watermark 100: key 1 (value 0 < 100 - 10) expires
    assert m.watermark == 100 and m.num_primary_keys() == 1


@pytest.mark.parametrize("name", ["../escape", "a/b", "..", ".", "", "x\x00y", "back\\slash"])
def test_segment_names_are_checked_before_they_become_paths(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match="cannot name a segment directory"):
        snap.write_bitmap(snap.snapshot_path(tmp_path / "table", name, snap.VALID_DOC_IDS), BitMap([1]))
    assert not (tmp_path / "escape").exists() and list(tmp_path.iterdir()) == []
