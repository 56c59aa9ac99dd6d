"""The upsert-heap study: one partition's upsert metadata replayed through Pinot's manager, per TTL.

The replay runs :mod:`workbench.pinot.upsert` (Pinot's metadata manager, reproduced) on a synthetic key
stream, so it is a study rather than analysis; ``notebooks/04_upsert_heap.ipynb`` calls it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["heap_by_ttl"]


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
