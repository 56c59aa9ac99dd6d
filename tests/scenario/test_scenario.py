"""Scenario loading: good inputs become typed frozen values; each bad input gives one error naming its key."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from workbench.errors import ScenarioError
from workbench.scenario import load_scenario

VALIDATION_SHAPE: dict[str, Any] = {
    "cluster": {"servers": 12, "server": {"cores": 1}, "network": {"latency_ms": 0},
                "broker": {"overhead_ms": 0}, "gc": {"collector": "none"}},
    "table": {"tableName": "t", "tableType": "OFFLINE", "routing": {"instanceSelectorType": "balanced"},
              "segmentsConfig": {"replication": 1}},
    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000},
                 "arrival": {"process": "poisson", "qps": 300}},
    "service": {"model": "exponential", "mean_ms": 10},
    "simulation": {"duration_s": 600, "warmup_s": 60, "replications": 1, "seed": 1},
}


def test_validation_shape_loads_exactly_as_written() -> None:
    sc = load_scenario(VALIDATION_SHAPE)
    assert sc.cluster.servers == 12 and sc.cluster.server.cores == 1
    assert sc.cluster.network.latency_ms.mean == 0.0
    assert sc.workload.arrival.qps == 300.0 and sc.workload.synthetic is not None
    assert sc.service.model == "exponential" and sc.service.mean_ms == 10.0
    assert (sc.simulation.duration_s, sc.simulation.warmup_s, sc.simulation.seed) == (600.0, 60.0, 1)


def test_fixed_gc_shape_loads() -> None:
    gc = {"collector": "fixed", "interval_s": {"dist": "exponential", "mean": 30},
          "pause_ms": {"dist": "deterministic", "value": 300}}
    sc = load_scenario(VALIDATION_SHAPE).with_overrides({"cluster.gc": gc})
    assert sc.cluster.gc.collector == "fixed"
    assert sc.cluster.gc.interval_s is not None and sc.cluster.gc.interval_s.mean == 30.0
    assert sc.cluster.gc.pause_ms is not None and sc.cluster.gc.pause_ms.mean == 300.0


def test_scenario_is_frozen() -> None:
    sc = load_scenario(VALIDATION_SHAPE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        sc.cluster.servers = 3  # type: ignore[misc]


def test_sizes_and_durations_are_parsed() -> None:
    sc = load_scenario({"cluster": {"server": {"heap": "512MB"}},
                        "simulation": {"duration_s": "5m", "warmup_s": "30s"}})
    assert sc.cluster.server.heap == 512 * 1024**2
    assert (sc.simulation.duration_s, sc.simulation.warmup_s) == (300.0, 30.0)


def test_unknown_pinot_fields_are_kept() -> None:
    table = {"tableName": "t", "tableType": "OFFLINE", "ingestionConfig": {"x": [1, 2]}, "quota": {"storage": "1G"}}
    sc = load_scenario({"table": table})
    assert sc.to_dict()["table"]["ingestionConfig"] == {"x": [1, 2]}
    assert sc.table.to_json()["quota"] == {"storage": "1G"}


def test_table_config_by_path_relative_to_scenario(tmp_path: Path) -> None:
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "t.json").write_text(json.dumps({"tableName": "orders", "tableType": "OFFLINE"}))
    (tmp_path / "s.yaml").write_text("table: tables/t.json\ncluster: {servers: 2}\n")
    sc = load_scenario(tmp_path / "s.yaml")
    assert sc.table.table_name_with_type == "orders_OFFLINE"


def test_overrides_revalidate() -> None:
    sc = load_scenario(VALIDATION_SHAPE)
    assert sc.with_overrides({"cluster.servers": 30}).cluster.servers == 30
    with pytest.raises(ScenarioError, match=r"^cluster\.servers: must be a positive integer, got 0$"):
        sc.with_overrides({"cluster.servers": 0})


BAD_INPUTS: list[tuple[str, dict[str, Any], str]] = [
    ("negative servers", {"cluster": {"servers": -3}}, "cluster.servers: must be a positive integer, got -3"),
    ("servers as text", {"cluster": {"servers": "many"}}, "cluster.servers: must be a positive integer"),
    ("bool for int", {"cluster": {"servers": True}}, "cluster.servers: must be a positive integer"),
    ("misspelt key", {"cluster": {"srvers": 3}}, "cluster.srvers: unknown key (did you mean 'servers'?)"),
    ("unknown section", {"clusters": {}}, "clusters: unknown section"),
    ("zero cores", {"cluster": {"server": {"cores": 0}}}, "cluster.server.cores: must be a positive integer"),
    ("bad heap size", {"cluster": {"server": {"heap": "lots"}}}, "cluster.server.heap: must be a size"),
    ("bad size unit", {"cluster": {"server": {"heap": "2Q"}}}, "cluster.server.heap: unknown size unit 'Q'"),
    ("bad duration", {"simulation": {"duration_s": [5]}}, "simulation.duration_s: must be a duration"),
    ("bad duration unit", {"simulation": {"duration_s": "5 fortnights"}},
     "simulation.duration_s: unknown duration unit 'fortnights'"),
    ("warmup >= duration", {"simulation": {"duration_s": 10, "warmup_s": 20}},
     "simulation.warmup_s: must be shorter than duration_s"),
    ("zero replications", {"simulation": {"replications": 0}}, "simulation.replications: must be a positive integer"),
    ("negative qps", {"workload": {"arrival": {"qps": -1}}}, "workload.arrival.qps: must be a positive number"),
    ("unknown process", {"workload": {"arrival": {"process": "hawkes"}}},
     "workload.arrival.process: must be one of poisson, replay, got 'hawkes'"),
    ("unknown service model", {"service": {"model": "magic"}}, "service.model: must be one of cost, deterministic"),
    ("empirical without values", {"service": {"model": "empirical"}}, "service.values_ms: is required"),
    ("fixed gc without pauses", {"cluster": {"gc": {"collector": "fixed", "interval_s": 30}}},
     "cluster.gc.pause_ms: is required when collector is fixed"),
    ("unknown collector", {"cluster": {"gc": {"collector": "shenandoah"}}}, "cluster.gc.collector: must be one of"),
    ("unknown dist", {"cluster": {"network": {"latency_ms": {"dist": "pareto", "mean": 1}}}},
     "cluster.network.latency_ms.dist: must be one of"),
    ("dist missing parameter", {"cluster": {"network": {"latency_ms": {"dist": "lognormal", "mean": 1}}}},
     "cluster.network.latency_ms.sigma: required by dist lognormal"),
    ("dist negative mean", {"cluster": {"network": {"latency_ms": {"dist": "exponential", "mean": -1}}}},
     "cluster.network.latency_ms: mean must be positive"),
    ("section not a mapping", {"cluster": [1, 2]}, "cluster: must be a mapping"),
    ("table missing name", {"table": {"tableType": "OFFLINE"}}, "table.tableName: is required"),
    ("table bad type", {"table": {"tableName": "t", "tableType": "HYBRID"}},
     "table.tableType: must be OFFLINE or REALTIME"),
    ("table bad replication", {"table": {"tableName": "t", "tableType": "OFFLINE",
                                         "segmentsConfig": {"replication": "three"}}},
     "table.segmentsConfig.replication: must be an integer, got 'three'"),
    ("upsert without strictReplicaGroup", {"table": {"tableName": "t", "tableType": "REALTIME",
                                                     "upsertConfig": {"mode": "FULL"}}},
     "table.routing.instanceSelectorType: an upsert table must route with strictReplicaGroup"),
    ("both workloads", {"workload": {"synthetic": {}, "generate": {}}},
     "workload.synthetic: a synthetic workload cannot also name generated data"),
    ("failures half given", {"cluster": {"failures": {"mtbf_s": "1h"}}}, "cluster.failures.mttr_s: mtbf_s and mttr_s"),
    ("name not a string", {"name": 42}, "name: must be a string"),
    ("unknown cache property", {"cluster": {"broker": {"config": {"pinot.broker.query.cache.size": "1G"}}}},
     "cluster.broker.config.pinot.broker.query.cache.size: unknown cache property"),
]


@pytest.mark.parametrize(("case", "data", "message"), BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_names_the_key(case: str, data: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(data)
    assert str(info.value).startswith(message), str(info.value)


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("cluster:\n  servers: 3\n  server: {cores: 2\n")
    with pytest.raises(ScenarioError, match=r"bad\.yaml:\d+: not valid YAML"):
        load_scenario(bad)


def test_missing_table_file_is_named(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("table: nope.json\n")
    with pytest.raises(ScenarioError, match=r"^table: table config file not found: .*nope\.json"):
        load_scenario(tmp_path / "s.yaml")


def test_missing_scenario_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read the scenario file"):
        load_scenario(tmp_path / "absent.yaml")


def test_shipped_scenarios_validate() -> None:
    root = Path(__file__).resolve().parents[2] / "scenarios"
    for path in root.glob("*.yaml"):
        assert load_scenario(path).name
