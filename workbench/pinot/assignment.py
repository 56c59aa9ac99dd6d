"""Replica-group instance assignment and segment assignment, as Pinot's controller performs them.

Two steps decide which servers hold which segment (``shared/reference/pinot-behaviour.md`` §4):

1. **Instance assignment** turns ``instanceAssignmentConfigMap`` (or the legacy
   ``segmentsConfig.replicaGroupStrategyConfig``) plus the cluster's servers into
   :class:`InstancePartitions`: for every ``(partition, replica group)`` an ordered server list.
   Pinot rotates the servers by the Java ``String.hashCode`` of the table name *with* its type, so
   the layout is deterministic but differs per table; a planner must reproduce it to know which
   servers share segments.
2. **Segment assignment** places each segment on servers: ``balanced`` (fewest segments first),
   ``replicaGroup`` (least-loaded server of replica group 0, mirrored to the same index in every other
   group) or, for CONSUMING segments, straight from the stream partition id.

Pinot's ``InstanceAssignmentTest.testDefaultOfflineReplicaGroup``, reproduced:

>>> from workbench.pinot.table_config import TableConfig
>>> tc = TableConfig.from_json({"tableName": "myTable", "tableType": "OFFLINE", "segmentsConfig": {
...     "replication": "3", "segmentAssignmentStrategy": "ReplicaGroupSegmentAssignmentStrategy",
...     "replicaGroupStrategyConfig": {"numInstancesPerPartition": 2}}})
>>> servers = [Instance(f"Server_localhost_{i}", tags=("DefaultTenant_OFFLINE",)) for i in range(10)]
>>> ip = instance_partitions_for(tc, "OFFLINE", servers)
>>> [ip.instances(0, r) for r in range(3)]  # doctest: +NORMALIZE_WHITESPACE
[('Server_localhost_8', 'Server_localhost_1'), ('Server_localhost_9', 'Server_localhost_2'),
 ('Server_localhost_0', 'Server_localhost_3')]
>>> ideal = assign_segments(["s0", "s1", "s2"], ip, strategy="replicaGroup", replication=3)
>>> sorted(ideal["s1"])
['Server_localhost_1', 'Server_localhost_2', 'Server_localhost_3']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any

from workbench.errors import TableConfigError
from workbench.pinot.table_config import TableConfig

__all__ = [
    "INSTANCE_PARTITIONS_TYPES", "SEGMENT_ASSIGNMENT_STRATEGIES", "Instance", "InstanceAssignmentConfig",
    "InstancePartitions", "ReplicaGroupPartitionConfig", "TagPoolConfig", "assign_consuming_segment",
    "assign_instances", "assign_segment", "assign_segments", "default_instance_partitions",
    "instance_assignment_config", "instance_partitions_for", "java_string_hash", "partition_column",
    "segment_assignment_strategy", "segment_partition_id", "server_tag",
]

#: Keys of ``instanceAssignmentConfigMap`` with a built-in meaning (tier names are also allowed).
INSTANCE_PARTITIONS_TYPES = ("OFFLINE", "CONSUMING", "COMPLETED")
_LEGACY_REPLICA_GROUP_STRATEGY = "replicagroupsegmentassignmentstrategy"
_RG_KEYS = ("numInstances", "numReplicaGroups", "numInstancesPerReplicaGroup", "numPartitions",
            "numInstancesPerPartition")
_PARTITION_SELECTORS = ("INSTANCE_REPLICA_GROUP_PARTITION_SELECTOR", "FD_AWARE_INSTANCE_PARTITION_SELECTOR",
                        "MIRROR_SERVER_SET_PARTITION_SELECTOR", "IMPLICIT_REALTIME_TABLE_PARTITION_SELECTOR")


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (signed 32-bit, over UTF-16 code units).

    Pinot derives instance rotation, fixed-replica routing and default segment partitions from it,
    so it must match the JVM bit for bit.

    >>> java_string_hash("myTable_OFFLINE"), abs(java_string_hash("myTable_OFFLINE")) % 10
    (438536198, 8)
    """
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _json_int(raw: Any, where: str, minimum: int | None = None) -> int:
    """An integer field as Pinot's Jackson reads it (numeric strings such as ``"3"`` accepted)."""
    try:
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            raise ValueError
        value = int(raw)
    except (TypeError, ValueError):
        raise TableConfigError(where, f"must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise TableConfigError(where, f"must be at least {minimum}, got {value}")
    return value


def _table_hash(table_name_with_type: str) -> int:
    # Pinot takes Math.abs(hashCode). For the single hash Integer.MIN_VALUE Java keeps it negative and
    # would index out of range; Python's abs gives 2**31 instead. One name in 2**32 is affected.
    return abs(java_string_hash(table_name_with_type))


# -- config -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TagPoolConfig:
    """``tagPoolConfig``: which servers qualify (by tag) and, when pool-based, which pools."""

    tag: str
    pool_based: bool = False
    num_pools: int = 0
    pools: tuple[int, ...] = ()


@dataclass(frozen=True)
class ReplicaGroupPartitionConfig:
    """``replicaGroupPartitionConfig``; zero means "as many as possible" for every count but
    ``num_replica_groups``, which must be positive in replica-group mode."""

    replica_group_based: bool = False
    num_instances: int = 0
    num_replica_groups: int = 0
    num_instances_per_replica_group: int = 0
    num_partitions: int = 0
    num_instances_per_partition: int = 0
    partition_column: str | None = None


@dataclass(frozen=True)
class InstanceAssignmentConfig:
    """One entry of ``instanceAssignmentConfigMap``; ``where`` is its key path, used in errors."""

    tag_pool: TagPoolConfig
    replica_group_partition: ReplicaGroupPartitionConfig
    partition_selector: str = "INSTANCE_REPLICA_GROUP_PARTITION_SELECTOR"
    #: ``constraintConfig.constraints``; ``None`` when ``constraintConfig`` is absent.
    constraints: tuple[str, ...] | None = None
    #: Only changes a *re*-assignment (keeps servers in place); a first assignment is unaffected.
    minimize_data_movement: bool = False
    where: str = field(default="instanceAssignmentConfigMap", compare=False)

    @classmethod
    def from_json(cls, raw: Any, where: str) -> InstanceAssignmentConfig:
        """Parse one entry with Pinot's checks (``tagPoolConfig`` and ``replicaGroupPartitionConfig``
        are required; replica-group mode needs ``numReplicaGroups`` > 0)."""
        if not isinstance(raw, Mapping):
            raise TableConfigError(where, "must be an object")
        for key in ("tagPoolConfig", "replicaGroupPartitionConfig"):
            if not isinstance(raw.get(key), Mapping):
                raise TableConfigError(f"{where}.{key}", f"'{key}' must be configured")
        selector = str(raw.get("partitionSelector") or _PARTITION_SELECTORS[0])
        if selector not in _PARTITION_SELECTORS:
            raise TableConfigError(f"{where}.partitionSelector", f"must be one of {_PARTITION_SELECTORS}")
        constraints = raw.get("constraintConfig")
        return cls(_tag_pool_from_json(raw["tagPoolConfig"], f"{where}.tagPoolConfig"),
                   _rg_from_json(raw["replicaGroupPartitionConfig"], f"{where}.replicaGroupPartitionConfig"),
                   selector,
                   None if constraints is None else tuple(map(str, constraints.get("constraints") or ())),
                   bool(raw.get("minimizeDataMovement", False)), where)


def _tag_pool_from_json(raw: Mapping[str, Any], where: str) -> TagPoolConfig:
    if not raw.get("tag"):
        raise TableConfigError(f"{where}.tag", "'tag' must be configured")
    pools = tuple(_json_int(p, f"{where}.pools") for p in raw.get("pools") or ())
    num_pools = _json_int(raw.get("numPools", 0), f"{where}.numPools", minimum=0)
    return TagPoolConfig(str(raw["tag"]), bool(raw.get("poolBased", False)), num_pools, pools)


def _rg_from_json(raw: Mapping[str, Any], where: str) -> ReplicaGroupPartitionConfig:
    n, groups, per_group, partitions, per_partition = (_json_int(raw.get(k, 0), f"{where}.{k}")
                                                       for k in _RG_KEYS)
    column = str(raw["partitionColumn"]) if raw.get("partitionColumn") else None
    based = bool(raw.get("replicaGroupBased", False))
    cfg = ReplicaGroupPartitionConfig(based, n, groups, per_group, partitions, per_partition, column)
    if cfg.replica_group_based and cfg.num_replica_groups <= 0:
        raise TableConfigError(f"{where}.numReplicaGroups", "number of replica-groups must be positive")
    return cfg


def server_tag(table_config: TableConfig, kind: str) -> str:
    """The server tag a table's ``kind`` segments live on: ``<tenants.server>_OFFLINE`` or
    ``_REALTIME`` (``tenants.tagOverrideConfig`` may override CONSUMING and COMPLETED)."""
    tenant = str(table_config.section("tenants").get("server") or "DefaultTenant")
    override = table_config.section("tenants", "tagOverrideConfig")
    key = {"CONSUMING": "realtimeConsuming", "COMPLETED": "realtimeCompleted"}.get(kind)
    if key and override.get(key):
        return str(override[key])
    return f"{tenant}_{'OFFLINE' if kind == 'OFFLINE' else 'REALTIME'}"


def instance_assignment_config(table_config: TableConfig, kind: str) -> InstanceAssignmentConfig | None:
    """The instance assignment config Pinot would use for ``kind`` (OFFLINE/CONSUMING/COMPLETED or a
    tier), including the legacy OFFLINE ``replicaGroupStrategyConfig`` form; ``None`` means Pinot
    uses :func:`default_instance_partitions` (all tagged servers, one group, one partition)."""
    cmap = table_config.instance_assignment_config_map
    for key in cmap:
        if key not in INSTANCE_PARTITIONS_TYPES and key not in _tier_names(table_config):
            raise TableConfigError(f"instanceAssignmentConfigMap.{key}",
                                   f"must be one of {INSTANCE_PARTITIONS_TYPES} or a tier name")
    if kind in cmap and _kind_matches_table(table_config, kind):
        return InstanceAssignmentConfig.from_json(cmap[kind], f"instanceAssignmentConfigMap.{kind}")
    if kind == "OFFLINE" == table_config.table_type and _uses_legacy_replica_groups(table_config):
        return _legacy_config(table_config)
    return None


def _tier_names(table_config: TableConfig) -> set[str]:
    return {str(t.get("name")) for t in table_config.raw.get("tierConfigs") or () if isinstance(t, Mapping)}


def _kind_matches_table(table_config: TableConfig, kind: str) -> bool:
    if kind == "OFFLINE":
        return table_config.table_type == "OFFLINE"
    return kind not in INSTANCE_PARTITIONS_TYPES or table_config.table_type == "REALTIME"


def _uses_legacy_replica_groups(table_config: TableConfig) -> bool:
    strategy = str(table_config.section("segmentsConfig").get("segmentAssignmentStrategy") or "")
    return strategy.lower() == _LEGACY_REPLICA_GROUP_STRATEGY


def _legacy_config(table_config: TableConfig) -> InstanceAssignmentConfig:
    where = "segmentsConfig.replicaGroupStrategyConfig"
    legacy = table_config.section("segmentsConfig", "replicaGroupStrategyConfig")
    if not legacy:
        raise TableConfigError(where, "Failed to find the replica-group strategy config")
    per_partition = _json_int(legacy.get("numInstancesPerPartition", 0), f"{where}.numInstancesPerPartition")
    column = legacy.get("partitionColumn")
    rg = ReplicaGroupPartitionConfig(True, 0, table_config.replication, per_partition, 0, 0, None)
    if column:
        partitions = table_config.column_partition_map.get(str(column))
        if partitions is None:
            raise TableConfigError(f"{where}.partitionColumn",
                                   f"Number of partitions for column: {column} is not properly configured")
        n = partitions.num_partitions
        rg = ReplicaGroupPartitionConfig(True, 0, table_config.replication, 0, n, per_partition, str(column))
    return InstanceAssignmentConfig(TagPoolConfig(server_tag(table_config, "OFFLINE")), rg, where=where)


def partition_column(table_config: TableConfig) -> str | None:
    """The column segment assignment partitions by: the first ``partitionColumn`` across
    ``instanceAssignmentConfigMap``, else ``replicaGroupStrategyConfig.partitionColumn``."""
    for entry in table_config.instance_assignment_config_map.values():
        rg = entry.get("replicaGroupPartitionConfig") if isinstance(entry, Mapping) else None
        column = rg.get("partitionColumn") if isinstance(rg, Mapping) else None
        if column:
            return str(column)
    legacy = table_config.section("segmentsConfig", "replicaGroupStrategyConfig").get("partitionColumn")
    return str(legacy) if legacy else None


# -- instance assignment ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Instance:
    """A server as instance assignment sees it: name, Helix tags, pool per tag, enabled flag."""

    name: str
    tags: Collection[str] = ()
    pools: Mapping[str, int] = field(default_factory=dict)
    enabled: bool = True


@dataclass(frozen=True)
class InstancePartitions:
    """Pinot's ``InstancePartitions``: ``"<partition>_<replicaGroup>"`` -> ordered server names."""

    name: str
    partitions: Mapping[str, tuple[str, ...]]

    @cached_property
    def num_partitions(self) -> int:
        """Number of partitions (the highest partition id plus one)."""
        return 1 + max(int(k.split("_")[0]) for k in self.partitions)

    @cached_property
    def num_replica_groups(self) -> int:
        """Number of replica groups (the highest replica-group id plus one)."""
        return 1 + max(int(k.split("_")[1]) for k in self.partitions)

    def instances(self, partition: int, replica_group: int) -> tuple[str, ...]:
        """The ordered servers of one partition in one replica group."""
        return self.partitions[f"{partition}_{replica_group}"]

    def all_instances(self) -> tuple[str, ...]:
        """Every server named anywhere, in first-seen order."""
        return tuple(dict.fromkeys(s for servers in self.partitions.values() for s in servers))


def _tagged(instances: Iterable[Instance], tag: str) -> list[Instance]:
    return sorted((i for i in instances if i.enabled and tag in i.tags), key=lambda i: i.name)


def _select_pools(cfg: TagPoolConfig, instances: Iterable[Instance], h: int,
                  where: str) -> dict[int, list[str]]:
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
    return {p: by_pool[p] for p in _pools_to_keep(cfg, sorted(by_pool), h, where)}


def _pools_to_keep(cfg: TagPoolConfig, available: list[int], h: int, where: str) -> list[int]:
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
    chosen = {available[(h + i) % len(available)] for i in range(wanted)}
    return [p for p in available if p in chosen]


def _not_enough(where: str, pool: int, have: int, want: int) -> TableConfigError:
    return TableConfigError(where, f"Not enough qualified instances from pool: {pool} ({have} in the pool, "
                                   f"asked for {want})")


def _rotate(names: list[str], h: int) -> list[str]:
    """The default constraint: rotate left by ``hash % n`` so tables start on different servers."""
    k = h % len(names)
    return names[k:] + names[:k]


def assign_instances(table_name_with_type: str, config: InstanceAssignmentConfig,
                     instances: Iterable[Instance], kind: str = "OFFLINE") -> InstancePartitions:
    """Run Pinot's default instance assignment (no ``minimizeDataMovement``) for one ``kind``.

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
    """
    _check_modelled(config)
    h = _table_hash(table_name_with_type)
    pools = _select_pools(config.tag_pool, instances, h, f"{config.where}.tagPoolConfig")
    pools = {p: _rotate(names, h) for p, names in pools.items()}
    raw = re.sub(r"_(OFFLINE|REALTIME)$", "", table_name_with_type)
    rg = config.replica_group_partition
    where = f"{config.where}.replicaGroupPartitionConfig"
    if rg.replica_group_based:
        partitions = _replica_group_partitions(rg, pools, h, where)
    else:
        partitions = {"0_0": _non_replica_group(rg, pools, h, where)}
    return InstancePartitions(f"{raw}_{kind}", MappingProxyType(partitions))


def _check_modelled(config: InstanceAssignmentConfig) -> None:
    if config.constraints is not None:
        raise TableConfigError(f"{config.where}.constraintConfig", "Pinot implements no named instance "
                               "constraints (UnsupportedOperationException); remove constraintConfig")
    if config.partition_selector != _PARTITION_SELECTORS[0]:
        raise TableConfigError(f"{config.where}.partitionSelector", f"{config.partition_selector} is valid "
                               f"in Pinot but not modelled by the workbench (only {_PARTITION_SELECTORS[0]})")


def _non_replica_group(rg: ReplicaGroupPartitionConfig, pools: dict[int, list[str]], h: int,
                       where: str) -> tuple[str, ...]:
    pool_ids = sorted(pools)
    pool = pool_ids[h % len(pool_ids)]
    names = pools[pool]
    if rg.num_instances > len(names):
        raise _not_enough(f"{where}.numInstances", pool, len(names), rg.num_instances)
    return tuple(names[: rg.num_instances or len(names)])


def _replica_group_partitions(rg: ReplicaGroupPartitionConfig, pools: dict[int, list[str]], h: int,
                              where: str) -> dict[str, tuple[str, ...]]:
    pool_ids = sorted(pools)
    groups_of_pool: dict[int, list[int]] = {}
    for r in range(rg.num_replica_groups):
        groups_of_pool.setdefault(pool_ids[(h + r) % len(pool_ids)], []).append(r)
    per_group = _instances_per_group(rg, pools, groups_of_pool, where)
    per_partition = rg.num_instances_per_partition or per_group
    if per_partition > per_group:
        raise TableConfigError(f"{where}.numInstancesPerPartition",
                               f"Number of instances per partition: {per_partition} must be smaller or equal "
                               f"to number of instances per replica-group: {per_group}")
    members = _deal(pools, groups_of_pool, per_group)
    out: dict[str, tuple[str, ...]] = {}
    for r in range(rg.num_replica_groups):
        for p, servers in enumerate(_fill_partitions(members[r], max(rg.num_partitions, 1), per_partition)):
            out[f"{p}_{r}"] = servers
    return dict(sorted(out.items(), key=lambda kv: tuple(int(x) for x in kv[0].split("_"))))


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
    raw = re.sub(r"_(OFFLINE|REALTIME)$", "", table_name_with_type)
    rotated = tuple(_rotate(names, _table_hash(table_name_with_type)))
    return InstancePartitions(f"{raw}_{kind}", MappingProxyType({"0_0": rotated}))


def instance_partitions_for(table_config: TableConfig, kind: str,
                            instances: Iterable[Instance]) -> InstancePartitions:
    """Instance partitions for one ``kind`` of a table, configured or default, as the controller
    would compute them on table creation.

    For COMPLETED without a config (and no ``tagOverrideConfig``) Pinot does not relocate completed
    segments: they stay on the CONSUMING servers, so use the CONSUMING partitions instead.
    """
    instances = list(instances)
    config = instance_assignment_config(table_config, kind)
    if config is None:
        tag = server_tag(table_config, kind)
        return default_instance_partitions(table_config.table_name_with_type, tag, instances, kind)
    return assign_instances(table_config.table_name_with_type, config, instances, kind)


# -- segment assignment -----------------------------------------------------------------------------
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
    to balanced); without one, ``replicaGroup`` unless the instance partitions are 1 group x 1 partition.
    """
    if table_config.raw.get("isDimTable"):
        raise TableConfigError("isDimTable", "dimension tables use the allservers strategy, which the "
                                             "workbench does not model")
    where = f"segmentAssignmentConfigMap.{kind.upper()}.segmentAssignmentStrategy"
    configured = table_config.section("segmentAssignmentConfigMap", kind.upper()).get(
        "segmentAssignmentStrategy")
    if configured:
        name = str(configured).lower()
        if name in _NOT_MODELLED:
            raise TableConfigError(where, f"{configured!r} is valid in Pinot but not modelled by the "
                                          "workbench")
        return _STRATEGY_NAMES.get(name, "balanced")
    return "balanced" if ip.num_replica_groups == 1 and ip.num_partitions == 1 else "replicaGroup"


def _enough_for_replication(ip: InstancePartitions, replication: int) -> tuple[str, ...]:
    servers = ip.instances(0, 0)
    if len(servers) < replication:
        raise TableConfigError("segmentsConfig.replication", f"There are less instances: {len(servers)} in "
                               f"instance partitions: {ip.name} than the table replication: {replication}")
    return servers


def _counts(assignment: Mapping[str, Mapping[str, str]]) -> dict[str, int]:
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
    return _strategy(strategy)(_counts(current), ip, replication, partition_id)


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
    counts = _counts(ideal)
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
