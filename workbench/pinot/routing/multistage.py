"""Pinot's ``MultiStageReplicaGroupSelector`` routing a query: replica groups from the instance partitions.

Unlike the other selectors, which read replica groups off the ideal state, this one (Pinot 1.5.1,
``pinot-broker/.../instanceselector/MultiStageReplicaGroupSelector.java``) reads them from the table's
instance partitions (OFFLINE, or CONSUMING for a realtime table), so colocated tables sharing instance
partitions pick the same servers for the same request id. Per query: the preferred replica group is
``requestId % numReplicaGroups`` (0 with fixed replica); each instance partition in turn needs the
segments its servers can serve, and takes the first replica group, from the preferred one on, whose
servers together serve all of them. A partition no group can serve fails the query in Pinot ("Unable to
find any replica-group to serve segments in the instance-partition"); here those segments are reported
unroutable (the broker then counts them unavailable). Segments on servers outside the instance partitions
are dropped silently, as Pinot does (apache/pinot#17179).

Two replica groups of two servers, even segments on the first server of each group, odd on the second:

>>> from workbench.pinot.assignment.partitions import InstancePartitions
>>> from workbench.pinot.routing.candidates import Candidates
>>> ip = InstancePartitions.of("t_OFFLINE", {"0_0": ("i0", "i1"), "0_1": ("i2", "i3")})
>>> table = {"s0": Candidates(("i0", "i2"), (0, 0)), "s1": Candidates(("i1", "i3"), (0, 0))}
>>> assign_by_instance_partitions(["s0", "s1"], table, ip, preferred=1)
({'s0': 'i2', 's1': 'i3'}, {}, [])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.pinot.assignment.partitions import InstancePartitions
from workbench.pinot.routing.candidates import Candidates

__all__ = ["assign_by_instance_partitions"]


def assign_by_instance_partitions(segments: Sequence[str], table: Mapping[str, Candidates],
                                  ip: InstancePartitions, preferred: int
                                  ) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """Route ``segments`` as Pinot's ``MultiStageReplicaGroupSelector.assign``: (chosen, optional, unroutable).

    Segments without candidates are skipped (the caller reports the unavailable ones); ``optional`` holds
    segments whose chosen server has not loaded them yet (new segments), as in Pinot.
    """
    served: dict[str, list[str]] = {}  # instance -> segments it can serve, in query order
    for segment in segments:
        cand = table.get(segment)
        if cand is None:
            continue
        for server in cand.servers:
            served.setdefault(server, []).append(segment)
    partition_of: dict[str, int] = {}  # Pinot's getInstanceToPartitionIdMap: the last partition naming it wins
    for key, servers in ip.partitions.items():
        for server in servers:
            partition_of[server] = int(key.split("_")[0])
    required: dict[int, set[str]] = {}
    for server, segs in served.items():
        p = partition_of.get(server)
        if p is not None:  # a server outside the instance partitions: its segments are dropped (#17179)
            required.setdefault(p, set()).update(segs)
    chosen: dict[str, str] = {}
    failed: set[str] = set()
    groups = ip.num_replica_groups
    for p in range(ip.num_partitions):
        need = required.get(p)
        if need is None:
            continue
        for offset in range(groups):
            members = ip.partitions.get(f"{p}_{(preferred + offset) % groups}", ())
            covered = {s for server in members for s in served.get(server, ())}
            if need <= covered:
                for server in members:  # a later member overwrites an earlier one, as in Pinot
                    for segment in served.get(server, ()):
                        if segment in need:
                            chosen[segment] = server
                break
        else:
            failed |= need
    picked: dict[str, str] = {}
    optional: dict[str, str] = {}
    for segment, server in chosen.items():
        servers, _pools, online = table[segment]
        i = servers.index(server)
        (picked if online is None or online[i] else optional)[segment] = server
    unroutable = [s for s in segments if s in failed and s not in chosen]
    return picked, optional, unroutable
