"""Benchmark: generating a 30-column user schema (``from_schema``) against the generator's own columns.

Both runs draw the same stream (Zipf keys, diurnal rate, late events, 4 partitions) with Spark in one
process with a warm JVM; the schema run also writes the user's 30 columns (text and number dimensions,
a multi-value column, metrics, a day column and a millisecond time column, a STRING primary key hashed
by Murmur). Printed: rows per second of each and their ratio.

Run from the repository root::

    .venv/bin/python benchmarks/bench_generate_schema.py                       # 10M rows, local[2]
    .venv/bin/python benchmarks/bench_generate_schema.py --events 1000000 --local
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from workbench.pinot.schema import Schema
from workbench.pinot.table_config import TableConfig
from workbench.scenario.build import build_section
from workbench.workload.engine import run_generation
from workbench.workload.generate import SparkExecutor, generate_events
from workbench.workload.pure import generate_local
from workbench.workload.spark import get_spark
from workbench.workload.spec import GenerateSpec

ROOT = Path(__file__).resolve().parents[1]


def schema() -> Schema:
    """30 columns: a STRING key, 16 dimensions (one multi-value), 11 metrics, two time columns."""
    dims = [{"name": "trip_id", "dataType": "STRING"}]
    dims += [{"name": f"dim_s{i}", "dataType": "STRING"} for i in range(8)]
    dims += [{"name": f"dim_i{i}", "dataType": "INT"} for i in range(7)]
    dims += [{"name": "tags", "dataType": "STRING", "singleValueField": False}]
    metrics = [{"name": f"m_d{i}", "dataType": "DOUBLE"} for i in range(6)]
    metrics += [{"name": f"m_l{i}", "dataType": "LONG"} for i in range(5)]
    times = [{"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH", "granularity": "1:MILLISECONDS"},
             {"name": "day", "dataType": "INT", "format": "1:DAYS:EPOCH", "granularity": "1:DAYS"}]
    out = Schema.from_json({"schemaName": "trips", "dimensionFieldSpecs": dims, "metricFieldSpecs": metrics,
                            "dateTimeFieldSpecs": times, "primaryKeyColumns": ["trip_id"]})
    assert len(out.fields) == 30
    return out


TABLE = TableConfig.from_json({"tableName": "trips", "tableType": "REALTIME",
                               "segmentsConfig": {"timeColumnName": "ts"},
                               "tableIndexConfig": {"segmentPartitionConfig": {"columnPartitionMap": {
                                   "trip_id": {"functionName": "Murmur", "numPartitions": 4}}}}})


def _spec(events: int, from_schema: bool) -> GenerateSpec:
    return build_section(GenerateSpec, {
        "events": events, "keys": 100_000, "key_distribution": "zipf", "zipf_s": 1.1, "partitions": 4,
        "span_s": "6h", "segment_rows": 100_000, "disorder": {"late_fraction": 0.05},
        "rate": {"profile": "diurnal"}, "from_schema": from_schema, "queries": {"duration_s": 60},
    }, "bench")


def _time(spark: Any, events: int, from_schema: bool, out: Path, local: bool) -> float:
    start = time.perf_counter()
    if local:
        generate_local(_spec(events, from_schema), out, table_config=TABLE, schema=schema(), seed=1, progress=False)
    else:
        generate_events(spark, _spec(events, from_schema), out, table_config=TABLE, schema=schema(), seed=1,
                        progress=False)
    elapsed = time.perf_counter() - start
    shutil.rmtree(out)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--local", action="store_true", help="the in-process engine instead of Spark")
    args = parser.parse_args()
    spark = None if args.local else get_spark(args.master, app_name="bench-generate-schema")
    with tempfile.TemporaryDirectory(prefix="bench-generate-schema-", dir=ROOT / "data") as tmp:
        scratch = Path(tmp)
        if spark is not None:  # warm the JVM and every Python worker
            run_generation(SparkExecutor(spark), _spec(200_000, True), scratch / "warm", table="trips",
                           table_config=TABLE, seed=1, overwrite=False, blocks=(25_000, 5_000), schema=schema())
        own = _time(spark, args.events, False, scratch / "own", args.local)
        mine = _time(spark, args.events, True, scratch / "schema", args.local)
    engine = "in-process" if args.local else f"Spark {args.master}"
    print(f"{args.events:,} rows, {engine}; Zipf keys, diurnal rate, 5% late events; Murmur(trip_id, 4)")
    print(f"{'columns':>28} {'s':>8} {'rows/s':>12}")
    print(f"{'generator (13 columns)':>28} {own:>8.2f} {args.events / own:>12,.0f}")
    print(f"{'30-column schema':>28} {mine:>8.2f} {args.events / mine:>12,.0f}")
    print(f"schema / generator time: {mine / own:.2f}x")
    if spark is not None:
        spark.stop()


if __name__ == "__main__":
    main()
