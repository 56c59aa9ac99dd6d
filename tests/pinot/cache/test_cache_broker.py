"""Broker result cache: versioned keys, invalidation, safety gates, single flight and metrics."""

from __future__ import annotations

import pytest

from workbench.pinot.cache.base import Bypass, Cached
from workbench.pinot.cache.broker import BrokerResultCache
from workbench.pinot.cache.columns import ColumnSpec, DataType
from workbench.pinot.cache.config import BrokerCacheConfig, TableCacheOverride
from workbench.pinot.cache.flight import Leader, Waiter
from workbench.pinot.cache.lru import Removal
from workbench.pinot.cache.sizing import HEADER_BYTES, BrokerResult, ColumnShape, Compression
from workbench.pinot.cache.state import SegmentKind
from workbench.pinot.sql import parse_query
from workbench.pinot.sql.query import Query

OFF, RT = "events_OFFLINE", "events_REALTIME"
RESULT = BrokerResult(num_rows=1, columns=(ColumnShape(),))
Q = parse_query("SELECT COUNT(*) FROM events WHERE country IN ('nl', 'de')")
Q_RESPELLED = parse_query("select count(*) from events where country = 'de' or country = 'nl' limit 10")


def make(**config: object) -> BrokerResultCache:
    settings = {"enabled": True, "compression": Compression("none"), **config}
    cache = BrokerResultCache(BrokerCacheConfig(**settings))  # type: ignore[arg-type]
    cache.add_table(OFF, schema={"country": ColumnSpec(DataType.STRING)})
    cache.add_table(RT, schema={"country": ColumnSpec(DataType.STRING)})
    for name in ("off_0", "off_1"):
        cache.on_segment_added(OFF, name)
    cache.on_segment_added(RT, "rt_0", kind=SegmentKind.SEALED)
    return cache


ROUTE = {OFF: ["off_0", "off_1"], RT: ["rt_0"]}


def fill(cache: BrokerResultCache, query: Query = Q, route: dict[str, list[str]] | None = None,
         now_ms: float = 0.0, cost_ms: float = 30.0) -> None:
    leader = cache.begin(query, route or ROUTE, now_ms)
    assert isinstance(leader, Leader), leader
    cache.complete(leader.flight, RESULT, now_ms + cost_ms)


def test_a_respelled_query_hits_the_same_entry() -> None:
    cache = make()
    fill(cache)
    answer = cache.begin(Q_RESPELLED, ROUTE, now_ms=100)
    assert answer == Cached(RESULT)
    m = cache.metrics()
    assert (m.hits, m.misses, m.puts, m.hit_savings_ms, m.load_latency_ms) == (1, 1, 1, 30.0, 30.0)
    assert m.size_bytes == m.value_bytes == RESULT.serialized_size_bytes()


def test_routing_to_a_different_segment_set_is_a_different_key() -> None:
    cache = make()
    fill(cache)
    assert isinstance(cache.begin(Q, {OFF: ["off_0"], RT: ["rt_0"]}, now_ms=1), Leader)
    assert cache.key_for(Q, ROUTE) != cache.key_for(Q, {OFF: ["off_1", "off_0"], RT: []})
    assert cache.key_for(Q, ROUTE) == cache.key_for(Q_RESPELLED, {RT: ["rt_0"], OFF: ["off_1", "off_0"]})


@pytest.mark.parametrize(
    "event",
    [
        lambda c: c.on_segment_reloaded(OFF, "off_1"),
        lambda c: c.on_segment_replaced(OFF, "off_1"),
        lambda c: c.on_segment_deleted(OFF, "off_1"),
        lambda c: c.on_segment_added(OFF, "off_1"),
        lambda c: c.on_schema_changed(OFF),
        lambda c: c.on_table_config_changed(RT),
        lambda c: c.invalidate_segment(RT, "rt_0"),
        lambda c: c.invalidate_table("events"),
    ],
    ids=["reload", "replace", "delete", "re-add", "schema", "table-config", "admin-segment", "admin-table"],
)
def test_lifecycle_and_admin_invalidation_purge_the_entry(event: object) -> None:
    cache = make()
    fill(cache)
    removal = event(cache)  # type: ignore[operator]
    assert removal == Removal(1, RESULT.serialized_size_bytes())
    assert cache.metrics().invalidations == 1 and cache.metrics().size_bytes == 0


def test_an_event_on_an_unrelated_segment_keeps_the_entry() -> None:
    cache = make()
    fill(cache, route={OFF: ["off_0"]})
    assert cache.on_segment_reloaded(OFF, "off_1") == Removal(0, 0)
    assert isinstance(cache.begin(Q, {OFF: ["off_0"]}, now_ms=100), Cached)


def test_epochs_alone_make_old_entries_unreachable_when_purging_is_off() -> None:
    cache = make(purge_on_schema_change=False)
    fill(cache)
    assert cache.on_schema_changed(OFF) == Removal(0, 0)
    assert isinstance(cache.begin(Q, ROUTE, now_ms=100), Leader)


def test_reload_during_execution_keeps_the_old_result_out() -> None:
    cache = make()
    leader = cache.begin(Q, ROUTE, now_ms=0)
    assert isinstance(leader, Leader)
    cache.on_segment_reloaded(OFF, "off_0")
    cache.complete(leader.flight, RESULT, now_ms=10)
    assert cache.metrics().entries == 0


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda c: None, "disabled"),
        (lambda c: c.on_segment_added(RT, "rt_1", kind=SegmentKind.CONSUMING), "consuming"),
        (lambda c: c.add_table(RT, upsert=True), "upsert"),
    ],
)
def test_safety_gates(setup: object, reason: str) -> None:
    cache = make(enabled=reason != "disabled")
    setup(cache)  # type: ignore[operator]
    route = {**ROUTE, RT: ["rt_0", "rt_1"]} if reason == "consuming" else ROUTE
    assert cache.begin(Q, route, now_ms=0) == Bypass(reason)
    assert cache.table_metrics(OFF).bypasses == {reason: 1}
    assert cache.metrics().bypasses == 1 and cache.metrics().misses == 0


def test_per_query_option_and_unknown_segments_bypass() -> None:
    cache = make()
    off = parse_query("SET resultCache = false; SELECT COUNT(*) FROM events")
    assert cache.begin(off, ROUTE, now_ms=0) == Bypass("query-option")
    assert cache.begin(Q, {OFF: ["nope"]}, now_ms=0) == Bypass("unknown-segment")
    assert cache.begin(Q, {"other_OFFLINE": []}, now_ms=0) == Bypass("unknown-table")


def test_table_override_disables_one_table() -> None:
    cache = make(table_overrides={"events": TableCacheOverride(enabled=False)})
    assert cache.begin(Q, ROUTE, now_ms=0) == Bypass("disabled")


def test_consuming_switch_counts_outdated_answers() -> None:
    cache = make(cache_consuming=True)
    cache.on_segment_added(RT, "rt_1", kind=SegmentKind.CONSUMING, partition_id=0, end_offset=100)
    route = {**ROUTE, RT: ["rt_0", "rt_1"]}
    fill(cache, route=route)
    assert cache.begin(Q, route, now_ms=50) == Cached(RESULT)
    cache.on_rows_ingested(RT, "rt_1", end_offset=150)
    assert cache.begin(Q, route, now_ms=60) == Cached(RESULT, outdated=True)
    assert cache.metrics().outdated_answers == 1
    assert cache.table_metrics(RT).outdated_answers == 1  # accounted to the raw table "events"


def test_upsert_switch_counts_outdated_answers() -> None:
    cache = make(cache_upsert=True)
    cache.add_table(OFF, upsert=True)
    for name in ("off_0", "off_1"):
        cache.on_segment_added(OFF, name)
    fill(cache)
    cache.on_valid_docs_changed(OFF, "off_0")
    answer = cache.begin(Q, ROUTE, now_ms=100)
    assert isinstance(answer, Cached) and answer.outdated


def test_partial_responses_are_not_stored_but_waiters_are_woken() -> None:
    cache = make()
    leader = cache.begin(Q, ROUTE, now_ms=0)
    waiter = cache.begin(Q_RESPELLED, ROUTE, now_ms=1)
    assert isinstance(leader, Leader) and isinstance(waiter, Waiter)
    assert cache.complete(leader.flight, RESULT, now_ms=5, partial=True) == (waiter,)
    assert cache.metrics().puts == 0 and cache.metrics().singleflight_waiters == 1
    assert cache.table_metrics("events").singleflight_waiters == 1


def test_failed_execution_stores_nothing() -> None:
    cache = make()
    leader = cache.begin(Q, ROUTE, now_ms=0)
    assert isinstance(leader, Leader)
    assert cache.fail(leader.flight, now_ms=3) == ()
    assert isinstance(cache.begin(Q, ROUTE, now_ms=4), Leader)


def test_ttl_and_per_table_ttl_override() -> None:
    cache = make(ttl_ms=1_000, table_overrides={"events": TableCacheOverride(ttl_ms=100)})
    fill(cache, now_ms=0, cost_ms=0)
    assert isinstance(cache.begin(Q, ROUTE, now_ms=99), Cached)
    assert isinstance(cache.begin(Q, ROUTE, now_ms=100), Leader)


def test_stale_while_revalidate_through_the_broker() -> None:
    cache = make(ttl_ms=100, stale_while_revalidate_ms=50)
    fill(cache, now_ms=0, cost_ms=0)
    refresh = cache.begin(Q, ROUTE, now_ms=120)
    assert isinstance(refresh, Leader) and refresh.stale_value == RESULT
    assert cache.begin(Q, ROUTE, now_ms=121) == Cached(RESULT, expired=True)
    assert cache.metrics().expired_answers == 2


def test_weight_is_the_compressed_serialised_size() -> None:
    cache = make(compression=Compression("lz4", 2.0))
    fill(cache)
    expected = HEADER_BYTES + -(-RESULT.payload_bytes() // 2)
    assert cache.metrics().size_bytes == expected


def test_per_table_byte_limit_evicts_within_the_table() -> None:
    limit = 2 * RESULT.serialized_size_bytes()
    cache = make(table_overrides={"events": TableCacheOverride(max_bytes=limit)})
    for i in range(3):
        fill(cache, query=parse_query(f"SELECT COUNT(*) FROM events LIMIT {i + 1}"), now_ms=i)
    assert cache.metrics().evictions == 1 and cache.table_metrics("events").bytes == limit


def test_clear_all() -> None:
    cache = make()
    fill(cache)
    fill(cache, query=parse_query("SELECT MAX(x) FROM events"))
    assert cache.clear_all().removed_keys == 2
