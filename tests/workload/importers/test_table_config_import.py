"""Table configs import in each controller shape, with Pinot's defaults filled in and errors at their line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importer_fixtures import FIXTURES, line_of, write

from workbench.errors import TableConfigError
from workbench.pinot.table_config import load_table_config
from workbench.workload.importers import TABLE_CONFIG_COLUMNS, read_table_config


def test_a_realtime_upsert_config_summarises_what_the_model_uses() -> None:
    result = read_table_config(FIXTURES / "table_config_upsert.json")
    row = result.frame.iloc[0]
    assert (row["table_name"], row["table_type"]) == ("rides", "REALTIME")
    assert row["table_name_with_type"] == "rides_REALTIME"
    assert (row["replication"], row["time_column"]) == (3, "ts")  # replicasPerPartition for REALTIME
    assert (row["instance_selector_type"], row["segment_pruner_types"]) == ("strictReplicaGroup", "partition,time")
    assert (row["partition_column"], row["partition_function"], row["num_partitions"]) == ("rider_id", "Murmur", 8)
    assert (row["is_upsert"], row["upsert_mode"], row["upsert_hash_function"]) == (True, "FULL", "MURMUR3")
    assert json.loads(row["comparison_columns"]) == ["updated_at"]
    assert (row["metadata_ttl"], row["deleted_keys_ttl"]) == (86400000.0, 0.0)
    assert (row["upsert_snapshot"], row["upsert_preload"]) == ("ENABLE", "ENABLE")  # enablePreload: true (deprecated)
    assert not row["is_dedup"]
    assert tuple(result.frame.columns) == TABLE_CONFIG_COLUMNS


def test_the_written_document_loads_as_the_same_config(tmp_path: Path) -> None:
    result = read_table_config(FIXTURES / "table_config_upsert.json")
    path = tmp_path / "table_config.json"
    path.write_text(json.dumps(result.documents["table_config.json"]))
    assert load_table_config(path).to_json() == json.loads((FIXTURES / "table_config_upsert.json").read_text())


def test_get_tables_response_gives_one_row_and_one_document_per_type() -> None:
    result = read_table_config(FIXTURES / "table_config_get_tables.json")
    assert result.frame["table_name_with_type"].tolist() == ["events_OFFLINE", "events_REALTIME"]
    assert result.frame["replication"].tolist() == [2, 3]
    assert sorted(result.documents) == ["table_config_OFFLINE.json", "table_config_REALTIME.json"]
    realtime = result.frame.iloc[1]
    assert (realtime["partition_column"], realtime["num_partitions"]) == ("", -1)  # two partition columns
    assert json.loads(realtime["partition_columns"]) == {
        "country": {"functionName": "Murmur", "numPartitions": 2},
        "user_id": {"functionName": "Modulo", "numPartitions": 4}}
    assert realtime["upsert_mode"] == "NONE" and realtime["comparison_columns"] == "[]"


def test_table_configs_response_with_lower_case_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "tc.json", json.dumps({
        "tableName": "events", "schema": {"schemaName": "events"},
        "offline": {"tableName": "events", "tableType": "OFFLINE"}, "realtime": None}))
    result = read_table_config(path)
    assert result.frame["table_name_with_type"].tolist() == ["events_OFFLINE"]
    assert list(result.documents) == ["table_config.json"]


def test_pinot_validation_errors_point_at_the_key_line() -> None:
    path = FIXTURES / "table_config_bad_routing.json"
    with pytest.raises(TableConfigError) as err:
        read_table_config(path)
    assert err.value.where == f"{path}:{line_of(path, 'instanceSelectorType')}"
    assert err.value.problem.startswith("routing.instanceSelectorType: ")
    assert "strictReplicaGroup" in err.value.problem


def test_a_bad_number_points_at_its_line() -> None:
    path = FIXTURES / "table_config_bad_partitions.json"
    with pytest.raises(TableConfigError, match="must be an integer, got 'eight'") as err:
        read_table_config(path)
    assert err.value.where == f"{path}:{line_of(path, 'numPartitions')}"


def test_a_wrapped_config_error_names_the_wrapper_key(tmp_path: Path) -> None:
    path = write(tmp_path, "tc.json", "{", '  "REALTIME": {', '    "tableName": "t",', '    "tableType": "BATCH"',
                 "  }", "}")
    with pytest.raises(TableConfigError) as err:
        read_table_config(path)
    assert (err.value.where, err.value.problem.split(":")[0]) == (f"{path}:4", "REALTIME.tableType")


def test_invalid_json_is_reported_at_its_line() -> None:
    path = FIXTURES / "table_config_bad_syntax.json"
    with pytest.raises(TableConfigError, match="not valid JSON") as err:
        read_table_config(path)
    assert err.value.where == f"{path}:4"


def test_an_unknown_shape_says_which_shapes_are_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, "tc.json", '{"name": "events"}')
    with pytest.raises(TableConfigError, match="GET /tables/"):
        read_table_config(path)


def test_bad_upsert_ttl_points_at_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "tc.json", "{", '"tableName": "r", "tableType": "REALTIME",',
                 '"routing": {"instanceSelectorType": "strictReplicaGroup"},',
                 '"upsertConfig": {', '"metadataTTL": "a day"', "}}")
    with pytest.raises(TableConfigError, match=r"upsertConfig\.metadataTTL: must be a number") as err:
        read_table_config(path)
    assert err.value.where == f"{path}:5"
