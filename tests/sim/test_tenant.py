"""Several tables on one tenant: Pinot's tags and assignment per table, the classic form unchanged, bad input.

Pinot (release-1.5.1) with ``cluster.tenant.isolation.enable=true`` tags each server for one tenant; a table's
default instance partitions are the servers tagged ``<tenants.server>_OFFLINE``, sorted by name and rotated
left by ``abs(tableNameWithType.hashCode()) % n`` (``InstancePartitionsUtils
.computeDefaultInstancePartitionsForTag``), and each new segment goes to the ``replication`` instances holding
the fewest of *that table's* segments, ties to the earlier instance of that list
(``SegmentAssignmentUtils.assignSegmentWithoutReplicaGroup``). The expected placements below are computed by
those two rules in the test, from Java's ``String.hashCode``.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd
import pytest

from workbench.errors import ScenarioError
from workbench.scenario import load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.run import simulate

SIM = {"duration_s": 3, "warmup_s": 0.5, "replications": 2, "seed": 4}


def java_hash(text: str) -> int:
    """Java's ``String.hashCode``: ``s[0] 31^(n-1) + ... + s[n-1]`` in 32-bit two's complement."""
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def pinot_balanced(table_with_type: str, servers: list[str], segments: list[str], replication: int
                   ) -> dict[str, set[str]]:
    """Pinot's default instance partitions and balanced assignment, segment by segment."""
    ordered = sorted(servers)
    k = abs(java_hash(table_with_type)) % len(ordered)
    ordered = ordered[k:] + ordered[:k]
    held = dict.fromkeys(ordered, 0)
    out = {}
    for segment in segments:
        chosen = sorted(range(len(ordered)), key=lambda i: (held[ordered[i]], i))[:replication]
        out[segment] = {ordered[i] for i in chosen}
        for i in chosen:
            held[ordered[i]] += 1
    return out


def pinot_replica_groups(table_with_type: str, servers: list[str], segments: list[str], groups: int,
                         per_group: int) -> dict[str, set[str]]:
    """Pinot's replica-group instance assignment (no pools, one partition: ``InstanceTagPoolSelector`` sorts by
    name, ``HashBasedRotateInstanceConstraintApplier`` rotates by the table's hash, ``InstanceReplicaGroup
    PartitionSelector`` deals the instances to the groups round robin) and segment assignment
    (``assignSegmentWithReplicaGroup``: the group-0 instance with the fewest segments, ties to the first,
    mirrored to the same position of every group)."""
    ordered = sorted(servers)
    k = abs(java_hash(table_with_type)) % len(ordered)
    ordered = ordered[k:] + ordered[:k]
    group = [[ordered[i * groups + g] for i in range(per_group)] for g in range(groups)]
    held = [0] * per_group
    out = {}
    for segment in segments:
        i = held.index(min(held))
        held[i] += 1
        out[segment] = {group[g][i] for g in range(groups)}
    return out


def table(name: str, tenant: str | None = None, replication: int = 1) -> dict[str, Any]:
    config: dict[str, Any] = {"tableName": name, "tableType": "OFFLINE", "segmentsConfig": {"replication": replication}}
    if tenant:
        config["tenants"] = {"server": tenant}
    return config


TENANT = {
    "cluster": {"servers": 6, "tenants": {"dashboards": 4}, "server": {"cores": 2}},
    "tables": [
        {"table": table("orders", "dashboards", 2), "workload": {"synthetic": {"segments_per_server": 3},
                                                                 "arrival": {"qps": 30}}},
        {"table": table("clicks", "dashboards"), "workload": {"synthetic": {"segments_per_server": 1},
                                                              "arrival": {"qps": 20}}},
        {"table": table("audit"), "workload": {"synthetic": {"segments_per_server": 2}, "arrival": {"qps": 10}}},
    ],
    "simulation": SIM,
}


def test_each_table_lands_on_its_tenants_servers_as_pinot_assigns_it() -> None:
    sc = load_scenario(TENANT)
    dashboards = [f"Server_{i}" for i in range(4)]
    expected = {
        # 4 servers x 3 per server / 2 replicas = 6 segments; 4 x 1 = 4; DefaultTenant's 2 servers x 2 = 4
        "orders": pinot_balanced("orders_OFFLINE", dashboards, [f"orders_{i}" for i in range(6)], 2),
        "clicks": pinot_balanced("clicks_OFFLINE", dashboards, [f"clicks_{i}" for i in range(4)], 1),
        "audit": pinot_balanced("audit_OFFLINE", ["Server_4", "Server_5"], [f"audit_{i}" for i in range(4)], 1),
    }
    for view in sc.tables:
        layout = build_layout(view)
        assert {n: set(s) for n, s in layout.ideal_state.items()} == expected[view.table.table_name]
    # each table is balanced on its own: orders 3 per dashboards server, clicks 1, audit 2 per DefaultTenant one
    per_server = pd.Series([s for t in expected.values() for hosts in t.values() for s in hosts]).value_counts()
    assert per_server.to_dict() == {**{s: 4 for s in dashboards}, "Server_4": 2, "Server_5": 2}


def test_a_replica_group_table_beside_a_balanced_one_lands_as_pinot_assigns_it() -> None:
    """Two replica groups of two over the tenant's four servers, beside a balanced table on the same tenant."""
    sc = copy.deepcopy(TENANT)
    orders = sc["tables"][0]["table"]
    orders["routing"] = {"instanceSelectorType": "replicaGroup"}
    orders["instanceAssignmentConfigMap"] = {"OFFLINE": {
        "tagPoolConfig": {"tag": "dashboards_OFFLINE"},
        "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": 2,
                                        "numInstancesPerReplicaGroup": 2}}}
    views = load_scenario(sc).tables
    dashboards = [f"Server_{i}" for i in range(4)]
    expected = pinot_replica_groups("orders_OFFLINE", dashboards, [f"orders_{i}" for i in range(6)], 2, 2)
    assert {n: set(s) for n, s in build_layout(views[0]).ideal_state.items()} == expected
    clicks = pinot_balanced("clicks_OFFLINE", dashboards, [f"clicks_{i}" for i in range(4)], 1)
    assert {n: set(s) for n, s in build_layout(views[1]).ideal_state.items()} == clicks
    r = simulate(load_scenario(sc))
    assert (r.queries[r.queries["table"] == "orders"]["servers_queried"] == 2).all()  # one replica group each


def test_a_tenant_run_sends_each_table_only_to_its_tenants_servers() -> None:
    r = simulate(load_scenario(TENANT))
    assert set(r.queries["table"]) == {"orders", "clicks", "audit"}
    served = r.servers.groupby("server")["requests"].sum()
    assert (served[[f"Server_{i}" for i in range(4)]] > 0).all()
    audit = r.queries[r.queries["table"] == "audit"]
    assert (audit["servers_queried"] <= 2).all() and (r.queries["servers_queried"] <= 4).all()


def test_one_table_written_as_tables_gives_exactly_the_classic_records() -> None:
    """Also with a server whose whole JVM is slow from 2 s on (its pauses and request delays stretched; the
    tenant plan scales the delays per table, the classic one at once)."""
    classic = {"cluster": {"servers": 3, "server": {"cores": 2}, "gc": {"collector": "fixed", "interval_s": 1,
                                                                       "pause_ms": 20},
                           "network": {"request_delay_ms": {"dist": "exponential", "mean": 2}},
                           "failures": {"slow": [{"server": "Server_1", "factor": 3, "from_s": 2}]}},
               "table": table("t", replication=2),
               "workload": {"synthetic": {"segments_per_server": 2, "docs_per_segment": 5000}, "arrival": {"qps": 40}},
               "service": {"variability": 0.5}, "simulation": SIM}
    tables = {k: v for k, v in classic.items() if k not in ("table", "workload", "service")}
    tables["tables"] = [{k: classic[k] for k in ("table", "workload", "service")}]
    for engine in ("simpy", "fast"):
        runs = [simulate(load_scenario({**sc, "simulation": {**SIM, "engine": engine}})) for sc in (classic, tables)]
        for name in ("queries", "servers", "gc_pauses", "windows"):
            pd.testing.assert_frame_equal(getattr(runs[0], name), getattr(runs[1], name))
        assert set(runs[0].queries["table"]) == {"t"}


def test_adding_a_table_changes_no_draw_of_the_others() -> None:
    """Table 0 keeps its arrivals when a table joins it (its own streams); only queueing moves its latency."""
    two = copy.deepcopy(TENANT)
    two["tables"] = TENANT["tables"][:2]
    one = copy.deepcopy(TENANT)
    one["tables"] = TENANT["tables"][:1]
    arrivals = [r.queries[r.queries["table"] == "orders"]["arrival_s"].to_numpy()
                for r in (simulate(load_scenario(sc)) for sc in (one, two))]
    assert len(arrivals[0]) and (arrivals[0] == arrivals[1]).all()


@pytest.mark.parametrize(("change", "key", "says"), [
    (lambda sc: sc["tables"].append({"table": table("clicks")}), "tables[3].table.tableName", "also tables[1]'s"),
    (lambda sc: sc["tables"][2]["table"].update(tenants={"server": "gold"}), "tables[2].table.tenants.server",
     "tenant 'gold' has no servers"),
    (lambda sc: sc["cluster"].update(tenants={"dashboards": 6}), "tables[2].table.tenants.server",
     "tenant 'DefaultTenant' has no servers"),
    (lambda sc: sc["cluster"].update(tenants={"dashboards": 7}), "cluster.tenants", "tags 7 servers"),
    (lambda sc: sc.update(slo={"p99_ms": 100}), "slo", "goes inside each entry of tables"),
])
def test_bad_tenant_input_is_one_error_naming_the_key(change: Any, key: str, says: str) -> None:
    sc = copy.deepcopy(TENANT)
    change(sc)
    with pytest.raises(ScenarioError) as err:
        load_scenario(sc)
    assert err.value.where == key and says in err.value.problem


def test_an_override_steps_into_a_table_by_its_position() -> None:
    """Sweeps and what-ifs reach one table's keys: ``tables.1.workload.arrival.qps``."""
    sc = load_scenario(TENANT, overrides={"tables.1.workload.arrival.qps": 77, "cluster.servers": 8})
    assert [t.workload.arrival.qps for t in sc.tables] == [30, 77, 10] and sc.cluster.servers == 8
    assert sc.with_overrides({"tables.0.slo.p99_ms": 5}).tables[0].slo.p99_ms == 5
    with pytest.raises(ScenarioError, match="names no entry of a list of 3"):
        load_scenario(TENANT, overrides={"tables.3.workload.arrival.qps": 1})


@pytest.mark.parametrize(("config", "key"), [
    ({"server": {"config": {"pinot.query.scheduler.name": "tokenbucket"}}},
     "cluster.server.config.pinot.query.scheduler.name"),
    ({"broker": {"config": {"pinot.broker.query.cache.enabled": True}}}, "cluster.broker.config"),
])
def test_what_the_tenant_model_does_not_run_yet_is_refused_at_its_key(config: dict[str, Any], key: str) -> None:
    """Per-table scheduler groups and the broker result cache are not merged yet: refused, never ignored."""
    sc = copy.deepcopy(TENANT)
    sc["cluster"].update(config)
    with pytest.raises(ScenarioError) as err:
        simulate(load_scenario(sc))
    assert err.value.where == key


def test_a_servers_heap_holds_the_upsert_keys_of_every_table_on_it() -> None:
    """Table a on both servers (1M keys of 100 B each), b on Server_1 only (2M of 40 B, 50 MB of bitmaps):
    Server_1's JVM holds both maps and b's bitmaps beside the 1 GB it holds anyway."""
    from workbench.jvm import LiveHeap
    from workbench.scenario.schema import GCSpec
    from workbench.sim.layout import Layout
    from workbench.sim.memory import Memory, ServerMemory
    from workbench.sim.tenant import merge_memory

    base, empty = 1e9, pd.DataFrame()
    servers = ("Server_0", "Server_1")

    def layout(replicas: tuple[tuple[int, ...], ...]) -> Layout:
        return Layout(servers, tuple(f"s{i}" for i in range(len(replicas))), np.ones(len(replicas)),
                      np.zeros(len(replicas), bool), {}, replicas)

    a = Memory((ServerMemory(LiveHeap(base, 1_000_000, 100.0), 5.0),) * 2, empty)
    b = Memory((ServerMemory(LiveHeap(base + 50e6, 2_000_000, 40.0), 7.0),) * 2, empty)
    merged = merge_memory([a, b], [layout(((0,), (1,))), layout(((1,),))], GCSpec(live_heap=base))
    s0, s1 = merged.servers
    assert s0.live.total == base + 1_000_000 * 100.0 and s0.update_rate == 5.0
    assert s1.live.total == pytest.approx(base + 50e6 + 1_000_000 * 100.0 + 2_000_000 * 40.0)
    assert s1.live.upsert_keys == 3_000_000 and s1.update_rate == 12.0
    # a key count given by hand (gc.upsert_keys) is the JVM's, whatever its tables: counted once
    assert merge_memory([a, b], [layout(((0,), (1,))), layout(((1,),))],
                        GCSpec(live_heap=base, upsert_keys=1_000_000)) is a
