"""Upsert heap over time: replay an event stream through the manager and sample the heap at commits.

The simulator's G1-like GC model needs the live old-generation bytes that upsert pins on each server,
as a step function of time. :func:`replay_partition` drives a
:class:`~workbench.pinot.upsert.manager.PartitionUpsertMetadataManager` the way a server does
(start consuming segment -> consume -> commit -> retention), and samples after every commit and after
every commit-time upkeep (snapshot and TTL sweep):

- map bytes from :class:`~workbench.pinot.heap.UpsertHeapModel` (entries plus a table sized by the
  most keys ever held, since ``ConcurrentHashMap`` never shrinks);
- bitmap bytes as the serialised size of every segment's validDocIds (and queryableDocIds);
- duplicates: queryable docs whose key is queryable in another doc too, which only TTL creates.

:func:`server_heap` sums partitions per server from a hosting map (every replica of a partition holds
the whole partition's metadata; :func:`hosting_from_assignment` derives it from instance partitions),
and :func:`live_upsert_heap` is the one-call entry point the GC model uses.

>>> import numpy as np
>>> stream = synthetic_stream(np.random.default_rng(7), num_segments=3, records_per_segment=200)
>>> samples = replay_partition(stream, PartitionUpsertMetadataManager.of())
>>> [s.phase for s in samples][:3], samples[-1].duplicate_keys
(['commit', 'upkeep', 'commit'], 0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from workbench.errors import InputError
from workbench.pinot.heap import UpsertHeapModel, bitmap_bytes, chm_table_capacity, entry_layout
from workbench.pinot.upsert.manager import PartitionUpsertMetadataManager
from workbench.pinot.upsert.segments import VALID_QUERYABLE, SegmentState

__all__ = [
    "HeapSample",
    "HeapTimeline",
    "StreamSegment",
    "hosting_from_assignment",
    "live_upsert_heap",
    "partition_timeline",
    "replay_partition",
    "server_heap",
    "synthetic_stream",
]


@dataclass(frozen=True)
class StreamSegment:
    """The records one consuming segment receives, in stream order.

    Attributes
    ----------
    name
        Segment name (LLC form for the sequence tie rule).
    primary_keys, comparison_values, is_delete
        Per record; ``is_delete`` may be None.
    commit_time
        When the segment commits, in seconds; defaults to its largest comparison value.
    """

    name: str
    primary_keys: Any
    comparison_values: Any
    is_delete: Any = None
    commit_time: float | None = None


@dataclass(frozen=True)
class HeapSample:
    """Upsert heap of one partition at one instant.

    Attributes
    ----------
    time
        Seconds (the commit time of the segment just sealed).
    segment
        Segment just committed (``commit``) or just started (``upkeep``, after snapshot and sweep).
    phase
        ``"commit"`` or ``"upkeep"``.
    num_primary_keys, table_capacity
        Keys in the map, and the hash table's length.
    map_bytes, bitmap_bytes, total_bytes
        Heap of the map, of all segments' bitmaps, and their sum.
    valid_docs, queryable_docs
        Summed over the partition's segments.
    duplicate_keys
        Queryable docs beyond the first per key (None when not counted).
    updated_keys
        Records of the segment just committed that took over an existing key's location (0 at
        ``upkeep``): the updates of old map entries that a collector's remembered sets track.
    """

    time: float
    segment: str
    phase: str
    num_primary_keys: int
    table_capacity: int
    map_bytes: float
    bitmap_bytes: int
    total_bytes: float
    valid_docs: int
    queryable_docs: int
    duplicate_keys: int | None
    updated_keys: int = 0


@dataclass(frozen=True, eq=False)
class HeapTimeline:
    """A right-continuous step function of heap bytes over time (seconds)."""

    times: np.ndarray
    bytes: np.ndarray

    def at(self, t: float | np.ndarray) -> np.ndarray:
        """Bytes at time(s) ``t``: the last sample at or before ``t`` (0 before the first)."""
        idx = np.searchsorted(self.times, t, side="right") - 1
        values = np.concatenate([[0.0], self.bytes])
        out: np.ndarray = np.asarray(values[np.asarray(idx) + 1], dtype=float)
        return out


def _queryable_mask(seg: SegmentState, has_delete_column: bool) -> np.ndarray:
    flags = seg.flag_array()
    mask: np.ndarray = flags == VALID_QUERYABLE if has_delete_column else flags != 0
    return mask


def _duplicates(segments: Iterable[SegmentState], has_delete_column: bool) -> int:
    keys: list[Any] = []
    for seg in segments:
        idx = np.flatnonzero(_queryable_mask(seg, has_delete_column))
        if len(idx):
            picked = itemgetter(*idx.tolist())(seg.keys)
            keys.extend(picked if len(idx) > 1 else [picked])
    return len(keys) - len(set(keys))


def _bitmaps(segments: list[SegmentState], has_delete_column: bool) -> int:
    total = 0
    for seg in segments:
        if seg.has_bitmaps:
            total += bitmap_bytes(seg.valid_bitmap())
            total += bitmap_bytes(seg.queryable_bitmap()) if has_delete_column else 0
    return total


def _sample(manager: PartitionUpsertMetadataManager, model: UpsertHeapModel, time: float, segment: str,
            phase: str, count_duplicates: bool, updated: int = 0) -> HeapSample:
    segments = [manager.segment(n) for n in manager.segment_names()]
    has_del = manager.settings.has_delete_column
    keys = manager.num_primary_keys()
    map_bytes = model.map_bytes(keys, manager.max_primary_keys)
    bitmap = _bitmaps(segments, has_del)
    return HeapSample(
        time=time, segment=segment, phase=phase, num_primary_keys=keys,
        table_capacity=chm_table_capacity(max(keys, manager.max_primary_keys)),
        map_bytes=map_bytes, bitmap_bytes=bitmap, total_bytes=map_bytes + bitmap,
        valid_docs=sum(s.num_valid() for s in segments),
        queryable_docs=sum(int(np.count_nonzero(_queryable_mask(s, has_del))) for s in segments),
        duplicate_keys=_duplicates(segments, has_del) if count_duplicates else None, updated_keys=updated)


def _default_model(manager: PartitionUpsertMetadataManager) -> UpsertHeapModel:
    s = manager.settings
    return UpsertHeapModel(entry_layout(s.primary_key_types, s.hash_function, "LONG"))


def _consume(manager: PartitionUpsertMetadataManager, seg: StreamSegment, batch_size: int) -> int:
    """Consume the segment's records in batches; returns how many replaced an existing key's location."""
    keys, values = seg.primary_keys, seg.comparison_values
    replaced = 0
    for lo in range(0, len(keys), batch_size):
        deletes = None if seg.is_delete is None else seg.is_delete[lo:lo + batch_size]
        replaced += manager.add_records(seg.name, keys[lo:lo + batch_size], values[lo:lo + batch_size],
                                        deletes).replaced
    return replaced


def replay_partition(stream: Iterable[StreamSegment], manager: PartitionUpsertMetadataManager,
                     heap_model: UpsertHeapModel | None = None, *, batch_size: int = 10_000,
                     retention: float | None = None, count_duplicates: bool = True) -> list[HeapSample]:
    """Replay a partition's stream, sampling the upsert heap at each commit and commit-time upkeep.

    Parameters
    ----------
    stream
        Consuming segments in order.
    manager
        The partition's manager (fresh, or recovered); its settings decide TTL, hashing and so on.
    heap_model
        Bytes per entry; defaults to the manager's key types and hash function with a LONG
        comparison column (variable-width keys with hashFunction NONE need an explicit model).
    batch_size
        Records per ``add_records`` call (the periodic-scan strategy checks between batches).
    retention
        Seconds a committed segment is kept; older ones are removed at each commit (None: keep all).
    count_duplicates
        Count TTL duplicates (costs a pass over every valid doc per sample).
    """
    model = heap_model or _default_model(manager)
    committed: list[tuple[float, str]] = []
    samples: list[HeapSample] = []
    for seg in stream:
        manager.start_new_consuming_segment(seg.name)
        if samples:
            samples.append(_sample(manager, model, samples[-1].time, seg.name, "upkeep", count_duplicates))
        updated = _consume(manager, seg, batch_size)
        manager.seal_consuming_segment(seg.name)
        time = float(seg.commit_time if seg.commit_time is not None else manager.segment(seg.name).max_value)
        committed.append((time, seg.name))
        committed = _apply_retention(manager, committed, time, retention)
        samples.append(_sample(manager, model, time, seg.name, "commit", count_duplicates, updated))
    return samples


def _apply_retention(manager: PartitionUpsertMetadataManager, committed: list[tuple[float, str]], now: float,
                     retention: float | None) -> list[tuple[float, str]]:
    if retention is None:
        return committed
    for t, name in committed:
        if t < now - retention:
            manager.remove_segment(name)
    return [(t, n) for t, n in committed if t >= now - retention]


def partition_timeline(samples: Sequence[HeapSample]) -> HeapTimeline:
    """The total-bytes step function of one partition's samples."""
    return HeapTimeline(np.array([s.time for s in samples], dtype=float),
                        np.array([s.total_bytes for s in samples], dtype=float))


def live_upsert_heap(stream: Iterable[StreamSegment], manager: PartitionUpsertMetadataManager,
                     heap_model: UpsertHeapModel | None = None, **options: Any) -> HeapTimeline:
    """Live upsert heap bytes over time for one partition given a replay (for the GC model)."""
    return partition_timeline(replay_partition(stream, manager, heap_model, count_duplicates=False, **options))


def server_heap(partitions: Mapping[int, HeapTimeline],
                hosting: Mapping[str, Sequence[int]]) -> dict[str, HeapTimeline]:
    """Per server, the sum of the hosted partitions' heap timelines (sampled at all their change points)."""
    out = {}
    for server, hosted in hosting.items():
        missing = [p for p in hosted if p not in partitions]
        if missing:
            raise InputError("hosting", f"server {server} hosts partitions {missing} with no timeline")
        times = np.unique(np.concatenate([partitions[p].times for p in hosted])) if hosted else np.zeros(0)
        total = sum((partitions[p].at(times) for p in hosted), np.zeros(len(times)))
        out[server] = HeapTimeline(times, total)
    return out


def hosting_from_assignment(num_partitions: int, instance_partitions: Any, replication: int) -> dict[str, list[int]]:
    """Server -> stream partitions it hosts, from consuming-segment assignment (strict replica groups).

    Upsert tables keep every segment of a partition on the servers that consume it, so each server
    carries the full metadata of each partition it consumes.
    """
    from workbench.pinot.assignment import assign_consuming_segment

    hosting: dict[str, list[int]] = {}
    for p in range(num_partitions):
        for server in assign_consuming_segment(p, instance_partitions, replication):
            hosting.setdefault(server, []).append(p)
    return hosting


def synthetic_stream(rng: np.random.Generator, num_segments: int, records_per_segment: int, *,
                     segment_span_ms: int = 3_600_000, update_fraction: float = 0.5,
                     active_window_ms: int = 7_200_000, late_fraction: float = 0.01, late_by_ms: int = 600_000,
                     delete_fraction: float = 0.0, partition: int = 0, table: str = "t") -> list[StreamSegment]:
    """A session-like stream: keys are updated for a while after they appear, then never again.

    Each record is, with probability ``update_fraction``, an update of a key last seen within
    ``active_window_ms`` (else a new key); ``late_fraction`` of records carry a time up to
    ``late_by_ms`` in the past; ``delete_fraction`` of updates are deletes. Comparison values are
    event times in milliseconds; segment ``i`` commits at the end of its span (seconds).
    """
    last_seen = np.zeros(0, dtype=np.int64)
    out = []
    for i in range(num_segments):
        start = i * segment_span_ms
        times = start + np.sort(rng.integers(0, segment_span_ms, records_per_segment))
        keys, last_seen, updates = _pick_keys(rng, last_seen, start - active_window_ms, records_per_segment,
                                              update_fraction)
        np.maximum.at(last_seen, keys, times)
        late = rng.random(records_per_segment) < late_fraction
        times = times - late * rng.integers(0, late_by_ms + 1, records_per_segment)
        deletes = updates & (rng.random(records_per_segment) < delete_fraction) if delete_fraction else None
        name = f"{table}__{partition}__{i}__20240101T0000Z"
        out.append(StreamSegment(name, keys, times, deletes, (start + segment_span_ms) / 1000.0))
    return out


def _pick_keys(rng: np.random.Generator, last_seen: np.ndarray, active_since: int, n: int,
               update_fraction: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    active = np.flatnonzero(last_seen >= max(active_since, 0)) if len(last_seen) else np.zeros(0, np.int64)
    updates = (rng.random(n) < update_fraction) & (len(active) > 0)
    keys = np.empty(n, dtype=np.int64)
    if len(active):
        keys[updates] = active[rng.integers(0, len(active), int(updates.sum()))]
    fresh = int((~updates).sum())
    keys[~updates] = np.arange(len(last_seen), len(last_seen) + fresh)
    return keys, np.concatenate([last_seen, np.zeros(fresh, dtype=np.int64)]), updates
