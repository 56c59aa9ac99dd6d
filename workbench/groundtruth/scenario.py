"""A scenario's own table and workload checked against Pinot: ``workbench agree``.

The scenario's table config (the user's JSON), its schema (or one derived from the workload's columns),
its generated or imported segments with their rows, and the first queries of its workload go through
Pinot's own code and through the model (:func:`workbench.groundtruth.agreement`). A REALTIME table is
checked as its OFFLINE twin (the same rows in the same completed segments, the stream and its consuming
segment left out, the COMPLETED instance assignment as the OFFLINE one): Pinot's consuming segments need
a stream, and this driver has none. The output directory says so (``agreement.json``: ``checked_as``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.groundtruth.agreement import Agreement, agreement
from workbench.io import atomic_dir, check_output, write_json_atomic
from workbench.pinot.segment import SegmentMetadata
from workbench.pinot.table_config import TableConfig
from workbench.scenario import Scenario
from workbench.sim.layout import assign_layout
from workbench.sim.planner import segment_metadata
from workbench.workload.directory import read_events, read_replay_queries, read_segments

__all__ = ["DEFAULT_QUERIES", "ScenarioTable", "agree", "derived_schema", "offline_twin", "pinot_rows",
           "scenario_table", "server_names"]

#: How many of the workload's queries ``workbench agree`` checks by default (in arrival order).
DEFAULT_QUERIES = 300
_PINOT_TYPES = {"int64": "LONG", "int32": "INT", "float64": "DOUBLE", "float32": "FLOAT", "bool": "BOOLEAN"}
#: Where a row went, not a column of the table; rows generated from the user's schema also carry the
#: generator's bookkeeping under ``$`` names (``docs/data.md``), which Pinot does not get either.
_WORKLOAD_ONLY = ("segment_name", "doc_id")


def pinot_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """A segment's rows as Pinot reads them: the table's columns only, TIMESTAMP values as epoch millis
    (pandas writes ``datetime64[ms]`` to JSON in the wrong unit, and Pinot reads a TIMESTAMP from a long)."""
    out = rows.drop(columns=[c for c in rows if c in _WORKLOAD_ONLY or str(c).startswith("$")])
    for column in out.columns[[pd.api.types.is_datetime64_any_dtype(t) for t in out.dtypes]]:
        out[column] = out[column].astype("datetime64[ms]").astype("int64")
    return out.reset_index(drop=True)


def server_names(count: int) -> tuple[str, ...]:
    """Instance names as Pinot gives servers on their own loopback addresses (``Server_127.0.0.2_8098``...)."""
    if count > 253:
        raise ValueError(f"at most 253 servers fit the loopback addresses 127.0.0.2-254, got {count}")
    return tuple(f"Server_127.0.0.{i + 2}_8098" for i in range(count))


def derived_schema(table: TableConfig, rows: pd.DataFrame) -> dict[str, Any]:
    """A Pinot schema for the workload's columns: the time column as epoch milliseconds, the rest as
    dimensions of their Pinot types (a scenario without ``schema:`` gets this one, written to the output)."""
    time_column = table.time_column_name
    dimensions = [{"name": c, "dataType": _PINOT_TYPES.get(str(rows[c].dtype), "STRING")}
                  for c in rows.columns if c != time_column and c not in _WORKLOAD_ONLY]
    schema: dict[str, Any] = {"schemaName": table.table_name, "dimensionFieldSpecs": dimensions}
    if time_column is not None:
        schema["dateTimeFieldSpecs"] = [{"name": time_column, "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH",
                                         "granularity": "1:MILLISECONDS"}]
    return schema


def offline_twin(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The OFFLINE table a REALTIME table's completed segments would make: same name, pruning, routing and
    partitioning, no stream; its COMPLETED instance assignment (else CONSUMING) becomes the OFFLINE one."""
    twin = copy.deepcopy(dict(raw))
    name = str(twin["tableName"])
    raw_name = name.removesuffix("_REALTIME").removesuffix("_OFFLINE")
    twin["tableName"] = f"{raw_name}_OFFLINE"
    twin["tableType"] = "OFFLINE"
    segments = twin.setdefault("segmentsConfig", {})
    if "replication" not in segments and "replicasPerPartition" in segments:
        segments["replication"] = segments["replicasPerPartition"]
    segments.pop("replicasPerPartition", None)
    twin.setdefault("tableIndexConfig", {}).pop("streamConfigs", None)
    twin.get("ingestionConfig", {}).pop("streamIngestionConfig", None)
    twin.get("tenants", {}).pop("tagOverrideConfig", None)
    for key in ("upsertConfig", "dedupConfig"):
        twin.pop(key, None)
    assignment = twin.get("instanceAssignmentConfigMap")
    if assignment:
        chosen = assignment.get("COMPLETED") or assignment.get("CONSUMING") or assignment.get("OFFLINE")
        if chosen is not None:  # a part of the twin's own deep copy: free to change
            tenant = twin.get("tenants", {}).get("server", "DefaultTenant")
            chosen.setdefault("tagPoolConfig", {})["tag"] = f"{tenant}_OFFLINE"
            twin["instanceAssignmentConfigMap"] = {"OFFLINE": chosen}
    return twin


@dataclass(frozen=True)
class ScenarioTable:
    """A scenario's table as Pinot gets it: the OFFLINE config (the table's, or its twin), how it was checked
    (``OFFLINE`` or the twin's sentence), the schema, the completed segments' rows and the first queries' SQL,
    and their metadata (the controller's replica-group assignment reads a segment's partition from it)."""

    config: dict[str, Any]
    checked_as: str
    table: TableConfig
    schema: dict[str, Any]
    segments: dict[str, pd.DataFrame]
    sql: list[str]
    metadata: Mapping[str, SegmentMetadata] | None = None
    #: Each query's arrival in the workload, s after the first's (for a replay at the workload's own times).
    arrival_s: tuple[float, ...] = ()

    def ideal_state(self, servers: tuple[str, ...]) -> dict[str, dict[str, str]]:
        """The ideal state Pinot's controller builds for the segments on ``servers`` (uploaded in order, each
        segment's partition from its name or its ZK record, as ``SegmentUtils`` reads it)."""
        names = tuple(self.segments)
        return assign_layout(self.table, servers, names, np.zeros(len(names), bool), np.zeros(len(names), int),
                             metadata=self.metadata)


def scenario_table(sc: Scenario, data: Path, queries: int) -> ScenarioTable:
    """The scenario's table, schema, completed segments with their rows, and first ``queries`` queries' SQL."""
    raw = sc.table.to_json()
    config = raw if sc.table.table_type == "OFFLINE" else offline_twin(raw)
    table = TableConfig.from_json(config)
    segments_table = read_segments(data)
    consuming = segments_table.get("status", pd.Series(dtype=str)).eq("IN_PROGRESS")
    completed = list(segments_table.loc[~consuming, "segment_name"])
    events = read_events(data)
    by_segment = {name: pinot_rows(rows) for name, rows in events.groupby("segment_name", sort=False)}
    segments = {name: by_segment[name] for name in completed if name in by_segment}
    schema = sc.schema.to_json() if sc.schema else derived_schema(table, events)
    replay = read_replay_queries(data).head(queries)
    sql = list(replay["sql"])
    arrival = replay["arrival_s"].to_numpy(dtype=float)
    arrival_s = tuple(float(a) for a in arrival - arrival.min()) if len(arrival) else ()
    checked_as = ("OFFLINE" if sc.table.table_type == "OFFLINE"
                  else f"OFFLINE twin of the {sc.table.table_type} table (completed segments; no stream here)")
    metadata = segment_metadata(segments_table[segments_table["segment_name"].isin(list(segments))])
    return ScenarioTable(config, checked_as, table, schema, segments, sql, metadata, arrival_s)


def agree(sc: Scenario, out: str | Path, *, data: Path, queries: int = DEFAULT_QUERIES,
          overwrite: bool = False) -> Agreement:
    """Check the scenario's table, rows and first ``queries`` queries against Pinot; write ``out``.

    ``out`` gets ``agreement.json``, and what Pinot was given and wrote: ``table_config.json``,
    ``schema.json``, ``ideal_state.json``, ``zk_metadata.json`` (each segment's, as the controller's code
    wrote it) and ``querylog.log`` (the broker's). It is written whole or not at all.
    """
    if queries < 1:
        raise ValueError(f"queries must be at least 1, got {queries}")
    check_output(out, overwrite=overwrite)
    st = scenario_table(sc, data, queries)
    config, schema, segments, sql = st.config, st.schema, st.segments, st.sql
    servers = server_names(sc.cluster.servers)
    ideal = st.ideal_state(servers)
    result, pinot = agreement(config, schema, segments, sql, servers=servers, ideal_state=ideal)
    with atomic_dir(Path(out), overwrite=overwrite) as tmp:
        document = {**result.to_json(), "checked_as": st.checked_as,
                    "segments": len(segments), "servers": list(servers)}
        write_json_atomic(tmp / "agreement.json", document)
        write_json_atomic(tmp / "table_config.json", config)
        write_json_atomic(tmp / "schema.json", schema)
        write_json_atomic(tmp / "ideal_state.json", {k: dict(v) for k, v in ideal.items()})
        write_json_atomic(tmp / "zk_metadata.json", {k: dict(v) for k, v in pinot.zk_metadata.items()})
        (tmp / "querylog.log").write_text(pinot.query_log, encoding="utf-8")
    return result


