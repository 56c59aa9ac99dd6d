"""The streaming half of the session's one Helix cluster (issue #23, realtime and upsert): ``helix_run`` starts the
cluster with a Kafka broker in KRaft mode and two REALTIME tables beside its OFFLINE ``clicks`` (one start-up for
both, as the suite's time budget asks), and :func:`record_streams` queries them inside its ``with`` block.

- ``events``: 2,000 rows on a topic of two partitions, each CONSUMING segment completed at 300 rows, so each
  partition commits three segments and keeps consuming a fourth.
- ``profiles``: a full-upsert table keyed by ``memberId`` with ``metadataTTL`` of one hour on its time column (the
  comparison column). Its events, in order: keys 0-99 at ``T0`` (phase A); 1,200 new keys 1000-2199 from ``T0 + 2 h``,
  one a second (phase F); then updates of keys 0-49 (their first versions are out of TTL by then) and of keys
  2150-2199 (within TTL), one a second after F (phase C). With about 700 events per partition and segments of 300,
  each partition starts its second segment (offset 300) after some of phase F and before phase C; a segment starting
  takes the upsert snapshot and removes the primary keys below the TTL watermark (largest time seen minus one hour),
  which is every phase-A key and no phase-F key.

The tests assert on the record after every JVM is stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import tables

from workbench.groundtruth.helix_cluster import HelixCluster, StreamTable

__all__ = ["EVENTS_CONFIG", "EVENTS_ROWS", "HOUR", "SEGMENT_ROWS", "StreamRun", "profiles_events", "record_streams",
           "stream_tables"]

#: Rows after which each CONSUMING segment completes (``realtime.segment.flush.threshold.segment.rows``).
SEGMENT_ROWS = 300
EVENTS_ROWS = 2000
HOUR = 3_600_000
SECOND = 1000
PARTITIONS = 2
EVENTS_QUERIES = {
    "count": "SELECT COUNT(*), SUM(clicks) FROM events",
    "by_country": "SELECT country, SUM(clicks) FROM events GROUP BY country ORDER BY country",
    "by_segment": "SELECT $segmentName, COUNT(*) FROM events GROUP BY $segmentName ORDER BY $segmentName LIMIT 100",
}
PROFILES_QUERIES = {
    "count": "SELECT COUNT(*) FROM profiles",
    "all_docs": "SET skipUpsert = true; SELECT COUNT(*) FROM profiles",
    "out_of_ttl": "SELECT COUNT(*) FROM profiles WHERE memberId < 50",
    "not_updated": "SELECT COUNT(*) FROM profiles WHERE memberId >= 50 AND memberId < 100",
    "within_ttl": "SELECT memberId, clicks FROM profiles WHERE memberId >= 2150 ORDER BY memberId LIMIT 100",
}


def _stream_config(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"tableType": "REALTIME", "segmentsConfig": {"timeColumnName": "ts", "replication": "1"},
            "tenants": {}, "metadata": {}, "tableIndexConfig": {"loadMode": "MMAP"},
            "ingestionConfig": {"streamIngestionConfig": {"streamConfigMaps": [
                {"realtime.segment.flush.threshold.segment.rows": str(SEGMENT_ROWS)}]}}, **(extra or {})}


EVENTS_CONFIG = {"tableName": "events_REALTIME", **_stream_config()}
PROFILES_CONFIG = {"tableName": "profiles_REALTIME", **_stream_config({
    "routing": {"instanceSelectorType": "strictReplicaGroup"},
    "upsertConfig": {"mode": "FULL", "metadataTTL": HOUR, "snapshot": "ENABLE"}})}


def profiles_events() -> pd.DataFrame:
    """Phases A, F and C of the upsert table's stream, in order; ``clicks`` is the phase's number (A 1, F 2, C 3)."""
    t0 = tables.T0
    a = pd.DataFrame({"memberId": np.arange(100), "ts": t0 + np.arange(100), "clicks": 1})
    f = pd.DataFrame({"memberId": 1000 + np.arange(1200), "ts": t0 + 2 * HOUR + SECOND * np.arange(1200),
                      "clicks": 2})
    updated = np.concatenate([np.arange(50), 2150 + np.arange(50)])
    c = pd.DataFrame({"memberId": updated, "ts": t0 + 2 * HOUR + SECOND * (1200 + np.arange(100)), "clicks": 3})
    out = pd.concat([a, f, c], ignore_index=True)
    out["country"] = "us"
    return out.astype({"memberId": np.int32, "ts": np.int64, "clicks": np.int64})


@dataclass(frozen=True)
class StreamRun:
    """What the streaming tables were given and answered; ``pids`` and ``logs`` are the whole cluster's."""

    events: pd.DataFrame
    profiles: pd.DataFrame
    produced: dict[str, dict[int, int]]
    ideal_state: dict[str, dict[str, str]]
    external_view: dict[str, dict[str, str]]
    responses: dict[str, dict[str, Any]]
    profiles_responses: dict[str, dict[str, Any]]
    profiles_view: dict[str, dict[str, str]]
    pids: tuple[int, ...]
    logs: Path


def stream_tables() -> tuple[StreamTable, StreamTable]:
    """The two REALTIME tables, events keyed by ``memberId`` on two partitions each."""
    events = tables.rows(11, EVENTS_ROWS, "ts", day=False)
    events_schema = {**tables.schema("ts", day=False), "schemaName": "events"}
    profiles_schema = {**tables.schema("ts", day=False), "schemaName": "profiles", "primaryKeyColumns": ["memberId"]}
    return (StreamTable(EVENTS_CONFIG, events_schema, events, "memberId", PARTITIONS),
            StreamTable(PROFILES_CONFIG, profiles_schema, profiles_events(), "memberId", PARTITIONS))


def record_streams(cluster: HelixCluster, streams: tuple[StreamTable, StreamTable]) -> StreamRun:
    """Query both REALTIME tables of the running ``cluster``; the record."""
    events, profiles = streams
    responses = {name: cluster.query(sql) for name, sql in EVENTS_QUERIES.items()}
    profiles_responses = {name: cluster.query(sql) for name, sql in PROFILES_QUERIES.items()}
    return StreamRun(events.events, profiles.events, {k: dict(v) for k, v in cluster.produced.items()},
                     cluster.ideal_state("events", "REALTIME"), cluster.external_view("events", "REALTIME"),
                     responses, profiles_responses, cluster.external_view("profiles", "REALTIME"),
                     cluster.pids, cluster.logs)
