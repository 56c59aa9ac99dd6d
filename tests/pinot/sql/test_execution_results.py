"""Executor answers on hand-computed cases, and filters against an independent pandas evaluation."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from workbench.errors import InputError
from workbench.pinot.sql import parse_query
from workbench.pinot.sql.evaluate import (
    AggregationPartial,
    BrokerResponse,
    SelectionPartial,
    evaluate_filter,
    execute,
    merge,
    segment_result,
)

S0 = pd.DataFrame({"city": ["a", "b", "a"], "dev": ["x", "x", "y"], "v": [1, 2, 3], "w": [0.5, 1.5, 2.5]})
S1 = pd.DataFrame({"city": ["b", "c"], "dev": ["y", "x"], "v": [10, -1], "w": [4.0, 8.0]})
SEGMENTS = {"s0": S0, "s1": S1}


def rows(sql: str) -> tuple[tuple[object, ...], ...]:
    return execute(parse_query(sql), SEGMENTS).rows


def test_each_aggregation_on_all_rows() -> None:
    assert rows("SELECT COUNT(*), SUM(v), MIN(v), MAX(v), AVG(v) FROM t") == ((5, 15, -1, 10, 3.0),)
    assert rows("SELECT SUM(w), MIN(w), MAX(w), AVG(w) FROM t") == ((16.5, 0.5, 8.0, 3.3),)


def test_aggregations_over_no_rows() -> None:
    assert rows("SELECT COUNT(*), SUM(v), MIN(v), MAX(v), AVG(v) FROM t WHERE v > 100") == ((0, 0, None, None, None),)


def test_avg_partial_keeps_sum_and_count_so_segments_merge_exactly() -> None:
    q = parse_query("SELECT AVG(v) FROM t")
    parts = [segment_result(q, S0), segment_result(q, S1)]
    assert parts[0] == AggregationPartial(("avg",), ((6, 3),))
    assert merge(q, parts).rows == ((3.0,),)  # not the mean of the means (2.0 and 4.5)


def test_group_by_one_column() -> None:
    got = execute(parse_query("SELECT city, COUNT(*), SUM(v) FROM t GROUP BY city"), SEGMENTS)
    assert got == BrokerResponse(("city", "count(*)", "sum(v)"), (("a", 2, 4), ("b", 2, 12), ("c", 1, -1)))


def test_group_by_two_columns_with_limit_keeps_the_first_keys() -> None:
    got = rows("SELECT dev, city, SUM(v), AVG(w) FROM t GROUP BY dev, city LIMIT 3")
    assert got == (("x", "a", 1, 0.5), ("y", "a", 3, 2.5), ("x", "b", 2, 1.5))
    assert got == rows("SELECT dev, city, SUM(v), AVG(w) FROM t GROUP BY city, dev LIMIT 3")


def test_selection_limit_and_offset_follow_segment_order() -> None:
    assert rows("SELECT city, v FROM t LIMIT 4") == (("a", 1), ("b", 2), ("a", 3), ("b", 10))
    assert rows("SELECT city, v FROM t LIMIT 2 OFFSET 2") == (("a", 3), ("b", 10))
    star = execute(parse_query("SELECT * FROM t WHERE v > 1 LIMIT 2"), SEGMENTS)
    assert star == BrokerResponse(("city", "dev", "v", "w"), (("b", "x", 2, 1.5), ("a", "y", 3, 2.5)))


def test_a_segment_sends_at_most_offset_plus_limit_rows() -> None:
    part = segment_result(parse_query("SELECT v FROM t LIMIT 1 OFFSET 1"), S0)
    assert part == SelectionPartial(("v",), ((1,), (2,)))


def test_values_are_plain_python() -> None:
    (row,) = rows("SELECT SUM(v), MAX(w) FROM t")
    assert [type(v) for v in row] == [int, float]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT COUNT(*) FROM t WHERE TEXT_MATCH(city, 'a')",
        "SELECT v FROM t ORDER BY v",
        "SELECT DISTINCTCOUNT(v) FROM t",
        "SELECT city, SUM(v) FROM t",
        "SELECT COUNT(*) FROM t WHERE nope = 1",
    ],
)
def test_unsupported_queries_are_rejected(sql: str) -> None:
    with pytest.raises(InputError):
        execute(parse_query(sql), SEGMENTS)


# -- filters against an independent evaluation ------------------------------------------------------

ALL = pd.concat([S0, S1], ignore_index=True)
Expected = Callable[[pd.DataFrame], "pd.Series[bool]"]

FILTERS: list[tuple[str, Expected]] = [
    ("v = 2", lambda d: d.v == 2),
    ("v <> 2", lambda d: d.v != 2),
    ("v != 2", lambda d: d.v != 2),
    ("v > 2", lambda d: d.v > 2),
    ("v >= 2", lambda d: d.v >= 2),
    ("v < 2", lambda d: d.v < 2),
    ("v <= 2", lambda d: d.v <= 2),
    ("2 < v", lambda d: d.v > 2),
    ("w BETWEEN 1.5 AND 4", lambda d: (d.w >= 1.5) & (d.w <= 4)),
    ("w NOT BETWEEN 1.5 AND 4", lambda d: (d.w < 1.5) | (d.w > 4)),
    ("city IN ('a', 'c')", lambda d: (d.city == "a") | (d.city == "c")),
    ("city NOT IN ('a', 'c')", lambda d: (d.city != "a") & (d.city != "c")),
    ("city = 'a' AND dev = 'y'", lambda d: (d.city == "a") & (d.dev == "y")),
    ("city = 'a' OR v > 5", lambda d: (d.city == "a") | (d.v > 5)),
    ("NOT (city = 'b' OR dev = 'x')", lambda d: (d.city != "b") & (d.dev != "x")),
    (
        "(v > 0 AND v < 3) OR (w >= 8 AND NOT city = 'b')",
        lambda d: ((d.v > 0) & (d.v < 3)) | ((d.w >= 8) & (d.city != "b")),
    ),
    ("city LIKE 'b%'", lambda d: d.city.str.startswith("b")),
    ("REGEXP_LIKE(dev, 'y')", lambda d: d.dev == "y"),
    ("city IS NOT NULL", lambda d: d.city == d.city),
]


@pytest.mark.parametrize(("where", "expected"), FILTERS, ids=[f for f, _ in FILTERS])
def test_filter_matches_independent_pandas(where: str, expected: Expected) -> None:
    query = parse_query(f"SELECT COUNT(*) FROM t WHERE {where}")
    mask = evaluate_filter(query.filter, ALL)
    assert mask.dtype == np.bool_
    assert mask.tolist() == expected(ALL).tolist()
    assert rows(query.to_sql()) == ((int(expected(ALL).sum()),),)
