"""Commit-time upkeep of a partition's upsert state: validDocIds snapshots and key expiry.

Pinot runs both on the consuming thread when a new consuming segment starts, and their order
matters (reference §5.4–§5.5): with metadataTTL the snapshot is taken first and expired keys removed
after, otherwise the other way round. The workbench's other removal strategies
(:class:`~workbench.pinot.upsert.settings.ExpiryStrategy`) replace the sweep by theirs. These
functions act on the partition's :class:`~workbench.pinot.upsert.state.UpsertState`; the file
formats are in :mod:`~workbench.pinot.upsert.snapshot` and the sweep itself in
:mod:`~workbench.pinot.upsert.ttl`.
"""

from __future__ import annotations

import logging

from workbench.pinot.upsert import snapshot as snap
from workbench.pinot.upsert.segments import SegmentState
from workbench.pinot.upsert.settings import ExpiryStrategy
from workbench.pinot.upsert.state import UpsertState
from workbench.pinot.upsert.ttl import WATERMARK_NOT_SET, rotate_maps, sweep_expired

__all__ = ["commit_time_upkeep", "load_watermark", "maybe_periodic_scan", "remove_expired", "take_snapshot"]

_LOG = logging.getLogger(__name__)


def load_watermark(state: UpsertState) -> None:
    """Read the persisted watermark when TTL is on; delete the file when it is off (Pinot's constructor)."""
    if state.snapshot_dir is None:
        return
    if state.settings.ttl_enabled:
        state.watermark = snap.read_watermark(state.snapshot_dir, state.partition_id)
    else:
        snap.delete_watermark(state.snapshot_dir, state.partition_id)


def commit_time_upkeep(state: UpsertState) -> None:
    """Snapshot and expiry in Pinot's order, before a new consuming segment starts."""
    expiry = state.settings.expiry
    if expiry is ExpiryStrategy.AT_COMMIT and state.settings.metadata_ttl <= 0:
        remove_expired(state)
        take_snapshot(state)
        return
    take_snapshot(state)
    if expiry is ExpiryStrategy.AT_COMMIT:
        remove_expired(state)
    elif expiry is ExpiryStrategy.PERIODIC_SCAN:
        maybe_periodic_scan(state)
    else:
        _maybe_rotate(state)


def remove_expired(state: UpsertState) -> None:
    """One full sweep of the map(s) against the current watermark (no-op with TTL off)."""
    s = state.settings
    if s.ttl_enabled:
        sweep_expired((state.key_map, state.old_map), state.watermark, s.metadata_ttl, s.deleted_keys_ttl,
                      state.expiry_stats)
        state.scan_mark = state.watermark


def maybe_periodic_scan(state: UpsertState) -> None:
    """The periodic-scan strategy: sweep once the watermark has moved ``scan_interval`` since the last."""
    if state.settings.expiry is not ExpiryStrategy.PERIODIC_SCAN or state.watermark == WATERMARK_NOT_SET:
        return
    if state.scan_mark == WATERMARK_NOT_SET:
        state.scan_mark = state.watermark
    elif state.watermark - state.scan_mark >= state.settings.scan_interval:
        remove_expired(state)


def _maybe_rotate(state: UpsertState) -> None:
    """The two-map strategy: rotate once the watermark has moved one metadataTTL since the last rotation."""
    if state.watermark == WATERMARK_NOT_SET:
        return
    if state.rotation_mark == WATERMARK_NOT_SET:
        state.rotation_mark = state.watermark
    elif state.watermark - state.rotation_mark >= state.settings.metadata_ttl:
        state.key_map, state.old_map = rotate_maps(state.key_map, state.old_map, state.expiry_stats)
        state.rotation_mark = state.watermark


def take_snapshot(state: UpsertState) -> int:
    """Persist validDocIds (and queryableDocIds) of changed immutable segments; returns how many.

    Pinot's order: segments that already have a snapshot file first; the others only if none of
    those failed, so the snapshots on disk stay disjoint. Then the TTL watermark.
    """
    if not state.settings.enable_snapshot or not state.got_first_record or state.snapshot_dir is None:
        return 0
    changed = [s for s in state.segments.values() if not s.mutable and s.dirty]
    first = [s for s in changed if s.name in state.with_snapshot]
    written, failed = _write_snapshots(state, first)
    if not failed:
        written += _write_snapshots(state, [s for s in changed if s.name not in state.with_snapshot])[0]
    if state.settings.ttl_enabled:
        snap.write_watermark(state.snapshot_dir, state.partition_id, state.watermark)
    return written


def _write_snapshots(state: UpsertState, segments: list[SegmentState]) -> tuple[int, bool]:
    """Write each segment's bitmaps; returns (segments written, whether any write failed)."""
    assert state.snapshot_dir is not None
    written, failed = 0, False
    for seg in segments:
        if not seg.has_bitmaps:
            seg.dirty = False
            continue
        try:
            snap.write_bitmap(snap.snapshot_path(state.snapshot_dir, seg.name, snap.VALID_DOC_IDS),
                              seg.valid_bitmap())
            state.with_snapshot.add(seg.name)
            if state.settings.has_delete_column:
                snap.write_bitmap(snap.snapshot_path(state.snapshot_dir, seg.name, snap.QUERYABLE_DOC_IDS),
                                  seg.queryable_bitmap())
        except OSError as exc:
            _LOG.warning("could not snapshot segment %s (%s); skipping", seg.name, exc)
            failed = True
            continue
        seg.dirty = False
        written += 1
    return written, failed
