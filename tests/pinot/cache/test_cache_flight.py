"""Single flight without threads: one leader per missing key, waiters counted and woken, SWR refresh."""

from __future__ import annotations

import pytest

from workbench.pinot.cache.flight import Hit, Leader, SingleFlightCache, Waiter
from workbench.pinot.cache.lru import WeightedLRUCache


def make(singleflight: bool = True, ttl_ms: float | None = None, swr_ms: float = 0.0) -> SingleFlightCache[str, str]:
    lru: WeightedLRUCache[str, str] = WeightedLRUCache(1_000, ttl_ms, stale_window_ms=swr_ms)
    return SingleFlightCache(lru, singleflight=singleflight)


def test_concurrent_misses_compute_once_and_every_waiter_is_woken() -> None:
    cache = make()
    leader = cache.begin("q", now_ms=0)
    waiters = [cache.begin("q", now_ms=t) for t in (1, 2, 3)]
    assert isinstance(leader, Leader)
    assert all(isinstance(w, Waiter) and w.flight == leader.flight for w in waiters)
    woken = cache.complete(leader.flight, "rows", 10, now_ms=50)
    assert woken == tuple(waiters)
    assert cache.begin("q", now_ms=60) == Hit("rows")
    assert cache.flight_stats.leaders == 1 and cache.flight_stats.waiters == 3
    assert cache.flight_stats.load_ms == 50
    s = cache.cache.stats
    assert (s.hits, s.misses, s.puts) == (1, 4, 1)  # waiters found no value: they are misses
    assert s.savings_ms == 50  # the one hit saved the leader's 50 ms
    assert cache.in_flight == 0


def test_different_keys_fly_separately() -> None:
    cache = make()
    assert isinstance(cache.begin("a", now_ms=0), Leader)
    assert isinstance(cache.begin("b", now_ms=0), Leader)
    assert cache.in_flight == 2


def test_without_singleflight_every_miss_leads() -> None:
    cache = make(singleflight=False)
    first, second = cache.begin("q", now_ms=0), cache.begin("q", now_ms=1)
    assert isinstance(first, Leader) and isinstance(second, Leader)
    assert first.flight != second.flight
    assert cache.complete(first.flight, "x", 1, now_ms=5) == ()
    assert cache.complete(second.flight, "y", 1, now_ms=6) == ()
    assert cache.flight_stats.waiters == 0 and cache.cache.peek("q", now_ms=7) == "y"


def test_failed_flight_stores_nothing_and_returns_its_waiters() -> None:
    cache = make()
    leader = cache.begin("q", now_ms=0)
    waiter = cache.begin("q", now_ms=1)
    assert isinstance(leader, Leader)
    assert cache.fail(leader.flight, now_ms=2) == (waiter,)
    assert cache.flight_stats.failures == 1
    assert isinstance(cache.begin("q", now_ms=3), Leader)  # a fresh flight, not a waiter


def test_ending_a_flight_twice_is_an_error() -> None:
    cache = make()
    leader = cache.begin("q", now_ms=0)
    assert isinstance(leader, Leader)
    cache.complete(leader.flight, "x", 1, now_ms=1)
    with pytest.raises(ValueError, match="not in progress"):
        cache.complete(leader.flight, "x", 1, now_ms=2)


def test_invalidation_during_a_flight_keeps_its_result_out_of_the_cache() -> None:
    cache = make()
    leader = cache.begin("q", now_ms=0)
    waiter = cache.begin("q", now_ms=1)
    assert isinstance(leader, Leader)
    cache.invalidate_where(lambda key: key == "q")
    assert cache.complete(leader.flight, "computed-on-old-data", 1, now_ms=5) == (waiter,)
    assert cache.cache.peek("q", now_ms=6) is None


def test_store_false_wakes_waiters_without_storing() -> None:
    cache = make()
    leader = cache.begin("q", now_ms=0)
    assert isinstance(leader, Leader)
    cache.complete(leader.flight, "partial", 1, now_ms=5, store=False)
    assert cache.cache.peek("q", now_ms=6) is None


def test_stale_while_revalidate_serves_stale_and_refreshes_once() -> None:
    cache = make(ttl_ms=10, swr_ms=20)
    first = cache.begin("q", now_ms=0)
    assert isinstance(first, Leader)
    cache.complete(first.flight, "v1", 1, now_ms=1)  # live until 11, stale until 31
    refresher = cache.begin("q", now_ms=12)
    assert isinstance(refresher, Leader) and refresher.stale_value == "v1"
    assert cache.begin("q", now_ms=13) == Hit("v1", stale=True)  # refresh running: serve stale, no wait
    cache.complete(refresher.flight, "v2", 1, now_ms=15)
    assert cache.begin("q", now_ms=16) == Hit("v2")
    assert cache.cache.stats.stale_hits == 2 and cache.flight_stats.waiters == 0


def test_past_the_stale_window_a_miss_is_a_plain_miss() -> None:
    cache = make(ttl_ms=10, swr_ms=5)
    first = cache.begin("q", now_ms=0)
    assert isinstance(first, Leader)
    cache.complete(first.flight, "v1", 1, now_ms=0)
    late = cache.begin("q", now_ms=15)
    assert isinstance(late, Leader) and late.stale_value is None
