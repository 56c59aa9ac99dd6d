"""The closed form of keys in an upsert map under metadataTTL, against Pinot's metadata manager replaying
the same stream commit by commit; and heap per server from it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.analysis.upsert_day import UpsertLoad, gc_at, heap_timeline, keys_in_map
from workbench.pinot.heap import upsert_bytes_per_key
from workbench.pinot.upsert import PartitionUpsertMetadataManager
from workbench.pinot.upsert.replay import StreamSegment, replay_partition

RATE, ACTIVE_S, SEGMENT_S, SEGMENTS, UPDATES = 1.0, 1200.0, 600.0, 24, 2


def _stream() -> list[StreamSegment]:
    """Key j is born at j / RATE seconds and updated UPDATES times, the last exactly ACTIVE_S later."""
    horizon = SEGMENTS * SEGMENT_S
    births = np.arange(0.0, horizon, 1.0 / RATE)
    keys = np.repeat(np.arange(len(births)), UPDATES + 1)
    times = (np.repeat(births, UPDATES + 1) + np.tile(np.linspace(0.0, ACTIVE_S, UPDATES + 1), len(births)))
    order = np.argsort(times, kind="stable")
    keys, times = keys[order], times[order]
    out = []
    for i in range(SEGMENTS):
        sel = (times >= i * SEGMENT_S) & (times < (i + 1) * SEGMENT_S)
        out.append(StreamSegment(f"t__0__{i}__20240101T0000Z", keys[sel], (times[sel] * 1000).astype(np.int64),
                                 None, (i + 1) * SEGMENT_S))
    return out


@pytest.mark.parametrize("ttl_s", [0.0, 1800.0])
def test_keys_in_map_match_pinots_manager_commit_by_commit(ttl_s: float, tmp_path: Path) -> None:
    manager = PartitionUpsertMetadataManager.of(metadata_ttl=ttl_s * 1000.0, enable_snapshot=ttl_s > 0,
                                                snapshot_dir=tmp_path)
    samples = [s for s in replay_partition(_stream(), manager, count_duplicates=False) if s.phase == "commit"]
    times = np.array([s.time for s in samples])
    replayed = np.array([s.num_primary_keys for s in samples], dtype=float)
    predicted = keys_in_map(times, RATE, ACTIVE_S, ttl_s, SEGMENT_S)
    # a key born at the edge of the TTL cut-off may fall either side of it: a key or two, no more
    assert np.abs(replayed - predicted).max() <= 2
    if ttl_s > 0:  # the map levels at RATE x (active + TTL + one segment) and stays there
        assert replayed[-1] == pytest.approx(RATE * (ACTIVE_S + ttl_s + SEGMENT_S), rel=0.01)
        assert replayed[-1] < RATE * times[-1] / 2


def test_heap_per_server_is_its_partitions_keys_at_the_layout_models_bytes() -> None:
    load = UpsertLoad(new_keys_per_day=8.64e6, active_s=3600, partitions=8, servers=4, replication=2)
    day = heap_timeline(load, ttl_s=0, hours=24, static_bytes=1e9, step_h=12)
    last = day.iloc[-1]
    keys_per_partition = 8.64e6 / 8  # no TTL: a whole day's keys
    assert last["keys_per_partition"] == pytest.approx(keys_per_partition)
    assert last["keys_per_server"] == pytest.approx(keys_per_partition * 8 * 2 / 4)
    per_key = upsert_bytes_per_key(["LONG"], "NONE", num_keys=int(keys_per_partition))
    assert last["live_bytes"] == pytest.approx(1e9 + last["keys_per_server"] * per_key)
    assert last["pinot_estimate_bytes"] < last["map_bytes"]  # Pinot's estimator leaves out map nodes and slots


def test_a_bigger_map_means_longer_young_pauses_and_a_full_heap_runs_out() -> None:
    per_key = 150.0
    small = gc_at(1e9, 1e6, per_key, 8 * 1024**3, allocation_rate=300e6, update_rate=20_000, seconds=600)
    big = gc_at(1e9, 30e6, per_key, 8 * 1024**3, allocation_rate=300e6, update_rate=20_000, seconds=600)
    assert big["young_p50_ms"] > small["young_p50_ms"]  # the remembered-set scan grows with the map
    full = gc_at(1e9, 60e6, per_key, 8 * 1024**3, allocation_rate=300e6, seconds=60)  # 9.4 GB live in 8 GiB
    assert full["oom"] == 1.0


def test_pause_figures_are_of_the_steady_state_not_of_g1_sizing_its_young_generation() -> None:
    # G1 starts with its smallest young generation: without the warm-up, a short window counted about
    # twice the young GCs of a long one at the same load
    args = (2 * 1024**3, 11e6, 151.0, 16 * 1024**3)
    short = gc_at(*args, allocation_rate=300e6, update_rate=1_000, seconds=900, seed=1)
    long = gc_at(*args, allocation_rate=300e6, update_rate=1_000, seconds=3600, seed=2)
    assert short["young_per_s"] == pytest.approx(long["young_per_s"], rel=0.15)
    assert short["young_p50_ms"] == pytest.approx(long["young_p50_ms"], rel=0.2)
