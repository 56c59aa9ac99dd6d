"""WeightedLRUCache: hand-computed traces, and agreement with an independent reference LRU."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.pinot.cache.lru import Freshness, Removal, WeightedLRUCache

# -- hand-computed traces ------------------------------------------------------------------------


def test_evicts_least_recently_used_first_by_bytes() -> None:
    cache: WeightedLRUCache[str, str] = WeightedLRUCache(max_bytes=10)
    for i, key in enumerate("abc"):
        cache.put(key, key.upper(), 3, now_ms=i)  # a, b, c: 9 bytes
    assert cache.get("a", now_ms=3) == "A"  # order now b, c, a
    cache.put("d", "D", 5, now_ms=4)  # 14 bytes: evict b (11), then c (8)
    assert list(cache.keys()) == ["a", "d"]
    assert cache.bytes == 8
    assert cache.stats.evictions == 2


def test_one_heavy_put_evicts_several_light_entries() -> None:
    cache: WeightedLRUCache[int, int] = WeightedLRUCache(max_bytes=6)
    for k in range(6):
        cache.put(k, k, 1, now_ms=k)
    cache.put(99, 99, 4, now_ms=10)
    assert list(cache.keys()) == [4, 5, 99]
    assert cache.stats.evictions == 4


def test_re_put_replaces_weight_and_refreshes_recency() -> None:
    cache: WeightedLRUCache[str, int] = WeightedLRUCache(max_bytes=10)
    cache.put("a", 1, 4, now_ms=0)
    cache.put("b", 2, 4, now_ms=1)
    cache.put("a", 3, 2, now_ms=2)  # a is now MRU with weight 2
    assert cache.bytes == 6
    cache.put("c", 4, 4, now_ms=3)  # 10 bytes: fits exactly
    assert list(cache.keys()) == ["b", "a", "c"]
    cache.put("d", 5, 1, now_ms=4)  # 11 -> evict b
    assert list(cache.keys()) == ["a", "c", "d"]
    assert cache.peek("a", now_ms=5) == 3


def test_value_heavier_than_the_cache_is_rejected_and_drops_the_old_value() -> None:
    cache: WeightedLRUCache[str, str] = WeightedLRUCache(max_bytes=5)
    cache.put("a", "old", 2, now_ms=0)
    assert cache.put("a", "new", 6, now_ms=1) is False
    assert "a" not in cache
    assert cache.stats.rejected == 1 and cache.stats.puts == 1


def test_ttl_after_write_expires_at_exactly_write_plus_ttl_and_reads_do_not_refresh() -> None:
    cache: WeightedLRUCache[str, str] = WeightedLRUCache(max_bytes=100, ttl_ms=10)
    cache.put("a", "A", 1, now_ms=0)
    assert cache.get("a", now_ms=5) == "A"
    assert cache.get("a", now_ms=9.999) == "A"
    assert cache.get("a", now_ms=10) is None  # live while now < 0 + 10
    s = cache.stats
    assert (s.hits, s.misses, s.expirations, s.evictions, s.entries) == (2, 1, 1, 0, 0)


def test_expired_entries_are_purged_before_evicting_live_ones() -> None:
    cache: WeightedLRUCache[str, str] = WeightedLRUCache(max_bytes=10, ttl_ms=10)
    cache.put("old", "x", 6, now_ms=0)
    cache.put("live", "y", 4, now_ms=8)
    cache.put("new", "z", 5, now_ms=12)  # "old" expired at 10: purge it, no eviction needed
    assert list(cache.keys()) == ["live", "new"]
    assert (cache.stats.expirations, cache.stats.evictions) == (1, 0)


def test_per_entry_ttl_override() -> None:
    cache: WeightedLRUCache[str, str] = WeightedLRUCache(max_bytes=10, ttl_ms=100)
    cache.put("long", "l", 1, now_ms=0)
    cache.put("short", "s", 1, now_ms=0, ttl_ms=5)  # due before "long": scheduled out of order
    cache.put("other", "o", 1, now_ms=6)  # purges "short" first
    assert list(cache.keys()) == ["long", "other"]
    assert cache.stats.expirations == 1
    assert cache.get("long", now_ms=99) == "l"


def test_per_table_limit_evicts_within_the_table_first() -> None:
    cache: WeightedLRUCache[str, str] = WeightedLRUCache(max_bytes=100, table_limits={"t1": 5})
    cache.put("t1-a", "", 3, now_ms=0, table="t1")
    cache.put("t2-a", "", 50, now_ms=1, table="t2")
    cache.put("t1-b", "", 2, now_ms=2, table="t1")
    assert cache.get("t1-a", now_ms=3) == ""  # t1 order: b, a
    cache.put("t1-c", "", 2, now_ms=4, table="t1")  # t1 = 7 > 5: evict t1-b (LRU within t1), t2 untouched
    assert list(cache.keys()) == ["t2-a", "t1-a", "t1-c"]
    assert cache.table_bytes("t1") == 5 and cache.table_bytes("t2") == 50


def test_table_limit_then_global_limit() -> None:
    cache: WeightedLRUCache[str, str] = WeightedLRUCache(max_bytes=10, table_limits={"t": 6})
    cache.put("u1", "", 4, now_ms=0, table="u")
    cache.put("t1", "", 4, now_ms=1, table="t")
    cache.put("t2", "", 4, now_ms=2, table="t")  # t = 8 > 6: evict t1; total 8 <= 10
    assert list(cache.keys()) == ["u1", "t2"]
    cache.put("u2", "", 4, now_ms=3, table="u")  # total 12 > 10: evict global LRU u1
    assert list(cache.keys()) == ["t2", "u2"]
    assert cache.put("t3", "", 7, now_ms=4, table="t") is False  # heavier than t's limit


def test_invalidation_by_key_table_predicate_and_clear() -> None:
    cache: WeightedLRUCache[tuple[str, int], int] = WeightedLRUCache(max_bytes=100)
    for i in range(4):
        cache.put(("t", i), i, 10, now_ms=i, table="t")
        cache.put(("u", i), i, 1, now_ms=i, table="u")
    assert cache.invalidate(("t", 0)) == Removal(1, 10)
    assert cache.invalidate(("t", 0)) == Removal(0, 0)
    assert cache.invalidate_where(lambda k: k[1] >= 2, table="t") == Removal(2, 20)
    assert cache.invalidate_table("u") == Removal(4, 4)
    assert cache.clear() == Removal(1, 10)
    assert cache.stats.invalidations == 8 and cache.bytes == 0 and cache.tables() == ()


def test_stale_window_keeps_expired_entries_for_lookup_only() -> None:
    cache: WeightedLRUCache[str, str] = WeightedLRUCache(max_bytes=10, ttl_ms=10, stale_window_ms=5)
    cache.put("a", "A", 1, now_ms=0)
    assert cache.lookup("a", now_ms=9) == ("A", Freshness.FRESH)
    assert cache.get("a", now_ms=11) is None  # plain reads never serve stale values
    assert cache.lookup("a", now_ms=12) == ("A", Freshness.STALE)
    assert cache.lookup("a", now_ms=15) == (None, Freshness.MISSING)
    assert cache.stats.stale_hits == 1 and "a" not in cache


def test_savings_add_the_cost_of_each_hit() -> None:
    cache: WeightedLRUCache[str, str] = WeightedLRUCache(max_bytes=10)
    cache.put("a", "A", 1, now_ms=0, cost_ms=40.0)
    cache.get("a", now_ms=1)
    cache.get("a", now_ms=2)
    assert cache.stats.savings_ms == 80.0
    assert cache.stats.hit_rate == 1.0


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_bytes"):
        WeightedLRUCache(-1)
    with pytest.raises(ValueError, match="ttl_ms"):
        WeightedLRUCache(10, ttl_ms=0)
    cache: WeightedLRUCache[str, int] = WeightedLRUCache(10)
    with pytest.raises(ValueError, match="weight_bytes"):
        cache.put("a", 1, -1, now_ms=0)


def test_expiry_heap_is_compacted_under_churn() -> None:
    cache: WeightedLRUCache[int, int] = WeightedLRUCache(max_bytes=10, ttl_ms=1e9)
    for i in range(20_000):
        cache.put(i % 3, i, 1, now_ms=i)
    assert len(cache._fifo) + len(cache._heap) <= 8 * 4_096
    assert cache.get(2, now_ms=20_000) == 19_997


# -- an independent reference ---------------------------------------------------------------------


@dataclass
class _RefEntry:
    key: object
    weight: int
    expires: float
    table: str | None


@dataclass
class ReferenceLRU:
    """A deliberately naive model of the documented semantics: a list in recency order, full scans."""

    max_bytes: int
    ttl: float | None
    limits: dict[str, int]
    order: list[_RefEntry] = field(default_factory=list)
    hits: int = 0
    misses: int = 0
    evictions: int = 0
    expirations: int = 0

    def _find(self, key: object) -> _RefEntry | None:
        return next((e for e in self.order if e.key == key), None)

    def get(self, key: object, now: float) -> bool:
        entry = self._find(key)
        if entry is not None and entry.expires <= now:
            self.order.remove(entry)
            self.expirations += 1
            entry = None
        if entry is None:
            self.misses += 1
            return False
        self.order.remove(entry)
        self.order.append(entry)
        self.hits += 1
        return True

    def put(self, key: object, weight: int, now: float, table: str | None, ttl: float | None = None) -> bool:
        old = self._find(key)
        if old is not None:
            self.order.remove(old)
        if weight > self.max_bytes or (table in self.limits and weight > self.limits[table]):
            return False
        life = ttl if ttl is not None else self.ttl
        self.order.append(_RefEntry(key, weight, now + life if life else float("inf"), table))
        expired = [e for e in self.order if e.expires <= now]
        self.expirations += len(expired)
        self.order = [e for e in self.order if e.expires > now]
        if table in self.limits:
            while sum(e.weight for e in self.order if e.table == table) > self.limits[table]:
                self._evict(next(e for e in self.order if e.table == table))
        while sum(e.weight for e in self.order) > self.max_bytes:
            self._evict(self.order[0])
        return True

    def _evict(self, entry: _RefEntry) -> None:
        self.order.remove(entry)
        self.evictions += 1


_ops = st.lists(
    st.tuples(
        st.sampled_from(["get", "put"]),
        st.integers(0, 7),  # key
        st.integers(0, 9),  # weight
        st.integers(0, 4),  # time step
        st.sampled_from([None, "t", "u"]),
        st.one_of(st.none(), st.integers(1, 15)),  # per-entry TTL override
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(ops=_ops, max_bytes=st.integers(0, 20), ttl=st.one_of(st.none(), st.integers(1, 12)),
       t_limit=st.one_of(st.none(), st.integers(0, 12)))
def test_agrees_with_reference_lru_on_random_traces(
    ops: list[tuple[str, int, int, int, str | None, int | None]], max_bytes: int, ttl: int | None,
    t_limit: int | None
) -> None:
    limits = {} if t_limit is None else {"t": t_limit}
    cache: WeightedLRUCache[int, int] = WeightedLRUCache(max_bytes, ttl, table_limits=limits)
    ref = ReferenceLRU(max_bytes, ttl, limits)
    now = 0
    for op, key, weight, step, table, entry_ttl in ops:
        now += step
        if op == "get":
            assert (cache.get(key, now) is not None) == ref.get(key, now)
        else:
            stored = cache.put(key, key, weight, now, table=table, ttl_ms=entry_ttl)
            assert stored == ref.put(key, weight, now, table, entry_ttl)
        assert list(cache.keys()) == [e.key for e in ref.order]
    s = cache.stats
    assert (s.hits, s.misses, s.evictions, s.expirations) == (ref.hits, ref.misses, ref.evictions, ref.expirations)
    assert s.bytes == sum(e.weight for e in ref.order) <= max_bytes


@settings(max_examples=150, deadline=None)
@given(requests=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 3)), max_size=120),
       max_bytes=st.integers(0, 12), ttl=st.one_of(st.none(), st.integers(1, 30)))
def test_trace_replay_agrees_with_reference_lru(requests: list[tuple[int, int]], max_bytes: int,
                                                ttl: int | None) -> None:
    """simulate_cache_trace(..., "lru") counts exactly the hits of the reference replaying the trace."""
    import pandas as pd

    from workbench.pinot.cache.trace import simulate_cache_trace

    sizes = {k: 1 + k % 4 for k in range(10)}
    trace = pd.DataFrame({"key": [k for k, _ in requests], "size_bytes": [sizes[k] for k, _ in requests],
                          "time_ms": list(itertools.accumulate(step for _, step in requests))})
    ref = ReferenceLRU(max_bytes, ttl, {})
    for key, size, now in zip(trace["key"], trace["size_bytes"], trace["time_ms"], strict=True):
        if not ref.get(key, now):
            ref.put(key, size, now, None)
    result = simulate_cache_trace(trace, "lru", max_bytes, ttl)
    assert (result.hits, result.evictions, result.expirations) == (ref.hits, ref.evictions, ref.expirations)
