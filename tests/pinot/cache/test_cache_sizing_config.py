"""Serialised result sizes, compression and the RFC-named configuration."""

from __future__ import annotations

import pytest

import workbench.pinot.cache as cache_api
from workbench.pinot.cache.columns import DataType
from workbench.pinot.cache.config import BrokerCacheConfig, ServerCacheConfig, TableCacheOverride
from workbench.pinot.cache.sizing import (
    HEADER_BYTES,
    AggregationPart,
    BrokerResult,
    ColumnShape,
    Compression,
    FunctionShape,
    GroupByPart,
    SelectionPart,
    ValueShape,
    aggregation_bytes,
    varint_bytes,
)


@pytest.mark.parametrize(
    ("function", "shape", "expected"),
    [
        ("COUNT", None, 8),
        ("avg", None, 16),
        ("PERCENTILE95", ValueShape(rows=100), 4 + 800),  # exact percentile keeps every value
        ("percentileTDigest99", ValueShape(rows=10_000), 32 + 16 * 200),  # capped centroids
        ("DISTINCTCOUNTHLL", ValueShape(rows=10**9), 180),  # fixed registers whatever the data
        ("distinctCount", ValueShape(rows=1_000, distinct=50, value_bytes=4), 4 + 200),
        ("distinctcountthetasketch", ValueShape(rows=10**6), 24 + 8 * 16_384),
        ("someNewFunction", None, 8),
    ],
)
def test_aggregation_intermediate_sizes(function: str, shape: ValueShape | None, expected: int) -> None:
    assert aggregation_bytes(function, shape) == expected


def test_group_by_size_grows_with_groups_and_functions() -> None:
    one = GroupByPart(100, 8, (FunctionShape("sum"),)).payload_bytes()
    two = GroupByPart(100, 8, (FunctionShape("sum"), FunctionShape("avg"))).payload_bytes()
    assert one == 1 + 100 * 9 + 100 * 8 + 8
    assert two - one == 100 * 16


def test_selection_rows_with_fixed_and_variable_columns() -> None:
    part = SelectionPart(10, (ColumnShape(DataType.INT), ColumnShape(DataType.STRING, avg_bytes=200)))
    assert part.payload_bytes() == 1 + 2 + 10 * (4 + 2 + 200)


def test_broker_result_includes_response_metadata_and_json_rows() -> None:
    empty = BrokerResult(0, (ColumnShape(),))
    rows = BrokerResult(100, (ColumnShape(), ColumnShape(DataType.STRING, avg_bytes=10)))
    assert 1_000 < empty.payload_bytes() < 2_500  # a stats-only response is about a kilobyte
    assert rows.payload_bytes() - BrokerResult(0, rows.columns).payload_bytes() == 100 * (2 + 12 + 13)


def test_compression_divides_the_payload_not_the_header() -> None:
    part = AggregationPart((FunctionShape("percentile", ValueShape(rows=1_000)),))
    plain = part.serialized_size_bytes()
    assert plain == HEADER_BYTES + part.payload_bytes()
    assert part.serialized_size_bytes(Compression("zstd")) == HEADER_BYTES + -(-part.payload_bytes() // 3)
    with pytest.raises(ValueError, match="unknown codec"):
        Compression("brotli")
    with pytest.raises(ValueError, match="at least 1"):
        Compression("lz4", 0.5)


def test_varint_lengths() -> None:
    assert [varint_bytes(v) for v in (1, 2**7 - 1, 2**7, 2**14, 2**21)] == [1, 1, 2, 3, 4]


def test_defaults_are_the_rfcs() -> None:
    broker, server = BrokerCacheConfig(), ServerCacheConfig()
    assert (broker.enabled, broker.max_bytes, broker.ttl_ms) == (False, 512 << 20, 300_000)
    assert broker.compression.codec == "lz4"
    assert (server.max_bytes, server.ttl_ms, server.enable_realtime_consuming, server.disable_for_upsert) == (
        256 << 20, 120_000, False, True)
    assert not broker.safety_gates_open and not server.safety_gates_open


def test_from_properties_reads_the_rfc_names() -> None:
    broker = BrokerCacheConfig.from_properties({
        "pinot.broker.query.cache.enabled": "TRUE", "pinot.broker.query.cache.ttl.ms": "0",
        "pinot.broker.query.cache.compress": "zstd", "pinot.broker.query.cache.singleflight.enabled": "false",
        "pinot.server.segment.query.cache.enabled": "true",  # another prefix: ignored
    })
    assert (broker.enabled, broker.ttl_ms, broker.compression.codec, broker.singleflight) == (True, None, "zstd", False)
    with pytest.raises(ValueError, match="unknown cache property"):
        BrokerCacheConfig.from_properties({"pinot.broker.query.cache.disable.for.upsert": "true"})
    server = ServerCacheConfig.from_properties({"pinot.server.segment.query.cache.stale_while_revalidate.ms": "500"})
    assert server.stale_while_revalidate_ms == 500


def test_table_overrides() -> None:
    cfg = ServerCacheConfig(enabled=True, table_overrides={
        "a_OFFLINE": TableCacheOverride(enabled=False), "b_OFFLINE": TableCacheOverride(max_bytes=10, ttl_ms=5)})
    assert not cfg.enabled_for("a_OFFLINE") and cfg.enabled_for("c_OFFLINE")
    assert cfg.ttl_for("b_OFFLINE") == 5 and cfg.ttl_for("a_OFFLINE") == 120_000
    assert cfg.table_limits() == {"b_OFFLINE": 10}


def test_public_api_is_curated() -> None:
    assert sorted(cache_api.__all__) == sorted(set(cache_api.__all__))
    for name in cache_api.__all__:
        assert getattr(cache_api, name) is not None
    assert cache_api.WeightedLRUCache(10).stats.hits == 0
