"""Queries: SQL the query model parses, dashboards that repeat, lookups on the partition column."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from workload_fixtures import records, spec_of, table

from workbench.pinot.sql import parse_query
from workbench.pinot.sql.query import Literal, Predicate, iter_predicates
from workbench.workload.pure import Workload, generate_frames
from workbench.workload.queries import TEMPLATES


@pytest.fixture(scope="module")
def dash() -> Workload:
    spec = spec_of(events=5_000, keys=300, key_distribution="zipf", span_s="6h",
                   queries={"duration_s": 300, "dashboards": 4, "viewers": 12, "refresh_s": [10, 30],
                            "time_rounding_s": 60, "adhoc_qps": 1, "lookup_qps": 10, "timerange_qps": 3})
    return generate_frames(spec, table_config=table(), seed=21)


def test_every_query_parses_and_names_the_table(dash: Workload) -> None:
    tables = {parse_query(sql).table for sql in dash.queries["sql"]}
    assert tables == {"events"}
    assert set(dash.queries["kind"]) == {"dashboard", "adhoc", "lookup", "timerange"}


def test_arrivals_are_sorted_within_the_window_and_ids_follow_them(dash: Workload) -> None:
    q = dash.queries
    assert q["query_id"].tolist() == list(range(len(q)))
    assert q["arrival_s"].is_monotonic_increasing and q["arrival_s"].between(0, 300).all()
    start = dash.manifest["time"]["queries_start_ms"]
    assert start == dash.manifest["time"]["end_ms"] - 300_000  # the last 5 minutes of the data
    assert ((q["now_ms"] - start) - q["arrival_s"] * 1000).abs().max() < 1.0


def test_poisson_kinds_arrive_at_their_rates(dash: Workload) -> None:
    counts = dash.queries["kind"].value_counts()
    for kind, qps in (("adhoc", 1), ("lookup", 10), ("timerange", 3)):
        assert counts[kind] == pytest.approx(qps * 300, rel=4 / (qps * 300) ** 0.5)  # within 4 sigma


def _literals(p: Predicate) -> list[Any]:
    return [v.value for v in p.values if isinstance(v, Literal)]


def _bounds(sql: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in iter_predicates(parse_query(sql).filter):
        if p.lhs.to_sql() == "event_time_ms" and p.operator.value in (">=", "<"):
            out[str(p.operator.value)] = int(_literals(p)[0])
    return out


def test_dashboard_viewers_refresh_every_interval_with_rounded_now(dash: Workload) -> None:
    d = dash.queries[dash.queries["kind"] == "dashboard"]
    for (_, _), refreshes in d.groupby(["dashboard_id", "viewer_id"]):
        times = refreshes["arrival_s"].drop_duplicates().to_numpy()
        gaps = set((times[1:] - times[:-1]).round(6))
        assert len(gaps) <= 1 and gaps <= {10.0, 30.0}
    for sql in d["sql"].head(200):
        b = _bounds(sql)
        assert b["<"] % 60_000 == 0  # now rounded down to the minute
        assert (b["<"] - b[">="]) in (900_000, 3_600_000, 21_600_000, 86_400_000)


def test_viewers_of_one_dashboard_send_identical_sql_within_a_rounding_step(dash: Workload) -> None:
    d = dash.queries[dash.queries["kind"] == "dashboard"]
    shared = d.groupby(["dashboard_id", "sql"])["viewer_id"].nunique()
    busy = d.groupby("dashboard_id")["viewer_id"].nunique()
    multi = busy[busy > 1].index
    assert (shared.loc[multi] > 1).mean() > 0.5  # most panel queries are repeated by another viewer


def test_timerange_queries_look_back_from_now(dash: Workload) -> None:
    t = dash.queries[dash.queries["kind"] == "timerange"]
    for row in records(t):
        now = int(row["now_ms"])
        assert (now - now % 1000) - _bounds(row["sql"])[">="] in (900_000, 3_600_000, 21_600_000, 86_400_000)


def test_lookups_filter_the_partition_column_with_popular_existing_keys(dash: Workload) -> None:
    lookups = dash.queries[dash.queries["kind"] == "lookup"]
    keys: list[int] = []
    for sql in lookups["sql"]:
        preds = list(iter_predicates(parse_query(sql).filter))
        assert [p.lhs.to_sql() for p in preds] == ["key_id"]  # the table's partition column
        keys += [int(v) for v in _literals(preds[0])]
    looked_up = pd.Series(keys).value_counts(normalize=True)
    events = dash.events["key_id"].value_counts(normalize=True)
    assert set(looked_up.index) <= set(range(300))
    assert looked_up.index[0] == events.index[0]  # the most popular key is the most looked up
    in_template = next(t.id for t in TEMPLATES if "IN ({values})" in t.sql)
    assert (lookups["template_id"] == in_template).mean() == pytest.approx(0.1, abs=0.05)  # IN lookups


def test_string_partition_column_gets_quoted_keys() -> None:
    w = generate_frames(spec_of(events=1_000, queries={"duration_s": 60, "dashboards": 0, "lookup_qps": 5}),
                        table_config=table(column="key", function="Murmur"), seed=2)
    sql = w.queries.loc[w.queries["kind"] == "lookup", "sql"].iloc[0]
    assert "key = 'user_" in sql or "key IN ('user_" in sql


def test_lifecycle_lookups_ask_for_recently_created_keys(trip_workload: Workload) -> None:
    lookups = trip_workload.queries[trip_workload.queries["kind"] == "lookup"]
    keys = [int(str(v).removeprefix("trip_")) for sql in lookups["sql"]
            for p in iter_predicates(parse_query(sql).filter) for v in _literals(p)]
    born = trip_workload.events[trip_workload.events["update_seq"] == 0].set_index("key_id")["event_time_ms"]
    ages_h = (trip_workload.manifest["time"]["end_ms"] - born.reindex(keys).dropna()) / 3.6e6
    assert ages_h.max() <= 2.2 and len(ages_h) > 0.9 * len(keys)  # within max_lifetime of now


def test_templates_are_chosen_by_zipf_within_a_kind(dash: Workload) -> None:
    adhoc = dash.queries[dash.queries["kind"] == "adhoc"]["template_id"].value_counts()
    first = min(t.id for t in TEMPLATES if t.kind == "adhoc")
    assert adhoc.index[0] == first and adhoc.iloc[0] > adhoc.iloc[-1]
    ids = {t["template_id"] for t in dash.manifest["query_templates"]}
    assert set(dash.queries["template_id"]) <= ids
