"""Primary-key TTL: the watermark rules and the three ways of removing expired keys.

Pinot's rules (reference §5.4): the watermark is the largest comparison value seen (consumed records
and segment-metadata maxima), a double starting at -inf; the metadata threshold is
``watermark - metadataTTL`` and the deleted-keys threshold ``watermark - deletedKeysTTL``. A sweep
visits every map entry: below the metadata threshold (strict) the entry goes and its doc *stays
valid*; otherwise, if it points at a delete marker below the deleted-keys threshold, the entry goes
and the doc is invalidated as well.

Each removal strategy (:class:`~workbench.pinot.upsert.settings.ExpiryStrategy`) reports its cost in
an :class:`ExpiryStats`, so the design doc's options can be compared on the same replay: keys
scanned, keys removed, rotations, and wall-clock seconds spent.

>>> metadata_threshold(120.0, 30.0), metadata_threshold(float("-inf"), 30.0), metadata_threshold(120.0, 0.0)
(90.0, -inf, -inf)
"""

from __future__ import annotations

import time
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from workbench.pinot.upsert.segments import VALID_QUERYABLE

__all__ = [
    "WATERMARK_NOT_SET",
    "ExpiryStats",
    "Location",
    "metadata_threshold",
    "out_of_metadata_ttl",
    "rotate_maps",
    "sweep_expired",
]

WATERMARK_NOT_SET = float("-inf")

#: A map value: (segment state, doc id, comparison value). A tuple, because the hot loops build millions.
Location = tuple[Any, int, Any]


@dataclass
class ExpiryStats:
    """Cost and effect of key expiry over a manager's life.

    Attributes
    ----------
    sweeps
        Full scans of the map run.
    keys_scanned
        Entries visited by those scans (the work a scan costs).
    metadata_ttl_removed, deleted_ttl_removed
        Entries removed by metadataTTL, and by deletedKeysTTL (whose docs were also invalidated).
    rotations, rotation_dropped
        Two-map rotations, and entries dropped with the previous map.
    seconds
        Wall-clock time spent in sweeps and rotations.
    """

    sweeps: int = 0
    keys_scanned: int = 0
    metadata_ttl_removed: int = 0
    deleted_ttl_removed: int = 0
    rotations: int = 0
    rotation_dropped: int = 0
    seconds: float = 0.0


def metadata_threshold(watermark: float, ttl: float) -> float:
    """``watermark - ttl``, or -inf when the TTL is off (Pinot's "disabled gives -inf")."""
    return watermark - ttl if ttl > 0 else WATERMARK_NOT_SET


def out_of_metadata_ttl(max_value: float, watermark: float, metadata_ttl: float) -> bool:
    """A segment whose metadata max is below ``watermark - metadataTTL`` (watermark set) is out of TTL.

    >>> out_of_metadata_ttl(-200.0, -80.0, 30.0), out_of_metadata_ttl(-100.0, -80.0, 30.0)
    (True, False)
    """
    return metadata_ttl > 0 and watermark != WATERMARK_NOT_SET and max_value < watermark - metadata_ttl


def _expired(entries: dict[Hashable, Location], meta: float, deleted: float,
             check_deleted: bool) -> tuple[list[Hashable], list[Hashable]]:
    """Keys past the metadata threshold, and delete-marker keys past the deleted-keys threshold."""
    by_meta: list[Hashable] = []
    by_delete: list[Hashable] = []
    for key, (segment, doc, value) in entries.items():
        v = float(value)
        if v < meta:
            by_meta.append(key)
        elif check_deleted and segment.flags[doc] != VALID_QUERYABLE and v < deleted:
            by_delete.append(key)
    return by_meta, by_delete


def sweep_expired(maps: tuple[dict[Hashable, Location], ...], watermark: float, metadata_ttl: float,
                  deleted_keys_ttl: float, stats: ExpiryStats) -> None:
    """Pinot's ``doRemoveExpiredPrimaryKeys`` over every map (two with rotation, else one)."""
    start = time.perf_counter()
    meta = metadata_threshold(watermark, metadata_ttl)
    deleted = metadata_threshold(watermark, deleted_keys_ttl)
    for entries in maps:
        stats.keys_scanned += len(entries)
        by_meta, by_delete = _expired(entries, meta, deleted, deleted_keys_ttl > 0)
        for key in by_meta:
            del entries[key]
        for key in by_delete:
            segment, doc, _ = entries.pop(key)
            segment.flags[doc] = 0
            segment.dirty = True
        stats.metadata_ttl_removed += len(by_meta)
        stats.deleted_ttl_removed += len(by_delete)
    stats.sweeps += 1
    stats.seconds += time.perf_counter() - start


def rotate_maps(current: dict[Hashable, Location], previous: dict[Hashable, Location],
                stats: ExpiryStats) -> tuple[dict[Hashable, Location], dict[Hashable, Location]]:
    """Drop the previous map whole; the current one becomes previous. Returns (new current, new previous)."""
    start = time.perf_counter()
    stats.rotations += 1
    stats.rotation_dropped += len(previous)
    previous.clear()
    stats.seconds += time.perf_counter() - start
    return previous, current
