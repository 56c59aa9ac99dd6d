"""Events: key popularity, disorder, rate profiles, and routing by the real Pinot partition functions."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from workload_fixtures import spec_of, table

from workbench.pinot.partition import get_partition_function
from workbench.workload.events import zipf_ranks
from workbench.workload.pure import Workload, generate_frames


def test_zipf_ranks_follow_the_power_law_head_and_tail() -> None:
    s, n = 1.2, 100_000
    ranks = zipf_ranks(np.random.default_rng(1).random(2_000_000), n, s)
    counts = np.bincount(ranks, minlength=n)
    # head: exact probabilities, so P(rank 1) / P(rank 2) = 2^s
    assert counts[0] / counts[1] == pytest.approx(2**s, rel=0.03)
    # tail (past the exactly sampled head): mass in [1e4, 1e5) vs [1e3, 1e4) is 10^(1-s)
    band = [counts[10**k - 1:10 ** (k + 1) - 1].sum() for k in (3, 4)]
    assert band[1] / band[0] == pytest.approx(10 ** (1 - s), rel=0.05)
    assert ranks.min() == 0 and ranks.max() < n


def test_uniform_keys_are_even_and_zipf_keys_are_skewed() -> None:
    uniform = generate_frames(spec_of(events=50_000, keys=100), seed=1).events["key_id"].value_counts()
    assert len(uniform) == 100 and uniform.max() / uniform.min() < 1.6
    zipf = generate_frames(spec_of(events=50_000, keys=100, key_distribution="zipf", zipf_s=1.0), seed=1)
    share = zipf.events["key_id"].value_counts(normalize=True)
    harmonic = sum(1 / k for k in range(1, 101))
    assert share.iloc[0] == pytest.approx(1 / harmonic, rel=0.05)  # the top key's share is 1/H(100)
    # popular ranks are scattered over key ids, not the ids 0, 1, 2, ...
    assert set(share.index[:4]) != {0, 1, 2, 3}


def test_key_column_is_prefix_plus_id(zipf_workload: Workload) -> None:
    ev = zipf_workload.events
    assert (ev["key"] == "user_" + ev["key_id"].astype(str)).all()


def test_event_ids_follow_arrival_order(zipf_workload: Workload) -> None:
    ev = zipf_workload.events  # sorted by event_id
    assert ev["event_id"].tolist() == list(range(len(ev)))
    assert ev["ingest_time_ms"].is_monotonic_increasing


def test_disorder_late_share_and_lateness(zipf_workload: Workload) -> None:
    lag_s = (zipf_workload.events["ingest_time_ms"] - zipf_workload.events["event_time_ms"]) / 1000
    assert (lag_s >= 0).all()
    late = lag_s[lag_s > 0.001]  # no jitter configured: only late events lag
    assert len(late) / len(lag_s) == pytest.approx(0.2, abs=0.015)
    assert late.mean() == pytest.approx(60, rel=0.08)  # exponential, mean 60 s
    assert late.max() <= 3600


def test_jitter_delays_every_event_and_the_cap_holds() -> None:
    w = generate_frames(spec_of(events=20_000, disorder={"jitter_ms": 50, "late_fraction": 0.5,
                                                         "lateness_s": 600, "max_lateness_s": 300}), seed=2)
    lag = w.events["ingest_time_ms"] - w.events["event_time_ms"]
    assert lag.max() == 300_000  # 600 s of lateness capped at 300 s
    on_time = lag[lag < 300_000]
    assert on_time.mean() == pytest.approx(50, rel=0.1)  # exponential jitter, mean 50 ms


def _hourly(events: pd.DataFrame) -> pd.Series:
    hour = pd.to_datetime(events["ingest_time_ms"], unit="ms", utc=True).dt.hour
    return hour.value_counts().sort_index()


def test_constant_rate_spreads_events_evenly() -> None:
    per_hour = _hourly(generate_frames(spec_of(events=48_000, span_s="1d"), seed=3).events)
    assert per_hour.min() >= 1900 and per_hour.max() <= 2100  # exactly 2000 expected per hour


def test_diurnal_rate_peaks_at_the_configured_hour() -> None:
    spec = spec_of(events=100_000, span_s="1d", rate={"profile": "diurnal", "amplitude": 0.6, "peak_s": "15h"})
    per_hour = _hourly(generate_frames(spec, seed=3).events)
    assert per_hour.idxmax() in (14, 15) and per_hour.idxmin() in (2, 3)
    # rate(t) = 1 + 0.6 cos(...): the hours around the peak and the trough differ by (1.6/0.4) = 4x
    assert per_hour[15] / per_hour[3] == pytest.approx(4.0, rel=0.1)
    assert per_hour.sum() == 100_000


def test_bursts_multiply_the_rate_inside_the_bursts() -> None:
    spec = spec_of(events=100_000, span_s="2h",
                   rate={"profile": "bursts", "burst_every_s": "10m", "burst_length_s": "1m", "burst_factor": 6})
    seconds = pd.Series(generate_frames(spec, seed=4).events["ingest_time_ms"] // 1000)
    per_second = seconds.value_counts()
    # bursts cover about 1/10 of the time at 6x the base rate: seconds fall into two clear levels
    base, burst = np.percentile(per_second, 40), np.percentile(per_second, 97)
    assert burst / base == pytest.approx(6, rel=0.25)


@pytest.mark.parametrize(("function", "column"), [("Murmur", "key"), ("Modulo", "key_id"), ("Murmur3", "key"),
                                                   ("HashCode", "key")])
def test_stream_partition_is_the_pinot_function_of_the_routing_column(function: str, column: str) -> None:
    spec = spec_of(events=3_000, keys=700, partitions=5)
    w = generate_frames(spec, table_config=table(column=column, function=function, partitions=5), seed=6)
    fn = get_partition_function(function, 5)
    expected = [fn.get_partition(v) for v in w.events[column].tolist()]  # the scalar path, row by row
    assert w.events["partition"].tolist() == expected


def test_without_a_table_config_the_producer_is_kafkas_default_partitioner() -> None:
    w = generate_frames(spec_of(events=2_000, keys=300, partitions=3), seed=6)
    kafka = get_partition_function("Murmur", 3)  # murmur2 of the key bytes, masked, modulo 3
    assert w.events["partition"].tolist() == [kafka.get_partition(k) for k in w.events["key"]]
    assert w.manifest["columns"]["stream_partition"]["functionName"] == "Murmur"


def test_a_table_partition_column_the_generator_does_not_make_is_a_copy_of_the_key() -> None:
    w = generate_frames(spec_of(events=1_000), table_config=table(column="memberId", function="Murmur"), seed=1)
    assert (w.events["memberId"] == w.events["key"]).all()
    assert w.manifest["columns"]["aliases_of_key"] == ["memberId"]


def test_partitioning_by_a_column_that_cannot_be_partitioned_is_rejected() -> None:
    from workbench.errors import InputError

    with pytest.raises(InputError, match="cannot partition by 'value'"):
        generate_frames(spec_of(events=10, partitioning={"column": "value"}))


def test_categories_are_fixed_per_key(zipf_workload: Workload) -> None:
    assert zipf_workload.events.groupby("key_id")["category"].nunique().max() == 1


def test_span_starts_at_the_epoch_of_the_workbench(zipf_workload: Workload) -> None:
    first = datetime.fromtimestamp(zipf_workload.events["ingest_time_ms"].min() / 1000, tz=UTC)
    assert (first.year, first.month, first.day, first.hour) == (2026, 1, 1, 0)
    assert zipf_workload.events["ingest_time_ms"].max() < zipf_workload.manifest["time"]["end_ms"]
    assert math.isclose(zipf_workload.manifest["time"]["end_ms"] - zipf_workload.manifest["time"]["start_ms"], 7.2e6)
