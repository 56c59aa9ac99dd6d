"""Cutting the stream into segments (driver side) and writing each segment's metadata as Pinot does.

Realtime
    Each stream partition is consumed into a chain of LLC segments. A consuming segment is sealed
    when it holds its row threshold or, if ``segment_time_s`` is set, when that much ingestion
    time has passed since it started (checked at the edges of the arrival-time bins the blocks
    counted in, as Pinot checks its time threshold between fetches, never on an empty segment). The
    next segment starts consuming at the seal; the last one of each partition is the consuming
    (``IN_PROGRESS``) segment at the head, possibly still empty. The row threshold is ``segment_rows``,
    or with ``segment_size`` (size-based flushing) the one Pinot 1.5.1's controller gives each new
    segment from the partition's previous one (:mod:`workbench.pinot.flush_size`), a segment's size
    being its rows x the mean bytes per row (:func:`workbench.workload.row_size.mean_row_bytes`). Each
    segment's threshold is in its ZooKeeper record (``segment.flush.threshold.size``).
Offline
    One segment per (batch, file) bucket, named by Pinot's simple segment-name generator,
    ``<table>_<minTime>_<maxTime>_<sequence>``, and pushed at the end of its batch.

Metadata follows the segment's ZooKeeper record (``zk_metadata``): a consuming segment has no time
range, doc count or CRC there, and its partition metadata is the controller's (its stream partition,
only when exactly one partition column is configured); a sealed segment's partition metadata is the
set of partitions of its rows, per configured column, as the segment creator computes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from workbench.pinot.flush_size import AutotuneState, Committed
from workbench.pinot.segment import ColumnPartitionMetadata
from workbench.workload.context import Context
from workbench.workload.events import BlockCounts

__all__ = ["SegmentPlan", "SegmentStats", "consuming_partition_metadata", "llc_segment_name", "offline_segment_name",
           "plan_segments", "seal_partition", "segments_table"]

I64 = npt.NDArray[np.int64]
#: The time threshold size-based flushing reads when the spec sets none (no segment is sealed by time).
_NO_TIME_MS = 1 << 62


def llc_segment_name(table: str, partition: int, sequence: int, creation_ms: int) -> str:
    """Pinot's LLC segment name ``<table>__<partition>__<sequence>__<yyyyMMdd'T'HHmm'Z'>``.

    >>> llc_segment_name("events", 3, 12, 1767225600000)
    'events__3__12__20260101T0000Z'
    """
    stamp = datetime.fromtimestamp(creation_ms / 1000, tz=UTC).strftime("%Y%m%dT%H%MZ")
    return f"{table}__{partition}__{sequence}__{stamp}"


def offline_segment_name(table: str, min_time: int | str, max_time: int | str, sequence: int) -> str:
    """Pinot's ``SimpleSegmentNameGenerator``: ``<table>_<minTime>_<maxTime>_<sequence>``, the times
    being the time column's own values (epoch millis for generated data, days for a day column...).

    >>> offline_segment_name("events", 10, 20, 3)
    'events_10_20_3'
    """
    return f"{table}_{min_time}_{max_time}_{sequence}"


@dataclass(frozen=True)
class Cut:
    """One segment of a stream partition: offsets ``[start, end)``, consumption start and seal time, and the
    row threshold it was given."""

    start: int
    end: int
    creation_ms: int
    seal_ms: int | None
    threshold: int = 0


def seal_partition(
    bin_counts: npt.NDArray[np.int64], *, rows: int | AutotuneState, time_ms: int | None, bin_ms: int, t0_ms: int,
    span_ms: int, bytes_per_row: float = 0.0,
) -> list[Cut]:
    """Cut one stream partition into segments from its arrivals per time bin.

    Parameters
    ----------
    bin_counts
        Rows arriving in each bin ``[t0 + i*bin_ms, t0 + (i+1)*bin_ms)``.
    rows
        Rows threshold of every segment, or size-based flushing's state: each segment then gets the
        threshold it gives, and commits into it with its rows, its size (rows x ``bytes_per_row``) and
        its consuming time (seal - creation: a time seal falls on the first bin edge past the threshold,
        so Pinot's rule for a lowered time threshold may scale its rows by threshold / time consumed, as
        the controller's clock, read a little after the threshold, makes it do).
    time_ms
        Time threshold in ms, or ``None`` for rows only.

    Returns
    -------
    list of Cut
        Sealed segments, then the consuming one (``seal_ms`` None). A rows seal happens at the bin
        end of the row that fills the segment; a time seal at the first bin edge past the threshold
        where the segment is not empty, strictly before the end of the span ("now").

    >>> [(c.start, c.end) for c in seal_partition(np.array([3, 3, 3]), rows=4, time_ms=None,
    ...                                            bin_ms=1000, t0_ms=0, span_ms=3000)]
    [(0, 4), (4, 8), (8, 9)]
    >>> [(c.start, c.end, c.seal_ms) for c in seal_partition(np.array([1, 0, 5, 0]), rows=100, time_ms=1500,
    ...                                                      bin_ms=1000, t0_ms=0, span_ms=4000)]
    [(0, 1, 2000), (1, 6, None)]
    >>> sized = AutotuneState(desired_bytes=10**6, initial_rows=10_000, time_ms=10**9)
    >>> [c.threshold for c in seal_partition(np.full(10, 10_000), rows=sized, time_ms=None, bin_ms=1000, t0_ms=0,
    ...                                      span_ms=10_000, bytes_per_row=10.0)]
    [10000, 15000, 22500, 33750, 50625]
    """
    cum = np.concatenate([[0], np.cumsum(bin_counts)]).astype(np.int64)
    total, edges = int(cum[-1]), len(cum) - 1
    cuts: list[Cut] = []
    start, began = 0, t0_ms
    state: AutotuneState | None = None
    if isinstance(rows, AutotuneState):
        state, threshold = rows, rows.threshold()
    else:
        threshold = rows
    while True:
        if cuts and state is not None:
            last = cuts[-1]
            done = last.end - last.start
            state = state.commit(Committed(done, int(done * bytes_per_row), last.threshold, began - last.creation_ms))
            threshold = state.threshold()
        by_rows = start + threshold if start + threshold <= total else None
        by_time = None
        if time_ms is not None:
            j = max(-(-(began + time_ms - t0_ms) // bin_ms), int(np.searchsorted(cum, start, side="right")))
            if j <= edges and j * bin_ms < span_ms:
                by_time = j
        if by_rows is not None and (by_time is None or by_rows <= cum[by_time]):
            last_bin = int(np.searchsorted(cum, by_rows - 1, side="right")) - 1
            seal = min(t0_ms + (last_bin + 1) * bin_ms, t0_ms + span_ms)
            cuts.append(Cut(start, by_rows, began, seal, threshold))
            start, began = by_rows, seal
        elif by_time is not None:
            seal = t0_ms + by_time * bin_ms
            cuts.append(Cut(start, int(cum[by_time]), began, seal, threshold))
            start, began = int(cum[by_time]), seal
        else:
            cuts.append(Cut(start, total, began, None, threshold))
            return cuts


@dataclass(frozen=True)
class SegmentPlan:
    """Every segment, sorted by (bucket, start offset), and how windows number their events.

    ``window_event_base[w]`` is the first event id of window ``w``; ``window_offset_base[w, b]`` the
    first offset of window ``w``'s rows in bucket ``b``.
    """

    bucket: I64
    start: I64
    end: I64
    sequence: I64
    partition: I64
    creation_ms: I64
    seal_ms: I64
    min_time_ms: I64
    max_time_ms: I64
    names: tuple[str, ...]
    window_event_base: I64
    window_offset_base: I64
    #: Each segment's row threshold (realtime; 0 for offline segments).
    threshold: I64

    @property
    def total_events(self) -> int:
        return int(self.end.sum() - self.start.sum())


def _concat(counts: Sequence[BlockCounts], name: str) -> I64:
    parts = [getattr(c, name) for c in counts]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def _realtime_cuts(ctx: Context, counts: Sequence[BlockCounts]) -> dict[str, list[int]]:
    parts = ctx.stream.num_partitions
    per_bin = np.bincount(_concat(counts, "bucket") * ctx.n_bins + _concat(counts, "bin"),
                          weights=_concat(counts, "count"), minlength=parts * ctx.n_bins)
    per_bin = np.rint(per_bin).astype(np.int64).reshape(parts, ctx.n_bins)
    time_ms = None if ctx.spec.segment_time_s is None else int(ctx.spec.segment_time_s * 1000)
    rows: int | AutotuneState = ctx.spec.segment_rows
    bytes_per_row = 0.0
    if ctx.spec.segment_size is not None:  # size-based: Pinot's controller tunes each partition's thresholds
        from workbench.workload.row_size import mean_row_bytes

        rows = AutotuneState(int(ctx.spec.segment_size), ctx.spec.segment_initial_rows,
                             time_ms if time_ms is not None else _NO_TIME_MS)
        bytes_per_row = mean_row_bytes(ctx)
    out: dict[str, list[int]] = {k: [] for k in ("bucket", "start", "end", "sequence", "creation", "seal",
                                                 "threshold")}
    for p in range(parts):
        cuts = seal_partition(per_bin[p], rows=rows, time_ms=time_ms, bin_ms=ctx.bin_ms, t0_ms=ctx.t0_ms,
                              span_ms=ctx.span_ms, bytes_per_row=bytes_per_row)
        for seq, cut in enumerate(cuts):
            for key, value in (("bucket", p), ("start", cut.start), ("end", cut.end), ("sequence", seq),
                               ("creation", cut.creation_ms), ("seal", -1 if cut.seal_ms is None else cut.seal_ms),
                               ("threshold", cut.threshold)):
                out[key].append(value)
    return out


def _offline_cuts(ctx: Context, counts: Sequence[BlockCounts]) -> tuple[dict[str, list[int]], I64, I64]:
    buckets = _concat(counts, "buckets")
    keys, inverse = np.unique(buckets, return_inverse=True)
    lo = np.full(len(keys), np.iinfo(np.int64).max)
    hi = np.full(len(keys), np.iinfo(np.int64).min)
    np.minimum.at(lo, inverse, _concat(counts, "bucket_min"))
    np.maximum.at(hi, inverse, _concat(counts, "bucket_max"))
    totals = np.bincount(_concat(counts, "bucket"), weights=_concat(counts, "count"), minlength=ctx.n_buckets)
    batch, file = np.divmod(keys, ctx.offline_files)
    batch_end = ctx.t0_ms + (batch + ctx.batch_lo + 1) * ctx.batch_ms
    pushed = np.minimum(batch_end, ctx.t_end_ms)
    out = {"bucket": keys.tolist(), "start": [0] * len(keys), "end": np.rint(totals[keys]).astype(np.int64).tolist(),
           "sequence": file.tolist(), "creation": pushed.tolist(), "seal": pushed.tolist(),
           "threshold": [0] * len(keys)}
    return out, lo, hi


def plan_segments(ctx: Context, counts: Sequence[BlockCounts]) -> SegmentPlan:
    """Combine every block's counts into the segment list and the per-window numbering."""
    if ctx.realtime:
        cols = _realtime_cuts(ctx, counts)
        lo = hi = np.full(len(cols["bucket"]), -1, dtype=np.int64)
        names = tuple(llc_segment_name(ctx.table, b, s, c)
                      for b, s, c in zip(cols["bucket"], cols["sequence"], cols["creation"], strict=True))
        partition = np.asarray(cols["bucket"], dtype=np.int64)
    else:
        cols, lo, hi = _offline_cuts(ctx, counts)
        # the time column's own values, as Pinot's name generator reads them (epoch millis for generated data)
        firsts: list[Any] = ctx.user.time_text(lo) if ctx.user is not None else lo.tolist()
        lasts: list[Any] = ctx.user.time_text(hi) if ctx.user is not None else hi.tolist()
        names = tuple(offline_segment_name(ctx.table, a, b, s)
                      for a, b, s in zip(firsts, lasts, cols["sequence"], strict=True))
        partition = np.asarray(cols["sequence"], dtype=np.int64)
    windows = ctx.n_windows
    per_wb = np.bincount(_concat(counts, "window") * ctx.n_buckets + _concat(counts, "bucket"),
                         weights=_concat(counts, "count"), minlength=windows * ctx.n_buckets)
    per_wb = np.rint(per_wb).astype(np.int64).reshape(windows, ctx.n_buckets)
    offset_base = np.cumsum(per_wb, axis=0) - per_wb
    event_base = np.cumsum(per_wb.sum(axis=1)) - per_wb.sum(axis=1)
    arr = {k: np.asarray(v, dtype=np.int64) for k, v in cols.items()}
    return SegmentPlan(arr["bucket"], arr["start"], arr["end"], arr["sequence"], partition, arr["creation"],
                       arr["seal"], lo, hi, names, event_base, offset_base, arr["threshold"])


@dataclass
class SegmentStats:
    """Per-segment facts one window's rows contribute (parallel arrays indexed by ``segment``).

    ``partitions[c]`` holds ``(segment, partition id)`` pairs seen for table partition column ``c``.
    """

    segment: I64
    rows: I64
    min_time_ms: I64
    max_time_ms: I64
    checksum: npt.NDArray[np.uint64]
    size_bytes: I64
    partitions: list[tuple[I64, I64]]


def _merge(plan: SegmentPlan, stats: Sequence[SegmentStats]) -> dict[str, Any]:
    n = len(plan.names)
    rows = np.zeros(n, dtype=np.int64)
    size = np.zeros(n, dtype=np.int64)
    lo = np.full(n, np.iinfo(np.int64).max)
    hi = np.full(n, np.iinfo(np.int64).min)
    checksum = np.zeros(n, dtype=np.uint64)
    for s in stats:
        np.add.at(rows, s.segment, s.rows)
        np.add.at(size, s.segment, s.size_bytes)
        np.minimum.at(lo, s.segment, s.min_time_ms)
        np.maximum.at(hi, s.segment, s.max_time_ms)
        with np.errstate(over="ignore"):
            np.add.at(checksum, s.segment, s.checksum)
    empty = rows == 0
    lo[empty], hi[empty] = -1, -1
    crc = ((checksum ^ (checksum >> np.uint64(32))) & np.uint64(0xFFFFFFFF)).astype(np.int64)
    return {"rows": rows, "size": size, "lo": lo, "hi": hi, "crc": crc}


def _partition_sets(ctx: Context, plan: SegmentPlan, stats: Sequence[SegmentStats]) -> list[dict[str, list[int]]]:
    out: list[dict[str, list[int]]] = [{} for _ in plan.names]
    for c, column in enumerate(ctx.table_partitions):
        stacked = [np.stack(s.partitions[c]) for s in stats] or [np.zeros((2, 0), dtype=np.int64)]
        pairs = np.unique(np.concatenate(stacked, axis=1).astype(np.int64), axis=1)
        for seg, pid in pairs.T.tolist():
            out[seg].setdefault(column.column, []).append(pid)
    return out


def consuming_partition_metadata(columns: Sequence[tuple[str, str, Mapping[str, Any] | None]],
                                 stream_partitions: int, partition: int) -> dict[str, ColumnPartitionMetadata]:
    """A CONSUMING segment's partition metadata as the controller writes it when it opens the segment: with exactly
    one partition column (``column, function, function config``), that column's function over the stream's
    partitions with the segment's stream partition alone; with none or several, none.

    >>> consuming_partition_metadata([("key_id", "Modulo", None)], 4, 2)["key_id"].partitions
    frozenset({2})
    """
    if len(columns) != 1:
        return {}
    column, function, config = columns[0]
    return {column: ColumnPartitionMetadata(function, stream_partitions, frozenset([partition]), config)}


def _partition_json(ctx: Context, sets: dict[str, list[int]], consuming_partition: int | None) -> str | None:
    """``segment.partition.metadata`` as the controller (consuming) or segment creator (sealed) writes it."""
    cmap: dict[str, Any] = {}
    if consuming_partition is not None:
        columns = [(c.column, c.function, c.function_config) for c in ctx.table_partitions]
        cmap = {k: v.to_json() for k, v in consuming_partition_metadata(columns, ctx.stream.num_partitions,
                                                                        consuming_partition).items()}
    else:
        for col in ctx.table_partitions:
            ids = frozenset(sets.get(col.column, ()))
            if ids:
                cmap[col.column] = ColumnPartitionMetadata(col.function, col.num_partitions, ids,
                                                           col.function_config).to_json()
    return json.dumps({"columnPartitionMap": cmap}) if cmap else None


def _zk_record(ctx: Context, row: dict[str, Any], threshold: int) -> str:
    """The segment's ZooKeeper simple fields (all strings), as Pinot's segment ZK metadata holds them."""
    consuming = row["status"] == "IN_PROGRESS"
    fields = {
        "segment.name": row["segment_name"],
        "segment.table.name": f"{ctx.table}_{ctx.table_type}",
        "segment.type": ctx.table_type,
        "segment.start.time": str(-1 if consuming else row["start_time_ms"]),
        "segment.end.time": str(-1 if consuming else row["end_time_ms"]),
        "segment.time.unit": "MILLISECONDS",
        "segment.total.docs": str(-1 if consuming else row["total_docs"]),
        "segment.crc": str(row["crc"]),
        "segment.creation.time": str(row["creation_time_ms"]),
        "segment.size.in.bytes": str(-1 if consuming else row["size_bytes"]),
    }
    if ctx.realtime:
        fields["segment.realtime.status"] = row["status"]
        fields["segment.realtime.startOffset"] = str(row["start_offset"])
        if not consuming:
            fields["segment.realtime.endOffset"] = str(row["end_offset"])
        fields["segment.flush.threshold.size"] = str(threshold)
    else:
        fields["segment.push.time"] = str(row["creation_time_ms"])
    if row["partition_metadata"] is not None:
        fields["segment.partition.metadata"] = row["partition_metadata"]
    return json.dumps(fields, sort_keys=True)


def segments_table(ctx: Context, plan: SegmentPlan, stats: Sequence[SegmentStats]) -> pa.Table:
    """One row per segment with the metadata Pinot records (schema in ``docs/data.md``)."""
    merged = _merge(plan, stats)
    sets = _partition_sets(ctx, plan, stats)
    last = np.concatenate([plan.bucket[1:] != plan.bucket[:-1], [True]]) if len(plan.bucket) else plan.bucket
    consuming = last & (plan.seal_ms < 0) if ctx.realtime else np.zeros(len(plan.names), dtype=bool)
    rows = []
    for i, name in enumerate(plan.names):
        row: dict[str, Any] = {
            "segment_name": name, "table_type": ctx.table_type, "partition": int(plan.partition[i]),
            "sequence": int(plan.sequence[i]), "status": "IN_PROGRESS" if consuming[i] else "DONE",
            "start_time_ms": int(merged["lo"][i]), "end_time_ms": int(merged["hi"][i]),
            "total_docs": int(merged["rows"][i]), "size_bytes": int(merged["size"][i]),
            "crc": -1 if consuming[i] else int(merged["crc"][i]),
            "creation_time_ms": int(plan.creation_ms[i]), "seal_time_ms": int(plan.seal_ms[i]),
            "start_offset": int(plan.start[i]) if ctx.realtime else -1,
            "end_offset": int(plan.end[i]) if ctx.realtime and not consuming[i] else -1,
        }
        row["partition_metadata"] = _partition_json(ctx, sets[i], int(plan.partition[i]) if consuming[i] else None)
        row["zk_metadata"] = _zk_record(ctx, row, int(plan.threshold[i]))
        rows.append(row)
    from workbench.workload.schema import SEGMENTS_SCHEMA

    return pa.Table.from_pylist(rows, schema=SEGMENTS_SCHEMA)
