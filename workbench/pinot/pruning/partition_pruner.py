"""The broker's partition pruners: keep segments holding the partitions of the query's EQ/IN values.

Behaviour (``shared/reference/pinot-behaviour.md`` section 2.3):

* Each segment is judged with the partition function named in **its own** metadata (name, count and
  config), so segments written under different partition counts or functions are each pruned right.
* A segment whose record is missing is kept, and its record is re-read on the next assignment change.
  A segment with no partition metadata, unreadable metadata or no entry for the column carries the
  "invalid" marker and is kept by every query.
* ``col = v`` matches when ``partition(v)`` is in the segment's partition set, ``col IN (...)`` when
  any value's partition is; AND needs every child, OR one child; NOT and every other predicate match.

Pinot evaluates the filter segment by segment. Here every (function, partition) pair owns a roaring
bitmap of segment ids, so a query costs a few bitmap unions and intersections whatever the segment
count, and the answer is the same.

>>> from workbench.pinot.sql.query import Query
>>> from workbench.pinot.segment import ColumnPartitionMetadata as Part, SegmentMetadata
>>> pruner = SinglePartitionColumnSegmentPruner("memberId")
>>> pruner.init({"s0": SegmentMetadata("s0", partitions={"memberId": Part("Modulo", 4, {1})}),
...              "s1": SegmentMetadata("s1", partitions={"memberId": Part("Modulo", 4, {2})})})
>>> from workbench.pinot.sql import parse_query
>>> pruner.prune(parse_query("SELECT * FROM t WHERE memberId = 5"), ("s0", "s1"))
('s0',)
>>> pruner.prune(parse_query("SELECT * FROM t WHERE memberId IN (5, 6) OR x = 1"), ("s0", "s1"))
('s0', 's1')
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

import numpy as np
from pyroaring import BitMap

from workbench.pinot.pruning.base import RegistryPruner, as_tuple
from workbench.pinot.segment import ColumnPartitionMetadata, SegmentMetadata
from workbench.pinot.sql.query import And, FilterNode, FilterOperator, Literal, Not, Or, Predicate, Query

__all__ = [
    "MultiPartitionColumnsSegmentPruner",
    "PartitionSegmentPruner",
    "SinglePartitionColumnSegmentPruner",
]

_LOG = logging.getLogger(__name__)
FunctionKey: TypeAlias = tuple[str, int, tuple[tuple[str, str], ...]]
#: The operators the broker prunes on; anything else keeps the segment.
PRUNABLE_OPERATORS = frozenset({FilterOperator.EQ, FilterOperator.IN})
#: What a predicate query-time lookup may raise for a literal the function cannot read (e.g. Modulo
#: of ``'abc'``); the workbench then keeps the segments of that function rather than failing.
_LOOKUP_ERRORS = (ValueError, TypeError, ArithmeticError)


class PartitionFunction(Protocol):
    """What the pruner needs from :func:`workbench.pinot.partition.get_partition_function`."""

    def get_partition(self, value: str) -> int:
        """The partition id of a value given as Pinot's string form."""
        ...


def _build_function(key: FunctionKey, entry: ColumnPartitionMetadata) -> PartitionFunction | None:
    from workbench.pinot.partition import get_partition_function

    try:
        function: PartitionFunction = get_partition_function(
            entry.function_name, entry.num_partitions, entry.function_config
        )
    except (ValueError, TypeError, KeyError) as exc:
        _LOG.warning("partition function %s cannot be built (%s); its segments are never pruned", key, exc)
        return None
    return function


@dataclass
class _FunctionGroup:
    """Segments of one column sharing one partition function, indexed by partition id."""

    function: PartitionFunction
    members: Any = field(default_factory=BitMap)
    by_partition: dict[int, Any] = field(default_factory=dict)

    def add(self, sid: int, partitions: Iterable[int]) -> None:
        self.members.add(sid)
        for p in partitions:
            self.by_partition.setdefault(p, BitMap()).add(sid)

    def discard(self, sid: int, partitions: Iterable[int]) -> None:
        self.members.discard(sid)
        for p in partitions:
            self.by_partition[p].discard(sid)

    def matching(self, values: Sequence[str]) -> Any:
        try:
            wanted = {self.function.get_partition(v) for v in values}
        except _LOOKUP_ERRORS:
            return self.members
        return BitMap.union(BitMap(), *(self.by_partition[p] for p in wanted if p in self.by_partition))


class _ColumnIndex:
    """One partition column: its function groups and the segments that can never be pruned on it."""

    def __init__(self) -> None:
        self.groups: dict[FunctionKey, _FunctionGroup] = {}
        self.unprunable = BitMap()

    def add(self, sid: int, entry: ColumnPartitionMetadata | None, functions: _FunctionCache) -> None:
        function = None if entry is None else functions.get(entry)
        if entry is None or function is None:
            self.unprunable.add(sid)
            return
        self.groups.setdefault(entry.function_key, _FunctionGroup(function)).add(sid, entry.partitions)

    def discard(self, sid: int, entry: ColumnPartitionMetadata | None) -> None:
        self.unprunable.discard(sid)
        group = None if entry is None else self.groups.get(entry.function_key)
        if group is not None and entry is not None:
            group.discard(sid, entry.partitions)

    def matching(self, values: Sequence[str]) -> Any:
        return BitMap.union(self.unprunable, *(g.matching(values) for g in self.groups.values()))


class _FunctionCache:
    """One function object per (name, count, config): thousands of segments share a handful."""

    def __init__(self) -> None:
        self._functions: dict[FunctionKey, PartitionFunction | None] = {}

    def get(self, entry: ColumnPartitionMetadata) -> PartitionFunction | None:
        key = entry.function_key
        if key not in self._functions:
            self._functions[key] = _build_function(key, entry)
        return self._functions[key]


#: Per segment: column -> its entry (``None``: no entry, the invalid marker), or ``None`` for a
#: missing record.
_SegmentInfo: TypeAlias = Mapping[str, ColumnPartitionMetadata | None] | None


class PartitionSegmentPruner(RegistryPruner):
    """Prune by EQ/IN predicates on one or more partition columns.

    Parameters
    ----------
    columns
        The partition columns (``tableIndexConfig.segmentPartitionConfig.columnPartitionMap`` keys).

    Notes
    -----
    Pinot has one class for a single column and one for several; their rules coincide (a segment
    without info for a column matches every predicate on it), so both are this class, and the two
    names below exist for readers of Pinot's code.
    """

    def __init__(self, columns: Iterable[str]) -> None:
        super().__init__()
        self.columns = tuple(columns)
        if not self.columns:
            raise ValueError("a partition pruner needs at least one partition column")
        self._index = {column: _ColumnIndex() for column in self.columns}
        self._info: dict[int, _SegmentInfo] = {}
        self._missing = BitMap()
        self._functions = _FunctionCache()

    # -- cache ----------------------------------------------------------------------------------
    def _load(self, sid: int, record: SegmentMetadata | None) -> None:
        if record is None:
            self._info[sid] = None
            self._missing.add(sid)
            return
        info = {column: record.partitions.get(column) for column in self.columns}
        self._info[sid] = info
        for column, entry in info.items():
            self._index[column].add(sid, entry, self._functions)

    def _unload(self, sid: int) -> None:
        info = self._info.pop(sid)
        self._missing.discard(sid)
        for column, entry in (info or {}).items():
            self._index[column].discard(sid, entry)

    def _stale(self) -> list[str]:
        """Segments whose record was missing: Pinot retries them on the next assignment change."""
        return [name for name, sid in self._ids.items() if sid in self._missing]

    # -- query ----------------------------------------------------------------------------------
    def prune(self, query: Query, segments: Sequence[str]) -> tuple[str, ...]:
        """Keep the segments that may hold the filter's partition values, in input order."""
        matched = None if query.filter is None else self.matching_ids(query.filter)
        if matched is None:
            return as_tuple(segments)
        hits = np.frombuffer(matched.to_array(), dtype=np.uint32)
        return self._select(segments, hits, keep_unknown=True)

    def matching_ids(self, node: FilterNode) -> Any:
        """Bitmap of registered segment ids the filter may match, or ``None`` for "all of them"."""
        match node:
            case Predicate():
                return self._predicate(node)
            case And():
                parts = [m for m in (self.matching_ids(c) for c in node.children) if m is not None]
                return BitMap.intersection(*parts) if parts else None
            case Or():
                parts = [self.matching_ids(c) for c in node.children]
                return None if any(p is None for p in parts) else BitMap.union(BitMap(), *parts)
            case Not():
                return None

    def _predicate(self, node: Predicate) -> Any:
        column = node.column
        if column not in self._index or node.operator not in PRUNABLE_OPERATORS:
            return None
        if not all(isinstance(v, Literal) for v in node.values):
            return None
        strings = [v.to_pinot_string() for v in node.values if isinstance(v, Literal)]
        return self._index[column].matching(strings) | self._missing


class SinglePartitionColumnSegmentPruner(PartitionSegmentPruner):
    """Pinot's pruner for a table with exactly one partition column."""

    def __init__(self, column: str) -> None:
        super().__init__((column,))


class MultiPartitionColumnsSegmentPruner(PartitionSegmentPruner):
    """Pinot's pruner for a table with several partition columns."""
