"""Heap over time from a replay: samples, TTL duplicates, per-server sums and the GC-model entry point."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.pinot.assignment import InstancePartitions
from workbench.pinot.heap import UpsertHeapModel, chm_table_bytes, entry_layout
from workbench.pinot.upsert import PartitionUpsertMetadataManager
from workbench.pinot.upsert.replay import (
    HeapTimeline,
    StreamSegment,
    hosting_from_assignment,
    live_upsert_heap,
    partition_timeline,
    replay_partition,
    server_heap,
    synthetic_stream,
)


def stream(seed: int = 1, n: int = 8) -> list[StreamSegment]:
    return synthetic_stream(np.random.default_rng(seed), num_segments=n, records_per_segment=500,
                            update_fraction=0.6, active_window_ms=2 * 3_600_000)


def test_without_ttl_there_are_no_duplicates_and_keys_only_grow() -> None:
    samples = replay_partition(stream(), PartitionUpsertMetadataManager.of())
    commits = [s for s in samples if s.phase == "commit"]
    assert all(s.duplicate_keys == 0 for s in samples)
    assert [s.num_primary_keys for s in commits] == sorted(s.num_primary_keys for s in commits)
    assert commits[-1].queryable_docs == commits[-1].num_primary_keys


def test_ttl_frees_keys_and_creates_duplicates(tmp_path: Path) -> None:
    m = PartitionUpsertMetadataManager.of(metadata_ttl=1_800_000, enable_snapshot=True, snapshot_dir=tmp_path)
    samples = replay_partition(stream(), m)
    upkeep = [s for s in samples if s.phase == "upkeep"]
    assert any(s.num_primary_keys < c.num_primary_keys for s, c in zip(upkeep, samples, strict=False))
    assert samples[-1].duplicate_keys is not None and samples[-1].duplicate_keys > 0
    baseline = replay_partition(stream(), PartitionUpsertMetadataManager.of())
    assert samples[-1].map_bytes < baseline[-1].map_bytes


def test_sample_bytes_follow_the_heap_model() -> None:
    model = UpsertHeapModel(entry_layout(["LONG"], "MD5"))
    m = PartitionUpsertMetadataManager.of(hash_function="MD5")
    last = replay_partition(stream(n=2), m, model)[-1]
    assert last.map_bytes == last.num_primary_keys * 128 + chm_table_bytes(last.table_capacity)
    assert last.total_bytes == last.map_bytes + last.bitmap_bytes


def test_retention_removes_old_segments() -> None:
    m = PartitionUpsertMetadataManager.of()
    replay_partition(stream(n=6), m, retention=2 * 3600.0)
    assert len(m.segment_names()) == 3


def test_timeline_is_a_right_continuous_step_function() -> None:
    line = HeapTimeline(np.array([1.0, 2.0, 2.0, 5.0]), np.array([10.0, 20.0, 15.0, 40.0]))
    assert line.at(np.array([0.0, 1.0, 1.5, 2.0, 4.9, 9.0])).tolist() == [0.0, 10.0, 10.0, 15.0, 15.0, 40.0]


def test_server_heap_sums_the_partitions_each_server_hosts() -> None:
    lines = {p: partition_timeline(replay_partition(stream(seed=p, n=3), PartitionUpsertMetadataManager.of()))
             for p in range(2)}
    ip = InstancePartitions("t_CONSUMING", {"0_0": ("a", "b"), "0_1": ("c", "d")})
    hosting = hosting_from_assignment(2, ip, 2)
    assert hosting == {"a": [0], "c": [0], "b": [1], "d": [1]}
    per_server = server_heap(lines, {"x": [0, 1]})
    t = per_server["x"].times[-1]
    assert per_server["x"].at(t) == pytest.approx(lines[0].at(t) + lines[1].at(t))


def test_live_upsert_heap_is_the_partition_timeline() -> None:
    line = live_upsert_heap(stream(n=3), PartitionUpsertMetadataManager.of())
    assert len(line.times) == 5 and np.all(np.diff(line.times) >= 0) and line.bytes[-1] > 0
