"""Segment assignment: which servers of the instance partitions hold each new segment.

``balanced`` puts a segment's replicas on the servers with the fewest segments; ``replicaGroup``
picks the least-loaded server of replica group 0 (of the segment's partition) and mirrors it to the
same index in every other group; CONSUMING segments go straight from their stream partition id
(reference §4.3). The strategy is ``segmentAssignmentConfigMap.<OFFLINE|COMPLETED>
.segmentAssignmentStrategy`` lower-cased, or follows the shape of the instance partitions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from types import MappingProxyType

from workbench.errors import TableConfigError
from workbench.pinot.assignment.partitions import InstancePartitions
from workbench.pinot.jvm import java_string_hash
from workbench.pinot.table_config import TableConfig

__all__ = [
    "SEGMENT_ASSIGNMENT_STRATEGIES", "SegmentAssigner", "assign_consuming_segment", "assign_segment",
    "assign_segments", "segment_assignment_strategy", "segment_counts", "segment_partition_id",
]

def segment_partition_id(segment: str, partition_metadata: Mapping[str, Collection[int]] | None = None,
                         column: str | None = None) -> int:
    """A segment's partition id as replica-group segment assignment derives it.

    From an LLC name ``table__partition__seq__time``, an uploaded-realtime name
    ``prefix__table__partition__time__suffix``, the segment's ZK partition metadata (``column`` ->
    partitions, used only when it names exactly one partition), else ``abs(hashCode % 10000)``.

    >>> segment_partition_id("events__3__17__20250101T0000Z"), segment_partition_id("x", {"id": [5]})
    (3, 5)
    """
    parts = segment.split("__")
    if len(parts) == 4 and parts[1].isdigit() and parts[2].isdigit():
        return int(parts[1])
    if len(parts) in (5, 6) and parts[2].isdigit():  # both uploaded-name layouts Pinot has used
        return int(parts[2])
    meta = dict(partition_metadata or {})
    chosen = meta.get(column) if column else (next(iter(meta.values())) if len(meta) == 1 else None)
    if chosen is not None and len(chosen) == 1:
        return int(next(iter(chosen)))
    return abs(java_string_hash(segment)) % 10_000


def _fewest(counts: Mapping[str, int], servers: Sequence[str], k: int) -> list[int]:
    """Indexes of the ``k`` servers with the fewest segments, lowest index first on ties."""
    return sorted(range(len(servers)), key=lambda i: (counts.get(servers[i], 0), i))[:k]


def _assign_balanced(counts: Mapping[str, int], ip: InstancePartitions, replication: int,
                     partition_id: int) -> tuple[str, ...]:
    del partition_id  # balanced assignment ignores partitions
    if ip.num_partitions != 1 or ip.num_replica_groups != 1:
        raise TableConfigError("segmentAssignmentConfigMap", f"Instance partitions: {ip.name} should contain "
                               "1 replica and 1 partition for non-replica-group based assignment")
    servers = _enough_for_replication(ip, replication)
    return tuple(servers[i] for i in _fewest(counts, servers, replication))


def _assign_replica_group(counts: Mapping[str, int], ip: InstancePartitions, replication: int,
                          partition_id: int) -> tuple[str, ...]:
    del replication  # one server per replica group; the group count is the replication
    p = 0 if ip.num_partitions == 1 else partition_id % ip.num_partitions
    index = _fewest(counts, ip.instances(p, 0), 1)[0]
    return tuple(ip.instances(p, r)[index] for r in range(ip.num_replica_groups))


SegmentAssigner = Callable[[Mapping[str, int], InstancePartitions, int, int], tuple[str, ...]]

#: Segment assignment strategies by name: ``(counts, instance_partitions, replication, partition_id)``
#: -> servers, where ``counts`` is the number of segments each server already holds.
SEGMENT_ASSIGNMENT_STRATEGIES: Mapping[str, SegmentAssigner] = MappingProxyType(
    {"balanced": _assign_balanced, "replicaGroup": _assign_replica_group})
_STRATEGY_NAMES = {"balanced": "balanced", "replicagroup": "replicaGroup"}
_NOT_MODELLED = ("roundrobin", "roundrobinreplicagroup", "allservers")


def segment_assignment_strategy(table_config: TableConfig, kind: str, ip: InstancePartitions) -> str:
    """The strategy name Pinot picks for OFFLINE or COMPLETED segments.

    ``segmentAssignmentConfigMap.<KIND>.segmentAssignmentStrategy`` lower-cased (unknown names fall back
    to balanced), where KIND is OFFLINE for offline tables and COMPLETED for realtime ones; without one,
    ``replicaGroup`` unless the instance partitions are 1 group x 1 partition
    (``SegmentAssignmentStrategyFactory``). Like Pinot, warns when replica-group assignment meets a
    group count that differs from the table's replication (Pinot then uses the group count).
    """
    if table_config.raw.get("isDimTable"):
        raise TableConfigError("isDimTable", "dimension tables use the allservers strategy, which the "
                                             "workbench does not model")
    kind = kind.upper()
    where = f"segmentAssignmentConfigMap.{kind}.segmentAssignmentStrategy"
    cmap = table_config.section("segmentAssignmentConfigMap")
    if kind == "COMPLETED" and "REALTIME" in cmap and "COMPLETED" not in cmap:
        warnings.warn("segmentAssignmentConfigMap.REALTIME is not read by Pinot: realtime tables take the "
                      "completed-segment strategy from segmentAssignmentConfigMap.COMPLETED", UserWarning, stacklevel=2)
    configured = table_config.section("segmentAssignmentConfigMap", kind).get("segmentAssignmentStrategy")
    if configured:
        name = str(configured).lower()
        if name in _NOT_MODELLED:
            raise TableConfigError(where, f"{configured!r} is valid in Pinot but not modelled by the "
                                          "workbench")
        strategy = _STRATEGY_NAMES.get(name, "balanced")
    else:
        strategy = "balanced" if ip.num_replica_groups == 1 and ip.num_partitions == 1 else "replicaGroup"
    if strategy == "replicaGroup" and ip.num_replica_groups != table_config.replication:
        warnings.warn(f"{ip.name}: replica-group segment assignment over {ip.num_replica_groups} replica group(s) "
                      f"while segmentsConfig.replication is {table_config.replication}; Pinot uses the group count, "
                      "so each segment gets that many replicas (replica groups come from "
                      "instanceAssignmentConfigMap or, with replicaGroupStrategyConfig, from "
                      "segmentsConfig.segmentAssignmentStrategy = 'replicagroup')", UserWarning, stacklevel=2)
    return strategy


def _enough_for_replication(ip: InstancePartitions, replication: int) -> tuple[str, ...]:
    servers = ip.instances(0, 0)
    if len(servers) < replication:
        raise TableConfigError("segmentsConfig.replication", f"There are less instances: {len(servers)} in "
                               f"instance partitions: {ip.name} than the table replication: {replication}")
    return servers


def segment_counts(assignment: Mapping[str, Mapping[str, str]]) -> dict[str, int]:
    """Segments per server in an ideal state (segment -> {server: state})."""
    counts: dict[str, int] = {}
    for servers in assignment.values():
        for server in servers:
            counts[server] = counts.get(server, 0) + 1
    return counts


def _strategy(name: str) -> SegmentAssigner:
    try:
        return SEGMENT_ASSIGNMENT_STRATEGIES[name]
    except KeyError:
        known = sorted(SEGMENT_ASSIGNMENT_STRATEGIES)
        raise TableConfigError("segmentAssignmentStrategy",
                               f"unknown strategy {name!r}; known: {known}") from None


def assign_segment(current: Mapping[str, Mapping[str, str]], ip: InstancePartitions, *, strategy: str,
                   replication: int, partition_id: int = 0) -> tuple[str, ...]:
    """Servers for one new segment, given the current ideal state (segment -> {server: state})."""
    return _strategy(strategy)(segment_counts(current), ip, replication, partition_id)


def assign_segments(segments: Iterable[str], ip: InstancePartitions, *, strategy: str, replication: int,
                    partition_of: Callable[[str], int] = segment_partition_id,
                    current: Mapping[str, Mapping[str, str]] | None = None,
                    state: str = "ONLINE") -> dict[str, dict[str, str]]:
    """Assign segments one at a time, in order, as uploads would arrive; returns the ideal state.

    Each assignment sees the previous ones, exactly as the controller's per-upload assignment does.
    Segments already in ``current`` are kept where they are.
    """
    assign = _strategy(strategy)
    ideal = {seg: dict(servers) for seg, servers in (current or {}).items()}
    counts = segment_counts(ideal)
    for seg in segments:
        if seg in ideal:
            continue
        servers = assign(counts, ip, replication, partition_of(seg))
        ideal[seg] = dict.fromkeys(servers, state)
        for server in servers:
            counts[server] = counts.get(server, 0) + 1
    return ideal


def assign_consuming_segment(partition_id: int, ip: InstancePartitions, replication: int) -> tuple[str, ...]:
    """Servers for a CONSUMING segment of stream partition ``partition_id``.

    Non-replica-group: replica j on ``instances[(p * replication + j) % n]``; replica groups with one
    partition: ``instances_rg[p % len]`` in every group; explicit partitions: the first server of
    partition ``p % numPartitions`` in every group.

    >>> ip = InstancePartitions("t_CONSUMING", {"0_0": ("a", "b", "c", "d")})
    >>> assign_consuming_segment(1, ip, 2)
    ('c', 'd')
    """
    if ip.num_replica_groups == 1 and ip.num_partitions == 1:
        servers = _enough_for_replication(ip, replication)
        return tuple(servers[(partition_id * replication + j) % len(servers)] for j in range(replication))
    if ip.num_partitions == 1:
        groups = (ip.instances(0, r) for r in range(ip.num_replica_groups))
        return tuple(servers[partition_id % len(servers)] for servers in groups)
    p = partition_id % ip.num_partitions
    return tuple(ip.instances(p, r)[0] for r in range(ip.num_replica_groups))
