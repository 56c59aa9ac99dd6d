"""Pass B: put one ingestion window's events in order, number them, place them in segments, write them.

A window's staged rows (from every block that produced some) are ordered by arrival, ``(ingestion
time, key id, update number)``, which is unique. Then, with the numbering the driver derived from
all blocks' counts: the event id is the window's base plus the rank; the stream offset is the
window's base for the row's bucket plus its rank inside the bucket; the segment is the one whose
offset range holds it; the doc id is the position inside that segment. Rows are written segment by
segment in doc order, so a segment's rows are contiguous in every part file.

Each segment also gets what its metadata needs from these rows: count, event-time range, size, a
checksum, and the set of Pinot partitions of its rows for every configured partition column.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.feather as feather
import pyarrow.parquet as pq

from workbench.workload.context import Context
from workbench.workload.events import category_of, partition_ids, per_key, same_function
from workbench.workload.row_size import builtin_row_bytes
from workbench.workload.schema import EVENTS_SCHEMA, events_schema
from workbench.workload.segments import SegmentPlan, SegmentStats
from workbench.workload.timeline import mix64
from workbench.workload.user_schema import BOOKKEEPING

__all__ = ["group_order", "part_file", "run_window"]

I64 = npt.NDArray[np.int64]
OFFSET_SHIFT = 40


def part_file(window: int) -> str:
    """Name of window ``window``'s Parquet file under ``events/`` (stable across runs and masters)."""
    return f"part-{window:05d}.parquet"


def _load(ctx: Context, stage: Path, window: int) -> pa.Table | None:
    paths = sorted((stage / f"w{window:06d}").glob("*.arrow"))
    tables = [feather.read_table(str(p), memory_map=False) for p in paths]
    if not tables:
        return None
    table = pa.concat_tables(tables)
    if ctx.mode == "lifecycle":
        order = np.lexsort((table["update_seq"].to_numpy(), table["key_id"].to_numpy(),
                            table["ingest_time_ms"].to_numpy()))
        table = table.take(order)
    return table


#: Low-cardinality columns worth Parquet dictionary encoding (trying it on unique ids only costs time),
#: and nearly sorted integer columns for delta encoding: together half the size and half the CPU of
#: the defaults.
DICTIONARY_COLUMNS = ("key", "key_id", "segment_name", "category", "partition", "is_delete", "update_seq")
DELTA_COLUMNS = ("event_id", "event_time_ms", "ingest_time_ms", "offset", "doc_id")
#: Columns pass A stages that reach the output unchanged.
STAGED_COLUMNS = ("key_id", "event_time_ms", "ingest_time_ms", "partition", "is_delete", "update_seq", "value")


def group_order(values: I64) -> I64:
    """A stable order grouping equal values, by radix sort when they span fewer than 32,768 ids."""
    if not len(values):
        return np.zeros(0, dtype=np.int64)
    lo = int(values.min())
    if int(values.max()) - lo < 1 << 15:
        return np.argsort((values - lo).astype(np.int16), kind="stable")
    return np.argsort(values, kind="stable")


def _offsets(plan: SegmentPlan, window: int, bucket: I64) -> I64:
    """Stream offset of each row: the window's base in its bucket plus its rank inside the bucket."""
    order = group_order(bucket)
    sorted_b = bucket[order]
    first = np.searchsorted(sorted_b, sorted_b, side="left")
    offsets = np.empty(len(bucket), dtype=np.int64)
    offsets[order] = plan.window_offset_base[window, sorted_b] + (np.arange(len(bucket)) - first)
    return offsets


def _segments(plan: SegmentPlan, bucket: I64, offsets: I64) -> I64:
    keys = (plan.bucket << OFFSET_SHIFT) + plan.start
    return np.searchsorted(keys, (bucket << OFFSET_SHIFT) + offsets, side="right") - 1


def _checksum_terms(event_id: I64, key_id: I64, event_ms: I64, doc_id: I64) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each row's content and position; summed per segment into its CRC."""
    with np.errstate(over="ignore"):
        inner = event_ms.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        inner ^= key_id.astype(np.uint64) << np.uint64(24)
        return mix64(mix64(event_id, 1) ^ inner ^ doc_id.astype(np.uint64))


def _category_strings(ctx: Context, key_id: I64) -> pa.Array:
    width = len(str(ctx.spec.categories - 1))
    names = pa.array([f"c{i:0{width}d}" for i in range(ctx.spec.categories)])
    return names.take(pa.array(per_key(key_id, lambda keys: category_of(keys, ctx.spec.categories))))


def _key_strings(ctx: Context, key_id: I64) -> pa.Array:
    prefix = ctx.spec.key_prefix
    return per_key(key_id, lambda keys: pc.binary_join_element_wise(prefix, pc.cast(pa.array(keys), pa.string()), ""))


def _stats(ctx: Context, seg: I64, columns: dict[str, Any], key_len: I64,
           row_bytes: I64 | None = None) -> SegmentStats:
    """Per-segment facts of rows already sorted by (segment, doc id); ``row_bytes`` (schema-driven rows)
    replaces the generator's own row size."""
    starts = np.flatnonzero(np.concatenate([[True], seg[1:] != seg[:-1]]))
    ids = seg[starts]
    terms = _checksum_terms(columns["event_id"], columns["key_id"], columns["event_time_ms"], columns["doc_id"])
    with np.errstate(over="ignore"):
        checksum = np.add.reduceat(terms, starts) if len(seg) else np.zeros(0, np.uint64)
    rows = np.diff(np.concatenate([starts, [len(seg)]]))
    if row_bytes is None:
        row_bytes = builtin_row_bytes(ctx, key_len)
    size = np.add.reduceat(row_bytes, starts) if len(seg) else rows
    local = np.repeat(np.arange(len(ids)), rows)
    pairs = []
    for column in ctx.table_partitions:
        if same_function(column, ctx.stream):
            pid = columns["partition"].astype(np.int64)
        else:
            pid = partition_ids(ctx, column, columns["key_id"]).astype(np.int64)
        seen = np.flatnonzero(np.bincount(local * column.num_partitions + pid,
                                          minlength=len(ids) * column.num_partitions))
        pairs.append((ids[seen // column.num_partitions], seen % column.num_partitions))
    times = columns["event_time_ms"]
    lo, hi = np.minimum.reduceat(times, starts), np.maximum.reduceat(times, starts)
    if ctx.user is not None:  # the range of the time column's values, in millis (floored as its format writes)
        lo, hi = ctx.user.floor_time(lo), ctx.user.floor_time(hi)
    return SegmentStats(ids, rows.astype(np.int64), lo, hi, checksum, size.astype(np.int64), pairs)


def _empty_stats(ctx: Context) -> SegmentStats:
    z = np.zeros(0, dtype=np.int64)
    return SegmentStats(z, z, z, z, np.zeros(0, np.uint64), z, [(z, z) for _ in ctx.table_partitions])


def _write_user(table: pa.Table, path: Path) -> None:
    """Schema-driven rows: dictionary-encode text columns, delta-encode the bookkeeping integers."""
    text = [f.name for f in table.schema if pa.types.is_string(f.type)]
    delta = [BOOKKEEPING[c] for c in DELTA_COLUMNS if c in BOOKKEEPING] + ["doc_id"]
    pq.write_table(table, path, store_schema=False, use_dictionary=text,
                   column_encoding=dict.fromkeys(delta, "DELTA_BINARY_PACKED"))


def _write(table: pa.Table, path: Path) -> None:
    if BOOKKEEPING["event_id"] in table.column_names:
        _write_user(table, path)
        return
    extra = [c for c in table.column_names if c not in EVENTS_SCHEMA.names]  # copies of ``key``
    pq.write_table(table, path, store_schema=False, use_dictionary=[*DICTIONARY_COLUMNS, *extra],
                   column_encoding=dict.fromkeys(DELTA_COLUMNS, "DELTA_BINARY_PACKED"))


def _place(ctx: Context, plan: SegmentPlan, window: int, table: pa.Table) -> tuple[I64, dict[str, Any]]:
    """Number and place the window's rows; return segments and columns in (segment, doc id) order."""
    bucket = table["bucket"].to_numpy()
    offsets = _offsets(plan, window, bucket)
    seg = _segments(plan, bucket, offsets)
    doc_id = (offsets - plan.start[seg]).astype(np.int32)
    event_id = plan.window_event_base[window] + np.arange(table.num_rows, dtype=np.int64)
    order = group_order(seg)  # doc ids already rise with arrival inside a segment
    staged = {name: table[name].to_numpy(zero_copy_only=False)[order] for name in STAGED_COLUMNS}
    return seg[order], {**staged, "event_id": event_id[order], "offset": offsets[order], "doc_id": doc_id[order]}


def _user_arrow(ctx: Context, plan: SegmentPlan, seg: I64, cols: dict[str, Any], window: int) -> pa.Table:
    """Schema-driven rows: the user's columns, ``segment_name`` and ``doc_id``, the ``$`` bookkeeping."""
    assert ctx.user is not None
    schema = ctx.user.events_schema()
    first = np.concatenate([[True], seg[1:] != seg[:-1]])
    names = pa.array([plan.names[i] for i in seg[first].tolist()])
    arrays = ctx.user.arrays(cols, ctx.seed, window)
    arrays.update({"segment_name": names.take(pa.array(np.cumsum(first) - 1)), "doc_id": cols["doc_id"]})
    arrays.update({name: cols[c] for c, name in BOOKKEEPING.items()})
    return pa.table({f.name: arrays[f.name] for f in schema}, schema=schema)


def _empty(ctx: Context) -> pa.Table:
    return ctx.user.events_schema().empty_table() if ctx.user is not None else \
        events_schema(ctx.alias_columns).empty_table()


def _arrow(ctx: Context, plan: SegmentPlan, seg: I64, cols: dict[str, Any]) -> pa.Table:
    schema = events_schema(ctx.alias_columns)
    key = _key_strings(ctx, cols["key_id"])
    first = np.concatenate([[True], seg[1:] != seg[:-1]])
    names = pa.array([plan.names[i] for i in seg[first].tolist()])
    arrays = {**cols, "key": key, "segment_name": names.take(pa.array(np.cumsum(first) - 1)),
              "category": _category_strings(ctx, cols["key_id"])}
    arrays.update({alias: key for alias in ctx.alias_columns})
    return pa.table({f.name: arrays[f.name] for f in schema}, schema=schema)


def run_window(ctx: Context, plan: SegmentPlan, stage: str, out: str, window: int) -> SegmentStats:
    """Pass B for one window: order, number and place its rows, write its part file, return stats."""
    path = Path(out) / part_file(window)
    table = _load(ctx, Path(stage), window)
    if table is None or table.num_rows == 0:
        _write(_empty(ctx), path)
        return _empty_stats(ctx)
    seg, cols = _place(ctx, plan, window, table)
    if ctx.user is not None:
        out_table = _user_arrow(ctx, plan, seg, cols, window)
        _write(out_table, path)
        return _stats(ctx, seg, cols, np.zeros(len(seg), np.int64), ctx.user.row_bytes(out_table))
    out_table = _arrow(ctx, plan, seg, cols)
    _write(out_table, path)
    key_len = pc.binary_length(out_table["key"]).to_numpy().astype(np.int64)
    return _stats(ctx, seg, cols, key_len)
