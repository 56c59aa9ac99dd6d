"""Reference evaluation of a query on segment rows: per-segment partial results and the broker's merge.

This is not the timing model of query execution (scheduler, runner and worker threads live in
:mod:`workbench.sim`): the simulator only models a query's *cost*. This module computes its *answer*, so that the
result caches (:mod:`workbench.pinot.cache`) can be checked end to end: with caches on, every query
must return exactly what it returns with caches off, however the table churns. It follows Pinot's
two-phase shape (``pinot-execution.md`` §5): each server reduces every segment to an intermediate
result (:func:`segment_result`), and the broker combines those and finalises them (:func:`merge`).

Supported: ``COUNT``, ``SUM``, ``MIN``, ``MAX`` and ``AVG`` with or without ``GROUP BY`` (on one or more
plain columns), selections without ``ORDER BY``, ``LIMIT``/``OFFSET``, and filters on any column with
every comparison, list, range, null and pattern operator. Anything else raises
:class:`~workbench.errors.InputError` rather than returning a plausible but wrong answer.

Results are plain Python values (``int``, ``float``, ``str``, ``None``), so two answers compare with
``==``. Nulls are not modelled: Pinot's default (null handling off) stores a default value instead.

>>> import pandas as pd
>>> seg = {"s0": pd.DataFrame({"city": ["a", "b", "a"], "v": [1, 2, 3]}),
...        "s1": pd.DataFrame({"city": ["b"], "v": [10]})}
>>> from workbench.pinot.sql import parse_query
>>> q = parse_query("SELECT city, SUM(v), AVG(v) FROM t WHERE v <> 2 GROUP BY city")
>>> execute(q, seg).rows
(('a', 4, 2.0), ('b', 10, 10.0))
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

from workbench.errors import InputError
from workbench.pinot.cache.base import Cached
from workbench.pinot.cache.broker import BrokerResultCache
from workbench.pinot.cache.columns import DataType
from workbench.pinot.cache.flight import Leader
from workbench.pinot.cache.server import ServerSegmentCache
from workbench.pinot.cache.sizing import (
    AggregationPart,
    BrokerResult,
    ColumnShape,
    FunctionShape,
    GroupByPart,
    ResultValue,
    SelectionPart,
)
from workbench.pinot.sql.query import (
    And,
    FilterNode,
    FilterOperator,
    Function,
    Identifier,
    Not,
    Or,
    Predicate,
    Query,
    SelectItem,
    Star,
)

__all__ = [
    "AggregationPartial",
    "BrokerResponse",
    "GroupByPartial",
    "PartialResult",
    "SelectionPartial",
    "evaluate_filter",
    "execute",
    "merge",
    "segment_result",
]

Value: TypeAlias = int | float | str | bool | None
Number: TypeAlias = int | float
#: An aggregation's intermediate: a number (COUNT, SUM), a number or ``None`` (MIN/MAX of no rows),
#: or ``(sum, count)`` for AVG, which cannot be merged from averages alone.
State: TypeAlias = Number | tuple[Number, int] | None
GroupKey: TypeAlias = tuple[Value, ...]
Mask: TypeAlias = npt.NDArray[np.bool_]
Row: TypeAlias = tuple[Value, ...]


# -- filters --------------------------------------------------------------------------------------


def _like_to_regex(pattern: str) -> str:
    """SQL LIKE (``%`` any run, ``_`` one character, whole-value match) as an anchored regex."""
    parts = (".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return "^" + "".join(parts) + "$"


def _text(column: pd.Series) -> pd.Series:
    return column.astype(str)


_PREDICATES: dict[FilterOperator, Callable[[pd.Series, tuple[Value, ...]], pd.Series]] = {
    FilterOperator.EQ: lambda c, v: c == v[0],
    FilterOperator.NEQ: lambda c, v: c != v[0],
    FilterOperator.GT: lambda c, v: c > v[0],
    FilterOperator.GTE: lambda c, v: c >= v[0],
    FilterOperator.LT: lambda c, v: c < v[0],
    FilterOperator.LTE: lambda c, v: c <= v[0],
    FilterOperator.IN: lambda c, v: c.isin(v),
    FilterOperator.NOT_IN: lambda c, v: ~c.isin(v),
    FilterOperator.BETWEEN: lambda c, v: (c >= v[0]) & (c <= v[1]),
    FilterOperator.IS_NULL: lambda c, v: c.isna(),
    FilterOperator.IS_NOT_NULL: lambda c, v: c.notna(),
    FilterOperator.LIKE: lambda c, v: _text(c).str.match(_like_to_regex(str(v[0]))),
    # Pinot's REGEXP_LIKE finds the pattern anywhere in the value (Java ``Matcher.find``).
    FilterOperator.REGEXP_LIKE: lambda c, v: _text(c).str.contains(str(v[0]), regex=True),
}


def _predicate_mask(p: Predicate, frame: pd.DataFrame) -> Mask:
    evaluate = _PREDICATES.get(p.operator)
    if evaluate is None:
        allowed = ", ".join(op.value for op in _PREDICATES)
        raise InputError("filter", f"operator {p.operator.value} needs an index, not plain columns; use {allowed}")
    if p.column is None:
        raise InputError("filter", f"{p.to_sql()}: only a bare column can be evaluated on the left side")
    if p.column not in frame.columns:
        raise InputError("filter", f"{p.to_sql()}: unknown column {p.column!r}")
    values = p.literal_values
    if values is None:
        raise InputError("filter", f"{p.to_sql()}: only literal values can be compared")
    return np.asarray(evaluate(frame[p.column], values), dtype=np.bool_)


def evaluate_filter(node: FilterNode | None, frame: pd.DataFrame) -> Mask:
    """The rows of ``frame`` that match a WHERE tree, as a boolean mask.

    Parameters
    ----------
    node
        The filter tree of a :class:`~workbench.pinot.sql.query.Query`; ``None`` matches every row.
    frame
        One segment's rows, one column per table column.

    Returns
    -------
    numpy.ndarray
        ``len(frame)`` booleans.

    Raises
    ------
    InputError
        For operators that need an index (``TEXT_MATCH``, ``JSON_MATCH``), a non-column left side,
        a non-literal value or an unknown column: an answer we cannot compute must not look right.
    """
    if node is None:
        return np.ones(len(frame), dtype=np.bool_)
    if isinstance(node, Predicate):
        return _predicate_mask(node, frame)
    if isinstance(node, Not):
        return ~evaluate_filter(node.child, frame)
    masks = [evaluate_filter(child, frame) for child in node.children]
    combine = np.logical_and if isinstance(node, And) else np.logical_or
    assert isinstance(node, And | Or)
    return np.asarray(combine.reduce(masks), dtype=np.bool_) if masks else evaluate_filter(None, frame)


# -- aggregations -----------------------------------------------------------------------------------


def _py(value: object) -> Value:
    """A numpy scalar as the equal Python value, so results compare and print as plain values."""
    out = value.item() if isinstance(value, np.generic) else value
    assert out is None or isinstance(out, int | float | str | bool)
    return out


def _number(state: State) -> Number:
    assert isinstance(state, int | float), f"expected a number, got {state!r}"
    return state


def _pair(state: State) -> tuple[Number, int]:
    assert isinstance(state, tuple), f"expected (sum, count), got {state!r}"
    return state


def _extreme(pick: Callable[[Number, Number], Number]) -> Callable[[State, State], State]:
    """Combine two MIN (or MAX) states; ``None`` is the state of a segment with no matching rows."""

    def combine(a: State, b: State) -> State:
        return b if a is None else a if b is None else pick(_number(a), _number(b))

    return combine


def _series_number(series: pd.Series | None, reduce: Callable[[pd.Series], object]) -> State:
    assert series is not None
    if series.empty:
        return None
    value = _py(reduce(series))
    assert isinstance(value, int | float)
    return value


def _sum(series: pd.Series | None) -> Number:
    assert series is not None
    return 0 if series.empty else _number(_series_number(series, pd.Series.sum))


@dataclass(frozen=True)
class _Aggregator:
    """One aggregation function: its per-segment state, how two states merge and the final value."""

    needs_column: bool
    compute: Callable[[pd.Series | None, int], State]
    combine: Callable[[State, State], State]
    finish: Callable[[State], Value]


_AGGREGATORS: dict[str, _Aggregator] = {
    # COUNT(col) counts rows like COUNT(*): without null handling Pinot has no nulls to skip.
    "count": _Aggregator(False, lambda s, n: n, lambda a, b: _number(a) + _number(b), lambda s: _number(s)),
    "sum": _Aggregator(True, lambda s, n: _sum(s), lambda a, b: _number(a) + _number(b), lambda s: _number(s)),
    "min": _Aggregator(True, lambda s, n: _series_number(s, pd.Series.min), _extreme(min), lambda s: _py(s)),
    "max": _Aggregator(True, lambda s, n: _series_number(s, pd.Series.max), _extreme(max), lambda s: _py(s)),
    "avg": _Aggregator(
        True,
        lambda s, n: (_sum(s), n),
        lambda a, b: (_pair(a)[0] + _pair(b)[0], _pair(a)[1] + _pair(b)[1]),
        lambda s: _pair(s)[0] / _pair(s)[1] if _pair(s)[1] else None,
    ),
}


@dataclass(frozen=True)
class _Call:
    """One supported aggregation of the select list: function name and argument column."""

    name: str
    column: str | None

    @property
    def aggregator(self) -> _Aggregator:
        return _AGGREGATORS[self.name]

    def compute(self, rows: pd.DataFrame) -> State:
        series = rows[self.column] if self.column is not None else None
        return self.aggregator.compute(series, len(rows))


def _call(function: Function) -> _Call:
    name = function.canonical_name
    aggregator = _AGGREGATORS.get(name)
    if aggregator is None:
        raise InputError("select", f"{function.to_sql()}: only {', '.join(_AGGREGATORS)} can be executed")
    arg = function.args[0] if len(function.args) == 1 else None
    if isinstance(arg, Identifier):
        return _Call(name, arg.name if aggregator.needs_column else None)
    if isinstance(arg, Star) and not aggregator.needs_column:
        return _Call(name, None)
    raise InputError("select", f"{function.to_sql()}: the argument must be one column")


# -- query shapes -----------------------------------------------------------------------------------


class _Kind(Enum):
    AGGREGATION = "aggregation"
    GROUP_BY = "group-by"
    SELECTION = "selection"


@dataclass(frozen=True)
class _Shape:
    """What the executor needs of a query, validated once.

    ``group_columns`` are sorted by name: the cache keys sort GROUP BY keys (the groups do not depend
    on their order), so results must not depend on it either.
    """

    kind: _Kind
    calls: tuple[_Call, ...]
    group_columns: tuple[str, ...]
    start: int
    stop: int


def _shape(query: Query) -> _Shape:
    for present, what in ((query.order_by, "ORDER BY"), (query.having, "HAVING"), (query.distinct, "DISTINCT")):
        if present:
            raise InputError("query", f"{what} is not supported by the executor")
    start = query.offset or 0
    stop = start + query.effective_limit
    calls = tuple(_call(f) for f in query.aggregations)
    if query.group_by:
        return _Shape(_Kind.GROUP_BY, calls, _group_columns(query), start, stop)
    if calls:
        if query.projections:
            raise InputError("select", "columns next to aggregations need a GROUP BY")
        return _Shape(_Kind.AGGREGATION, calls, (), start, stop)
    for expression in query.projections:
        if not isinstance(expression, Identifier | Star):
            raise InputError("select", f"{expression.to_sql()}: only columns and * can be selected")
    return _Shape(_Kind.SELECTION, (), (), start, stop)


def _group_columns(query: Query) -> tuple[str, ...]:
    names: set[str] = set()
    for expression in query.group_by:
        if not isinstance(expression, Identifier):
            raise InputError("group_by", f"{expression.to_sql()}: only plain columns can be grouped on")
        names.add(expression.name)
    for expression in query.projections:
        if not (isinstance(expression, Identifier) and expression.name in names):
            raise InputError("select", f"{expression.to_sql()} must be a GROUP BY column")
    return tuple(sorted(names))


# -- partial results --------------------------------------------------------------------------------


def _value_bytes(value: Value) -> int:
    """Serialised bytes of one value: UTF-8 plus a length byte for text, 8 for any number."""
    return len(value.encode()) + 1 if isinstance(value, str) else 8


def _column_shapes(rows: Sequence[Row], width: int) -> tuple[ColumnShape, ...]:
    """Per-column shapes for the cache's sizing model, read off the values themselves."""
    shapes = []
    for i in range(width):
        values = [row[i] for row in rows]
        text = [v for v in values if isinstance(v, str)]
        if text:
            shapes.append(ColumnShape(DataType.STRING, max(1, sum(map(_value_bytes, text)) // len(text))))
        else:
            floats = any(isinstance(v, float) for v in values)
            shapes.append(ColumnShape(DataType.DOUBLE if floats else DataType.LONG))
    return tuple(shapes)


def _function_shapes(calls: Sequence[str]) -> tuple[FunctionShape, ...]:
    return tuple(FunctionShape(name) for name in calls)


@dataclass(frozen=True)
class AggregationPartial(ResultValue):
    """One segment's aggregation states, one per aggregation of the select list."""

    functions: tuple[str, ...]
    states: tuple[State, ...]

    def payload_bytes(self) -> int:
        """Sized as the cache's :class:`~workbench.pinot.cache.sizing.AggregationPart`."""
        return AggregationPart(_function_shapes(self.functions)).payload_bytes()


@dataclass(frozen=True)
class GroupByPartial(ResultValue):
    """One segment's groups: key (GROUP BY values, columns sorted by name) -> aggregation states."""

    functions: tuple[str, ...]
    groups: tuple[tuple[GroupKey, tuple[State, ...]], ...]

    def payload_bytes(self) -> int:
        """Sized as :class:`~workbench.pinot.cache.sizing.GroupByPart` with the mean encoded key size."""
        key_bytes = sum(_value_bytes(v) for key, _ in self.groups for v in key) // max(1, len(self.groups))
        return GroupByPart(len(self.groups), key_bytes, _function_shapes(self.functions)).payload_bytes()


@dataclass(frozen=True)
class SelectionPartial(ResultValue):
    """One segment's first rows (up to OFFSET + LIMIT of them) of the projected columns, in doc order."""

    columns: tuple[str, ...]
    rows: tuple[Row, ...]

    def payload_bytes(self) -> int:
        """Sized as :class:`~workbench.pinot.cache.sizing.SelectionPart`."""
        return SelectionPart(len(self.rows), _column_shapes(self.rows, len(self.columns))).payload_bytes()


PartialResult: TypeAlias = AggregationPartial | GroupByPartial | SelectionPartial


@dataclass(frozen=True)
class BrokerResponse(ResultValue):
    """The final answer: column names and rows of plain Python values."""

    columns: tuple[str, ...]
    rows: tuple[Row, ...]

    def payload_bytes(self) -> int:
        """Sized as the cache's :class:`~workbench.pinot.cache.sizing.BrokerResult` (JSON response)."""
        name_bytes = sum(len(c) for c in self.columns) // max(1, len(self.columns))
        shapes = _column_shapes(self.rows, len(self.columns))
        return BrokerResult(len(self.rows), shapes, column_name_bytes=name_bytes).payload_bytes()


def _selected_columns(query: Query, frame: pd.DataFrame) -> tuple[str, ...]:
    out: list[str] = []
    for expression in query.projections:
        out.extend(map(str, frame.columns) if isinstance(expression, Star) else [_identifier(expression)])
    missing = [c for c in out if c not in frame.columns]
    if missing:
        raise InputError("select", f"unknown column(s) {', '.join(missing)}")
    return tuple(out)


def _identifier(expression: object) -> str:
    assert isinstance(expression, Identifier)
    return expression.name


def _rows(frame: pd.DataFrame) -> tuple[Row, ...]:
    columns = [frame[c].tolist() for c in frame.columns]
    return tuple(tuple(_py(v) for v in row) for row in zip(*columns, strict=True))


def segment_result(query: Query, frame: pd.DataFrame) -> PartialResult:
    """What one server returns for one segment: the query's intermediate result on ``frame``.

    Parameters
    ----------
    query
        A supported query (see the module docstring).
    frame
        The segment's rows in doc order.

    Returns
    -------
    PartialResult
        Aggregation states, per-group states, or the first OFFSET + LIMIT matching rows: each server
        must send OFFSET + LIMIT rows because the broker only knows after merging which ones survive.
    """
    shape = _shape(query)
    matched = frame[evaluate_filter(query.filter, frame)]
    names = tuple(c.name for c in shape.calls)
    if shape.kind is _Kind.AGGREGATION:
        return AggregationPartial(names, tuple(c.compute(matched) for c in shape.calls))
    if shape.kind is _Kind.GROUP_BY:
        return GroupByPartial(names, _groups(shape, matched))
    columns = _selected_columns(query, frame)
    return SelectionPartial(columns, _rows(matched[list(columns)].head(shape.stop)))


def _groups(shape: _Shape, matched: pd.DataFrame) -> tuple[tuple[GroupKey, tuple[State, ...]], ...]:
    missing = [c for c in shape.group_columns if c not in matched.columns]
    if missing:
        raise InputError("group_by", f"unknown column(s) {', '.join(missing)}")
    grouped = matched.groupby(list(shape.group_columns), sort=True, dropna=False)
    out = []
    for key, rows in grouped:
        values = key if isinstance(key, tuple) else (key,)
        out.append((tuple(_py(v) for v in values), tuple(c.compute(rows) for c in shape.calls)))
    return tuple(out)


# -- the broker merge -------------------------------------------------------------------------------


def _column_name(item: SelectItem) -> str:
    """Result column name: the alias, else the expression with the function in Pinot's lookup form.

    The broker cache treats ``COUNT(*)`` and ``count(*)`` as one query, so the name must not depend on
    the spelling.
    """
    if item.alias is not None:
        return item.alias
    e = item.expression
    if isinstance(e, Function):
        return f"{e.canonical_name}({', '.join(a.to_sql() for a in e.args)})"
    return e.to_sql()


def _sort_key(key: GroupKey) -> tuple[tuple[bool, Value], ...]:
    """Order groups by their values, ``None`` last, so LIMIT keeps the same groups on every run."""
    return tuple((v is None, v if v is not None else 0) for v in key)


def _combine_states(calls: Sequence[_Call], a: tuple[State, ...], b: tuple[State, ...]) -> tuple[State, ...]:
    return tuple(c.aggregator.combine(x, y) for c, x, y in zip(calls, a, b, strict=True))


def _finish(calls: Sequence[_Call], states: tuple[State, ...]) -> list[Value]:
    return [c.aggregator.finish(s) for c, s in zip(calls, states, strict=True)]


def _merge_aggregation(query: Query, shape: _Shape, partials: Sequence[PartialResult]) -> tuple[Row, ...]:
    empty = pd.DataFrame({c.column: [] for c in shape.calls if c.column is not None})
    states = tuple(c.compute(empty) for c in shape.calls)
    for part in partials:
        assert isinstance(part, AggregationPartial), f"expected aggregation states, got {type(part).__name__}"
        states = _combine_states(shape.calls, states, part.states)
    return (tuple(_finish(shape.calls, states)),)


def _merge_groups(query: Query, shape: _Shape, partials: Sequence[PartialResult]) -> tuple[Row, ...]:
    merged: dict[GroupKey, tuple[State, ...]] = {}
    for part in partials:
        assert isinstance(part, GroupByPartial), f"expected groups, got {type(part).__name__}"
        for key, states in part.groups:
            known = merged.get(key)
            merged[key] = states if known is None else _combine_states(shape.calls, known, states)
    kept = sorted(merged, key=_sort_key)[shape.start:shape.stop]
    return tuple(_group_row(query, shape, key, merged[key]) for key in kept)


def _group_row(query: Query, shape: _Shape, key: GroupKey, states: tuple[State, ...]) -> Row:
    finals = iter(_finish(shape.calls, states))
    out: list[Value] = []
    for item in query.select:
        e = item.expression
        is_call = isinstance(e, Function) and e.is_aggregation
        out.append(next(finals) if is_call else key[shape.group_columns.index(_identifier(e))])
    return tuple(out)


def _merge_selection(query: Query, shape: _Shape, partials: Sequence[PartialResult]) -> tuple[Row, ...]:
    rows: list[Row] = []
    for part in partials:
        assert isinstance(part, SelectionPartial), f"expected rows, got {type(part).__name__}"
        rows.extend(part.rows[: shape.stop - len(rows)])
    return tuple(rows[shape.start:shape.stop])


_MERGERS: dict[_Kind, Callable[[Query, _Shape, Sequence[PartialResult]], tuple[Row, ...]]] = {
    _Kind.AGGREGATION: _merge_aggregation,
    _Kind.GROUP_BY: _merge_groups,
    _Kind.SELECTION: _merge_selection,
}


def merge(query: Query, partials: Sequence[PartialResult]) -> BrokerResponse:
    """The broker reduce: combine the segments' partial results into the final answer.

    Parameters
    ----------
    query
        The query the partials were computed for.
    partials
        One result per segment, in segment order (selection rows are taken in that order).

    Returns
    -------
    BrokerResponse
        Aggregations finalised (AVG = sum / count, ``None`` over no rows, as are MIN and MAX); groups
        sorted by their key values then cut to OFFSET/LIMIT, so the kept groups are deterministic;
        selection rows concatenated then cut to OFFSET/LIMIT.
    """
    shape = _shape(query)
    rows = _MERGERS[shape.kind](query, shape, partials)
    if shape.kind is _Kind.SELECTION:
        first = next((p for p in partials if isinstance(p, SelectionPartial)), None)
        columns = first.columns if first is not None else tuple(_column_name(i) for i in query.select)
    else:
        columns = tuple(_column_name(i) for i in query.select)
    return BrokerResponse(columns, rows)


# -- end to end -------------------------------------------------------------------------------------


def _expect(value: ResultValue, kind: type[ResultValue]) -> ResultValue:
    if not isinstance(value, kind):
        raise TypeError(f"the cache holds a {type(value).__name__}, not a {kind.__name__}: is it shared "
                        "with a simulation that stores size-only values?")
    return value


def _segment_partial(query: Query, name: str, frame: pd.DataFrame, cache: ServerSegmentCache | None,
                     plan_table: str, now_ms: float) -> PartialResult:
    """One segment's partial result, through the server cache when there is one."""
    if cache is None:
        return segment_result(query, frame)
    decision = cache.begin(cache.prepare(query, plan_table), name, now_ms)
    if isinstance(decision, Cached):
        value = _expect(decision.value, ResultValue)
        assert isinstance(value, AggregationPartial | GroupByPartial | SelectionPartial), type(value).__name__
        return value
    try:
        partial = segment_result(query, frame)
    except Exception:
        if isinstance(decision, Leader):
            cache.fail(decision.flight, now_ms)
        raise
    if isinstance(decision, Leader):
        cache.complete(decision.flight, partial, now_ms)
    return partial


def _scatter_gather(query: Query, segments: Mapping[str, pd.DataFrame], cache: ServerSegmentCache | None,
                    table: str, now_ms: float) -> BrokerResponse:
    names = sorted(segments)
    return merge(query, [_segment_partial(query, n, segments[n], cache, table, now_ms) for n in names])


def execute(query: Query, segments: Mapping[str, pd.DataFrame], *, broker_cache: BrokerResultCache | None = None,
            server_cache: ServerSegmentCache | None = None, now_ms: float = 0.0,
            table: str = "t_OFFLINE") -> BrokerResponse:
    """Run a query on a table's segments, through the broker and server caches when given.

    Parameters
    ----------
    query
        A supported query (see the module docstring).
    segments
        Every routed segment's rows by segment name. They are processed in name order, the order the
        broker cache key lists them in, so a cached selection has the rows a fresh one would have.
    broker_cache, server_cache
        Result caches whose table ``table`` and segments the caller has registered and keeps up to
        date through their ``on_segment_*`` calls; the caches store the real values computed here.
    now_ms
        Simulated time (TTLs).
    table
        Table name with type, as registered in the caches.

    Returns
    -------
    BrokerResponse
        The answer. A stale-while-revalidate value is never returned: the fresh one is computed.
    """
    _shape(query)  # reject unsupported queries before any cache sees them
    if broker_cache is None:
        return _scatter_gather(query, segments, server_cache, table, now_ms)
    decision = broker_cache.begin(query, {table: sorted(segments)}, now_ms)
    if isinstance(decision, Cached):
        value = _expect(decision.value, BrokerResponse)
        assert isinstance(value, BrokerResponse)
        return value
    try:
        response = _scatter_gather(query, segments, server_cache, table, now_ms)
    except Exception:
        if isinstance(decision, Leader):
            broker_cache.fail(decision.flight, now_ms)
        raise
    if isinstance(decision, Leader):
        broker_cache.complete(decision.flight, response, now_ms)
    return response
