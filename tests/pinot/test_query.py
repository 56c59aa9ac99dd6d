"""The query model and the SQL parser: shapes, round trips and named errors for unsupported SQL."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import InputError
from workbench.pinot.sql import QueryParseError, parse_query, tokenize
from workbench.pinot.sql.query import (
    And,
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
    Star,
    iter_predicates,
    quote_identifier,
)


def where(sql_filter: str) -> FilterNode:
    """The filter tree of ``SELECT * FROM t WHERE <sql_filter>``."""
    node = parse_query(f"SELECT * FROM t WHERE {sql_filter}").filter
    assert node is not None
    return node


def col(name: str) -> Identifier:
    return Identifier(name)


def lit(value: int | float | str | bool | None) -> Literal:
    return Literal(value)


# -- select list, clauses, options -------------------------------------------------------------


def test_select_list_separates_aggregations_from_projections() -> None:
    q = parse_query("SELECT city, COUNT(*), SUM(bytes) AS total, PERCENTILE95(latency) FROM events")
    assert q.table == "events"
    assert [a.name for a in q.aggregations] == ["COUNT", "SUM", "PERCENTILE95"]
    assert q.aggregations[0].args == (Star(),)
    assert q.projections == (col("city"),)
    assert q.select[2].alias == "total"
    assert q.is_aggregation


def test_selection_query_is_not_an_aggregation_and_defaults_to_limit_10() -> None:
    q = parse_query("SELECT * FROM events")
    assert q.select == (SelectItem(Star()),)
    assert not q.is_aggregation
    assert q.limit is None and q.effective_limit == 10


def test_all_clauses_in_order() -> None:
    q = parse_query(
        "SELECT DISTINCT country, AVG(x) FROM t WHERE a = 1 GROUP BY country HAVING AVG(x) > 2 "
        "ORDER BY country DESC, AVG(x) LIMIT 20 OFFSET 5"
    )
    assert q.distinct
    assert q.group_by == (col("country"),)
    assert q.having == Predicate(Function("AVG", (col("x"),)), FilterOperator.GT, (lit(2),))
    assert q.order_by == (OrderByItem(col("country"), True), OrderByItem(Function("AVG", (col("x"),)), False))
    assert (q.limit, q.offset) == (20, 5)


def test_mysql_style_limit_puts_the_offset_first() -> None:
    q = parse_query("SELECT a FROM t LIMIT 30, 10")
    assert (q.limit, q.offset) == (10, 30)


def test_set_statements_and_option_clause_become_options() -> None:
    q = parse_query(
        "SET useMultistageEngine = false; SET timeoutMs = 5000; SELECT a FROM t OPTION(numReplicaGroupsToQuery=2)"
    )
    assert q.option_map == {"useMultistageEngine": "false", "timeoutMs": "5000", "numReplicaGroupsToQuery": "2"}
    assert q.option("TIMEOUTMS") == "5000"
    assert q.option("missing", "d") == "d"


def test_options_are_order_independent_and_hashable() -> None:
    a = parse_query("SET a = 1; SET b = 'x'; SELECT c FROM t")
    b = parse_query("SET b = 'x'; SET a = 1; SELECT c FROM t")
    assert a == b and hash(a) == hash(b)


def test_comments_quoted_identifiers_and_trailing_semicolon() -> None:
    q = parse_query('SELECT "order", "my col" -- trailing\nFROM "t" /* block */ WHERE "order" = 1;')
    assert q.select == (SelectItem(col("order")), SelectItem(col("my col")))
    assert q.filter == Predicate(col("order"), FilterOperator.EQ, (lit(1),))


def test_literals() -> None:
    node = where("a IN (1, -2, 2.5, 1e3, -0.5, 'it''s', TRUE, FALSE, NULL, .5)")
    assert isinstance(node, Predicate)
    assert [v.value for v in node.values if isinstance(v, Literal)] == [
        1,
        -2,
        2.5,
        1000.0,
        -0.5,
        "it's",
        True,
        False,
        None,
        0.5,
    ]


def test_count_distinct_is_rejected_with_a_hint_to_distinctcount() -> None:
    with pytest.raises(QueryParseError, match="DISTINCTCOUNT"):
        parse_query("SELECT COUNT(DISTINCT user) FROM t")


def test_qualified_column_names_are_kept_whole() -> None:
    assert parse_query("SELECT t.a FROM t").projections == (col("t.a"),)


def test_arithmetic_is_stored_as_pinot_functions_with_precedence() -> None:
    q = parse_query("SELECT a + b * 2 - c FROM t")
    expected = Function("minus", (Function("plus", (col("a"), Function("times", (col("b"), lit(2))))), col("c")))
    assert q.projections == (expected,)


# -- filter shapes -----------------------------------------------------------------------------


def test_not_binds_tighter_than_and_which_binds_tighter_than_or() -> None:
    a, b, c = (Predicate.of(n, "=", 1) for n in "abc")
    assert where("NOT a = 1 AND b = 1 OR c = 1") == Or.of(And.of(Not(a), b), c)


def test_and_or_are_flattened_like_pinot() -> None:
    a, b, c, d = (Predicate.of(n, "=", 1) for n in "abcd")
    assert where("a = 1 AND (b = 1 AND (c = 1 AND d = 1))") == And.of(a, b, c, d)
    assert where("(a = 1 OR b = 1) OR (c = 1 OR d = 1)") == Or.of(a, b, c, d)


def test_literal_on_the_left_is_turned_around() -> None:
    assert where("30 < ts") == Predicate.of("ts", ">", 30)
    assert where("30 >= ts") == Predicate.of("ts", "<=", 30)
    assert where("'x' = name") == Predicate.of("name", "=", "x")


def test_column_against_column_becomes_minus_against_zero() -> None:
    assert where("a > b") == Predicate(Function("minus", (col("a"), col("b"))), FilterOperator.GT, (lit(0),))


def test_constant_functions_stay_values() -> None:
    node = where("ts > ago('PT1H')")
    assert node == Predicate(col("ts"), FilterOperator.GT, (Function("ago", (lit("PT1H"),)),))
    assert isinstance(node, Predicate) and node.literal_values is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a <> 1", Predicate.of("a", "<>", 1)),
        ("a != 1", Predicate.of("a", "<>", 1)),
        ("a IN (1, 2)", Predicate.of("a", "IN", 1, 2)),
        ("a NOT IN (1, 2)", Predicate.of("a", "NOT IN", 1, 2)),
        ("a BETWEEN 1 AND 2", Predicate.of("a", "BETWEEN", 1, 2)),
        ("a NOT BETWEEN 1 AND 2", Not(Predicate.of("a", "BETWEEN", 1, 2))),
        ("a LIKE 'x%'", Predicate.of("a", "LIKE", "x%")),
        ("a NOT LIKE 'x%'", Not(Predicate.of("a", "LIKE", "x%"))),
        ("a IS NULL", Predicate.of("a", "IS NULL")),
        ("a IS NOT NULL", Predicate.of("a", "IS NOT NULL")),
        ("REGEXP_LIKE(a, 'x.*')", Predicate.of("a", "REGEXP_LIKE", "x.*")),
        ("text_match(body, 'foo')", Predicate.of("body", "TEXT_MATCH", "foo")),
        ("(a + b) > 3", Predicate(Function("plus", (col("a"), col("b"))), FilterOperator.GT, (lit(3),))),
        ("((a = 1))", Predicate.of("a", "=", 1)),
        ("NOT (a = 1 OR b = 2)", Not(Or.of(Predicate.of("a", "=", 1), Predicate.of("b", "=", 2)))),
    ],
)
def test_predicate_forms(text: str, expected: FilterNode) -> None:
    assert where(text) == expected


def test_reference_pruner_queries_parse() -> None:
    """The filters of the reference's SegmentPrunerTest scenarios all parse (section 2.2/2.3)."""
    for text in (
        "timeColumn = 40",
        "timeColumn BETWEEN 20 AND 30",
        "30 < timeColumn AND timeColumn <= 50",
        "timeColumn < 15 OR timeColumn > 45",
        "timeColumn < 15 OR (60 < timeColumn AND timeColumn < 70)",
        "timeColumn NOT BETWEEN 20 AND 30",
        "NOT timeColumn > 30",
        "timeColumn < 0 AND timeColumn > 0",
        "memberId = 0",
        "memberId IN (1, 2)",
        "memberId = 0 AND memberName = 'xyz'",
    ):
        assert where(text) is not None


def test_iter_predicates_and_filter_columns() -> None:
    q = parse_query("SELECT a FROM t WHERE x = 1 AND (NOT y > 2 OR z IN (f(w), 3))")
    assert [p.column for p in iter_predicates(q.filter)] == ["x", "y", "z"]
    assert q.filter_columns == {"x", "y", "z", "w"}


# -- literals and operators --------------------------------------------------------------------


def test_literal_equality_includes_the_type() -> None:
    assert Literal(1) != Literal(True)
    assert Literal(1) != Literal(1.0)
    assert Literal(1) != Literal("1")
    assert len({Literal(1), Literal(True), Literal(1.0), Literal("1")}) == 4


def test_literal_pinot_strings_follow_java() -> None:
    """Pinot hashes the literal's string form; doubles print as Java's Double.toString (reference 1.3)."""
    assert [Literal(v).to_pinot_string() for v in (5, -3, "abc", False, 1.0, 1e7, 1e-4, 0.001)] == [
        "5",
        "-3",
        "abc",
        "false",
        "1.0",
        "1.0E7",
        "1.0E-4",
        "0.001",
    ]


def test_non_finite_float_literals_are_rejected() -> None:
    with pytest.raises(ValueError, match="finite"):
        Literal(float("inf"))


def test_predicate_arity_is_checked() -> None:
    with pytest.raises(ValueError, match="BETWEEN takes 2"):
        Predicate.of("a", "BETWEEN", 1)
    with pytest.raises(ValueError, match="one or more"):
        Predicate.of("a", "IN")


def test_unknown_operator_lists_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match="NOT IN"):
        FilterOperator.parse("~")


def test_query_rejects_negative_limit_and_empty_select() -> None:
    with pytest.raises(ValueError, match="limit"):
        Query("t", (SelectItem(Star()),), limit=-1)
    with pytest.raises(ValueError, match="at least one"):
        Query("t", ())


def test_tokenizer_positions() -> None:
    assert [(t.kind, t.position) for t in tokenize("a<=1")] == [("word", 0), ("op", 1), ("number", 3), ("eof", 4)]


# -- unsupported SQL and syntax errors ---------------------------------------------------------

UNSUPPORTED = [
    ("SELECT * FROM a JOIN b ON a.k = b.k", "JOIN"),
    ("SELECT * FROM a LEFT OUTER JOIN b ON a.k = b.k", "JOIN"),
    ("SELECT * FROM a, b WHERE a.k = b.k", "implicit join"),
    ("SELECT * FROM (SELECT a FROM t)", "subquery in FROM"),
    ("SELECT a FROM t WHERE a IN (SELECT b FROM u)", "subquery"),
    ("SELECT a FROM t WHERE a = (SELECT MAX(b) FROM u)", "subquery"),
    ("SELECT a, ROW_NUMBER() OVER (PARTITION BY a) FROM t", "window function (OVER)"),
    ("SELECT a FROM t UNION SELECT a FROM u", "UNION"),
    ("SELECT a FROM t INTERSECT SELECT a FROM u", "INTERSECT"),
    ("WITH x AS (SELECT a FROM t) SELECT a FROM x", "WITH (common table expressions)"),
    ("SELECT CASE WHEN a > 1 THEN 1 ELSE 0 END FROM t", "CASE expressions"),
    ("SELECT CAST(a AS LONG) FROM t", "CAST"),
    ("SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u)", "EXISTS subqueries"),
    ("INSERT INTO t VALUES (1)", "INSERT statements"),
    ("EXPLAIN PLAN FOR SELECT a FROM t", "EXPLAIN PLAN"),
    ("SELECT a FROM t WHERE b = ?", "parameter placeholder"),
    ("SELECT a FROM t AS x", "table alias"),
    ("SELECT a FROM t ORDER BY a NULLS LAST", "NULLS FIRST/LAST"),
    ("SELECT SUM(a) FILTER (WHERE b > 1) FROM t", "aggregate FILTER clause"),
    ("SELECT a FROM t WHERE a IS DISTINCT FROM b", "IS [NOT] DISTINCT FROM"),
]


@pytest.mark.parametrize(("sql", "construct"), UNSUPPORTED, ids=[c for _, c in UNSUPPORTED])
def test_unsupported_constructs_are_named(sql: str, construct: str) -> None:
    with pytest.raises(QueryParseError) as info:
        parse_query(sql)
    assert info.value.construct is not None and info.value.construct.startswith(construct)
    assert construct in str(info.value)
    assert "not supported" in str(info.value)


def test_unsupported_error_points_at_the_construct() -> None:
    with pytest.raises(QueryParseError) as info:
        parse_query("SELECT * FROM a JOIN b ON a.k = b.k")
    assert info.value.position == len("SELECT * FROM a ")
    assert info.value.where == "query at character 17"


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT a", "expected FROM"),
        ("SELECT a FROM t WHERE name = 'open", "unterminated string literal"),
        ("SELECT a FROM t LIMIT ten", "LIMIT takes a non-negative integer"),
        ("SELECT a FROM t WHERE a", "expected a comparison"),
        ("SELECT a FROM t WHERE a NOT = 1", "expected IN, BETWEEN or LIKE after NOT"),
        ("SELECT a FROM t garbage here", "table alias"),
        ("SELECT a FROM t LIMIT 1 extra", "unexpected 'extra'"),
        ("SELECT a FROM t WHERE a = 1 #", "unexpected character '#'"),
        ("SELECT `a` FROM t", "backtick"),
        ("SELECT FROM t", "expected an expression"),
    ],
)
def test_syntax_errors_say_what_was_expected(sql: str, message: str) -> None:
    with pytest.raises(QueryParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_query(sql)


def test_parse_errors_are_input_errors() -> None:
    with pytest.raises(InputError):
        parse_query("DELETE FROM t")


# -- printing and round trips ------------------------------------------------------------------

ROUND_TRIP = [
    "SELECT * FROM t",
    "SELECT COUNT(*) FROM t WHERE a = 1 AND (b = 2 OR c <> 'x') AND NOT d IN (1, 2, 3)",
    "SELECT a, SUM(b) AS s FROM t WHERE ts BETWEEN 1 AND 2 GROUP BY a HAVING SUM(b) > 10 ORDER BY s DESC LIMIT 5",
    "SELECT DISTINCT a FROM t WHERE a NOT BETWEEN 1 AND 2 OR a IS NOT NULL LIMIT 1 OFFSET 2",
    "SET timeoutMs = 100; SELECT \"select\" FROM \"my table\" WHERE REGEXP_LIKE(x, '^a''b$')",
    "SELECT a + b * c FROM t WHERE a - b > 0 OR NOT NOT x LIKE 'y%'",
    "SELECT a FROM t WHERE x = -1.5e-7 AND y = 12345678901234567890 AND z = TRUE",
]


@pytest.mark.parametrize("sql", ROUND_TRIP)
def test_to_sql_reads_back_to_the_same_tree(sql: str) -> None:
    q = parse_query(sql)
    assert parse_query(q.to_sql()) == q
    assert parse_query(q.to_sql()).to_sql() == q.to_sql()


def test_to_sql_of_a_hand_built_query() -> None:
    q = Query(
        "events",
        (SelectItem(col("city")), SelectItem(Function("COUNT", (Star(),)), "n")),
        filter=Or.of(Predicate.of("ts", ">=", 5), And.of(Predicate.of("a", "IN", "x", "y"), Predicate.of("b", "<", 2))),
        group_by=(col("city"),),
        limit=3,
        options=(("timeoutMs", "10"),),
    )
    assert q.to_sql() == (
        "SET timeoutMs = '10'; SELECT city, COUNT(*) AS n FROM events "
        "WHERE ts >= 5 OR (a IN ('x', 'y') AND b < 2) GROUP BY city LIMIT 3"
    )


def test_quote_identifier() -> None:
    assert quote_identifier("abc_1") == "abc_1"
    assert quote_identifier("select") == '"select"'
    assert quote_identifier("1abc") == '"1abc"'


# -- Hypothesis: any canonical tree prints and parses back to itself ---------------------------

_NAMES = st.sampled_from(["a", "ts", "memberId", "order", "my col", 'q"uote', "x.y"])
_LITERALS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(alphabet=string.printable, max_size=8),
    st.booleans(),
).map(Literal)
_COMPARISONS = [
    FilterOperator.EQ,
    FilterOperator.NEQ,
    FilterOperator.GT,
    FilterOperator.GTE,
    FilterOperator.LT,
    FilterOperator.LTE,
    FilterOperator.LIKE,
]


@st.composite
def _predicates(draw: st.DrawFn) -> Predicate:
    lhs = Identifier(draw(_NAMES))
    op = draw(
        st.sampled_from(
            [
                *_COMPARISONS,
                FilterOperator.IN,
                FilterOperator.NOT_IN,
                FilterOperator.BETWEEN,
                FilterOperator.IS_NULL,
                FilterOperator.REGEXP_LIKE,
            ]
        )
    )
    count = op.arity if op.arity is not None else draw(st.integers(1, 4))
    return Predicate(lhs, op, tuple(draw(_LITERALS) for _ in range(count)))


def _canonical(kind: type[And] | type[Or]) -> st.SearchStrategy[FilterNode]:
    """And/Or with 2-3 children, none of the same kind (the parser flattens those)."""

    def build(children: list[FilterNode]) -> FilterNode:
        return kind(tuple(children))

    return (
        st.lists(st.deferred(lambda: _filters), min_size=2, max_size=3)
        .filter(lambda cs: not any(isinstance(c, kind) for c in cs))
        .map(build)
    )


_filters: st.SearchStrategy[FilterNode] = st.deferred(
    lambda: st.one_of(
        _predicates(),
        _predicates().map(Not),
        _canonical(And),
        _canonical(Or),
    )
)


@settings(max_examples=200, deadline=None)
@given(
    node=_filters,
    limit=st.none() | st.integers(0, 10**6),
    options=st.dictionaries(st.sampled_from(["timeoutMs", "x"]), st.text(string.printable, max_size=5)),
)
def test_printed_queries_parse_back_to_the_same_tree(
    node: FilterNode, limit: int | None, options: dict[str, str]
) -> None:
    q = Query(
        "t", (SelectItem(Function("COUNT", (Star(),))),), filter=node, limit=limit, options=tuple(options.items())
    )
    assert parse_query(q.to_sql()) == q
