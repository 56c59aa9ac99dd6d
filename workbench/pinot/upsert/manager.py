"""``PartitionUpsertMetadataManager``: one table partition's upsert metadata, as a Pinot server keeps it.

The manager is the public face of a partition's :class:`~workbench.pinot.upsert.state.UpsertState`
(the primary-key map, key -> segment, doc, comparison value, and every segment's
validDocIds/queryableDocIds) and applies Pinot's rules for consumed records, immutable segments,
commits, reloads, removals, deletes, TTL expiry, snapshots and preload (reference §5). It checks
input and sequences the steps; the work is done by functions of the state in
:mod:`~workbench.pinot.upsert.core` (per-record loops), :mod:`~workbench.pinot.upsert.lifecycle`
(segments in and out), :mod:`~workbench.pinot.upsert.batch` (vectorised bootstrap) and
:mod:`~workbench.pinot.upsert.upkeep` (snapshots and expiry). The event order of a server is the
caller's: consume into the consuming segment with :meth:`add_records`, commit it with
:meth:`seal_consuming_segment` (or :meth:`replace_segment` with a reordered copy), and call
:meth:`start_new_consuming_segment`, which first runs the snapshot and the TTL sweep in Pinot's order.

Build it from validated settings (e.g. :meth:`UpsertSettings.from_table_config`), or with
:meth:`PartitionUpsertMetadataManager.of` and keywords in tests and notebooks:

>>> m = PartitionUpsertMetadataManager(UpsertSettings())
>>> m.add_segment("t__0__0__20240101T0000Z", [1, 2, 1], [10, 10, 12])
>>> sorted(m.valid_doc_ids("t__0__0__20240101T0000Z"))
[1, 2]
>>> m.start_new_consuming_segment("t__0__1__20240101T0100Z")
>>> m.add_record("t__0__1__20240101T0100Z", 0, 2, 11)
<RecordOutcome.REPLACED: 'replaced'>
>>> sorted(m.valid_doc_ids("t__0__0__20240101T0000Z")), m.num_primary_keys()
([2], 2)
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pyroaring import BitMap

from workbench.errors import InputError
from workbench.gcpause import cycle_collection_paused
from workbench.pinot.upsert import lifecycle, upkeep
from workbench.pinot.upsert import snapshot as snap
from workbench.pinot.upsert.batch import add_segments_batch
from workbench.pinot.upsert.core import IngestCounts, consume
from workbench.pinot.upsert.hashing import HashFunction, KeyEncoder
from workbench.pinot.upsert.inputs import delete_flags, encode_columns, immutable_segment, segment_from_input
from workbench.pinot.upsert.segments import SegmentInput, SegmentState
from workbench.pinot.upsert.settings import ExpiryStrategy, UpsertSettings
from workbench.pinot.upsert.state import UpsertState
from workbench.pinot.upsert.ttl import ExpiryStats

__all__ = ["PartitionUpsertMetadataManager", "RecordLocation", "RecordOutcome"]


class RecordOutcome(StrEnum):
    """What :meth:`PartitionUpsertMetadataManager.add_record` did with a record."""

    NEW_KEY = "new_key"
    REPLACED = "replaced"
    OUT_OF_ORDER = "out_of_order"  # indexed but not valid (Pinot's addRecord returned false)
    DROPPED = "dropped"  # out of order and dropOutOfOrderRecord: not indexed, the doc id is reused


class RecordLocation(NamedTuple):
    """A map entry as the public API shows it."""

    segment_name: str
    doc_id: int
    comparison_value: Any


class PartitionUpsertMetadataManager:
    """Upsert metadata of one (table, partition) on one server.

    Parameters
    ----------
    settings
        The table's validated upsert settings (:class:`~workbench.pinot.upsert.settings.UpsertSettings`).
    snapshot_dir
        The table's index directory on this server: segment snapshot subdirectories and the
        watermark file live here. Required with snapshots.
    partition_id
        Stream partition (names the watermark file).

    Attributes
    ----------
    state
        The partition's :class:`~workbench.pinot.upsert.state.UpsertState` (map, segments, watermark,
        counters), shared with the functions that do the work.
    """

    def __init__(self, settings: UpsertSettings, *, snapshot_dir: str | Path | None = None,
                 partition_id: int = 0) -> None:
        self.state = UpsertState(settings, Path(snapshot_dir) if snapshot_dir is not None else None, partition_id)
        upkeep.load_watermark(self.state)

    @classmethod
    def of(cls, *, metadata_ttl: float = 0, deleted_keys_ttl: float = 0, hash_function: HashFunction | str = "NONE",
           enable_snapshot: bool = False, snapshot_dir: str | Path | None = None, partition_id: int = 0,
           primary_key_types: Sequence[str] = ("LONG",), delete_record_column: str | None = None,
           drop_out_of_order_record: bool = False, out_of_order_record_column: str | None = None,
           enable_preload: bool = False, expiry: ExpiryStrategy | str = ExpiryStrategy.AT_COMMIT,
           scan_interval: float = 0.0, expired_key_is_new: bool = False) -> PartitionUpsertMetadataManager:
        """A manager from keywords, for tests and notebooks (a table's config goes through :class:`UpsertSettings`).

        Parameters
        ----------
        metadata_ttl, deleted_keys_ttl
            ``metadataTTL`` / ``deletedKeysTTL`` in comparison-column units (0 = off).
        hash_function
            ``hashFunction`` of the map keys: NONE, MD5, MURMUR3, XXHASH, XXH128 or UUID.
        enable_snapshot
            Take validDocIds snapshots before each new consuming segment (needed by metadataTTL).
        snapshot_dir, partition_id
            As for the constructor.
        primary_key_types
            Pinot types of the key columns (needed for every hash function but NONE).
        delete_record_column
            Name of ``deleteRecordColumn``; enables queryableDocIds and ``is_delete`` inputs.
        drop_out_of_order_record, out_of_order_record_column
            The consuming segment's handling of out-of-order records.
        enable_preload
            Allow :meth:`preload_segments` (forced off without snapshots, as in Pinot).
        expiry, scan_interval
            Removal strategy for expired keys (:class:`~workbench.pinot.upsert.settings.ExpiryStrategy`).
        expired_key_is_new
            Apply the design doc's scenario-3 rule instead of Pinot's shipped behaviour.
        """
        settings = UpsertSettings(
            metadata_ttl=metadata_ttl, deleted_keys_ttl=deleted_keys_ttl,
            hash_function=HashFunction.parse(hash_function), enable_snapshot=enable_snapshot,
            enable_preload=enable_preload, primary_key_types=tuple(primary_key_types),
            delete_record_column=delete_record_column, drop_out_of_order_record=drop_out_of_order_record,
            out_of_order_record_column=out_of_order_record_column, expiry=ExpiryStrategy(expiry),
            scan_interval=scan_interval, expired_key_is_new=expired_key_is_new)
        return cls(settings, snapshot_dir=snapshot_dir, partition_id=partition_id)

    # -- views ------------------------------------------------------------------------------------------
    @property
    def settings(self) -> UpsertSettings:
        """The table's upsert settings."""
        return self.state.settings

    @property
    def snapshot_dir(self) -> Path | None:
        """Where snapshots and the watermark file live (None without snapshots)."""
        return self.state.snapshot_dir

    @property
    def partition_id(self) -> int:
        """Stream partition."""
        return self.state.partition_id

    @property
    def encoder(self) -> KeyEncoder:
        """Primary key -> map key under the configured hash function."""
        return self.state.encoder

    @property
    def expiry_stats(self) -> ExpiryStats:
        """Cost and effect of key expiry so far."""
        return self.state.expiry_stats

    @property
    def inconsistent_rows(self) -> int:
        """Keys of replaced segments that the new copy lacked (removed from the map, as Pinot does)."""
        return self.state.inconsistent_rows

    @property
    def watermark(self) -> float:
        """``largestSeenComparisonValue`` (-inf until set; tracked only with TTL on)."""
        return self.state.watermark

    @property
    def max_primary_keys(self) -> int:
        """The most keys the map has held at once (sets the hash table's capacity in the heap model)."""
        return self.state.max_keys

    def num_primary_keys(self) -> int:
        """Keys currently in the map (both maps with two-map rotation)."""
        return self.state.num_keys()

    def segment_names(self) -> list[str]:
        """Tracked segments, in the order they were added."""
        return list(self.state.segments)

    def segment(self, name: str) -> SegmentState:
        """The state of one tracked segment."""
        return self.state.segment(name)

    def valid_doc_ids(self, segment_name: str) -> BitMap:
        """validDocIds of a segment: the docs that are the current version of their key."""
        return self.segment(segment_name).valid_bitmap()

    def queryable_doc_ids(self, segment_name: str) -> BitMap:
        """What queries see: queryableDocIds with ``deleteRecordColumn``, else validDocIds."""
        seg = self.segment(segment_name)
        return seg.queryable_bitmap() if self.settings.has_delete_column else seg.valid_bitmap()

    def out_of_order_doc_ids(self, segment_name: str) -> BitMap:
        """Docs whose ``outOfOrderRecordColumn`` value is 1 (empty unless that column is configured)."""
        flags = self.segment(segment_name).out_of_order
        return BitMap(np.flatnonzero(np.frombuffer(flags, np.uint8)).tolist()) if flags else BitMap()

    def record_location(self, primary_key: Any) -> RecordLocation | None:
        """Where the map says a primary key's current record is, or None."""
        key = self.encoder.encode(primary_key)
        loc = self.state.key_map.get(key) or self.state.old_map.get(key)
        return None if loc is None else RecordLocation(loc[0].name, loc[1], loc[2])

    def primary_key_locations(self) -> dict[Hashable, RecordLocation]:
        """The whole map, keyed by map key (the primary key itself with hashFunction NONE)."""
        both = {**self.state.old_map, **self.state.key_map}
        return {k: RecordLocation(s.name, d, v) for k, (s, d, v) in both.items()}

    # -- consuming ------------------------------------------------------------------------------------------
    def _mutable(self, name: str) -> SegmentState:
        seg = self.segment(name)
        if not seg.mutable:
            raise InputError("segment", f"{name!r} is not a consuming segment")
        return seg

    def start_new_consuming_segment(self, name: str, *, creation_time_ms: int = 0) -> None:
        """Start consuming into a new mutable segment, after Pinot's commit-time upkeep.

        With metadataTTL the snapshot is taken first and expired keys removed after; otherwise the
        other way round (reference §5.4). The other strategies replace the sweep by theirs.
        """
        self.state.check_new(name)
        upkeep.commit_time_upkeep(self.state)
        seg = SegmentState(name, mutable=True, creation_time_ms=creation_time_ms)
        if self.settings.out_of_order_record_column:
            seg.out_of_order = bytearray()
        self.state.segments[name] = seg

    def add_record(self, segment_name: str, doc_id: int, primary_key: Any, comparison_value: Any,
                   is_delete: bool = False) -> RecordOutcome:
        """Consume one record into the consuming segment as doc ``doc_id`` (the next doc id)."""
        seg = self._mutable(segment_name)
        if doc_id != seg.num_docs:
            raise InputError("doc_id", f"the next doc of {segment_name!r} is {seg.num_docs}, got {doc_id}")
        state = self.state
        deletes = delete_flags(state, [is_delete], 1)
        state.got_first_record = True
        counts = consume(state, seg, [state.encoder.encode(primary_key)], [comparison_value], deletes)
        upkeep.maybe_periodic_scan(state)
        if counts.new_keys:
            return RecordOutcome.NEW_KEY
        if counts.replaced:
            return RecordOutcome.REPLACED
        return RecordOutcome.DROPPED if counts.dropped else RecordOutcome.OUT_OF_ORDER

    def add_records(self, segment_name: str, primary_keys: Any, comparison_values: Any,
                    is_delete: Any = None) -> IngestCounts:
        """Consume a batch of records in order (doc ids continue from the segment's last)."""
        seg = self._mutable(segment_name)
        state = self.state
        keys, values = encode_columns(state, primary_keys, comparison_values)
        deletes = delete_flags(state, is_delete, len(keys))
        state.got_first_record = state.got_first_record or bool(keys)
        with cycle_collection_paused():
            counts = consume(state, seg, keys, values, deletes)
        upkeep.maybe_periodic_scan(state)
        return counts

    def seal_consuming_segment(self, name: str, *, max_comparison_value: float | None = None) -> None:
        """Commit: replace the consuming segment by an immutable copy of its indexed docs, in order."""
        seg = self._mutable(name)
        sealed = immutable_segment(name, list(seg.keys), list(seg.values), bytes(seg.deletes),
                                   max_comparison_value, seg.creation_time_ms)
        lifecycle.replace(self.state, seg, sealed, range(sealed.num_docs))

    # -- immutable segments -------------------------------------------------------------------------------
    def add_segment(self, name: str, primary_keys: Any, comparison_values: Any, is_delete: Any = None,
                    max_comparison_value: float | None = None, *, creation_time_ms: int = 0) -> None:
        """Add an immutable segment (server start, or a segment assigned to this server).

        Docs are compared in doc order; ``max_comparison_value`` is the segment metadata's max and
        defaults to the largest value. A segment out of metadata TTL is not put in the map: its
        bitmaps come from its snapshot (all docs valid, with a warning, if it has none).
        """
        self.state.check_new(name)
        spec = SegmentInput(name, primary_keys, comparison_values, is_delete, max_comparison_value, creation_time_ms)
        lifecycle.add_built(self.state, segment_from_input(self.state, spec))
        upkeep.maybe_periodic_scan(self.state)

    def add_segments(self, segments: Sequence[SegmentInput]) -> None:
        """Add many immutable segments at once (bootstrap/recovery): vectorised when order allows."""
        add_segments_batch(self.state, segments)

    def replace_segment(self, name: str, primary_keys: Any, comparison_values: Any, is_delete: Any = None,
                        max_comparison_value: float | None = None, *, creation_time_ms: int | None = None,
                        reload: bool = False) -> None:
        """Replace a tracked segment by a new copy of the same name (commit with reordered docs, or reload).

        On a ``reload`` with TTL on, a validDocIds snapshot on disk limits the rebuild to its valid
        docs, so keys already expired or deleted by TTL are not resurrected (§5.5; Pinot #18860, on
        master after release-1.5.1). A snapshot as Pinot writes it, with no workbench checksum beside
        it, is used like one the workbench wrote (:mod:`~workbench.pinot.upsert.snapshot`).
        """
        old = self.segment(name)
        created = old.creation_time_ms if creation_time_ms is None else creation_time_ms
        new = segment_from_input(self.state, SegmentInput(name, primary_keys, comparison_values, is_delete,
                                                          max_comparison_value, created))
        snapshot = lifecycle.read_snapshot(self.state, new) if reload and self.settings.ttl_enabled else None
        lifecycle.replace(self.state, old, new, range(new.num_docs) if snapshot is None else list(snapshot))

    def remove_segment(self, name: str) -> None:
        """Stop tracking a segment; its keys leave the map unless it is out of metadata TTL by now."""
        lifecycle.remove(self.state, name)

    # -- preload and recovery ----------------------------------------------------------------------------
    def preload_segments(self, segments: Sequence[SegmentInput]) -> list[str]:
        """Preload the segments that have a validDocIds snapshot; returns their names.

        Only the snapshot's valid docs go into the map, with no comparison (correct because the
        snapshots on disk are disjoint). Segments without a usable snapshot are skipped and must be
        added normally afterwards (:meth:`recover` does both). A no-op unless preload is enabled.
        """
        state = self.state
        if not self.settings.enable_preload or state.snapshot_dir is None:
            return []
        loaded = []
        for spec in segments:
            state.check_new(spec.name)
            if (snap.has_snapshot(state.snapshot_dir, spec.name)
                    and lifecycle.preload_one(state, segment_from_input(state, spec))):
                loaded.append(spec.name)
        return loaded

    def recover(self, segments: Sequence[SegmentInput]) -> list[str]:
        """Server restart: preload what has snapshots, then add the rest (vectorised); returns the preloaded."""
        preloaded = self.preload_segments(segments)
        done = set(preloaded)
        self.add_segments([s for s in segments if s.name not in done])
        return preloaded

    # -- TTL and snapshots ---------------------------------------------------------------------------------
    def remove_expired_primary_keys(self) -> None:
        """One full sweep of the map against the current watermark (no-op with TTL off)."""
        upkeep.remove_expired(self.state)

    def take_snapshot(self) -> int:
        """Persist validDocIds (and queryableDocIds) of changed immutable segments; returns how many.

        Pinot's order: segments that already have a snapshot file first; the others only if none of
        those failed, so the snapshots on disk stay disjoint. Then the TTL watermark.
        """
        return upkeep.take_snapshot(self.state)
