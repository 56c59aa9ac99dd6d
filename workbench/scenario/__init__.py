"""Scenarios: a cluster, the user's Pinot table config, a workload and model settings, validated once.

>>> sc = load_scenario({"cluster": {"servers": 3},
...                     "table": {"tableName": "t", "tableType": "OFFLINE"},
...                     "workload": {"synthetic": {"segments_per_server": 2, "docs_per_segment": 100}}})
>>> sc.cluster.servers, sc.table.table_name_with_type, sc.simulation.replications
(3, 't_OFFLINE', 3)
>>> load_scenario({"cluster": {"servers": -3}})
Traceback (most recent call last):
...
workbench.errors.ScenarioError: cluster.servers: must be a positive integer, got -3
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench.errors import InputError, ScenarioError, TableConfigError
from workbench.io.reading import load_json, read_document, read_text
from workbench.pinot.schema import Schema, SchemaProblem
from workbench.pinot.schema import dotted as dotted_path
from workbench.pinot.table_config import TableConfig, freeze_json, thaw_json
from workbench.scenario.build import build_section
from workbench.scenario.columns import check_columns
from workbench.scenario.limits import check_limits, check_work
from workbench.scenario.schema import (
    DEFAULT_TENANT,
    ClusterSpec,
    LimitsSpec,
    ServiceSpec,
    SimulationSpec,
    SLOSpec,
    SparkSpec,
    WorkloadSpec,
)

__all__ = ["SECTIONS", "TABLE_KEYS", "Scenario", "apply_overrides", "build_section", "load_scenario",
           "recorded_scenario"]

#: Each top-level section of a scenario file and the dataclass it is built into.
SECTIONS: Mapping[str, type] = {
    "cluster": ClusterSpec,
    "workload": WorkloadSpec,
    "service": ServiceSpec,
    "simulation": SimulationSpec,
    "spark": SparkSpec,
    "slo": SLOSpec,
    "limits": LimitsSpec,
}
#: ``sizing`` is read by ``workbench size`` only (:mod:`workbench.sizing.space` validates it); a run ignores it.
_TOP_LEVEL = ("name", "description", "table", "schema", "tables", *SECTIONS, "sizing")
#: The keys of one entry of ``tables:`` (a table of the tenant: its config, schema, workload, service and SLO).
TABLE_KEYS = ("table", "schema", "workload", "service", "slo")
#: The sections the tables of a ``tables:`` scenario share (one cluster, one simulation).
_SHARED = ("cluster", "simulation", "spark", "limits")


@dataclass(frozen=True)
class Scenario:
    """A validated scenario. Build it with :func:`load_scenario`; change it with :meth:`with_overrides`."""

    name: str
    description: str
    cluster: ClusterSpec
    table: TableConfig
    workload: WorkloadSpec
    service: ServiceSpec
    simulation: SimulationSpec
    spark: SparkSpec
    slo: SLOSpec
    raw: Mapping[str, Any] = field(repr=False, compare=False)
    #: How much work the scenario may ask for (``limits:``), checked when it is loaded.
    limits: LimitsSpec = field(default_factory=LimitsSpec, repr=False)
    #: The table's Pinot schema (``schema:``, embedded or a path), parsed once at load; its JSON as the user
    #: wrote it is ``schema.raw`` (``raw["schema"]`` keeps the path when the scenario gave one).
    schema: Schema | None = field(default=None, repr=False, compare=False)
    base_dir: Path = field(default=Path("."), repr=False, compare=False)
    #: A ``tables:`` scenario's tables, each a single-table scenario with the shared cluster and simulation
    #: (empty for the classic one-table form, whose ``table`` is its only table). ``table``, ``schema``,
    #: ``workload``, ``service`` and ``slo`` are then the first table's.
    tables: tuple[Scenario, ...] = field(default=(), repr=False)
    #: Whether servers carry tenant tags as Pinot's ``cluster.tenant.isolation.enable=true`` gives them (a
    #: ``tables:`` scenario, or one with ``cluster.tenants``): a table lands only on its tenant's servers. A
    #: classic scenario without ``cluster.tenants`` puts its table on every server, whatever its tenant.
    isolation: bool = field(default=False, repr=False, compare=False)

    @property
    def table_scenarios(self) -> tuple[Scenario, ...]:
        """Every table of the scenario as its own single-table scenario (the classic form: itself)."""
        return self.tables or (self,)

    @property
    def tenant(self) -> str:
        """The server tenant of the table (``tenants.server``; ``DefaultTenant`` without it)."""
        return str(self.table.section("tenants").get("server") or DEFAULT_TENANT)

    def table_servers(self) -> tuple[int, ...]:
        """The servers (indices) the table's segments may live on: its tenant's under tenant isolation, else
        every server."""
        if not self.isolation:
            return tuple(range(self.cluster.servers))
        return self.cluster.servers_of(self.tenant)

    def with_overrides(self, overrides: Mapping[str, Any]) -> Scenario:
        """A new scenario with dotted-key overrides applied (``{"cluster.servers": 12}``), revalidated."""
        return load_scenario(thaw_json(self.raw), base_dir=self.base_dir, overrides=overrides)

    def to_dict(self) -> dict[str, Any]:
        """The scenario as the user wrote it (table config inlined), ready for JSON."""
        data = dict(thaw_json(self.raw))
        if self.tables:
            data["tables"] = [{k: v for k, v in t.to_dict().items() if k in TABLE_KEYS} for t in self.tables]
            return data
        data["table"] = self.table.to_json()
        return data


def apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Set dotted keys in nested plain data; missing levels are created. Returns ``data``.

    >>> apply_overrides({"cluster": {"servers": 3}}, {"cluster.servers": 12, "slo.p99_ms": 100})
    {'cluster': {'servers': 12}, 'slo': {'p99_ms': 100}}

    A number steps into a list: ``tables.1.workload.arrival.qps`` is the second table's rate.
    """
    for dotted, value in overrides.items():
        node: Any = data
        *parents, leaf = dotted.split(".")
        for i, key in enumerate(parents):
            child = _item(node, key, ".".join(parents[: i + 1])) if isinstance(node, list) else node.setdefault(key, {})
            if not isinstance(child, dict | list):
                raise ScenarioError(".".join(parents[: i + 1]), f"cannot override inside a {type(child).__name__}")
            node = child
        if isinstance(node, list):
            _item(node, leaf, dotted)
            node[int(leaf)] = value
        else:
            node[leaf] = value
    return data


def _item(entries: list[Any], key: str, where: str) -> Any:
    """Entry ``key`` (a number) of a list being overridden (``tables.1.workload.arrival.qps``)."""
    if not key.isdigit() or int(key) >= len(entries):
        raise ScenarioError(where, f"names no entry of a list of {len(entries)}: use 0 .. {len(entries) - 1}")
    return entries[int(key)]


def _read_file(path: Path) -> Any:
    data = read_document(path, "scenario", ScenarioError)
    if data is not None and not isinstance(data, Mapping):
        raise ScenarioError(str(path), f"a scenario must be a mapping of sections ({', '.join(_TOP_LEVEL)}), "
                                       f"got {type(data).__name__}")
    return data


def _referenced(value: str, base_dir: Path, key: str, what: str) -> tuple[Path, str]:
    """The text of a file a scenario names (relative to the scenario), or one error at ``key``."""
    path = (base_dir / value) if not Path(value).is_absolute() else Path(value)
    try:
        return path, read_text(path, what=what, limit_name="document_bytes")
    except InputError as exc:
        if exc.problem == "no such file":
            raise ScenarioError(key, f"{what} file not found: {path}") from None
        raise ScenarioError(key, f"{what} file {exc.where}: {exc.problem}") from None


def _load_table(value: Any, base_dir: Path) -> TableConfig:
    """The ``table`` key: the user's Pinot table config, embedded or as a path to its JSON file."""
    if value is None:
        raise ScenarioError("table", "is required: embed your Pinot table config or give the path to its JSON")
    if isinstance(value, str):
        path, text = _referenced(value, base_dir, "table", "table config")
        try:
            return TableConfig.from_json(text, source=str(path))
        except TableConfigError as exc:
            inside = exc.where.startswith(str(path))
            raise ScenarioError(exc.where if inside else f"table ({path}).{exc.where}", exc.problem) from None
    if isinstance(value, Mapping):
        try:
            return TableConfig.from_json(value)
        except TableConfigError as exc:
            raise ScenarioError(f"table.{exc.where}" if exc.where else "table", exc.problem) from None
    raise ScenarioError("table", f"must be a Pinot table config object or a path to one, got {value!r}")


def _load_schema(value: Any, base_dir: Path) -> tuple[Schema | None, str]:
    """The ``schema`` key: the table's Pinot schema JSON, embedded or as a path to its file, parsed once
    into a typed :class:`~workbench.pinot.schema.Schema`; and how errors name it (``schema``, or
    ``schema (PATH)`` so a later error names the file)."""
    if value is None:
        return None, "schema"
    key = "schema"
    if isinstance(value, str):
        path, text = _referenced(value, base_dir, "schema", "schema")
        value, key = load_json(text, str(path), ScenarioError), f"schema ({path})"
    if not isinstance(value, Mapping):
        raise ScenarioError("schema", f"must be a Pinot schema object or a path to one, got {value!r}")
    try:
        return Schema.from_json(thaw_json(value)), key
    except SchemaProblem as exc:
        raise ScenarioError(f"{key}.{dotted_path(exc.where)}" if exc.where else key, exc.problem) from None


def _default_table() -> dict[str, Any]:
    return {"tableName": "events", "tableType": "OFFLINE", "segmentsConfig": {"replication": 1}}


def load_scenario(source: str | Path | Mapping[str, Any], *, base_dir: Path | None = None,
                  overrides: Mapping[str, Any] | None = None) -> Scenario:
    """Load and validate a scenario from a YAML/JSON file path or a mapping, once.

    Parameters
    ----------
    source
        A scenario file (YAML or JSON) or the scenario as plain data.
    base_dir
        Where relative paths inside the scenario point (default: the file's directory, else ``.``).
    overrides
        Dotted-key overrides (``{"cluster.servers": 12}``) applied to the data *before* it is
        validated, so a sweep point or a what-if is checked exactly once.

    Raises
    ------
    ScenarioError
        Naming the key path, the value and what is allowed, for the first problem found.
    """
    if isinstance(source, str | Path):
        path = Path(source)
        data, base = _read_file(path), path.parent
    else:
        data, base = source, Path(".")
    base = base_dir or base
    if data is None:
        data = {}
    if overrides:
        if not isinstance(data, Mapping):
            raise ScenarioError("", f"a scenario must be a mapping of sections, got {type(data).__name__}")
        data = apply_overrides(thaw_json(data), overrides)
    if not isinstance(data, Mapping):
        raise ScenarioError("", f"a scenario must be a mapping of sections ({', '.join(_TOP_LEVEL)}), "
                                f"got {type(data).__name__}")
    for key in data:
        if key not in _TOP_LEVEL:
            raise ScenarioError(str(key), f"unknown section; allowed: {', '.join(_TOP_LEVEL)}")
    if data.get("sizing") is not None and not isinstance(data["sizing"], Mapping):
        raise ScenarioError("sizing", "must be a mapping (servers, replica_groups, vary, instances: docs/sizing.md), "
                                      f"got {data['sizing']!r}")
    if "tables" in data:
        return _load_tenant(data, base)
    return _load_one(data, base, isolation=False)


def _load_one(data: Mapping[str, Any], base: Path, *, isolation: bool) -> Scenario:
    """One table's scenario (the classic form, or one entry of ``tables:`` with the shared sections)."""
    sections: dict[str, Any] = {name: build_section(cls, data.get(name), name) for name, cls in SECTIONS.items()}
    for key in ("name", "description"):
        if key in data and not isinstance(data[key], str):
            raise ScenarioError(key, f"must be a string, got {data[key]!r}")
    table = _load_table(data.get("table", _default_table()), base)
    schema, schema_key = _load_schema(data.get("schema"), base)
    check_columns(table, schema, sections["workload"], schema_key)
    sc = Scenario(
        name=str(data.get("name", "scenario")),
        description=str(data.get("description", "")),
        table=table,
        raw=freeze_json(dict(data)),
        schema=schema,
        base_dir=base,
        isolation=isolation or bool(sections["cluster"].tenants),
        **sections,
    )
    if not sc.table_servers():
        raise ScenarioError("table.tenants.server", f"tenant {sc.tenant!r} has no servers: {_tagged(sc.cluster)}; "
                                                    f"add `{sc.tenant}: N` to cluster.tenants (or name a tenant "
                                                    "that has servers)")
    sc = _with_table_flush(sc, data)
    check_limits(sc.cluster, sc.workload, sc.simulation, sc.limits)
    return sc


def _with_table_flush(sc: Scenario, data: Mapping[str, Any]) -> Scenario:
    """The scenario with its generate spec cut as the table's flush thresholds say
    (:func:`workbench.workload.flush.resolve_flush`; the keys the scenario writes win)."""
    from workbench.workload.flush import resolve_flush

    spec = sc.workload.generate
    if spec is None:
        return sc
    workload = data.get("workload")
    written = workload.get("generate") if isinstance(workload, Mapping) else None
    servers = tuple(f"Server_{i}" for i in sc.table_servers())
    resolved = resolve_flush(spec, tuple(written) if isinstance(written, Mapping) else (), sc.table, servers)
    return sc if resolved is spec else replace(sc, workload=replace(sc.workload, generate=resolved))


def _tagged(cluster: ClusterSpec) -> str:
    """Which tenants hold servers, in words."""
    default = len(cluster.servers_of(DEFAULT_TENANT))
    parts = [f"{name} {int(n)}" for name, n in cluster.tenants.items() if name != DEFAULT_TENANT]
    parts.append(f"{DEFAULT_TENANT} {default}")
    return "the cluster's servers are tagged " + ", ".join(parts)


def _entry(data: Mapping[str, Any], i: int, entry: Any) -> dict[str, Any]:
    """Entry ``i`` of ``tables:`` as a single-table scenario's data (the shared sections added)."""
    where = f"tables[{i}]"
    if not isinstance(entry, Mapping):
        raise ScenarioError(where, f"must be a mapping with keys {', '.join(TABLE_KEYS)}, got {type(entry).__name__}")
    for key in entry:
        if key not in TABLE_KEYS:
            raise ScenarioError(f"{where}.{key}", f"unknown key; a table of the tenant has {', '.join(TABLE_KEYS)} "
                                                  f"(cluster and simulation are shared: give them at the top)")
    if "table" not in entry:
        raise ScenarioError(f"{where}.table", "is required: embed the table's Pinot table config or give the path "
                                              "to its JSON")
    return {**{k: data[k] for k in _SHARED if k in data}, **entry, "name": str(data.get("name", "scenario"))}


def _in_entry(exc: ScenarioError, i: int) -> ScenarioError:
    """An error of entry ``i``'s own keys named under ``tables[i]`` (the shared sections keep their names)."""
    head = exc.where.split(".")[0].split(" ")[0].split("[")[0]
    return ScenarioError(f"tables[{i}].{exc.where}", exc.problem) if head in TABLE_KEYS else exc


def _load_tenant(data: Mapping[str, Any], base: Path) -> Scenario:
    """A ``tables:`` scenario: every table built as its own scenario over the shared cluster, checked once."""
    for key in TABLE_KEYS:
        if key in data:
            raise ScenarioError(key, "goes inside each entry of tables when the scenario lists tables "
                                     "(tables: [{table: ..., workload: ..., service: ..., slo: ...}])")
    entries = data["tables"]
    if not isinstance(entries, list) or not entries:
        raise ScenarioError("tables", "must be a non-empty list of tables ({table: ..., schema: ..., workload: ..., "
                                      "service: ..., slo: ...})")
    views: list[Scenario] = []
    for i, entry in enumerate(entries):
        try:
            view = _load_one(_entry(data, i, entry), base, isolation=True)
        except ScenarioError as exc:
            raise _in_entry(exc, i) from None
        for j, other in enumerate(views):
            if other.table.table_name == view.table.table_name:
                raise ScenarioError(f"tables[{i}].table.tableName", f"{view.table.table_name!r} is also tables[{j}]'s "
                                    "table; give each table of the scenario its own name (a hybrid table's OFFLINE "
                                    "and REALTIME halves are not modelled)")
        views.append(view)
    poisson = [v for v in views if v.workload.arrival.process == "poisson"]
    if len(poisson) > 1:
        sim = views[0].simulation
        check_work(sum(v.workload.arrival.rate for v in poisson) * sim.duration_s * sim.replications, views[0].limits,
                   "simulated_queries", "tables", "queries of every table (their qps x simulation.duration_s x "
                   "replications)")
    first = views[0]
    return replace(first, name=str(data.get("name", "scenario")), description=str(data.get("description", "")),
                   raw=freeze_json(dict(data)), tables=tuple(views))


def recorded_scenario(data: Mapping[str, Any], *, base_dir: Path) -> Scenario:
    """The scenario a run recorded (``summary.json``, ``sweep.json``), typed again without the load checks.

    The run validated this scenario before it ran and recorded it as :meth:`Scenario.to_dict` gives it
    (table config and schema inlined), so a reader of the run's files (the report) needs its typed
    values, not a second validation: the column checks, the limits and the table config's Pinot rules
    are not run again, and a scenario that would no longer load (a limit tightened since) still
    reports. Sections are built by the same converter, so values read exactly as the run read them.
    """
    if isinstance(data.get("tables"), list):
        shared = {k: data[k] for k in _SHARED if k in data}
        views = tuple(replace(recorded_scenario({**shared, **entry}, base_dir=base_dir), isolation=True)
                      for entry in data["tables"])
        return replace(views[0], name=str(data.get("name", "scenario")), description=str(data.get("description", "")),
                       raw=freeze_json(dict(data)), tables=views)
    sections: dict[str, Any] = {name: build_section(cls, data.get(name), name, check=False)
                                for name, cls in SECTIONS.items()}
    table = data.get("table", _default_table())
    schema = data.get("schema")
    return Scenario(
        name=str(data.get("name", "scenario")),
        description=str(data.get("description", "")),
        table=TableConfig(raw=freeze_json(table)),
        raw=freeze_json(dict(data)),
        schema=Schema.from_json(schema) if isinstance(schema, Mapping) else None,
        base_dir=base_dir,
        isolation=bool(sections["cluster"].tenants),
        **sections,
    )
