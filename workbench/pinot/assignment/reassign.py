"""Segment reassignment on a table rebalance: where existing segments go on new instance partitions.

Replica-group tables follow Pinot's ``ReplicaGroupSegmentAssignmentStrategy.reassignSegments`` and
``SegmentAssignmentUtils.rebalanceReplicaGroupBasedPartition`` exactly (reference §4.3, "Rebalance"):

1. Segments are grouped by instance-partition id (all in partition 0 without a partition column)
   and each group is shuffled with ``java.util.Random(tableNameWithType.hashCode())``, one generator
   for all groups, starting from the ideal state's name order, so new servers do not get only new
   segments.
2. Per partition, target = ceil(segments / servers in replica group 0). A segment stays on its
   current server (the first, by name, of its servers that sits in group 0) while that server is
   under target; the rest go to the least-loaded server, lowest index on ties.
3. The chosen index is mirrored to every replica group.

Balanced (non-replica-group) tables follow ``SegmentAssignmentUtils.rebalanceNonReplicaGroupBasedTable``
(release-1.5.1; older releases used Helix's ``AutoRebalanceStrategy``): target = ceil(segments x replication /
servers); segment by segment in name order, a replica stays on a server of the new list, fewest-so-far first, while
that server is under target; each missing replica goes to the server with the fewest replicas (lowest index of the
instance partitions on ties) that does not hold the segment yet. Checked replica for replica against Pinot's own
code (``tests/groundtruth/test_controller.py``: grown, shrunk, one server replaced).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping

from workbench.pinot.assignment.partitions import InstancePartitions
from workbench.pinot.assignment.segments import assign_consuming_segment, segment_partition_id
from workbench.pinot.jvm import JavaRandom, java_shuffle, java_string_hash

__all__ = ["IdealState", "reassign_balanced", "reassign_consuming", "reassign_replica_group"]

IdealState = Mapping[str, Mapping[str, str]]


def reassign_replica_group(current: IdealState, ip: InstancePartitions, table_name_with_type: str,
                           partition_of: Callable[[str], int] | None = None,
                           state: str = "ONLINE") -> dict[str, dict[str, str]]:
    """New ideal state for ``current``'s segments on ``ip``, as a replica-group rebalance computes it.

    Parameters
    ----------
    current
        segment -> {server: state}, the table's current ideal state.
    ip
        The new instance partitions.
    table_name_with_type
        Seeds the shuffle (``myTable_OFFLINE``).
    partition_of
        Segment -> partition id, used only when ``ip`` has several partitions (Pinot then needs a
        partition column); defaults to :func:`segment_partition_id`. For OFFLINE tables Pinot walks a
        partition's segments in ZooKeeper's listing order, which is not reproducible; name order is used.
    """
    rng = JavaRandom(java_string_hash(table_name_with_type))
    groups: dict[int, list[str]] = {}
    locate = partition_of or segment_partition_id
    for segment in sorted(current):
        p = 0 if ip.num_partitions == 1 else locate(segment) % ip.num_partitions
        groups.setdefault(p, []).append(segment)
    out: dict[str, dict[str, str]] = {}
    for p in sorted(groups):
        java_shuffle(groups[p], rng)
        _rebalance_partition(current, ip, p, groups[p], out, state)
    return dict(sorted(out.items()))


def _rebalance_partition(current: IdealState, ip: InstancePartitions, partition: int, segments: list[str],
                         out: dict[str, dict[str, str]], state: str) -> None:
    servers = ip.instances(partition, 0)
    index_of = {s: i for i, s in enumerate(servers)}
    target = -(-len(segments) // len(servers))
    counts = [0] * len(servers)
    leftovers = []
    for segment in segments:
        kept = next((index_of[s] for s in sorted(current[segment]) if s in index_of and counts[index_of[s]] < target),
                    None)
        if kept is None:
            leftovers.append(segment)
            continue
        out[segment] = _mirror(ip, partition, kept, state)
        counts[kept] += 1
    heap = [(c, i) for i, c in enumerate(counts)]
    heapq.heapify(heap)
    for segment in leftovers:
        count, i = heapq.heappop(heap)
        out[segment] = _mirror(ip, partition, i, state)
        heapq.heappush(heap, (count + 1, i))


def _mirror(ip: InstancePartitions, partition: int, index: int, state: str) -> dict[str, str]:
    return dict.fromkeys(sorted(ip.instances(partition, r)[index] for r in range(ip.num_replica_groups)), state)


def reassign_balanced(current: IdealState, servers: Iterable[str], replication: int,
                      state: str = "ONLINE") -> dict[str, dict[str, str]]:
    """Pinot's balanced rebalance (``rebalanceNonReplicaGroupBasedTable``) of ``current`` onto ``servers`` (the
    instance partitions' order, which breaks ties).

    >>> current = {f"s{i}": {"a": "ONLINE", "b": "ONLINE"} for i in range(4)}
    >>> new = reassign_balanced(current, ["a", "b", "c", "d"], 2)
    >>> sorted(sum((list(v) for v in new.values()), [])).count("c")  # each newcomer takes 2 replicas
    2
    """
    names = list(servers)
    index_of = {s: i for i, s in enumerate(names)}
    cap = -(-len(current) * replication // len(names))
    counts = [0] * len(names)
    out: dict[str, dict[str, str]] = {}
    missing: list[tuple[str, int]] = []
    for segment in sorted(current):
        kept: list[str] = []
        # Pinot sorts the segment's servers still listed by replicas assigned so far (a stable sort of the ideal
        # state's name-ordered map): it matters only when a segment has more of them than the replication
        candidates = sorted((s for s in current[segment] if s in index_of), key=lambda s: (counts[index_of[s]], s))
        for server in candidates:
            i = index_of[server]
            if counts[i] < cap and len(kept) < replication:
                kept.append(server)
                counts[i] += 1
        out[segment] = dict.fromkeys(kept, state)
        missing.extend((segment, 1) for _ in range(replication - len(kept)))
    for segment, _one in missing:
        free = [i for i in range(len(names)) if names[i] not in out[segment]]
        i = min(free, key=lambda j: (counts[j], j))
        out[segment][names[i]] = state
        counts[i] += 1
    return {segment: dict(sorted(servers_.items())) for segment, servers_ in out.items()}


def reassign_consuming(current: IdealState, ip: InstancePartitions, replication: int, state: str,
                       partition_of: Callable[[str], int] | None = None) -> dict[str, dict[str, str]]:
    """Each segment placed by its stream partition as a CONSUMING segment is
    (``RealtimeSegmentAssignment.assignConsumingSegment``), in the given ``state``."""
    locate = partition_of or segment_partition_id
    return {segment: dict.fromkeys(sorted(assign_consuming_segment(locate(segment), ip, replication)), state)
            for segment in sorted(current)}
