"""Run Pinot's controller decisions on given servers and tables: instance assignment, segment assignment and the
table rebalancer's target, from Pinot's own jars, one JVM per call.

:func:`pinot_assignment` writes a request, starts the driver (``probes/pinot/src/.../ControllerParts.java``) on
the pinned Pinot jars and reads back, per table, what Pinot 1.5.1's controller makes of it: the instance
partitions table creation (or the first upload) computes, the ideal state built by uploading the table's
segments one by one, and, given the servers after a change, the rebalanced instance partitions and ideal state
(``reassignInstances``, no ``bootstrap``, the table's ``minimizeDataMovement`` option); or the same from a real
controller process (``real_controller=True``). Servers carry tags as
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
from workbench.groundtruth.harness import JVM_FLAGS, free_port, run_jvm
from workbench.pinot.assignment import Instance, InstancePartitions, partition_column
from workbench.pinot.table_config import TableConfig
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
    #: For the real controller only (``real_controller=True``), which uploads real segments: the table's Pinot schema
    #: (default: one INT dimension, the table's partition column or ``id``) and each segment's rows (default: one row
    #: of default values). A partitioned table's rows decide its segments' partition metadata, as in Pinot.
    schema: Mapping[str, Any] | None = None
    rows: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)


@dataclass(frozen=True)
class TableAssignment:
    """Instance partitions by type (``OFFLINE``) and the ideal state (segment -> {server: state}); from the real
    controller also each segment's partition metadata as stored in ZooKeeper (segment -> column -> ids)."""

    instance_partitions: Mapping[str, InstancePartitions]
    ideal_state: IdealState
    zk_partitions: Mapping[str, Mapping[str, tuple[int, ...]]] = field(default_factory=dict)


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
        segments: list[dict[str, Any]] = []
        for name in t.segments:
            segment: dict[str, Any] = {"name": name, "rows": [dict(r) for r in t.rows.get(name, [{}])]}
            if name in t.partitions:
                segment["partitions"] = {c: list(p) for c, p in t.partitions[name].items()}
            segments.append(segment)
        entry: dict[str, Any] = {"tableConfig": config, "segments": segments,
                                 "minimizeDataMovement": _MINIMIZE[t.minimize_data_movement]}
        if t.ideal_state is not None:
            entry["idealState"] = {s: dict(m) for s, m in t.ideal_state.items()}
        if t.servers is not None:
            entry["instances"] = _instances(t.servers)
        if t.new_servers is not None:
            entry["newInstances"] = _instances(t.new_servers)
        entry["schema"] = thaw_json(t.schema) if t.schema is not None else _default_schema(config)
        entries.append(entry)
    return {"instances": _instances(servers), "tables": entries, "zkPort": free_port(), "workDir": str(work),
            "controllerPort": free_port(),
            **({"newInstances": _instances(new_servers)} if new_servers is not None else {})}


def _default_schema(config: Mapping[str, Any]) -> dict[str, Any]:
    column = partition_column(TableConfig.from_json(config)) or "id"
    return {"schemaName": str(config["tableName"]).rsplit("_", 1)[0],
            "dimensionFieldSpecs": [{"name": column, "dataType": "INT"}]}


def pinot_assignment(tables: Sequence[ControllerTable], servers: Sequence[Instance],
                     new_servers: Sequence[Instance] | None = None, *, real_controller: bool = False,
                     heap: str = "256m", work_dir: str | Path | None = None) -> ControllerRun:
    """Pinot's controller on ``tables`` over ``servers`` (and, with ``new_servers``, its rebalance onto them).

    By default Pinot's assignment classes run in-process with Helix stood in for (``ControllerParts``, about 2 s);
    ``real_controller`` starts Pinot's ``ControllerStarter`` instead (``RealController``: Helix, ZooKeeper, the
    table-creation and upload paths, the ``TableRebalancer`` as a dry run; about 15 s), which takes segments with
    rows (``ControllerTable.rows``) and reports default instance partitions only after a rebalance (Pinot stores
    none at creation).

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
        driver = "RealController" if real_controller else "ControllerParts"
        # a short run: the client compiler alone halves its CPU time (10.8 -> 5.3 s for the real controller)
        command = ["java", f"-Xmx{'768m' if real_controller else heap}", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                   *JVM_FLAGS,
                   f"-Dlog4j2.configurationFile={jars.classes / 'workbench-log4j2.xml'}",
                   f"-Dworkbench.querylog={work / 'querylog.log'}", "-cp", jars.classpath,  # the config's appender
                   f"workbench.groundtruth.{driver}", str(work / "request.json"), str(response)]
        run_jvm(command, work / "driver.log", driver=driver)
        return _parse(json.loads(response.read_text()))


def _assignment(table: str, data: Mapping[str, Any]) -> TableAssignment:
    raw = table.rsplit("_", 1)[0]
    ips = {kind: InstancePartitions.of(f"{raw}_{kind}", {k: tuple(v) for k, v in parts.items()})
           for kind, parts in data["instancePartitions"].items()}
    stored = {s: {c: tuple(p) for c, p in cols.items()} for s, cols in data.get("zkPartitions", {}).items()}
    return TableAssignment(ips, {s: dict(m) for s, m in data["idealState"].items()}, stored)


def _parse(data: Mapping[str, Any]) -> ControllerRun:
    answers = {}
    for t in data["tables"]:
        name = str(t["tableNameWithType"])
        rebalanced = _assignment(name, t["rebalanced"]) if "rebalanced" in t else None
        answers[name] = ControllerAnswer(name, _assignment(name, t), rebalanced)
    return ControllerRun(str(data["pinotVersion"]).split("-")[0], answers)
