"""The Arrow schemas of a workload directory: the contract generators and importers share.

``docs/data.md`` documents every column (a test checks that it lists exactly these); readers in the
simulator rely only on these names and types. Bump :data:`SCHEMA_VERSION` on any change a reader
could notice.
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["BOOKKEEPING_COLUMNS", "EVENTS_SCHEMA", "QUERIES_SCHEMA", "SCHEMA_VERSION", "SEGMENTS_SCHEMA",
           "events_schema"]

SCHEMA_VERSION = 2

EVENTS_SCHEMA = pa.schema([
    ("event_id", pa.int64()),
    ("key", pa.string()),
    ("key_id", pa.int64()),
    ("event_time_ms", pa.int64()),
    ("ingest_time_ms", pa.int64()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("segment_name", pa.string()),
    ("doc_id", pa.int32()),
    ("is_delete", pa.bool_()),
    ("update_seq", pa.int32()),
    ("category", pa.string()),
    ("value", pa.float64()),
])

#: Event columns that are the generator's bookkeeping, not values of the table's rows: where a row sits
#: in the stream and in the segments. A table column of the same name would be filled with these
#: (or refused as a partition column mid-run), so ``workload.generate`` refuses a schema naming one
#: (:mod:`workbench.scenario.columns`). The other event columns (``key``, ``event_time_ms``, ``category``,
#: ``value``, ``is_delete``, ``update_seq``, ``ingest_time_ms``, ...) are the generated table's data, which
#: a schema is meant to name. ``segments.parquet`` and ``queries.parquet`` columns (``sql``, ...) live in
#: their own files and never share a row with the table's columns.
BOOKKEEPING_COLUMNS: dict[str, str] = {
    "event_id": "the event's number in arrival order",
    "partition": "the stream partition the producer sent the row to",
    "offset": "the row's position in its stream partition",
    "segment_name": "the segment holding the row",
    "doc_id": "the row's position inside its segment",
}

SEGMENTS_SCHEMA = pa.schema([
    ("segment_name", pa.string()),
    ("table_type", pa.string()),
    ("partition", pa.int32()),
    ("sequence", pa.int32()),
    ("status", pa.string()),
    ("start_time_ms", pa.int64()),
    ("end_time_ms", pa.int64()),
    ("total_docs", pa.int64()),
    ("size_bytes", pa.int64()),
    ("crc", pa.int64()),
    ("creation_time_ms", pa.int64()),
    ("seal_time_ms", pa.int64()),
    ("start_offset", pa.int64()),
    ("end_offset", pa.int64()),
    ("partition_metadata", pa.string()),
    ("zk_metadata", pa.string()),
])

QUERIES_SCHEMA = pa.schema([
    ("query_id", pa.int64()),
    ("arrival_s", pa.float64()),
    ("now_ms", pa.int64()),
    ("sql", pa.string()),
    ("kind", pa.string()),
    ("template_id", pa.int32()),
    ("dashboard_id", pa.int32()),
    ("viewer_id", pa.int32()),
])


def events_schema(alias_columns: tuple[str, ...] = ()) -> pa.Schema:
    """The events schema plus any table partition columns written as copies of ``key``."""
    schema = EVENTS_SCHEMA
    for name in alias_columns:
        schema = schema.append(pa.field(name, pa.string()))
    return schema
