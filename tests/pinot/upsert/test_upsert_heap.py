"""JVM heap arithmetic and Pinot's estimator (reference §6; anchors §6 "Bytes per primary key")."""

from __future__ import annotations

from typing import Any

import pytest
from pyroaring import BitMap

from workbench.errors import InputError
from workbench.pinot.heap import (
    UpsertHeapModel,
    bitmap_bytes,
    chm_table_bytes,
    chm_table_capacity,
    entry_layout,
    java_double_str,
    pinot_estimate,
    pinot_estimate_for_table,
    pinot_estimate_json,
    string_bytes,
    upsert_bytes_per_key,
)
from workbench.pinot.table_config import TableConfig


# -- our model: every number below is JVM layout arithmetic done by hand -----------------------------------
def test_entry_layout_for_a_long_key_and_long_comparison() -> None:
    """Node 12+4+3x4=28->32; PrimaryKey 16 + Object[1] 16+4->24 + Long 24; RecordLocation 24; Long 24."""
    layout = entry_layout(["LONG"])
    assert (layout.node, layout.key, layout.record_location, layout.comparison_value) == (32, 64, 24, 24)
    assert layout.total == 144


@pytest.mark.parametrize(("hash_function", "key"), [
    ("MD5", 16 + 32), ("MURMUR3", 16 + 32), ("XXH128", 16 + 32),  # ByteArray + byte[16] (16+16)
    ("XXHASH", 16 + 24),  # byte[8] is 16+8 = 24
])
def test_digest_keys_are_a_byte_array_wrapper_plus_the_digest(hash_function: str, key: int) -> None:
    assert entry_layout(["LONG", "STRING"], hash_function).key == key


def test_uuid_key_is_16_bytes_per_column() -> None:
    assert entry_layout(["STRING", "STRING"], "UUID").key == 16 + (16 + 32)


def test_string_key_uses_compact_strings() -> None:
    """PrimaryKey 16 + Object[1] 24 + String 24 + byte[10] (16+10 -> 32)."""
    assert entry_layout(["STRING"], avg_string_length=10).key == 16 + 24 + 24 + 32
    assert string_bytes(10, latin1=False) == 24 + 40  # UTF-16: 16 + 20 -> 40
    with pytest.raises(InputError, match="avg_string_length"):
        entry_layout(["STRING"])


def test_multi_column_key_and_int_comparison() -> None:
    """Object[2] is 16+8 = 24; Integer 16 + Long 24; comparison Integer 16."""
    layout = entry_layout(["INT", "LONG"], comparison_type="INT")
    assert (layout.key, layout.comparison_value) == (16 + 24 + 16 + 24, 16)


def test_table_resizes_when_size_reaches_three_quarters() -> None:
    assert [chm_table_capacity(n) for n in (0, 11, 12, 24, 1_000_000, 1_572_863, 1_572_864)] == [
        16, 16, 32, 64, 2**21, 2**21, 2**22]
    assert chm_table_bytes(16) == 16 + 64


def test_bytes_per_key_adds_table_slots_spread_over_the_keys() -> None:
    assert upsert_bytes_per_key(["LONG"], num_keys=1_000_000) == pytest.approx(144 + (16 + 4 * 2**21) / 1e6)
    assert upsert_bytes_per_key(["LONG"], "MD5") == pytest.approx(32 + 48 + 24 + 24 + (16 + 4 * 2**21) / 1e6)


def test_table_keeps_its_size_after_keys_leave() -> None:
    model = UpsertHeapModel(entry_layout(["LONG"]))
    assert model.map_bytes(10, max_keys=1_000_000) == 10 * 144 + chm_table_bytes(2**21)


def test_bitmap_bytes_are_the_serialised_size() -> None:
    bm = BitMap(range(100))
    assert bitmap_bytes(bm) == len(bm.serialize())


# -- Pinot's estimator: vectors from the reference ------------------------------------------------------------
def test_pinot_test_vector() -> None:
    """[PINOT-TEST] PinotUpsertRestletResourceTest: cardinality 10000, primaryKeySize 48, 8 partitions."""
    got = pinot_estimate(["STRING"], 10_000, None, primary_key_size=48, num_partitions=8)
    assert {k: v for k, v in got.items() if k != "tableName"} == {
        "bytesPerKey": 48, "bytesPerValue": 60, "totalKeySpace(bytes)": 480_000,
        "totalValueSpace(bytes)": 600_000, "totalSpace(bytes)": 1_080_000, "numPartitions": 8,
        "totalSpacePerPartition(bytes)": 135_000.0}


def test_computed_vectors() -> None:
    one = pinot_estimate(["LONG"], 1_000_000, num_partitions=4)
    assert (one["bytesPerKey"], one["bytesPerValue"], one["totalKeySpace(bytes)"], one["totalValueSpace(bytes)"],
            one["totalSpace(bytes)"], one["totalSpacePerPartition(bytes)"]) == (
        40, 60, 40_000_000, 60_000_000, 100_000_000, 2.5e7)
    assert pinot_estimate(["INT", "LONG"], 1)["bytesPerKey"] == 44
    assert pinot_estimate(["INT", "STRING"], 1, primary_key_size=36)["bytesPerKey"] == 36
    assert [pinot_estimate(["LONG"], 1, c)["bytesPerValue"] for c in
            (["LONG"], ["INT"], ["LONG", "INT"], ["DOUBLE", "TIMESTAMP", "BOOLEAN"])] == [60, 56, 132, 148]
    assert "numPartitions" not in pinot_estimate(["LONG"], 1, num_partitions=0)


def test_pinot_errors_are_input_errors_with_pinots_message() -> None:
    with pytest.raises(InputError, match="Primary key sizes much be provided"):
        pinot_estimate(["INT", "STRING"], 1)
    with pytest.raises(InputError, match="Not support data types for the comparison column"):
        pinot_estimate(["LONG"], 1, ["STRING"])


def test_estimate_from_table_config_and_schema() -> None:
    tc = TableConfig.from_json({"tableName": "trips", "tableType": "REALTIME",
                                "upsertConfig": {"mode": "FULL", "comparisonColumns": ["ts"]},
                                "routing": {"instanceSelectorType": "strictReplicaGroup"}})
    schema: dict[str, Any] = {"primaryKeyColumns": ["id"], "dimensionFieldSpecs": [{"name": "id", "dataType": "LONG"}],
                              "dateTimeFieldSpecs": [{"name": "ts", "dataType": "TIMESTAMP"}]}
    got = pinot_estimate_for_table(tc, schema, 100)
    assert (got["tableName"], got["bytesPerKey"], got["bytesPerValue"]) == ("trips_REALTIME", 40, 60)


def test_json_uses_javas_double_format() -> None:
    assert [java_double_str(x) for x in (135000.0, 2.5e7, 1e7, 9999999.0, 0.001, 1e-4, 0.0)] == [
        "135000.0", "2.5E7", "1.0E7", "9999999.0", "0.001", "1.0E-4", "0.0"]
    assert pinot_estimate_json({"a": 1, "b": 2.5e7}) == '{"a":1,"b":2.5E7}'


def test_ours_versus_pinots_for_a_long_key() -> None:
    """The documented gap: the map node and table slots, plus boxing, which Pinot's formula leaves out."""
    ours = upsert_bytes_per_key(["LONG"])
    pinot = pinot_estimate(["LONG"], 1, ["LONG"])
    assert pinot["bytesPerKey"] + pinot["bytesPerValue"] == 100
    assert ours - 100 == pytest.approx(32 + 8.388624 + (64 - 40) + (48 - 60))
