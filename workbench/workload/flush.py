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
- a size-based table (``threshold.rows`` 0 or ``threshold.segment.size``): Pinot tunes the rows from
  the bytes per row of the segments it commits, which the generator does not know; ``segment_rows``
  (as written, or its default) stands for the rows that tuning settles on (the size warning of
  ``validate`` and the run summary says when the segments come out far from Pinot's range).

Precedence: a ``segment_rows`` or ``segment_time_s`` written in ``workload.generate`` wins over the table
(a what-if on the threshold, as notebook 02 sweeps it), and ``validate`` warns, naming both values
(:func:`flush_notes`). The division by partitions per server is taken for the scenario's
``cluster.servers``: a sweep over servers reuses the data generated once, as a cluster keeps its
segments when servers are added.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass

from workbench.errors import TableConfigError
from workbench.pinot.flush import FlushConfig, max_partitions_per_instance, stream_config_map
from workbench.pinot.table_config import TableConfig
from workbench.workload.spec import GenerateSpec

__all__ = ["TableFlush", "flush_notes", "resolve_flush", "table_flush"]


@dataclass(frozen=True)
class TableFlush:
    """What the table's stream config makes of a consuming segment: its row threshold (``None``: size-based,
    tuned by Pinot), its time threshold, and the rule in words."""

    rows: int | None
    time_s: float
    rule: str
    time_stated: bool


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
    return TableFlush(flush.segment_rows(per_server), flush.time_ms / 1000, flush.rule(per_server),
                      flush.time_stated)


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
    if "segment_time_s" not in written:
        changes["segment_time_s"] = flush.time_s
    return dataclasses.replace(spec, **changes) if changes else spec  # type: ignore[arg-type]


def flush_notes(spec: GenerateSpec | None, table: TableConfig, servers: tuple[str, ...]) -> list[str]:
    """Sentences for ``validate``: a generate key (of the resolved ``spec``) that overrides a threshold the table
    states for these ``servers``, naming both."""
    if spec is None:
        return []
    flush = table_flush(table, spec.partitions, servers)
    if flush is None:
        return []
    notes = []
    if flush.rows is not None and spec.segment_rows != flush.rows:
        notes.append(f"workload.generate.segment_rows {spec.segment_rows} overrides the table's flush threshold "
                     f"({flush.rule}: {flush.rows} rows per segment); remove segment_rows to cut segments as Pinot "
                     "would")
    if flush.time_stated and spec.segment_time_s != flush.time_s:
        written = "none" if spec.segment_time_s is None else f"{spec.segment_time_s:g} s"
        notes.append(f"workload.generate.segment_time_s {written} overrides the table's "
                     f"realtime.segment.flush.threshold.time ({flush.time_s:g} s); remove segment_time_s to cut "
                     "segments as Pinot would")
    return notes
