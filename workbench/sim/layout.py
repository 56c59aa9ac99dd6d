"""Where segments live: the table's segments and Pinot's assignment of their replicas to servers.

The layout is the ideal state the broker routes from, built with the real replica-group instance
assignment and segment assignment of :mod:`workbench.pinot.assignment`, the same path a rebalance
plan starts from (:func:`workbench.pinot.rebalance.initial_ideal_state`): OFFLINE segments by the
table's strategy; consuming segments by stream partition; REALTIME completed segments by the table's
strategy on the COMPLETED instance partitions when the table relocates them (a COMPLETED instance
assignment config or ``tagOverrideConfig.realtimeCompleted``), else where their partition is consumed,
as in Pinot, so a table with fewer stream partitions than servers leaves servers without data; every
segment of an upsert or dedup table on its stream partition's consuming servers. Synthetic layouts
make ``servers x segments_per_server / replication`` equal segments, each its own stream partition;
generated layouts read the segments Spark built.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.errors import InputError, TableConfigError
from workbench.pinot.assignment import (
    Instance,
    InstancePartitions,
    partition_column,
    segment_partition_id,
    server_tag,
)
from workbench.pinot.rebalance import initial_ideal_state, table_instance_partitions
from workbench.pinot.segment import SegmentMetadata
from workbench.pinot.table_config import TableConfig
from workbench.scenario import Scenario
from workbench.sim.planner import segment_metadata
from workbench.workload.directory import read_segments

__all__ = ["Layout", "assign_layout", "build_layout", "offline_partition_of", "routing_instance_partitions"]


@dataclass(frozen=True)
class Layout:
    """Segments (name, docs, consuming flag), the ideal state, and per segment the replica server indices."""

    servers: tuple[str, ...]
    segments: tuple[str, ...]
    docs: np.ndarray
    consuming: np.ndarray
    ideal_state: Mapping[str, Mapping[str, str]]
    replicas: tuple[tuple[int, ...], ...]
    #: Segment metadata as the broker's pruners read it (generated or imported segments only).
    metadata: Mapping[str, SegmentMetadata] | None = None
    #: Each segment's stream partition (a synthetic segment is its own partition).
    partitions: np.ndarray | None = None
    #: Instance partitions the broker routes from, by table name with type (``multiStageReplicaGroup`` only).
    instance_partitions: Mapping[str, InstancePartitions] | None = None

    @property
    def num_servers(self) -> int:
        return len(self.servers)


def _instances(table: TableConfig, servers: tuple[str, ...]) -> list[Instance]:
    kinds = ("OFFLINE",) if table.table_type == "OFFLINE" else ("CONSUMING", "COMPLETED")
    tags = tuple(dict.fromkeys(server_tag(table, k) for k in kinds))
    return [Instance(name, tags=tags, pools=dict.fromkeys(tags, 0)) for name in servers]


def offline_partition_of(table: TableConfig, metadata: Mapping[str, SegmentMetadata] | None
                         ) -> Callable[[str], int]:
    """An OFFLINE segment's partition id as the controller's replica-group assignment reads it
    (``SegmentUtils.getSegmentPartitionIdOrDefault``, release-1.5.1): from its name, else from its ZK record's
    partition metadata (the table's partition column, or the only column; one partition id), else the name's
    hash. Without ``metadata`` (synthetic segments have no ZK record) the name decides.

    >>> from workbench.pinot.segment import ColumnPartitionMetadata
    >>> tc = TableConfig.from_json({"tableName": "t", "tableType": "OFFLINE"})
    >>> meta = {"t_0": SegmentMetadata("t_0", partitions={"id": ColumnPartitionMetadata("Murmur", 4, {3})})}
    >>> offline_partition_of(tc, meta)("t_0"), offline_partition_of(tc, None)("t_0")  # "t_0".hashCode() = 114469
    (3, 4469)
    """
    column = partition_column(table)
    known = {name: {c: m.partitions for c, m in meta.partitions.items()} for name, meta in (metadata or {}).items()}
    return lambda name: segment_partition_id(name, known.get(name), column)


def assign_layout(table: TableConfig, servers: tuple[str, ...], names: tuple[str, ...],
                  consuming: np.ndarray, partitions: np.ndarray,
                  metadata: Mapping[str, SegmentMetadata] | None = None) -> dict[str, dict[str, str]]:
    """The ideal state Pinot's controller would build for these segments on these servers.

    Every server carries the table's server tags (including a ``tagOverrideConfig`` tag). Upsert and
    dedup tables use Pinot's ``StrictRealtimeSegmentAssignment``, which takes the CONSUMING instance
    partitions only: each server's primary-key map must see every segment of the partitions it serves.
    ``metadata``: the segments' ZK records, whose partition metadata places an OFFLINE segment of a partitioned
    replica-group table (:func:`offline_partition_of`).
    """
    replication = table.replication
    if replication > len(servers):
        raise InputError("table.segmentsConfig.replication", "needs at least as many servers as replicas: "
                         f"{replication} replicas on {len(servers)} servers")
    partition = dict(zip(names, (int(p) for p in partitions), strict=True))
    # OFFLINE segments take their partition as the controller does (name, else ZK metadata, else hash).
    partition_of = offline_partition_of(table, metadata) if table.table_type == "OFFLINE" else partition.__getitem__
    try:
        ips = table_instance_partitions(table, _instances(table, servers))
        if table.is_upsert or table.is_dedup:
            ips = {"CONSUMING": ips["CONSUMING"]}
        ideal = initial_ideal_state(table, ips, names, frozenset(n for n, c in zip(names, consuming, strict=True) if c),
                                    partition_of)
    except TableConfigError as exc:
        raise InputError(f"table.{exc.where}", exc.problem) from None
    return {n: ideal[n] for n in names}


def routing_instance_partitions(table: TableConfig, servers: tuple[str, ...]) -> dict[str, InstancePartitions]:
    """The instance partitions Pinot's ``MultiStageReplicaGroupSelector`` routes from, keyed by the table's name
    with type: OFFLINE ones for an offline table, CONSUMING ones for a realtime table (Pinot 1.5.1 reads only
    those, its TODO says COMPLETED ones are not supported); empty unless the table routes with that selector."""
    if table.instance_selector_type != "multiStageReplicaGroup":
        return {}
    kind = "OFFLINE" if table.table_type == "OFFLINE" else "CONSUMING"
    shared = (table.raw.get("instancePartitionsMap") or {}).get(kind)
    if shared:  # Pinot copies the named partitions (a colocated table's); the workbench models one table alone
        warnings.warn(f"table.instancePartitionsMap.{kind} names {shared!r}, pre-configured instance partitions the "
                      "workbench does not see: it routes from this table's own instance assignment instead; copy "
                      f"the instanceAssignmentConfigMap of table {shared.rsplit('_', 1)[0]!r} into this one to model "
                      "the colocated layout", UserWarning, stacklevel=3)
    try:
        ips = table_instance_partitions(table, _instances(table, servers))
    except TableConfigError as exc:
        raise InputError(f"table.{exc.where}", exc.problem) from None
    return {table.table_name_with_type: ips[kind]}


def _given(ideal_state: Mapping[str, Mapping[str, str]], names: tuple[str, ...],
           servers: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """A given ideal state, checked to place every segment of the table on servers of the cluster."""
    known = set(servers)
    out = {}
    for name in names:
        hosts = ideal_state.get(name)
        if not hosts:
            raise InputError(f"ideal_state.{name}", "places no replica of this segment of the table; give every "
                                                    "segment at least one server")
        unknown = sorted(set(hosts) - known)
        if unknown:
            raise InputError(f"ideal_state.{name}", f"names {unknown[0]!r}, not a server of this cluster "
                                                    f"(Server_0 .. Server_{len(servers) - 1})")
        out[name] = dict(hosts)
    return out


def _synthetic_count(ideal_state: Mapping[str, Mapping[str, str]], table: str) -> int:
    """How many of the synthetic segments ``<table>_0``, ``<table>_1``, ... ``ideal_state`` places."""
    def own(name: str) -> bool:
        head, _, tail = name.rpartition("_")
        return head == table and tail.isdigit()
    return sum(1 for name in ideal_state if own(name))


def build_layout(scenario: Scenario, data: Path | None = None,
                 ideal_state: Mapping[str, Mapping[str, str]] | None = None) -> Layout:
    """The layout for a scenario: synthetic, or the segments of a workload directory (``data``).

    ``ideal_state`` replaces the assignment Pinot would build from scratch (segment -> server ->
    state), e.g. the one a rebalance produced (:func:`workbench.pinot.rebalance.plan_rebalance`),
    which with ``minimizeDataMovement`` differs from a fresh assignment on the same servers.

    The layout lists every server of the cluster; the table's segments go to its tenant's servers only
    (:meth:`~workbench.scenario.Scenario.table_servers`: all of them without tenant isolation), as Pinot
    assigns a table over the servers tagged for its tenant.
    """
    servers = tuple(f"Server_{i}" for i in range(scenario.cluster.servers))
    tagged = tuple(servers[i] for i in scenario.table_servers())  # the table's tenant's servers
    table = scenario.table
    metadata = None
    if data is not None:
        t = read_segments(data)
        metadata = segment_metadata(t)
        names = tuple(str(s) for s in t["segment_name"])
        docs = t["total_docs"].to_numpy(dtype=float)
        consuming = (t["status"] == "IN_PROGRESS").to_numpy() if "status" in t else np.zeros(len(t), bool)
        partitions = t["partition"].to_numpy() if "partition" in t else np.zeros(len(t), int)
    else:
        synth = scenario.workload.synthetic
        per_server = synth.segments_per_server if synth else 1
        # a given ideal state keeps the table's data (a rebalance moves segments, it does not make more); a
        # tenant's holds every table's segments, of which this table's are named <tableName>_<i>
        count = _synthetic_count(ideal_state, table.table_name) if ideal_state is not None else \
            max(1, len(tagged) * per_server // table.replication)
        names = tuple(f"{table.table_name}_{i}" for i in range(count))
        docs = np.full(count, float(synth.docs_per_segment if synth else 1))
        consuming, partitions = np.zeros(count, bool), np.arange(count)
    ideal = assign_layout(table, tagged, names, consuming, partitions, metadata) if ideal_state is None else \
        _given(ideal_state, names, servers)
    index = {s: i for i, s in enumerate(servers)}
    replicas = tuple(tuple(index[s] for s in ideal[n]) for n in names)
    return Layout(servers, names, docs, consuming, ideal, replicas, metadata, np.asarray(partitions, dtype=np.int64),
                  routing_instance_partitions(table, tagged) or None)
