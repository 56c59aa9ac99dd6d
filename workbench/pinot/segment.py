"""Segment metadata as the broker's segment pruners see it.

Pinot's broker does not open segments to prune them: each pruner reads a handful of fields of the
segment's ZooKeeper metadata record (a ZNRecord's *simple fields*) and caches what it needs. This
module keeps exactly those fields in a small frozen dataclass, so that pruners, workload generators
and notebooks can build segment sets without a ZooKeeper dump, and reads them from a dump when there is
one (:meth:`SegmentMetadata.from_zk_metadata`).

>>> seg = SegmentMetadata.from_zk_metadata("events_0", {
...     "segment.start.time": "10", "segment.end.time": "60", "segment.time.unit": "DAYS",
...     "segment.total.docs": "1000",
...     "segment.partition.metadata": '{"columnPartitionMap": {"memberId": {"functionName": "Modulo",'
...                                   ' "numPartitions": 4, "partitions": [1, 3]}}}'})
>>> seg.start_time_ms, seg.end_time_ms, seg.total_docs
(864000000, 5184000000, 1000)
>>> seg.partitions["memberId"].partitions
frozenset({1, 3})
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from workbench.errors import InputError

__all__ = [
    "ZK_END_TIME",
    "ZK_PARTITION_METADATA",
    "ZK_START_TIME",
    "ZK_TIME_UNIT",
    "ZK_TOTAL_DOCS",
    "ColumnPartitionMetadata",
    "SegmentMetadata",
    "check_segment_name",
    "time_unit_to_millis",
]

_LOG = logging.getLogger(__name__)

# Simple-field names of a segment's ZK metadata record (Pinot's CommonConstants.Segment).
ZK_START_TIME = "segment.start.time"
ZK_END_TIME = "segment.end.time"
ZK_TIME_UNIT = "segment.time.unit"
ZK_TOTAL_DOCS = "segment.total.docs"
ZK_PARTITION_METADATA = "segment.partition.metadata"

#: java.util.concurrent.TimeUnit names as (millis per unit, units per milli); exactly one is not 1.
_TIME_UNITS: dict[str, tuple[int, int]] = {
    "NANOSECONDS": (1, 1_000_000),
    "MICROSECONDS": (1, 1_000),
    "MILLISECONDS": (1, 1),
    "SECONDS": (1_000, 1),
    "MINUTES": (60_000, 1),
    "HOURS": (3_600_000, 1),
    "DAYS": (86_400_000, 1),
}
_LONG_MAX = 2**63 - 1
_LONG_MIN = -(2**63)
#: What may not appear in a segment name: it names a directory on a server (Pinot's segment directory,
#: where validDocIds snapshots live), so a separator or ``..`` would escape the table's directory.
_PATH_UNSAFE = re.compile(r"[/\\\x00-\x1f]")


def check_segment_name(name: object, where: str = "segment name") -> str:
    """``name`` if it can safely name a segment directory; else an :class:`InputError` at ``where``.

    >>> check_segment_name("events__0__12__20260101T0000Z")
    'events__0__12__20260101T0000Z'
    >>> check_segment_name("../../etc")
    Traceback (most recent call last):
    ...
    workbench.errors.InputError: segment name: '../../etc' cannot name a segment directory (no slashes, \
backslashes, control characters, '.' or '..')
    """
    if not isinstance(name, str) or not name or name in (".", "..") or _PATH_UNSAFE.search(name):
        raise InputError(where, f"{name!r} cannot name a segment directory (no slashes, backslashes, control "
                                "characters, '.' or '..')")
    return name


def time_unit_to_millis(value: int, unit: str) -> int:
    """Convert ``value`` in a Java ``TimeUnit`` to epoch millis, as ``TimeUnit.toMillis`` does.

    Finer units truncate toward zero and coarser ones saturate at the 64-bit limits, which is what
    Java does, so out-of-range inputs land where Pinot would put them.

    >>> time_unit_to_millis(2, "days"), time_unit_to_millis(-1500, "MICROSECONDS")
    (172800000, -1)
    """
    try:
        per_unit, per_milli = _TIME_UNITS[unit.upper()]
    except KeyError:
        allowed = ", ".join(_TIME_UNITS)
        raise InputError(ZK_TIME_UNIT, f"unknown time unit {unit!r}; use one of {allowed}") from None
    if per_milli > 1:
        quotient = abs(value) // per_milli
        return quotient if value >= 0 else -quotient
    return max(_LONG_MIN, min(_LONG_MAX, value * per_unit))


@dataclass(frozen=True)
class ColumnPartitionMetadata:
    """One column's entry of a segment's partition metadata.

    Parameters
    ----------
    function_name
        Partition function name as Pinot registers it (``Modulo``, ``Murmur``, ``Murmur3``, ...);
        matched case-insensitively by :func:`workbench.pinot.partition.get_partition_function`.
    num_partitions
        The function's partition count *when this segment was written*; it may differ between
        segments of one table, and the partition pruner honours each segment's own value.
    partitions
        Every partition id seen among the column's values in this segment (a set: a segment can
        hold rows of several partitions). Any set is accepted and stored as a ``frozenset``.
    function_config
        Extra function settings (``columnValues``, ``seed``, ``partitionIdNormalizer``, ...).
    """

    function_name: str
    num_partitions: int
    partitions: AbstractSet[int]
    function_config: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if self.num_partitions < 1:
            raise InputError("numPartitions", f"must be at least 1, got {self.num_partitions}")
        object.__setattr__(self, "partitions", frozenset(self.partitions))
        if self.function_config is not None:
            object.__setattr__(self, "function_config", MappingProxyType(dict(self.function_config)))

    def __hash__(self) -> int:
        return hash((self.function_name, self.num_partitions, self.partitions, self.function_key))

    @property
    def function_key(self) -> tuple[str, int, tuple[tuple[str, str], ...]]:
        """A hashable identity of the partition function (lower-cased name, count, sorted config).

        Segments sharing a key share one function object in the partition pruner.
        """
        config = tuple(sorted((self.function_config or {}).items()))
        return (self.function_name.lower(), self.num_partitions, config)

    def to_json(self) -> dict[str, Any]:
        """The entry as Pinot writes it inside ``segment.partition.metadata``."""
        return {
            "functionName": self.function_name,
            "numPartitions": self.num_partitions,
            "partitions": sorted(self.partitions),
            "functionConfig": None if self.function_config is None else dict(self.function_config),
        }


def _empty_partitions() -> Mapping[str, ColumnPartitionMetadata]:
    return MappingProxyType({})


@dataclass(frozen=True)
class SegmentMetadata:
    """The ZK metadata fields the broker pruners read for one segment.

    Parameters
    ----------
    name
        Segment name.
    start_time_ms, end_time_ms
        The segment's time range in epoch millis, both ends inclusive, or ``None`` when the segment
        has none (consuming segments). A range with a negative end or start > end is kept as given;
        the time pruner treats it as "no range" exactly as Pinot does.
    total_docs
        ``segment.total.docs``; ``-1`` (Pinot's value when unknown, e.g. a consuming segment) is never
        treated as empty, only ``0`` is.
    partitions
        Partition metadata per column; an empty mapping means "no partition metadata", which makes
        the partition pruner keep the segment for every query.
    """

    name: str
    start_time_ms: int | None = None
    end_time_ms: int | None = None
    total_docs: int = -1
    partitions: Mapping[str, ColumnPartitionMetadata] = field(default_factory=_empty_partitions)

    def __post_init__(self) -> None:
        object.__setattr__(self, "partitions", MappingProxyType(dict(self.partitions)))

    def __hash__(self) -> int:
        return hash((self.name, self.start_time_ms, self.end_time_ms, self.total_docs))

    @property
    def time_range(self) -> tuple[int, int] | None:
        """``(start, end)`` in millis when the time pruner can use it, else ``None``.

        Usable means both ends known, non-negative and start <= end; anything else is what Pinot
        gives the default "always matches" interval.
        """
        start, end = self.start_time_ms, self.end_time_ms
        if start is None or end is None or not 0 <= start <= end:
            return None
        return (start, end)

    @classmethod
    def from_zk_metadata(cls, name: str, simple_fields: Mapping[str, str]) -> SegmentMetadata:
        """Read a segment's ZK record (its ZNRecord simple fields) the way the broker pruners do.

        Times are converted to millis with ``segment.time.unit`` (DAYS when absent). Numbers that
        do not parse count as absent (-1), as Helix's ``getLongField`` returns its default then.
        Partition metadata that does not parse is logged and treated as absent, which is the
        pruner's "invalid" marker: such a segment is never pruned by partition.

        Raises
        ------
        InputError
            When ``segment.time.unit`` names no Java ``TimeUnit``.
        """
        unit = simple_fields.get(ZK_TIME_UNIT) or "DAYS"
        start = _long_field(simple_fields, ZK_START_TIME)
        end = _long_field(simple_fields, ZK_END_TIME)
        return cls(
            name=name,
            start_time_ms=None if start < 0 else time_unit_to_millis(start, unit),
            end_time_ms=None if end < 0 else time_unit_to_millis(end, unit),
            total_docs=_long_field(simple_fields, ZK_TOTAL_DOCS),
            partitions=_read_partition_metadata(name, simple_fields.get(ZK_PARTITION_METADATA)),
        )

    def to_zk_metadata(self) -> dict[str, str]:
        """The simple fields :meth:`from_zk_metadata` reads back to an equal object (times in millis)."""
        fields = {ZK_TOTAL_DOCS: str(self.total_docs), ZK_TIME_UNIT: "MILLISECONDS"}
        if self.start_time_ms is not None:
            fields[ZK_START_TIME] = str(self.start_time_ms)
        if self.end_time_ms is not None:
            fields[ZK_END_TIME] = str(self.end_time_ms)
        if self.partitions:
            cmap = {column: entry.to_json() for column, entry in self.partitions.items()}
            fields[ZK_PARTITION_METADATA] = json.dumps({"columnPartitionMap": cmap})
        return fields


def _long_field(simple_fields: Mapping[str, str], key: str) -> int:
    try:
        return int(str(simple_fields.get(key, "-1")).strip())
    except ValueError:
        return -1


_RANGE = re.compile(r"\[\s*(-?\d+)\s+(-?\d+)\s*\]")


def _legacy_ranges(text: str) -> frozenset[int]:
    """Expand the legacy ``"[0 1],[5 5]"`` form (inclusive ranges) into a set of partition ids."""
    ids: set[int] = set()
    for low, high in _RANGE.findall(text):
        ids.update(range(int(low), int(high) + 1))
    return frozenset(ids)


def _column_entry(raw: Mapping[str, Any]) -> ColumnPartitionMetadata:
    if "partitions" in raw and raw["partitions"] is not None:
        partitions = frozenset(int(p) for p in raw["partitions"])
    else:
        partitions = _legacy_ranges(str(raw.get("partitionRanges", "")))
    config = raw.get("functionConfig")
    return ColumnPartitionMetadata(
        function_name=str(raw["functionName"]),
        num_partitions=int(raw["numPartitions"]),
        partitions=partitions,
        function_config=None if config is None else {str(k): str(v) for k, v in config.items()},
    )


def _read_partition_metadata(segment: str, text: str | None) -> Mapping[str, ColumnPartitionMetadata]:
    if not text:
        return MappingProxyType({})
    try:
        cmap = json.loads(text)["columnPartitionMap"]
        return MappingProxyType({str(col): _column_entry(entry) for col, entry in cmap.items()})
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        _LOG.warning(
            "segment %s: unreadable %s (%s); it will never be pruned by partition", segment, ZK_PARTITION_METADATA, exc
        )
        return MappingProxyType({})
