"""Pass A: draw the events of one block, route them to stream partitions, stage them and count them.

Two ways to make events, chosen by the spec:

*popularity* (no ``lifecycle``)
    Block ``b`` holds events ``b * block_size`` onwards in arrival order. Arrival times invert the
    rate profile; each event picks a key by popularity (uniform or Zipf(s), the popular ranks
    scattered over key ids by a bijection so they do not share one partition by accident).
*lifecycle* (``lifecycle`` set, the trip example)
    Block ``b`` holds keys ``b * block_size`` onwards in birth order. Each key gets its events: the
    first at birth, the last at birth + lifetime, the rest in between; some keys end with a delete.

Either way, event time is ingestion time minus a delay (jitter, plus lateness for the late share),
the stream partition is the producer's partition function of the routing column (the real Pinot
functions of :mod:`workbench.pinot.partition`), and an offline table's rows are assigned to a
(time batch, file) bucket with the purity knob. The block's rows are written to the staging area
of each ingestion window they fall in, and the counts the driver needs to cut segments are returned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.feather as feather

from workbench.pinot.partition import get_partition_function
from workbench.workload.context import (
    SALT_CATEGORY,
    STREAM_EVENTS,
    STREAM_KEYS,
    STREAM_OFFLINE,
    Context,
    PartitionColumn,
)
from workbench.workload.draws import per_key, zipf_ranks
from workbench.workload.timeline import F64, rng_for, unit_floats

__all__ = [
    "BlockCounts",
    "Staged",
    "category_of",
    "key_strings",
    "partition_ids",
    "per_key",
    "run_block",
    "same_function",
    "scatter_keys",
    "zipf_ranks",
]

I64 = npt.NDArray[np.int64]
VALUE_MEDIAN = 10.0


@dataclass
class Staged:
    """The columns of a block's events, before they have ids, offsets or segments."""

    key_id: I64
    event_time_ms: I64
    ingest_time_ms: I64
    is_delete: npt.NDArray[np.bool_]
    update_seq: npt.NDArray[np.int32]
    value: F64

    def __len__(self) -> int:
        return len(self.key_id)

    def take(self, index: npt.NDArray[Any]) -> Staged:
        """The rows at ``index``, in that order."""
        return Staged(*(getattr(self, f)[index] for f in self.__dataclass_fields__))

    def to_arrow(self, **extra: npt.NDArray[Any]) -> pa.Table:
        """An Arrow table of these columns plus ``extra`` ones (how pass A stages a window's rows)."""
        columns = {f: getattr(self, f) for f in self.__dataclass_fields__}
        return pa.table({**columns, **extra})


@dataclass
class BlockCounts:
    """What the driver needs from one block to cut segments and number events.

    ``window``, ``bucket``, ``bin`` and ``count`` are parallel arrays: the number of the block's
    events per (ingestion window, bucket, arrival time bin); a bucket is a stream partition for
    realtime tables and a (batch, file) pair for offline ones. ``bucket_min``/``bucket_max`` give
    each offline bucket's event-time range (offline segment names carry it).
    """

    window: I64
    bucket: I64
    bin: I64
    count: I64
    buckets: I64
    bucket_min: I64
    bucket_max: I64


# -- keys --------------------------------------------------------------------------------------------
def scatter_keys(ranks: I64, n: int, seed: int) -> I64:
    """A bijection of 0..n-1 (affine modulo n) so popular ranks land on unrelated key ids."""
    a = 2_654_435_761 % n or 1
    while math.gcd(a, n) != 1:
        a += 1
    out: I64 = (ranks * a + seed % n) % n
    return out


def category_of(key_id: I64, categories: int) -> npt.NDArray[np.int32]:
    """Each key's category (fixed per key, Zipf(1) popular): a pure function of the key id."""
    cdf = np.cumsum(1.0 / np.arange(1, categories + 1))
    u = unit_floats(key_id, SALT_CATEGORY) * cdf[-1]
    out: npt.NDArray[np.int32] = np.minimum(np.searchsorted(cdf, u, side="right"), categories - 1).astype(np.int32)
    return out


def key_strings(prefix: str, key_id: I64) -> npt.NDArray[np.str_]:
    """``prefix + str(key_id)`` for every id (the ``key`` column, and what string partitioning hashes)."""
    return np.char.add(prefix, key_id.astype(str))


def _source_values(ctx: Context, source: str, key_id: I64) -> npt.NDArray[Any]:
    if ctx.user is not None and ctx.user.column(source) is not None:
        return ctx.user.per_key_values(source, key_id)
    if source == "key_id":
        return key_id
    if source == "category":
        width = len(str(ctx.spec.categories - 1))
        return np.char.add("c", np.char.zfill(category_of(key_id, ctx.spec.categories).astype(str), width))
    return key_strings(ctx.spec.key_prefix, key_id)


def partition_ids(ctx: Context, column: PartitionColumn, key_id: I64) -> npt.NDArray[np.int32]:
    """Pinot partition ids of ``column`` for rows with these key ids (every routing column is per key)."""
    fn = get_partition_function(column.function, column.num_partitions, column.function_config)
    user = ctx.user.column(column.source) if ctx.user is not None else None
    data_type = user.data_type if user is not None else None
    ids: npt.NDArray[np.int32] = per_key(
        key_id, lambda k: fn.get_partitions(_source_values(ctx, column.source, k), data_type))
    return ids.astype(np.int32)


def same_function(a: PartitionColumn, b: PartitionColumn) -> bool:
    """True when two partition columns give every row the same id (same values, function and count)."""
    return (a.source, a.function.lower(), a.num_partitions, dict(a.function_config or {})) == (
        b.source, b.function.lower(), b.num_partitions, dict(b.function_config or {}))


# -- popularity mode ------------------------------------------------------------------------------------
def _delays_ms(ctx: Context, rng: np.random.Generator, n: int) -> I64:
    """Ingestion delay of each event: jitter for all, plus lateness for the late share, capped."""
    d = ctx.spec.disorder
    delay = rng.exponential(d.jitter_ms, n) if d.jitter_ms > 0 else np.zeros(n)
    late = rng.random(n) < d.late_fraction
    if late.any():
        delay[late] += d.lateness_s.sample(rng, int(late.sum())) * 1000.0
    return np.floor(np.minimum(delay, d.max_lateness_s * 1000.0)).astype(np.int64)


def popularity_block(ctx: Context, block: int) -> Staged:
    """Events ``block * block_size`` onwards (popularity mode), in arrival order."""
    spec = ctx.spec
    rng = rng_for(ctx.seed, STREAM_EVENTS, block)
    first = block * ctx.block_size
    ids = np.arange(first, min(first + ctx.block_size, spec.events), dtype=np.int64)
    shares = (ids + rng.random(len(ids))) / spec.events
    ingest = ctx.t0_ms + np.floor(ctx.profile.arrival_seconds(shares) * 1000).astype(np.int64)
    ingest = np.minimum(ingest, ctx.t_end_ms - 1)
    u = rng.random(len(ids))
    if spec.key_distribution == "zipf":
        key_id = scatter_keys(zipf_ranks(u, spec.keys, spec.zipf_s), spec.keys, ctx.seed)
    else:
        key_id = np.minimum(np.floor(u * spec.keys).astype(np.int64), spec.keys - 1)
    delay = _delays_ms(ctx, rng, len(ids))
    value = rng.lognormal(math.log(VALUE_MEDIAN), 1.0, len(ids))
    return Staged(key_id, ingest - delay, ingest, np.zeros(len(ids), dtype=bool),
                  np.full(len(ids), -1, dtype=np.int32), value)


# -- lifecycle mode -------------------------------------------------------------------------------------
def _update_fractions(rng: np.random.Generator, n: I64) -> tuple[I64, F64, npt.NDArray[np.int32]]:
    """Owner index, position in [0, 1] of each update within its key's lifetime, and update number."""
    owner = np.repeat(np.arange(len(n)), n)
    starts = np.concatenate([[0], np.cumsum(n)[:-1]])
    seq = (np.arange(int(n.sum())) - starts[owner]).astype(np.int32)
    frac = rng.random(len(owner))
    frac[seq == 0] = 0.0
    frac[(seq == n[owner] - 1) & (n[owner] > 1)] = 1.0
    order = np.lexsort((frac, owner))
    return owner, frac[order], seq


def lifecycle_block(ctx: Context, block: int) -> Staged:
    """Events of keys ``block * block_size`` onwards (lifecycle mode) that arrive within the span."""
    life = ctx.spec.lifecycle
    assert life is not None
    rng = rng_for(ctx.seed, STREAM_KEYS, block)
    first = block * ctx.block_size
    keys = np.arange(first, min(first + ctx.block_size, ctx.keys_total), dtype=np.int64)
    m = len(keys)
    n = np.maximum(1, np.rint(life.updates_per_key.sample(rng, m))).astype(np.int64)
    lifetime = np.minimum(life.lifetime_s.sample(rng, m), life.max_lifetime_s)
    birth = ctx.profile.arrival_seconds((keys + rng.random(m)) / ctx.keys_total)
    deletes = (rng.random(m) < life.delete_fraction) & (n > 1)
    owner, frac, seq = _update_fractions(rng, n)
    event = ctx.t0_ms + np.floor((birth[owner] + lifetime[owner] * frac) * 1000).astype(np.int64)
    ingest = event + _delays_ms(ctx, rng, len(owner))
    value = rng.lognormal(math.log(VALUE_MEDIAN), 1.0, len(owner))
    staged = Staged(keys[owner], event, ingest, deletes[owner] & (seq == n[owner] - 1), seq, value)
    return staged.take(np.flatnonzero(ingest < ctx.t_end_ms))


# -- buckets, staging and counts ----------------------------------------------------------------------
def _offline_buckets(ctx: Context, block: int, staged: Staged, partition: npt.NDArray[np.int32]) -> I64:
    """(batch, file) bucket of each row: batch by event time, file by partition unless impure."""
    files = ctx.offline_files
    rng = rng_for(ctx.seed, STREAM_OFFLINE, block)
    stray = rng.random(len(staged)) >= ctx.spec.offline.purity
    file = np.where(stray, rng.integers(0, files, len(staged)), partition % files)
    batch = np.floor_divide(staged.event_time_ms - ctx.t0_ms, ctx.batch_ms) - ctx.batch_lo
    return batch * files + file


def _windows_of(ctx: Context, block: int, staged: Staged) -> I64:
    if ctx.mode == "popularity":
        return np.full(len(staged), block, dtype=np.int64)
    edges = np.asarray(ctx.window_edges_ms[1:-1], dtype=np.int64)
    return np.searchsorted(edges, staged.ingest_time_ms, side="right").astype(np.int64)


def _bucket_ranges(bucket: I64, event_ms: I64) -> tuple[I64, I64, I64]:
    order = np.lexsort((event_ms, bucket))
    b = bucket[order]
    starts = np.flatnonzero(np.concatenate([[True], b[1:] != b[:-1]])) if len(b) else np.zeros(0, np.int64)
    ends = np.concatenate([starts[1:], [len(b)]]).astype(np.int64)
    return b[starts], event_ms[order][starts], event_ms[order][ends - 1]


def stage_path(stage: Path, window: int, block: int) -> Path:
    """Where block ``block`` stages its rows of window ``window`` (pass B reads them in block order)."""
    return stage / f"w{window:06d}" / f"b{block:06d}.arrow"


def run_block(ctx: Context, stage: str, block: int) -> BlockCounts:
    """Pass A for one block: draw its events, stage them per window, return the counts.

    Parameters
    ----------
    ctx
        The generation context (identical on every task).
    stage
        The staging directory inside the output being written (visible to every executor).
    block
        Block index, ``0 <= block < ctx.n_blocks``; the block's random stream is derived from it.

    Returns
    -------
    BlockCounts
        Rows per (window, bucket, arrival bin), and offline buckets' event-time ranges.
    """
    staged = lifecycle_block(ctx, block) if ctx.mode == "lifecycle" else popularity_block(ctx, block)
    partition = partition_ids(ctx, ctx.stream, staged.key_id)
    bucket = partition.astype(np.int64) if ctx.realtime else _offline_buckets(ctx, block, staged, partition)
    window = _windows_of(ctx, block, staged)
    time_bin = (staged.ingest_time_ms - ctx.t0_ms) // ctx.bin_ms if ctx.realtime else np.zeros(len(staged), np.int64)
    present = np.flatnonzero(np.bincount(window - window.min())) + window.min() if len(window) else window
    for w in present.tolist():
        rows = np.flatnonzero(window == w)
        path = stage_path(Path(stage), int(w), block)
        path.parent.mkdir(parents=True, exist_ok=True)
        table = staged.take(rows).to_arrow(partition=partition[rows], bucket=bucket[rows])
        feather.write_feather(table, str(path), compression="uncompressed")
    n_bins = ctx.n_bins if ctx.realtime else 1
    windows, bucket_of, time_bins, count = _count(window, bucket, time_bin, ctx.n_buckets, n_bins)
    if ctx.realtime:
        buckets = lo = hi = np.zeros(0, dtype=np.int64)
    else:
        buckets, lo, hi = _bucket_ranges(bucket, staged.event_time_ms)
    return BlockCounts(windows, bucket_of, time_bins, count, buckets, lo, hi)


def _count(window: I64, bucket: I64, time_bin: I64, n_buckets: int, n_bins: int) -> tuple[I64, I64, I64, I64]:
    """Rows per (window, bucket, bin): a bincount over the block's dense range, else a sort."""
    if not len(window):
        z = np.zeros(0, dtype=np.int64)
        return z, z, z, z
    w0, b0 = int(window.min()), int(time_bin.min())
    spans = (int(window.max()) - w0 + 1, n_buckets, int(time_bin.max()) - b0 + 1)
    combined = ((window - w0) * spans[1] + bucket) * spans[2] + (time_bin - b0)
    if spans[0] * spans[1] * spans[2] <= 4 * len(window) + 1024:
        dense = np.bincount(combined, minlength=spans[0] * spans[1] * spans[2])
        combos = np.flatnonzero(dense)
        count = dense[combos]
    else:
        combos, count = np.unique(combined, return_counts=True)
    wb, time_bins = np.divmod(combos, spans[2])
    windows, bucket_of = np.divmod(wb, spans[1])
    return windows + w0, bucket_of, time_bins + b0, count.astype(np.int64)
