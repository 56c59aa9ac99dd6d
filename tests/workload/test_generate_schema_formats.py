"""Schema-driven rows (``from_schema``) in a text date format, offline, with a multi-value column (no Spark).

The expected values are Python's own calendar arithmetic on each row's event time, not the generator's.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from workload_fixtures import spec_of

from workbench.pinot.schema import Schema
from workbench.pinot.table_config import TableConfig
from workbench.workload.pure import generate_frames

SCHEMA = Schema.from_json({
    "schemaName": "sales",
    "dimensionFieldSpecs": [{"name": "store", "dataType": "STRING"},
                            {"name": "tags", "dataType": "STRING", "singleValueField": False}],
    "metricFieldSpecs": [{"name": "amount", "dataType": "DOUBLE"}],
    "dateTimeFieldSpecs": [{"name": "day", "dataType": "STRING", "format": "1:DAYS:SIMPLE_DATE_FORMAT:yyyy-MM-dd",
                            "granularity": "1:DAYS"},
                           {"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                            "granularity": "15:MINUTES"}]})
TABLE = TableConfig.from_json({"tableName": "sales", "tableType": "OFFLINE",
                               "segmentsConfig": {"timeColumnName": "day", "replication": "1"}})


def test_a_text_day_column_offline_with_multi_values() -> None:
    spec = spec_of(events=2_000, span_s="3d", partitions=2, from_schema=True,
                   columns={"store": {"cardinality": 4}, "tags": {"max_values": 2}}, queries={"duration_s": 30})
    work = generate_frames(spec, table_config=TABLE, schema=SCHEMA, seed=4)
    rows = work.events
    day = [datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d") for ms in rows["$event_time_ms"]]
    assert rows["day"].tolist() == day
    assert (rows["ts"] == rows["$event_time_ms"] // 900_000 * 900_000).all()
    assert set(rows["store"]) <= {f"store_{i}" for i in range(4)}
    assert {len(t) for t in rows["tags"]} == {1, 2}

    # offline segments are named by the day column's own values, one day per push batch
    names = work.segments["segment_name"]
    assert all(re.fullmatch(r"sales_(\d{4}-\d\d-\d\d)_\1_[01]", n) for n in names), names.tolist()
    assert sorted({n.split("_")[1] for n in names}) == sorted(set(day))

    # queries bound the day column with day literals, and filter stores by theirs
    sqls = work.queries["sql"]
    assert sqls.str.contains(r"day >= '\d{4}-\d\d-\d\d'").any() and sqls.str.contains("store = 'store_").any()
    assert not sqls.str.contains("event_time_ms|category|ingest_time_ms").any()
