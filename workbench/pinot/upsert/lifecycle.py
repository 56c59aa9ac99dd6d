"""Immutable segments entering and leaving a partition's upsert state (reference §5.3–§5.6).

Pinot's ``addSegment``, ``replaceSegment``, ``removeSegment`` and preload each decide, before any
doc is compared, whether the segment goes into the map at all (metadata TTL), where its bitmaps come
from (comparison, or a snapshot on disk) and how the watermark moves afterwards. Those decisions are
the same whether segments arrive one at a time (the manager) or many at once (the vectorised
bootstrap in :mod:`~workbench.pinot.upsert.batch`), so both call these functions on the partition's
:class:`~workbench.pinot.upsert.state.UpsertState`; the per-doc comparisons are in
:mod:`~workbench.pinot.upsert.core`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import numpy as np
from pyroaring import BitMap

from workbench.gcpause import cycle_collection_paused
from workbench.pinot.upsert import snapshot as snap
from workbench.pinot.upsert.core import add_docs, put_without_upsert, remove_keys
from workbench.pinot.upsert.inputs import max_comparison_value
from workbench.pinot.upsert.segments import VALID_QUERYABLE, SegmentState
from workbench.pinot.upsert.state import UpsertState

__all__ = [
    "add_built",
    "discard_stale_snapshots",
    "load_out_of_ttl",
    "preload_one",
    "read_snapshot",
    "register",
    "remove",
    "replace",
]

_LOG = logging.getLogger(__name__)


def register(state: UpsertState, seg: SegmentState) -> None:
    """Track a segment, and for snapshots note whether it already has a snapshot file on disk."""
    state.segments[seg.name] = seg
    seg.dirty = True
    if state.settings.enable_snapshot and state.snapshot_dir and snap.has_snapshot(state.snapshot_dir, seg.name):
        state.with_snapshot.add(seg.name)


def read_snapshot(state: UpsertState, seg: SegmentState, file_name: str = snap.VALID_DOC_IDS) -> BitMap | None:
    """A segment's snapshot bitmap, or None when there is no snapshot directory or no usable file."""
    if state.snapshot_dir is None:
        return None
    return snap.read_bitmap(snap.snapshot_path(state.snapshot_dir, seg.name, file_name), seg.num_docs)


def discard_stale_snapshots(state: UpsertState, seg: SegmentState) -> None:
    """With snapshots disabled, delete files left by an earlier configuration (Pinot does, on add)."""
    if not state.settings.enable_snapshot and state.snapshot_dir is not None:
        snap.delete_snapshots(state.snapshot_dir, seg.name)


def load_out_of_ttl(state: UpsertState, seg: SegmentState) -> None:
    """A segment out of metadata TTL: bitmaps from its snapshot, nothing in the map (§5.4)."""
    seg.in_map = False
    bitmap = read_snapshot(state, seg)
    if bitmap is not None:
        seg.set_from_bitmap(bitmap)
        return
    _LOG.warning("no validDocIds snapshot for segment %s out of TTL; treating all docs as valid", seg.name)
    seg.flags = bytearray(bytes([VALID_QUERYABLE]) * seg.num_docs)
    seg.has_bitmaps = False


def add_built(state: UpsertState, seg: SegmentState) -> None:
    """``doAddSegment`` for a built (not yet tracked) immutable segment."""
    if state.out_of_ttl(seg.max_value):
        load_out_of_ttl(state, seg)
    else:
        discard_stale_snapshots(state, seg)
        with cycle_collection_paused():
            add_docs(state, seg, range(seg.num_docs))
    state.raise_watermark(seg.max_value)
    register(state, seg)


def replace(state: UpsertState, old: SegmentState, new: SegmentState, docs: Iterable[int]) -> None:
    """Replace tracked segment ``old`` by ``new`` of the same name, comparing ``new``'s ``docs`` only.

    Keys of ``old`` that no doc of ``new`` took over leave the map and are counted in
    ``inconsistent_rows`` (Pinot logs them as "not replaced").
    """
    old_flags = bytearray(old.flags) if old.has_bitmaps else None
    with cycle_collection_paused():
        add_docs(state, new, docs, old, old_flags)
    if old_flags is not None:
        leftover = np.flatnonzero(np.frombuffer(old_flags, np.uint8)).tolist()
        if leftover:
            _LOG.warning("found %d primary keys not replaced for segment %s", len(leftover), old.name)
            state.inconsistent_rows += len(leftover)
            remove_keys(state, old, leftover)
    state.raise_watermark(new.max_value)
    register(state, new)


def remove(state: UpsertState, name: str) -> None:
    """Stop tracking a segment; its keys leave the map unless it is out of metadata TTL by now."""
    seg = state.segment(name)
    max_value = seg.max_value if not seg.mutable else max_comparison_value(seg.values, None)
    if not state.out_of_ttl(max_value):
        remove_keys(state, seg, np.flatnonzero(seg.flag_array()).tolist())
    del state.segments[name]
    state.with_snapshot.discard(name)


def preload_one(state: UpsertState, seg: SegmentState) -> bool:
    """Preload one segment from its validDocIds snapshot; False (nothing done) when it has none usable.

    Only the snapshot's valid docs go into the map, with no comparison (correct because the
    snapshots on disk are disjoint).
    """
    bitmap = read_snapshot(state, seg)
    if bitmap is None:
        return False
    seg.set_from_bitmap(bitmap)
    register(state, seg)
    if not bitmap:
        return True  # Pinot registers it with empty bitmaps and leaves the watermark alone
    if state.out_of_ttl(seg.max_value):
        seg.in_map = False
    else:
        with cycle_collection_paused():
            put_without_upsert(state, seg, np.frombuffer(bitmap.to_array(), dtype=np.uint32).astype(np.int64))
    state.raise_watermark(seg.max_value)
    return True
