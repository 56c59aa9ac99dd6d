"""A cluster with a known cost model, written out as the files a user would export from Pinot.

The test's own model of a query, independent of the workbench's code: the broker sends one request per
server holding segments of the query's time window (segment ``i`` lives on server ``i mod SERVERS``, as
Pinot's balanced assignment places segments added in order). Each server's runner does
``per_request_ms``; then ``min(segments, 4)`` tasks (8 cores: min(10, 8/2); a group-by uses one task per
segment, as it has at most 8 per server: min(segments, 2 x 8) tasks on 8 cores) take segments in order
whenever they free up, each segment costing ``per_segment_ms + ns_per_doc x docs`` times a mean-1
lognormal factor of log-sigma ``SIGMA``; the runner then merges (``merge_ms_per_segment`` each; a
group-by's workers add it to each segment instead). The broker waits for the slowest server, one
network delay each way, then spends ``overhead_ms + reduce_ms_per_server x servers +
reduce_ms_per_row x rows``. At 4 queries a second the servers are almost idle, so nothing queues.

Times are logged as Pinot's broker logs them: ``timeMs`` is the difference of two millisecond clock
readings, the line is stamped at completion, and ``serverStats`` gives each server's round trip.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pinot_files as pinot
from pinot_files import HOUR_MS, SCHEMA, T0_MS, LoggedQuery, clock

__all__ = ["HOUR_MS", "SCHEMA", "SEGMENTS", "SERVERS", "SIGMA", "T0_MS", "TABLE_CONFIG", "TRUE", "LoggedQuery",
           "queries", "segment_metadata", "write_cluster", "write_inputs"]

TRUE = {
    "cluster.broker.overhead_ms": 0.8,
    "service.per_request_ms": 0.6,
    "service.per_segment_ms": 0.3,
    "service.ns_per_doc": 8.0,
    "service.merge_ms_per_segment": 0.02,
    "cluster.broker.reduce_ms_per_server": 0.1,
    "cluster.broker.reduce_ms_per_row": 0.0002,
}
SIGMA = 0.3
NETWORK_MS = 0.25
SERVERS = 3
TASKS = 4
#: Documents per segment in each tier of consecutive hourly segments.
TIERS = (200_000, 500_000, 1_000_000, 2_000_000)
#: Segments per tier: a query's window stays inside one tier.
TIER_SEGMENTS = 24
SEGMENTS = TIER_SEGMENTS * len(TIERS)
TABLE_CONFIG = pinot.table_config(1)


def docs(segment: int) -> int:
    return TIERS[segment // TIER_SEGMENTS]


def segment_metadata() -> dict[str, dict[str, object]]:
    """The controller's ``GET /segments/events/metadata`` answer."""
    return pinot.segment_metadata([docs(i) for i in range(SEGMENTS)])


def _makespan(times: list[float], tasks: int) -> float:
    """Tasks take the next segment, in order, as soon as they are free."""
    free = [0.0] * min(tasks, len(times))
    for t in times:
        i = free.index(min(free))
        free[i] += t
    return max(free)


def _query(rng: np.random.Generator, arrival_ms: float) -> LoggedQuery:
    p = TRUE
    kind = rng.choice(["aggregation", "group-by", "selection", "empty"], p=[0.5, 0.25, 0.2, 0.05])
    if kind == "empty":   # a window after the data: the broker prunes every segment, no server is asked
        start = T0_MS + 1000 * HOUR_MS
        sql = f"SELECT COUNT(*) FROM events WHERE ts >= {start} AND ts < {start + HOUR_MS}"
        return LoggedQuery(arrival_ms, clock(arrival_ms, p["cluster.broker.overhead_ms"]), sql, 0, 0, 0, (),
                           0, "aggregation")
    tier, width = int(rng.integers(len(TIERS))), int(rng.integers(1, TIER_SEGMENTS + 1))
    first = tier * TIER_SEGMENTS + int(rng.integers(0, TIER_SEGMENTS + 1 - width))
    window = range(first, first + width)
    sql = pinot.window_sql(str(kind), first, width)
    group_by = kind == "group-by"
    merge = p["service.merge_ms_per_segment"]
    per_server: dict[int, list[int]] = {}
    for i in window:
        per_server.setdefault(i % SERVERS, []).append(i)
    server_ms, rows = [], 0
    for segs in per_server.values():
        mean = [p["service.per_segment_ms"] + p["service.ns_per_doc"] * 1e-6 * docs(i) + (merge if group_by else 0.0)
                for i in segs]
        run = [m * float(rng.lognormal(-SIGMA**2 / 2, SIGMA)) for m in mean]
        tasks = len(segs) if group_by else TASKS
        server_ms.append(p["service.per_request_ms"] + _makespan(run, tasks) + (0.0 if group_by else merge * len(segs)))
        scanned = sum(docs(i) for i in segs)
        rows += {"aggregation": 1, "group-by": min(scanned, 5000), "selection": min(scanned, 50)}[kind]
    n = len(per_server)
    total = (max(server_ms) + 2 * NETWORK_MS + p["cluster.broker.overhead_ms"]
             + p["cluster.broker.reduce_ms_per_server"] * n + p["cluster.broker.reduce_ms_per_row"] * rows)
    submit = arrival_ms + p["cluster.broker.overhead_ms"] / 2
    response = tuple(clock(submit, s + 2 * NETWORK_MS) for s in server_ms)
    return LoggedQuery(arrival_ms, clock(arrival_ms, total), sql, width, sum(docs(i) for i in window), n,
                       response, rows, kind)


def queries(count: int, qps: float, seed: int) -> list[LoggedQuery]:
    """``count`` queries arriving as a Poisson stream of ``qps`` from 2026-01-02."""
    rng = np.random.default_rng(seed)
    start = T0_MS + 24 * HOUR_MS + 0.0
    arrivals = start + np.cumsum(rng.exponential(1000.0 / qps, count))
    return [_query(rng, float(a)) for a in arrivals]


def write_cluster(directory: Path, logged: list[LoggedQuery], version: str = "1.5") -> dict[str, Path]:
    """The four files of the cluster; the log's lines in completion order, as a broker writes them."""
    return pinot.write_cluster(directory, logged, [docs(i) for i in range(SEGMENTS)], 1, version)


def write_inputs(root: Path, lines: list[str]) -> dict[str, Path]:
    """This cluster's table config, schema and segment metadata, and ``lines`` (written by hand) as its broker log:
    the four files calibrate reads, by role."""
    root.mkdir(parents=True, exist_ok=True)
    paths = {"table_config": root / "table_config.json", "schema": root / "schema.json",
             "segments": root / "segments.json", "query_log": root / "querylog.log"}
    paths["table_config"].write_text(json.dumps(TABLE_CONFIG))
    paths["schema"].write_text(json.dumps(SCHEMA))
    paths["segments"].write_text(json.dumps(segment_metadata()))
    paths["query_log"].write_text("".join(line + "\n" for line in lines))
    return paths
