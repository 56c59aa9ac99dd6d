"""Reading upsertConfig and enforcing Pinot's effective-setting rules (reference §5.1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.errors import InputError, TableConfigError
from workbench.pinot.table_config import TableConfig
from workbench.pinot.upsert import HashFunction, PartitionUpsertMetadataManager, UpsertSettings


def table(upsert: dict[str, object]) -> TableConfig:
    return TableConfig.from_json({"tableName": "trips", "tableType": "REALTIME",
                                  "segmentsConfig": {"timeColumnName": "ts"}, "upsertConfig": upsert,
                                  "routing": {"instanceSelectorType": "strictReplicaGroup"}})


def test_defaults_match_pinot() -> None:
    s = UpsertSettings.from_table_config(table({"mode": "FULL"}))
    assert (s.hash_function, s.enable_snapshot, s.enable_preload, s.metadata_ttl, s.ttl_enabled) == (
        HashFunction.NONE, False, False, 0.0, False)


def test_snapshot_and_preload_resolution() -> None:
    assert UpsertSettings.from_upsert_config({"snapshot": "DEFAULT"}, server_enable_snapshot=True).enable_snapshot
    assert UpsertSettings.from_upsert_config({"enableSnapshot": True}).enable_snapshot
    assert not UpsertSettings.from_upsert_config({"snapshot": "DISABLE", "preload": "ENABLE"}).enable_preload
    assert UpsertSettings.from_upsert_config({"snapshot": "ENABLE", "preload": "ENABLE"}).enable_preload
    with pytest.raises(TableConfigError, match="ENABLE, DISABLE or DEFAULT"):
        UpsertSettings.from_upsert_config({"snapshot": "yes"})


def test_ttl_rules() -> None:
    with pytest.raises(InputError, match="multiple comparison columns"):
        UpsertSettings.from_upsert_config({"metadataTTL": 5, "snapshot": "ENABLE", "comparisonColumns": ["a", "b"]})
    with pytest.raises(InputError, match="snapshot enabled"):
        UpsertSettings.from_upsert_config({"metadataTTL": 5})
    with pytest.raises(InputError, match="deleteRecordColumn"):
        UpsertSettings.from_upsert_config({"deletedKeysTTL": 5})
    ok = UpsertSettings.from_upsert_config({"deletedKeysTTL": 5, "deleteRecordColumn": "del", "hashFunction": "md5"})
    assert ok.ttl_enabled and ok.has_delete_column and ok.hash_function is HashFunction.MD5


def test_non_upsert_table_is_rejected() -> None:
    plain = TableConfig.from_json({"tableName": "t", "tableType": "OFFLINE"})
    with pytest.raises(TableConfigError, match="not an upsert table"):
        UpsertSettings.from_table_config(plain)


def test_manager_from_table_config(tmp_path: Path) -> None:
    settings = UpsertSettings.from_table_config(
        table({"mode": "FULL", "metadataTTL": 86400, "snapshot": "ENABLE", "hashFunction": "MURMUR3"}),
        primary_key_types=("STRING",))
    m = PartitionUpsertMetadataManager(settings, snapshot_dir=tmp_path, partition_id=2)
    m.add_segment("s", ["a", "b", "a"], [1, 2, 3])
    assert sorted(m.valid_doc_ids("s")) == [1, 2] and m.settings.metadata_ttl == 86400
