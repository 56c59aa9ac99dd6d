"""``PartitionUpsertMetadataManager``: one table partition's upsert metadata, as a Pinot server keeps it.

The manager owns the primary-key map (key -> segment, doc, comparison value) and every segment's
validDocIds/queryableDocIds, and applies Pinot's rules for consumed records, immutable segments,
commits, reloads, removals, deletes, TTL expiry, snapshots and preload (reference §5). The event
order of a server is the caller's: consume into the consuming segment with :meth:`add_records`,
commit it with :meth:`seal_consuming_segment` (or :meth:`replace_segment` with a reordered copy), and
call :meth:`start_new_consuming_segment`, which first runs the snapshot and the TTL sweep in Pinot's
order.

>>> m = PartitionUpsertMetadataManager()
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

import logging
from collections.abc import Hashable, Iterable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pyroaring import BitMap

from workbench.errors import InputError
from workbench.pinot.upsert import snapshot as snap
from workbench.pinot.upsert.core import IngestCounts, UpsertCore, no_gc
from workbench.pinot.upsert.hashing import HashFunction, KeyEncoder
from workbench.pinot.upsert.segments import VALID_QUERYABLE, SegmentInput, SegmentState
from workbench.pinot.upsert.settings import ExpiryStrategy, UpsertSettings
from workbench.pinot.upsert.ttl import WATERMARK_NOT_SET, out_of_metadata_ttl, rotate_maps, sweep_expired

__all__ = ["PartitionUpsertMetadataManager", "RecordLocation", "RecordOutcome"]

_LOG = logging.getLogger(__name__)


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


def _as_list(values: Any, where: str) -> list[Any]:
    if isinstance(values, np.ndarray):
        return list(values.tolist())
    if isinstance(values, str | bytes):
        raise InputError(where, "must be a sequence of values, not a single string")
    return list(values)


def _max_value(values: list[Any] | np.ndarray, given: float | None) -> float:
    if given is not None:
        return float(given)
    return float(max(values) if isinstance(values, list) else values.max()) if len(values) else WATERMARK_NOT_SET


def _numeric_array(values: Any) -> bool:
    return isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "iuf"


class PartitionUpsertMetadataManager(UpsertCore):
    """Upsert metadata of one (table, partition) on one server.

    Parameters
    ----------
    metadata_ttl, deleted_keys_ttl
        ``metadataTTL`` / ``deletedKeysTTL`` in comparison-column units (0 = off).
    hash_function
        ``hashFunction`` of the map keys: NONE, MD5, MURMUR3, XXHASH, XXH128 or UUID.
    enable_snapshot
        Take validDocIds snapshots before each new consuming segment (needed by metadataTTL).
    snapshot_dir
        The table's index directory on this server: segment snapshot subdirectories and the
        watermark file live here. Required with snapshots.
    partition_id
        Stream partition (names the watermark file).
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

    def __init__(self, metadata_ttl: float = 0, deleted_keys_ttl: float = 0,
                 hash_function: HashFunction | str = "NONE", enable_snapshot: bool = False,
                 snapshot_dir: str | Path | None = None, *, partition_id: int = 0,
                 primary_key_types: Sequence[str] = ("LONG",), delete_record_column: str | None = None,
                 drop_out_of_order_record: bool = False, out_of_order_record_column: str | None = None,
                 enable_preload: bool = False, expiry: ExpiryStrategy | str = ExpiryStrategy.AT_COMMIT,
                 scan_interval: float = 0.0, expired_key_is_new: bool = False) -> None:
        settings = UpsertSettings(
            metadata_ttl=metadata_ttl, deleted_keys_ttl=deleted_keys_ttl,
            hash_function=HashFunction.parse(hash_function), enable_snapshot=enable_snapshot,
            enable_preload=enable_preload, primary_key_types=tuple(primary_key_types),
            delete_record_column=delete_record_column, drop_out_of_order_record=drop_out_of_order_record,
            out_of_order_record_column=out_of_order_record_column, expiry=ExpiryStrategy(expiry),
            scan_interval=scan_interval, expired_key_is_new=expired_key_is_new)
        self._setup(settings, snapshot_dir, partition_id)

    @classmethod
    def from_settings(cls, settings: UpsertSettings, *, snapshot_dir: str | Path | None = None,
                      partition_id: int = 0) -> PartitionUpsertMetadataManager:
        """A manager for already-validated settings (e.g. :meth:`UpsertSettings.from_table_config`)."""
        manager = cls.__new__(cls)
        manager._setup(settings, snapshot_dir, partition_id)
        return manager

    def _setup(self, settings: UpsertSettings, snapshot_dir: str | Path | None, partition_id: int) -> None:
        UpsertCore.__init__(self, settings)
        if settings.enable_snapshot and snapshot_dir is None:
            raise InputError("snapshot_dir", "is required when snapshots are enabled")
        self.snapshot_dir = Path(snapshot_dir) if snapshot_dir is not None else None
        self.partition_id = partition_id
        self.encoder = KeyEncoder(settings.primary_key_types, settings.hash_function)
        self._got_first_record = False
        self._scan_mark = WATERMARK_NOT_SET
        self._rotation_mark = WATERMARK_NOT_SET
        self._with_snapshot: set[str] = set()
        self._load_watermark()

    def _load_watermark(self) -> None:
        """Read the persisted watermark when TTL is on; delete the file when it is off (Pinot's constructor)."""
        if self.snapshot_dir is None:
            return
        if self.settings.ttl_enabled:
            self._watermark = snap.read_watermark(self.snapshot_dir, self.partition_id)
        else:
            snap.delete_watermark(self.snapshot_dir, self.partition_id)

    # -- views ------------------------------------------------------------------------------------------
    @property
    def watermark(self) -> float:
        """``largestSeenComparisonValue`` (-inf until set; tracked only with TTL on)."""
        return self._watermark

    @property
    def max_primary_keys(self) -> int:
        """The most keys the map has held at once (sets the hash table's capacity in the heap model)."""
        return self._max_keys

    def num_primary_keys(self) -> int:
        """Keys currently in the map (both maps with two-map rotation)."""
        return len(self._map) + len(self._old_map)

    def segment_names(self) -> list[str]:
        """Tracked segments, in the order they were added."""
        return list(self._segments)

    def segment(self, name: str) -> SegmentState:
        """The state of one tracked segment."""
        try:
            return self._segments[name]
        except KeyError:
            raise InputError("segment", f"{name!r} is not tracked by this manager") from None

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
        loc = self._map.get(key) or self._old_map.get(key)
        return None if loc is None else RecordLocation(loc[0].name, loc[1], loc[2])

    def primary_key_locations(self) -> dict[Hashable, RecordLocation]:
        """The whole map, keyed by map key (the primary key itself with hashFunction NONE)."""
        both = {**self._old_map, **self._map}
        return {k: RecordLocation(s.name, d, v) for k, (s, d, v) in both.items()}

    # -- input checks -------------------------------------------------------------------------------------
    def _deletes(self, is_delete: Any, n: int) -> bytes | None:
        if is_delete is None:
            return None
        flags = np.asarray(is_delete, dtype=bool)
        if flags.shape != (n,):
            raise InputError("is_delete", f"needs one flag per record ({n}), got shape {flags.shape}")
        if not self.settings.has_delete_column:
            if flags.any():
                raise InputError("is_delete", "delete records need delete_record_column (deleteRecordColumn)")
            return None
        return flags.astype(np.uint8).tobytes()

    def _columns(self, primary_keys: Any, comparison_values: Any, *, keep_arrays: bool = False) -> tuple[Any, Any]:
        """Map keys and comparison values, as lists for the per-record loops.

        With ``keep_arrays`` (immutable segments) an integer key array under hashFunction NONE and a
        numeric value array stay numpy: the vectorised bootstrap reads them as they are, and a 10M-doc
        column costs 80 MB instead of ~360 MB of Python ints.
        """
        keys_stay = (keep_arrays and self.encoder.hash_function is HashFunction.NONE and self.encoder.single
                     and _numeric_array(primary_keys) and primary_keys.dtype.kind in "iu")
        keys = primary_keys if keys_stay else self.encoder.encode_many(
            primary_keys if isinstance(primary_keys, np.ndarray) else _as_list(primary_keys, "primary_keys"))
        values = (comparison_values if keep_arrays and _numeric_array(comparison_values)
                  else _as_list(comparison_values, "comparison_values"))
        if len(keys) != len(values):
            raise InputError("comparison_values", f"has {len(values)} values for {len(keys)} primary keys")
        return keys, values

    def _mutable(self, name: str) -> SegmentState:
        seg = self.segment(name)
        if not seg.mutable:
            raise InputError("segment", f"{name!r} is not a consuming segment")
        return seg

    def _check_new(self, name: str) -> None:
        if name in self._segments:
            raise InputError("segment", f"{name!r} is already tracked; use replace_segment to replace it")

    # -- consuming ------------------------------------------------------------------------------------------
    def start_new_consuming_segment(self, name: str, *, creation_time_ms: int = 0) -> None:
        """Start consuming into a new mutable segment, after Pinot's commit-time upkeep.

        With metadataTTL the snapshot is taken first and expired keys removed after; otherwise the
        other way round (reference §5.4). The other strategies replace the sweep by theirs.
        """
        self._check_new(name)
        self._commit_time_upkeep()
        seg = SegmentState(name, mutable=True, creation_time_ms=creation_time_ms)
        if self.settings.out_of_order_record_column:
            seg.out_of_order = bytearray()
        self._segments[name] = seg

    def _commit_time_upkeep(self) -> None:
        expiry = self.settings.expiry
        if expiry is ExpiryStrategy.AT_COMMIT and self.settings.metadata_ttl <= 0:
            self.remove_expired_primary_keys()
            self.take_snapshot()
            return
        self.take_snapshot()
        if expiry is ExpiryStrategy.AT_COMMIT:
            self.remove_expired_primary_keys()
        elif expiry is ExpiryStrategy.PERIODIC_SCAN:
            self._maybe_periodic_scan()
        else:
            self._maybe_rotate()

    def add_record(self, segment_name: str, doc_id: int, primary_key: Any, comparison_value: Any,
                   is_delete: bool = False) -> RecordOutcome:
        """Consume one record into the consuming segment as doc ``doc_id`` (the next doc id)."""
        seg = self._mutable(segment_name)
        if doc_id != seg.num_docs:
            raise InputError("doc_id", f"the next doc of {segment_name!r} is {seg.num_docs}, got {doc_id}")
        deletes = self._deletes([is_delete], 1)
        self._got_first_record = True
        counts = self._consume(seg, [self.encoder.encode(primary_key)], [comparison_value], deletes)
        self._maybe_periodic_scan()
        if counts.new_keys:
            return RecordOutcome.NEW_KEY
        if counts.replaced:
            return RecordOutcome.REPLACED
        return RecordOutcome.DROPPED if counts.dropped else RecordOutcome.OUT_OF_ORDER

    def add_records(self, segment_name: str, primary_keys: Any, comparison_values: Any,
                    is_delete: Any = None) -> IngestCounts:
        """Consume a batch of records in order (doc ids continue from the segment's last)."""
        seg = self._mutable(segment_name)
        keys, values = self._columns(primary_keys, comparison_values)
        deletes = self._deletes(is_delete, len(keys))
        self._got_first_record = self._got_first_record or bool(keys)
        with no_gc():
            counts = self._consume(seg, keys, values, deletes)
        self._maybe_periodic_scan()
        return counts

    def seal_consuming_segment(self, name: str, *, max_comparison_value: float | None = None) -> None:
        """Commit: replace the consuming segment by an immutable copy of its indexed docs, in order."""
        seg = self._mutable(name)
        sealed = self._immutable(name, list(seg.keys), list(seg.values), bytes(seg.deletes),
                                 max_comparison_value, seg.creation_time_ms)
        self._replace(seg, sealed, range(sealed.num_docs))

    # -- immutable segments -------------------------------------------------------------------------------
    def _immutable(self, name: str, keys: Any, values: Any, deletes: bytes | None,
                   max_value: float | None, creation_time_ms: int) -> SegmentState:
        seg = SegmentState(name, mutable=False, creation_time_ms=creation_time_ms)
        seg.set_columns(keys, values)
        seg.deletes = bytearray(deletes if deletes is not None else bytes(len(keys)))
        seg.flags = bytearray(len(keys))
        seg.max_value = _max_value(values, max_value)
        return seg

    def _from_input(self, spec: SegmentInput) -> SegmentState:
        keys, values = self._columns(spec.primary_keys, spec.comparison_values, keep_arrays=True)
        return self._immutable(spec.name, keys, values, self._deletes(spec.is_delete, len(keys)),
                               spec.max_comparison_value, spec.creation_time_ms)

    def _register(self, seg: SegmentState) -> None:
        """Track a segment, and for snapshots note whether it already has a snapshot file on disk."""
        self._segments[seg.name] = seg
        seg.dirty = True
        if self.settings.enable_snapshot and self.snapshot_dir and snap.has_snapshot(self.snapshot_dir, seg.name):
            self._with_snapshot.add(seg.name)

    def _raise_watermark(self, value: float) -> None:
        if self.settings.ttl_enabled and value > self._watermark:
            self._watermark = value

    def _is_out_of_ttl(self, max_value: float) -> bool:
        return out_of_metadata_ttl(max_value, self._watermark, self.settings.metadata_ttl)

    def _read_snapshot(self, seg: SegmentState, file_name: str = snap.VALID_DOC_IDS) -> BitMap | None:
        if self.snapshot_dir is None:
            return None
        return snap.read_bitmap(snap.snapshot_path(self.snapshot_dir, seg.name, file_name), seg.num_docs)

    def _load_out_of_ttl(self, seg: SegmentState) -> None:
        """A segment out of metadata TTL: bitmaps from its snapshot, nothing in the map (§5.4)."""
        seg.in_map = False
        bitmap = self._read_snapshot(seg)
        if bitmap is not None:
            seg.set_from_bitmap(bitmap)
            return
        _LOG.warning("no validDocIds snapshot for segment %s out of TTL; treating all docs as valid", seg.name)
        seg.flags = bytearray(bytes([VALID_QUERYABLE]) * seg.num_docs)
        seg.has_bitmaps = False

    def _add_built(self, seg: SegmentState) -> None:
        """``doAddSegment`` for a built segment state."""
        if self._is_out_of_ttl(seg.max_value):
            self._load_out_of_ttl(seg)
        else:
            if not self.settings.enable_snapshot and self.snapshot_dir is not None:
                snap.delete_snapshots(self.snapshot_dir, seg.name)
            with no_gc():
                self._add_docs(seg, range(seg.num_docs))
        self._raise_watermark(seg.max_value)
        self._register(seg)

    def add_segment(self, name: str, primary_keys: Any, comparison_values: Any, is_delete: Any = None,
                    max_comparison_value: float | None = None, *, creation_time_ms: int = 0) -> None:
        """Add an immutable segment (server start, or a segment assigned to this server).

        Docs are compared in doc order; ``max_comparison_value`` is the segment metadata's max and
        defaults to the largest value. A segment out of metadata TTL is not put in the map: its
        bitmaps come from its snapshot (all docs valid, with a warning, if it has none).
        """
        self._check_new(name)
        self._add_built(self._from_input(SegmentInput(name, primary_keys, comparison_values, is_delete,
                                                      max_comparison_value, creation_time_ms)))
        self._maybe_periodic_scan()

    def add_segments(self, segments: Sequence[SegmentInput]) -> None:
        """Add many immutable segments at once (bootstrap/recovery): vectorised when order allows."""
        from workbench.pinot.upsert.batch import add_segments_batch

        add_segments_batch(self, segments)

    def replace_segment(self, name: str, primary_keys: Any, comparison_values: Any, is_delete: Any = None,
                        max_comparison_value: float | None = None, *, creation_time_ms: int | None = None,
                        reload: bool = False) -> None:
        """Replace a tracked segment by a new copy of the same name (commit with reordered docs, or reload).

        On a ``reload`` with TTL on, a validDocIds snapshot on disk limits the rebuild to its valid
        docs, so keys already expired or deleted by TTL are not resurrected (§5.5).
        """
        old = self.segment(name)
        created = old.creation_time_ms if creation_time_ms is None else creation_time_ms
        new = self._from_input(SegmentInput(name, primary_keys, comparison_values, is_delete,
                                            max_comparison_value, created))
        snapshot = self._read_snapshot(new) if reload and self.settings.ttl_enabled else None
        self._replace(old, new, range(new.num_docs) if snapshot is None else list(snapshot))

    def _replace(self, old: SegmentState, new: SegmentState, docs: Iterable[int]) -> None:
        old_flags = bytearray(old.flags) if old.has_bitmaps else None
        with no_gc():
            self._add_docs(new, docs, old, old_flags)
        if old_flags is not None:
            leftover = np.flatnonzero(np.frombuffer(old_flags, np.uint8)).tolist()
            if leftover:
                _LOG.warning("found %d primary keys not replaced for segment %s", len(leftover), old.name)
                self.inconsistent_rows += len(leftover)
                self._remove_keys(old, leftover)
        self._raise_watermark(new.max_value)
        self._register(new)

    def remove_segment(self, name: str) -> None:
        """Stop tracking a segment; its keys leave the map unless it is out of metadata TTL by now."""
        seg = self.segment(name)
        max_value = seg.max_value if not seg.mutable else _max_value(seg.values, None)
        if not self._is_out_of_ttl(max_value):
            self._remove_keys(seg, np.flatnonzero(seg.flag_array()).tolist())
        del self._segments[name]
        self._with_snapshot.discard(name)

    # -- preload and recovery ----------------------------------------------------------------------------
    def preload_segments(self, segments: Sequence[SegmentInput]) -> list[str]:
        """Preload the segments that have a validDocIds snapshot; returns their names.

        Only the snapshot's valid docs go into the map, with no comparison (correct because the
        snapshots on disk are disjoint). Segments without a usable snapshot are skipped and must be
        added normally afterwards (:meth:`recover` does both). A no-op unless preload is enabled.
        """
        if not self.settings.enable_preload or self.snapshot_dir is None:
            return []
        loaded = []
        for spec in segments:
            self._check_new(spec.name)
            if snap.has_snapshot(self.snapshot_dir, spec.name) and self._preload_one(self._from_input(spec)):
                loaded.append(spec.name)
        return loaded

    def _preload_one(self, seg: SegmentState) -> bool:
        bitmap = self._read_snapshot(seg)
        if bitmap is None:
            return False
        seg.set_from_bitmap(bitmap)
        self._register(seg)
        if not bitmap:
            return True  # Pinot registers it with empty bitmaps and leaves the watermark alone
        if self._is_out_of_ttl(seg.max_value):
            seg.in_map = False
        else:
            with no_gc():
                self._put_without_upsert(seg, np.frombuffer(bitmap.to_array(), dtype=np.uint32).astype(np.int64))
        self._raise_watermark(seg.max_value)
        return True

    def recover(self, segments: Sequence[SegmentInput]) -> list[str]:
        """Server restart: preload what has snapshots, then add the rest (vectorised); returns the preloaded."""
        preloaded = self.preload_segments(segments)
        done = set(preloaded)
        self.add_segments([s for s in segments if s.name not in done])
        return preloaded

    # -- TTL and snapshots ---------------------------------------------------------------------------------
    def remove_expired_primary_keys(self) -> None:
        """One full sweep of the map against the current watermark (no-op with TTL off)."""
        if self.settings.ttl_enabled:
            sweep_expired((self._map, self._old_map), self._watermark, self.settings.metadata_ttl,
                          self.settings.deleted_keys_ttl, self.expiry_stats)
            self._scan_mark = self._watermark

    def _maybe_periodic_scan(self) -> None:
        if self.settings.expiry is not ExpiryStrategy.PERIODIC_SCAN or self._watermark == WATERMARK_NOT_SET:
            return
        if self._scan_mark == WATERMARK_NOT_SET:
            self._scan_mark = self._watermark
        elif self._watermark - self._scan_mark >= self.settings.scan_interval:
            self.remove_expired_primary_keys()

    def _maybe_rotate(self) -> None:
        if self._watermark == WATERMARK_NOT_SET:
            return
        if self._rotation_mark == WATERMARK_NOT_SET:
            self._rotation_mark = self._watermark
        elif self._watermark - self._rotation_mark >= self.settings.metadata_ttl:
            self._map, self._old_map = rotate_maps(self._map, self._old_map, self.expiry_stats)
            self._rotation_mark = self._watermark

    def take_snapshot(self) -> int:
        """Persist validDocIds (and queryableDocIds) of changed immutable segments; returns how many.

        Pinot's order: segments that already have a snapshot file first; the others only if none of
        those failed, so the snapshots on disk stay disjoint. Then the TTL watermark.
        """
        if not self.settings.enable_snapshot or not self._got_first_record or self.snapshot_dir is None:
            return 0
        changed = [s for s in self._segments.values() if not s.mutable and s.dirty]
        first = [s for s in changed if s.name in self._with_snapshot]
        written, failed = self._write_snapshots(first)
        if not failed:
            written += self._write_snapshots([s for s in changed if s.name not in self._with_snapshot])[0]
        if self.settings.ttl_enabled:
            snap.write_watermark(self.snapshot_dir, self.partition_id, self._watermark)
        return written

    def _write_snapshots(self, segments: list[SegmentState]) -> tuple[int, bool]:
        assert self.snapshot_dir is not None
        written, failed = 0, False
        for seg in segments:
            if not seg.has_bitmaps:
                seg.dirty = False
                continue
            try:
                snap.write_bitmap(snap.snapshot_path(self.snapshot_dir, seg.name, snap.VALID_DOC_IDS),
                                  seg.valid_bitmap())
                self._with_snapshot.add(seg.name)
                if self.settings.has_delete_column:
                    snap.write_bitmap(snap.snapshot_path(self.snapshot_dir, seg.name, snap.QUERYABLE_DOC_IDS),
                                      seg.queryable_bitmap())
            except OSError as exc:
                _LOG.warning("could not snapshot segment %s (%s); skipping", seg.name, exc)
                failed = True
                continue
            seg.dirty = False
            written += 1
        return written, failed
