"""Query plans in the model: Pinot's pruners decide what a query touches; replay uses them end to end."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from workbench.errors import InputError
from workbench.pinot.schema import Schema
from workbench.pinot.table_config import TableConfig
from workbench.sim.fast.plan_kernels import segment_sums
from workbench.sim.layout import Layout
from workbench.sim.pauses import PauseSchedule
from workbench.sim.plan import query_options
from workbench.sim.planner import Planner, QueryPlan, default_schema, segment_metadata
from workbench.sim.router import Router
from workbench.sim.routes import RouteCache, Routes, route_queries
from workbench.sim.run import simulate

TABLE = {"tableName": "t", "tableType": "OFFLINE",
         "segmentsConfig": {"timeColumnName": "ts", "replication": 1},
         "routing": {"segmentPrunerTypes": ["time", "partition"]},
         "tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
             "key_id": {"functionName": "Modulo", "numPartitions": 4}}}}}


def segments() -> pd.DataFrame:
    def pmeta(p: int) -> str:
        return json.dumps({"columnPartitionMap": {"key_id": {
            "functionName": "Modulo", "numPartitions": 4, "partitions": [p]}}})
    rows = [(f"s{i}", i * 100, i * 100 + 99, 1000, pmeta(i % 4)) for i in range(8)]
    frame = pd.DataFrame(rows, columns=["segment_name", "start_time_ms", "end_time_ms", "total_docs", "pm"])
    frame["zk_metadata"] = [json.dumps({
        "segment.start.time": str(r.start_time_ms), "segment.end.time": str(r.end_time_ms),
        "segment.time.unit": "MILLISECONDS", "segment.total.docs": "1000", "segment.partition.metadata": r.pm})
        for r in frame.itertuples()]
    return frame.drop(columns="pm")


def planner(logged: dict[str, float] | None = None) -> Planner:
    seg = segments()
    names = tuple(seg["segment_name"])
    table = TableConfig.from_json(TABLE)
    return Planner(names, seg["total_docs"].to_numpy(float), table, default_schema(table), segment_metadata(seg),
                   logged)


def test_time_pruning_and_docs_scanned() -> None:
    plan = planner().plan("SELECT COUNT(*) FROM t WHERE ts >= 150 AND ts < 250")
    assert plan.names == ("s1", "s2")
    assert plan.pruned == 6
    # s1 covers 150..199 of 100..199, s2 covers 200..249 of 200..299: half of each segment's docs
    assert plan.docs_scanned == pytest.approx((500.0, 500.0))


def test_docs_scanned_on_a_day_column_counts_whole_days() -> None:
    """A ``1:DAYS:EPOCH`` column holds whole days, which Pinot's pruner reads as each day's first
    millisecond: a segment of days 19001-19002 matched by ``day = 19002`` has half its documents to scan
    (it was counted as one millisecond of a two-day range, about a hundred-millionth of them)."""
    day_ms = 86_400_000
    table = TableConfig.from_json({**TABLE, "segmentsConfig": {"timeColumnName": "day", "replication": 1},
                                   "routing": {"segmentPrunerTypes": ["time"]}})
    schema = {"schemaName": "t", "dateTimeFieldSpecs": [
        {"name": "day", "dataType": "INT", "format": "1:DAYS:EPOCH", "granularity": "1:DAYS"}]}
    zk = {"segment.start.time": "19001", "segment.end.time": "19002", "segment.time.unit": "DAYS",
          "segment.total.docs": "1000"}
    seg = pd.DataFrame({"segment_name": ["d0"], "start_time_ms": [19001 * day_ms], "end_time_ms": [19002 * day_ms],
                        "total_docs": [1000], "zk_metadata": [json.dumps(zk)]})
    days = Planner(("d0",), np.array([1000.0]), table, Schema.from_json(schema), segment_metadata(seg))
    assert days.plan("SELECT SUM(v) FROM t WHERE day = 19002").docs_scanned == pytest.approx((500.0,))
    assert days.plan("SELECT SUM(v) FROM t WHERE day >= 19000").docs_scanned == pytest.approx((1000.0,))
    assert days.plan("SELECT SUM(v) FROM t WHERE day BETWEEN 19001 AND 19001").docs_scanned == pytest.approx((500.0,))


def test_partition_pruning_uses_each_segments_metadata() -> None:
    plan = planner().plan("SELECT COUNT(*) FROM t WHERE key_id = 5")  # 5 mod 4 = 1
    assert plan.names == ("s1", "s5")
    assert plan.docs_scanned == (1000.0, 1000.0)


def test_plans_are_cached_per_sql_text() -> None:
    p = planner()
    assert p.plan("SELECT * FROM t WHERE ts < 50") is p.plan("SELECT * FROM t WHERE ts < 50")


def test_replay_prunes_and_routes_each_query(tmp_path: Path) -> None:
    segments().to_parquet(tmp_path / "segments.parquet")
    sqls = ["SELECT COUNT(*) FROM t WHERE key_id = 5", "SELECT COUNT(*) FROM t WHERE ts BETWEEN 0 AND 99",
            "SELECT COUNT(*) FROM t"]
    n = 3000
    pd.DataFrame({"arrival_s": np.arange(n) * 0.01, "sql": [sqls[i % 3] for i in range(n)]}).to_parquet(
        tmp_path / "queries.parquet")
    scenario = {"cluster": {"servers": 4}, "table": TABLE, "workload": {"arrival": {"process": "replay"}},
                "simulation": {"duration_s": 30, "warmup_s": 1, "replications": 1}}
    r = simulate(scenario, data=tmp_path)
    q = r.queries.sort_values("arrival_s")
    expected_kept = {0: 2, 1: 1, 2: 8}
    kinds = np.rint(q["arrival_s"].to_numpy() / 0.01).astype(int) % 3
    assert (q["segments_queried"].to_numpy() == np.vectorize(expected_kept.get)(kinds)).all()
    assert (q["segments_queried"] + q["segments_pruned"] == 8).all()


# --- routing templates: Pinot's selector runs once per segment list; each plan keeps its own documents and rows

SERVERS = ("Server_0", "Server_1", "Server_2")
#: Same segments, same order after pruning (s1, s2); different filters, so different documents and rows.
SAME_LIST = ("SELECT COUNT(*) FROM t WHERE ts >= 150 AND ts < 250",
             "SELECT key_id FROM t WHERE ts >= 120 AND ts < 230 LIMIT 70",
             "SELECT key_id FROM t WHERE ts >= 100 AND ts < 300 LIMIT 1500")
OTHER_LIST = "SELECT key_id FROM t WHERE ts < 400 LIMIT 10"


def layout_and_planner() -> tuple[Layout, Planner, TableConfig]:
    """Eight segments, two replicas each on three servers (segment i on servers i and i + 1, mod 3)."""
    seg = segments()
    names = tuple(seg["segment_name"])
    table = TableConfig.from_json({**TABLE, "segmentsConfig": {**TABLE["segmentsConfig"], "replication": 2}})
    replicas = tuple((i % 3, (i + 1) % 3) for i in range(len(names)))
    ideal = {n: {SERVERS[s]: "ONLINE" for s in r} for n, r in zip(names, replicas, strict=True)}
    docs = seg["total_docs"].to_numpy(float)
    meta = segment_metadata(seg)
    layout = Layout(SERVERS, names, docs, np.zeros(len(names), dtype=bool), ideal, replicas, meta)
    return layout, Planner(names, docs, table, default_schema(table), meta), table


def routed(cache: RouteCache, plans: list[QueryPlan], plan_index: list[int]) -> Routes:
    n = len(plan_index)
    return route_queries(cache, 1, np.arange(n, dtype=float), np.array(plan_index, dtype=np.int32), plans,
                         [PauseSchedule.empty() for _ in SERVERS])


def requests_of(routes: Routes, q: int) -> list[tuple[int, list[int], int, float]]:
    """Query ``q``'s requests: server, plan positions, rows, documents."""
    t = int(routes.template[q])
    out = []
    for j in range(int(routes.requests[t]), int(routes.requests[t + 1])):
        pos = routes.position[routes.segments[j]:routes.segments[j + 1]].tolist()
        out.append((int(routes.server[j]), pos, int(routes.rows[j]), float(routes.docs[j])))
    return out


def test_plans_with_one_segment_list_share_pinots_route_and_keep_their_own_documents_and_rows() -> None:
    layout, planner, table = layout_and_planner()
    plans = [planner.plan(sql) for sql in SAME_LIST]
    assert len({p.names for p in plans}) == 1 and len({p.docs_scanned for p in plans}) == 3
    # each query i is plan i % 3 with request id i: residues 0 and 1 of the balanced selector each meet all three
    shared = routed(RouteCache(layout, table, {}, None), plans, [i % 3 for i in range(6)])
    for q in range(6):
        plan = plans[q % 3]
        # Pinot's decision for this plan alone, from a fresh selector
        pinot, unavailable = Router(layout, table).route(q, plan.names)
        got = requests_of(shared, q)
        assert [(s, [plan.segments[p] for p in pos]) for s, pos, _, _ in got] == [(s, list(c)) for s, c in pinot]
        assert int(shared.unavailable[shared.template[q]]) == unavailable == 0
        for _, pos, rows, docs in got:
            expected = functools.reduce(lambda a, b: a + b, (plan.docs_scanned[p] for p in pos), 0.0)
            assert docs == expected  # left to right, bit for bit
            # COUNT(*) returns one row; a selection min(docs, LIMIT)
            assert rows == (1 if q % 3 == 0 else min(int(expected), (70, 1500)[q % 3 - 1]))


def test_a_shared_cache_routes_exactly_as_a_fresh_one_per_plan() -> None:
    layout, planner, table = layout_and_planner()
    plans = [planner.plan(sql) for sql in (*SAME_LIST, OTHER_LIST)]
    index = [0, 1, 3, 2, 2, 0, 3, 1]
    shared = routed(RouteCache(layout, table, {}, None), plans, index)
    for q, p in enumerate(index):
        alone = routed(RouteCache(layout, table, {}, None), plans, [p] * (q + 1))
        assert requests_of(shared, q) == requests_of(alone, q)


@pytest.mark.parametrize("values", [[1e16, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.1] * 40, [3.5, -2.25, 1e-9]])
def test_segment_sums_add_left_to_right(values: list[float]) -> None:
    """A request's documents are summed in position order (numpy's own sum is pairwise, and differs here)."""
    data = np.array(values * 2)
    got = segment_sums(data, np.array([0, len(values), len(values), 2 * len(values)]))
    expected = functools.reduce(lambda a, b: a + b, values, 0.0)
    assert got.tolist() == [expected, 0.0, expected]


def test_routing_options_a_query_sets_itself_steer_its_route() -> None:
    """``SET useFixedReplica = true;`` (any case, as Pinot's parser resolves keys) pins every request id to
    one replica; the same segment list without it rotates. Sharing routes per list must keep them apart."""
    layout, planner, table = layout_and_planner()
    where = "FROM t WHERE ts >= 100 AND ts < 300"
    rotating = planner.plan(f"SELECT COUNT(*) {where}")
    fixed = planner.plan(f"SET usefixedreplica = true; SELECT COUNT(*) {where}")
    assert rotating.segments == fixed.segments
    routes = routed(RouteCache(layout, table, {}, None), [rotating, fixed], [0, 0, 1, 1])
    servers = [[s for s, _, _, _ in requests_of(routes, q)] for q in range(4)]
    # queries 0 and 1 rotate (request ids 0 and 1); 2 and 3 are fixed (request ids 2 and 3)
    assert servers[0] != servers[1]
    assert servers[2] == servers[3]
    for q, plan, options in ((0, rotating, {}), (1, rotating, {}), (2, fixed, {"useFixedReplica": "true"}),
                             (3, fixed, {"useFixedReplica": "true"})):
        pinot, _ = Router(layout, table).route(q, plan.names, options=options)
        assert servers[q] == [s for s, _ in pinot]


def test_a_bad_routing_option_fails_the_plan_naming_the_option() -> None:
    with pytest.raises(InputError, match=r"queryOptions\.numReplicaGroupsToQuery"):
        planner().plan("SET numReplicaGroupsToQuery = 0; SELECT COUNT(*) FROM t")


def test_a_querys_own_options_override_the_workloads_whatever_their_case() -> None:
    """``SET timeoutms = 5;`` is Pinot's ``timeoutMs`` (its parser resolves option keys case-insensitively);
    an option the model does not read keeps its spelling."""
    plan = planner().plan("SET timeoutms = 5; SET MaxExecutionThreads = 2; SET myOwnKey = x; SELECT COUNT(*) FROM t")
    options = query_options(plan, {"timeoutMs": "100", "isSecondaryWorkload": "true"})
    assert options == {"timeoutMs": "5", "isSecondaryWorkload": "true", "maxExecutionThreads": "2", "myOwnKey": "x"}


# --- a replayed log charges each query the documents its log line says it scanned

def test_logged_docs_are_spread_over_the_kept_segments_as_the_time_range_share_spreads_them() -> None:
    """``ts`` 150-279 keeps s1 (150-199: half of it, 500 planned) and s2 (200-279: 80%, 800 planned); a log line
    saying 26 documents puts 26 x 500 / 1300 = 10 on s1 and 16 on s2. A lookup whose planned share is every
    document of its two segments (key_id = 5) and logged 30 gets 15 on each."""
    window, lookup = "SELECT COUNT(*) FROM t WHERE ts >= 150 AND ts < 280", "SELECT COUNT(*) FROM t WHERE key_id = 5"
    p = planner({window: 26.0, lookup: 30.0})
    logged = p.plan(window)
    assert logged.names == ("s1", "s2")
    assert logged.docs_scanned == pytest.approx((10.0, 16.0))
    assert p.plan(lookup).docs_scanned == pytest.approx((15.0, 15.0))
    # the same text without a logged count keeps the planner's own estimate (a generated workload's)
    assert planner().plan(window).docs_scanned == pytest.approx((500.0, 800.0))


def test_a_replayed_log_charges_its_median_logged_docs_per_sql_text(tmp_path: Path) -> None:
    """An imported log's ``queries.parquet`` carries each query's ``num_docs_scanned``. Replayed with 1 ns per
    document and nothing else, one server of one core: the lookup logged 2,000,000 documents twice and
    100,000,000 once (a query that ran long) is charged the median, 2,000,000: 2 ms of work, its latency; the
    time-range query has no logged count and keeps its share of its segment (1,000 documents: 1 us)."""
    segments().to_parquet(tmp_path / "segments.parquet")
    lookup, window = "SELECT COUNT(*) FROM t WHERE key_id = 5", "SELECT SUM(v) FROM t WHERE ts BETWEEN 0 AND 99"
    pd.DataFrame({"arrival_s": [1.0, 2.0, 3.0, 4.0], "sql": [lookup, window, lookup, lookup],
                  "num_docs_scanned": [2_000_000, None, 100_000_000, 2_000_000]}).to_parquet(
        tmp_path / "queries.parquet")
    scenario = {"cluster": {"servers": 1, "server": {"cores": 1}, "network": {"latency_ms": 0},
                            "broker": {"overhead_ms": 0.0, "reduce_ms_per_server": 0.0, "reduce_ms_per_row": 0.0}},
                "table": TABLE, "workload": {"arrival": {"process": "replay"}},
                "service": {"model": "cost", "per_request_ms": 0.0, "per_segment_ms": 0.0, "ns_per_doc": 1.0,
                            "merge_ms_per_segment": 0.0},
                "simulation": {"duration_s": 6, "warmup_s": 0, "replications": 1, "engine": "fast"}}
    q = simulate(scenario, data=tmp_path).queries.sort_values("arrival_s")
    np.testing.assert_allclose(q["latency_ms"], [2.0, 0.001, 2.0, 2.0], rtol=1e-9)


#: Queries over s0 (ts 0-99) whole and s1 (100-199) in part: Pinot's server answers the first two from each
#: segment's metadata where the filter matches all of its rows (AggregationPlanNode, non-scan aggregation).
WHOLE_AND_PART = "ts >= 0 AND ts < 150"


@pytest.mark.parametrize("select", ["COUNT(*)", "MAX(ts), COUNT(*)", "MINMAXRANGE(v)"])
def test_an_aggregation_pinot_reads_from_metadata_scans_no_document_of_a_segment_its_filter_holds_whole(
        select: str) -> None:
    """s0 lies inside the filter: none of its 1,000 documents is read; s1 is half inside (100-149): it is scanned
    as any segment, its 500 documents; with no filter every segment is whole."""
    p = planner()
    assert p.plan(f"SELECT {select} FROM t WHERE {WHOLE_AND_PART}").docs_scanned == pytest.approx((0.0, 500.0))
    assert p.plan(f"SELECT {select} FROM t").docs_scanned == pytest.approx((0.0,) * 8)


@pytest.mark.parametrize("sql", [
    f"SELECT SUM(v) FROM t WHERE {WHOLE_AND_PART}",                      # SUM reads every row
    f"SELECT DISTINCTCOUNT(v) FROM t WHERE {WHOLE_AND_PART}",            # walks the dictionary: kept per document
    f"SELECT MAX(v + 1) FROM t WHERE {WHOLE_AND_PART}",                  # an expression, not a column
    f"SELECT k, COUNT(*) FROM t WHERE {WHOLE_AND_PART} GROUP BY k",      # a group-by has its own plan
    f"SELECT COUNT(*) FROM t WHERE {WHOLE_AND_PART} AND k = 'a'",        # k's predicate is not always true
    f"SET enableNullHandling = true; SELECT COUNT(*) FROM t WHERE {WHOLE_AND_PART}",  # nulls unknown: scanned
])
def test_other_queries_scan_the_segments_their_filter_holds_whole(sql: str) -> None:
    assert planner().plan(sql).docs_scanned == pytest.approx((1000.0, 500.0))


def test_a_raw_time_column_has_no_always_true_range_so_its_segments_are_scanned() -> None:
    """Pinot's range evaluator is "always true" only on a dictionary; a raw column (``noDictionaryColumns`` or a
    ``RAW`` field config) scans. With no filter at all a segment is still whole."""
    seg = segments()
    names = tuple(seg["segment_name"])
    for raw in ({"tableIndexConfig": {**TABLE["tableIndexConfig"], "noDictionaryColumns": ["ts"]}},
                {"fieldConfigList": [{"name": "ts", "encodingType": "RAW"}]}):
        table = TableConfig.from_json({**TABLE, **raw})
        p = Planner(names, seg["total_docs"].to_numpy(float), table, default_schema(table), segment_metadata(seg))
        assert table.no_dictionary_columns == {"ts"}
        assert p.plan(f"SELECT COUNT(*) FROM t WHERE {WHOLE_AND_PART}").docs_scanned == pytest.approx((1000.0, 500.0))
        assert p.plan("SELECT COUNT(*) FROM t").docs_scanned == pytest.approx((0.0,) * 8)


def test_a_replayed_count_charges_its_logged_documents_only_where_it_read_them() -> None:
    """Pinot's log counts a whole-matched segment's rows as scanned (its total); the spread gives s0 1,000 x 1,200 /
    1,500 = 800 of a logged 1,200 and s1 400, and s0's are not read: 0 and 400."""
    sql = f"SELECT COUNT(*) FROM t WHERE {WHOLE_AND_PART}"
    assert planner({sql: 1200.0}).plan(sql).docs_scanned == pytest.approx((0.0, 400.0))


def test_the_filter_reads_each_unindexed_columns_value_once_per_row_of_a_segment_it_does_not_hold_whole() -> None:
    """Pinot's scan-based filter reads a column's value for every row of the segment (``numEntriesScannedInFilter``).
    ``ts`` 0-149 holds s0 whole and half of s1. A SUM over it: s0's filter matches all (no entry), s1 reads ts for
    its 1,000 rows. With ``k = 'a'`` too: s0 reads k only (Pinot drops the always-true ts leaf), s1 both (2,000).
    With an inverted index on ``k``: k's predicate reads no row."""
    p = planner()
    assert p.plan(f"SELECT SUM(v) FROM t WHERE {WHOLE_AND_PART}").filter_entries == pytest.approx((0.0, 1000.0))
    both = f"SELECT SUM(v) FROM t WHERE {WHOLE_AND_PART} AND k = 'a'"
    assert p.plan(both).filter_entries == pytest.approx((1000.0, 2000.0))
    seg = segments()
    table = TableConfig.from_json({**TABLE, "tableIndexConfig": {**TABLE["tableIndexConfig"],
                                                                 "invertedIndexColumns": ["k"]}})
    indexed = Planner(tuple(seg["segment_name"]), seg["total_docs"].to_numpy(float), table, default_schema(table),
                      segment_metadata(seg))
    assert table.filter_index_columns == {"k"}
    assert indexed.plan(both).filter_entries == pytest.approx((0.0, 1000.0))
    assert p.plan("SELECT SUM(v) FROM t").filter_entries == pytest.approx((0.0,) * 8)   # no filter: nothing read


def test_a_replayed_log_charges_its_logged_filter_entries_where_the_filter_reads_rows() -> None:
    """A logged count of 900 entries is spread as the estimate spreads them (s0 none: matched whole; s1 all); a lookup
    whose filter an index answers (no estimated entry) but whose log says 40 spreads them over the segments it does
    not hold whole, by their documents."""
    part = f"SELECT SUM(v) FROM t WHERE {WHOLE_AND_PART} AND k = 'a'"
    seg = segments()
    table = TableConfig.from_json({**TABLE, "tableIndexConfig": {**TABLE["tableIndexConfig"],
                                                                 "invertedIndexColumns": ["k"]}})
    lookup = "SELECT * FROM t WHERE k = 'a' AND ts >= 0 AND ts < 200"   # s0 and s1, each whole in ts
    p = Planner(tuple(seg["segment_name"]), seg["total_docs"].to_numpy(float), table, default_schema(table),
                segment_metadata(seg), None, {part: 900.0, lookup: 40.0})
    assert p.plan(part).filter_entries == pytest.approx((0.0, 900.0))
    assert p.plan(lookup).filter_entries == pytest.approx((20.0, 20.0))


@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_the_model_charges_filter_entries_and_a_group_bys_documents_at_their_own_costs(tmp_path: Path,
                                                                                        engine: str) -> None:
    """One server of one core, queries seconds apart, only per-entry and per-document costs (1 ns each, a group-by's
    document 1 ns more). By hand: a lookup logging 2,000,000 filter entries and 10 documents works 2 ms + 10 ns; a
    SUM over 1,000,000 logged documents 1 ms; the same documents grouped 2 ms; with no logged counts a SUM over
    ``ts`` 100-149 reads s1's 1,000 ts values and scans its 500 matching rows: 1.5 us."""
    segments().to_parquet(tmp_path / "segments.parquet")
    lookup, total = "SELECT * FROM t WHERE k = 'x' LIMIT 10", "SELECT SUM(v) FROM t WHERE ts >= 0 AND ts < 100"
    grouped, window = ("SELECT k, SUM(v) FROM t WHERE ts >= 0 AND ts < 100 GROUP BY k",
                       "SELECT SUM(v) FROM t WHERE ts >= 100 AND ts < 150")
    pd.DataFrame({"arrival_s": [1.0, 2.0, 3.0, 4.0], "sql": [lookup, total, grouped, window],
                  "num_docs_scanned": [10, 1_000_000, 1_000_000, None],
                  "num_entries_scanned_in_filter": [2_000_000, 0, 0, None]}).to_parquet(tmp_path / "queries.parquet")
    scenario = {"cluster": {"servers": 1, "server": {"cores": 1}, "network": {"latency_ms": 0},
                            "broker": {"overhead_ms": 0.0, "reduce_ms_per_server": 0.0, "reduce_ms_per_row": 0.0}},
                "table": TABLE, "workload": {"arrival": {"process": "replay"}},
                "service": {"model": "cost", "per_request_ms": 0.0, "per_segment_ms": 0.0, "ns_per_doc": 1.0,
                            "group_by_ns_per_doc": 1.0, "ns_per_filter_entry": 1.0, "merge_ms_per_segment": 0.0},
                "simulation": {"duration_s": 6, "warmup_s": 0, "replications": 1, "engine": engine}}
    q = simulate(scenario, data=tmp_path).queries.sort_values("arrival_s")
    np.testing.assert_allclose(q["latency_ms"], [2.0 + 10e-6, 1.0, 2.0, 1.5e-3], rtol=1e-9)
