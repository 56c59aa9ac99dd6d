"""``minimizeDataMovement``: re-assigning instances while keeping existing servers where they are.

When a table's instances are reassigned (a rebalance with ``reassignInstances``) and the existing
instance partitions are known, Pinot's ``InstanceReplicaGroupPartitionSelector`` and
``InstanceTagPoolSelector`` with ``minimizeDataMovement`` (reference §4.2, last step) work as follows:

* **Pools** (only when ``numPools`` picks a subset): keep the pools the existing replica groups
  used; Pinot fails when it has to pick a pool beyond them (a division by zero in its loop), which
  the workbench reports as a ``TableConfigError``.
* **Replica group -> pool**: a replica group that still exists keeps the pool of its first existing
  server that is still a candidate; the others take the least-used pool (lowest pool id on ties).
* **Servers**: each existing replica group first loses the servers other existing groups held;
  then, partition by partition, every slot keeps its existing server if it is still a candidate,
  else takes the next *new* candidate; servers used keep moving to the back of the candidate list
  so later partitions spread over them. New replica groups take fresh candidates. Only the
  *existing* number of partitions is filled (Pinot loops over the existing partitions).

The results reproduce Pinot's ``InstanceAssignmentTest`` cases (see ``tests/pinot/test_minimize.py``).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Mapping, Sequence

from workbench.errors import TableConfigError
from workbench.pinot.assignment.partitions import InstancePartitions
from workbench.pinot.jvm import java_hash_set_order

__all__ = ["instances_with_minimum_movement", "keep_existing_pools", "minimized_partitions",
           "minimized_pool_of_groups"]


def instances_with_minimum_movement(count: int, candidates: list[str], existing: Sequence[str]) -> list[str | None]:
    """Pinot's ``getInstancesWithMinimumMovement``: ``count`` servers, existing ones in their slots.

    ``candidates`` is the ordered candidate list; it is reordered in place exactly as Pinot's
    ``LinkedHashSet`` is (a server that fills a slot moves to the back), because the next partition
    of the same replica group continues from it. A slot stays ``None`` when nobody is left.

    >>> cands = ["i8", "i1", "i10", "i11", "i4", "i7"]
    >>> instances_with_minimum_movement(2, cands, ["i8", "i1"]), cands
    (['i8', 'i1'], ['i10', 'i11', 'i4', 'i7', 'i8', 'i1'])
    >>> instances_with_minimum_movement(2, ["i9", "i10", "i11", "i5", "i7"], ["i9", "i2"])  # i2 is gone
    ['i9', 'i10']
    """
    pool = set(candidates)
    alive_order = java_hash_set_order(s for s in existing if s in pool)
    alive = set(alive_order)
    fresh = deque(c for c in candidates if c not in alive)
    chosen: list[str | None] = [None] * count
    for i in range(count):
        old = existing[i] if i < len(existing) else None
        pick: str | None
        if old is not None and old in pool:
            pick = old
            alive.discard(old)
        else:
            pick = fresh.popleft() if fresh else None
        chosen[i] = pick
        if pick is not None and (i < len(existing) or not existing):
            candidates.remove(pick)
            candidates.append(pick)
    for i in range(count):
        if chosen[i] is None:
            leftover = next((s for s in alive_order if s in alive), None)
            if leftover is not None:
                alive.discard(leftover)
                chosen[i] = leftover
            elif fresh:
                chosen[i] = fresh.popleft()
    return chosen


def keep_existing_pools(wanted: int, available: Sequence[int], pool_of: Mapping[str, int],
                        existing: InstancePartitions, where: str) -> list[int]:
    """``InstanceTagPoolSelector`` with ``numPools`` < pools and minimizeDataMovement: the pools kept.

    Pinot adds, per existing replica group, the pool of its first server still in a pool, then walks
    ``i = 0 .. numPools-1`` skipping pool ids already used and taking ``remaining[i % len]`` from the
    used pools; the kept set is therefore the used pools, and an empty remainder fails.
    """
    used: list[int] = []
    for r in range(existing.num_replica_groups):
        pool = _first_pool(existing, r, pool_of, available)
        if pool is not None:
            used.append(pool)
    used_set = set(used)
    remaining = [p for p in available if p in used_set]
    chosen = list(used)
    for i in range(wanted):
        if i in used_set:
            continue
        if not remaining:
            raise TableConfigError(f"{where}.numPools", "with minimizeDataMovement Pinot can only keep the pools the "
                                   f"existing replica groups use ({sorted(used_set)}); asking for {wanted} pools "
                                   "fails in Pinot (division by zero); set 'pools' explicitly or rebalance without "
                                   "minimizeDataMovement")
        chosen.append(remaining.pop(i % len(remaining)))
    return [p for p in available if p in set(chosen)]


def _first_pool(existing: InstancePartitions, replica_group: int, pool_of: Mapping[str, int],
                pools: Sequence[int]) -> int | None:
    for p in range(existing.num_partitions):
        for server in existing.instances(p, replica_group):
            pool = pool_of.get(server)
            if pool is not None and pool in pools:
                return pool
    return None


def minimized_pool_of_groups(num_replica_groups: int, pools: Sequence[int], pool_of: Mapping[str, int],
                             existing: InstancePartitions) -> dict[int, int]:
    """Replica group -> pool: existing groups keep their pool, new ones go to the least-used pool."""
    group_pool: dict[int, int] = {}
    for r in range(min(num_replica_groups, existing.num_replica_groups)):
        pool = _first_pool(existing, r, pool_of, pools)
        if pool is not None:
            group_pool[r] = pool
    heap = [(sum(1 for p in group_pool.values() if p == pool), pool) for pool in pools]
    heapq.heapify(heap)
    for r in range(num_replica_groups):
        if r not in group_pool:
            count, pool = heapq.heappop(heap)
            heapq.heappush(heap, (count + 1, pool))
            group_pool[r] = pool
    return group_pool


def minimized_partitions(group_pool: Mapping[int, int], pools: Mapping[int, list[str]], per_partition: int,
                         existing: InstancePartitions, where: str) -> dict[str, tuple[str, ...]]:
    """The ``"<partition>_<group>"`` -> servers map of the minimizeDataMovement path."""
    num_groups = len(group_pool)
    common = min(num_groups, existing.num_replica_groups)
    remaining = {pool: list(names) for pool, names in pools.items()}
    held = {r: {s for p in range(existing.num_partitions) for s in existing.instances(p, r)} for r in range(common)}
    out: dict[str, tuple[str, ...]] = {}
    for r in range(num_groups):
        pool = group_pool[r]
        others = set().union(*(held[o] for o in range(common) if o != r)) if r < common else set()
        candidates = [s for s in remaining[pool] if s not in others]
        used: set[str] = set()
        for p in range(existing.num_partitions):
            before = existing.instances(p, r) if r < common else ()
            servers = instances_with_minimum_movement(per_partition, candidates, before)
            out[f"{p}_{r}"] = _complete(servers, f"{where}.numInstancesPerPartition", pool)
            used.update(out[f"{p}_{r}"])
        remaining[pool] = [s for s in remaining[pool] if s not in used]
    return dict(sorted(out.items(), key=lambda kv: tuple(int(x) for x in kv[0].split("_"))))


def _complete(servers: list[str | None], where: str, pool: int) -> tuple[str, ...]:
    if any(s is None for s in servers):
        raise TableConfigError(where, f"not enough servers left in pool {pool} to fill every slot while keeping "
                                      "existing servers in place (Pinot would store an empty slot)")
    return tuple(s for s in servers if s is not None)


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
