"""``workbench agree``: the demo scenario's own table, rows and queries against Pinot, as a user runs it.

The workload is the demo's (``scenarios/default.yaml``: a REALTIME table, Modulo partitioning, time
pruning, balanced routing with two replicas) made smaller and generated in-process (no Spark). Pinot's
answers are the expected values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.api import load_generate_spec
from workbench.cli import main
from workbench.scenario import load_scenario
from workbench.workload.pure import generate_local

ROOT = Path(__file__).resolve().parents[2]
QUERIES = 150


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(scenario, workload, agree output) of one ``workbench agree`` run."""
    root = tmp_path_factory.mktemp("agree")
    sc = load_scenario(ROOT / "scenarios" / "default.yaml").with_overrides({
        "workload.generate.events": 40_000, "workload.generate.segment_rows": 2000,
        "workload.generate.queries.duration_s": 60})
    scenario = root / "scenario.json"
    data = sc.to_dict()
    data["table"] = str(ROOT / "scenarios" / "tables" / "events_REALTIME.json")
    data["workload"]["data"] = str(root / "workload")
    scenario.write_text(json.dumps(data))
    spec, table, _, config = load_generate_spec(load_scenario(scenario))
    generate_local(spec, root / "workload", table=table, table_config=config, progress=False)
    out = root / "agreed"
    assert main(["agree", str(scenario), "--out", str(out), "--queries", str(QUERIES)]) == 0
    return scenario, root / "workload", out


def test_the_demo_table_agrees_with_pinot_but_for_time_pruned_hash_collisions(checked: tuple[Path, Path, Path]) -> None:
    """Every query agrees, except (docs/validation.md) a time-pruned query whose segments collide in the
    pruner's hash set: Pinot orders those by its interval tree, the model by name. They stay few."""
    _, _, out = checked
    agreement = json.loads((out / "agreement.json").read_text())
    assert agreement["pinot_version"] == "1.5.1" and agreement["queries"] == QUERIES
    for d in agreement["disagreements"]:
        assert d["field"] == "numServersQueried" and "event_time_ms" in d["sql"], d
    assert agreement["agreed"] >= QUERIES - QUERIES // 50
    assert agreement["checked_as"].startswith("OFFLINE twin of the REALTIME table")


def test_the_output_holds_what_pinot_was_given_and_wrote(checked: tuple[Path, Path, Path]) -> None:
    _, _, out = checked
    config = json.loads((out / "table_config.json").read_text())
    assert (config["tableName"], config["tableType"]) == ("events_OFFLINE", "OFFLINE")
    assert "streamConfigs" not in config["tableIndexConfig"]
    partitioning = config["tableIndexConfig"]["segmentPartitionConfig"]["columnPartitionMap"]
    assert partitioning["key_id"]["functionName"] == "Modulo"
    schema = json.loads((out / "schema.json").read_text())  # the demo has no schema: derived from the columns
    assert {"name": "key_id", "dataType": "LONG"} in schema["dimensionFieldSpecs"]
    assert schema["dateTimeFieldSpecs"][0]["name"] == "event_time_ms"
    zk = json.loads((out / "zk_metadata.json").read_text())
    ideal = json.loads((out / "ideal_state.json").read_text())
    assert set(zk) == set(ideal) and all(len(servers) == 2 for servers in ideal.values())
    log = (out / "querylog.log").read_text()
    assert log.count("[QueryLogger] [main] requestId=") == QUERIES


def test_agree_without_workload_data_says_what_to_do(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agree", str(ROOT / "scenarios" / "synthetic.yaml"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("workbench agree: workload.data") and "--data" in err[0]
    assert not (tmp_path / "o").exists()
