"""The routing seed's trade-off: 12 servers as 3 replica groups of 4 against balanced over all 12.

"Increasing numReplicaGroups while decreasing numInstancesPerReplicaGroup will make each query use
less servers, which may reduce the possibility of one of them having a full GC. However, each server
will need to process more number of segments per query." With G1-like pauses, replica-group routing
should lower the tail (fewer servers to be caught in a pause) and raise the median and the work each
server does per query (three times the segments).
"""

from __future__ import annotations

from typing import Any

import pytest

from workbench.analysis.stats import summarise
from workbench.sim.run import simulate

SEGMENT_MS = 1_000_000 * 10e-6 + 0.1  # docs x ns_per_doc + per_segment_ms
REQUEST_MS = 0.5


def scenario(replica_groups: bool) -> dict[str, Any]:
    table: dict[str, Any] = {
        "tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 3},
        "routing": {"instanceSelectorType": "replicaGroup" if replica_groups else "balanced"},
    }
    if replica_groups:
        table["instanceAssignmentConfigMap"] = {"OFFLINE": {
            "tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"},
            "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": 3,
                                            "numInstancesPerReplicaGroup": 4}}}
    return {
        "cluster": {"servers": 12, "server": {"cores": 4, "heap": "16G"}, "network": {"latency_ms": 0.2},
                    "broker": {"overhead_ms": 1},
                    # eden settled at 60% of the heap (9.6 GiB): a young collection every ~65 s per server
                    "gc": {"collector": "g1", "allocation_rate": "150MB", "young_base_ms": 80}},
        "table": table,
        "workload": {"synthetic": {"segments_per_server": 9, "docs_per_segment": 1_000_000},
                     "arrival": {"qps": 20}},
        "service": {"model": "cost", "ns_per_doc": 10, "per_segment_ms": 0.1, "per_request_ms": REQUEST_MS,
                    "merge_ms_per_segment": 0},
        "simulation": {"duration_s": 600, "warmup_s": 30, "replications": 4, "seed": 3},
    }


@pytest.fixture(scope="module")
def runs() -> dict[str, Any]:
    return {"balanced": simulate(scenario(False)), "replicaGroup": simulate(scenario(True))}


def test_fan_out_is_one_replica_group(runs: dict[str, Any]) -> None:
    assert (runs["balanced"].queries["servers_queried"] == 12).all()
    assert (runs["replicaGroup"].queries["servers_queried"] == 4).all()
    assert (runs["replicaGroup"].queries["segments_queried"] == 36).all()


def test_replica_groups_lower_the_gc_tail(runs: dict[str, Any]) -> None:
    bal, rg = (summarise(runs[k]).latency_ms.p99 for k in ("balanced", "replicaGroup"))
    assert rg.ci_high < bal.ci_low, (rg, bal)
    delayed = {k: runs[k].queries["gc_delayed"].mean() for k in runs}
    assert delayed["replicaGroup"] < delayed["balanced"] / 2  # ~(1-(1-p)^4) vs ~(1-(1-p)^12)


def test_replica_groups_cost_median_latency_and_per_server_work(runs: dict[str, Any]) -> None:
    bal, rg = (summarise(runs[k]).latency_ms.p50 for k in ("balanced", "replicaGroup"))
    assert rg.ci_low > bal.ci_high, (rg, bal)
    per_request = {k: (r.servers["busy_ms"].sum() / r.servers["requests"].sum()) for k, r in runs.items()}
    expected = (9 * SEGMENT_MS + REQUEST_MS) / (3 * SEGMENT_MS + REQUEST_MS)
    # busy_ms is core time used up to the horizon, requests every request received: the horizon cuts at
    # most a few requests per server short of their work, against ~10^4 requests per server (< 1e-3)
    assert per_request["replicaGroup"] / per_request["balanced"] == pytest.approx(expected, rel=1e-3)
