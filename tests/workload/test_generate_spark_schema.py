"""Spark generates rows of the user's own schema (``workload.generate.from_schema``), on Pinot's own example.

The table is Pinot 1.5.1's ``upsertMeetupRsvp`` example (copied verbatim into tests/fixtures), given a day
column as its time column and a Murmur partitioning over 4 partitions, as a user sizing it would write:
every expected value below comes from Pinot's definitions (days since the epoch, the murmur2 vector of
``"user_123"`` that tests/pinot checks against Pinot), not from the generator.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from workload_fixtures import spec_of

from workbench.pinot.schema import Schema
from workbench.pinot.table_config import TableConfig
from workbench.sim.planner import Planner, segment_metadata
from workbench.workload.generate import generate_events

pytestmark = pytest.mark.spark

EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "pinot_examples"
DAY_MS = 86_400_000
#: murmur2 of the UTF-8 bytes of "user_123" (tests/pinot/test_partition.py, checked against Pinot).
MURMUR2_USER_123 = -1159050033


def _meetup() -> tuple[Schema, TableConfig]:
    schema = json.loads((EXAMPLES / "upsertMeetupRsvp_schema.json").read_text())
    schema["dateTimeFieldSpecs"].append({"name": "DaysSinceEpoch", "dataType": "INT", "format": "1:DAYS:EPOCH",
                                         "granularity": "1:DAYS"})
    table = json.loads((EXAMPLES / "upsertMeetupRsvp_realtime_table_config.json").read_text())
    table["segmentsConfig"]["timeColumnName"] = "DaysSinceEpoch"
    table["tableIndexConfig"]["segmentPartitionConfig"]["columnPartitionMap"]["event_id"] = {
        "functionName": "Murmur", "numPartitions": 4}
    table["routing"]["segmentPrunerTypes"] = ["partition", "time"]
    return Schema.from_json(schema), TableConfig.from_json(table)


def test_spark_writes_the_schemas_columns_types_days_and_partitions(spark: Any, tmp_path: Path) -> None:
    schema, table = _meetup()
    spec = spec_of(events=3_000, keys=300, partitions=4, span_s="3d", segment_rows=300, from_schema=True,
                   columns={"group_city": {"cardinality": 5, "distribution": "zipf"}},
                   queries={"duration_s": 60, "dashboards": 2, "viewers": 3, "lookup_qps": 5, "adhoc_qps": 1})
    manifest = generate_events(spark, spec, tmp_path / "w", seed=2, table_config=table, schema=schema)
    events = pq.read_table(tmp_path / "w" / "events")
    segments = pd.read_parquet(tmp_path / "w" / "segments.parquet")
    queries = pd.read_parquet(tmp_path / "w" / "queries.parquet")

    # exactly the schema's columns, in its types; `location` is Pinot's to compute (a transformFunction)
    mine = [f.name for f in schema.fields if f.name != "location"]
    assert events.column_names[:len(mine)] == mine and "location" not in events.column_names
    assert manifest["columns"]["left_to_pinot"] == ["location"]
    assert events.column_names[len(mine):len(mine) + 2] == ["segment_name", "doc_id"]
    assert all(c.startswith("$") for c in events.column_names[len(mine) + 2:])
    types = dict(zip(events.schema.names, events.schema.types, strict=True))
    assert (types["event_id"], types["group_id"], types["rsvp_count"], types["group_lat"], types["mtime"],
            types["DaysSinceEpoch"]) == (pa.string(), pa.int64(), pa.int32(), pa.float64(), pa.timestamp("ms"),
                                         pa.int32())
    frame = events.to_pandas()
    assert frame["group_city"].nunique() <= 5

    # the day column counts days since the epoch; the segments' time ranges are whole days
    assert (frame["DaysSinceEpoch"] == frame["$event_time_ms"] // DAY_MS).all()
    assert (frame["mtime"].astype("int64") == frame["$event_time_ms"]).all()
    sealed = segments[segments["status"] == "DONE"]
    assert (sealed["start_time_ms"] % DAY_MS == 0).all() and (sealed["end_time_ms"] % DAY_MS == 0).all()
    assert sealed["end_time_ms"].max() - sealed["start_time_ms"].min() == 2 * DAY_MS

    # Pinot's Murmur partition of the key "user_123": (murmur2 & 0x7fffffff) % 4
    expected = (MURMUR2_USER_123 & 0x7FFFFFFF) % 4
    rows = frame[frame["event_id"] == "user_123"]
    assert len(rows) > 0 and set(rows["$partition"]) == {expected}
    assert all(f"__{expected}__" in name for name in rows["segment_name"])
    meta = json.loads(sealed[sealed["segment_name"].isin(rows["segment_name"])]["partition_metadata"].iloc[0])
    assert meta["columnPartitionMap"]["event_id"]["partitions"] == [expected]

    # queries speak the table's columns: day literals on its time column, lookups on its key
    for sql in queries["sql"]:
        assert not any(word in sql for word in ("event_time_ms", "category", " value", " key "))
    assert queries["sql"].str.contains("DaysSinceEpoch").sum() > len(queries) // 2
    lookups = queries[queries["kind"] == "lookup"]["sql"]
    assert len(lookups) > 0 and lookups.str.contains("event_id = 'user_|event_id IN \\('user_").all()

    # and Pinot's broker pruners prune on them: the last day keeps fewer segments, a key one partition's
    planner = Planner(tuple(segments["segment_name"]), segments["total_docs"].to_numpy(float), table, schema,
                      segment_metadata(segments))
    last_day = int(sealed["end_time_ms"].max() // DAY_MS)
    day_plan = planner.plan(f"SELECT COUNT(*) FROM upsertMeetupRsvp WHERE DaysSinceEpoch >= {last_day}")
    key_plan = planner.plan("SELECT * FROM upsertMeetupRsvp WHERE event_id = 'user_123' LIMIT 10")
    assert 0 < day_plan.pruned < len(segments)
    assert key_plan.names is not None and all(f"__{expected}__" in n for n in key_plan.names)
