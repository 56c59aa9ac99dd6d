"""The upsert-heap study: one partition's upsert metadata replayed through Pinot's manager, per TTL.

The replay runs :mod:`workbench.pinot.upsert` (Pinot's metadata manager, reproduced) on a synthetic key
stream, so it is a study rather than analysis; ``notebooks/04_upsert_heap.ipynb`` calls it.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from workbench.pinot.upsert.replay import StreamSegment

__all__ = ["duplicates_by_ttl", "heap_by_ttl", "recovery_work", "restart_cost"]


def heap_by_ttl(ttls_s: Sequence[float], *, seed: int = 1, segments: int = 24, records_per_segment: int = 20_000,
                update_fraction: float = 0.6, active_window_s: float = 7200.0,
                hash_function: str = "NONE") -> pd.DataFrame:
    """Upsert heap of one partition over time for each metadataTTL (0 = no TTL), on one key stream.

    The same session-like stream (keys updated for ``active_window_s`` after they appear, then never
    again: the TTL design's trip example) is replayed through Pinot's metadata manager once per TTL;
    one row per commit with the map's keys, heap bytes and the duplicates TTL let through.
    """
    from workbench.pinot.upsert import PartitionUpsertMetadataManager
    from workbench.pinot.upsert.replay import replay_partition, synthetic_stream

    rows = []
    for ttl in ttls_s:
        stream = synthetic_stream(np.random.default_rng(seed), segments, records_per_segment,
                                  update_fraction=update_fraction, active_window_ms=int(active_window_s * 1000))
        with tempfile.TemporaryDirectory(prefix="upsert-snapshots-") as snapshots:
            # Pinot requires validDocIds snapshots whenever metadataTTL is set
            manager = PartitionUpsertMetadataManager.of(metadata_ttl=ttl * 1000.0, hash_function=hash_function,
                                                     enable_snapshot=ttl > 0, snapshot_dir=snapshots)
            rows += [{"ttl_s": ttl, "time_s": s.time, "num_primary_keys": s.num_primary_keys,
                      "heap_bytes": s.total_bytes, "duplicate_keys": s.duplicate_keys}
                     for s in replay_partition(stream, manager) if s.phase == "commit"]
    return pd.DataFrame(rows)


def duplicates_by_ttl(heap: pd.DataFrame) -> pd.DataFrame:
    """Per TTL of a :func:`heap_by_ttl` frame: the most duplicates TTL let through at any commit, and at the end.

    A duplicate is a queryable doc whose key is queryable in another doc too: TTL removed the key from
    the map, an update came back, and the old doc (out of reach of the map) stayed valid. Without TTL
    there are none.
    """
    rows = []
    for ttl, g in heap.groupby("ttl_s", sort=True):
        g = g.sort_values("time_s")
        rows.append({"ttl_s": float(str(ttl)), "max_duplicates": int(g["duplicate_keys"].max()),
                     "end_duplicates": int(g["duplicate_keys"].iloc[-1]),
                     "end_keys": int(g["num_primary_keys"].iloc[-1])})
    return pd.DataFrame(rows)


def restart_cost(*, seed: int = 1, segments: int = 12, records_per_segment: int = 20_000,
                 update_fraction: float = 0.6, active_window_s: float = 7200.0) -> pd.DataFrame:
    """What a server restart costs one partition's upsert metadata, without and with validDocIds snapshots.

    The partition consumes a session-like stream (as :func:`heap_by_ttl`), snapshots every committed
    segment (Pinot does so at the next consuming segment), and is then recovered by a fresh manager
    twice (:meth:`~workbench.pinot.upsert.manager.PartitionUpsertMetadataManager.recover`):

    * ``rebuild`` (no preload): every doc of every segment is read and its key compared against the map;
    * ``preload`` (snapshots + ``preload: ENABLE``): each segment's snapshot is read and only its valid
      docs go into the map, with no comparison (the snapshots on disk are disjoint).

    The work is counted from what recovery did (which segments it preloaded, each segment's docs and
    valid docs), so it can be checked by hand; ``seconds`` is the measured wall time, for reading only.
    Both must end with the same map (``keys``).
    """
    from workbench.pinot.upsert.replay import synthetic_stream

    return recovery_work(synthetic_stream(np.random.default_rng(seed), segments, records_per_segment,
                                          update_fraction=update_fraction,
                                          active_window_ms=int(active_window_s * 1000)))


def recovery_work(stream: Sequence[StreamSegment]) -> pd.DataFrame:
    """:func:`restart_cost` of a given partition stream: consumed, snapshotted, then recovered both ways."""
    from workbench.pinot.upsert import PartitionUpsertMetadataManager
    from workbench.pinot.upsert.segments import SegmentInput

    inputs = [SegmentInput(s.name, s.primary_keys, s.comparison_values) for s in stream]
    rows = []
    with tempfile.TemporaryDirectory(prefix="upsert-restart-") as tmp:
        root = Path(tmp)
        live = PartitionUpsertMetadataManager.of(enable_snapshot=True, snapshot_dir=root)
        for s in stream:
            live.start_new_consuming_segment(s.name)
            live.add_records(s.name, s.primary_keys, s.comparison_values)
            live.seal_consuming_segment(s.name)
        # Pinot snapshots committed segments when the next consuming segment starts
        live.start_new_consuming_segment(f"{stream[-1].name.split('__')[0]}__0__999999__20240101T0000Z")
        for mode, preload in (("rebuild", False), ("preload", True)):
            fresh = PartitionUpsertMetadataManager.of(enable_snapshot=True, snapshot_dir=root, enable_preload=preload)
            start = time.perf_counter()
            preloaded = set(fresh.recover(inputs))
            seconds = time.perf_counter() - start
            rebuilt = [i for i in inputs if i.name not in preloaded]
            docs_read = (sum(len(i.primary_keys) for i in rebuilt)
                         + sum(fresh.segment(n).num_valid() for n in preloaded))
            rows.append({"mode": mode, "segments": len(inputs), "snapshots_read": len(preloaded),
                         "docs_read": docs_read, "key_comparisons": sum(len(i.primary_keys) for i in rebuilt),
                         "keys": fresh.num_primary_keys(), "seconds": seconds})
    return pd.DataFrame(rows)
