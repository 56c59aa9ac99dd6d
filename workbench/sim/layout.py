"""Where segments live: the table's segments and Pinot's assignment of their replicas to servers.

The layout is the ideal state the broker routes from, built with the real replica-group instance
assignment and segment assignment of :mod:`workbench.pinot.assignment`: OFFLINE segments by the
table's strategy, REALTIME sealed segments on the COMPLETED (else CONSUMING) instance partitions,
consuming segments by stream partition, and every segment of an upsert or dedup table on its stream
partition's consuming servers. Synthetic layouts make ``servers x segments_per_server /
replication`` equal segments; generated layouts read the segments Spark built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from workbench.errors import InputError, TableConfigError
from workbench.pinot.assignment import (
    Instance,
    InstancePartitions,
    assign_consuming_segment,
    assign_segments,
    instance_partitions_for,
    segment_assignment_strategy,
    server_tag,
)
from workbench.pinot.segment import SegmentMetadata
from workbench.pinot.table_config import TableConfig
from workbench.scenario import Scenario
from workbench.sim.planner import segment_metadata
from workbench.workload.directory import read_segments

__all__ = ["Layout", "assign_layout", "build_layout"]


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
    #: Each segment's stream partition (0 for synthetic segments).
    partitions: np.ndarray | None = None

    @property
    def num_servers(self) -> int:
        return len(self.servers)


def _instances(table: TableConfig, servers: tuple[str, ...]) -> list[Instance]:
    kinds = ("OFFLINE",) if table.table_type == "OFFLINE" else ("CONSUMING", "COMPLETED")
    tags = tuple(dict.fromkeys(server_tag(table, k) for k in kinds))
    return [Instance(name, tags=tags, pools=dict.fromkeys(tags, 0)) for name in servers]


def assign_layout(table: TableConfig, servers: tuple[str, ...], names: tuple[str, ...],
                  consuming: np.ndarray, partitions: np.ndarray) -> dict[str, dict[str, str]]:
    """The ideal state Pinot's controller would build for these segments on these servers."""
    instances = _instances(table, servers)
    replication = table.replication
    if replication > len(servers):
        raise InputError("table.segmentsConfig.replication", "needs at least as many servers as replicas: "
                         f"{replication} replicas on {len(servers)} servers")
    try:
        if table.table_type == "OFFLINE":
            ip = instance_partitions_for(table, "OFFLINE", instances)
            strategy = segment_assignment_strategy(table, "OFFLINE", ip)
            return assign_segments(names, ip, strategy=strategy, replication=replication)
        consuming_ip = instance_partitions_for(table, "CONSUMING", instances)
        if table.is_upsert or table.is_dedup:
            return _strict(names, consuming, partitions, consuming_ip, replication)
        has_completed = "COMPLETED" in table.instance_assignment_config_map
        completed_ip = instance_partitions_for(table, "COMPLETED", instances) if has_completed else consuming_ip
        strategy = segment_assignment_strategy(table, "COMPLETED", completed_ip)
        sealed = [n for n, c in zip(names, consuming, strict=True) if not c]
        ideal = assign_segments(sealed, completed_ip, strategy=strategy, replication=replication)
        for name, is_consuming, partition in zip(names, consuming, partitions, strict=True):
            if is_consuming:
                hosts = assign_consuming_segment(int(partition), consuming_ip, replication)
                ideal[name] = dict.fromkeys(hosts, "CONSUMING")
        return {n: ideal[n] for n in names}
    except TableConfigError as exc:
        raise InputError(f"table.{exc.where}", exc.problem) from None


def _strict(names: tuple[str, ...], consuming: np.ndarray, partitions: np.ndarray, ip: InstancePartitions,
            replication: int) -> dict[str, dict[str, str]]:
    """Upsert and dedup tables (Pinot's ``StrictRealtimeSegmentAssignment``): every segment of a stream
    partition, sealed or consuming, stays on the servers consuming that partition, because each server's
    primary-key map must see every segment of the partitions it serves."""
    return {name: dict.fromkeys(assign_consuming_segment(int(p), ip, replication),
                                "CONSUMING" if c else "ONLINE")
            for name, c, p in zip(names, consuming, partitions, strict=True)}


def build_layout(scenario: Scenario, data: Path | None = None) -> Layout:
    """The layout for a scenario: synthetic, or the segments of a workload directory (``data``)."""
    servers = tuple(f"Server_{i}" for i in range(scenario.cluster.servers))
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
        count = max(1, scenario.cluster.servers * per_server // table.replication)
        names = tuple(f"{table.table_name}_{i}" for i in range(count))
        docs = np.full(count, float(synth.docs_per_segment if synth else 1))
        consuming, partitions = np.zeros(count, bool), np.zeros(count, int)
    ideal = assign_layout(table, servers, names, consuming, partitions)
    index = {s: i for i, s in enumerate(servers)}
    replicas = tuple(tuple(index[s] for s in ideal[n]) for n in names)
    return Layout(servers, names, docs, consuming, ideal, replicas, metadata, np.asarray(partitions, dtype=np.int64))
