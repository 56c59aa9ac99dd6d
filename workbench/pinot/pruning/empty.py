"""The broker's empty-segment pruner: drop segments whose metadata says they hold no rows.

Only ``total_docs == 0`` counts as empty. ``-1`` (unknown: consuming segments, errors, a missing
record) is kept, because routing a query to a segment that turns out empty costs little while
dropping one that has rows loses data (``shared/reference/pinot-behaviour.md`` section 2.4).

>>> from workbench.pinot.sql.query import Query
>>> from workbench.pinot.segment import SegmentMetadata
>>> pruner = EmptySegmentPruner()
>>> pruner.init({n: SegmentMetadata(n, total_docs=d) for n, d in (("s0", 10), ("s1", 0), ("s2", -1))})
>>> from workbench.pinot.sql import parse_query
>>> pruner.prune(parse_query("SELECT COUNT(*) FROM t"), ("s0", "s1", "s2"))
('s0', 's2')
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.pinot.pruning.base import RegistryPruner, as_tuple
from workbench.pinot.segment import SegmentMetadata
from workbench.pinot.sql.query import Query

__all__ = ["EmptySegmentPruner"]


class EmptySegmentPruner(RegistryPruner):
    """Drop segments with zero total docs; the answer does not depend on the query.

    Because the answer only changes when the empty set does, the result for a given input tuple is
    memoised and the same tuple object is returned again, as Pinot memoises on the input set.
    """

    def __init__(self) -> None:
        super().__init__()
        self._empty: set[str] = set()
        self._memo: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    def _load(self, sid: int, record: SegmentMetadata | None) -> None:
        if record is not None and record.total_docs == 0:
            self._empty.add(self._name_of[sid])
        self._memo = None

    def _unload(self, sid: int) -> None:
        self._empty.discard(self._name_of[sid])
        self._memo = None

    @property
    def empty_segments(self) -> frozenset[str]:
        """The registered segments currently known to be empty."""
        return frozenset(self._empty)

    def prune(self, query: Query, segments: Sequence[str]) -> tuple[str, ...]:
        """The input minus the empty segments, in input order."""
        if not self._empty:
            return as_tuple(segments)
        if self._memo is not None and self._memo[0] is segments:
            return self._memo[1]
        kept = tuple(s for s in segments if s not in self._empty)
        if isinstance(segments, tuple):
            self._memo = (segments, kept)
        return kept
