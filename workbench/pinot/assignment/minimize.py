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
