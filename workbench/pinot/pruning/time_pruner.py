"""The broker's time pruner: keep only segments whose time range meets the query's time filter.

Behaviour (``shared/reference/pinot-behaviour.md`` section 2.2):

* Each segment's range is read from its metadata in millis. A segment with no record, no range, a
  negative end or start > end gets ``[0, MAX_TIME]`` and is never pruned.
* The filter becomes a sorted list of disjoint intervals, or ``None`` ("cannot prune"), or ``[]``
  ("matches nothing", which prunes every segment). See :meth:`TimeSegmentPruner.filter_intervals`;
  NOT is complemented soundly where Pinot's rule can drop matching rows (see ``_bounds``).
* Segments not registered with the pruner are dropped from the input when it prunes, as in Pinot
  (every online segment is registered in practice).

>>> from workbench.pinot.sql.query import Query
>>> from workbench.pinot.segment import SegmentMetadata
>>> DAY = 86_400_000
>>> pruner = TimeSegmentPruner("ts", "EPOCH|DAYS")
>>> pruner.init({s.name: s for s in (SegmentMetadata("s0", 10 * DAY, 60 * DAY),
...                                  SegmentMetadata("s1", 20 * DAY, 30 * DAY),
...                                  SegmentMetadata("s2", 50 * DAY, 65 * DAY))})
>>> from workbench.pinot.sql import parse_query
>>> pruner.prune(parse_query("SELECT * FROM t WHERE ts < 15 OR ts > 45"), ("s0", "s1", "s2"))
('s0', 's2')
>>> pruner.filter_intervals(parse_query("SELECT * FROM t WHERE ts BETWEEN 1 AND 2").filter)
[(86400000, 172800000)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from typing import TypeAlias

from workbench.pinot.pruning.base import RegistryPruner, as_tuple
from workbench.pinot.pruning.interval import MAX_TIME, Interval, IntervalTree, complement, intersect, union
from workbench.pinot.pruning.timeformat import DateTimeFormat
from workbench.pinot.segment import SegmentMetadata
from workbench.pinot.sql.query import And, FilterNode, FilterOperator, Literal, Not, Or, Predicate, Query

__all__ = ["DEFAULT_INTERVAL", "TimeSegmentPruner"]

#: The interval of a segment without a usable time range: it meets every non-empty filter.
DEFAULT_INTERVAL: Interval = (0, MAX_TIME)
Intervals: TypeAlias = list[Interval] | None
#: (superset or None for "any time", subset) of the time values a filter's matching rows can have.
Bounds: TypeAlias = tuple[Intervals, list[Interval]]


def _bounded(lo: int, hi: int) -> list[Interval]:
    return [(lo, hi)] if lo <= hi else []


#: Predicate operator -> intervals from the literal values already converted to millis.
_RANGE_RULES: dict[FilterOperator, Callable[[list[int]], list[Interval]]] = {
    FilterOperator.EQ: lambda t: [(t[0], t[0])],
    FilterOperator.IN: lambda t: union([[(v, v)] for v in t]),
    FilterOperator.GT: lambda t: _bounded(t[0] + 1, MAX_TIME),
    FilterOperator.GTE: lambda t: _bounded(t[0], MAX_TIME),
    FilterOperator.LT: lambda t: _bounded(0, t[0] - 1),
    FilterOperator.LTE: lambda t: _bounded(0, t[0]),
    FilterOperator.BETWEEN: lambda t: _bounded(t[0], t[1]),
}


def _and_bounds(parts: list[Bounds]) -> Bounds:
    known = [superset for superset, _ in parts if superset is not None]
    superset = reduce(intersect, known) if known else None
    return superset, reduce(intersect, [subset for _, subset in parts], [DEFAULT_INTERVAL])


def _or_bounds(parts: list[Bounds]) -> Bounds:
    supersets = [superset for superset, _ in parts]
    superset = None if any(s is None for s in supersets) else union(s for s in supersets if s is not None)
    return superset, union(subset for _, subset in parts)


class TimeSegmentPruner(RegistryPruner):
    """Prune segments by the time column's filter, with an interval tree over segment ranges.

    Parameters
    ----------
    time_column
        ``segmentsConfig.timeColumnName``; only predicates whose left side is exactly this column
        are understood (``func(ts) > x`` is not, as in Pinot).
    time_format
        The column's schema format (``EPOCH|MILLISECONDS``, ``1:DAYS:EPOCH``,
        ``SIMPLE_DATE_FORMAT|yyyyMMdd``...), used to turn literals into millis.
    data_type
        The column's schema ``dataType``; a ``TIMESTAMP`` column is always read as TIMESTAMP (strings
        like ``'2020-01-31 00:00:00'`` or millis), whatever ``time_format`` says, as in Pinot.
    """

    def __init__(self, time_column: str, time_format: DateTimeFormat | str, data_type: str | None = None) -> None:
        super().__init__()
        self.time_column = time_column
        if isinstance(time_format, str):
            time_format = DateTimeFormat.for_field(time_format, data_type)
        elif data_type is not None and data_type.upper() == "TIMESTAMP":
            time_format = DateTimeFormat("TIMESTAMP")
        self.time_format = time_format
        self._intervals: dict[int, Interval] = {}
        self._tree: IntervalTree | None = None

    # -- cache ----------------------------------------------------------------------------------
    def _load(self, sid: int, record: SegmentMetadata | None) -> None:
        time_range = None if record is None else record.time_range
        self._intervals[sid] = DEFAULT_INTERVAL if time_range is None else time_range
        self._tree = None

    def _unload(self, sid: int) -> None:
        del self._intervals[sid]
        self._tree = None

    def interval_of(self, name: str) -> Interval:
        """The cached interval of a registered segment (``DEFAULT_INTERVAL`` when it has none)."""
        return self._intervals[self._ids[name]]

    def _index(self) -> IntervalTree:
        """The interval tree, rebuilt after any change (Pinot rebuilds on every change too)."""
        if self._tree is None:
            self._tree = IntervalTree(self._intervals)
        return self._tree

    # -- query ----------------------------------------------------------------------------------
    def prune(self, query: Query, segments: Sequence[str]) -> tuple[str, ...]:
        """Keep the segments whose range meets the filter's intervals, in input order."""
        intervals = None if query.filter is None else self.filter_intervals(query.filter)
        if intervals is None:
            return as_tuple(segments)
        if not intervals:
            return ()
        hits = self._index().search_all(intervals)
        return self._select(segments, hits, keep_unknown=False)

    def filter_intervals(self, node: FilterNode) -> Intervals:
        """Translate a filter tree into millis intervals: a sorted disjoint list, ``None`` or ``[]``.

        ``None`` means the filter says nothing usable about time (keep everything); ``[]`` means no
        time value can match (prune everything). The list covers every time value a matching row
        can have, so pruning with it never drops a segment holding a matching row. Times are taken
        to be non-negative epoch values, as Pinot's pruner takes them.
        """
        return self._bounds(node)[0]

    def certain_intervals(self, node: FilterNode) -> list[Interval]:
        """The millis intervals every row in which matches ``node``, whatever its other columns (sorted, disjoint;
        ``[]``: none is certain). A segment whose time values all lie inside them has a filter that matches all of
        its rows (a server then answers it without reading them:
        :func:`~workbench.pinot.aggregation_plan.answers_from_metadata`)."""
        return list(self._bounds(node)[1])

    def _bounds(self, node: FilterNode) -> Bounds:
        """``(superset, subset)`` of the time values of rows that can match ``node``.

        The superset follows Pinot's rules (AND ignores children it cannot read, OR and NOT give up
        on them). NOT is where the workbench departs: Pinot complements the child's *superset*, so
        ``NOT (ts > 100 AND country = 'us')`` becomes ``ts <= 100`` and drops segments holding
        newer non-US rows. Complementing the child's *subset* instead is sound, and it equals Pinot's
        answer whenever the child's list is exact (every filter in the reference's tests).
        """
        match node:
            case Predicate():
                exact = self._predicate(node)
                return exact, [] if exact is None else exact
            case And():
                return _and_bounds([self._bounds(c) for c in node.children])
            case Or():
                return _or_bounds([self._bounds(c) for c in node.children])
            case Not():
                superset, subset = self._bounds(node.child)
                if superset is None:
                    return None, []
                return complement(subset), complement(superset)

    def _predicate(self, node: Predicate) -> Intervals:
        rule = _RANGE_RULES.get(node.operator)
        if rule is None or node.column != self.time_column:
            return None
        millis = self._literal_millis(node)
        return None if millis is None else rule(millis)

    def _literal_millis(self, node: Predicate) -> list[int] | None:
        """Each literal in millis; ``None`` when one cannot be read (the pruner then keeps all).

        Pinot accepts INT, LONG and STRING literals only and fails the query on others; the
        workbench keeps every segment instead, the answer that can never drop a matching row.
        """
        out = []
        for value in node.values:
            if not isinstance(value, Literal) or not isinstance(value.value, int | str):
                return None
            if isinstance(value.value, bool):
                return None
            try:
                out.append(self.time_format.to_millis(value.to_pinot_string()))
            except ValueError:
                return None
        return out
