"""Benchmark: events to segments with Spark, against writing the same rows with pyarrow alone.

For each size, in one process with a warm JVM: the wall time of ``generate_events`` (events drawn,
routed by the real Pinot partition functions, cut into segments, written; segment metadata;
queries; manifest) and the time pyarrow alone takes to write the resulting events table to one
Parquet file with default settings. The ratio of the two is the figure of merit (goal: at most 3x),
and the growth from the smallest to the largest size shows whether time is linear in events.

Run from the repository root::

    .venv/bin/python benchmarks/bench_generate.py                      # 2M and 10M events, local[2]
    .venv/bin/python benchmarks/bench_generate.py --events 2000000 --master local[2] --local

``--local`` also times the in-process engine (no Spark) on the same spec.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from workbench.pinot.table_config import load_table_config
from workbench.scenario.build import build_section
from workbench.workload.engine import run_generation
from workbench.workload.generate import SparkExecutor, generate_events
from workbench.workload.pure import generate_local
from workbench.workload.spark import get_spark
from workbench.workload.spec import GenerateSpec

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "scenarios" / "tables" / "events_REALTIME.json"


def _spec(events: int) -> GenerateSpec:
    """The default scenario's workload shape (Zipf keys, late events) at ``events`` events."""
    return build_section(GenerateSpec, {
        "events": events, "keys": 100_000, "key_distribution": "zipf", "zipf_s": 1.1, "partitions": 4,
        "span_s": "6h", "segment_rows": 100_000, "disorder": {"late_fraction": 0.05},
        "rate": {"profile": "diurnal"},
    }, "bench")


def _pyarrow_write(source: Path, scratch: Path) -> tuple[float, int]:
    table = pq.read_table(source / "events")
    start = time.perf_counter()
    pq.write_table(table, scratch / "baseline.parquet")
    return time.perf_counter() - start, table.num_rows


def _measure(spark: Any, events: int, scratch: Path, local: bool) -> dict[str, float]:
    out = scratch / f"gen-{events}"
    table_config = load_table_config(TABLE)
    start = time.perf_counter()
    manifest = generate_events(spark, _spec(events), out, table_config=table_config, seed=1, progress=False)
    spark_s = time.perf_counter() - start
    baseline_s, rows = _pyarrow_write(out, scratch)
    assert rows == manifest["row_counts"]["events"] == events
    row = {"events": events, "spark_s": spark_s, "pyarrow_s": baseline_s, "ratio": spark_s / baseline_s,
           "segments": manifest["row_counts"]["segments"]}
    if local:
        start = time.perf_counter()
        generate_local(_spec(events), scratch / f"local-{events}", table_config=table_config, seed=1, progress=False)
        row["local_s"] = time.perf_counter() - start
    shutil.rmtree(out)
    shutil.rmtree(scratch / f"local-{events}", ignore_errors=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, nargs="+", default=[2_000_000, 10_000_000])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--local", action="store_true", help="also time the in-process engine")
    args = parser.parse_args()
    spark = get_spark(args.master, app_name="bench-generate")
    with tempfile.TemporaryDirectory(prefix="bench-generate-", dir=ROOT / "data") as tmp:
        scratch = Path(tmp)
        # warm the JVM and every Python worker (small blocks: one task per core at least)
        run_generation(SparkExecutor(spark), _spec(200_000), scratch / "warm", table="events",
                       table_config=load_table_config(TABLE), seed=1, overwrite=False, blocks=(25_000, 5_000))
        rows = [_measure(spark, n, scratch, args.local) for n in args.events]
    print(f"master {args.master}; spec: Zipf keys, diurnal rate, 5% late events; realtime table, Modulo(key_id, 4)")
    header = f"{'events':>12} {'spark s':>9} {'pyarrow s':>10} {'ratio':>6} {'Mev/s':>6} {'segments':>9}"
    print(header + (f" {'local s':>8}" if args.local else ""))
    for r in rows:
        line = (f"{int(r['events']):>12,} {r['spark_s']:>9.2f} {r['pyarrow_s']:>10.2f} {r['ratio']:>5.2f}x "
                f"{r['events'] / r['spark_s'] / 1e6:>6.2f} {int(r['segments']):>9}")
        print(line + (f" {r['local_s']:>8.2f}" if args.local else ""))
    if len(rows) > 1:
        growth = rows[-1]["spark_s"] / rows[0]["spark_s"]
        size = rows[-1]["events"] / rows[0]["events"]
        print(f"growth {rows[0]['events']:,} -> {rows[-1]['events']:,}: time x{growth:.2f} for events x{size:.0f} "
              f"(linear would be x{size:.0f})")
    spark.stop()


if __name__ == "__main__":
    main()
