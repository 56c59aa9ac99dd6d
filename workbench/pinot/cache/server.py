"""The server segment result cache (RFC §4.2): per-segment partial results, keyed by plan and segment.

Key = table (with type), segment, the segment's epoch, a *plan signature* (the canonical query minus
its time constraint: projection, aggregations, GROUP BY, filter, HAVING, ORDER BY, LIMIT/OFFSET), the
result-changing options, the schema and config epochs, a *time-constraint signature*, and, for a
consuming segment, its end offset.

The time-constraint signature is the RFC's "broker pruning constraints intersected with segment". A
filter's top-level range on the table's time column is clipped to the segment's time range: when the
range covers the whole segment the signature is ``"all"``, so ``ts >= now - 1h`` queries issued a
second apart reuse every segment that lies entirely inside both windows; a range that cuts the segment
keys on the clipped interval. That is exact because a segment's rows all lie within its time range.
It applies when the time column is a single-value whole-number column (its canonical bounds are then
inclusive integers) and the segment's range is known, in the column's own unit.

Safety gates (RFC §3.2, §6.2): offline and sealed realtime segments are cached; consuming segments
and upsert tables are not, and ORDER BY (top-k) results are not (a phase-1 non-goal). Switches in
:class:`~.config.ServerCacheConfig` open each gate for experiments; outdated answers are then counted.

>>> from workbench.pinot.cache.columns import ColumnSpec, DataType
>>> from workbench.pinot.cache.sizing import AggregationPart, FunctionShape
>>> cache = ServerSegmentCache(ServerCacheConfig(enabled=True))
>>> _ = cache.add_table("ev_OFFLINE", schema={"ts": ColumnSpec(DataType.LONG)}, time_column="ts")
>>> _ = cache.on_segment_added("ev_OFFLINE", "ev_0", time_range=(100, 199))
>>> from workbench.pinot.sql import parse_query
>>> plan = cache.prepare(parse_query("SELECT COUNT(*) FROM ev WHERE ts >= 50"), "ev_OFFLINE")
>>> leader = cache.begin(plan, "ev_0", now_ms=0)
>>> _ = cache.complete(leader.flight, AggregationPart((FunctionShape("count"),)), now_ms=3)
>>> later = cache.prepare(parse_query("SELECT COUNT(*) FROM ev WHERE ts >= 90 AND ts < 500"), "ev_OFFLINE")
>>> type(cache.begin(later, "ev_0", now_ms=10)).__name__   # both ranges cover all of ev_0
'Cached'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace

from workbench.pinot.cache.base import Decision, Memo, ResultCache
from workbench.pinot.cache.config import ServerCacheConfig
from workbench.pinot.cache.keys import KeyContext, canonicalize
from workbench.pinot.cache.options import SEGMENT_CACHE_OPTION, cache_allowed
from workbench.pinot.cache.sizing import ResultValue
from workbench.pinot.cache.state import SegmentKind, SegmentState, TableState
from workbench.pinot.sql.query import And, FilterNode, FilterOperator, Identifier, Literal, Predicate, Query

__all__ = ["SegmentCacheKey", "SegmentPlan", "ServerSegmentCache", "TimeConstraint"]

#: ``"all"`` (the constraint covers the segment), ``"none"`` (it excludes the segment),
#: ``"in-plan"`` (not clipped; the time predicates stay in the plan) or the clipped inclusive range.
TimeConstraint = str | tuple[int, int]
_UNBOUNDED = (-math.inf, math.inf)


@dataclass(frozen=True)
class SegmentCacheKey:
    """The server cache key (RFC §4.2's field list; the star-tree signature is covered by the
    config epoch, since star-trees are table config)."""

    table: str
    segment: str
    epoch: int
    plan: str
    schema_epoch: int
    config_epoch: int
    time_constraint: TimeConstraint
    end_offset: int | None


@dataclass(frozen=True)
class SegmentPlan:
    """A query prepared once for all the segments of one table it runs on.

    Attributes
    ----------
    table
        Table name with type.
    query
        The query as received.
    plan
        Plan signature with the time predicates kept (for segments whose range is unknown).
    plan_without_time
        Plan signature with the clippable time predicates removed.
    time_bounds
        Inclusive bounds of the clippable time constraint (infinite when absent), or ``None`` when
        the constraint cannot be clipped.
    """

    table: str
    query: Query
    plan: str
    plan_without_time: str
    time_bounds: tuple[float, float] | None


@dataclass(frozen=True)
class _Request:
    """One lookup's inputs, as the gates read them."""

    config: ServerCacheConfig
    plan: SegmentPlan
    table: TableState | None
    segment: SegmentState | None

    def kind_is(self, kind: SegmentKind) -> bool:
        return self.segment is not None and self.segment.kind is kind


#: Gate registry, checked in order: (reason, blocks-the-cache test).
_GATES: tuple[tuple[str, Callable[[_Request], bool]], ...] = (
    ("disabled", lambda r: not r.config.enabled_for(r.plan.table)),
    ("query-option", lambda r: not cache_allowed(r.plan.query, SEGMENT_CACHE_OPTION)),
    ("unknown-table", lambda r: r.table is None),
    ("unknown-segment", lambda r: r.segment is None),
    ("offline-disabled", lambda r: not r.config.enable_offline and r.kind_is(SegmentKind.OFFLINE)),
    ("sealed-disabled", lambda r: not r.config.enable_realtime_sealed and r.kind_is(SegmentKind.SEALED)),
    ("consuming", lambda r: not r.config.enable_realtime_consuming and r.kind_is(SegmentKind.CONSUMING)),
    ("upsert", lambda r: r.config.disable_for_upsert and r.table is not None and r.table.upsert),
    ("order-by", lambda r: not r.config.cache_order_by and bool(r.plan.query.order_by)),
)


class ServerSegmentCache(ResultCache[ResultValue]):
    """One server's cache of per-segment partial results.

    Use :meth:`prepare` once per (query, table), then :meth:`begin` per segment; a
    :class:`~.flight.Leader` runs the segment's operators and calls :meth:`complete` with an
    :class:`~.sizing.AggregationPart`, :class:`~.sizing.GroupByPart` or :class:`~.sizing.SelectionPart`.
    """

    def __init__(self, config: ServerCacheConfig | None = None) -> None:
        self.server_config = config or ServerCacheConfig()
        super().__init__(self.server_config)
        self._plans: Memo[SegmentPlan] = Memo()

    def _reads_segment(self, key: Hashable, table: str, segment: str) -> bool:
        return isinstance(key, SegmentCacheKey) and key.table == table and key.segment == segment

    def prepare(self, query: Query, table: str) -> SegmentPlan:
        """Canonicalise ``query`` for ``table`` (name with type) and split off its time constraint."""
        state = self.view.table(table)
        epochs = (state.schema_epoch, state.config_epoch) if state is not None else None
        return self._plans.get((query, table, epochs), lambda: self._plan(query, table, state))

    def _plan(self, query: Query, table: str, state: TableState | None) -> SegmentPlan:
        ctx = KeyContext(state.schema if state is not None else None)
        canonical = canonicalize(query, ctx)
        bounds, rest = _split_time_constraint(canonical.filter, state, ctx)
        without = canonical if bounds is None else replace(canonical, filter=rest)
        return SegmentPlan(table, query, canonical.to_sql(), without.to_sql(), bounds)

    def begin(self, plan: SegmentPlan, segment: str, now_ms: float) -> Decision[ResultValue]:
        """Look one segment's partial result up (see :class:`~.base.ResultCache` for the decisions)."""
        table, state = self.view.table(plan.table), self.view.segment(plan.table, segment)
        request = _Request(self.server_config, plan, table, state)
        blocked = next((reason for reason, blocks in _GATES if blocks(request)), None)
        if blocked is not None:
            return self._bypass(plan.table, blocked)
        assert request.table is not None and request.segment is not None
        key = self._key(plan, request.table, request.segment)
        return self._begin(key, plan.table, ((plan.table, segment),), now_ms)

    def key_for(self, plan: SegmentPlan, segment: str) -> SegmentCacheKey:
        """The key a lookup of ``segment`` would use (table and segment must be registered)."""
        table, state = self.view.table(plan.table), self.view.segment(plan.table, segment)
        if table is None or state is None:
            raise KeyError(f"segment {segment!r} of {plan.table!r} is not registered")
        return self._key(plan, table, state)

    def _key(self, plan: SegmentPlan, table: TableState, segment: SegmentState) -> SegmentCacheKey:
        signature, constraint = clip_time_constraint(plan, segment.time_range)
        offset_in_key = segment.kind is SegmentKind.CONSUMING and self.server_config.consuming_key_includes_offset
        return SegmentCacheKey(
            table=plan.table, segment=segment.name, epoch=segment.epoch, plan=signature,
            schema_epoch=table.schema_epoch, config_epoch=table.config_epoch, time_constraint=constraint,
            end_offset=segment.end_offset if offset_in_key else None,
        )


def clip_time_constraint(plan: SegmentPlan, time_range: tuple[int, int] | None) -> tuple[str, TimeConstraint]:
    """The plan signature and time-constraint signature for a segment with ``time_range``.

    >>> from workbench.pinot.sql import parse_query
    >>> plan = SegmentPlan("t", parse_query("SELECT 1 FROM t"), "p+time", "p", (10.0, 20.0))
    >>> [clip_time_constraint(plan, r)[1] for r in ((12, 18), (0, 15), (30, 40), None)]
    ['all', (10, 15), 'none', 'in-plan']
    """
    if plan.time_bounds is None or time_range is None:
        return plan.plan, "in-plan"
    (low, high), (start, end) = plan.time_bounds, time_range
    clipped_low, clipped_high = max(low, start), min(high, end)
    if clipped_low > clipped_high:
        return plan.plan_without_time, "none"
    if (clipped_low, clipped_high) == (start, end):
        return plan.plan_without_time, "all"
    return plan.plan_without_time, (int(clipped_low), int(clipped_high))


# -- finding the time constraint ----------------------------------------------------------------

_BOUND_OPERATORS = frozenset({FilterOperator.EQ, FilterOperator.GTE, FilterOperator.LTE, FilterOperator.BETWEEN})


def _split_time_constraint(node: FilterNode | None, table: TableState | None, ctx: KeyContext
                           ) -> tuple[tuple[float, float] | None, FilterNode | None]:
    """Split a canonical filter into (inclusive time bounds, the rest) when the time column allows it."""
    column = table.time_column if table is not None else None
    spec = ctx.single_value_spec(Identifier(column)) if column else None
    if column is None or spec is None or not spec.data_type.is_integral:
        return None, node
    children = list(node.children) if isinstance(node, And) else ([] if node is None else [node])
    timed = [c for c in children if _is_time_bound(c, column)]
    rest = [c for c in children if c not in timed]
    bounds = _intersect(timed)
    return bounds, (None if not rest else rest[0] if len(rest) == 1 else And(tuple(rest)))


def _is_time_bound(node: FilterNode, column: str) -> bool:
    return (isinstance(node, Predicate) and node.lhs == Identifier(column) and node.operator in _BOUND_OPERATORS
            and all(isinstance(v, Literal) and type(v.value) is int for v in node.values))


def _intersect(predicates: list[FilterNode]) -> tuple[float, float]:
    low, high = _UNBOUNDED
    for p in predicates:
        assert isinstance(p, Predicate)
        values = [v.value for v in p.values if isinstance(v, Literal) and isinstance(v.value, int)]
        p_low, p_high = _PREDICATE_BOUNDS[p.operator](values)
        low, high = max(low, p_low), min(high, p_high)
    return low, high


#: Inclusive bounds of each canonical time predicate (ints stay ints: float would round epoch nanos).
_PREDICATE_BOUNDS: dict[FilterOperator, Callable[[list[int]], tuple[float, float]]] = {
    FilterOperator.EQ: lambda v: (v[0], v[0]),
    FilterOperator.GTE: lambda v: (v[0], math.inf),
    FilterOperator.LTE: lambda v: (-math.inf, v[0]),
    FilterOperator.BETWEEN: lambda v: (v[0], v[1]),
}
