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

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from workbench.errors import ScenarioError, TableConfigError
from workbench.pinot.table_config import TableConfig, freeze_json, thaw_json
from workbench.scenario.build import build_section
from workbench.scenario.schema import (
    ClusterSpec,
    ServiceSpec,
    SimulationSpec,
    SLOSpec,
    SparkSpec,
    WorkloadSpec,
)

__all__ = ["SECTIONS", "Scenario", "apply_overrides", "build_section", "load_scenario"]

#: Each top-level section of a scenario file and the dataclass it is built into.
SECTIONS: Mapping[str, type] = {
    "cluster": ClusterSpec,
    "workload": WorkloadSpec,
    "service": ServiceSpec,
    "simulation": SimulationSpec,
    "spark": SparkSpec,
    "slo": SLOSpec,
}
_TOP_LEVEL = ("name", "description", "table", "schema", *SECTIONS)


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
    #: The table's Pinot schema JSON (``schema:``, embedded or a path), used by the time pruner.
    schema: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    base_dir: Path = field(default=Path("."), repr=False, compare=False)

    def with_overrides(self, overrides: Mapping[str, Any]) -> Scenario:
        """A new scenario with dotted-key overrides applied (``{"cluster.servers": 12}``), revalidated."""
        return load_scenario(thaw_json(self.raw), base_dir=self.base_dir, overrides=overrides)

    def to_dict(self) -> dict[str, Any]:
        """The scenario as the user wrote it (table config inlined), ready for JSON."""
        data = dict(thaw_json(self.raw))
        data["table"] = self.table.to_json()
        return data


def apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Set dotted keys in nested plain data; missing levels are created. Returns ``data``.

    >>> apply_overrides({"cluster": {"servers": 3}}, {"cluster.servers": 12, "slo.p99_ms": 100})
    {'cluster': {'servers': 12}, 'slo': {'p99_ms': 100}}
    """
    for dotted, value in overrides.items():
        node = data
        *parents, leaf = dotted.split(".")
        for i, key in enumerate(parents):
            child = node.setdefault(key, {})
            if not isinstance(child, dict):
                raise ScenarioError(".".join(parents[: i + 1]), f"cannot override inside a {type(child).__name__}")
            node = child
        node[leaf] = value
    return data


def _read_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(str(path), f"cannot read the scenario file: {exc.strerror}") from None
    try:
        return json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"{path}:{exc.lineno}", f"not valid JSON: {exc.msg}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ScenarioError(where, f"not valid YAML: {getattr(exc, 'problem', exc)}") from None


def _load_table(value: Any, base_dir: Path) -> TableConfig:
    """The ``table`` key: the user's Pinot table config, embedded or as a path to its JSON file."""
    if value is None:
        raise ScenarioError("table", "is required: embed your Pinot table config or give the path to its JSON")
    try:
        if isinstance(value, str):
            path = (base_dir / value) if not Path(value).is_absolute() else Path(value)
            if not path.is_file():
                raise ScenarioError("table", f"table config file not found: {path}")
            return TableConfig.from_json(path.read_text(encoding="utf-8"), source=str(path))
        if isinstance(value, Mapping):
            return TableConfig.from_json(value)
    except TableConfigError as exc:
        raise ScenarioError(f"table.{exc.where}" if exc.where else "table", exc.problem) from None
    raise ScenarioError("table", f"must be a Pinot table config object or a path to one, got {value!r}")


def _load_schema(value: Any, base_dir: Path) -> Mapping[str, Any] | None:
    """The ``schema`` key: the table's Pinot schema JSON, embedded or as a path to its file."""
    if value is None:
        return None
    if isinstance(value, str):
        path = (base_dir / value) if not Path(value).is_absolute() else Path(value)
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except OSError:
            raise ScenarioError("schema", f"schema file not found: {path}") from None
        except json.JSONDecodeError as exc:
            raise ScenarioError(f"{path}:{exc.lineno}", f"not valid JSON: {exc.msg}") from None
    if not isinstance(value, Mapping):
        raise ScenarioError("schema", f"must be a Pinot schema object or a path to one, got {value!r}")
    frozen: Mapping[str, Any] = freeze_json(value)
    return frozen


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
        raise ScenarioError("", f"a scenario must be a mapping of sections, got {type(data).__name__}")
    for key in data:
        if key not in _TOP_LEVEL:
            raise ScenarioError(str(key), f"unknown section; allowed: {', '.join(_TOP_LEVEL)}")
    sections: dict[str, Any] = {name: build_section(cls, data.get(name), name) for name, cls in SECTIONS.items()}
    for key in ("name", "description"):
        if key in data and not isinstance(data[key], str):
            raise ScenarioError(key, f"must be a string, got {data[key]!r}")
    table = _load_table(data.get("table", _default_table()), base)
    return Scenario(
        name=str(data.get("name", "scenario")),
        description=str(data.get("description", "")),
        table=table,
        raw=freeze_json(dict(data)),
        schema=_load_schema(data.get("schema"), base),
        base_dir=base,
        **sections,
    )
