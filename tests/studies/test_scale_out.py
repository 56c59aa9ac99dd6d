"""Scale-out what-if: Pinot's rebalance of the scenario's own layout, and the runs either side of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from workbench.cli import main
from workbench.errors import InputError
from workbench.scenario import load_scenario
from workbench.sim.layout import build_layout
from workbench.sim.run import simulate
from workbench.studies.scale_out import scale_out


def _scenario(table: dict[str, Any], servers: int = 4) -> dict[str, Any]:
    return {
        "cluster": {"servers": servers, "server": {"cores": 2}, "network": {"latency_ms": 0.1}},
        "table": table,
        "workload": {"synthetic": {"segments_per_server": 6, "docs_per_segment": 100_000}, "arrival": {"qps": 60}},
        "service": {"model": "deterministic", "mean_ms": 2},
        "simulation": {"duration_s": 40, "warmup_s": 4, "replications": 1, "seed": 5},
    }


GROUPS = {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2},
          "routing": {"instanceSelectorType": "replicaGroup"},
          "instanceAssignmentConfigMap": {"OFFLINE": {
              "tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"}, "minimizeDataMovement": True,
              "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": 2}}}}
BALANCED = {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2}}


def test_growing_replica_groups_with_minimized_movement_loads_only_the_new_servers() -> None:
    out = scale_out(_scenario(GROUPS), 6)
    receivers = sorted(s for s, n in out.plan.segments_in.items() if n)
    assert receivers == ["Server_4", "Server_5"]  # the existing four keep their slots (Pinot's minimizeDataMovement)
    assert out.plan.bytes_moved == out.plan.segments_moved * 100_000 * 100  # docs x SEGMENT_BYTES_PER_DOC each
    assert 0 < out.moved_share < 0.5
    assert out.after.partial_rate == 0.0  # every segment still has a live replica in each group


def test_the_run_after_the_move_uses_the_rebalanced_ideal_state() -> None:
    sc = load_scenario(_scenario(BALANCED))
    only_first = {name: {"Server_0": "ONLINE"} for name in build_layout(sc).segments}
    r = simulate(sc, ideal_state=only_first)
    requests = r.servers.set_index("server")["requests"]
    assert requests["Server_0"] > 0 and requests.drop("Server_0").sum() == 0
    with pytest.raises(InputError, match=r"ideal_state\.t_0"):
        simulate(sc, ideal_state={k: v for k, v in only_first.items() if k != "t_0"})
    with pytest.raises(InputError, match="Server_9"):
        simulate(sc, ideal_state={**only_first, "t_0": {"Server_9": "ONLINE"}})


def test_doubling_the_servers_halves_their_utilisation_at_the_same_load() -> None:
    out = scale_out(_scenario(BALANCED), 8)
    # the same queries and the same work per segment, spread over twice the cores
    busy_before, busy_after = out.before.utilisation.mean, out.after.utilisation.mean
    assert busy_after == pytest.approx(busy_before / 2, rel=0.1)
    old, new = out.p99_ms()
    assert new < old  # fewer segments per server: shorter requests
    assert "4 -> 8 servers" in out.sentence()


def test_losing_a_server_moves_its_segments_to_the_others() -> None:
    out = scale_out(_scenario(BALANCED), 3)
    after = out.plan.assignment
    assert all("Server_3" not in hosts and len(hosts) == 2 for hosts in after.values())
    assert out.after.partial_rate == 0.0
    with pytest.raises(InputError, match="servers"):
        scale_out(_scenario(BALANCED), 4)


def test_the_command_prints_each_servers_moves_and_writes_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                               ) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(_scenario(BALANCED)))
    out = tmp_path / "reports" / "grow.json"
    assert main(["scale-out", str(scenario), "--servers", "6", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Server_5" in printed and "4 -> 6 servers" in printed
    doc = json.loads(out.read_text())
    assert {m["server"] for m in doc["moves"]} == {f"Server_{i}" for i in range(6)}
    assert sum(m["segments_in"] for m in doc["moves"]) == doc["segments_moved"] > 0
    assert all(len(hosts) == 2 for hosts in doc["ideal_state"].values())
    assert main(["scale-out", str(scenario), "--servers", "4"]) == 2  # today's count: nothing to plan
    assert "servers" in capsys.readouterr().err


def test_a_fixed_instance_count_keeps_new_servers_empty_and_the_sentence_says_so() -> None:
    fixed = {**GROUPS, "instanceAssignmentConfigMap": {"OFFLINE": {
        "tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"},
        "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": 2,
                                        "numInstancesPerReplicaGroup": 2}}}}
    out = scale_out(_scenario(fixed), 6)
    assert out.servers_used() == 4  # Pinot picks 2 servers per group, whatever the tenant holds
    assert "data on 4 of the 6 servers" in out.sentence()
    grown = scale_out(_scenario(GROUPS), 6)  # without the fixed count every server takes part
    assert grown.servers_used() == 6 and "of the 6 servers" not in grown.sentence()
