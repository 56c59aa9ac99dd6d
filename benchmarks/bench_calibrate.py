"""Benchmark: ``workbench calibrate`` on a one-million-line broker query log.

Writes a table config, schema, the controller's segment metadata (480 hourly segments on 12 servers) and a
1.5-format ``querylog.log`` of N queries (aggregations, group-bys and selections over 1-24 hour windows at
~300 queries/s, each line with its ``serverStats``), then runs the whole calibration in a fresh process
(import, fit with a 500-resample block bootstrap, the scenario, and the default back-test of the first
20,000 queries with 3 replications) and prints its wall time and peak memory (the child's max RSS). A
second run without the back-test separates the import and fit from the replay.
Run: ``python benchmarks/bench_calibrate.py [LINES]`` (default 1,000,000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HOUR_MS = 3_600_000
T0_MS = 1_767_225_600_000
SEGMENTS = 480
SERVERS = 12
QPS = 300.0


def _stamp(ms: int) -> str:
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}"


def write_inputs(directory: Path, lines: int, seed: int = 1) -> dict[str, Path]:
    """The four files, with ``lines`` query-log lines; times follow a simple version of the cost model
    (the busiest server's rounds of segments, a lognormal spread, a broker share)."""
    rng = np.random.default_rng(seed)
    docs = rng.integers(200_000, 2_000_000, SEGMENTS)
    table = {"tableName": "events", "tableType": "OFFLINE",
             "segmentsConfig": {"replication": "2", "timeColumnName": "ts"},
             "routing": {"segmentPrunerTypes": ["time"]}}
    schema = {"schemaName": "events", "dimensionFieldSpecs": [{"name": "category", "dataType": "STRING"}],
              "dateTimeFieldSpecs": [{"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                                      "granularity": "1:MILLISECONDS"}]}
    segments = {}
    for i in range(SEGMENTS):
        name = f"events_OFFLINE_{T0_MS + i * HOUR_MS}_{T0_MS + (i + 1) * HOUR_MS - 1}_{i}"
        segments[name] = {"segmentName": name, "crc": str(i), "creationTimeMillis": T0_MS + (i + 1) * HOUR_MS,
                          "startTimeMillis": T0_MS + i * HOUR_MS, "endTimeMillis": T0_MS + (i + 1) * HOUR_MS - 1,
                          "totalDocs": int(docs[i]), "columns": []}
    paths = {"table_config": directory / "table.json", "schema": directory / "schema.json",
             "segments": directory / "segments.json", "query_log": directory / "querylog.log"}
    paths["table_config"].write_text(json.dumps(table))
    paths["schema"].write_text(json.dumps(schema))
    paths["segments"].write_text(json.dumps(segments))
    arrival = T0_MS + 500 * HOUR_MS + np.cumsum(rng.exponential(1000.0 / QPS, lines))
    width = rng.integers(1, 25, lines)
    first = rng.integers(0, SEGMENTS - 24, lines)
    kind = rng.choice(3, lines, p=[0.5, 0.3, 0.2])
    heads = ("SELECT COUNT(*), SUM(value) FROM events", "SELECT category, COUNT(*) FROM events",
             "SELECT * FROM events")
    tails = ("", " GROUP BY category", " LIMIT 50")
    with paths["query_log"].open("w", encoding="utf-8") as out:
        for i in range(lines):
            w, f, k = int(width[i]), int(first[i]), int(kind[i])
            scanned = int(docs[f:f + w].sum())
            servers = min(w, SERVERS)
            busiest = -(-w // servers)
            rounds = -(-busiest // 4)   # the busiest server's segments over 4 tasks (8 cores)
            server_ms = 0.6 + 0.5 + rounds * (0.3 + 8e-6 * scanned / w) * rng.lognormal(0.1, 0.3)
            time_ms = int(server_ms + 0.8 + 0.1 * servers + rng.random())
            stats = "".join(f";pinot-server-{(f + j) % SERVERS}_O=0,{int(server_ms)},512,0,0"
                            for j in range(servers))
            lo, hi = T0_MS + f * HOUR_MS, T0_MS + (f + w) * HOUR_MS
            out.write(f"{_stamp(int(arrival[i]) + time_ms)} INFO [QueryLogger] [jersey-1] requestId={i},"
                      f"table=events_OFFLINE,queryHash=,timeMs={time_ms},docs={scanned}/{scanned},entries=0/{scanned},"
                      "segments(queried/processed/matched/consumingQueried/consumingProcessed/consumingMatched/"
                      f"unavailable):{w}/{w}/{w}/0/0/0/0,consumingFreshnessTimeMs=0,servers={servers}/{servers},"
                      "groupsTrimmed=false,groupLimitReached=false,groupWarningLimitReached=false,brokerReduceTimeMs=0,"
                      "exceptions=0,serverStats=(Server=SubmitDelayMs,ResponseDelayMs,ResponseSize,"
                      f"DeserializationTimeMs,RequestSentDelayMs){stats},offlineThreadCpuTimeNs(total/thread/"
                      "sysActivity/resSer):0/0/0/0,realtimeThreadCpuTimeNs(total/thread/sysActivity/resSer):0/0/0/0,"
                      "clientIp=unknown,queryEngine=singleStage,offlineMemAllocatedBytes(total/thread/resSer):0/0/0,"
                      "realtimeMemAllocatedBytes(total/thread/resSer):0/0/0,pools=[],rlsFiltersApplied=false,"
                      f"query={heads[k]} WHERE ts >= {lo} AND ts < {hi}{tails[k]}\n")
    return paths


_CHILD = """
import sys, time
from workbench.api import calibrate
start = time.perf_counter()
result = calibrate(*sys.argv[1:5], sys.argv[5], backtest_queries=int(sys.argv[6]), overwrite=True)
print(f"{time.perf_counter() - start:.1f} {result.queries} {result.fit.queries}")
"""


def run(paths: dict[str, Path], out: Path, backtest: int) -> tuple[float, int, float]:
    """Seconds, queries and peak RSS (MB) of one calibration in a fresh process (its own rusage)."""
    args = [sys.executable, "-c", _CHILD, *(str(paths[k]) for k in ("table_config", "schema", "segments",
                                                                      "query_log")), str(out), str(backtest)]
    with tempfile.TemporaryFile("w+") as stdout:
        child = subprocess.Popen(args, stdout=stdout)
        _, status, usage = os.wait4(child.pid, 0)
        if status != 0:
            raise SystemExit(f"calibrate failed with status {status}")
        stdout.seek(0)
        seconds, queries, _ = stdout.read().split()
    return float(seconds), int(queries), usage.ru_maxrss / 1024.0


def main() -> None:
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        paths = write_inputs(root, lines)
        size = paths["query_log"].stat().st_size / 1024**2
        print(f"wrote a {lines:,}-line query log ({size:.0f} MB) in {time.perf_counter() - start:.0f} s")
        seconds, queries, peak = run(paths, root / "fit-only", 0)
        print(f"import + fit + scenario (no back-test): {seconds:7.1f} s  peak RSS {peak:7.0f} MB  "
              f"({queries / seconds:,.0f} log lines/s)")
        seconds, queries, peak = run(paths, root / "full", 20_000)
        print(f"calibrate (back-test: 20,000 queries x 3 replications): {seconds:7.1f} s  peak RSS {peak:7.0f} MB")


if __name__ == "__main__":
    main()
