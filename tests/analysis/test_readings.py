"""Readings claim only what their numbers show."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.analysis.readings import (
    cache_reading,
    compare_intervals,
    heap_reading,
    layout_reading,
    pruning_reading,
    sizing_reading,
)


def test_a_winner_is_named_only_when_its_interval_clears_every_other() -> None:
    clear = compare_intervals({"rg": (100.0, 110.0, 120.0), "bal": (130.0, 140.0, 150.0)}, "p99", replications=8)
    assert clear.facts["claim"] == "separates" and "lies below every other" in clear.text
    touching = compare_intervals({"rg": (100.0, 110.0, 130.0), "bal": (130.0, 140.0, 150.0)}, "p99", replications=3)
    assert touching.facts["claim"] == "overlaps" and "with 3 replications the model cannot rank" in touching.text
    assert touching.facts["overlapping"] == ["bal"]


def test_layout_reading_reads_p99_and_p50_separately() -> None:
    table = pd.DataFrame({"config": ["bal", "rg"], "replications": [5, 5], "servers_queried_mean": [12.0, 4.0],
                          "gc_delayed_rate": [0.06, 0.02],
                          "latency_ms.p99.value": [300.0, 200.0], "latency_ms.p99.ci_low": [280.0, 180.0],
                          "latency_ms.p99.ci_high": [320.0, 220.0],
                          "latency_ms.p50.value": [20.0, 50.0], "latency_ms.p50.ci_low": [19.0, 49.0],
                          "latency_ms.p50.ci_high": [21.0, 51.0]})
    r = layout_reading(table)
    assert (r.facts["p99"]["best"], r.facts["p50"]["best"]) == ("rg", "bal")
    assert r.facts["p99"]["claim"] == r.facts["p50"]["claim"] == "separates"


def test_pruning_reading_calls_a_difference_only_above_one_segment() -> None:
    study = pd.DataFrame({"variant": ["a", "b", "a", "b"], "window": ["now", "now", "old", "old"],
                          "segments": [50] * 4, "kept_share": [0.10, 0.11, 0.10, 0.30]})
    facts = pruning_reading(study, by="window").facts["groups"]
    assert facts["now"]["claim"] == "same"  # 0.01 < one segment in 50
    assert facts["old"]["claim"] == "more"


def test_cache_reading_finds_where_more_bytes_stop_paying() -> None:
    mib = 1024**2
    curve = pd.DataFrame({"policy": ["lru"] * 3 + ["optimal"] * 3, "max_bytes": [mib, 2 * mib, 4 * mib] * 2,
                          "hit_rate": [0.2, 0.5, 0.505, 0.4, 0.6, 0.6]})
    r = cache_reading(curve)
    assert r.facts["flat_from_bytes"] == 2 * mib  # 4 MiB adds 0.5 points to 2 MiB's 50%, 2 MiB 30 points to 1's
    assert "from 2 MiB on, more bytes add under one point" in r.text
    rising = curve.assign(hit_rate=[0.2, 0.5, 0.6, 0.4, 0.6, 0.7])  # every step adds 10 points or more
    assert cache_reading(rising).facts["flat_from_bytes"] is None
    assert "the widest gap, 20% points, is at 1 MiB" in r.text  # 0.4 - 0.2 at 1 MiB, 0.1 at 2 MiB


def test_heap_reading_levels_grows_and_ihop() -> None:
    hours = [24.0, 48.0, 72.0]
    timeline = pd.DataFrame({"ttl_h": [0.0] * 3 + [6.0] * 3, "hour": hours * 2,
                             "live_bytes": [3e9, 6e9, 9e9, 3e9, 3e9, 3e9], "map_bytes": [2e9, 5e9, 8e9, 2e9, 2e9, 2e9],
                             "pinot_estimate_bytes": [1e9] * 6})
    facts = heap_reading(timeline, heap_bytes=16e9, ihop=0.45).facts["ttl"]
    assert facts["no TTL"]["claim"] == "grows" and facts["no TTL"]["growth_last_day_bytes"] == pytest.approx(3e9)
    assert facts["no TTL"]["ihop_hour"] == 72.0  # 9e9 > 0.45 x 16e9 = 7.2e9 first at hour 72
    assert facts["TTL 6 h"]["claim"] == "levels" and facts["TTL 6 h"]["ihop_hour"] is None


def test_sizing_reading_names_the_cheapest_that_meets_the_slo() -> None:
    combined = pd.DataFrame({"point": ["a", "b"], "shape": ["small", "big"], "monthly_cost": [100.0, 300.0],
                             "latency_ms.p99.value": [250.0, 150.0], "latency_ms.p99.ci_high": [260.0, 160.0],
                             "meets_slo": [False, True], "instance": ["s", "b"]})
    r = sizing_reading(combined, combined.iloc[1])
    assert r.facts["best"] == "b" and "all 1 cheaper configurations fail it" in r.text
    assert sizing_reading(combined, None).facts["best"] is None
