"""Server segment cache: plan signatures, time-constraint clipping, safety gates and invalidation."""

from __future__ import annotations

import pytest

from workbench.pinot.cache.base import Bypass, Cached
from workbench.pinot.cache.columns import ColumnSpec, DataType
from workbench.pinot.cache.config import ServerCacheConfig
from workbench.pinot.cache.flight import Leader
from workbench.pinot.cache.lru import Removal
from workbench.pinot.cache.server import ServerSegmentCache
from workbench.pinot.cache.sizing import AggregationPart, FunctionShape
from workbench.pinot.cache.state import SegmentKind
from workbench.pinot.sql import parse_query

T = "ev_OFFLINE"
RT = "ev_REALTIME"
SCHEMA = {"ts": ColumnSpec(DataType.LONG), "city": ColumnSpec(DataType.STRING)}
PART = AggregationPart((FunctionShape("count"),))
#: Three day-long segments: [0, 999], [1000, 1999], [2000, 2999].
RANGES = {f"ev_{i}": (i * 1000, i * 1000 + 999) for i in range(3)}


def make(**config: object) -> ServerSegmentCache:
    cache = ServerSegmentCache(ServerCacheConfig(**{"enabled": True, **config}))  # type: ignore[arg-type]
    cache.add_table(T, schema=SCHEMA, time_column="ts")
    for name, span in RANGES.items():
        cache.on_segment_added(T, name, time_range=span)
    return cache


def run(cache: ServerSegmentCache, sql: str, segment: str, now_ms: float = 0.0, table: str = T) -> object:
    """Look one segment up and, on a miss, compute and store it; return the decision."""
    answer = cache.begin(cache.prepare(parse_query(sql), table), segment, now_ms)
    if isinstance(answer, Leader):
        cache.complete(answer.flight, PART, now_ms + 5)
    return answer


def window(low: int, high: int) -> str:
    return f"SELECT COUNT(*) FROM ev WHERE city = 'nl' AND ts >= {low} AND ts < {high}"


def test_sliding_windows_reuse_the_segments_they_cover_whole() -> None:
    cache = make()
    for segment in RANGES:
        run(cache, window(500, 2600), segment)
    later = [type(run(cache, window(700, 2900), s, now_ms=10)).__name__ for s in RANGES]
    assert later == ["Leader", "Cached", "Leader"]  # only ev_1 lies inside both windows


def test_clipped_constraints_that_agree_on_a_segment_share_its_entry() -> None:
    cache = make()
    plan_a = cache.prepare(parse_query(window(500, 2600)), T)
    plan_b = cache.prepare(parse_query(window(500, 9000)), T)
    assert cache.key_for(plan_a, "ev_0").time_constraint == (500, 999)
    assert cache.key_for(plan_a, "ev_0") == cache.key_for(plan_b, "ev_0")
    assert cache.key_for(plan_a, "ev_1").time_constraint == "all"
    assert cache.key_for(plan_a, "ev_2") != cache.key_for(plan_b, "ev_2")


def test_other_filters_still_separate_keys() -> None:
    cache = make()
    run(cache, window(0, 3000), "ev_1")
    other_city = "SELECT COUNT(*) FROM ev WHERE city = 'de' AND ts >= 0 AND ts < 3000"
    assert isinstance(run(cache, other_city, "ev_1"), Leader)
    no_time = "SELECT COUNT(*) FROM ev WHERE city = 'nl'"
    assert isinstance(run(cache, no_time, "ev_1"), Cached)  # no constraint covers the segment whole


def test_segments_without_a_time_range_keep_the_constraint_in_the_plan() -> None:
    cache = make()
    cache.on_segment_added(T, "ev_x")
    plan = cache.prepare(parse_query(window(0, 10)), T)
    key = cache.key_for(plan, "ev_x")
    assert key.time_constraint == "in-plan" and "ts BETWEEN 0 AND 9" in key.plan


def test_time_column_of_unknown_type_is_not_clipped() -> None:
    cache = make()
    cache.add_table(T, schema={}, time_column="ts")
    plan = cache.prepare(parse_query(window(0, 10)), T)
    assert plan.time_bounds is None and cache.key_for(plan, "ev_0").time_constraint == "in-plan"


def test_key_fields() -> None:
    cache = make()
    key = cache.key_for(cache.prepare(parse_query(window(0, 3000)), T), "ev_2")
    assert (key.table, key.segment, key.time_constraint, key.end_offset) == (T, "ev_2", "all", None)
    assert key.plan == "SELECT count(*) FROM ev WHERE city = 'nl' LIMIT 10"


@pytest.mark.parametrize(
    ("sql", "config", "reason"),
    [
        ("SET segmentCache = false; SELECT COUNT(*) FROM ev", {}, "query-option"),
        ("SELECT city FROM ev ORDER BY city", {}, "order-by"),
        ("SELECT COUNT(*) FROM ev", {"enable_offline": False}, "offline-disabled"),
        ("SELECT COUNT(*) FROM ev", {"enabled": False}, "disabled"),
    ],
)
def test_gates_on_offline_segments(sql: str, config: dict[str, object], reason: str) -> None:
    cache = make(**config)
    assert run(cache, sql, "ev_0") == Bypass(reason)
    assert cache.table_metrics(T).bypasses == {reason: 1}


def test_order_by_can_be_switched_on() -> None:
    cache = make(cache_order_by=True)
    assert isinstance(run(cache, "SELECT city FROM ev ORDER BY city", "ev_0"), Leader)


def realtime(cache: ServerSegmentCache, upsert: bool = False) -> None:
    cache.add_table(RT, schema=SCHEMA, time_column="ts", upsert=upsert)
    cache.on_segment_added(RT, "rt_sealed", kind=SegmentKind.SEALED, time_range=(0, 99))
    cache.on_segment_added(RT, "rt_live", kind=SegmentKind.CONSUMING, partition_id=3, end_offset=10)


def test_consuming_segments_and_upsert_tables_are_not_cached_by_default() -> None:
    cache = make()
    realtime(cache)
    assert isinstance(run(cache, "SELECT COUNT(*) FROM ev", "rt_sealed", table=RT), Leader)
    assert run(cache, "SELECT COUNT(*) FROM ev", "rt_live", table=RT) == Bypass("consuming")
    realtime(cache, upsert=True)
    assert run(cache, "SELECT COUNT(*) FROM ev", "rt_sealed", table=RT) == Bypass("upsert")


def test_consuming_key_carries_the_end_offset_so_answers_are_never_outdated() -> None:
    cache = make(enable_realtime_consuming=True)
    realtime(cache)
    sql = "SELECT COUNT(*) FROM ev"
    run(cache, sql, "rt_live", table=RT)
    assert isinstance(run(cache, sql, "rt_live", now_ms=10, table=RT), Cached)
    cache.on_rows_ingested(RT, "rt_live", end_offset=20)
    assert isinstance(run(cache, sql, "rt_live", now_ms=20, table=RT), Leader)
    assert cache.metrics().outdated_answers == 0


def test_without_the_offset_in_the_key_outdated_answers_are_counted() -> None:
    cache = make(enable_realtime_consuming=True, consuming_key_includes_offset=False)
    realtime(cache)
    sql = "SELECT COUNT(*) FROM ev"
    run(cache, sql, "rt_live", table=RT)
    cache.on_rows_ingested(RT, "rt_live", end_offset=20)
    assert run(cache, sql, "rt_live", now_ms=20, table=RT) == Cached(PART, outdated=True)
    assert cache.table_metrics(RT).outdated_answers == 1


def test_upsert_switch_counts_outdated_answers_after_valid_docs_change() -> None:
    cache = make(disable_for_upsert=False)
    realtime(cache, upsert=True)
    sql = "SELECT COUNT(*) FROM ev"
    run(cache, sql, "rt_sealed", table=RT)
    cache.on_valid_docs_changed(RT, "rt_sealed")
    answer = run(cache, sql, "rt_sealed", now_ms=9, table=RT)
    assert isinstance(answer, Cached) and answer.outdated


def test_sealing_a_consuming_segment_makes_it_cacheable() -> None:
    cache = make()
    realtime(cache)
    cache.on_segment_sealed(RT, "rt_live", time_range=(100, 199))
    assert isinstance(run(cache, "SELECT COUNT(*) FROM ev", "rt_live", table=RT), Leader)


def test_reload_purges_only_that_segment() -> None:
    cache = make()
    for segment in RANGES:
        run(cache, "SELECT COUNT(*) FROM ev", segment)
    assert cache.on_segment_reloaded(T, "ev_1") == Removal(1, PART.serialized_size_bytes(cache.config.compression))
    answers = [type(run(cache, "SELECT COUNT(*) FROM ev", s, now_ms=9)).__name__ for s in RANGES]
    assert answers == ["Cached", "Leader", "Cached"]


def test_delete_and_admin_calls() -> None:
    cache = make()
    for segment in RANGES:
        run(cache, "SELECT COUNT(*) FROM ev", segment)
    assert cache.on_segment_deleted(T, "ev_0").removed_keys == 1
    assert run(cache, "SELECT COUNT(*) FROM ev", "ev_0") == Bypass("unknown-segment")
    assert cache.invalidate_segment(T, "ev_1").removed_keys == 1
    assert cache.invalidate_table(T).removed_keys == 1
    assert cache.metrics().invalidations == 3


def test_schema_change_changes_plans_and_purges() -> None:
    cache = make()
    run(cache, "SELECT COUNT(*) FROM ev WHERE city = 5", "ev_0")
    new_schema = {"ts": ColumnSpec(DataType.LONG), "city": ColumnSpec(DataType.INT)}
    assert cache.on_schema_changed(T, new_schema).removed_keys == 1
    plan = cache.prepare(parse_query("SELECT COUNT(*) FROM ev WHERE city = '5'"), T)
    assert "city = 5" in plan.plan  # the new schema's type is used, not a memoised old plan
