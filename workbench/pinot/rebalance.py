"""Scale-out what-if: what a Pinot rebalance does when servers are added or lost, and what it moves.

Given a table config, the servers it lives on now and the servers it will live on, :func:`plan_rebalance`
returns the instance partitions and ideal state Pinot's ``TableRebalancer`` would produce (instances
reassigned, segments reassigned by the table's strategy; :mod:`workbench.pinot.assignment`) and,
per server, the segments and bytes it must load or may drop. :func:`compare_minimize` runs it with
and without ``minimizeDataMovement``, which is what tells an operator how much data a grow moves.

``minimize_data_movement`` follows the rebalance API's option: ``None`` (``DEFAULT``) uses the table
config's flag, ``True`` (``ENABLE``) and ``False`` (``DISABLE``) override it. Current Pinot's rebalance
endpoint defaults to ``ENABLE``; it only matters for tables with an instance assignment config
(default instance partitions are recomputed from every tagged server either way).

Growing a 2-group x 2-server table to 6 servers with minimizeDataMovement: the existing four keep
their slots, so only the new servers receive segments.

>>> from workbench.pinot.table_config import TableConfig
>>> tc = TableConfig.from_json({"tableName": "t", "tableType": "OFFLINE", "segmentsConfig": {"replication": 2},
...     "instanceAssignmentConfigMap": {"OFFLINE": {"minimizeDataMovement": True,
...         "tagPoolConfig": {"tag": "DefaultTenant_OFFLINE"},
...         "replicaGroupPartitionConfig": {"replicaGroupBased": True, "numReplicaGroups": 2}}}})
>>> sizes = {f"seg{i:02d}": 100 for i in range(12)}
>>> plan = plan_rebalance(tc, ["s0", "s1", "s2", "s3"], ["s0", "s1", "s2", "s3", "s4", "s5"], sizes)
>>> sorted(s for s, n in plan.segments_in.items() if n), plan.bytes_moved
(['s4', 's5'], 800)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from workbench.errors import InputError
from workbench.pinot.assignment import (
    Instance,
    InstancePartitions,
    assign_consuming_segment,
    assign_segments,
    instance_assignment_config,
    instance_partitions_for,
    reassign_balanced,
    reassign_consuming,
    reassign_replica_group,
    segment_assignment_strategy,
    segment_partition_id,
    server_tag,
)
from workbench.pinot.table_config import TableConfig

__all__ = ["RebalancePlan", "ServerMoves", "compare_minimize", "initial_ideal_state", "plan_rebalance",
           "relocates_completed", "servers_for_table", "table_instance_partitions", "tenant_plan"]

IdealState = Mapping[str, Mapping[str, str]]
Servers = Sequence[str] | Sequence[Instance]


@dataclass(frozen=True)
class ServerMoves:
    """One server's side of a rebalance: segment replicas (and bytes) before, after, in and out."""

    server: str
    segments_before: int
    segments_after: int
    segments_in: int
    segments_out: int
    bytes_in: int
    bytes_out: int


@dataclass(frozen=True)
class RebalancePlan:
    """The outcome of one rebalance: new instance partitions, new ideal state, and what moves.

    ``bytes_*`` are in bytes, from the segment sizes given; a segment replica added to a server is
    downloaded by it (``in``), one removed is dropped (``out``).
    """

    table: str
    minimize_data_movement: bool
    previous_instance_partitions: Mapping[str, InstancePartitions]
    instance_partitions: Mapping[str, InstancePartitions]
    previous_assignment: IdealState
    assignment: IdealState
    moves: tuple[ServerMoves, ...]

    @property
    def segments_in(self) -> dict[str, int]:
        """Segment replicas each server must load."""
        return {m.server: m.segments_in for m in self.moves}

    @property
    def segments_moved(self) -> int:
        """Segment replicas loaded somewhere new (each move counted once, at its destination)."""
        return sum(m.segments_in for m in self.moves)

    @property
    def bytes_moved(self) -> int:
        """Bytes downloaded by the servers receiving segments."""
        return sum(m.bytes_in for m in self.moves)

    def table_rows(self) -> list[dict[str, object]]:
        """One flat row per server, for a DataFrame."""
        return [vars(m).copy() for m in self.moves]


def servers_for_table(table_config: TableConfig, servers: Servers) -> list[Instance]:
    """Servers as :class:`Instance` values; bare names get the table's server tags, pool 0."""
    kinds = ("OFFLINE",) if table_config.table_type == "OFFLINE" else ("CONSUMING", "COMPLETED")
    tags = tuple(dict.fromkeys(server_tag(table_config, k) for k in kinds))
    return [s if isinstance(s, Instance) else Instance(str(s), tags=tags, pools=dict.fromkeys(tags, 0))
            for s in servers]


def _kinds(table_config: TableConfig) -> tuple[str, ...]:
    return ("OFFLINE",) if table_config.table_type == "OFFLINE" else ("CONSUMING", "COMPLETED")


def relocates_completed(table_config: TableConfig) -> bool:
    """Whether a REALTIME table moves its completed segments off the consuming servers.

    Pinot does so only with COMPLETED instance partitions: a ``COMPLETED`` instance assignment config,
    or ``tenants.tagOverrideConfig.realtimeCompleted`` naming a tag other than the consuming one.
    Otherwise a completed segment stays where its stream partition is consumed
    (``RealtimeSegmentAssignment``), so a table with fewer partitions than servers leaves servers idle.
    """
    override = table_config.section("tenants", "tagOverrideConfig")
    moved = override.get("realtimeCompleted") and override.get("realtimeCompleted") != override.get(
        "realtimeConsuming", server_tag(table_config, "CONSUMING"))
    return instance_assignment_config(table_config, "COMPLETED") is not None or bool(moved)


def table_instance_partitions(table_config: TableConfig, instances: Sequence[Instance],
                              existing: Mapping[str, InstancePartitions] | None = None,
                              minimize: bool | None = None) -> dict[str, InstancePartitions]:
    """The table's instance partitions by kind (OFFLINE, or CONSUMING and, when it relocates, COMPLETED),
    as table creation (``existing`` absent) or a rebalance that reassigns instances computes them."""
    out = {}
    for kind in _kinds(table_config):
        if kind == "COMPLETED" and not relocates_completed(table_config):
            continue
        before = None if existing is None else existing.get(kind)
        out[kind] = instance_partitions_for(table_config, kind, instances, before, minimize)
    return out


def initial_ideal_state(table_config: TableConfig, ips: Mapping[str, InstancePartitions], segments: Iterable[str],
                        consuming: frozenset[str], partition_of: Callable[[str], int]) -> dict[str, dict[str, str]]:
    """The ideal state the controller builds committing or uploading ``segments`` in order onto ``ips``
    (:func:`table_instance_partitions`): completed segments by the table's strategy when the table
    relocates them, else on their stream partition's consuming servers; consuming ones by partition."""
    replication = table_config.replication
    names = list(segments)
    if table_config.table_type == "OFFLINE":
        ip = ips["OFFLINE"]
        strategy = segment_assignment_strategy(table_config, "OFFLINE", ip)
        return assign_segments(names, ip, strategy=strategy, replication=replication, partition_of=partition_of)
    sealed = [n for n in names if n not in consuming]
    completed = ips.get("COMPLETED", ips["CONSUMING"])
    if "COMPLETED" in ips:
        strategy = segment_assignment_strategy(table_config, "COMPLETED", completed)
        ideal = assign_segments(sealed, completed, strategy=strategy, replication=replication,
                                partition_of=partition_of)
    else:
        ideal = reassign_consuming({name: {} for name in sealed}, completed, replication, "ONLINE", partition_of)
    for name in names:
        if name in consuming:
            servers = assign_consuming_segment(partition_of(name), ips["CONSUMING"], replication)
            ideal[name] = dict.fromkeys(servers, "CONSUMING")
    return ideal


def _reassign(table_config: TableConfig, current: IdealState, ips: Mapping[str, InstancePartitions],
              partition_of: Callable[[str], int], include_consuming: bool) -> dict[str, dict[str, str]]:
    if table_config.table_type == "OFFLINE":
        return _reassign_with_strategy(table_config, "OFFLINE", current, ips["OFFLINE"], partition_of)
    consuming = {s: m for s, m in current.items() if "ONLINE" not in m.values() and "CONSUMING" in m.values()}
    completed = {s: m for s, m in current.items() if "ONLINE" in m.values()}
    if "COMPLETED" in ips:
        new = _reassign_with_strategy(table_config, "COMPLETED", completed, ips["COMPLETED"], partition_of)
    else:
        new = reassign_consuming(completed, ips["CONSUMING"], table_config.replication, "ONLINE", partition_of)
    if include_consuming:
        new.update(reassign_consuming(consuming, ips["CONSUMING"], table_config.replication, "CONSUMING",
                                      partition_of))
    else:
        new.update({s: dict(m) for s, m in consuming.items()})
    new.update({s: dict(m) for s, m in current.items() if s not in new})  # all-OFFLINE segments stay
    return dict(sorted(new.items()))


def _reassign_with_strategy(table_config: TableConfig, kind: str, current: IdealState, ip: InstancePartitions,
                            partition_of: Callable[[str], int]) -> dict[str, dict[str, str]]:
    if segment_assignment_strategy(table_config, kind, ip) == "replicaGroup":
        return reassign_replica_group(current, ip, table_config.table_name_with_type, partition_of)
    return reassign_balanced(current, ip.instances(0, 0), table_config.replication)


def _moves(before: IdealState, after: IdealState, sizes: Mapping[str, int]) -> tuple[ServerMoves, ...]:
    servers = sorted({s for m in (*before.values(), *after.values()) for s in m})
    rows = {s: [0, 0, 0, 0, 0, 0] for s in servers}
    for segment in set(before) | set(after):
        old, new = set(before.get(segment, {})), set(after.get(segment, {}))
        size = sizes.get(segment, 0)
        for s in old:
            rows[s][0] += 1
        for s in new:
            rows[s][1] += 1
        for s in new - old:
            rows[s][2] += 1
            rows[s][4] += size
        for s in old - new:
            rows[s][3] += 1
            rows[s][5] += size
    return tuple(ServerMoves(s, *r) for s, r in rows.items())


def plan_rebalance(table_config: TableConfig, current_servers: Servers, new_servers: Servers,
                   segment_sizes: Mapping[str, int], *, current_assignment: IdealState | None = None,
                   current_instance_partitions: Mapping[str, InstancePartitions] | None = None,
                   minimize_data_movement: bool | None = None, consuming: Iterable[str] = (),
                   include_consuming: bool = False,
                   partition_of: Callable[[str], int] = segment_partition_id) -> RebalancePlan:
    """What a rebalance with ``reassignInstances`` does when the table moves to ``new_servers``.

    Parameters
    ----------
    table_config
        The table's config.
    current_servers, new_servers
        Server names (given the table's tags, pool 0) or :class:`Instance` values, before and after.
    segment_sizes
        Segment name -> size in bytes; also the table's segments, in upload order.
    current_assignment, current_instance_partitions
        The table's ideal state and instance partitions now (keyed OFFLINE / CONSUMING / COMPLETED);
        by default, what the controller built uploading the segments in order onto ``current_servers``.
    minimize_data_movement
        The rebalance's ``minimizeDataMovement``: ``None`` = DEFAULT (the table config's flag),
        ``True`` = ENABLE, ``False`` = DISABLE.
    consuming
        Names of CONSUMING segments (REALTIME tables).
    include_consuming
        Also move CONSUMING segments (the rebalance's ``includeConsuming``).
    partition_of
        Segment -> partition id, for partitioned replica-group tables and stream partitions.
    """
    sizes = {str(k): _size(k, v) for k, v in segment_sizes.items()}
    before = servers_for_table(table_config, current_servers)
    after = servers_for_table(table_config, new_servers)
    old_ips = dict(current_instance_partitions or table_instance_partitions(table_config, before, None, None))
    current = current_assignment
    if current is None:
        current = initial_ideal_state(table_config, old_ips, sizes, frozenset(consuming), partition_of)
    new_ips = table_instance_partitions(table_config, after, old_ips, minimize_data_movement)
    new = _reassign(table_config, current, new_ips, partition_of, include_consuming)
    flag = _effective_minimize(table_config, minimize_data_movement)
    return RebalancePlan(table_config.table_name_with_type, flag, MappingProxyType(old_ips), MappingProxyType(new_ips),
                         MappingProxyType({s: MappingProxyType(dict(m)) for s, m in current.items()}),
                         MappingProxyType({s: MappingProxyType(m) for s, m in new.items()}),
                         _moves(current, new, sizes))


def tenant_plan(plans: Sequence[RebalancePlan]) -> RebalancePlan:
    """The rebalance of a tenant of several tables: each table's plan side by side, as one plan.

    Pinot's tenant rebalance (``TenantRebalancer``, ``POST /tenants/{tenantName}/rebalance``, release 1.5.1)
    runs the table rebalancer on every table of the tenant, one table at a time or several in parallel, each
    with its own instance partitions and segment assignment: nothing is decided across tables. So the
    tenant's ideal state is the tables' ideal states together (segment names differ between tables: Pinot's
    carry the table's), a server's moves are the sum of its moves in every table, and each table's instance
    partitions keep their own names (``orders_OFFLINE/OFFLINE``). ``minimize_data_movement`` holds when it held
    for every table. One plan is returned as it is.

    >>> from workbench.pinot.table_config import TableConfig
    >>> a, b = (TableConfig.from_json({"tableName": n, "tableType": "OFFLINE"}) for n in ("a", "b"))
    >>> pa = plan_rebalance(a, ["s0"], ["s0", "s1"], {"a_0": 10, "a_1": 10})
    >>> pb = plan_rebalance(b, ["s0"], ["s0", "s1"], {"b_0": 5, "b_1": 5})
    >>> both = tenant_plan([pa, pb])
    >>> both.table, both.bytes_moved == pa.bytes_moved + pb.bytes_moved, sorted(both.assignment)
    ('a_OFFLINE, b_OFFLINE', True, ['a_0', 'a_1', 'b_0', 'b_1'])
    """
    if not plans:
        raise InputError("plans", "is empty: give the plan of at least one table")
    if len(plans) == 1:
        return plans[0]
    totals: dict[str, list[int]] = {}
    for plan in plans:
        for m in plan.moves:
            row = totals.setdefault(m.server, [0] * 6)
            for i, v in enumerate((m.segments_before, m.segments_after, m.segments_in, m.segments_out,
                                   m.bytes_in, m.bytes_out)):
                row[i] += v

    def named(attr: str) -> Mapping[str, InstancePartitions]:
        return MappingProxyType({f"{p.table}/{kind}": ip for p in plans for kind, ip in getattr(p, attr).items()})

    def merged(attr: str) -> IdealState:
        return MappingProxyType({s: m for p in plans for s, m in getattr(p, attr).items()})

    return RebalancePlan(", ".join(p.table for p in plans), all(p.minimize_data_movement for p in plans),
                         named("previous_instance_partitions"), named("instance_partitions"),
                         merged("previous_assignment"), merged("assignment"),
                         tuple(ServerMoves(s, *totals[s]) for s in sorted(totals)))


def _size(segment: object, size: object) -> int:
    if isinstance(size, bool) or not isinstance(size, int | float) or size < 0:
        raise InputError(f"segment_sizes.{segment}", f"must be a non-negative size in bytes, got {size!r}")
    return int(size)


def _effective_minimize(table_config: TableConfig, override: bool | None) -> bool:
    if override is not None:
        return override
    configs = (instance_assignment_config(table_config, k) for k in _kinds(table_config))
    return any(c is not None and c.minimize_data_movement for c in configs)


def compare_minimize(table_config: TableConfig, current_servers: Servers, new_servers: Servers,
                     segment_sizes: Mapping[str, int], **options: object) -> dict[str, RebalancePlan]:
    """The same rebalance with ``minimizeDataMovement`` on and off: ``{"minimize": ..., "no_minimize": ...}``.

    ``options`` are :func:`plan_rebalance`'s keyword arguments (except ``minimize_data_movement``).
    """
    if "minimize_data_movement" in options:
        raise InputError("minimize_data_movement", "compare_minimize runs both settings; do not pass it")
    return {name: plan_rebalance(table_config, current_servers, new_servers, segment_sizes,
                                 minimize_data_movement=flag, **options)  # type: ignore[arg-type]
            for name, flag in (("minimize", True), ("no_minimize", False))}
