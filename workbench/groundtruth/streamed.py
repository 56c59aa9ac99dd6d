"""A REALTIME scenario streamed for real: its events through Kafka into Pinot, and the model's view of what Pinot made.

``workbench measure`` on the Helix cluster gives Pinot the scenario's own REALTIME table config (only the stream's
connection keys rewritten, :data:`~workbench.groundtruth.helix_cluster.CONNECTION_KEYS`) and produces the workload's
events in arrival order (``event_id``), each to the stream partition the workload's generator gave it (``partition``:
the producer's partition function of the routing column), on a topic of as many partitions as the workload has. Pinot
then cuts its segments by the table's own flush thresholds, which need not be where the model's generator cut them
(``workload.generate.segment_rows`` may differ from the table's ``realtime.segment.flush.threshold.rows``, which Pinot
divides among the partitions a server consumes). So the model is compared against Pinot's segments, not its own: each
of Pinot's LLC segments (``table__partition__sequence__time``) holds the events of its partition from its ZK record's
``segment.realtime.startOffset`` to its ``endOffset`` (to the end of the partition while CONSUMING), and since the
events were produced in arrival order, a partition's Kafka offsets are the workload's ``offset`` column.

The model reads a completed segment's metadata from its rows, as for any sealed segment; a consuming one's as the
model's generator writes it (:func:`~workbench.workload.segments.consuming_partition_metadata`): no time range, and the
controller's stream partition for a table with one partition column.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.errors import InputError
from workbench.groundtruth.helix_cluster import CONNECTION_KEYS, StreamTable
from workbench.groundtruth.scenario import pinot_rows
from workbench.pinot.segment import SegmentMetadata
from workbench.pinot.table_config import TableConfig
from workbench.scenario import Scenario
from workbench.workload.directory import EVENTS_DIR, read_events, read_segments
from workbench.workload.segments import consuming_partition_metadata

__all__ = ["PARTITION_FIELD", "StreamedTable", "pinot_segments", "streamed_table"]

#: The events' field naming each event's Kafka partition (the producer's, not a message field).
PARTITION_FIELD = "$stream_partition"


@dataclass(frozen=True)
class StreamedTable:
    """What ``measure`` streams: the cluster's :class:`StreamTable`, the events with their stream ``partition`` and
    ``offset`` (for :func:`pinot_segments`), and the facts ``measure.json`` records (:meth:`to_json`)."""

    stream: StreamTable
    events: pd.DataFrame
    table: TableConfig

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.stream.raw, "partitions": self.stream.partitions, "key": self.stream.key,
                "events": len(self.events), "order": "arrival (event_id)",
                "partitioned_as": "each event to its workload partition (the generator's partition function of the "
                                  "routing column)",
                "connection_keys_rewritten": list(CONNECTION_KEYS)}


def _column(events: pd.DataFrame, name: str, data: Path) -> pd.Series:
    """A bookkeeping column under its plain name, or its ``$`` name when the rows are in the user's schema.

    Raises
    ------
    InputError
        Neither is there: the events do not say where they went in the stream.
    """
    for column in (name, f"${name}"):
        if column in events:
            return events[column]
    raise InputError(str(data / EVENTS_DIR), f"has no {name!r} column: streaming a REALTIME table needs each event's "
                                           "stream partition, offset and arrival order (event_id), as `workbench "
                                           "generate` writes them; generate the workload, or measure the table's "
                                           "OFFLINE twin with --cluster processes")


def _stream_key(table: TableConfig, schema: Mapping[str, Any], columns: pd.Index) -> str:
    """The Kafka message key: the schema's primary key (upsert needs each key's events in one partition), else the
    table's partition column, else the time column (the key does not place a message: its partition is given)."""
    candidates = [*(schema.get("primaryKeyColumns") or [])[:1], *table.column_partition_map,
                  table.time_column_name or ""]
    return next((c for c in candidates if c in columns), str(columns[0]))


def streamed_table(sc: Scenario, data: Path, schema: Mapping[str, Any]) -> StreamedTable:
    """The scenario's REALTIME table as the cluster streams it: the user's config unchanged, ``schema``, the workload's
    every event (completed and consuming segments alike) in arrival order with its partition."""
    config = sc.table.to_json()
    table = TableConfig.from_json(config)
    raw = read_events(data)
    events = raw.assign(__partition=_column(raw, "partition", data).astype(int),
                        __offset=_column(raw, "offset", data).astype(int),
                        __order=_column(raw, "event_id", data)).sort_values("__order", kind="stable").reset_index(
        drop=True)
    partitions = int(read_segments(data)["partition"].max()) + 1
    rows = pinot_rows(events.drop(columns=["__partition", "__offset", "__order"]))
    key = _stream_key(table, schema, rows.columns)
    stream = StreamTable(config, schema, rows.assign(**{PARTITION_FIELD: events["__partition"].to_numpy()}), key,
                         partitions, PARTITION_FIELD)
    return StreamedTable(stream, events, table)


def pinot_segments(st: StreamedTable, zk: Mapping[str, Mapping[str, str]]
                   ) -> tuple[dict[str, pd.DataFrame], dict[str, SegmentMetadata]]:
    """Pinot's segments of the streamed table with their rows (by partition and offset range, from each segment's ZK
    record), and the model's metadata of its CONSUMING ones (the completed ones' the model derives from rows)."""
    partitions = {p: f.sort_values("__offset") for p, f in st.events.groupby("__partition")}
    segments: dict[str, pd.DataFrame] = {}
    consuming: dict[str, SegmentMetadata] = {}
    columns = [(c, e.function_name, e.function_config) for c, e in st.table.column_partition_map.items()]
    for name, fields in sorted(zk.items()):
        partition = int(name.split("__")[1])
        events = partitions.get(partition, st.events.iloc[:0])
        start = int(fields["segment.realtime.startOffset"])
        rows = events[events["__offset"] >= start]
        if fields.get("segment.realtime.endOffset"):
            rows = rows[rows["__offset"] < int(fields["segment.realtime.endOffset"])]
        segments[name] = pinot_rows(rows.drop(columns=["__partition", "__offset", "__order"]))
        if fields.get("segment.realtime.status") == "IN_PROGRESS":
            consuming[name] = SegmentMetadata(name, None, None, total_docs=len(rows),
                                              partitions=consuming_partition_metadata(columns, st.stream.partitions,
                                                                                      partition))
    return segments, consuming
