"""Everything a generation task needs, resolved once on the driver and shipped to every task.

The context is a frozen, picklable value: the spec, the seed, the table's partitioning and type, the
rate profile, and the derived sizes (blocks of events or keys, ingestion windows, time bins). Tasks
read it and never draw a random number from anywhere but :func:`~workbench.workload.timeline.rng_for`
with a block index, which is what makes the output independent of how Spark spreads the tasks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from workbench.errors import InputError
from workbench.pinot.schema import Schema
from workbench.pinot.table_config import TableConfig
from workbench.workload.spec import GenerateSpec
from workbench.workload.timeline import F64, RateProfile, rng_for
from workbench.workload.user_schema import UserSchema, build_user_schema

__all__ = ["EPOCH_START_MS", "NOT_PARTITIONABLE", "PARTITIONABLE", "TIME_COLUMN", "Context", "PartitionColumn",
           "build_context", "check_partitioning", "user_schema"]

#: Events start here (2026-01-01T00:00:00Z) so segment names and times look like production.
EPOCH_START_MS = 1_767_225_600_000
#: Events (popularity mode) or keys (lifecycle mode) per block: the unit of randomness and of work.
#: The data depends on them (a block is one random stream), so they are constants, not settings.
EVENT_BLOCK = 1 << 19
KEY_BLOCK = 1 << 17
#: Columns a partition function may read, and how their values are formed.
PARTITIONABLE = ("key", "key_id", "category")
#: Generated columns no partition function may read: a table partitioned by one cannot be generated
#: (any other name is written as a copy of ``key``). ``workbench validate`` checks this too
#: (:mod:`workbench.scenario.columns`), so the mistake is not found after Spark has started.
NOT_PARTITIONABLE = ("event_id", "event_time_ms", "ingest_time_ms", "partition", "offset", "segment_name",
                     "doc_id", "is_delete", "update_seq", "value")
#: The generated table's time column, whatever the table config's ``timeColumnName``: the queries
#: filter on it and the segments' start and end times are its range.
TIME_COLUMN = "event_time_ms"

# Random streams (the second element of every seed sequence).
STREAM_EVENTS, STREAM_KEYS, STREAM_OFFLINE, STREAM_QUERIES, STREAM_CALIBRATE = 1, 2, 3, 4, 5
#: (stream 6 is the user-schema columns' metrics: :data:`workbench.workload.user_schema.STREAM_COLUMNS`)
SALT_CATEGORY = 11


@dataclass(frozen=True)
class PartitionColumn:
    """One partition function applied to one generated column.

    ``source`` is the generated column whose values are hashed (``key`` for a table column that the
    generator does not produce, which is then written as a copy of ``key`` under ``column``).
    """

    column: str
    source: str
    function: str
    num_partitions: int
    function_config: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Context:
    """The resolved generation plan shared by the driver and every task (see module docstring)."""

    spec: GenerateSpec
    seed: int
    table: str
    table_type: Literal["REALTIME", "OFFLINE"]
    mode: Literal["popularity", "lifecycle"]
    t0_ms: int
    span_ms: int
    profile: RateProfile
    stream: PartitionColumn
    table_partitions: tuple[PartitionColumn, ...]
    alias_columns: tuple[str, ...]
    bin_ms: int
    n_bins: int
    n_blocks: int
    block_size: int
    window_edges_ms: tuple[int, ...]
    keys_total: int
    offline_files: int
    batch_lo: int
    comparison_column: str
    time_column: str
    #: The user's schema when the rows are generated from it (``from_schema``), else ``None``.
    user: UserSchema | None = None

    @property
    def t_end_ms(self) -> int:
        """End of the span (exclusive): "now" for the data."""
        return self.t0_ms + self.span_ms

    @property
    def n_windows(self) -> int:
        """Ingestion-time windows; each becomes one Parquet part file of ``events/``."""
        return len(self.window_edges_ms) - 1 if self.mode == "lifecycle" else self.n_blocks

    @property
    def realtime(self) -> bool:
        return self.table_type == "REALTIME"

    @property
    def batch_ms(self) -> int:
        """Offline push batch width in ms."""
        return int(self.spec.offline.batch_s * 1000)

    @property
    def n_buckets(self) -> int:
        """Distinct buckets: stream partitions (realtime) or (batch, file) pairs (offline)."""
        if self.realtime:
            return self.stream.num_partitions
        batches = math.ceil(self.span_ms / self.batch_ms) - self.batch_lo + 1
        return batches * self.offline_files

    @property
    def max_delay_ms(self) -> int:
        return int(self.spec.disorder.max_lateness_s * 1000)


def _resolve_column(name: str, where: str, user: UserSchema | None = None) -> str:
    if user is not None:  # the user's column, whose values are a function of the key
        column = user.column(name)
        if column is None or column.role not in ("key", "per_key") or column.key_index:
            raise InputError(where, f"the generator cannot partition by {name!r}: partition by the schema's first "
                                    "primary key column or a dimension the schema has")
        return name
    if name in PARTITIONABLE:
        return name
    if name in NOT_PARTITIONABLE:
        raise InputError(where, f"the generator cannot partition by {name!r}; use one of {', '.join(PARTITIONABLE)}")
    return "key"  # a table column the generator does not make: written as a copy of the key


def _table_partitions(config: TableConfig | None, user: UserSchema | None = None) -> tuple[PartitionColumn, ...]:
    if config is None:
        return ()
    out = []
    for column, entry in config.column_partition_map.items():
        where = f"tableIndexConfig.segmentPartitionConfig.columnPartitionMap.{column}"
        out.append(PartitionColumn(column, _resolve_column(column, where, user), entry.function_name,
                                   entry.num_partitions, entry.function_config))
    return tuple(out)


def _stream_partitioning(spec: GenerateSpec, table: tuple[PartitionColumn, ...],
                         user: UserSchema | None = None) -> PartitionColumn:
    p = spec.partitioning
    default = "key" if user is None else (user.primary_key[:1] or (user.time_column,))[0]
    column = p.column or (table[0].column if table else default)
    match = next((t for t in table if t.column == column), None)
    function = p.function or (match.function if match else "Murmur")
    config = p.function_config if p.function_config is not None else (
        match.function_config if match and function.lower() == match.function.lower() else None)
    if user is not None and not p.column and not table and not user.primary_key:
        # no key in the user's table: the producer spreads rows by the generator's hidden key
        return PartitionColumn("$key_id", "key_id", p.function or "Murmur", spec.partitions, p.function_config)
    source = match.source if match else _resolve_column(column, "workload.generate.partitioning.column", user)
    from workbench.pinot.partition import get_partition_function

    get_partition_function(function, spec.partitions, config)  # fail on the driver, not in a task
    return PartitionColumn(column, source, function, spec.partitions, config)


def user_schema(spec: GenerateSpec, table_config: TableConfig | None, schema: Schema | None) -> UserSchema | None:
    """The user's schema resolved for generation when ``spec.from_schema``, else ``None``.

    Raises
    ------
    InputError
        ``from_schema`` without a schema, or a column the generator cannot produce (named).
    """
    if not spec.from_schema:
        return None
    if schema is None:
        raise InputError("workload.generate.from_schema", "generates the scenario schema's columns, but the scenario "
                                                          "has no schema; add schema: (your Pinot schema JSON)")
    return build_user_schema(schema, table_config, spec)


def check_partitioning(spec: GenerateSpec, table_config: TableConfig | None, schema: Schema | None = None) -> None:
    """Fail now, not inside a Spark task, when the table or the producer partitions by a column the
    generator cannot hash, or names an unknown function, or (``from_schema``) the schema has a column
    the generator cannot produce: what :func:`build_context` resolves first. ``workbench validate``
    calls it for every scenario that generates its data."""
    user = user_schema(spec, table_config, schema)
    _stream_partitioning(spec, _table_partitions(table_config, user), user)


def _bins(spec: GenerateSpec, span_ms: int) -> tuple[int, int]:
    """Time-bin width (ms) for counting arrivals: sealing by time is checked at bin edges."""
    width = max(1000, span_ms // 100_000)
    if spec.segment_time_s is not None:
        width = min(width, max(1, int(spec.segment_time_s * 1000) // 20))
    return width, max(1, math.ceil(span_ms / width))


def _lifecycle_keys(spec: GenerateSpec, profile: RateProfile, seed: int) -> int:
    """Keys to create so that about ``events`` events arrive within the span.

    A Monte Carlo over 20,000 keys (its own random stream) measures the mean number of events per
    key that arrive before the span ends, which accounts for the rounding of ``updates_per_key`` and
    for lifecycles cut short by the end of the span.
    """
    life = spec.lifecycle
    assert life is not None
    rng = rng_for(seed, STREAM_CALIBRATE)
    m = 20_000
    n = np.maximum(1, np.rint(life.updates_per_key.sample(rng, m))).astype(np.int64)
    lifetime = np.minimum(life.lifetime_s.sample(rng, m), life.max_lifetime_s)
    birth = profile.arrival_seconds(rng.random(m))
    frac = rng.random(int(n.sum()))
    owner = np.repeat(np.arange(m), n)
    when = birth[owner] + lifetime[owner] * np.where(n[owner] > 1, frac, 0.0)
    kept = float((when < profile.span_s).sum()) / m
    return max(1, round(spec.events / max(kept, 1e-9)))


def _windows(profile: RateProfile, t0_ms: int, span_ms: int, bin_ms: int, expected: float, per_window: int,
             ) -> tuple[int, ...]:
    """Window edges (epoch ms, on bin edges) holding about ``per_window`` events each."""
    count = max(1, math.ceil(expected / per_window))
    seconds: F64 = profile.arrival_seconds(np.linspace(0.0, 1.0, count + 1))
    bins = np.unique(np.rint(seconds * 1000 / bin_ms).astype(np.int64))
    edges = [t0_ms + int(b) * bin_ms for b in bins[1:-1] if 0 < b * bin_ms < span_ms]
    return (t0_ms, *edges, t0_ms + span_ms)


def build_context(
    spec: GenerateSpec, *, table: str, table_config: TableConfig | None, seed: int,
    blocks: tuple[int, int] | None = None, schema: Schema | None = None,
) -> Context:
    """Resolve ``spec`` against the table config (and, with ``from_schema``, the user's ``schema``) into
    the plan every task follows.

    ``blocks`` overrides ``(EVENT_BLOCK, KEY_BLOCK)``, for tests that need many blocks from few
    events; it changes the data, as a different seed would.

    Raises
    ------
    InputError
        A partition column the generator cannot produce values for, or an unknown partition
        function (named by its key path).
    """
    span_ms = round(spec.span_s * 1000)
    t0 = EPOCH_START_MS
    profile = RateProfile.build(spec.rate, span_ms / 1000, t0 / 1000, seed)
    user = user_schema(spec, table_config, schema)
    table_parts = _table_partitions(table_config, user)
    stream = _stream_partitioning(spec, table_parts, user)
    bin_ms, n_bins = _bins(spec, span_ms)
    table_type: Literal["REALTIME", "OFFLINE"] = "OFFLINE" if (
        table_config is not None and table_config.table_type == "OFFLINE") else "REALTIME"
    lifecycle = spec.lifecycle is not None
    keys_total = _lifecycle_keys(spec, profile, seed) if lifecycle else spec.keys
    event_block, key_block = blocks or (EVENT_BLOCK, KEY_BLOCK)
    block_size = key_block if lifecycle else event_block
    windows = _windows(profile, t0, span_ms, bin_ms, spec.events, event_block) if lifecycle else ()
    n_blocks = math.ceil((keys_total if lifecycle else spec.events) / block_size)
    files = spec.offline.files or (table_parts[0].num_partitions if table_parts else spec.partitions)
    upsert = table_config.upsert if table_config is not None else None
    comparison = list(upsert.comparison_columns) if upsert is not None else []
    known = ("event_time_ms", "ingest_time_ms", "update_seq", "offset")
    aliases = () if user is not None else tuple(sorted({p.column for p in (*table_parts, stream)
                                                        if p.column != p.source}))
    name = table_config.table_name if table_config is not None else table
    return Context(
        spec=spec, seed=seed, table=name, table_type=table_type,
        mode="lifecycle" if lifecycle else "popularity", t0_ms=t0, span_ms=span_ms, profile=profile,
        stream=stream, table_partitions=table_parts, alias_columns=aliases, bin_ms=bin_ms, n_bins=n_bins,
        n_blocks=n_blocks, block_size=block_size, window_edges_ms=windows, keys_total=keys_total, offline_files=files,
        batch_lo=-math.ceil(spec.disorder.max_lateness_s * 1000 / (spec.offline.batch_s * 1000)) - 1,
        comparison_column=comparison[0] if comparison and comparison[0] in known else "event_time_ms",
        time_column=TIME_COLUMN if user is None else user.time_column, user=user,
    )
