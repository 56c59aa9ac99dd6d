"""Ready-made scenario overrides for the layouts capacity planners compare.

Each function returns dotted-key overrides for :meth:`Scenario.with_overrides`, written in Pinot's
own table-config terms, so a notebook or sweep can say "3 replica groups of 4" in one call.
"""

from __future__ import annotations

from typing import Any

from workbench.scenario import Scenario

__all__ = ["balanced_layout", "replica_group_layout"]


def replica_group_layout(base: Scenario, num_replica_groups: int, instances_per_group: int,
                         selector: str = "replicaGroup") -> dict[str, Any]:
    """Overrides for ``num_replica_groups`` x ``instances_per_group`` servers with replica-group routing.

    Sets ``segmentsConfig.replication`` to the group count, an ``instanceAssignmentConfigMap`` entry
    for the table's segment kind (OFFLINE, or CONSUMING and COMPLETED for realtime tables) and
    ``routing.instanceSelectorType``.
    """
    table = base.table.to_json()
    kind_tag = f"{table.get('tenants', {}).get('server', 'DefaultTenant')}_{base.table.table_type}"
    entry = {"tagPoolConfig": {"tag": kind_tag},
             "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": num_replica_groups,
                                             "numInstancesPerReplicaGroup": instances_per_group}}
    kinds = ("OFFLINE",) if base.table.table_type == "OFFLINE" else ("CONSUMING", "COMPLETED")
    table.setdefault("segmentsConfig", {})["replication"] = num_replica_groups
    table.setdefault("routing", {})["instanceSelectorType"] = selector
    table["instanceAssignmentConfigMap"] = dict.fromkeys(kinds, entry)
    return {"table": table, "cluster.servers": num_replica_groups * instances_per_group}


def balanced_layout(base: Scenario, servers: int, replication: int) -> dict[str, Any]:
    """Overrides for balanced assignment and routing over ``servers`` with ``replication`` replicas."""
    table = base.table.to_json()
    table.setdefault("segmentsConfig", {})["replication"] = replication
    table.setdefault("routing", {})["instanceSelectorType"] = "balanced"
    table.pop("instanceAssignmentConfigMap", None)
    return {"table": table, "cluster.servers": servers}
