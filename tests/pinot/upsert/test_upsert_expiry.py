"""The design doc's removal strategies: when each one removes keys, and what it reports it cost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workbench.errors import InputError
from workbench.pinot.upsert import ExpiryStrategy, PartitionUpsertMetadataManager


def run(tmp_path: Path, **kw: Any) -> tuple[PartitionUpsertMetadataManager, list[int]]:
    """Ten segments, each with one new key at time 10*i; records key counts after each start."""
    m = PartitionUpsertMetadataManager.of(metadata_ttl=25, enable_snapshot=True, snapshot_dir=tmp_path, **kw)
    sizes = []
    for i in range(10):
        name = f"t__0__{i}__20240101T0000Z"
        m.start_new_consuming_segment(name)
        sizes.append(m.num_primary_keys())
        m.add_records(name, [i], [10 * i])
        m.seal_consuming_segment(name)
    return m, sizes


def test_at_commit_keeps_keys_within_ttl_of_the_watermark(tmp_path: Path) -> None:
    """Start of segment i: watermark 10(i-1); keys with time < 10(i-1) - 25 are gone, so at most 3 remain."""
    m, sizes = run(tmp_path)
    assert sizes == [0, 1, 2, 3, 3, 3, 3, 3, 3, 3]
    assert m.expiry_stats.sweeps == 10 and m.expiry_stats.metadata_ttl_removed == 6


def test_periodic_scan_runs_when_the_watermark_has_moved_an_interval(tmp_path: Path) -> None:
    m, sizes = run(tmp_path / "p", expiry=ExpiryStrategy.PERIODIC_SCAN, scan_interval=40)
    assert m.expiry_stats.sweeps < 10
    assert max(sizes) > 3  # keys linger between scans
    assert m.expiry_stats.keys_scanned < run(tmp_path / "c")[0].expiry_stats.keys_scanned


def test_two_map_rotation_drops_a_whole_map_without_scanning(tmp_path: Path) -> None:
    m, sizes = run(tmp_path, expiry=ExpiryStrategy.TWO_MAP_ROTATION)
    stats = m.expiry_stats
    assert stats.sweeps == 0 and stats.keys_scanned == 0 and stats.rotations >= 2
    assert stats.rotation_dropped > 0 and max(sizes) <= 6  # keys live between one and two TTLs


def test_two_map_lookup_finds_and_moves_keys_from_the_previous_map(tmp_path: Path) -> None:
    m = PartitionUpsertMetadataManager.of(metadata_ttl=10, enable_snapshot=True, snapshot_dir=tmp_path,
                                       expiry="two_map_rotation")
    m.start_new_consuming_segment("a")
    m.add_records("a", [1, 2], [0, 0])
    m.seal_consuming_segment("a")
    m.start_new_consuming_segment("b")  # first mark
    m.add_records("b", [3], [12])
    m.seal_consuming_segment("b")
    m.start_new_consuming_segment("c")  # rotation: {1, 2, 3} become the previous map
    assert len(m.state.old_map) == 3 and not m.state.key_map
    m.add_records("c", [1, 2], [13, -5])  # key 1 wins and moves; key 2 is late and stays behind
    assert set(m.state.key_map) == {1} and set(m.state.old_map) == {2, 3}
    assert m.record_location(2) == ("a", 1, 0)


def test_strategy_options_are_validated(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="scan_interval"):
        PartitionUpsertMetadataManager.of(metadata_ttl=5, enable_snapshot=True, snapshot_dir=tmp_path,
                                       expiry="periodic_scan")
    with pytest.raises(InputError, match="two_map_rotation"):
        PartitionUpsertMetadataManager.of(expiry="two_map_rotation")
    with pytest.raises(InputError, match="expired_key_is_new"):
        PartitionUpsertMetadataManager.of(expired_key_is_new=True)
