"""The generator cuts a realtime table's segments where Pinot would: the table's flush thresholds.

A scenario's ``workload.generate`` is resolved against its table when it is loaded
(:func:`resolve_flush`), so everything downstream (``workbench generate``, the in-process engine, the
layout ``validate`` predicts, the limits) reads one spec:

- a table that states no flush threshold (no ``realtime.segment.flush.*`` key in its stream config), an
  OFFLINE table, or a bare spec: ``segment_rows`` / ``segment_time_s`` as written (data unchanged);
- a table that states one: ``segment_rows`` becomes the rows Pinot gives each consuming segment
  (:class:`workbench.pinot.flush.FlushConfig`: ``threshold.rows`` divided by the most stream
  partitions a server consumes, for the scenario's servers, replicas and replica groups; or
  ``threshold.segment.rows`` as is) and ``segment_time_s`` the table's ``threshold.time`` (Pinot's 6 h when
  the table leaves it out);
- a size-based table (``threshold.rows`` 0 or ``threshold.segment.size``): ``segment_size`` becomes the
  table's ``threshold.segment.size`` (Pinot's 200 MiB when only ``rows`` 0 says so) and
  ``segment_initial_rows`` its ``realtime.segment.flush.autotune.initialRows`` (100,000), and the
  generator cuts each partition with the successive thresholds Pinot 1.5.1's controller gives
  (:mod:`workbench.pinot.flush_size`): 100,000 rows first, then towards the desired size over the bytes
  per row of the committed segments, here the generator's own row size
  (:func:`workbench.workload.row_size.mean_row_bytes`, the model behind ``segments.parquet``
  ``size_bytes``), and 1.1 x the rows a segment the time threshold sealed got.

Precedence: a ``segment_rows``, ``segment_size`` or ``segment_time_s`` written in ``workload.generate``
wins over the table (a what-if on the threshold, as notebook 02 sweeps it; ``segment_size``, when set,
wins over ``segment_rows``), and ``validate`` warns, naming both values (:func:`flush_notes`; for a
size-based table, with the rows its thresholds settle on). The division by partitions per server is taken
for the scenario's ``cluster.servers``: a sweep over servers reuses the data generated once, as a cluster
keeps its segments when servers are added.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from dataclasses import dataclass

from workbench.errors import TableConfigError
from workbench.pinot.flush import (
    DEFAULT_FLUSH_AUTOTUNE_INITIAL_ROWS,
    DEFAULT_FLUSH_THRESHOLD_SEGMENT_SIZE_BYTES,
    FlushConfig,
    max_partitions_per_instance,
    stream_config_map,
)
from workbench.pinot.flush_size import SegmentStep, settled_rows, size_based_sequence
from workbench.pinot.table_config import TableConfig
from workbench.workload.spec import GenerateSpec

__all__ = ["TableFlush", "flush_notes", "resolve_flush", "size_based_segments", "table_flush"]


@dataclass(frozen=True)
class TableFlush:
    """What the table's stream config makes of a consuming segment: its row threshold (``None``: size-based,
    tuned by Pinot towards ``segment_size`` bytes from ``initial_rows``), its time threshold, and the rule in
    words."""

    rows: int | None
    time_s: float
    rule: str
    time_stated: bool
    segment_size: int | None = None
    initial_rows: int = DEFAULT_FLUSH_AUTOTUNE_INITIAL_ROWS


def _partitions_per_server(table: TableConfig, partitions: int, servers: tuple[str, ...]) -> int:
    """The most stream partitions one server consumes, from the table's CONSUMING instance partitions."""
    from workbench.pinot.assignment import Instance, server_tag
    from workbench.pinot.rebalance import table_instance_partitions

    tags = tuple(dict.fromkeys(server_tag(table, k) for k in ("CONSUMING", "COMPLETED")))
    try:
        ips = table_instance_partitions(table, [Instance(s, tags=tags, pools=dict.fromkeys(tags, 0)) for s in servers])
        ip = ips["CONSUMING"]
    except (TableConfigError, KeyError):  # a shape the layout check rejects with its own message later
        return max_partitions_per_instance(partitions, table.replication, len(servers), replica_groups=False)
    grouped = ip.num_replica_groups > 1
    return max_partitions_per_instance(partitions, table.replication, len(ip.instances(0, 0)),
                                       replica_groups=grouped)


def table_flush(table: TableConfig, partitions: int, servers: tuple[str, ...]) -> TableFlush | None:
    """The table's flush thresholds for ``partitions`` stream partitions on ``servers``; ``None`` for an
    OFFLINE table or one whose stream config states no flush threshold."""
    if table.table_type != "REALTIME":
        return None
    found = stream_config_map(table)
    if found is None:
        return None
    where, cfg = found
    try:
        flush = FlushConfig.of(cfg, where)
    except TableConfigError as exc:
        raise TableConfigError(f"table.{exc.where}", exc.problem) from None
    if not flush.stated:
        return None
    per_server = _partitions_per_server(table, partitions, servers)
    size = None
    if flush.size_based:
        size = flush.segment_size_bytes if flush.segment_size_bytes > 0 else DEFAULT_FLUSH_THRESHOLD_SEGMENT_SIZE_BYTES
    return TableFlush(flush.segment_rows(per_server), flush.time_ms / 1000, flush.rule(per_server),
                      flush.time_stated, size, flush.initial_rows)


def resolve_flush(spec: GenerateSpec, written: Collection[str], table: TableConfig,
                  servers: tuple[str, ...]) -> GenerateSpec:
    """``spec`` with the table's thresholds where ``written`` (the generate keys the scenario sets) leaves them
    to the table (module docstring)."""
    flush = table_flush(table, spec.partitions, servers)
    if flush is None:
        return spec
    changes: dict[str, object] = {}
    if "segment_rows" not in written and flush.rows is not None:
        changes["segment_rows"] = max(1, flush.rows)
    if flush.segment_size is not None and "segment_rows" not in written:
        if "segment_size" not in written:
            changes["segment_size"] = float(flush.segment_size)
        if "segment_initial_rows" not in written:
            changes["segment_initial_rows"] = flush.initial_rows
    if "segment_time_s" not in written:
        changes["segment_time_s"] = flush.time_s
    return dataclasses.replace(spec, **changes) if changes else spec  # type: ignore[arg-type]


def size_based_segments(spec: GenerateSpec, bytes_per_row: float, segment_size: int | None = None,
                        initial_rows: int | None = None) -> list[SegmentStep]:
    """The segments of one stream partition under size-based flushing towards ``segment_size`` (default the
    spec's), at the partition's mean rate (``events / partitions / span_s``) and the spec's time threshold:
    each one's threshold and rows, the last being the consuming one (the layout ``validate`` predicts)."""
    size = int(segment_size or spec.segment_size or DEFAULT_FLUSH_THRESHOLD_SEGMENT_SIZE_BYTES)
    per_partition = max(1, spec.events // spec.partitions)
    time_ms = int(spec.segment_time_s * 1000) if spec.segment_time_s is not None else 1 << 62
    return size_based_sequence(desired_bytes=size, initial_rows=initial_rows or spec.segment_initial_rows,
                               bytes_per_row=bytes_per_row, rows_per_s=per_partition / spec.span_s, time_ms=time_ms,
                               segments=per_partition, until_rows=per_partition)


def _settles(spec: GenerateSpec, flush: TableFlush, bytes_per_row: float) -> str:
    """What the table's size-based thresholds come to for this spec's stream, in words."""
    assert flush.segment_size is not None
    steps = size_based_segments(spec, bytes_per_row, flush.segment_size, flush.initial_rows)
    sealed = steps[:-1]
    if not sealed:
        return (f"{flush.initial_rows:,} rows per segment first; the generated span seals none "
                f"({steps[-1].rows:,} rows a partition)")
    rows, first = settled_rows(sealed)
    return (f"{sealed[0].rows:,} rows first, settling on {rows:,} rows per segment (about "
            f"{rows * bytes_per_row / 1e6:,.3g} MB at {bytes_per_row:.0f} B a row) from segment {first} of "
            f"{len(sealed)} sealed per partition")


def flush_notes(spec: GenerateSpec | None, table: TableConfig, servers: tuple[str, ...],
                bytes_per_row: Callable[[], float] | None = None) -> list[str]:
    """Sentences for ``validate``: a generate key (of the resolved ``spec``) that overrides a threshold the table
    states for these ``servers``, naming both; for a size-based table, with what its thresholds would settle on
    at ``bytes_per_row()`` bytes a row (the generator's row size,
    :func:`workbench.workload.row_size.spec_row_bytes`)."""
    if spec is None:
        return []
    flush = table_flush(table, spec.partitions, servers)
    if flush is None:
        return []
    notes = []
    if flush.rows is not None and spec.segment_size is not None:
        notes.append(f"workload.generate.segment_size {spec.segment_size:,.0f} bytes overrides the table's flush "
                     f"threshold ({flush.rule}: {flush.rows} rows per segment); remove segment_size to cut "
                     "segments as Pinot would")
    elif flush.rows is not None and spec.segment_rows != flush.rows:
        notes.append(f"workload.generate.segment_rows {spec.segment_rows} overrides the table's flush threshold "
                     f"({flush.rule}: {flush.rows} rows per segment); remove segment_rows to cut segments as Pinot "
                     "would")
    if flush.segment_size is not None and spec.segment_size != flush.segment_size:
        written = (f"segment_rows {spec.segment_rows}" if spec.segment_size is None
                   else f"segment_size {spec.segment_size:,.0f} bytes")
        settles = f": {_settles(spec, flush, bytes_per_row())}" if bytes_per_row is not None else ""
        notes.append(f"workload.generate.{written} overrides the table's flush threshold ({flush.rule}"
                     f"{settles}); remove {written.split()[0]} to cut segments as Pinot would")
    if flush.time_stated and spec.segment_time_s != flush.time_s:
        written = "none" if spec.segment_time_s is None else f"{spec.segment_time_s:g} s"
        notes.append(f"workload.generate.segment_time_s {written} overrides the table's "
                     f"realtime.segment.flush.threshold.time ({flush.time_s:g} s); remove segment_time_s to cut "
                     "segments as Pinot would")
    return notes
