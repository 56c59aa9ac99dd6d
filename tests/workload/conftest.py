"""Shared fixtures for the workload tests: small generated workloads (no Spark)."""

from __future__ import annotations

import pytest
from workload_fixtures import spec_of, table

from workbench.workload.pure import Workload, generate_frames


@pytest.fixture(scope="session")
def zipf_workload() -> Workload:
    """20k events, Zipf keys, late events, 4 Murmur(key) stream partitions, table on Modulo(key_id)."""
    late = {"late_fraction": 0.2, "lateness_s": {"dist": "exponential", "mean": 60}}
    spec = spec_of(events=20_000, keys=500, key_distribution="zipf", zipf_s=1.1, partitions=4, span_s="2h",
                   segment_rows=1_500, disorder=late, partitioning={"column": "key", "function": "Murmur"})
    return generate_frames(spec, table_config=table(), seed=11)


@pytest.fixture(scope="session")
def trip_workload() -> Workload:
    """The trip example: keys live ~30 min with 4 updates, 30% end with a delete; upsert table."""
    spec = spec_of(events=30_000, partitions=4, span_s="6h", segment_rows=1_200, segment_time_s="1h",
                   key_prefix="trip_",
                   lifecycle={"lifetime_s": {"dist": "exponential", "mean": 1800}, "max_lifetime_s": "2h",
                              "updates_per_key": 4, "delete_fraction": 0.3},
                   disorder={"late_fraction": 0.1, "lateness_s": {"dist": "exponential", "mean": 30}})
    return generate_frames(spec, table_config=table("trips", column="trip_id", function="Murmur", upsert=True),
                           seed=5)
