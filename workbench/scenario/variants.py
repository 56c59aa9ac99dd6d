"""Ready-made scenario overrides for the layouts capacity planners compare.

Each function returns dotted-key overrides for :meth:`Scenario.with_overrides`, written in Pinot's
own table-config terms, so a notebook or sweep can say "3 replica groups of 4" in one call.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import InputError
from workbench.scenario import Scenario

__all__ = ["balanced_layout", "qps_override", "question_overrides", "replica_group_layout"]


def qps_override(base: Scenario, qps: float | None) -> dict[str, Any]:
    """The override that sizes ``base`` for ``qps`` queries/s (none for ``None``). A replayed query log's load
    is the log's own: a rate given for it would be silently ignored, so it is an error naming the way to
    load a log harder. One rule for every command that takes ``--qps`` (a sizing sweep, the upsert question)."""
    if qps is None:
        return {}
    if base.workload.arrival.process == "replay":
        raise InputError("qps", "the scenario replays a query log, whose load is the log's own; leave qps unset, "
                                "replay the log faster (workload.arrival.speed), or give a Poisson workload "
                                "(workload.arrival.process: poisson)")
    return {"workload.arrival.qps": qps}


def question_overrides(base: Scenario, *, qps: float | None = None, slo_p99_ms: float | None = None,
                       duration_s: float | None = None, replications: int | None = None) -> dict[str, Any]:
    """The overrides every candidate of a sizing question carries (a sizing sweep's points, the upsert question's):
    the load (:func:`qps_override`), the p99 SLO, and the simulation effort. A shorter run keeps its warm-up at
    most a tenth of it, so a quick look is not all warm-up. ``None`` keeps the scenario's.

    >>> from workbench.scenario import load_scenario
    >>> question_overrides(load_scenario({}), qps=50, duration_s=20)
    {'workload.arrival.qps': 50, 'simulation.duration_s': 20, 'simulation.warmup_s': 2.0}
    """
    fixed: dict[str, Any] = {}
    if slo_p99_ms is not None:
        fixed["slo.p99_ms"] = slo_p99_ms
    fixed.update(qps_override(base, qps))
    if replications is not None:
        fixed["simulation.replications"] = replications
    if duration_s is not None:
        fixed["simulation.duration_s"] = duration_s
        fixed["simulation.warmup_s"] = min(base.simulation.warmup_s, duration_s / 10)
    return fixed


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
