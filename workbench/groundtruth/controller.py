"""Run Pinot's controller decisions on given servers and tables: instance assignment, segment assignment and the
table rebalancer's target, from Pinot's own jars, one JVM per call.

:func:`pinot_assignment` writes a request, starts the driver (``probes/pinot/src/.../ControllerParts.java``) on
the pinned Pinot jars and reads back, per table, what Pinot 1.5.1's controller makes of it: the instance
partitions table creation (or the first upload) computes, the ideal state built by uploading the table's
segments one by one, and, given the servers after a change, the rebalanced instance partitions and ideal state
(``reassignInstances``, no ``bootstrap``, the table's ``minimizeDataMovement`` option). Servers carry tags as
Pinot gives them (``<tenant>_OFFLINE``; :func:`tenant_instances` tags a scenario's servers as
``cluster.tenant.isolation.enable=true`` does). OFFLINE tables only. The JVM is killed on any error or Ctrl-C.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.frozen import thaw_json
from workbench.groundtruth.build import ensure_built
from workbench.groundtruth.harness import JVM_FLAGS, _free_port, _run_jvm
from workbench.pinot.assignment import Instance, InstancePartitions
from workbench.scenario import Scenario

__all__ = ["ControllerAnswer", "ControllerRun", "ControllerTable", "TableAssignment", "pinot_assignment",
           "tenant_instances"]

IdealState = Mapping[str, Mapping[str, str]]

#: Sections Pinot's ``TableConfig`` JSON creator requires; absent from a workbench table config they mean Pinot's
#: defaults, which an empty object gives.
_REQUIRED_SECTIONS = ("segmentsConfig", "tenants", "tableIndexConfig", "metadata")
_MINIMIZE = {None: "DEFAULT", True: "ENABLE", False: "DISABLE"}


@dataclass(frozen=True)
class ControllerTable:
    """One OFFLINE table as the controller gets it: its config (the user's JSON), its segments in upload order,
    optionally each segment's partition metadata (column -> partition ids, as its ZK record holds it) and the
    rebalance's ``minimizeDataMovement`` (``None`` = DEFAULT, the table config's flag). ``ideal_state`` starts the
    table from a given ideal state instead of uploads (its segments are not uploaded again); ``servers`` and
    ``new_servers`` replace the call's for this table (a case of its own in the same JVM)."""

    table_config: Mapping[str, Any]
    segments: Sequence[str]
    partitions: Mapping[str, Mapping[str, Sequence[int]]] = field(default_factory=dict)
    minimize_data_movement: bool | None = None
    ideal_state: IdealState | None = None
    servers: Sequence[Instance] | None = None
    new_servers: Sequence[Instance] | None = None


@dataclass(frozen=True)
class TableAssignment:
    """Instance partitions by type (``OFFLINE``) and the ideal state (segment -> {server: state})."""

    instance_partitions: Mapping[str, InstancePartitions]
    ideal_state: IdealState


@dataclass(frozen=True)
class ControllerAnswer:
    """One table: as created and uploaded, and (given new servers) as rebalanced."""

    table: str
    created: TableAssignment
    rebalanced: TableAssignment | None


@dataclass(frozen=True)
class ControllerRun:
    """The release that answered and each table's answer, by table name with type."""

    pinot_version: str
    tables: Mapping[str, ControllerAnswer]

    def __getitem__(self, table_name_with_type: str) -> ControllerAnswer:
        return self.tables[table_name_with_type]


def tenant_instances(sc: Scenario, servers: int | None = None) -> list[Instance]:
    """The scenario's servers (``Server_0`` ..) tagged as Pinot's ``cluster.tenant.isolation.enable=true`` tags them:
    each server ``<tenant>_OFFLINE`` and ``<tenant>_REALTIME`` for the one tenant ``cluster.tenants`` gives it,
    ``DefaultTenant`` for the rest; ``servers`` counts them after a change (added servers serve ``DefaultTenant``,
    removing takes the last ones), as :func:`workbench.studies.scale_out.rebalance_layout` has it."""
    count = sc.cluster.servers if servers is None else servers
    tenant_of: dict[int, str] = {}
    start = 0
    for name, n in sc.cluster.tenants.items():
        tenant_of.update((i, name) for i in range(start, start + int(n)))
        start += int(n)
    return [Instance(f"Server_{i}", tags=(f"{tenant_of.get(i, 'DefaultTenant')}_OFFLINE",
                                          f"{tenant_of.get(i, 'DefaultTenant')}_REALTIME"))
            for i in range(count)]


def _instances(instances: Sequence[Instance]) -> list[dict[str, Any]]:
    return [{"name": i.name, "tags": list(i.tags), **({"pools": dict(i.pools)} if i.pools else {})}
            for i in instances]


def _request(tables: Sequence[ControllerTable], servers: Sequence[Instance],
             new_servers: Sequence[Instance] | None, work: Path) -> dict[str, Any]:
    entries = []
    for t in tables:
        config = {**{k: {} for k in _REQUIRED_SECTIONS}, **thaw_json(t.table_config)}
        segments = [{"name": s, **({"partitions": {c: list(p) for c, p in t.partitions[s].items()}}
                                   if s in t.partitions else {})} for s in t.segments]
        entry: dict[str, Any] = {"tableConfig": config, "segments": segments,
                                 "minimizeDataMovement": _MINIMIZE[t.minimize_data_movement]}
        if t.ideal_state is not None:
            entry["idealState"] = {s: dict(m) for s, m in t.ideal_state.items()}
        if t.servers is not None:
            entry["instances"] = _instances(t.servers)
        if t.new_servers is not None:
            entry["newInstances"] = _instances(t.new_servers)
        entries.append(entry)
    return {"instances": _instances(servers), "tables": entries, "zkPort": _free_port(), "workDir": str(work),
            **({"newInstances": _instances(new_servers)} if new_servers is not None else {})}


def pinot_assignment(tables: Sequence[ControllerTable], servers: Sequence[Instance],
                     new_servers: Sequence[Instance] | None = None, *, heap: str = "256m",
                     work_dir: str | Path | None = None) -> ControllerRun:
    """Pinot's controller on ``tables`` over ``servers`` (and, with ``new_servers``, its rebalance onto them).

    Parameters
    ----------
    tables
        The OFFLINE tables, each created then its segments uploaded in order.
    servers, new_servers
        The servers with their Helix tags (and pools per tag), before and after the change.
    heap
        The driver JVM's ``-Xmx``.
    work_dir
        Where the request and ZooKeeper's files go (default: a temporary directory, removed after).
    """
    jars = ensure_built()
    with tempfile.TemporaryDirectory(prefix="workbench-controller-", dir=work_dir) as tmp:
        work = Path(tmp)
        (work / "request.json").write_text(json.dumps(_request(tables, servers, new_servers, work)))
        response = work / "response.json"
        command = ["java", f"-Xmx{heap}", "-XX:+UseSerialGC", *JVM_FLAGS,
                   f"-Dlog4j2.configurationFile={jars.classes / 'workbench-log4j2.xml'}",
                   f"-Dworkbench.querylog={work / 'querylog.log'}", "-cp", jars.classpath,  # the config's appender
                   "workbench.groundtruth.ControllerParts", str(work / "request.json"), str(response)]
        _run_jvm(command, work / "driver.log", driver="ControllerParts")
        return _parse(json.loads(response.read_text()))


def _assignment(table: str, data: Mapping[str, Any]) -> TableAssignment:
    raw = table.rsplit("_", 1)[0]
    ips = {kind: InstancePartitions.of(f"{raw}_{kind}", {k: tuple(v) for k, v in parts.items()})
           for kind, parts in data["instancePartitions"].items()}
    return TableAssignment(ips, {s: dict(m) for s, m in data["idealState"].items()})


def _parse(data: Mapping[str, Any]) -> ControllerRun:
    answers = {}
    for t in data["tables"]:
        name = str(t["tableNameWithType"])
        rebalanced = _assignment(name, t["rebalanced"]) if "rebalanced" in t else None
        answers[name] = ControllerAnswer(name, _assignment(name, t), rebalanced)
    return ControllerRun(str(data["pinotVersion"]).split("-")[0], answers)
