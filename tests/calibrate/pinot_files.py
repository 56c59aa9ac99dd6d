"""What a Pinot cluster writes of a query, shared by the test clusters (``synthetic_cluster.py``,
``replicated_cluster.py``): the broker's query-log line as Pinot 1.5, 1.3 or 0.x writes it, the
controller's segment metadata, the table config and schema, and the broker's millisecond clock.

Only the files' form lives here; each cluster has its own model of what a query costs.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HOUR_MS = 3_600_000
T0_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
SCHEMA = {"schemaName": "events",
          "dimensionFieldSpecs": [{"name": "category", "dataType": "STRING"}],
          "metricFieldSpecs": [{"name": "value", "dataType": "DOUBLE"}],
          "dateTimeFieldSpecs": [{"name": "ts", "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                                  "granularity": "1:MILLISECONDS"}]}


def table_config(replication: int) -> dict[str, object]:
    """An OFFLINE table ``events`` with time pruning on ``ts``."""
    return {"tableName": "events", "tableType": "OFFLINE",
            "segmentsConfig": {"replication": str(replication), "timeColumnName": "ts"},
            "routing": {"segmentPrunerTypes": ["time"]}}


def segment_name(i: int) -> str:
    """Hourly segment ``i`` from 2026-01-01, named as Pinot's SimpleSegmentNameGenerator names it."""
    start = T0_MS + i * HOUR_MS
    return f"events_OFFLINE_{start}_{start + HOUR_MS - 1}_{i}"


def segment_metadata(docs: Sequence[int]) -> dict[str, dict[str, object]]:
    """The controller's ``GET /segments/events/metadata`` answer for hourly segments of ``docs`` documents."""
    return {segment_name(i): {"segmentName": segment_name(i), "schemaName": "events", "crc": str(1000 + i),
                              "creationTimeMillis": T0_MS + (i + 1) * HOUR_MS, "startTimeMillis": T0_MS + i * HOUR_MS,
                              "endTimeMillis": T0_MS + (i + 1) * HOUR_MS - 1, "totalDocs": n, "columns": []}
            for i, n in enumerate(docs)}


def window_sql(kind: str, first: int, width: int) -> str:
    """A query of ``kind`` over hourly segments ``first .. first + width - 1`` (time-pruned to them)."""
    lo, hi = T0_MS + first * HOUR_MS, T0_MS + (first + width) * HOUR_MS
    where = f"WHERE ts >= {lo} AND ts < {hi}"
    return {"aggregation": f"SELECT COUNT(*), SUM(value) FROM events {where}",
            "group-by": f"SELECT category, COUNT(*) FROM events {where} GROUP BY category",
            "selection": f"SELECT * FROM events {where} LIMIT 50",
            "short": f"SELECT * FROM events {where} LIMIT 10"}[kind]


def clock(start_ms: float, duration_ms: float) -> int:
    """A duration as a difference of two millisecond clock readings."""
    return math.floor(start_ms + duration_ms) - math.floor(start_ms)


@dataclass(frozen=True)
class LoggedQuery:
    """What the broker logs of one query. ``hosts`` names the servers of ``response_ms`` (default
    ``pinot-server-0..``); ``cpu_ns`` is the servers' summed thread CPU time, 0 when not measured."""

    arrival_ms: float
    time_ms: int
    sql: str
    segments: int
    docs: int
    servers: int
    response_ms: tuple[int, ...]
    rows: int
    kind: str
    hosts: tuple[int, ...] = ()
    cpu_ns: int = 0

    @property
    def logged_ms(self) -> int:
        return math.floor(self.arrival_ms) + self.time_ms


def stamp(ms: int) -> str:
    return time.strftime("%Y/%m/%d %H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}"


def _stats(q: LoggedQuery, fields: int) -> str:
    head = "(Server=SubmitDelayMs,ResponseDelayMs,ResponseSize,DeserializationTimeMs" + (
        ",RequestSentDelayMs)" if fields == 5 else ")")
    tail = ",0" if fields == 5 else ""
    hosts = q.hosts or tuple(range(len(q.response_ms)))
    return head + "".join(f";pinot-server-{h}_O=0,{d},512,0{tail}" for h, d in zip(hosts, q.response_ms, strict=True))


def log_line(q: LoggedQuery, rid: int, version: str) -> str:
    """One query-log line as the broker of ``version`` (``1.5``, ``1.3`` or ``0.x``) writes it."""
    s = q.segments
    if version == "0.x":
        return (f"{stamp(q.logged_ms)} INFO [BaseBrokerRequestHandler] [pool-1-thread-4] RequestId:{rid}, "
                f"table:events_OFFLINE, timeMs:{q.time_ms}, docs:{q.docs}/{q.docs}, entries:0/{2 * q.docs}, "
                f"segments(queried/processed/matched/consuming):{s}/{s}/{s}/0, consumingFreshnessTimeMs:0, "
                f"servers:{q.servers}/{q.servers}, groupLimitReached:false, exceptions:0, "
                f"serverStats:{_stats(q, 4)}, query:{q.sql}")
    hashed = "queryHash=9f1c," if version == "1.5" else ""
    new = version == "1.5"
    cpu = q.cpu_ns
    return (f"{stamp(q.logged_ms)} INFO [QueryLogger] [jersey-server-managed-async-executor-1] requestId={rid},"
            f"table=events_OFFLINE,{hashed}timeMs={q.time_ms},docs={q.docs}/{q.docs},entries=0/{2 * q.docs},"
            f"segments(queried/processed/matched/consumingQueried/consumingProcessed/consumingMatched/unavailable):"
            f"{s}/{s}/{s}/0/0/0/0,consumingFreshnessTimeMs=0,servers={q.servers}/{q.servers},"
            + ("groupsTrimmed=false," if new else "") + "groupLimitReached=false,"
            + ("groupWarningLimitReached=false," if new else "") + "brokerReduceTimeMs=0,exceptions=0,"
            f"serverStats={_stats(q, 5)},offlineThreadCpuTimeNs(total/thread/sysActivity/resSer):{cpu}/{cpu}/0/0,"
            "realtimeThreadCpuTimeNs(total/thread/sysActivity/resSer):0/0/0/0,clientIp=unknown,"
            + ("queryEngine=singleStage,offlineMemAllocatedBytes(total/thread/resSer):0/0/0,"
               "realtimeMemAllocatedBytes(total/thread/resSer):0/0/0,pools=[],rlsFiltersApplied=false," if new else "")
            + f"query={q.sql}")


def write_cluster(directory: Path, logged: Sequence[LoggedQuery], docs: Sequence[int], replication: int,
                  version: str = "1.5") -> dict[str, Path]:
    """The four files of the cluster; the log's lines in completion order, as a broker writes them."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {"table_config": directory / "table_config.json", "schema": directory / "schema.json",
             "segments": directory / "segments.json", "query_log": directory / f"querylog-{version}.log"}
    paths["table_config"].write_text(json.dumps(table_config(replication)), encoding="utf-8")
    paths["schema"].write_text(json.dumps(SCHEMA), encoding="utf-8")
    paths["segments"].write_text(json.dumps(segment_metadata(docs)), encoding="utf-8")
    order = sorted(range(len(logged)), key=lambda i: (logged[i].logged_ms, i))
    lines = [log_line(logged[i], i, version) for i in order]
    paths["query_log"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths
