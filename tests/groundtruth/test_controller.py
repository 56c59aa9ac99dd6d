"""The workbench's assignment and rebalance against Pinot's own controller code (issues #29 and #23).

One tenant-isolated cluster (6 servers: ``dashboards`` on Server_0..3, ``DefaultTenant`` on Server_4..5), five
OFFLINE tables (balanced, replica groups, a partitioned replica-group table, on both tenants), and a sixth
partitioned table whose segments carry partition metadata (as a workload directory's ZK records do). Pinot
1.5.1's controller (``ControllerParts``: ``InstanceAssignmentDriver`` or the default instance partitions,
``SegmentAssignment.assignSegment`` per upload, ``rebalanceTable`` after the cluster grows to 8 servers, the new
ones ``DefaultTenant``) answers for all of them in one JVM; the workbench's layout
(:func:`~workbench.sim.layout.build_layout`) and scale-out rebalance
(:func:`~workbench.studies.scale_out.rebalance_layout`) must give exactly the same instance partitions and ideal
states, table by table. A real controller process (``ControllerStarter``) answers the same six tables in a second
JVM beside it, and must place them as the in-process driver does.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from workbench.groundtruth.controller import ControllerRun, ControllerTable, pinot_assignment, tenant_instances
from workbench.groundtruth.scenario import ScenarioTable
from workbench.pinot.assignment import Instance, segment_partition_id
from workbench.pinot.partition.functions import get_partition_function
from workbench.pinot.rebalance import RebalancePlan, plan_rebalance
from workbench.pinot.segment import ColumnPartitionMetadata, SegmentMetadata
from workbench.pinot.table_config import TableConfig
from workbench.scenario import Scenario, load_scenario
from workbench.sim.layout import Layout, build_layout
from workbench.sim.planner import segment_metadata
from workbench.studies.scale_out import rebalance_layout

SERVERS_AFTER = 8


def _table(name: str, tenant: str | None, replication: int, assignment: dict[str, Any] | None = None,
           **extra: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"tableName": name, "tableType": "OFFLINE",
                              "segmentsConfig": {"replication": str(replication)}, **extra}
    if tenant:
        config["tenants"] = {"server": tenant}
    if assignment is not None:
        config["instanceAssignmentConfigMap"] = {"OFFLINE": {
            "tagPoolConfig": {"tag": f"{tenant or 'DefaultTenant'}_OFFLINE"},
            "replicaGroupPartitionConfig": {"replicaGroupBased": True, **assignment}}}
    return config


def _partitioned(name: str) -> dict[str, Any]:
    """Two replica groups of two servers, two partitions of one server each, partitioned by memberId."""
    return _table(name, "dashboards", 2, {"numReplicaGroups": 2, "numInstancesPerReplicaGroup": 2,
                                          "numPartitions": 2, "numInstancesPerPartition": 1,
                                          "partitionColumn": "memberId"},
                  tableIndexConfig={"segmentPartitionConfig": {"columnPartitionMap": {
                      "memberId": {"functionName": "Murmur", "numPartitions": 2}}}})


def _entry(config: dict[str, Any], per_server: int) -> dict[str, Any]:
    return {"table": config, "workload": {"synthetic": {"segments_per_server": per_server}, "arrival": {"qps": 10}}}


CLUSTER = {"servers": 6, "tenants": {"dashboards": 4}}
TENANT = {
    "cluster": CLUSTER,
    "tables": [
        _entry(_table("orders", "dashboards", 2), 3),                       # balanced, 2 replicas: 6 segments
        _entry(_table("clicks", "dashboards", 2, {"numReplicaGroups": 2, "numInstancesPerReplicaGroup": 2}), 3),
        _entry(_partitioned("members"), 3),                                  # partition by segment-name hash
        _entry(_table("audit", None, 1), 3),                                 # DefaultTenant, balanced
        _entry(_table("views", None, 2, {"numReplicaGroups": 2}, ), 2),     # DefaultTenant, groups grow
    ],
}
TENANT["tables"][4]["table"]["instanceAssignmentConfigMap"]["OFFLINE"]["minimizeDataMovement"] = True
#: A partitioned table read from a workload directory: each segment's ZK record names its one partition, which
#: differs from its name's hash for some segments (Pinot reads the record).
ZK_TABLE = _partitioned("profiles")
ZK_PARTITIONS = {f"profiles_{i}": i % 2 for i in range(8)}


def _workload(tmp: Path) -> Path:
    rows = []
    for name, p in ZK_PARTITIONS.items():
        meta = SegmentMetadata(name, 0, 1, total_docs=100,
                               partitions={"memberId": ColumnPartitionMetadata("Murmur", 2, frozenset({p}))})
        rows.append({"segment_name": name, "total_docs": 100, "zk_metadata": json.dumps(meta.to_zk_metadata())})
    tmp.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(tmp / "segments.parquet")
    return tmp


#: A balanced table's given ideal state (Pinot's ``SegmentAssignmentUtilsTest`` shape: 100 segments, 3 replicas
#: over 10 servers, segment k on servers 3k, 3k+1, 3k+2 mod 10), rebalanced onto other servers: table -> new servers.
BALANCED = {f"segment_{k}": dict.fromkeys((f"instance_{3 * k % 10}", f"instance_{(3 * k + 1) % 10}",
                                           f"instance_{(3 * k + 2) % 10}"), "ONLINE") for k in range(100)}
#: (servers after, the table's replication): ``fewer_replicas`` is a table whose replication went from 3 to 2.
BALANCED_CASES = {
    "grown": ([f"instance_{i}" for i in range(15)], 3),
    "shrunk": ([f"instance_{i}" for i in range(5)], 3),
    "replaced": ([f"instance_{i}" for i in range(1, 11)], 3),
    "fewer_replicas": ([f"instance_{i}" for i in range(12)], 2),
}


def _tagged(names: list[str]) -> list[Instance]:
    return [Instance(n, tags=("DefaultTenant_OFFLINE",)) for n in names]


def _balanced_tables() -> list[ControllerTable]:
    return [ControllerTable(_table(name, None, replication), list(BALANCED), ideal_state=BALANCED,
                            servers=_tagged([f"instance_{i}" for i in range(10)]), new_servers=_tagged(after))
            for name, (after, replication) in BALANCED_CASES.items()]


class Both:
    """Pinot's answers and the workbench's layouts and rebalance plans for the same tables."""

    def __init__(self, pinot: ControllerRun, tenant: Scenario, layouts: dict[str, Layout], plan: RebalancePlan,
                 zk_plan: RebalancePlan, real: ControllerRun) -> None:
        self.pinot, self.tenant, self.layouts, self.plan, self.zk_plan = pinot, tenant, layouts, plan, zk_plan
        self.real = real


def _member_rows(partition_of: dict[str, int]) -> dict[str, list[dict[str, int]]]:
    """One row per segment whose memberId Murmur-partitions (of 2) to the segment's given partition, so the real
    controller, which reads the partition from the segment Pinot builds, sees the partition given."""
    murmur = get_partition_function("Murmur", 2)
    first = {p: next(v for v in range(100) if murmur.get_partition(str(v)) == p) for p in (0, 1)}
    return {s: [{"memberId": first[p]}] for s, p in partition_of.items()}


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Both:
    data = _workload(tmp_path_factory.mktemp("controller") / "profiles")
    tenant = load_scenario(TENANT)
    zk_scenario = load_scenario({"cluster": CLUSTER, **_entry(ZK_TABLE, 2)})
    layouts = {view.table.table_name: build_layout(view) for view in tenant.tables}
    layouts["profiles"] = build_layout(zk_scenario, data)
    # members' segments carry no partition metadata in the layout: the name's hash decides (as Pinot's does)
    members = {s: segment_partition_id(s) % 2 for s in layouts["members"].segments}
    rows = {**_member_rows(members), **_member_rows(ZK_PARTITIONS)}
    tables = [ControllerTable(view.table.raw, layouts[view.table.table_name].segments, rows=rows)
              for view in tenant.tables]
    tables.append(ControllerTable(ZK_TABLE, layouts["profiles"].segments,
                                  {s: {"memberId": [p]} for s, p in ZK_PARTITIONS.items()}, rows=rows))
    before, after = tenant_instances(tenant), tenant_instances(tenant, SERVERS_AFTER)
    with ThreadPoolExecutor(2) as pool:  # the two JVMs side by side: the module costs the real controller's time
        real = pool.submit(pinot_assignment, tables, before, after, real_controller=True)
        pinot = pinot_assignment([*tables, *_balanced_tables()], before, after)
        plan, _ = rebalance_layout(tenant, SERVERS_AFTER)
        zk_plan, _ = rebalance_layout(zk_scenario, SERVERS_AFTER, data=data)
        return Both(pinot, tenant, layouts, plan, zk_plan, real.result())


ALL = ["orders", "clicks", "members", "audit", "views", "profiles"]


def test_pinot_answers_from_the_pinned_release(both: Both) -> None:
    assert both.pinot.pinot_version == "1.5.1"
    assert sorted(both.pinot.tables) == sorted(f"{t}_OFFLINE" for t in [*ALL, *BALANCED_CASES])


@pytest.mark.parametrize("table", ALL)
def test_segments_land_where_pinot_puts_them(both: Both, table: str) -> None:
    """Each table's ideal state after uploading its segments in order: exactly Pinot's."""
    assert both.layouts[table].ideal_state == both.pinot[f"{table}_OFFLINE"].created.ideal_state


def test_each_table_stays_on_its_tenants_servers(both: Both) -> None:
    """Segments per server, as the issue asks: the dashboards tables on Server_0..3 only, DefaultTenant's on 4..5;
    a server's count is every table's on it."""
    per_server: dict[str, int] = {}
    for table in ALL:
        for hosts in both.pinot[f"{table}_OFFLINE"].created.ideal_state.values():
            for server in hosts:
                per_server[server] = per_server.get(server, 0) + 1
    dashboards = {f"Server_{i}" for i in range(4)}
    for table in ("orders", "clicks", "members", "profiles"):
        assert set().union(*both.pinot[f"{table}_OFFLINE"].created.ideal_state.values()) <= dashboards
    for table in ("audit", "views"):
        assert set().union(*both.pinot[f"{table}_OFFLINE"].created.ideal_state.values()) == {"Server_4", "Server_5"}
    model: dict[str, int] = {}
    for layout in both.layouts.values():
        for hosts in layout.ideal_state.values():
            for server in hosts:
                model[server] = model.get(server, 0) + 1
    assert model == per_server


def _instance_partitions(plan: RebalancePlan, table: str, attr: str) -> dict[str, tuple[str, ...]]:
    ips = getattr(plan, attr)
    ip = ips.get(f"{table}_OFFLINE/OFFLINE", ips.get("OFFLINE"))
    return dict(ip.partitions)


@pytest.mark.parametrize("table", ALL)
def test_instance_partitions_are_pinots_before_and_after_the_scale_out(both: Both, table: str) -> None:
    plan = both.zk_plan if table == "profiles" else both.plan
    answer = both.pinot[f"{table}_OFFLINE"]
    assert answer.rebalanced is not None
    assert _instance_partitions(plan, table, "previous_instance_partitions") == dict(
        answer.created.instance_partitions["OFFLINE"].partitions)
    assert _instance_partitions(plan, table, "instance_partitions") == dict(
        answer.rebalanced.instance_partitions["OFFLINE"].partitions)


@pytest.mark.parametrize("table", ALL)
def test_the_scale_out_rebalance_is_pinots(both: Both, table: str) -> None:
    """6 -> 8 servers: DefaultTenant's tables spread over Server_4..7, the dashboards tables stay; each table's
    rebalanced ideal state is exactly Pinot's ``rebalanceTable`` target."""
    plan = both.zk_plan if table == "profiles" else both.plan
    answer = both.pinot[f"{table}_OFFLINE"]
    assert answer.rebalanced is not None
    ours = {s: dict(m) for s, m in plan.assignment.items() if s in answer.rebalanced.ideal_state}
    assert ours == answer.rebalanced.ideal_state


@pytest.mark.parametrize("case", BALANCED_CASES)
def test_a_balanced_rebalance_is_pinots(both: Both, case: str) -> None:
    """Pinot 1.5.1 rebalances a balanced table with ``rebalanceNonReplicaGroupBasedTable`` (keep a replica while its
    server is under ceil(replicas / servers), the rest to the least-loaded server without it): grown to 15, shrunk
    to 5, one server replaced, 3 replicas down to 2 on 12 servers, the workbench's plan is Pinot's target replica for
    replica."""
    answer = both.pinot[f"{case}_OFFLINE"]
    assert answer.rebalanced is not None
    after, replication = BALANCED_CASES[case]
    tc = TableConfig.from_json(_table(case, None, replication))
    plan = plan_rebalance(tc, [f"instance_{i}" for i in range(10)], after, dict.fromkeys(BALANCED, 1),
                          current_assignment=BALANCED)
    assert dict(plan.instance_partitions["OFFLINE"].partitions) == dict(
        answer.rebalanced.instance_partitions["OFFLINE"].partitions)
    assert {s: dict(m) for s, m in plan.assignment.items()} == answer.rebalanced.ideal_state


@pytest.mark.parametrize("table", ALL)
def test_a_real_controller_decides_as_the_in_process_driver(both: Both, table: str) -> None:
    """Pinot's ``ControllerStarter`` (Helix, ZooKeeper, ``addTable``, ``addNewSegment`` with segments Pinot built,
    ``TableRebalancer`` dry run) places every table as ``ControllerParts`` does, so the driver's stand-in for Helix
    changes nothing; the segments' stored partitions are the ones the workbench's Murmur gave their rows."""
    real, parts = both.real[f"{table}_OFFLINE"], both.pinot[f"{table}_OFFLINE"]
    assert real.rebalanced is not None and parts.rebalanced is not None
    assert real.created.ideal_state == parts.created.ideal_state
    assert real.rebalanced.ideal_state == parts.rebalanced.ideal_state
    assert real.rebalanced.instance_partitions == parts.rebalanced.instance_partitions
    if table in ("clicks", "members", "views", "profiles"):  # Pinot stores only configured instance partitions
        assert real.created.instance_partitions == parts.created.instance_partitions
    else:
        assert not real.created.instance_partitions
    if table == "profiles":
        assert real.created.zk_partitions == {s: {"memberId": (p,)} for s, p in ZK_PARTITIONS.items()}


def test_agree_and_measure_place_a_workload_directorys_segments_as_pinot(both: Both, tmp_path: Path) -> None:
    """``workbench agree`` and ``measure`` give Pinot's processes the ideal state the controller would build: for a
    partitioned replica-group table read from a workload directory, each segment's partition from its ZK record."""
    segments = pd.read_parquet(_workload(tmp_path / "profiles") / "segments.parquet")
    st = ScenarioTable(ZK_TABLE, "OFFLINE", TableConfig.from_json(ZK_TABLE), {}, dict.fromkeys(ZK_PARTITIONS),
                       [], segment_metadata(segments))
    dashboards = tuple(f"Server_{i}" for i in range(4))  # the table's tenant's servers
    assert st.ideal_state(dashboards) == both.pinot["profiles_OFFLINE"].created.ideal_state
