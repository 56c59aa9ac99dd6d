"""Each server's long-lived heap: a static part plus the upsert metadata of the partitions it serves.

For an upsert table whose data is known (a workload directory), the key count is not typed in. Every
stream partition's events are replayed through Pinot's upsert metadata manager
(:func:`~workbench.pinot.upsert.replay.replay_partition`) under the table's ``upsertConfig``
(``metadataTTL``, ``deletedKeysTTL``, deletes, out-of-order records) and its retention, and sampled at
every commit and commit-time TTL sweep. Every segment of an upsert partition lives on the servers that
consume it (``StrictRealtimeSegmentAssignment``; :func:`~workbench.sim.layout.assign_layout`), so a
server's heap over the data's span is the sum of its partitions' maps and validDocIds bitmaps. The data
is fixed, whatever the cluster: a sweep over server count only moves partitions between servers.

A run simulates one moment of that span, ``cluster.gc.heap_at``: ``peak`` (the sample where the
largest server heap peaks) or a time since the data starts. Each server then holds that moment's keys,
map bytes and bitmap bytes, and its update rate: the records of the segment committed at (or next
after) that moment that replaced an existing key's location, per second of that segment's life.

Replay runs on ``key_id`` with ``hashFunction`` NONE: hashing does not change which records win, only
what a key costs on the heap, and that cost comes from the JVM object-layout model for the schema's
primary-key types and the table's real hash function. A variable-width key column (STRING, BYTES, JSON)
kept unhashed is as long as the data's ``key`` column on average (the generator's only key); without
data, the schema's ``maxLength`` for that column bounds it.
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from workbench.errors import InputError, ScenarioError
from workbench.jvm import LiveHeap
from workbench.pinot.heap import UpsertHeapModel, entry_layout, upsert_bytes_per_key
from workbench.pinot.table_config import TableConfig
from workbench.pinot.upsert import (
    HashFunction,
    PartitionUpsertMetadataManager,
    StreamSegment,
    UpsertConfig,
    UpsertSettings,
    replay_partition,
)
from workbench.scenario import Scenario
from workbench.sim.layout import Layout
from workbench.sim.records import HEAP_COLUMNS
from workbench.workload.directory import WorkloadDir

__all__ = ["Memory", "ServerMemory", "server_memory"]
_VARIABLE = ("STRING", "BYTES", "JSON")
_TIME_UNITS_S = {"MILLISECONDS": 1e-3, "SECONDS": 1.0, "MINUTES": 60.0, "HOURS": 3600.0, "DAYS": 86_400.0}


@dataclass(frozen=True)
class ServerMemory:
    """What one server's JVM holds long-term during the run, and how fast its upsert entries change."""

    live: LiveHeap
    update_rate: float = 0.0


@dataclass(frozen=True)
class Memory:
    """Every server's memory for the run, and (for a replayed upsert table) its heap over the data's span."""

    servers: tuple[ServerMemory, ...]
    #: One row per server and sample (:data:`HEAP_COLUMNS`); empty unless keys came from a replay.
    timeline: pd.DataFrame
    #: The moment of the span the run uses (s since the data starts), or None without a replay.
    at_s: float | None = None
    #: How the key count was found, for the summary: ``replay``, ``upsert_keys`` or ``none``.
    source: str = "none"


@dataclass(frozen=True)
class _Partition:
    """One stream partition's upsert metadata at each sample (s since the data starts)."""

    times_s: np.ndarray
    keys: np.ndarray
    map_bytes: np.ndarray
    bitmap_bytes: np.ndarray
    #: Per commit sample, updates per second of the segment just committed (NaN at sweep samples).
    update_rate: np.ndarray


def _key_columns(sc: Scenario, from_data: bool) -> tuple[list[str], dict[str, str], dict[str, int | None]]:
    """Primary-key columns, their types and stated ``maxLength`` (``None`` when the schema states none).
    Without a schema: the generator's ``key`` (a STRING) for keys replayed from data, one LONG column for a
    key count given by hand."""
    types = sc.schema.data_types if sc.schema is not None else {}
    columns = list(sc.schema.primary_key_columns) if sc.schema is not None else []
    bounds = {f.name: f.max_length for f in sc.schema.fields
              if f.field_type in ("DIMENSION", "METRIC", "DATE_TIME")} if sc.schema is not None else {}
    if not columns:
        return (["key"], {"key": "STRING"}, {}) if from_data else (["key"], {"key": "LONG"}, {})
    return columns, {c: types.get(c, "STRING") for c in columns}, bounds


def _comparison_type(sc: Scenario) -> str | list[str]:
    upsert = sc.table.upsert or UpsertConfig()
    names = upsert.comparison_columns or (sc.table.time_column_name or "",)
    types = sc.schema.data_types if sc.schema is not None else {}
    found = [types.get(str(c), "LONG") for c in names]
    return found[0] if len(found) == 1 else found


def _hash_function(table: TableConfig) -> str:
    return (table.upsert or UpsertConfig()).hash_function.value


def _retention_s(table: TableConfig) -> float | None:
    seg = table.section("segmentsConfig")
    unit, value = seg.get("retentionTimeUnit"), seg.get("retentionTimeValue")
    if unit is None or value is None or str(unit).upper() not in _TIME_UNITS_S:
        return None
    return float(value) * _TIME_UNITS_S[str(unit).upper()]


# -- the replay ------------------------------------------------------------------------------------------
def _streams(data: WorkloadDir, comparison: str,
             deletes: bool) -> tuple[dict[int, list[StreamSegment]], dict[str, float], int, float]:
    """Per partition, its segments' records in stream order; each segment's life (s); data start and end."""
    manifest = data.manifest
    start_ms = int(manifest["time"]["start_ms"])
    end_ms = int(manifest["time"]["end_ms"])
    segs = pq.read_table(data.segments_path, columns=["segment_name", "partition", "sequence",
                                                      "creation_time_ms", "seal_time_ms"]).to_pandas()
    segs = segs.sort_values(["partition", "sequence"], kind="stable")
    key_id, delete = _role(data, "key_id", "key_id"), _role(data, "delete", "is_delete")
    columns = list(dict.fromkeys(["segment_name", "doc_id", key_id, comparison, *([delete] if deletes else [])]))
    events = data.events(columns)
    events = events.sort_values(["segment_name", "doc_id"], kind="stable")
    bounds = events["segment_name"].to_numpy()
    names, first = np.unique(bounds, return_index=True)
    last = np.append(first[1:], len(bounds))
    where = dict(zip(names.tolist(), zip(first.tolist(), last.tolist(), strict=True), strict=True))
    keys, values = events[key_id].to_numpy(), events[comparison].to_numpy()
    if np.issubdtype(values.dtype, np.datetime64):  # a TIMESTAMP comparison column: Pinot compares its millis
        values = values.astype("datetime64[ms]").astype(np.int64)
    flags = events[delete].to_numpy() if deletes else None
    out: dict[int, list[StreamSegment]] = {}
    life: dict[str, float] = {}
    for row in segs.itertuples(index=False):
        name = str(row.segment_name)
        lo, hi = where.get(name, (0, 0))
        sealed = row.seal_time_ms if pd.notna(row.seal_time_ms) and row.seal_time_ms > 0 else end_ms
        created = row.creation_time_ms if pd.notna(row.creation_time_ms) else start_ms
        life[name] = max((float(sealed) - float(created)) / 1000.0, 1e-3)
        out.setdefault(int(row.partition), []).append(StreamSegment(
            name, keys[lo:hi], values[lo:hi], None if flags is None else flags[lo:hi],
            (float(sealed) - start_ms) / 1000.0))
    return out, life, start_ms, (end_ms - start_ms) / 1000.0


@functools.lru_cache(maxsize=8)
def _replay(data: WorkloadDir, stamp: float, upsert: UpsertConfig, time_column: str | None, layout_json: str,
            retention_s: float | None) -> dict[int, _Partition]:
    """Every partition replayed once per (data, table upsert config): sweeps reuse it across points."""
    manifest = data.manifest
    comparison = str(manifest.get("columns", {}).get("comparison") or "event_time_ms")
    settings = UpsertSettings.from_config(replace(upsert, hash_function=HashFunction.NONE), time_column=time_column)
    model = UpsertHeapModel(entry_layout(**json.loads(layout_json)))
    streams, life, _, _ = _streams(data, comparison, settings.delete_record_column is not None)
    out = {}
    for partition, stream in streams.items():
        with tempfile.TemporaryDirectory(prefix="workbench-upsert-") as snapshots:  # metadataTTL needs them
            manager = PartitionUpsertMetadataManager(settings, partition_id=partition, snapshot_dir=snapshots)
            samples = replay_partition(stream, manager, model, retention=retention_s, count_duplicates=False)
        rate = np.array([s.updated_keys / life[s.segment] if s.phase == "commit" else np.nan for s in samples])
        out[partition] = _Partition(np.array([s.time for s in samples]),
                                    np.array([s.num_primary_keys for s in samples]),
                                    np.array([s.map_bytes for s in samples]),
                                    np.array([s.bitmap_bytes for s in samples], dtype=float), rate)
    return out


def _role(data: WorkloadDir, role: str, default: str) -> str:
    """The events column holding ``role`` (``key_id``, ``delete``, ...) by the manifest: the generator's own
    name, or its ``$`` name in rows generated from the user's schema (``docs/data.md``)."""
    return str(data.manifest.get("columns", {}).get(role) or default)


def _avg_key_length(data: Path) -> tuple[float, bool]:
    """Mean length of the data's distinct keys, and whether they are all Latin-1 (one byte per char)."""
    work = WorkloadDir(data)
    key_id, key = _role(work, "key_id", "key_id"), _role(work, "primary_key", "key")
    table = work.event_table([key_id, key])
    _, first = np.unique(table.column(key_id).to_numpy(), return_index=True)
    keys = table.column(key).take(first)
    if len(keys) == 0:
        return 0.0, True
    chars = pc.utf8_length(keys)
    return float(pc.mean(chars).as_py()), bool(pc.all(pc.equal(chars, pc.binary_length(keys))).as_py())


def _layout_args(sc: Scenario, data: Path | None) -> dict[str, Any]:
    """:func:`entry_layout`'s arguments for the table: key types, hash, comparison type, key length."""
    columns, types, max_lengths = _key_columns(sc, data is not None)
    hash_function = _hash_function(sc.table)
    args: dict[str, Any] = {"primary_key_types": [types[c] for c in columns], "hash_function": hash_function,
                            "comparison_type": _comparison_type(sc)}
    variable = [c for c in columns if types[c] in _VARIABLE]
    if hash_function != "NONE" or not variable:
        return args
    if data is not None:
        args["avg_string_length"], args["latin1"] = _avg_key_length(data)
        return args
    bounds = [max_lengths.get(c) for c in variable]
    if any(b is None for b in bounds):
        raise ScenarioError("cluster.gc.upsert_keys", f"the primary-key column(s) {variable} are "
                            f"{'/'.join(types[c] for c in variable)} kept unhashed (hashFunction NONE): their "
                            "length comes from the data (workload.data) or from the schema field's maxLength; "
                            "give one, or set upsertConfig.hashFunction")
    args["avg_string_length"] = float(max(b for b in bounds if b is not None))
    return args


def _hosting(layout: Layout, partitions: Sequence[int]) -> np.ndarray:
    """``hosts[s, j]``: server ``s`` serves partition ``partitions[j]`` (holds a replica of one of its segments)."""
    index = {p: j for j, p in enumerate(partitions)}
    hosts = np.zeros((layout.num_servers, len(partitions)), dtype=bool)
    part_of = layout.partitions if layout.partitions is not None else np.zeros(len(layout.segments), np.int64)
    for seg, replicas in enumerate(layout.replicas):
        j = index.get(int(part_of[seg]))
        if j is not None:
            hosts[list(replicas), j] = True
    return hosts


def _step(times: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The last sample at or before each of ``at`` (0 before the first)."""
    idx = np.searchsorted(times, at, side="right") - 1
    return np.where(idx >= 0, values[np.clip(idx, 0, None)], 0.0)


def _next_rate(p: _Partition, at: np.ndarray) -> np.ndarray:
    """Updates per second of the segment committed at or next after each of ``at`` (the last one after)."""
    commits = ~np.isnan(p.update_rate)
    t, r = p.times_s[commits], p.update_rate[commits]
    if not len(t):
        return np.zeros(len(at))
    picked: np.ndarray = r[np.minimum(np.searchsorted(t, at, side="left"), len(t) - 1)]
    return picked


def _timeline(layout: Layout, parts: Mapping[int, _Partition], static: float) -> pd.DataFrame:
    partitions = sorted(parts)
    hosts = _hosting(layout, partitions).astype(float)
    times = np.unique(np.concatenate([parts[p].times_s for p in partitions])) if partitions else np.zeros(0)
    per = {name: np.array([_step(parts[p].times_s, getattr(parts[p], name), times) for p in partitions])
           for name in ("keys", "map_bytes", "bitmap_bytes")}
    rate = np.array([_next_rate(parts[p], times) for p in partitions])
    frames = []
    for s, server in enumerate(layout.servers):
        h = hosts[s]
        keys, maps, bitmaps = (h @ per[n] if len(partitions) else np.zeros(len(times))
                               for n in ("keys", "map_bytes", "bitmap_bytes"))
        frames.append(pd.DataFrame({"server": server, "time_s": times, "upsert_keys": keys.astype(np.int64),
                                    "map_bytes": maps, "bitmap_bytes": bitmaps,
                                    "update_rate": h @ rate if len(partitions) else np.zeros(len(times)),
                                    "live_heap": static + maps + bitmaps}))
    return pd.concat(frames, ignore_index=True)[list(HEAP_COLUMNS)] if frames else _empty()


def _empty() -> pd.DataFrame:
    return pd.DataFrame(columns=list(HEAP_COLUMNS))


def _moment(timeline: pd.DataFrame, heap_at: float | str, span_s: float) -> float:
    if heap_at == "peak":
        peak = timeline.groupby("time_s")["live_heap"].max()
        return float(peak.idxmax())
    at = float(heap_at)
    if at > span_s:
        raise ScenarioError("cluster.gc.heap_at", f"must fall within the data's span ({span_s:g} s), got {at:g} s; "
                                                  "use peak or a time since the data starts")
    return at


def _fixed(sc: Scenario, layout: Layout, data: Path | None, keys: int) -> Memory:
    """``upsert_keys`` given: every server holds that many keys (a calibrated or hand-set count)."""
    gc = sc.cluster.gc
    per_key = upsert_bytes_per_key(num_keys=keys, **_layout_args(sc, data)) if keys > 0 else 0.0
    live = LiveHeap(gc.live_heap, keys, per_key)
    rate = gc.update_rate or 0.0
    return Memory(tuple(ServerMemory(live, rate) for _ in layout.servers), _empty(), None,
                  "upsert_keys" if keys else "none")


def server_memory(sc: Scenario, layout: Layout, data: Path | None) -> Memory:
    """Each server's memory for ``sc`` on ``layout`` (``data``: the workload directory, if any)."""
    gc = sc.cluster.gc
    if gc.upsert_keys is not None or not sc.table.is_upsert:
        return _fixed(sc, layout, data, gc.upsert_keys or 0)
    if data is None or not WorkloadDir(Path(data)).has_events():
        raise ScenarioError("cluster.gc.upsert_keys", "an upsert table's keys per server come from its data: give "
                            "workload.generate and workload.data (or simulate --data DIR), or set upsert_keys to "
                            "the keys each server holds")
    data = Path(data)
    workload = WorkloadDir(data.resolve())
    if not workload.has_manifest():
        raise InputError(str(data), f"has no {workload.manifest_path.name}; run `workbench generate` (or import) "
                                    "first")
    args = _layout_args(sc, data)
    parts = _replay(workload, workload.manifest_path.stat().st_mtime, sc.table.upsert or UpsertConfig(),
                    sc.table.time_column_name, json.dumps(args, sort_keys=True), _retention_s(sc.table))
    timeline = _timeline(layout, parts, gc.live_heap)
    span = workload.manifest["time"]
    at = _moment(timeline, gc.heap_at, (span["end_ms"] - span["start_ms"]) / 1000.0)
    partitions = sorted(parts)
    hosts = _hosting(layout, partitions).astype(float)
    moment = np.array([at])
    keys, maps, bitmaps = (hosts @ np.array([_step(parts[p].times_s, getattr(parts[p], n), moment)[0]
                                             for p in partitions])
                           for n in ("keys", "map_bytes", "bitmap_bytes"))
    rates = hosts @ np.array([_next_rate(parts[p], moment)[0] for p in partitions])
    servers = tuple(ServerMemory(LiveHeap(gc.live_heap + b, int(k), m / k if k else 0.0),
                                 gc.update_rate if gc.update_rate is not None else float(r))
                    for k, m, b, r in zip(keys, maps, bitmaps, rates, strict=True))
    return Memory(servers, timeline, at, "replay")
