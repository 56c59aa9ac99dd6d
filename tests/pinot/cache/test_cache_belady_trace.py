"""Offline optima and trace replay: hand-computed traces, and the bounds bracketing every policy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.pinot.cache.belady import belady_hits, belady_size_hits, next_use, opt_upper_bound
from workbench.pinot.cache.trace import (
    POLICIES,
    CacheTrace,
    belady_hit_rate,
    hit_rate_curve,
    simulate_cache_trace,
    zipf_trace,
)

#: Silberschatz, Galvin & Gagne, Operating System Concepts, the page-replacement reference string.
TEXTBOOK = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1]


def frame(keys: Sequence[object], sizes: list[int] | None = None, times: list[float] | None = None) -> pd.DataFrame:
    return pd.DataFrame({
        "key": keys,
        "size_bytes": sizes if sizes is not None else [1] * len(keys),
        "time_ms": times if times is not None else list(range(len(keys))),
    })


# -- Bélády on hand-computed traces ----------------------------------------------------------------


def test_textbook_optimal_page_replacement_has_nine_faults_with_three_frames() -> None:
    assert len(TEXTBOOK) - belady_hits(TEXTBOOK, 3, admit_always=True) == 9


def test_textbook_lru_has_twelve_faults_with_three_frames() -> None:
    result = simulate_cache_trace(frame(TEXTBOOK), "lru", max_bytes=3)
    assert result.requests - result.hits == 12


def test_textbook_fault_counts_for_other_frame_counts() -> None:
    # With 4 frames OPT faults 8 times; with 1 frame every change of page faults.
    assert len(TEXTBOOK) - belady_hits(TEXTBOOK, 4, admit_always=True) == 8
    assert len(TEXTBOOK) - belady_hits(TEXTBOOK, 1, admit_always=True) == 20
    assert belady_hits(TEXTBOOK, 0) == 0


def test_optimum_may_decline_to_cache_an_object_needed_last() -> None:
    keys = ["a", "b", "c", "a", "b"]  # with room for 2, caching c would cost a or b
    assert belady_hits(keys, 2, admit_always=True) == 1
    assert belady_hits(keys, 2) == 2


def test_next_use_marks_the_last_request_of_each_key_with_the_trace_length() -> None:
    assert next_use(["x", "y", "x", "x"]) == [2, 4, 3, 4]


def test_size_aware_heuristic_on_a_hand_computed_trace() -> None:
    # max 4 bytes; big (3 B) is needed again soon, s1/s2 (1 B each) later.
    keys = ["s1", "s2", "big", "big", "s1", "s2"]
    sizes = [1, 1, 3, 3, 1, 1]
    assert belady_size_hits(keys, sizes, 4) == (2, 4)  # s1 is evicted for big: hits big and s2
    # The true optimum is also 2 hits; the LP caches s1, s2 and 2/3 of big across the overlap.
    hits, _ = opt_upper_bound(keys, sizes, 4)
    assert hits == pytest.approx(2 + 2 / 3)


def test_lp_bound_lets_a_fraction_of_a_large_object_count() -> None:
    keys, sizes = ["a", "b", "a", "b"], [2, 2, 2, 2]
    hits, bytes_hit = opt_upper_bound(keys, sizes, 3)  # only 3 of the 4 bytes fit across the overlap
    assert hits == pytest.approx(1.5) and bytes_hit == pytest.approx(3.0)
    assert belady_size_hits(keys, sizes, 3) == (1, 2)


def test_objects_larger_than_the_cache_are_never_counted() -> None:
    assert opt_upper_bound(["a", "a"], [5, 5], 4) == (0.0, 0.0)
    assert belady_size_hits(["a", "a"], [5, 5], 4) == (0, 0)


# -- the bounds bracket every policy ------------------------------------------------------------------

_keys = st.lists(st.integers(0, 9), min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(keys=_keys, capacity=st.integers(0, 6))
def test_lp_bound_equals_exact_belady_for_unit_sizes(keys: list[int], capacity: int) -> None:
    hits, _ = opt_upper_bound(keys, [1] * len(keys), capacity)
    assert hits == pytest.approx(belady_hits(keys, capacity), abs=1e-6)


@settings(max_examples=150, deadline=None)
@given(keys=_keys, capacity=st.integers(0, 6))
def test_demand_paging_optimum_is_no_better_than_optimum_and_beats_lru(keys: list[int], capacity: int) -> None:
    lru = simulate_cache_trace(frame(list(keys)), "lru", max_bytes=capacity).hits
    paging = belady_hits(keys, capacity, admit_always=True)
    assert lru <= paging <= belady_hits(keys, capacity)


@settings(max_examples=150, deadline=None)
@given(keys=_keys, data=st.data(), max_bytes=st.integers(0, 20))
def test_heuristic_and_lru_never_exceed_the_lp_bound(keys: list[int], data: st.DataObject, max_bytes: int) -> None:
    size_of = {k: data.draw(st.integers(1, 6)) for k in set(keys)}
    sizes = [size_of[k] for k in keys]
    bound, bound_bytes = opt_upper_bound(keys, sizes, max_bytes)
    bound_by_bytes, _ = opt_upper_bound(keys, sizes, max_bytes, objective="bytes")
    heuristic, _ = belady_size_hits(keys, sizes, max_bytes)
    lru = simulate_cache_trace(frame(list(keys), sizes), "lru", max_bytes=max_bytes)
    assert max(heuristic, lru.hits) <= bound + 1e-6
    assert lru.bytes_hit <= opt_upper_bound(keys, sizes, max_bytes, objective="bytes")[1] + 1e-6
    assert bound_by_bytes <= bound + 1e-6 and bound_bytes >= 0


# -- trace replay -------------------------------------------------------------------------------------


def test_trace_replay_honours_ttl_and_counts_bytes() -> None:
    trace = frame(["a", "a", "a"], sizes=[5, 5, 5], times=[0, 5, 20])
    result = simulate_cache_trace(trace, "lru", max_bytes=100, ttl_ms=10)
    assert (result.hits, result.expirations, result.bytes_hit, result.bytes_requested) == (1, 1, 5, 15)
    assert result.hit_rate == pytest.approx(1 / 3) and result.byte_hit_rate == pytest.approx(1 / 3)


def test_unsorted_traces_are_replayed_in_time_order() -> None:
    trace = frame(["b", "a", "a"], times=[2, 0, 1])
    assert simulate_cache_trace(trace, "lru", max_bytes=1).hits == 1


def test_trace_with_tables_and_compute_costs() -> None:
    trace = frame(["x", "y", "x", "y"])
    trace["table"] = ["t", "t", "t", "t"]
    trace["compute_ms"] = [10.0, 20.0, 10.0, 20.0]
    limited = simulate_cache_trace(trace, "lru", max_bytes=10, table_limits={"t": 1})
    assert limited.hits == 0
    free = simulate_cache_trace(trace, "lru", max_bytes=10)
    assert free.hits == 2 and free.savings_ms == 30.0


def test_infinite_cache_counts_only_compulsory_misses() -> None:
    result = simulate_cache_trace(frame(list("abcabca")), "infinite", max_bytes=1)
    assert result.hits == 4 and result.kind == "no-eviction" and result.max_bytes == 1


def test_optimal_names_the_bound_it_computed() -> None:
    unit, sized = frame(list("abab")), frame(list("abab"), sizes=[1, 2, 1, 2])
    assert belady_hit_rate(unit, 1).kind == "exact-optimum"
    assert belady_hit_rate(sized, 2).kind == "upper-bound"
    assert belady_hit_rate(sized, 2, lp_max_requests=3).kind == "feasible-heuristic"
    with pytest.raises(ValueError, match="unit sizes"):
        simulate_cache_trace(sized, "belady", max_bytes=2)


def test_bad_trace_and_policy_are_named() -> None:
    with pytest.raises(ValueError, match="missing"):
        simulate_cache_trace(pd.DataFrame({"key": [1]}), "lru", 1)
    with pytest.raises(ValueError, match="unknown cache policy"):
        simulate_cache_trace(frame([1]), "arc", 1)


def test_hit_rate_curve_is_tidy_and_monotone_for_the_bound() -> None:
    trace = zipf_trace(np.random.default_rng(7), requests=3_000, objects=300, alpha=0.9, size_sigma=1.0)
    curve = hit_rate_curve(trace, [20_000, 80_000, 320_000], policies=("lru", "belady-size", "optimal"))
    assert set(curve.columns) >= {"policy", "kind", "max_bytes", "hit_rate", "byte_hit_rate"}
    pivot = curve.pivot(index="max_bytes", columns="policy", values="hit_rate")
    assert (pivot["lru"] <= pivot["optimal"] + 1e-9).all()
    assert (pivot["belady-size"] <= pivot["optimal"] + 1e-9).all()
    assert pivot["optimal"].is_monotonic_increasing
    assert set(curve.loc[curve.policy == "optimal", "kind"]) == {"upper-bound"}


def test_zipf_trace_is_reproducible_from_its_seed() -> None:
    first = zipf_trace(np.random.default_rng(1), 100, 10)
    assert first.equals(zipf_trace(np.random.default_rng(1), 100, 10))
    assert (first.groupby("key")["size_bytes"].nunique() == 1).all()


def test_registry_lists_every_policy() -> None:
    assert set(POLICIES) == {"lru", "infinite", "belady", "opt-bound", "belady-size", "optimal"}
    assert len(CacheTrace.from_frame(frame([1, 2]))) == 2
