"""Canonical keys: every spelling of a query shares a key; any change in meaning changes it.

"Meaning" is checked against a small reference evaluator of filters written here, independent of the
canonicaliser: Pinot's literal conversion per column type, multi-value columns matching when any
value matches (when every value matches, for the exclusive ``<>`` and ``NOT IN``).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.pinot.cache.columns import ColumnSpec, DataType, column_specs_from_schema, normalise_literal
from workbench.pinot.cache.keys import KeyContext, canonical_filter, canonicalize, key_digest, query_key
from workbench.pinot.cache.options import cache_allowed, result_options
from workbench.pinot.sql import parse_query
from workbench.pinot.sql.query import (
    And,
    FilterNode,
    FilterOperator,
    Function,
    Identifier,
    Literal,
    LiteralValue,
    Not,
    Or,
    Predicate,
    Query,
    SelectItem,
    Star,
)

Op = FilterOperator
SCHEMA = {
    "a": ColumnSpec(DataType.INT),
    "b": ColumnSpec(DataType.LONG),
    "d": ColumnSpec(DataType.DOUBLE),
    "s": ColumnSpec(DataType.STRING),
    "m": ColumnSpec(DataType.INT, single_value=False),
}  # "u" is deliberately unknown
INTEGRAL, COLUMNS = ("a", "b"), ("a", "b", "d", "s", "m", "u")
STRINGS = ("", "x", "y", "5", "7", "ab")
DOUBLES = (-1.5, 0.0, 0.5, 2.0, 3.25)


def key(sql: str, schema: dict[str, ColumnSpec] | None = None) -> str:
    return query_key(parse_query(sql), SCHEMA if schema is None else schema)


# -- the reference evaluator ---------------------------------------------------------------------


def _number(value: LiteralValue) -> Decimal:
    return Decimal(value) if isinstance(value, int | float) else Decimal(str(value))


def convert(column: str, value: LiteralValue) -> Any:
    """A literal as Pinot compares it with ``column``."""
    if column == "s":
        return Literal(value).to_pinot_string()
    if column == "d":
        return Decimal(float(value))  # type: ignore[arg-type]
    return _number(value)


def row_values(column: str, row: dict[str, Any]) -> list[Any]:
    raw = row[column] if column == "m" else [row[column]]
    return [v if column == "s" else Decimal(v) for v in raw]


_TESTS: dict[FilterOperator, Callable[[Any, list[Any]], bool]] = {
    Op.EQ: lambda x, v: x == v[0], Op.NEQ: lambda x, v: x != v[0],
    Op.GT: lambda x, v: x > v[0], Op.GTE: lambda x, v: x >= v[0],
    Op.LT: lambda x, v: x < v[0], Op.LTE: lambda x, v: x <= v[0],
    Op.IN: lambda x, v: x in v, Op.NOT_IN: lambda x, v: x not in v,
    Op.BETWEEN: lambda x, v: v[0] <= x <= v[1],
}


def evaluate(node: FilterNode, row: dict[str, Any]) -> bool:
    if isinstance(node, And):
        return all(evaluate(c, row) for c in node.children)
    if isinstance(node, Or):
        return any(evaluate(c, row) for c in node.children)
    if isinstance(node, Not):
        return not evaluate(node.child, row)
    assert isinstance(node.lhs, Identifier)
    column = node.lhs.name
    values = [convert(column, v.value) for v in node.values if isinstance(v, Literal)]
    matches = [_TESTS[node.operator](x, values) for x in row_values(column, row)]
    return all(matches) if node.operator in (Op.NEQ, Op.NOT_IN) else any(matches)


# -- strategies ------------------------------------------------------------------------------------


def literal_for(column: str) -> st.SearchStrategy[LiteralValue]:
    if column == "s":
        return st.one_of(st.sampled_from(STRINGS), st.sampled_from([5, 7]))
    if column == "d":
        return st.one_of(st.sampled_from(DOUBLES), st.integers(-2, 4))
    whole = st.integers(-4, 8)
    return st.one_of(whole, whole.map(lambda v: v + 0.5)) if column != "u" else whole


@st.composite
def predicates(draw: st.DrawFn) -> Predicate:
    column = draw(st.sampled_from(COLUMNS))
    op = draw(st.sampled_from([Op.EQ, Op.NEQ, Op.GT, Op.GTE, Op.LT, Op.LTE, Op.IN, Op.NOT_IN, Op.BETWEEN]))
    count = {Op.IN: draw(st.integers(1, 4)), Op.NOT_IN: draw(st.integers(1, 4)), Op.BETWEEN: 2}.get(op, 1)
    values = [draw(literal_for(column)) for _ in range(count)]
    return Predicate.of(column, op, *values)


filters: st.SearchStrategy[FilterNode] = st.recursive(
    predicates(),
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=4).map(lambda c: And(tuple(c))),
        st.lists(inner, min_size=2, max_size=4).map(lambda c: Or(tuple(c))),
        inner.map(Not),
    ),
    max_leaves=8,
)


@st.composite
def rows(draw: st.DrawFn) -> dict[str, Any]:
    return {
        "a": draw(st.integers(-5, 9)), "b": draw(st.integers(-5, 9)), "u": draw(st.integers(-5, 9)),
        "d": draw(st.sampled_from((*DOUBLES, -2.0, 1.0, 4.0))), "s": draw(st.sampled_from((*STRINGS, "b", "zz"))),
        "m": draw(st.lists(st.integers(-3, 6), min_size=1, max_size=3)),
    }


# -- meaning-preserving rewrites, written independently of the canonicaliser -------------------------


def respell(column: str, value: LiteralValue, choice: int) -> LiteralValue:
    """Another spelling Pinot reads as the same value for ``column``."""
    if column in ("a", "b", "m") and isinstance(value, int):
        return (value, float(value), str(value))[choice % 3]
    if column == "d" and isinstance(value, int | float):
        return (value, float(value), repr(float(value)))[choice % 3]
    if column == "s" and isinstance(value, int):
        return str(value)
    if column == "s" and isinstance(value, str) and value.isdigit() and choice % 2:
        return int(value)
    return value


@st.composite
def rewritten(draw: st.DrawFn, node: FilterNode) -> FilterNode:
    """A random meaning-preserving rewrite of ``node``, recursively."""
    if isinstance(node, And | Or):
        children = [draw(rewritten(c)) for c in node.children]
        children = draw(st.permutations(children))
        if draw(st.booleans()):
            children.append(children[0])  # a AND a is a
        if len(children) > 2 and draw(st.booleans()):
            children = [children[0], type(node)(tuple(children[1:]))]  # associativity
        return type(node)(tuple(children))
    if isinstance(node, Not):
        inner = Not(draw(rewritten(node.child)))
        return Not(Not(inner)) if draw(st.booleans()) else inner
    return draw(rewritten_predicate(node))


@st.composite
def rewritten_predicate(draw: st.DrawFn, p: Predicate) -> FilterNode:
    column = p.column
    assert column is not None
    values = [Literal(respell(column, v.value, draw(st.integers(0, 2)))) for v in p.values if isinstance(v, Literal)]
    if p.operator in (Op.IN, Op.NOT_IN):
        values = draw(st.permutations(values + draw(st.lists(st.sampled_from(values), max_size=2))))
    node: FilterNode = Predicate(p.lhs, p.operator, tuple(values))
    rules = [r for r in _STRUCTURAL if r[0](p, column)]
    if draw(st.booleans()) and rules:
        rule = rules[draw(st.integers(0, len(rules) - 1))]
        node = rule[1](Predicate(p.lhs, p.operator, tuple(values)))
    return Not(Not(node)) if draw(st.integers(0, 4)) == 0 else node


def _int_value(p: Predicate) -> int | None:
    v = p.values[0]
    return v.value if isinstance(v, Literal) and type(v.value) is int else None


def _lit(value: LiteralValue) -> Literal:
    return Literal(value)


_STRUCTURAL: list[tuple[Any, Any]] = [
    # x > v  <=>  x >= v + 1 on whole-number single-value columns (original literal must be an int)
    (lambda p, c: c in INTEGRAL and p.operator is Op.GT and _int_value(p) is not None,
     lambda q: Predicate(q.lhs, Op.GTE, (_lit(int(float(q.values[0].value)) + 1),))),
    (lambda p, c: c in INTEGRAL and p.operator is Op.LT and _int_value(p) is not None,
     lambda q: Predicate(q.lhs, Op.LTE, (_lit(int(float(q.values[0].value)) - 1),))),
    # BETWEEN lo AND hi  <=>  x >= lo AND x <= hi on single-value numeric columns
    (lambda p, c: c in (*INTEGRAL, "d") and p.operator is Op.BETWEEN,
     lambda q: And.of(Predicate(q.lhs, Op.GTE, (q.values[0],)), Predicate(q.lhs, Op.LTE, (q.values[1],)))),
    # NOT (x op v)  <=>  x op' v on single-value columns
    (lambda p, c: c in (*INTEGRAL, "d", "s") and p.operator is Op.GT,
     lambda q: Not(Predicate(q.lhs, Op.LTE, q.values))),
    (lambda p, c: c in (*INTEGRAL, "d", "s") and p.operator is Op.EQ,
     lambda q: Not(Predicate(q.lhs, Op.NEQ, q.values))),
    (lambda p, c: c in (*INTEGRAL, "d", "s") and p.operator is Op.NOT_IN,
     lambda q: Not(Predicate(q.lhs, Op.IN, q.values))),
    # x IN (v1, v2)  <=>  x = v1 OR x = v2, on any column (any value matches)
    (lambda p, c: p.operator is Op.IN,
     lambda q: Or(tuple(Predicate(q.lhs, Op.EQ, (v,)) for v in q.values)) if len(q.values) > 1 else q),
]


# -- properties --------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node=filters, sample=st.lists(rows(), min_size=1, max_size=20))
def test_canonical_filter_keeps_the_meaning(node: FilterNode, sample: list[dict[str, Any]]) -> None:
    """The canonical form selects the same rows. Keys are the canonical form printed, so two queries
    with one key select the same rows: no change in meaning can keep a key."""
    canonical = canonical_filter(node, SCHEMA)
    assert [evaluate(canonical, r) for r in sample] == [evaluate(node, r) for r in sample]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), node=filters)
def test_spellings_of_one_filter_share_a_key(data: st.DataObject, node: FilterNode) -> None:
    other = data.draw(rewritten(node))
    q1 = Query("t", (SelectItem(Function("COUNT", (Star(),))),), filter=node)
    q2 = Query("t", (SelectItem(Function("count", (Star(),))),), filter=other, limit=10)
    assert query_key(q1, SCHEMA) == query_key(q2, SCHEMA)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n1=filters, n2=filters, sample=st.lists(rows(), min_size=1, max_size=25))
def test_filters_that_differ_in_meaning_never_share_a_key(n1: FilterNode, n2: FilterNode,
                                                          sample: list[dict[str, Any]]) -> None:
    q1, q2 = (Query("t", (SelectItem(Star()),), filter=n) for n in (n1, n2))
    if any(evaluate(n1, r) != evaluate(n2, r) for r in sample):
        assert query_key(q1, SCHEMA) != query_key(q2, SCHEMA)


@st.composite
def mutated(draw: st.DrawFn, node: FilterNode) -> FilterNode:
    """A small edit of one leaf: another operator or another value (usually changes the meaning)."""
    if isinstance(node, And | Or):
        i = draw(st.integers(0, len(node.children) - 1))
        children = list(node.children)
        children[i] = draw(mutated(children[i]))
        return type(node)(tuple(children))
    if isinstance(node, Not):
        return node.child if draw(st.booleans()) else Not(draw(mutated(node.child)))
    p = draw(predicates())
    return Predicate(node.lhs, p.operator, p.values) if p.column == node.column else p


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), node=filters, sample=st.lists(rows(), min_size=5, max_size=20))
def test_an_edit_that_changes_meaning_changes_the_key(data: st.DataObject, node: FilterNode,
                                                      sample: list[dict[str, Any]]) -> None:
    edited = data.draw(mutated(node))
    if any(evaluate(node, r) != evaluate(edited, r) for r in sample):
        assert canonical_filter(node, SCHEMA) != canonical_filter(edited, SCHEMA)


@settings(max_examples=200, deadline=None)
@given(node=filters)
def test_canonicalisation_is_idempotent(node: FilterNode) -> None:
    q = Query("t", (SelectItem(Star()),), filter=node)
    once = canonicalize(q, SCHEMA)
    assert canonicalize(once, SCHEMA) == once
    assert parse_query(once.to_sql()) == once  # the key text parses back to the same tree


# -- whole queries: spellings and meaning changes -----------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("SELECT COUNT(*) FROM t WHERE a IN (3, 1, 2)", "select count(*) from t where a in (1, 2, 3, 2, 1)"),
        ("SELECT COUNT(*) FROM t WHERE a = 1 OR a = 2", "SELECT COUNT(*) FROM t WHERE a IN (2, 1)"),
        ("SELECT COUNT(*) FROM t WHERE a = 5", "SELECT COUNT(*) FROM t WHERE a = 5.0"),
        ("SELECT COUNT(*) FROM t WHERE a = 5", "SELECT COUNT(*) FROM t WHERE a = '5'"),
        ("SELECT COUNT(*) FROM t WHERE s = 5", "SELECT COUNT(*) FROM t WHERE s = '5'"),
        ("SELECT COUNT(*) FROM t WHERE d = 2", "SELECT COUNT(*) FROM t WHERE d = '2.0'"),
        ("SELECT COUNT(*) FROM t WHERE a > 2 AND a < 6", "SELECT COUNT(*) FROM t WHERE a BETWEEN 3 AND 5"),
        ("SELECT COUNT(*) FROM t WHERE 2 < a", "SELECT COUNT(*) FROM t WHERE a >= 3"),
        ("SELECT COUNT(*) FROM t WHERE NOT a <> 4", "SELECT COUNT(*) FROM t WHERE a = 4"),
        ("SELECT COUNT(*) FROM t WHERE a BETWEEN 4 AND 4", "SELECT COUNT(*) FROM t WHERE a = 4"),
        # an equality is a one-point range, however the ANDs nest (a Hypothesis find)
        ("SELECT COUNT(*) FROM t WHERE a >= 0 AND a < 1 AND a = 0",
         "SELECT COUNT(*) FROM t WHERE a >= 0 AND (a < 1 AND a = 0 AND a >= 0)"),
        ("SELECT COUNT(*) FROM t WHERE d = 0.5 AND d >= 0", "SELECT COUNT(*) FROM t WHERE d = 0.5"),
        ("SELECT COUNT(*) FROM t WHERE (s = 'x' AND a = 1) OR b = 2",
         "SELECT COUNT(*) FROM t WHERE b = 2 OR (a = 1 AND s = 'x')"),
        ("SELECT DISTINCT_COUNT(u) FROM t", "SELECT distinctCount(u) FROM t"),
        ("SELECT a, b, SUM(d) FROM t GROUP BY a, b", "SELECT a, b, SUM(d) FROM t GROUP BY b, a, b"),
        ("SELECT a FROM t", "SELECT a FROM t LIMIT 10 OFFSET 0"),
        ("SELECT SUM(a + b) FROM t", "SELECT SUM(b + a) FROM t"),
        ("SET timeoutMs = 10; SELECT a FROM t", "SELECT a FROM t OPTION(timeoutMs=99, numReplicaGroupsToQuery=2)"),
        ("SET enableNullHandling = true; SELECT a FROM t", "SELECT a FROM t OPTION(ENABLENULLHANDLING='TRUE')"),
        ("SET resultCache = false; SELECT a FROM t", "SELECT a FROM t"),
    ],
)
def test_spellings_share_a_key(first: str, second: str) -> None:
    assert key(first) == key(second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("SELECT COUNT(*) FROM t WHERE a IN (1, 2)", "SELECT COUNT(*) FROM t WHERE a IN (1, 2, 3)"),
        ("SELECT COUNT(*) FROM t WHERE a = 5", "SELECT COUNT(*) FROM t WHERE a = 5.5"),
        ("SELECT COUNT(*) FROM t WHERE u = 5", "SELECT COUNT(*) FROM t WHERE u = '5'"),  # unknown type: not merged
        ("SELECT COUNT(*) FROM t WHERE m > 2 AND m < 4", "SELECT COUNT(*) FROM t WHERE m = 3"),  # multi-value
        ("SELECT COUNT(*) FROM t WHERE NOT m = 1", "SELECT COUNT(*) FROM t WHERE m <> 1"),  # multi-value
        ("SELECT COUNT(*) FROM t WHERE a = 1 AND b = 2", "SELECT COUNT(*) FROM t WHERE a = 1 OR b = 2"),
        ("SELECT COUNT(*) FROM t", "SELECT SUM(a) FROM t"),
        ("SELECT COUNT(*) FROM t", "SELECT COUNT(*) FROM t_OFFLINE"),
        ("SELECT a, b FROM t", "SELECT b, a FROM t"),
        ("SELECT a FROM t", "SELECT a AS x FROM t"),
        ("SELECT a FROM t", "SELECT a FROM t LIMIT 11"),
        ("SELECT a FROM t", "SELECT a FROM t LIMIT 10 OFFSET 10"),
        ("SELECT a FROM t ORDER BY a", "SELECT a FROM t ORDER BY a DESC"),
        ("SELECT a, COUNT(*) FROM t GROUP BY a", "SELECT a, COUNT(*) FROM t GROUP BY a, b"),
        ("SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > 1", "SELECT a, COUNT(*) FROM t GROUP BY a"),
        ("SELECT a FROM t", "SELECT DISTINCT a FROM t"),
        ("SELECT a FROM t", "SET enableNullHandling = true; SELECT a FROM t"),
        ("SET numGroupsLimit = 10; SELECT a FROM t", "SET numGroupsLimit = 11; SELECT a FROM t"),
        ("SELECT a FROM t", "SET someFutureOption = 1; SELECT a FROM t"),  # unknown options stay in the key
        ("SELECT a - b FROM t", "SELECT b - a FROM t"),
    ],
)
def test_changes_in_meaning_change_the_key(first: str, second: str) -> None:
    assert key(first) != key(second)


def test_without_a_schema_only_type_free_rewrites_apply() -> None:
    assert key("SELECT a FROM t WHERE a = 5", {}) != key("SELECT a FROM t WHERE a = '5'", {})
    assert key("SELECT a FROM t WHERE a IN (2, 1)", {}) == key("SELECT a FROM t WHERE a = 1 OR a = 2", {})


def test_case_insensitive_columns_resolve_to_the_schema_spelling() -> None:
    ctx = KeyContext({"memberId": ColumnSpec(DataType.LONG)}, case_insensitive=True)
    q1 = parse_query("SELECT * FROM t WHERE MEMBERID = '7'")
    q2 = parse_query("SELECT * FROM t WHERE memberId = 7")
    assert query_key(q1, ctx) == query_key(q2, ctx)
    assert query_key(q1, SCHEMA) != query_key(q2, SCHEMA)


def test_key_digest_is_stable_64_bit() -> None:
    digest = key_digest(key("SELECT COUNT(*) FROM t"))
    assert digest == key_digest(key("select count(*) from t")) and 0 <= digest < 2**64


# -- literals and options -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "data_type", "expected"),
    [
        (5.0, DataType.INT, 5), ("-12", DataType.LONG, -12), ("5.0", DataType.INT, "5.0"), (True, DataType.INT, True),
        (0.1, DataType.FLOAT, 0.10000000149011612), ("1e3", DataType.DOUBLE, 1000.0), ("abc", DataType.DOUBLE, "abc"),
        ("1.50", DataType.BIG_DECIMAL, "1.5"), (100, DataType.BIG_DECIMAL, "100"), (2.5, DataType.BIG_DECIMAL, "2.5"),
        ("TRUE", DataType.BOOLEAN, True), (0, DataType.BOOLEAN, False), ("yes", DataType.BOOLEAN, "yes"),
        ("2024-01-01T01:00:00+01:00", DataType.TIMESTAMP, 1704067200000), (7.0, DataType.TIMESTAMP, 7),
        (2.5, DataType.STRING, "2.5"), (True, DataType.STRING, "true"), (None, DataType.STRING, None),
        ("DEADbeef", DataType.BYTES, "deadbeef"), ("xyz", DataType.BYTES, "xyz"),
    ],
)
def test_literal_normalisation(value: LiteralValue, data_type: DataType, expected: LiteralValue) -> None:
    result = normalise_literal(value, data_type)
    assert result == expected and type(result) is type(expected)


def test_column_specs_from_schema_reads_every_section_and_the_legacy_time_spec() -> None:
    specs = column_specs_from_schema({
        "dimensionFieldSpecs": [{"name": "c", "dataType": "string"}, {"name": "x", "dataType": "MAP"}],
        "metricFieldSpecs": [{"name": "v", "dataType": "DOUBLE"}],
        "timeFieldSpec": {"incomingGranularitySpec": {"name": "days", "dataType": "INT", "timeType": "DAYS"}},
    })
    assert specs == {"c": ColumnSpec(DataType.STRING), "v": ColumnSpec(DataType.DOUBLE),
                     "days": ColumnSpec(DataType.INT)}


def test_result_options_drop_neutral_options_and_normalise_values() -> None:
    q = parse_query("SET trace = yes; SET minServerGroupTrimSize = '+0100'; SET timeoutMs = 5; "
                       "SET segmentCache = 'FALSE'; SELECT a FROM t")
    assert result_options(q) == (("minServerGroupTrimSize", "100"), ("trace", "false"))
    assert not cache_allowed(q, "segmentCache") and cache_allowed(q, "resultCache")
