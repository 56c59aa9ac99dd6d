"""No output carries a credential: every file the workbench writes has secret-looking values redacted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from workbench.api import import_input, run_scenario
from workbench.io.redact import REDACTED, is_secret_key, redact
from workbench.scenario import SECTIONS
from workbench.sweep import run_sweep
from workbench.sweep.notebook import notebook_parameters
from workbench.sweep.task import PointTask

SECRETS = {
    "sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" '
                        'password="hunter2-jaas";',
    "stream.kafka.ssl.keystore.password": "hunter2-keystore",
    "stream.kinesis.secretKey": "hunter2-kinesis",
    "stream.kinesis.accessKey": "hunter2-access",
    "schema.registry.basic.auth.user.info": "user:hunter2-registry",
    "stream.pulsar.authenticationToken": "hunter2-token",
}
TABLE = {"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1},
         "tableIndexConfig": {"streamConfigs": {"streamType": "kafka", "stream.kafka.topic.name": "events",
                                                **SECRETS}}}
SCENARIO = {"cluster": {"servers": 2, "server": {"cores": 1}}, "table": TABLE,
            "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 100}, "arrival": {"qps": 20}},
            "simulation": {"duration_s": 2, "warmup_s": 0.5, "replications": 1}}


def _written(root: Path) -> str:
    """Everything under ``root`` as text (Parquet included, through pandas)."""
    parts = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.suffix == ".parquet":
            parts.append(pd.read_parquet(path).to_json())
        elif path.suffix != ".pdf":
            parts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


def _assert_no_secret(text: str) -> None:
    leaked = [value for value in ("hunter2",) if value in text]
    assert leaked == [], "a credential reached an output"


@pytest.mark.parametrize("key", sorted(SECRETS))
def test_known_credential_keys_are_secret(key: str) -> None:
    assert is_secret_key(key)


def test_the_keys_the_model_reads_are_not_mistaken_for_secrets() -> None:
    from dataclasses import fields

    names = [f.name for cls in SECTIONS.values() for f in fields(cls)]
    names += ["pinot.query.scheduler.tokens_per_ms", "pinot.broker.timeoutMs", "stream.kafka.topic.name",
              "metadataTTL", "numReplicaGroupsToQuery", "security.protocol", "sasl.mechanism"]
    assert [n for n in names if is_secret_key(n)] == []


def test_redact_keeps_structure_and_everything_else() -> None:
    out = redact({"a": [{"password": "x", "b": 1}], "token": None, "note": "password=abc"})
    assert out == {"a": [{"password": REDACTED, "b": 1}], "token": None, "note": REDACTED}


def test_a_run_writes_no_credential_and_its_scenario_still_loads(tmp_path: Path) -> None:
    document = run_scenario(SCENARIO, tmp_path / "run")
    _assert_no_secret(_written(tmp_path / "run"))
    streams = document.scenario["table"]["tableIndexConfig"]["streamConfigs"]
    assert streams["stream.kafka.topic.name"] == "events" and streams["sasl.jaas.config"] == REDACTED
    from workbench.scenario import load_scenario

    load_scenario(document.scenario)  # the report reloads it: redaction keeps it valid


def test_a_sweep_writes_no_credential(tmp_path: Path) -> None:
    sweep = tmp_path / "s.yaml"
    sweep.write_text(yaml.safe_dump({"base": SCENARIO, "grid": {"cluster.servers": [2],
                                                                "table.tableIndexConfig.streamConfigs.sasl.jaas.config":
                                                                    ["password=hunter2-grid"]}}))
    run_sweep(sweep, tmp_path / "out", parallel=1)
    _assert_no_secret(_written(tmp_path / "out"))
    run_sweep(sweep, tmp_path / "out", parallel=1)  # resuming matches the redacted record of the point


def test_an_imported_table_config_writes_no_credential(tmp_path: Path) -> None:
    source = tmp_path / "table.json"
    source.write_text(json.dumps(TABLE))
    import_input("table-config", source, tmp_path / "imported")
    _assert_no_secret(_written(tmp_path / "imported"))
    kept: dict[str, Any] = json.loads((tmp_path / "imported" / "table_config.json").read_text())
    assert kept["tableIndexConfig"]["streamConfigs"]["stream.kafka.ssl.keystore.password"] == REDACTED


def test_a_notebook_is_handed_the_redacted_base(tmp_path: Path) -> None:
    task = PointTask("point-000", {}, 1, SCENARIO, str(tmp_path), str(tmp_path / "p"))
    _assert_no_secret(json.dumps(notebook_parameters(task)))
