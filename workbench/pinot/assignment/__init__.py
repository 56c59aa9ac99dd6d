"""Replica-group instance assignment and segment assignment, as Pinot's controller performs them.

Two steps decide which servers hold which segment (``shared/reference/pinot-behaviour.md`` §4):

1. **Instance assignment** turns ``instanceAssignmentConfigMap`` (or the legacy
   ``segmentsConfig.replicaGroupStrategyConfig``) plus the cluster's servers into
   :class:`InstancePartitions`: for every ``(partition, replica group)`` an ordered server list.
   Pinot rotates the servers by the Java ``String.hashCode`` of the table name *with* its type, so
   the layout is deterministic but differs per table; a planner must reproduce it to know which
   servers share segments. On a rebalance with ``minimizeDataMovement`` the existing partitions are
   kept as far as possible (:mod:`.minimize`).
2. **Segment assignment** places each segment on servers: ``balanced`` (fewest segments first),
   ``replicaGroup`` (least-loaded server of replica group 0, mirrored to the same index in every other
   group) or, for CONSUMING segments, straight from the stream partition id; a rebalance moves
   existing segments with :mod:`.reassign`.

The modules: :mod:`.config` (reading the table config), :mod:`.partitions` (the values),
:mod:`.instances` and :mod:`.minimize` (instance assignment), :mod:`.segments` and :mod:`.reassign`
(segment assignment). This package gathers their public names.

Pinot's ``InstanceAssignmentTest.testDefaultOfflineReplicaGroup``, reproduced:

>>> from workbench.pinot.table_config import TableConfig
>>> tc = TableConfig.from_json({"tableName": "myTable", "tableType": "OFFLINE", "segmentsConfig": {
...     "replication": "3", "segmentAssignmentStrategy": "replicagroup",
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

from workbench.pinot.assignment.config import (
    INSTANCE_PARTITIONS_TYPES,
    InstanceAssignmentConfig,
    ReplicaGroupPartitionConfig,
    TagPoolConfig,
    instance_assignment_config,
    partition_column,
    server_tag,
    uses_legacy_replica_groups,
)
from workbench.pinot.assignment.instances import (
    assign_instances,
    default_instance_partitions,
    instance_partitions_for,
)
from workbench.pinot.assignment.partitions import Instance, InstancePartitions
from workbench.pinot.assignment.reassign import reassign_balanced, reassign_consuming, reassign_replica_group
from workbench.pinot.assignment.segments import (
    SEGMENT_ASSIGNMENT_STRATEGIES,
    assign_consuming_segment,
    assign_segment,
    assign_segments,
    segment_assignment_strategy,
    segment_counts,
    segment_partition_id,
)
from workbench.pinot.jvm import java_string_hash

__all__ = [
    "INSTANCE_PARTITIONS_TYPES", "SEGMENT_ASSIGNMENT_STRATEGIES", "Instance", "InstanceAssignmentConfig",
    "InstancePartitions", "ReplicaGroupPartitionConfig", "TagPoolConfig", "assign_consuming_segment",
    "assign_instances", "assign_segment", "assign_segments", "default_instance_partitions",
    "instance_assignment_config", "instance_partitions_for", "java_string_hash", "partition_column",
    "reassign_balanced", "reassign_consuming", "reassign_replica_group", "segment_assignment_strategy",
    "segment_counts", "segment_partition_id", "server_tag", "uses_legacy_replica_groups",
]
