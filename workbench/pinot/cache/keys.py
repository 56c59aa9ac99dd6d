"""Canonical query keys: one key for every spelling of a query, a different key for any change in meaning.

The RFC (§5.1) builds cache keys from a canonical form of the query: commutative AND/OR children
sorted, IN lists sorted, literals normalised to the column's stored type, redundant predicates removed
where safe, and the options that change results. :func:`canonicalize` returns that form as an ordinary
:class:`~workbench.pinot.sql.query.Query`, so it can be printed, compared and evaluated like any other, and
:func:`query_key` prints it.

What is rewritten, and why each rewrite keeps the meaning:

* AND/OR are flattened, duplicate children dropped and the rest sorted (both are commutative,
  associative and idempotent). ``NOT NOT p`` is ``p`` (true in three-valued logic too).
* ``IN``/``NOT IN`` lists are de-duplicated and sorted; a one-value list is ``=``/``<>``.
  ``a = 1 OR a IN (2, 3)`` is ``a IN (1, 2, 3)`` (Pinot's own ``MergeEqInFilterOptimizer``).
* Literals compared with a typed column are converted to that type (:mod:`.columns`).
* Function names take Pinot's lookup form (``DISTINCT_COUNT`` is ``distinctcount``); the arguments of
  ``plus`` and ``times`` are sorted (IEEE addition and multiplication are commutative).
* GROUP BY keys are de-duplicated and sorted (the groups do not depend on their order); a missing LIMIT
  is Pinot's default of 10 and ``OFFSET 0`` is no offset.
* On single-value columns of known type only: ``NOT`` of a comparison flips the operator, range
  predicates ANDed on one numeric column are intersected into one range, and on whole-number columns
  exclusive bounds become inclusive (``x > 2`` is ``x >= 3``, as Pinot's numerical filter rewrite
  does). These rewrites are not exact for multi-value columns, where each predicate matches any value.

Anything the canonicaliser is not sure of is left alone: a missed equivalence costs a cache miss, a
wrong one would serve another query's answer.

>>> schema = {"country": ColumnSpec(DataType.STRING), "clicks": ColumnSpec(DataType.LONG)}
>>> from workbench.pinot.sql import parse_query
>>> a = parse_query("SELECT COUNT(*) FROM t WHERE country IN ('nl','de','nl') AND clicks > 4 AND clicks <= 9.0")
>>> b = parse_query("select count(*) from t where clicks between 5 and 9 and (country = 'de' or country = 'nl') "
...                    "limit 10 option(timeoutMs=50)")
>>> query_key(a, schema) == query_key(b, schema)
True
>>> query_key(a, schema)
"SELECT count(*) FROM t WHERE clicks BETWEEN 5 AND 9 AND country IN ('de', 'nl') LIMIT 10"
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

import xxhash

from workbench.pinot.cache.columns import ColumnSpec, DataType, Schema, normalise_literal
from workbench.pinot.cache.options import result_options
from workbench.pinot.sql.query import (
    And,
    Expression,
    FilterNode,
    FilterOperator,
    Function,
    Identifier,
    Literal,
    Not,
    Or,
    OrderByItem,
    Predicate,
    Query,
    SelectItem,
)

__all__ = ["KeyContext", "canonical_filter", "canonicalize", "key_digest", "query_key", "schema_of"]

Op = FilterOperator
_COMMUTATIVE_FUNCTIONS = frozenset({"plus", "times"})
_RANGE_OPERATORS = frozenset({Op.GT, Op.GTE, Op.LT, Op.LTE, Op.BETWEEN})
#: Operators an AND's range merge reads on a single-value numeric column (``=`` is a one-point range).
_MERGED = _RANGE_OPERATORS | {Op.EQ}
#: ``NOT (x op v)`` is ``x op' v`` on a single-value column.
_NEGATED: dict[FilterOperator, FilterOperator] = {
    Op.EQ: Op.NEQ, Op.NEQ: Op.EQ, Op.IN: Op.NOT_IN, Op.NOT_IN: Op.IN,
    Op.GT: Op.LTE, Op.LTE: Op.GT, Op.LT: Op.GTE, Op.GTE: Op.LT,
    Op.IS_NULL: Op.IS_NOT_NULL, Op.IS_NOT_NULL: Op.IS_NULL,
}
_SINGLETON_LIST: dict[FilterOperator, FilterOperator] = {Op.IN: Op.EQ, Op.NOT_IN: Op.NEQ}


@dataclass(frozen=True)
class KeyContext:
    """What canonicalisation may know about the table.

    Parameters
    ----------
    schema
        Column specs (see :func:`~workbench.pinot.cache.columns.column_specs_from_schema`); columns
        missing here keep their literals as written and get no type-dependent rewrites.
    case_insensitive
        Resolve column names case-insensitively to the schema's spelling, as a broker with
        ``enable.case.insensitive`` does.
    """

    schema: Schema | None = None
    case_insensitive: bool = False

    def column(self, name: str) -> str:
        """The schema's spelling of ``name`` (unchanged unless case-insensitive resolution applies)."""
        if not self.case_insensitive or not self.schema or name in self.schema:
            return name
        return next((c for c in self.schema if c.lower() == name.lower()), name)

    def spec(self, expr: Expression) -> ColumnSpec | None:
        """The spec of a bare column, or ``None`` for unknown columns and expressions."""
        return self.schema.get(expr.name) if isinstance(expr, Identifier) and self.schema else None

    def single_value_spec(self, expr: Expression) -> ColumnSpec | None:
        """The spec when the column is known and single-valued, else ``None``."""
        spec = self.spec(expr)
        return spec if spec is not None and spec.single_value else None


def _as_context(schema: Schema | KeyContext | None) -> KeyContext:
    return schema if isinstance(schema, KeyContext) else KeyContext(schema)


# -- expressions --------------------------------------------------------------------------------


def _canonical_expression(expr: Expression, ctx: KeyContext) -> Expression:
    if isinstance(expr, Identifier):
        return Identifier(ctx.column(expr.name))
    if not isinstance(expr, Function):
        return expr
    name = expr.canonical_name
    args = tuple(_canonical_expression(a, ctx) for a in expr.args)
    if name in _COMMUTATIVE_FUNCTIONS and len(args) == 2:
        args = tuple(sorted(args, key=_sort_key))
    return Function(name, args)


def _sort_key(expr: Expression) -> tuple[str, object]:
    """A total order on expressions: literals by (type, value), everything else by its SQL text."""
    if isinstance(expr, Literal) and expr.value is not None:
        return (type(expr.value).__name__, expr.value)
    return ("~", expr.to_sql())


def _normalised_values(values: Iterable[Expression], spec: ColumnSpec | None) -> tuple[Expression, ...]:
    if spec is None:
        return tuple(values)
    return tuple(Literal(normalise_literal(v.value, spec.data_type)) if isinstance(v, Literal) else v
                 for v in values)


# -- predicates ---------------------------------------------------------------------------------


def _canonical_predicate(p: Predicate, ctx: KeyContext) -> FilterNode:
    lhs = _canonical_expression(p.lhs, ctx)
    values = _normalised_values((_canonical_expression(v, ctx) for v in p.values), ctx.spec(lhs))
    if p.operator in _SINGLETON_LIST:
        values = tuple(sorted(dict.fromkeys(values), key=_sort_key))
        operator = _SINGLETON_LIST[p.operator] if len(values) == 1 else p.operator
        return Predicate(lhs, operator, values)
    node = Predicate(lhs, p.operator, values)
    spec = ctx.single_value_spec(lhs)
    if p.operator in _RANGE_OPERATORS and spec is not None and spec.data_type.is_numeric:
        return _merge_ranges([node], spec)[0]
    return node


def _canonical_not(node: Not, ctx: KeyContext) -> FilterNode:
    child = canonical_filter(node.child, ctx)
    if isinstance(child, Not):
        return child.child
    if isinstance(child, Predicate) and child.operator in _NEGATED and ctx.single_value_spec(child.lhs):
        return _canonical_predicate(Predicate(child.lhs, _NEGATED[child.operator], child.values), ctx)
    return Not(child)


def _canonical_and(node: And, ctx: KeyContext) -> FilterNode:
    children = _flat_unique(And, (canonical_filter(c, ctx) for c in node.children))
    return _combine(And, _merge_range_children(children, ctx))


def _canonical_or(node: Or, ctx: KeyContext) -> FilterNode:
    children = _flat_unique(Or, (canonical_filter(c, ctx) for c in node.children))
    return _combine(Or, _merge_equalities(children))


def _flat_unique(kind: type[And] | type[Or], children: Iterable[FilterNode]) -> list[FilterNode]:
    flat: list[FilterNode] = []
    for child in children:
        flat.extend(child.children if isinstance(child, kind) else (child,))
    return list(dict.fromkeys(flat))


def _combine(kind: type[And] | type[Or], children: list[FilterNode]) -> FilterNode:
    unique = sorted(dict.fromkeys(_flat_unique(kind, children)), key=lambda c: c.to_sql())
    return unique[0] if len(unique) == 1 else kind(tuple(unique))


_FILTER_RULES: dict[type, Callable[[FilterNode, KeyContext], FilterNode]] = {
    Predicate: _canonical_predicate,  # type: ignore[dict-item]
    Not: _canonical_not,  # type: ignore[dict-item]
    And: _canonical_and,  # type: ignore[dict-item]
    Or: _canonical_or,  # type: ignore[dict-item]
}


def canonical_filter(node: FilterNode, schema: Schema | KeyContext | None = None) -> FilterNode:
    """The canonical form of a filter tree (see the module docstring for the rewrites)."""
    return _FILTER_RULES[type(node)](node, _as_context(schema))


# -- OR of equalities -> IN ---------------------------------------------------------------------


def _merge_equalities(children: list[FilterNode]) -> list[FilterNode]:
    """``a = 1 OR a IN (2, 3)`` -> ``a IN (1, 2, 3)``: true for multi-value columns too (any value)."""
    groups: dict[Expression, list[Expression]] = {}
    rest: list[FilterNode] = []
    for child in children:
        if isinstance(child, Predicate) and child.operator in (Op.EQ, Op.IN):
            groups.setdefault(child.lhs, []).extend(child.values)
        else:
            rest.append(child)
    for lhs, values in groups.items():
        unique = tuple(sorted(dict.fromkeys(values), key=_sort_key))
        rest.append(Predicate(lhs, Op.EQ if len(unique) == 1 else Op.IN, unique))
    return rest


# -- AND of ranges -> one range -----------------------------------------------------------------


@dataclass(frozen=True)
class _Bound:
    """One end of a range: value and whether it is included."""

    value: int | float
    inclusive: bool


def _merge_range_children(children: list[FilterNode], ctx: KeyContext) -> list[FilterNode]:
    """Intersect the range predicates on each single-value numeric column into one range."""
    groups: dict[Expression, list[Predicate]] = {}
    rest: list[FilterNode] = []
    for child in children:
        spec = ctx.single_value_spec(child.lhs) if isinstance(child, Predicate) else None
        # an equality is the range [v, v]: merged with the other ranges, ``a = 0 AND a >= 0`` is ``a = 0``
        # however the AND was nested, so canonicalising is idempotent
        if isinstance(child, Predicate) and child.operator in _MERGED and spec and spec.data_type.is_numeric:
            groups.setdefault(child.lhs, []).append(child)
        else:
            rest.append(child)
    for predicates in groups.values():
        spec = ctx.single_value_spec(predicates[0].lhs)
        assert spec is not None
        rest.extend(_merge_ranges(predicates, spec))
    return rest


def _merge_ranges(predicates: list[Predicate], spec: ColumnSpec) -> list[FilterNode]:
    """One column's ANDed ranges as canonical predicates (left alone unless every bound is a number)."""
    bounds = [b for p in predicates for b in _bounds(p)]
    if any(b is None for b in bounds):
        return list(predicates)
    lows = [b for side, b in bounds if side == "low"]  # type: ignore[misc]
    highs = [b for side, b in bounds if side == "high"]  # type: ignore[misc]
    low = max(lows, key=lambda b: (b.value, not b.inclusive)) if lows else None
    high = min(highs, key=lambda b: (b.value, b.inclusive)) if highs else None
    if spec.data_type.is_integral:
        low, high = _whole(low, math.ceil, 1), _whole(high, math.floor, -1)
    return _range_predicates(predicates[0].lhs, low, high)


def _bounds(p: Predicate) -> list[tuple[str, _Bound] | None]:
    values = [v.value if isinstance(v, Literal) else None for v in p.values]
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return [None]
    numbers: list[int | float] = values  # type: ignore[assignment]
    return _BOUND_READERS[p.operator](numbers)


_BOUND_READERS: dict[FilterOperator, Callable[[list[int | float]], list[tuple[str, _Bound] | None]]] = {
    Op.GT: lambda v: [("low", _Bound(v[0], False))],
    Op.GTE: lambda v: [("low", _Bound(v[0], True))],
    Op.LT: lambda v: [("high", _Bound(v[0], False))],
    Op.LTE: lambda v: [("high", _Bound(v[0], True))],
    Op.BETWEEN: lambda v: [("low", _Bound(v[0], True)), ("high", _Bound(v[1], True))],
    Op.EQ: lambda v: [("low", _Bound(v[0], True)), ("high", _Bound(v[0], True))],
}


def _whole(bound: _Bound | None, rounding: Callable[[float], int], step: int) -> _Bound | None:
    """On a whole-number column, the inclusive whole-number bound equal to ``bound``."""
    if bound is None:
        return None
    value = rounding(bound.value)
    if value == bound.value and not bound.inclusive:
        value += step
    return _Bound(value, True)


def _range_predicates(lhs: Expression, low: _Bound | None, high: _Bound | None) -> list[FilterNode]:
    if low is not None and high is not None and low.inclusive and high.inclusive:
        if low.value == high.value:
            return [Predicate(lhs, Op.EQ, (Literal(low.value),))]
        return [Predicate(lhs, Op.BETWEEN, (Literal(low.value), Literal(high.value)))]
    out: list[FilterNode] = []
    if low is not None:
        out.append(Predicate(lhs, Op.GTE if low.inclusive else Op.GT, (Literal(low.value),)))
    if high is not None:
        out.append(Predicate(lhs, Op.LTE if high.inclusive else Op.LT, (Literal(high.value),)))
    return out


# -- the whole query ----------------------------------------------------------------------------


def canonicalize(query: Query, schema: Schema | KeyContext | None = None) -> Query:
    """The canonical form of ``query``: equal for spellings of one query, different otherwise.

    Parameters
    ----------
    query
        A parsed query (:func:`~workbench.pinot.sql.parse_query`) or one built by hand.
    schema
        Column specs of the table, or a :class:`KeyContext`; without them only type-free rewrites apply.

    Notes
    -----
    The select list and ORDER BY keep their order (it is the order of the result's columns and
    rows), aliases are kept (they name the result's columns), and the table name is kept as written
    (``t`` and ``t_OFFLINE`` are different queries on a hybrid table).
    """
    ctx = _as_context(schema)
    return replace(
        query,
        select=tuple(SelectItem(_canonical_expression(i.expression, ctx), i.alias) for i in query.select),
        filter=None if query.filter is None else canonical_filter(query.filter, ctx),
        group_by=tuple(sorted(dict.fromkeys(_canonical_expression(e, ctx) for e in query.group_by), key=_sort_key)),
        having=None if query.having is None else canonical_filter(query.having, KeyContext()),
        order_by=tuple(OrderByItem(_canonical_expression(o.expression, ctx), o.descending) for o in query.order_by),
        limit=query.effective_limit,
        offset=query.offset or None,
        options=result_options(query),
    )


def query_key(query: Query, schema: Schema | KeyContext | None = None) -> str:
    """The canonical SQL text of ``query``: the broker cache's query key (RFC §4.1 "Canonical SQL")."""
    return canonicalize(query, schema).to_sql()


def key_digest(text: str) -> int:
    """A 64-bit digest of a key's text (xxHash64), for compact keys and logs (RFC §4.2 ``HASH(...)``)."""
    return int(xxhash.xxh64_intdigest(text.encode()))


def schema_of(columns: Mapping[str, DataType | ColumnSpec]) -> dict[str, ColumnSpec]:
    """A schema from ``{column: DataType}`` shorthand (single-value columns) or full specs."""
    return {name: c if isinstance(c, ColumnSpec) else ColumnSpec(c) for name, c in columns.items()}
