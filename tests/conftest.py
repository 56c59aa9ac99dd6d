"""Shared fixtures. Spark starts at most once per test session, and only for tests that ask for it."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (derandomize: the examples follow from each test's
# name), with no per-example deadline: a suite that found a new counterexample or missed a timing on a
# slower machine would fail one run in many, which is a defect in CI. A counterexample found while
# developing goes into the test as an ``@example``. `HYPOTHESIS_PROFILE=explore` searches afresh.
settings.register_profile("deterministic", derandomize=True, deadline=None, database=None, print_blob=True)
settings.register_profile("explore", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local[2] Spark session for the whole test run (a cold start costs 6-18 s)."""
    from workbench.workload.spark import get_spark

    session = get_spark("local[2]", app_name="workbench-tests")
    yield session
    session.stop()


class UpsertTrips:
    """A generated upsert workload (the TTL design's trips: keys updated for a while, then never again) and
    scenarios over it. Generated once per session in-process (no Spark); ``events`` sets its size."""

    SCHEMA: ClassVar[dict[str, Any]] = {"schemaName": "trips", "primaryKeyColumns": ["key"],
              # key_id: the column the table partitions by (Pinot refuses a partition column the schema lacks)
              "dimensionFieldSpecs": [{"name": "key", "dataType": "STRING"}, {"name": "key_id", "dataType": "LONG"}],
              "dateTimeFieldSpecs": [{"name": "event_time_ms", "dataType": "LONG",
                                      "format": "1:MILLISECONDS:EPOCH", "granularity": "1:MILLISECONDS"}]}

    def __init__(self, root: Any, events: int, partitions: int = 4) -> None:
        from workbench.pinot.table_config import TableConfig
        from workbench.scenario.build import build_section
        from workbench.workload.pure import generate_local
        from workbench.workload.spec import GenerateSpec

        self.partitions = partitions
        self.data = root / f"trips-{events}"
        spec = {"events": events, "partitions": partitions, "span_s": "12h", "segment_rows": max(events // 200, 100),
                "seed": 3, "lifecycle": {"lifetime_s": {"dist": "exponential", "mean": 1800}, "updates_per_key": 1.5},
                "queries": {"duration_s": 600}}
        generate_local(build_section(GenerateSpec, spec, "workload.generate"), self.data, table="trips",
                       table_config=TableConfig.from_json(self.table(0)))

    def table(self, ttl_ms: float, **upsert: Any) -> dict[str, Any]:
        """The trips table: upsert, partitioned by key, two replicas, metadataTTL ``ttl_ms``."""
        return {"tableName": "trips", "tableType": "REALTIME",
                "segmentsConfig": {"timeColumnName": "event_time_ms", "replicasPerPartition": "2"},
                "tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
                    "key_id": {"functionName": "Modulo", "numPartitions": self.partitions}}}},
                "routing": {"instanceSelectorType": "strictReplicaGroup"},
                "upsertConfig": {"mode": "FULL", "comparisonColumns": ["event_time_ms"], "metadataTTL": ttl_ms,
                                 "snapshot": "ENABLE", **upsert}}

    def scenario(self, ttl_ms: float = 0, *, servers: int = 4, gc: dict[str, Any] | None = None,
                 **sections: Any) -> dict[str, Any]:
        """A short run over the trips data (Poisson queries without a filter)."""
        return {"table": self.table(ttl_ms), "schema": self.SCHEMA,
                "cluster": {"servers": servers, "server": {"cores": 4, "heap": "1G"},
                            "gc": gc or {"collector": "g1", "live_heap": "400MB", "bytes_per_request": "256KB"}},
                "workload": {"data": str(self.data), "arrival": {"qps": 100}},
                "service": {"model": "exponential", "mean_ms": 0.05},
                "simulation": {"duration_s": 20, "warmup_s": 2, "replications": 1, "seed": 5}} | sections


@pytest.fixture(scope="session")
def trips_workload(tmp_path_factory: pytest.TempPathFactory) -> Callable[[int], UpsertTrips]:
    """``trips_workload(events)``: the trips workload of that size, generated once per session."""
    made: dict[int, UpsertTrips] = {}

    def make(events: int) -> UpsertTrips:
        if events not in made:
            made[events] = UpsertTrips(tmp_path_factory.mktemp("upsert"), events)
        return made[events]

    return make


@pytest.fixture(scope="session")
def upsert_trips(trips_workload: Callable[[int], UpsertTrips]) -> UpsertTrips:
    """200k events of the trips workload (~130k keys over 12 h)."""
    return trips_workload(200_000)
