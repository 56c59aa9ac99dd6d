"""Parsed once, typed after: the user's upsertConfig, query options and SLO become typed values when the
scenario loads, a bad one fails then (naming its key), and the validated scenario pickles."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from workbench.analysis.slo import recorded_slo
from workbench.cli import main
from workbench.errors import ScenarioError
from workbench.pinot.upsert import HashFunction, UpsertSettings
from workbench.scenario import load_scenario
from workbench.scenario.schema import SLOSpec


def _upsert_table(upsert: dict[str, Any]) -> dict[str, Any]:
    return {"tableName": "rides", "tableType": "REALTIME",
            "segmentsConfig": {"timeColumnName": "ts", "replicasPerPartition": "1"},
            "routing": {"instanceSelectorType": "strictReplicaGroup"}, "upsertConfig": upsert}


def _scenario(upsert: dict[str, Any], **sections: Any) -> dict[str, Any]:
    schema = {"schemaName": "rides", "primaryKeyColumns": ["id"],
              "dimensionFieldSpecs": [{"name": "id", "dataType": "LONG"}],
              "dateTimeFieldSpecs": [{"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                                      "granularity": "1:MILLISECONDS"}]}
    return {"cluster": {"servers": 2, "gc": {"upsert_keys": 1000}}, "table": _upsert_table(upsert), "schema": schema,
            "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 10}}, **sections}


@pytest.mark.parametrize("written, expected", [("MD5", HashFunction.MD5), ("murmur3", HashFunction.MURMUR3),
                                               (None, HashFunction.NONE)])
def test_a_valid_hash_function_reaches_the_typed_upsert_config(written: str | None, expected: HashFunction) -> None:
    """Pinot reads hashFunction case-insensitively; an absent one is NONE (UpsertConfig.java's default)."""
    upsert = {"mode": "FULL"} if written is None else {"mode": "FULL", "hashFunction": written}
    sc = load_scenario(_scenario(upsert))
    assert sc.table.upsert is not None and sc.table.upsert.hash_function is expected
    assert sc.to_dict()["table"]["upsertConfig"] == upsert  # the user's JSON is kept as written


def test_pinots_upsert_defaults_fill_the_typed_value() -> None:
    """PB §5.1: mode FULL, TTLs 0 (off), snapshot and preload DEFAULT, no comparison columns (then the time
    column), no delete column, out-of-order records kept."""
    cfg = load_scenario(_scenario({})).table.upsert
    assert cfg is not None
    assert (cfg.mode, cfg.metadata_ttl, cfg.deleted_keys_ttl, cfg.snapshot, cfg.preload) == (
        "FULL", 0.0, 0.0, "DEFAULT", "DEFAULT")
    assert (cfg.comparison_columns, cfg.comparison_columns_or("ts")) == ((), ("ts",))
    assert (cfg.delete_record_column, cfg.drop_out_of_order_record) == (None, False)


def test_mode_none_is_not_an_upsert_table() -> None:
    sc = load_scenario({"table": {**_upsert_table({"mode": "NONE"}), "tableType": "REALTIME"}})
    assert sc.table.upsert is None and not sc.table.is_upsert


def test_the_manager_settings_come_from_the_typed_config() -> None:
    """metadataTTL as Pinot's Jackson reads a double (the numeric string "86400000" included), snapshot on."""
    sc = load_scenario(_scenario({"metadataTTL": "86400000", "snapshot": "ENABLE", "hashFunction": "MD5"}))
    settings = UpsertSettings.from_table_config(sc.table)
    assert (settings.metadata_ttl, settings.enable_snapshot, settings.hash_function) == (
        86400000.0, True, HashFunction.MD5)


@pytest.mark.parametrize("upsert, key, words", [
    ({"hashFunction": "SHA1"}, "table.upsertConfig.hashFunction", "NONE, MD5, MURMUR3"),
    ({"metadataTTL": "1d", "snapshot": "ENABLE"}, "table.upsertConfig.metadataTTL", "must be a number"),
    ({"deletedKeysTTL": "a week"}, "table.upsertConfig.deletedKeysTTL", "must be a number"),
    ({"snapshot": "yes"}, "table.upsertConfig.snapshot", "ENABLE, DISABLE"),
])
def test_a_bad_upsert_value_fails_at_load_naming_the_key(upsert: dict[str, Any], key: str, words: str) -> None:
    with pytest.raises(ScenarioError) as err:
        load_scenario(_scenario(upsert))
    assert err.value.where == key and words in err.value.problem


def test_validate_names_a_bad_hash_function(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Pinot's HashFunction enum has no SHA1: `workbench validate` says so at the key, before any run."""
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(_scenario({"mode": "FULL", "hashFunction": "SHA1"})))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("workbench validate: table.upsertConfig.hashFunction: must be one of NONE, MD5, MURMUR3")
    assert err.endswith("got 'SHA1'")


def test_workload_query_options_are_typed_at_load() -> None:
    sc = load_scenario({"workload": {"query_options": {"timeoutMs": 250, "isSecondaryWorkload": True,
                                                      "maxExecutionThreads": "2", "myOwnKey": "x"}}})
    opts = sc.workload.options
    assert (opts.timeout_ms, opts.is_secondary_workload, opts.max_execution_threads) == (250.0, True, 2)
    assert dict(opts.strings) == {"timeoutMs": "250", "isSecondaryWorkload": "true", "maxExecutionThreads": "2",
                                  "myOwnKey": "x"}  # what Pinot passes on: strings, Java's booleans
    unset = load_scenario({}).workload.options
    assert (unset.timeout_ms, unset.is_secondary_workload, unset.max_execution_threads) == (None, False, -1)


def test_a_bad_thread_cap_option_fails_at_load_naming_the_key() -> None:
    with pytest.raises(ScenarioError, match=r"^workload\.query_options\.maxExecutionThreads: must be a positive "
                                            r"integer, got '0'"):
        load_scenario({"workload": {"query_options": {"maxExecutionThreads": 0}}})


def test_a_recorded_slo_is_read_by_the_loaders_rules() -> None:
    """A run read back from disk holds its scenario as written; its SLO is read as the loader reads it."""
    assert recorded_slo({"scenario": {"slo": {"max_heap": "8G", "p99_ms": 100}}}) == SLOSpec(100.0, 8 * 2**30)
    assert recorded_slo({}) == SLOSpec()
    with pytest.raises(ScenarioError, match=r"^slo\.max_heap"):
        recorded_slo({"scenario": {"slo": {"max_heap": "lots"}}})


def test_a_validated_scenario_pickles_to_an_equal_read_only_scenario() -> None:
    """A sweep hands each point's scenario to a worker process: it must arrive whole and still read-only."""
    sc = load_scenario(_scenario({"mode": "FULL", "hashFunction": "MURMUR3", "metadataTTL": 3600,
                                  "snapshot": "ENABLE"},
                                 slo={"p99_ms": 100, "max_heap": "8G"}),
                       overrides={"workload.query_options": {"timeoutMs": 500},
                                  "cluster.broker.config": {"pinot.broker.query.cache.enabled": True}})
    back = pickle.loads(pickle.dumps(sc))
    assert back == sc and back.to_dict() == sc.to_dict()
    assert back.table.upsert == sc.table.upsert and back.workload.options == sc.workload.options
    assert back.schema == sc.schema and back.slo.max_heap == 8 * 2**30
    with pytest.raises(TypeError):
        back.table.raw["tableName"] = "other"  # type: ignore[index]
