"""REALTIME layouts as Pinot's RealtimeSegmentAssignment builds them: completed segments stay where their
stream partition is consumed unless the table relocates them (COMPLETED instance partitions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.pinot.table_config import TableConfig
from workbench.sim.layout import assign_layout
from workbench.sim.run import simulate

SERVERS = tuple(f"Server_{i}" for i in range(6))
NAMES = tuple(f"events__{p}__{seq}__20250101T0000Z" for seq in range(6) for p in range(2))
PARTITIONS = np.array([p for _ in range(6) for p in range(2)])
CONSUMING = np.array([seq == 5 for seq in range(6) for _ in range(2)])


def _table(**extra: Any) -> TableConfig:
    return TableConfig.from_json({"tableName": "events", "tableType": "REALTIME",
                                  "segmentsConfig": {"replicasPerPartition": "2", "timeColumnName": "ts"},
                                  "tableIndexConfig": {"streamConfigs": {"streamType": "kafka"}}, **extra})


def _hosts(ideal: dict[str, dict[str, str]]) -> set[str]:
    return {s for hosts in ideal.values() for s in hosts}


def test_without_relocation_completed_segments_stay_on_their_partitions_consuming_servers() -> None:
    ideal = assign_layout(_table(), SERVERS, NAMES, CONSUMING, PARTITIONS)
    # Pinot consumes partition p on instances (p x replication + r) % servers of the table-hash-rotated
    # list: two partitions x two replicas occupy 4 of the 6 servers, and the other 2 never hold data
    assert len(_hosts(ideal)) == 4
    for name, p in zip(NAMES, PARTITIONS, strict=True):
        consuming_twin = NAMES[10 + int(p)]  # the partition's CONSUMING segment
        assert set(ideal[name]) == set(ideal[consuming_twin])
        assert set(ideal[name].values()) == ({"CONSUMING"} if name == consuming_twin else {"ONLINE"})


def test_relocating_completed_segments_spreads_them_over_every_server() -> None:
    moved = _table(tenants={"server": "DefaultTenant", "tagOverrideConfig": {
        "realtimeConsuming": "DefaultTenant_REALTIME", "realtimeCompleted": "DefaultTenant_OFFLINE"}})
    ideal = assign_layout(moved, SERVERS, NAMES, CONSUMING, PARTITIONS)
    sealed = {n: h for n, h in ideal.items() if "CONSUMING" not in h.values()}
    assert _hosts(sealed) == set(SERVERS)  # 10 sealed segments x 2 replicas balanced over 6 servers
    counts = [sum(s in h for h in sealed.values()) for s in SERVERS]
    assert max(counts) - min(counts) <= 1


def test_a_run_on_an_unrelocated_table_leaves_the_servers_without_data_idle() -> None:
    scenario = {
        "cluster": {"servers": 6, "server": {"cores": 2}},
        "table": {"tableName": "t", "tableType": "REALTIME", "segmentsConfig": {"replicasPerPartition": "1"},
                  "tableIndexConfig": {"streamConfigs": {"streamType": "kafka"}}},
        "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000}, "arrival": {"qps": 20}},
        "service": {"model": "deterministic", "mean_ms": 1},
        "simulation": {"duration_s": 10, "warmup_s": 1, "replications": 1},
    }
    r = simulate(scenario)  # a synthetic segment is its own stream partition: 6 partitions, one per server
    assert (r.servers["requests"] > 0).all()
