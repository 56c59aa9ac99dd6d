"""``UpsertState``: everything one partition's upsert metadata holds, in one value.

Several modules change the same map, segments and watermark: the per-record loops
(:mod:`~workbench.pinot.upsert.core`), segments entering and leaving
(:mod:`~workbench.pinot.upsert.lifecycle`), the vectorised bootstrap
(:mod:`~workbench.pinot.upsert.batch`), commit-time snapshots and expiry
(:mod:`~workbench.pinot.upsert.upkeep`) and the manager's public API. Each of them receives this
dataclass as an argument instead of reaching into another's private members, so the import graph is
a tree with this module near its root: every part depends on the state, none on the manager.

The state is mutable on purpose (the loops update it in place, millions of times); its methods are
the few small rules every part needs the same way (the peak key count, the watermark, TTL checks).

>>> from workbench.pinot.upsert.settings import UpsertSettings
>>> state = UpsertState(UpsertSettings(metadata_ttl=30, enable_snapshot=True), snapshot_dir=Path("idx"))
>>> state.raise_watermark(100.0)
>>> state.watermark, state.out_of_ttl(60.0), state.out_of_ttl(80.0)
(100.0, True, False)
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path

from workbench.errors import InputError
from workbench.pinot.upsert.hashing import KeyEncoder
from workbench.pinot.upsert.segments import SegmentState
from workbench.pinot.upsert.settings import UpsertSettings
from workbench.pinot.upsert.ttl import WATERMARK_NOT_SET, ExpiryStats, Location, out_of_metadata_ttl

__all__ = ["UpsertState"]


@dataclass(eq=False, slots=True)
class UpsertState:
    """The mutable upsert metadata of one (table, partition) on one server.

    Attributes
    ----------
    settings
        The table's validated upsert settings.
    snapshot_dir
        The table's index directory on this server (snapshot files and the watermark file); None
        without snapshots. Required when snapshots are enabled.
    partition_id
        Stream partition (names the watermark file).
    key_map
        Primary-key map: map key -> ``(segment, doc id, comparison value)``.
    old_map
        The previous map of the two-map rotation strategy (empty otherwise).
    segments
        Tracked segments by name, in the order they were added.
    watermark
        ``largestSeenComparisonValue`` in comparison units (-inf until set; tracked only with TTL on).
    max_keys
        The most keys the maps have held at once (sizes the hash table in the heap model).
    expiry_stats
        Cost and effect of key expiry so far.
    inconsistent_rows
        Keys of a replaced segment that its new copy did not contain (Pinot logs and removes them).
    got_first_record
        Whether any record has been consumed (Pinot takes no snapshot before the first).
    scan_mark, rotation_mark
        Watermark at the last periodic scan and at the last two-map rotation.
    with_snapshot
        Segments that have a validDocIds snapshot file on disk (written first, to keep them disjoint).
    encoder
        Turns primary keys into map keys under the settings' hash function (derived, not passed).
    """

    settings: UpsertSettings
    snapshot_dir: Path | None = None
    partition_id: int = 0
    key_map: dict[Hashable, Location] = field(default_factory=dict)
    old_map: dict[Hashable, Location] = field(default_factory=dict)
    segments: dict[str, SegmentState] = field(default_factory=dict)
    watermark: float = WATERMARK_NOT_SET
    max_keys: int = 0
    expiry_stats: ExpiryStats = field(default_factory=ExpiryStats)
    inconsistent_rows: int = 0
    got_first_record: bool = False
    scan_mark: float = WATERMARK_NOT_SET
    rotation_mark: float = WATERMARK_NOT_SET
    with_snapshot: set[str] = field(default_factory=set)
    encoder: KeyEncoder = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.settings.enable_snapshot and self.snapshot_dir is None:
            raise InputError("snapshot_dir", "is required when snapshots are enabled")
        if self.snapshot_dir is not None:
            self.snapshot_dir = Path(self.snapshot_dir)
        self.encoder = KeyEncoder(self.settings.primary_key_types, self.settings.hash_function)

    def segment(self, name: str) -> SegmentState:
        """A tracked segment, or one clear error naming it."""
        try:
            return self.segments[name]
        except KeyError:
            raise InputError("segment", f"{name!r} is not tracked by this manager") from None

    def check_new(self, name: str) -> None:
        """Refuse a segment name already tracked (replacing one is a different operation)."""
        if name in self.segments:
            raise InputError("segment", f"{name!r} is already tracked; use replace_segment to replace it")

    def num_keys(self) -> int:
        """Keys in the map (both maps with two-map rotation)."""
        return len(self.key_map) + len(self.old_map)

    def note_peak(self) -> None:
        """Record the current key count if it is a new peak (the table of a ``ConcurrentHashMap`` never shrinks)."""
        self.max_keys = max(self.max_keys, len(self.key_map) + len(self.old_map))

    def raise_watermark(self, value: float) -> None:
        """Raise the watermark to ``value`` (comparison units); Pinot tracks it only with TTL on."""
        if self.settings.ttl_enabled and (value > self.watermark or self.watermark != self.watermark):
            self.watermark = value  # a NaN watermark (never equal to itself) is replaced, never kept

    def out_of_ttl(self, max_value: float) -> bool:
        """Whether a segment with this metadata max is out of metadata TTL at the current watermark."""
        return out_of_metadata_ttl(max_value, self.watermark, self.settings.metadata_ttl)
