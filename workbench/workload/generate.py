"""Spark generation of events and of the realtime segments Pinot would cut from them.

Randomness on Spark is a pure function of ``(seed, event id, purpose)`` through ``xxhash64``, never
of the partitioning or of the executor order, so the same seed gives identical content on
``local[1]``, ``local[2]`` or a cluster. Events are routed to stream partitions (Modulo on the key
id for now), ordered by event time inside each partition and sealed into segments every
``segment_rows`` rows; the last segment of each partition is the consuming one, as in Pinot.

Output layout (``docs/data.md``)::

    OUT/events/            Parquet, one row per event
    OUT/segments.parquet   one row per segment, with the metadata Pinot records
    OUT/manifest.json      parameters, seed, row counts, checksums (written last)
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from workbench.io import atomic_dir, write_json_atomic
from workbench.scenario.schema import GenerateSpec

__all__ = ["SCHEMA_VERSION", "generate_events", "llc_segment_name"]

SCHEMA_VERSION = 1
#: Events start here (2026-01-01T00:00:00Z) so segment names and times look like production.
EPOCH_START_MS = 1_767_225_600_000


def llc_segment_name(table: str, partition: int, sequence: int, creation_ms: int) -> str:
    """Pinot's LLC segment name ``<table>__<partition>__<sequence>__<yyyyMMdd'T'HHmm'Z'>``.

    >>> llc_segment_name("events", 3, 12, 1767225600000)
    'events__3__12__20260101T0000Z'
    """
    stamp = datetime.fromtimestamp(creation_ms / 1000, tz=UTC).strftime("%Y%m%dT%H%MZ")
    return f"{table}__{partition}__{sequence}__{stamp}"


def _uniform(seed: int, salt: int) -> Any:
    """A Spark column uniform on [0, 1), a pure function of (seed, id, salt)."""
    from pyspark.sql import functions as F

    h = F.xxhash64(F.lit(seed), F.col("id"), F.lit(salt))
    return (F.pmod(h, F.lit(1 << 53)).cast("double")) / float(1 << 53)


def _key_id(spec: GenerateSpec, seed: int) -> Any:
    """Key popularity: uniform, or Zipf(s) through the continuous inverse CDF on [1, keys+1)."""
    from pyspark.sql import functions as F

    u = _uniform(seed, 1)
    if spec.key_distribution == "uniform":
        return F.floor(u * spec.keys).cast("long")
    one_minus_s = 1.0 - spec.zipf_s
    if abs(one_minus_s) < 1e-9:
        x = F.exp(u * F.log(F.lit(spec.keys + 1.0)))
    else:
        top = (spec.keys + 1.0) ** one_minus_s - 1.0
        x = F.pow(u * top + 1.0, 1.0 / one_minus_s)
    return F.least(F.floor(x).cast("long") - 1, F.lit(spec.keys - 1))


def _events_frame(spark: Any, spec: GenerateSpec, seed: int) -> Any:
    from pyspark.sql import functions as F

    span_ms = spec.span_s * 1000.0
    step = span_ms / spec.events
    return (
        spark.range(spec.events)
        .withColumn("key_id", _key_id(spec, seed))
        .withColumn("event_time_ms", (F.lit(EPOCH_START_MS) + F.floor((F.col("id") + _uniform(seed, 2)) * step))
                    .cast("long"))
        .withColumn("partition", F.pmod(F.col("key_id"), F.lit(spec.partitions)).cast("int"))
        .withColumn("key", F.concat(F.lit("user_"), F.col("key_id").cast("string")))
        .withColumnRenamed("id", "event_id")
    )


def _segment_rows(spark: Any, events: Any, spec: GenerateSpec) -> Any:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = Window.partitionBy("partition").orderBy("event_time_ms", "event_id")
    return (
        events.withColumn("sequence", ((F.row_number().over(order) - 1) / spec.segment_rows).cast("int"))
    )


def _segments_table(table: str, seq_rows: Any) -> pa.Table:
    from pyspark.sql import functions as F

    agg = (
        seq_rows.groupBy("partition", "sequence")
        .agg(F.min("event_time_ms").alias("start_time_ms"), F.max("event_time_ms").alias("end_time_ms"),
             F.count("*").alias("total_docs"))
        .orderBy("partition", "sequence")
        .collect()
    )
    last: dict[int, int] = {}
    for r in agg:
        last[r["partition"]] = max(last.get(r["partition"], -1), r["sequence"])
    rows = [
        {
            "segment_name": llc_segment_name(table, r["partition"], r["sequence"], r["start_time_ms"]),
            "partition": r["partition"],
            "sequence": r["sequence"],
            "start_time_ms": r["start_time_ms"],
            "end_time_ms": r["end_time_ms"],
            "total_docs": r["total_docs"],
            "status": "IN_PROGRESS" if r["sequence"] == last[r["partition"]] else "DONE",
        }
        for r in agg
    ]
    return pa.Table.from_pylist(rows)


def _tidy_spark_output(directory: Path) -> None:
    """Give Spark's part files stable names (no job UUID) and drop its marker and checksum files.

    Content is already deterministic; stable names make the manifest's checksums comparable across
    runs and masters.
    """
    for extra in [*directory.glob("_*"), *directory.glob(".*.crc")]:
        extra.unlink()
    for path in sorted(directory.glob("part-*.parquet")):
        index = path.name.split("-")[1]
        path.rename(directory / f"part-{index}.parquet")


def _checksums(root: Path) -> Iterator[tuple[str, str]]:
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))):
        yield str(path.relative_to(root)), hashlib.sha256(path.read_bytes()).hexdigest()


def generate_events(
    spark: Any, spec: GenerateSpec, out: Path, *, table: str = "events", seed: int = 0,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Generate events and segments with Spark into ``out``; return the manifest.

    The output appears at ``out`` only when complete (written to a temporary sibling, then renamed);
    an existing ``out`` is replaced only when ``overwrite`` is true.
    """
    seed = spec.seed if spec.seed is not None else seed
    started = time.time()
    with atomic_dir(out, overwrite=overwrite) as tmp:
        events = _segment_rows(spark, _events_frame(spark, spec, seed), spec)
        events.repartition(1).sortWithinPartitions("event_id").write.parquet(str(tmp / "events"))
        _tidy_spark_output(tmp / "events")
        segments = _segments_table(table, events)
        pq.write_table(segments, tmp / "segments.parquet")
        manifest = {
            "schema_version": SCHEMA_VERSION,
            "generator": "workbench.workload.generate",
            "table": table,
            "seed": seed,
            "parameters": asdict(spec),
            "row_counts": {"events": spec.events, "segments": segments.num_rows},
            "checksums": dict(_checksums(tmp)),
            "spark_master": spark.sparkContext.master,
            "elapsed_s": round(time.time() - started, 3),
        }
        write_json_atomic(tmp / "manifest.json", manifest)
    return manifest
