"""Reading the instance-assignment parts of a table config, with the spellings Pinot has used.

Pinot decides *how* a table's servers are grouped from ``instanceAssignmentConfigMap`` or, for an
OFFLINE table without one, from the legacy ``segmentsConfig.replicaGroupStrategyConfig``
(``shared/reference/pinot-behaviour.md`` §4.1). Current Pinot reads the legacy form only when
``segmentsConfig.segmentAssignmentStrategy`` equals ``replicagroup`` ignoring case
(``InstanceAssignmentConfigUtils.allowInstanceAssignment``); 0.x wrote
``ReplicaGroupSegmentAssignmentStrategy`` there, which today's Pinot no longer matches. The workbench
keeps that old value working and warns, naming the current spelling.

``minimizeDataMovement`` (keep servers in place when instances are reassigned) is read from
``instanceAssignmentConfigMap.<kind>.minimizeDataMovement``; the deprecated places Pinot still honours
(``replicaGroupPartitionConfig.minimizeDataMovement``, ``segmentsConfig.minimizeDataMovement`` for the
legacy form) work too, with a warning.

>>> from workbench.pinot.table_config import TableConfig
>>> tc = TableConfig.from_json({"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {
...     "replication": 2, "segmentAssignmentStrategy": "replicaGroup",
...     "replicaGroupStrategyConfig": {"numInstancesPerPartition": 3}}})
>>> instance_assignment_config(tc, "OFFLINE").replica_group_partition
ReplicaGroupPartitionConfig(replica_group_based=True, num_instances=0, num_replica_groups=2, \
num_instances_per_replica_group=3, num_partitions=0, num_instances_per_partition=0, partition_column=None)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.errors import TableConfigError
from workbench.pinot.table_config import TableConfig

__all__ = [
    "INSTANCE_PARTITIONS_TYPES", "PARTITION_SELECTORS", "InstanceAssignmentConfig", "ReplicaGroupPartitionConfig",
    "TagPoolConfig", "instance_assignment_config", "json_int", "partition_column", "server_tag",
    "uses_legacy_replica_groups",
]

#: Keys of ``instanceAssignmentConfigMap`` with a built-in meaning (tier names are also allowed).
INSTANCE_PARTITIONS_TYPES = ("OFFLINE", "CONSUMING", "COMPLETED")
#: ``CommonConstants.Segment.AssignmentStrategy.REPLICA_GROUP_SEGMENT_ASSIGNMENT_STRATEGY`` since 0.11.
REPLICA_GROUP_STRATEGY = "replicagroup"
#: The same constant's value in 0.x releases.
LEGACY_REPLICA_GROUP_STRATEGY = "replicagroupsegmentassignmentstrategy"
_RG_KEYS = ("numInstances", "numReplicaGroups", "numInstancesPerReplicaGroup", "numPartitions",
            "numInstancesPerPartition")
PARTITION_SELECTORS = ("INSTANCE_REPLICA_GROUP_PARTITION_SELECTOR", "FD_AWARE_INSTANCE_PARTITION_SELECTOR",
                       "MIRROR_SERVER_SET_PARTITION_SELECTOR", "IMPLICIT_REALTIME_TABLE_PARTITION_SELECTOR")


def json_int(raw: Any, where: str, minimum: int | None = None) -> int:
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


def _deprecated(old: str, current: str, note: str = "") -> None:
    warnings.warn(f"{old} is an older spelling; current Pinot reads {current}{note}", UserWarning, stacklevel=4)


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
        selector = str(raw.get("partitionSelector") or PARTITION_SELECTORS[0])
        if selector not in PARTITION_SELECTORS:
            raise TableConfigError(f"{where}.partitionSelector", f"must be one of {PARTITION_SELECTORS}")
        constraints = raw.get("constraintConfig")
        rg_raw = raw["replicaGroupPartitionConfig"]
        minimize = bool(raw.get("minimizeDataMovement", False))
        if rg_raw.get("minimizeDataMovement"):
            _deprecated(f"{where}.replicaGroupPartitionConfig.minimizeDataMovement", f"{where}.minimizeDataMovement")
            minimize = True
        return cls(_tag_pool_from_json(raw["tagPoolConfig"], f"{where}.tagPoolConfig"),
                   _rg_from_json(rg_raw, f"{where}.replicaGroupPartitionConfig"), selector,
                   None if constraints is None else tuple(map(str, constraints.get("constraints") or ())),
                   minimize, where)


def _tag_pool_from_json(raw: Mapping[str, Any], where: str) -> TagPoolConfig:
    if not raw.get("tag"):
        raise TableConfigError(f"{where}.tag", "'tag' must be configured")
    pools = tuple(json_int(p, f"{where}.pools") for p in raw.get("pools") or ())
    num_pools = json_int(raw.get("numPools", 0), f"{where}.numPools", minimum=0)
    return TagPoolConfig(str(raw["tag"]), bool(raw.get("poolBased", False)), num_pools, pools)


def _rg_from_json(raw: Mapping[str, Any], where: str) -> ReplicaGroupPartitionConfig:
    n, groups, per_group, partitions, per_partition = (json_int(raw.get(k, 0), f"{where}.{k}")
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
    uses the default instance partitions (all tagged servers, one group, one partition)."""
    cmap = table_config.instance_assignment_config_map
    for key in cmap:
        if key not in INSTANCE_PARTITIONS_TYPES and key not in _tier_names(table_config):
            raise TableConfigError(f"instanceAssignmentConfigMap.{key}",
                                   f"must be one of {INSTANCE_PARTITIONS_TYPES} or a tier name")
    if kind in cmap and _kind_matches_table(table_config, kind):
        return InstanceAssignmentConfig.from_json(cmap[kind], f"instanceAssignmentConfigMap.{kind}")
    if kind == "OFFLINE" == table_config.table_type and uses_legacy_replica_groups(table_config):
        return _legacy_config(table_config)
    return None


def _tier_names(table_config: TableConfig) -> set[str]:
    return {str(t.get("name")) for t in table_config.raw.get("tierConfigs") or () if isinstance(t, Mapping)}


def _kind_matches_table(table_config: TableConfig, kind: str) -> bool:
    if kind == "OFFLINE":
        return table_config.table_type == "OFFLINE"
    return kind not in INSTANCE_PARTITIONS_TYPES or table_config.table_type == "REALTIME"


def uses_legacy_replica_groups(table_config: TableConfig) -> bool:
    """Whether ``segmentsConfig.segmentAssignmentStrategy`` asks for replica-group instance assignment.

    ``replicagroup`` in any case, as current Pinot compares it; the 0.x value
    ``ReplicaGroupSegmentAssignmentStrategy`` is accepted with a warning naming the current one.
    """
    where = "segmentsConfig.segmentAssignmentStrategy"
    strategy = str(table_config.section("segmentsConfig").get("segmentAssignmentStrategy") or "").lower()
    if strategy == LEGACY_REPLICA_GROUP_STRATEGY:
        _deprecated(f"{where} = 'ReplicaGroupSegmentAssignmentStrategy' (Pinot 0.x)",
                    f"{where} = '{REPLICA_GROUP_STRATEGY}'",
                    " (and segmentAssignmentConfigMap.OFFLINE.segmentAssignmentStrategy for the segment strategy)")
        return True
    return strategy == REPLICA_GROUP_STRATEGY


def _legacy_config(table_config: TableConfig) -> InstanceAssignmentConfig:
    where = "segmentsConfig.replicaGroupStrategyConfig"
    legacy = table_config.section("segmentsConfig", "replicaGroupStrategyConfig")
    if not legacy:
        raise TableConfigError(where, "Failed to find the replica-group strategy config")
    per_partition = json_int(legacy.get("numInstancesPerPartition", 0), f"{where}.numInstancesPerPartition")
    column = legacy.get("partitionColumn")
    rg = ReplicaGroupPartitionConfig(True, 0, table_config.replication, per_partition, 0, 0, None)
    if column:
        partitions = table_config.column_partition_map.get(str(column))
        if partitions is None:
            raise TableConfigError(f"{where}.partitionColumn",
                                   f"Number of partitions for column: {column} is not properly configured")
        n = partitions.num_partitions
        rg = ReplicaGroupPartitionConfig(True, 0, table_config.replication, 0, n, per_partition, str(column))
    minimize = bool(table_config.section("segmentsConfig").get("minimizeDataMovement", False))
    if minimize:
        _deprecated("segmentsConfig.minimizeDataMovement", "instanceAssignmentConfigMap.OFFLINE.minimizeDataMovement")
    tag_pool = TagPoolConfig(server_tag(table_config, "OFFLINE"))
    return InstanceAssignmentConfig(tag_pool, rg, minimize_data_movement=minimize, where=where)


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
