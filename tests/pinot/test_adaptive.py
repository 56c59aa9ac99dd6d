"""Adaptive Server Selection stats, scores and selectors (pinot-behaviour.md §3.6).

Vectors come from Pinot's ExponentialMovingAverageTest and ServerRoutingStatsManagerTest as quoted in
the reference; decay and warm-up expectations are worked out by hand from the reference's rules.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.errors import InputError
from workbench.pinot.routing.adaptive import (
    AdaptiveConfig,
    AdaptiveSelectorType,
    AdaptiveServerSelector,
    ExponentialMovingAverage,
    ServerRoutingStatsManager,
    adaptive_server_selector,
    rank_in_pools,
    select_in_pools,
)

PREFIX = "pinot.broker.adaptive.server.selector"


def exact_stats(kind: AdaptiveSelectorType = AdaptiveSelectorType.HYBRID, floor: int = 0) -> ServerRoutingStatsManager:
    """The reference's test settings: alpha 1.0, initial 0, exponent 3, decay off, warm-up 0."""
    return ServerRoutingStatsManager(
        AdaptiveConfig(
            kind,
            ewma_alpha=1.0,
            autodecay_window_ms=0,
            avg_initialization_val=0.0,
            hybrid_score_exponent=3,
            hybrid_score_queue_size_floor=floor,
        )
    )


# -- EMA ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("alpha", "values", "expected"),
    [
        (0.5, [0.1, 0.5, 1.25], [0.05, 0.275, 0.7625]),
        (0.3, [1.0, 1.0, 1.0], [0.3, 0.51, 0.657]),
        (1.0, [3.0, 7.5, 2.0], [3.0, 7.5, 2.0]),
    ],
)
def test_ema_vectors(alpha: float, values: list[float], expected: list[float]) -> None:
    """[PINOT-TEST] ExponentialMovingAverageTest (start 0; alpha 1.0 equals the last value)."""
    ema = ExponentialMovingAverage(alpha, autodecay_window_ms=0, initial=0.0)
    assert [ema.compute(v, now_ms=float(t)) for t, v in enumerate(values)] == pytest.approx(expected, abs=1e-12)


def test_ema_starts_at_initial_value() -> None:
    assert ExponentialMovingAverage(0.666).average() == 1.0
    assert ExponentialMovingAverage(0.666, initial=5.0).average(now_ms=1e9) == 5.0  # no update: no decay


def test_warm_up_ignores_updates_until_it_ends() -> None:
    """Updates within warmup of creation are dropped; at creation + warmup they count."""
    ema = ExponentialMovingAverage(0.5, autodecay_window_ms=0, warmup_ms=100, initial=2.0, created_ms=10)
    assert ema.compute(100.0, now_ms=10) == 2.0
    assert ema.compute(100.0, now_ms=109.9) == 2.0
    assert ema.compute(100.0, now_ms=110) == 51.0


def test_auto_decay_follows_pinots_periodic_check() -> None:
    """Ticks every window from creation; a tick feeds 0.0 when the last update is more than a window old.
    Update at 0 (avg 8 -> 4 with alpha 0.5); tick 100 is exactly one window (no decay); 200 decays to 2;
    300 is one window after that decay (none); 400 decays to 1."""
    ema = ExponentialMovingAverage(0.5, autodecay_window_ms=100, initial=0.0)
    ema.compute(8.0, now_ms=0)
    assert [ema.average(now_ms=t) for t in (100, 199, 200, 300, 399, 400)] == [4.0, 4.0, 2.0, 2.0, 2.0, 1.0]


def test_auto_decay_is_lazy_but_equivalent() -> None:
    """Reading once at 1000 equals reading at every tick: decays at 200, 400, 600, 800, 1000."""
    stepwise = ExponentialMovingAverage(0.5, autodecay_window_ms=100, initial=0.0)
    lazy = ExponentialMovingAverage(0.5, autodecay_window_ms=100, initial=0.0)
    for ema in (stepwise, lazy):
        ema.compute(64.0, now_ms=0)
    for t in range(0, 1001, 50):
        stepwise.average(now_ms=t)
    assert lazy.average(now_ms=1000) == stepwise.average(now_ms=1000) == 1.0


def test_auto_decay_needs_an_update_and_a_positive_window() -> None:
    assert ExponentialMovingAverage(0.5, autodecay_window_ms=100, initial=4.0).average(now_ms=10_000) == 4.0
    off = ExponentialMovingAverage(0.5, autodecay_window_ms=0, initial=0.0)
    off.compute(8.0, now_ms=0)
    assert off.average(now_ms=1e6) == 4.0


def test_update_resets_the_decay_clock() -> None:
    """An update at 150 makes tick 200 too recent (50 ms); tick 300 (150 ms) decays."""
    ema = ExponentialMovingAverage(0.5, autodecay_window_ms=100, initial=0.0)
    ema.compute(8.0, now_ms=0)
    ema.compute(4.0, now_ms=150)
    assert ema.average(now_ms=299) == 4.0
    assert ema.average(now_ms=300) == 2.0


def test_decay_during_warm_up_does_not_change_the_average() -> None:
    """A decay is a compute(0.0) and obeys warm-up; it still counts as an update for the next tick."""
    ema = ExponentialMovingAverage(0.5, autodecay_window_ms=100, warmup_ms=250, initial=8.0)
    ema.compute(8.0, now_ms=0)  # in warm-up: ignored, but sets the last-update time
    assert ema.average(now_ms=200) == 8.0  # tick 200 is in warm-up
    assert ema.average(now_ms=400) == 4.0  # tick 400 is after warm-up


@given(alpha=st.floats(0, 1), initial=st.floats(0, 1e6), values=st.lists(st.floats(0, 1e6), min_size=1, max_size=20))
def test_ema_stays_within_the_range_of_its_inputs(alpha: float, initial: float, values: list[float]) -> None:
    """Property: a convex combination never leaves [min, max] of the initial value and the inputs."""
    ema = ExponentialMovingAverage(alpha, autodecay_window_ms=0, initial=initial)
    for t, v in enumerate(values):
        ema.compute(v, now_ms=float(t))
    lo, hi = min(initial, *values), max(initial, *values)
    assert lo - 1e-6 * hi <= ema.average() <= hi * (1 + 1e-9) + 1e-9


@given(alpha=st.floats(0.01, 1), reads=st.lists(st.floats(0, 1e5), min_size=1, max_size=20))
def test_decay_never_increases_the_average(alpha: float, reads: list[float]) -> None:
    ema = ExponentialMovingAverage(alpha, autodecay_window_ms=100, initial=0.0)
    ema.compute(50.0, now_ms=0)
    previous = ema.average()
    for t in sorted(reads):
        assert ema.average(now_ms=t) <= previous
        previous = ema.average()


# -- stats and scores ------------------------------------------------------------------------------
def test_hybrid_scores_54_10_80() -> None:
    """[PINOT-TEST] ServerRoutingStatsManagerTest hybrid arithmetic."""
    stats = exact_stats()
    stats.record_submission("server1", 0)
    stats.record_submission("server1", 0)
    entry = stats.stats("server1")
    assert entry is not None and (entry.num_in_flight, entry.in_flight_ema.average()) == (2, 2.0)
    assert stats.hybrid_score("server1") == 0.0  # latency EMA still 0
    stats.record_response("server1", latency_ms=2, now_ms=2)
    assert stats.hybrid_score("server1") == 54.0  # (1 + 2)**3 * 2
    stats.record_submission("server2", 3)
    stats.record_response("server2", latency_ms=10, now_ms=13)
    assert stats.hybrid_score("server2") == 10.0  # (0 + 1)**3 * 10
    floored = exact_stats(floor=1)
    floored.record_submission("server2", 0)
    floored.record_response("server2", latency_ms=10, now_ms=10)
    assert floored.hybrid_score("server2") == 80.0  # (1 + 0 + 1)**3 * 10


def test_in_flight_ema_updates_only_on_submission() -> None:
    stats = exact_stats(AdaptiveSelectorType.NUM_INFLIGHT_REQ)
    for t in range(3):
        stats.record_submission("s", t)
    stats.record_response("s", 5, 5)
    entry = stats.stats("s")
    assert entry is not None
    assert (entry.num_in_flight, entry.in_flight_ema.average(), stats.num_in_flight("s")) == (2, 3.0, 2.0)
    assert stats.latency_score("s") == 5.0


def test_negative_latency_only_lowers_in_flight() -> None:
    """MSE records -1: only the in-flight count changes."""
    stats = exact_stats(AdaptiveSelectorType.LATENCY)
    stats.record_submission("s", 0)
    stats.record_response("s", -1, 1)
    assert (stats.num_in_flight("s"), stats.latency_score("s")) == (0.0, 0.0)


def test_servers_without_stats_score_none_and_disabled_stats_record_nothing() -> None:
    stats = exact_stats()
    assert stats.hybrid_score("ghost") is None and stats.stats("ghost") is None
    off = ServerRoutingStatsManager(AdaptiveConfig(enable_stats_collection=False))
    off.record_submission("s", 0)
    assert off.stats("s") is None


def test_time_must_not_go_backwards() -> None:
    stats = exact_stats()
    stats.advance(10)
    with pytest.raises(ValueError, match="backwards"):
        stats.record_submission("s", 5)


def test_stats_entries_start_their_emas_when_created() -> None:
    """Warm-up is measured from the entry's creation (first use), not from the manager's."""
    stats = ServerRoutingStatsManager(
        AdaptiveConfig(AdaptiveSelectorType.LATENCY, ewma_alpha=1.0, warmup_duration_ms=100, autodecay_window_ms=0)
    )
    stats.record_submission("s", 1000)
    stats.record_response("s", 40, 1050)
    assert stats.latency_score("s") == 1.0  # still warming up: initial value
    stats.record_submission("s", 1100)
    stats.record_response("s", 40, 1100)
    assert stats.latency_score("s") == 40.0


def test_scores_include_decay_up_to_the_managers_clock() -> None:
    stats = ServerRoutingStatsManager(
        AdaptiveConfig(
            AdaptiveSelectorType.LATENCY, ewma_alpha=0.5, avg_initialization_val=0.0, autodecay_window_ms=100
        )
    )
    stats.record_submission("s", 0)
    stats.record_response("s", 80, 0)
    stats.advance(250)  # tick 200 decays 40 -> 20
    assert stats.latency_score("s") == 20.0


# -- selectors -------------------------------------------------------------------------------------
def latency_selector(latencies: dict[str, float], seed: int = 0) -> AdaptiveServerSelector:
    stats = exact_stats(AdaptiveSelectorType.LATENCY)
    for server, latency in latencies.items():
        stats.record_submission(server, 0)
        stats.record_response(server, latency, 0)
    return AdaptiveServerSelector(stats, AdaptiveSelectorType.LATENCY, np.random.default_rng(seed))


def test_select_takes_the_first_strict_minimum() -> None:
    selector = latency_selector({"a": 5, "b": 3, "c": 3})
    assert selector.select(["a", "b", "c"]) == 1
    assert selector.select(["c", "b"]) == 0


def test_select_picks_uniformly_at_random_when_a_server_has_no_stats() -> None:
    """A candidate without stats makes the whole pick uniform over the candidates."""
    selector = latency_selector({"a": 1, "b": 100})
    picks = Counter(selector.select(["a", "b", "new"]) for _ in range(3000))
    assert set(picks) == {0, 1, 2}
    assert all(800 < n < 1200 for n in picks.values())


def test_rank_puts_servers_without_stats_first_and_shuffles_ties() -> None:
    selector = latency_selector({"a": 5, "b": 3, "c": 3})
    ranked = selector.rank(["a", "b", "c", "new"])
    assert ranked[0] == ("new", -1.0) and ranked[-1] == ("a", 5.0)
    orders = {tuple(s for s, _ in selector.rank(["a", "b", "c"])) for _ in range(200)}
    assert orders == {("b", "c", "a"), ("c", "b", "a")}


def test_preferred_pools_select_within_the_first_pool_with_candidates() -> None:
    """orderedPreferredPools "2|1": pick adaptively inside pool 2, else pool 1, else the rest."""
    selector = latency_selector({"p1_fast": 1, "p2_slow": 50, "p2_mid": 20, "p3": 0})
    servers, pools = ["p1_fast", "p2_slow", "p2_mid", "p3"], [1, 2, 2, 3]
    assert select_in_pools(selector, servers, pools, (2, 1)) == 2
    assert select_in_pools(selector, servers[:1] + servers[3:], [1, 3], (2, 1)) == 0
    assert select_in_pools(selector, servers, pools) == 3


def test_preferred_pools_regroup_the_ranking() -> None:
    """Ranking: preferred pools in order, adaptive order kept inside each, other pools last."""
    selector = latency_selector({"server1": 80, "server2": 70, "server3": 90, "server4": 60})
    servers, pools = ["server1", "server2", "server3", "server4"], [1, 2, 1, 3]
    assert rank_in_pools(selector, servers, pools) == ["server4", "server2", "server1", "server3"]
    assert rank_in_pools(selector, servers, pools, (2, 1)) == ["server2", "server1", "server3", "server4"]


# -- config ------------------------------------------------------------------------------------------
def test_defaults_match_the_reference_table() -> None:
    c = AdaptiveConfig()
    assert (
        c.type,
        c.enable_stats_collection,
        c.ewma_alpha,
        c.autodecay_window_ms,
        c.warmup_duration_ms,
        c.avg_initialization_val,
        c.hybrid_score_exponent,
        c.hybrid_score_queue_size_floor,
    ) == (AdaptiveSelectorType.NO_OP, False, 0.666, 10_000, 0, 1.0, 3, 0)


def test_broker_config_keys_are_read_and_type_is_upper_cased() -> None:
    config = AdaptiveConfig.from_broker_config(
        {
            f"{PREFIX}.type": "num_inflight_req",
            f"{PREFIX}.enable.stats.collection": "TRUE",
            f"{PREFIX}.ewma.alpha": "0.5",
            f"{PREFIX}.autodecay.window.ms": "2000",
            f"{PREFIX}.warmup.duration": "30",
            f"{PREFIX}.avg.initialization.val": "2",
            f"{PREFIX}.hybrid.score.exponent": "2",
            f"{PREFIX}.hybrid.score.queue.size.floor": "1",
        }
    )
    assert config == AdaptiveConfig(AdaptiveSelectorType.NUM_INFLIGHT_REQ, True, 0.5, 2000, 30, 2.0, 2, 1)


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({f"{PREFIX}.type": "FASTEST"}, "type"),
        ({f"{PREFIX}.type": "HYBRID"}, "type"),  # stats collection left off
        ({f"{PREFIX}.ewma.alpha": "1.5"}, "ewma.alpha"),
        ({f"{PREFIX}.ewma.alpha": "fast"}, "ewma.alpha"),
        ({f"{PREFIX}.warmup.duration": "-1"}, "warmup.duration"),
        ({f"{PREFIX}.avg.initialization.val": "-2"}, "avg.initialization.val"),
        ({f"{PREFIX}.hybrid.score.queue.size.floor": "-1"}, "hybrid.score.queue.size.floor"),
    ],
)
def test_bad_broker_config_names_the_key(settings: dict[str, str], key: str) -> None:
    with pytest.raises(InputError) as err:
        AdaptiveConfig.from_broker_config(settings)
    assert err.value.where == f"{PREFIX}.{key}"


def test_no_op_means_no_adaptive_selector() -> None:
    config = AdaptiveConfig()
    assert adaptive_server_selector(config, ServerRoutingStatsManager(config), np.random.default_rng(0)) is None
    hybrid = AdaptiveConfig(AdaptiveSelectorType.HYBRID)
    selector = adaptive_server_selector(hybrid, ServerRoutingStatsManager(hybrid), np.random.default_rng(0))
    assert selector is not None and selector.kind is AdaptiveSelectorType.HYBRID
