"""Instance assignment: from the cluster's servers to a table's :class:`InstancePartitions`.

Pinot's ``InstanceAssignmentDriver`` in three steps (reference §4.2):

1. **Tag/pool selection**: enabled servers with the tag, sorted by name, grouped by pool when
   ``poolBased`` (``numPools`` picks a hash-rotated subset of pools, or ``pools`` names them).
2. **Constraint**: each pool's list is rotated left by ``abs(hash(tableNameWithType)) % n``.
3. **Replica-group/partition selection**: replica group r takes pool ``pools[(hash + r) % numPools]``;
   a pool's servers are dealt round-robin over its groups; partitions take consecutive servers of
   their group. Non-replica-group tables take the first ``numInstances`` servers of one pool.

With ``minimizeDataMovement`` and the existing instance partitions, steps 1 and 3 keep servers in
place instead (:mod:`workbench.pinot.assignment.minimize`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from workbench.errors import TableConfigError
from workbench.pinot.assignment.config import (
    PARTITION_SELECTORS,
    InstanceAssignmentConfig,
    ReplicaGroupPartitionConfig,
    TagPoolConfig,
    instance_assignment_config,
    server_tag,
)
from workbench.pinot.assignment.minimize import (
    keep_existing_pools,
    minimum_movement_members,
    minimum_movement_partitions,
    minimum_movement_pools,
    select_with_minimum_movement,
)
from workbench.pinot.assignment.partitions import Instance, InstancePartitions
from workbench.pinot.jvm import java_string_hash
from workbench.pinot.table_config import TableConfig

__all__ = ["assign_instances", "default_instance_partitions", "instance_partitions_for",
           "select_replica_group_instances", "table_hash"]


def table_hash(table_name_with_type: str) -> int:
    """``Math.abs(tableNameWithType.hashCode())``, the seed of pool choice and rotation.

    For the single hash ``Integer.MIN_VALUE`` Java keeps it negative and would index out of range;
    Python's ``abs`` gives 2**31 instead. One name in 2**32 is affected.
    """
    return abs(java_string_hash(table_name_with_type))


def _raw_name(table_name_with_type: str) -> str:
    return re.sub(r"_(OFFLINE|REALTIME)$", "", table_name_with_type)


def _tagged(instances: Iterable[Instance], tag: str) -> list[Instance]:
    return sorted((i for i in instances if i.enabled and tag in i.tags), key=lambda i: i.name)


def _select_pools(cfg: TagPoolConfig, instances: Iterable[Instance], h: int, where: str,
                  existing: InstancePartitions | None) -> dict[int, list[str]]:
    """Tag/pool selection: sorted tagged servers, grouped by pool when ``poolBased``."""
    tagged = _tagged(instances, cfg.tag)
    if not tagged:
        raise TableConfigError(f"{where}.tag", f"No enabled instance has the tag: {cfg.tag}")
    if not cfg.pool_based:
        return {0: [i.name for i in tagged]}
    by_pool: dict[int, list[str]] = {}
    for inst in tagged:
        if cfg.tag in inst.pools:
            by_pool.setdefault(int(inst.pools[cfg.tag]), []).append(inst.name)
    if not by_pool:
        raise TableConfigError(f"{where}.poolBased",
                               f"No enabled instance has the pool configured for the tag: {cfg.tag}")
    pool_of = {name: pool for pool, names in by_pool.items() for name in names}
    return {p: by_pool[p] for p in _pools_to_keep(cfg, sorted(by_pool), h, where, pool_of, existing)}


def _pools_to_keep(cfg: TagPoolConfig, available: list[int], h: int, where: str, pool_of: dict[str, int],
                   existing: InstancePartitions | None) -> list[int]:
    if cfg.pools:
        if not set(cfg.pools) <= set(available):
            raise TableConfigError(f"{where}.pools",
                                   f"Cannot find all instance pools configured: {list(cfg.pools)}")
        return [p for p in available if p in cfg.pools]
    wanted = cfg.num_pools or len(available)
    if wanted > len(available):
        raise TableConfigError(f"{where}.numPools",
                               f"Not enough instance pools ({len(available)} in the cluster, "
                               f"asked for {wanted})")
    if wanted == len(available):
        return available
    if existing is not None:
        return keep_existing_pools(wanted, available, h, pool_of, existing)
    chosen = {available[(h + i) % len(available)] for i in range(wanted)}
    return [p for p in available if p in chosen]


def _not_enough(where: str, pool: int, have: int, want: int) -> TableConfigError:
    return TableConfigError(where, f"Not enough qualified instances from pool: {pool} ({have} in the pool, "
                                   f"asked for {want})")


def _rotate(names: list[str], h: int) -> list[str]:
    """The default constraint: rotate left by ``hash % n`` so tables start on different servers."""
    k = h % len(names)
    return names[k:] + names[:k]


def assign_instances(table_name_with_type: str, config: InstanceAssignmentConfig, instances: Iterable[Instance],
                     kind: str = "OFFLINE", existing: InstancePartitions | None = None,
                     minimize_data_movement: bool | None = None) -> InstancePartitions:
    """Run Pinot's instance assignment for one ``kind``.

    Parameters
    ----------
    table_name_with_type
        For example ``myTable_OFFLINE``; its Java hash drives pool choice and rotation.
    config
        The parsed config, e.g. from :func:`instance_assignment_config`.
    instances
        Every server in the cluster; disabled or untagged ones are ignored.
    kind
        OFFLINE, CONSUMING, COMPLETED or a tier; names the result ``<rawTable>_<kind>``.
    existing
        The table's current instance partitions, used only with minimizeDataMovement (Pinot passes
        none when a rebalance runs with ``bootstrap``).
    minimize_data_movement
        The rebalance's override (``ENABLE`` True, ``DISABLE`` False); ``None`` (``DEFAULT``) uses the
        config's flag.
    """
    _check_modelled(config)
    minimize = config.minimize_data_movement if minimize_data_movement is None else minimize_data_movement
    keep = existing if minimize else None
    h = table_hash(table_name_with_type)
    pools = _select_pools(config.tag_pool, instances, h, f"{config.where}.tagPoolConfig", keep)
    pools = {p: _rotate(names, h) for p, names in pools.items()}
    rg = config.replica_group_partition
    where = f"{config.where}.replicaGroupPartitionConfig"
    if rg.replica_group_based:
        partitions = select_replica_group_instances(rg, pools, h, where, keep)
    else:
        partitions = {"0_0": _non_replica_group(rg, pools, h, where, keep)}
    return InstancePartitions.of(f"{_raw_name(table_name_with_type)}_{kind}", partitions)


def _check_modelled(config: InstanceAssignmentConfig) -> None:
    if config.constraints is not None:
        raise TableConfigError(f"{config.where}.constraintConfig", "Pinot implements no named instance "
                               "constraints (UnsupportedOperationException); remove constraintConfig")
    if config.partition_selector != PARTITION_SELECTORS[0]:
        raise TableConfigError(f"{config.where}.partitionSelector", f"{config.partition_selector} is valid "
                               f"in Pinot but not modelled by the workbench (only {PARTITION_SELECTORS[0]})")


def _non_replica_group(rg: ReplicaGroupPartitionConfig, pools: dict[int, list[str]], h: int, where: str,
                       existing: InstancePartitions | None) -> tuple[str, ...]:
    pool_ids = sorted(pools)
    pool = pool_ids[h % len(pool_ids)]
    names = pools[pool]
    if rg.num_instances > len(names):
        raise _not_enough(f"{where}.numInstances", pool, len(names), rg.num_instances)
    count = rg.num_instances or len(names)
    if existing is None:
        return tuple(names[:count])
    if "0_0" not in existing.partitions:
        raise TableConfigError(where, "the existing instance partitions have no partition 0 of replica group 0")
    return tuple(select_with_minimum_movement(count, names, existing.instances(0, 0)))


def select_replica_group_instances(rg: ReplicaGroupPartitionConfig, pools: dict[int, list[str]], h: int,
                                   where: str = "replicaGroupPartitionConfig",
                                   existing: InstancePartitions | None = None) -> dict[str, tuple[str, ...]]:
    """Pinot's ``InstanceReplicaGroupPartitionSelector.selectInstances`` in replica-group mode.

    ``pools`` maps pool id -> its servers in the order the constraint left them; ``h`` is the table
    hash (:func:`table_hash`); ``existing`` switches on minimizeDataMovement. Returns
    ``"<partition>_<group>"`` -> servers.
    """
    pool_ids = sorted(pools)
    if existing is None:
        group_pool = {r: pool_ids[(h + r) % len(pool_ids)] for r in range(rg.num_replica_groups)}
        groups_of_pool: dict[int, list[int]] = {}
        for r in sorted(group_pool):
            groups_of_pool.setdefault(group_pool[r], []).append(r)
        held: list[set[str]] = []
    else:
        pool_of = {name: pool for pool, names in pools.items() for name in names}
        groups_of_pool, held = minimum_movement_pools(rg.num_replica_groups, pool_ids, h, pool_of, existing)
    per_group = _instances_per_group(rg, pools, groups_of_pool, where)
    per_partition = rg.num_instances_per_partition or per_group
    if per_partition > per_group:
        raise TableConfigError(f"{where}.numInstancesPerPartition",
                               f"Number of instances per partition: {per_partition} must be smaller or equal "
                               f"to number of instances per replica-group: {per_group}")
    num_partitions = max(rg.num_partitions, 1)
    if existing is None:
        members = _deal(pools, groups_of_pool, per_group)
    else:
        members = minimum_movement_members(groups_of_pool, pools, held, per_group)
    out: dict[str, tuple[str, ...]] = {}
    for r in range(rg.num_replica_groups):
        if existing is not None and r < existing.num_replica_groups and num_partitions == 1:
            # Pinot fills the whole group here, whatever numInstancesPerPartition says
            rows = [tuple(select_with_minimum_movement(per_group, members[r], existing.instances(0, r)))]
        elif existing is not None and r < existing.num_replica_groups:
            rows = minimum_movement_partitions(members[r], num_partitions, per_partition, existing, r)
        else:
            rows = _fill_partitions(members[r], num_partitions, per_partition)
        for p, servers in enumerate(rows):
            out[f"{p}_{r}"] = servers
    return out


def _instances_per_group(rg: ReplicaGroupPartitionConfig, pools: dict[int, list[str]],
                         groups_of_pool: dict[int, list[int]], where: str) -> int:
    configured = rg.num_instances_per_replica_group
    best = configured or min(len(pools[p]) // len(g) for p, g in groups_of_pool.items())
    for pool, groups in groups_of_pool.items():
        size = len(pools[pool])
        if configured and configured * len(groups) > size:
            raise _not_enough(f"{where}.numInstancesPerReplicaGroup", pool, size, configured * len(groups))
        if not configured and len(groups) > size:
            raise TableConfigError(f"{where}.numReplicaGroups",
                                   f"Not enough qualified instances from pool: {pool}, cannot select "
                                   f"{len(groups)} replica-groups from {size} instances")
    return best


def _deal(pools: dict[int, list[str]], groups_of_pool: dict[int, list[int]],
          per_group: int) -> dict[int, list[str]]:
    """Deal each pool's servers round-robin over its replica groups, slot by slot."""
    members: dict[int, list[str]] = {}
    for pool, groups in groups_of_pool.items():
        it = iter(pools[pool])
        for _slot in range(per_group):
            for r in groups:
                members.setdefault(r, []).append(next(it))
    return members


def _fill_partitions(group: list[str], num_partitions: int, per_partition: int) -> list[tuple[str, ...]]:
    """Partition p takes the next ``per_partition`` servers of the group, wrapping around."""
    cursor = 0
    out = []
    for _p in range(num_partitions):
        out.append(tuple(group[(cursor + i) % len(group)] for i in range(per_partition)))
        cursor = (cursor + per_partition) % len(group)
    return out


def default_instance_partitions(table_name_with_type: str, tag: str, instances: Iterable[Instance],
                                kind: str = "OFFLINE") -> InstancePartitions:
    """Pinot's fallback with no instance assignment config: every server carrying ``tag`` (enabled
    or not, so disabling one does not reshuffle data), sorted and rotated by the table hash, as one
    partition of one replica group (``InstancePartitionsUtils.computeDefaultInstancePartitionsForTag``)."""
    names = sorted(i.name for i in instances if tag in i.tags)
    if not names:
        raise TableConfigError("tenants.server", f"No instance found with tag: {tag}")
    rotated = tuple(_rotate(names, table_hash(table_name_with_type)))
    return InstancePartitions.of(f"{_raw_name(table_name_with_type)}_{kind}", {"0_0": rotated})


def instance_partitions_for(table_config: TableConfig, kind: str, instances: Iterable[Instance],
                            existing: InstancePartitions | None = None,
                            minimize_data_movement: bool | None = None) -> InstancePartitions:
    """Instance partitions for one ``kind`` of a table, configured or default, as the controller
    computes them on table creation (``existing`` absent) or on a rebalance that reassigns instances.

    For COMPLETED without a config (and no ``tagOverrideConfig``) Pinot does not relocate completed
    segments: they stay on the CONSUMING servers, so use the CONSUMING partitions instead.
    """
    instances = list(instances)
    config = instance_assignment_config(table_config, kind)
    if config is None:
        tag = server_tag(table_config, kind)
        return default_instance_partitions(table_config.table_name_with_type, tag, instances, kind)
    return assign_instances(table_config.table_name_with_type, config, instances, kind, existing,
                            minimize_data_movement)
