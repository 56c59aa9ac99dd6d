"""``minimizeDataMovement``: re-assigning instances while keeping existing servers where they are.

When a table's instances are reassigned (a rebalance with ``reassignInstances``) and the existing
instance partitions are known, Pinot's ``InstanceTagPoolSelector`` and
``InstanceReplicaGroupPartitionSelector`` with ``minimizeDataMovement`` (release-1.5.1) work as follows:

* **Pools** (only when ``numPools`` picks a subset): the pools holding most of the existing servers,
  ties broken by the hash-rotated pool order.
* **Replica group -> pool**: group by group, the pool holding most of the group's existing servers
  (ties broken by the hash-rotated pool order), among pools with fewer than
  ``ceil(groups / pools)`` groups yet. A server that moved pool therefore no longer pins its group.
* **Servers of a group**: walking each pool's servers in order, a server rejoins the first of the
  pool's groups that held it (while it has room); the remaining slots go to the pool's other servers,
  each to the group with the fewest servers so far.
* **Slots**: with one partition every existing server keeps its position and the empty positions take
  the group's other servers in order (the whole group, whatever ``numInstancesPerPartition`` says);
  with several, an existing server keeps its slot while it serves fewer than
  ``ceil(partitions / groupSize)`` partitions and empty slots take the group's least-used server.
  New replica groups get consecutive servers, as without the flag.

The results reproduce Pinot's ``InstanceAssignmentTest.testMinimizeDataMovement`` and
``InstanceReplicaGroupPartitionSelectorTest`` (``tests/pinot/test_minimize.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.pinot.assignment.partitions import InstancePartitions

__all__ = ["keep_existing_pools", "minimum_movement_members", "minimum_movement_partitions", "minimum_movement_pools",
           "select_with_minimum_movement"]


def keep_existing_pools(wanted: int, available: Sequence[int], h: int, pool_of: Mapping[str, int],
                        existing: InstancePartitions) -> list[int]:
    """``InstanceTagPoolSelector`` with ``numPools`` < pools and minimizeDataMovement: the ``wanted``
    pools holding most of the existing servers (every group and partition counted), ties broken by the
    pool order rotated by the table hash; returned in ascending pool id.

    >>> existing = InstancePartitions.of("t_OFFLINE", {"0_0": ("a", "b"), "0_1": ("c",)})
    >>> keep_existing_pools(1, [0, 1, 2], 0, {"a": 2, "b": 2, "c": 1}, existing)
    [2]
    >>> keep_existing_pools(2, [0, 1, 2], 0, {"a": 2, "b": 2, "c": 1}, existing)
    [1, 2]
    """
    counts: dict[int, int] = {}
    for p in range(existing.num_partitions):
        for r in range(existing.num_replica_groups):
            for server in existing.instances(p, r):
                if server in pool_of:
                    counts[pool_of[server]] = counts.get(pool_of[server], 0) + 1
    n = len(available)
    order = sorted(range(n), key=lambda i: (-counts.get(available[(h + i) % n], 0), i))
    chosen = {available[(h + i) % n] for i in order[:wanted]}
    return [p for p in available if p in chosen]


def select_with_minimum_movement(count: int, candidates: Sequence[str], existing: Sequence[str]) -> list[str]:
    """Pinot 1.5's ``selectInstancesWithMinimumMovement``: an existing server that is still a candidate
    keeps its slot; the empty slots take the remaining candidates in order.

    >>> select_with_minimum_movement(2, ["rg1-0", "rg1-1"], ["rg0-2", "rg1-0"])
    ['rg1-1', 'rg1-0']
    """
    left = dict.fromkeys(candidates)  # an ordered set, as Pinot's LinkedHashSet
    chosen: list[str | None] = [None] * count
    for i, old in enumerate(existing[:count]):
        if old in left:
            del left[old]
            chosen[i] = old
    fill = iter(left)
    return [c if c is not None else next(fill) for c in chosen]


def minimum_movement_pools(num_replica_groups: int, pools: Sequence[int], h: int, pool_of: Mapping[str, int],
                           existing: InstancePartitions) -> tuple[dict[int, list[int]], list[set[str]]]:
    """Pinot 1.5's replica group -> pool choice with minimizeDataMovement: each group, in order, takes
    the pool holding most of its existing servers (ties: the hash-rotated pool order starting at
    ``(hash + group) % numPools``) that has fewer than ``ceil(groups / pools)`` groups yet.

    Returns pool -> its groups (ascending pool id) and each group's existing servers.
    """
    n = len(pools)
    max_per_pool = -(-num_replica_groups // n)
    start = h % n
    held: list[set[str]] = []
    groups_of_pool: dict[int, list[int]] = {}
    for r in range(num_replica_groups):
        servers = ({s for p in range(existing.num_partitions) for s in existing.instances(p, r)}
                   if r < existing.num_replica_groups else set())
        held.append(servers)
        counts: dict[int, int] = {}
        for server in servers:
            if server in pool_of:
                counts[pool_of[server]] = counts.get(pool_of[server], 0) + 1
        order = sorted(range(n), key=lambda i: (-counts.get(pools[(start + r + i) % n], 0), i))
        for i in order:
            pool = pools[(start + r + i) % n]
            if len(groups_of_pool.setdefault(pool, [])) < max_per_pool:
                groups_of_pool[pool].append(r)
                break
    return {p: groups_of_pool[p] for p in sorted(groups_of_pool) if groups_of_pool[p]}, held


def minimum_movement_members(groups_of_pool: Mapping[int, list[int]], pools: Mapping[int, list[str]],
                             held: Sequence[set[str]], per_group: int) -> dict[int, list[str]]:
    """Each group's servers: in pool order, a server joins the first of its pool's groups that held it
    (while that group has room); the rest fill the group with the fewest servers, first such group
    on ties."""
    members: dict[int, list[str]] = {r: [] for groups in groups_of_pool.values() for r in groups}
    for pool, groups in groups_of_pool.items():
        fresh: list[str] = []
        for name in pools[pool]:
            home = next((r for r in groups if len(members[r]) < per_group and name in held[r]), None)
            if home is None:
                fresh.append(name)
            else:
                members[home].append(name)
        to_fill = per_group * len(groups) - sum(len(members[r]) for r in groups)
        for name in fresh[:to_fill]:
            members[min(groups, key=lambda r: len(members[r]))].append(name)
    return members


def minimum_movement_partitions(members: Sequence[str], num_partitions: int, per_partition: int,
                                existing: InstancePartitions, r: int) -> list[tuple[str, ...]]:
    """Partitions of an existing group with several partitions: existing servers stay while they serve
    fewer than ``ceil(partitions / groupSize)`` partitions; empty slots take the group's server serving
    the fewest partitions (lowest index on ties)."""
    per_group = len(members)
    cap = -(-num_partitions // per_group)
    load = dict.fromkeys(members, 0)
    slots: list[list[str | None]] = []
    for p in range(num_partitions):
        row: list[str | None] = [None] * per_partition
        if p < existing.num_partitions:
            for i, old in enumerate(existing.instances(p, r)[:per_partition]):
                if old in load and load[old] < cap:
                    row[i] = old
                    load[old] += 1
        slots.append(row)
    out = []
    for row in slots:
        taken = {s for s in row if s is not None}
        spare = sorted((i for i, s in enumerate(members) if s not in taken), key=lambda i: (load[members[i]], i))
        fill = iter(spare)
        done = []
        for s in row:
            if s is None:
                s = members[next(fill)]
                load[s] += 1
            done.append(s)
        out.append(tuple(done))
    return out
