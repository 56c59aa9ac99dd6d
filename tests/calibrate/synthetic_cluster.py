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
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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
HOUR_MS = 3_600_000
T0_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
#: Documents per segment in each tier of consecutive hourly segments.
TIERS = (200_000, 500_000, 1_000_000, 2_000_000)
#: Segments per tier: a query's window stays inside one tier.
TIER_SEGMENTS = 24
SEGMENTS = TIER_SEGMENTS * len(TIERS)

TABLE_CONFIG = {"tableName": "events", "tableType": "OFFLINE",
                "segmentsConfig": {"replication": "1", "timeColumnName": "ts"},
                "routing": {"segmentPrunerTypes": ["time"]}}
SCHEMA = {"schemaName": "events",
          "dimensionFieldSpecs": [{"name": "category", "dataType": "STRING"}],
          "metricFieldSpecs": [{"name": "value", "dataType": "DOUBLE"}],
          "dateTimeFieldSpecs": [{"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                                  "granularity": "1:MILLISECONDS"}]}


def docs(segment: int) -> int:
    return TIERS[segment // TIER_SEGMENTS]


def segment_name(i: int) -> str:
    start = T0_MS + i * HOUR_MS
    return f"events_OFFLINE_{start}_{start + HOUR_MS - 1}_{i}"


def segment_metadata() -> dict[str, dict[str, object]]:
    """The controller's ``GET /segments/events/metadata`` answer."""
    return {segment_name(i): {"segmentName": segment_name(i), "schemaName": "events", "crc": str(1000 + i),
                              "creationTimeMillis": T0_MS + (i + 1) * HOUR_MS, "startTimeMillis": T0_MS + i * HOUR_MS,
                              "endTimeMillis": T0_MS + (i + 1) * HOUR_MS - 1, "totalDocs": docs(i), "columns": []}
            for i in range(SEGMENTS)}


@dataclass(frozen=True)
class LoggedQuery:
    """What the broker logs of one query."""

    arrival_ms: float
    time_ms: int
    sql: str
    segments: int
    docs: int
    servers: int
    response_ms: tuple[int, ...]
    rows: int
    kind: str

    @property
    def logged_ms(self) -> int:
        return math.floor(self.arrival_ms) + self.time_ms


def _makespan(times: list[float], tasks: int) -> float:
    """Tasks take the next segment, in order, as soon as they are free."""
    free = [0.0] * min(tasks, len(times))
    for t in times:
        i = free.index(min(free))
        free[i] += t
    return max(free)


def _clock(rng: np.random.Generator, start_ms: float, duration_ms: float) -> int:
    """A duration as a difference of two millisecond clock readings."""
    return math.floor(start_ms + duration_ms) - math.floor(start_ms)


def _query(rng: np.random.Generator, arrival_ms: float) -> LoggedQuery:
    p = TRUE
    kind = rng.choice(["aggregation", "group-by", "selection", "empty"], p=[0.5, 0.25, 0.2, 0.05])
    if kind == "empty":   # a window after the data: the broker prunes every segment, no server is asked
        start = T0_MS + 1000 * HOUR_MS
        sql = f"SELECT COUNT(*) FROM events WHERE ts >= {start} AND ts < {start + HOUR_MS}"
        return LoggedQuery(arrival_ms, _clock(rng, arrival_ms, p["cluster.broker.overhead_ms"]), sql, 0, 0, 0, (),
                           0, "aggregation")
    tier, width = int(rng.integers(len(TIERS))), int(rng.integers(1, TIER_SEGMENTS + 1))
    first = tier * TIER_SEGMENTS + int(rng.integers(0, TIER_SEGMENTS + 1 - width))
    window = range(first, first + width)
    lo, hi = T0_MS + first * HOUR_MS, T0_MS + (first + width) * HOUR_MS
    where = f"WHERE ts >= {lo} AND ts < {hi}"
    sql = {"aggregation": f"SELECT COUNT(*), SUM(value) FROM events {where}",
           "group-by": f"SELECT category, COUNT(*) FROM events {where} GROUP BY category",
           "selection": f"SELECT * FROM events {where} LIMIT 50"}[kind]
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
    response = tuple(_clock(rng, submit, s + 2 * NETWORK_MS) for s in server_ms)
    return LoggedQuery(arrival_ms, _clock(rng, arrival_ms, total), sql, width, sum(docs(i) for i in window), n,
                       response, rows, kind)


def queries(count: int, qps: float, seed: int) -> list[LoggedQuery]:
    """``count`` queries arriving as a Poisson stream of ``qps`` from 2026-01-02."""
    rng = np.random.default_rng(seed)
    start = T0_MS + 24 * HOUR_MS + 0.0
    arrivals = start + np.cumsum(rng.exponential(1000.0 / qps, count))
    return [_query(rng, float(a)) for a in arrivals]


def _stamp(ms: int) -> str:
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}"


def _stats(q: LoggedQuery, fields: int) -> str:
    head = "(Server=SubmitDelayMs,ResponseDelayMs,ResponseSize,DeserializationTimeMs" + (
        ",RequestSentDelayMs)" if fields == 5 else ")")
    tail = ",0" if fields == 5 else ""
    return head + "".join(f";pinot-server-{j}_O=0,{d},512,0{tail}" for j, d in enumerate(q.response_ms))


def log_line(q: LoggedQuery, rid: int, version: str) -> str:
    """One query-log line as the broker of ``version`` (``1.5``, ``1.3`` or ``0.x``) writes it."""
    s = q.segments
    if version == "0.x":
        return (f"{_stamp(q.logged_ms)} INFO [BaseBrokerRequestHandler] [pool-1-thread-4] RequestId:{rid}, "
                f"table:events_OFFLINE, timeMs:{q.time_ms}, docs:{q.docs}/{q.docs}, entries:0/{2 * q.docs}, "
                f"segments(queried/processed/matched/consuming):{s}/{s}/{s}/0, consumingFreshnessTimeMs:0, "
                f"servers:{q.servers}/{q.servers}, groupLimitReached:false, exceptions:0, "
                f"serverStats:{_stats(q, 4)}, query:{q.sql}")
    hashed = "queryHash=9f1c,"if version == "1.5" else ""
    new = version == "1.5"
    return (f"{_stamp(q.logged_ms)} INFO [QueryLogger] [jersey-server-managed-async-executor-1] requestId={rid},"
            f"table=events_OFFLINE,{hashed}timeMs={q.time_ms},docs={q.docs}/{q.docs},entries=0/{2 * q.docs},"
            f"segments(queried/processed/matched/consumingQueried/consumingProcessed/consumingMatched/unavailable):"
            f"{s}/{s}/{s}/0/0/0/0,consumingFreshnessTimeMs=0,servers={q.servers}/{q.servers},"
            + ("groupsTrimmed=false," if new else "") + "groupLimitReached=false,"
            + ("groupWarningLimitReached=false," if new else "") + "brokerReduceTimeMs=0,exceptions=0,"
            f"serverStats={_stats(q, 5)},offlineThreadCpuTimeNs(total/thread/sysActivity/resSer):0/0/0/0,"
            "realtimeThreadCpuTimeNs(total/thread/sysActivity/resSer):0/0/0/0,clientIp=unknown,"
            + ("queryEngine=singleStage,offlineMemAllocatedBytes(total/thread/resSer):0/0/0,"
               "realtimeMemAllocatedBytes(total/thread/resSer):0/0/0,pools=[],rlsFiltersApplied=false," if new else "")
            + f"query={q.sql}")


def write_cluster(directory: Path, logged: list[LoggedQuery], version: str = "1.5") -> dict[str, Path]:
    """The four files of the cluster; the log's lines in completion order, as a broker writes them."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {"table_config": directory / "table_config.json", "schema": directory / "schema.json",
             "segments": directory / "segments.json", "query_log": directory / f"querylog-{version}.log"}
    paths["table_config"].write_text(json.dumps(TABLE_CONFIG), encoding="utf-8")
    paths["schema"].write_text(json.dumps(SCHEMA), encoding="utf-8")
    paths["segments"].write_text(json.dumps(segment_metadata()), encoding="utf-8")
    order = sorted(range(len(logged)), key=lambda i: (logged[i].logged_ms, i))
    lines = [log_line(logged[i], i, version) for i in order]
    paths["query_log"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths
