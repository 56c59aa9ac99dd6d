"""Pinot schemas, parsed once into a typed :class:`Schema`, with the checks Pinot's own schema
validation applies to what the workbench reads.

The cache canonicaliser, the cost model, the time pruner and the upsert heap model read each column's
type, whether it is single-valued, the date-time format of time columns and the primary-key columns.
:meth:`Schema.from_json` checks exactly those (what Pinot would refuse among them) and keeps each
field spec as a :class:`FieldSpec` named as Pinot names it; a problem raises :class:`SchemaProblem`
with its key path inside the schema, which the importer turns into ``file:line`` and the scenario
loader into ``schema.<path>``. The user's JSON is kept whole (``raw``) so it round-trips unchanged.

>>> s = Schema.from_json({"schemaName": "t", "dimensionFieldSpecs": [{"name": "k", "dataType": "string"}],
...                       "primaryKeyColumns": ["k"]})
>>> s.schema_name, s.field("k").data_type, s.primary_key_columns, s.to_json()["dimensionFieldSpecs"][0]["dataType"]
('t', 'STRING', ('k',), 'string')

>>> rows = schema_rows({"schemaName": "t", "dimensionFieldSpecs": [{"name": "k", "dataType": "STRING"}],
...                     "dateTimeFieldSpecs": [{"name": "ts", "dataType": "LONG",
...                                             "format": "1:MILLISECONDS:EPOCH", "granularity": "1:MILLISECONDS"}],
...                     "primaryKeyColumns": ["k"]})
>>> [(r["column_name"], r["field_type"], r["is_primary_key"]) for r in rows]
[('k', 'DIMENSION', True), ('ts', 'DATE_TIME', False)]
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.errors import InputError
from workbench.frozen import freeze_json, thaw_json
from workbench.pinot.pruning.timeformat import DateTimeFormat

__all__ = ["DATA_TYPES", "SCHEMA_COLUMNS", "SECTIONS", "FieldSpec", "KeyPath", "Schema", "SchemaProblem",
           "column_places", "dotted", "schema_rows"]

#: Pinot ``FieldSpec.DataType`` names a schema may use.
DATA_TYPES = frozenset({
    "INT", "LONG", "FLOAT", "DOUBLE", "BIG_DECIMAL", "BOOLEAN", "TIMESTAMP", "STRING", "JSON", "BYTES",
    "MAP", "LIST", "STRUCT", "UNKNOWN",
})
#: Metrics are aggregated, so Pinot allows only numeric types (and BYTES for serialized sketches).
_METRIC_TYPES = frozenset({"INT", "LONG", "FLOAT", "DOUBLE", "BIG_DECIMAL", "BYTES"})
SECTIONS = {
    "dimensionFieldSpecs": "DIMENSION",
    "metricFieldSpecs": "METRIC",
    "dateTimeFieldSpecs": "DATE_TIME",
    "complexFieldSpecs": "COMPLEX",
}
#: Columns of the one-row-per-column table.
SCHEMA_COLUMNS = (
    "schema_name", "column_name", "field_type", "data_type", "single_value", "is_primary_key",
    "format", "granularity", "default_null_value", "max_length",
)

KeyPath = tuple[str | int, ...]


class SchemaProblem(Exception):
    """A field spec is invalid; carries the key path inside the schema and the message."""

    def __init__(self, where: KeyPath, problem: str) -> None:
        super().__init__(problem)
        self.where = where
        self.problem = problem


def _field_specs(schema: Mapping[str, Any]) -> Iterator[tuple[KeyPath, str, Any]]:
    """``(key path, field type, spec)`` for every field spec, in document order per section."""
    for section, field_type in SECTIONS.items():
        specs = schema.get(section) or []
        if not isinstance(specs, list):
            raise SchemaProblem((section,), "must be a list of field specs")
        for index, spec in enumerate(specs):
            yield (section, index), field_type, spec
    time_spec = schema.get("timeFieldSpec")
    if time_spec is not None:
        yield ("timeFieldSpec",), "TIME", time_spec


def _time_spec(spec: Mapping[str, Any], where: KeyPath) -> Mapping[str, Any]:
    """The legacy time spec's effective column: the outgoing granularity spec if set, else incoming."""
    for key in ("outgoingGranularitySpec", "incomingGranularitySpec"):
        inner = spec.get(key)
        if isinstance(inner, Mapping):
            return inner
    raise SchemaProblem(where, "needs an incomingGranularitySpec object (name, dataType, timeType)")


def _name(spec: Mapping[str, Any], where: KeyPath) -> str:
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SchemaProblem((*where, "name"), f"must be a non-empty column name, got {name!r}")
    return name


def _data_type(spec: Mapping[str, Any], where: KeyPath, field_type: str) -> str:
    raw = spec.get("dataType")
    value = str(raw).upper()
    if value not in DATA_TYPES:
        raise SchemaProblem((*where, "dataType"), f"must be one of {', '.join(sorted(DATA_TYPES))}, got {raw!r}")
    if field_type == "METRIC" and value not in _METRIC_TYPES:
        raise SchemaProblem((*where, "dataType"), f"a metric must be numeric ({', '.join(sorted(_METRIC_TYPES))}), "
                                             f"got {value}")
    return value


def _date_time_parts(spec: Mapping[str, Any], where: KeyPath) -> tuple[str, str]:
    parts = (spec.get("format"), spec.get("granularity"))
    for key, value in zip(("format", "granularity"), parts, strict=True):
        if not isinstance(value, str) or not value:
            raise SchemaProblem((*where, key), f"is required for a dateTime field, e.g. "
                                               f"{'1:MILLISECONDS:EPOCH' if key == 'format' else '1:MILLISECONDS'}")
    try:
        DateTimeFormat.for_field(str(parts[0]), str(spec.get("dataType", "")))
    except InputError as exc:
        raise SchemaProblem((*where, "format"), exc.problem) from None
    return str(parts[0]), str(parts[1])


def _single_value(spec: Mapping[str, Any], where: KeyPath) -> bool:
    value = spec.get("singleValueField", True)
    if not isinstance(value, bool):
        raise SchemaProblem((*where, "singleValueField"), f"must be true or false, got {value!r}")
    return value


def _max_length(spec: Mapping[str, Any], where: KeyPath) -> int:
    value = spec.get("maxLength", -1)
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaProblem((*where, "maxLength"), f"must be an integer number of characters, got {value!r}")
    return value


@dataclass(frozen=True)
class FieldSpec:
    """One column of a schema, named as Pinot's ``FieldSpec`` JSON names it.

    ``field_type`` is the section it was written in (``DIMENSION``, ``METRIC``, ``DATE_TIME``,
    ``COMPLEX``, or ``TIME`` for the legacy ``timeFieldSpec``, whose effective column is the outgoing
    granularity spec if set, else the incoming one). ``data_type`` is upper-cased as Pinot reads it.
    ``max_length`` is ``None`` when the user did not write one (Pinot's default then applies), which
    the upsert heap model tells apart from a stated bound. ``where`` is the key path of the spec, so an
    error about the column points at the line to edit (the spec's own path; a legacy time column's name
    is written under its ``incomingGranularitySpec``).
    """

    name: str
    field_type: str
    data_type: str
    single_value_field: bool = True
    max_length: int | None = None
    format: str = ""
    granularity: str = ""
    default_null_value: Any = None
    transform_function: str | None = None
    where: KeyPath = field(default=(), compare=False)


def _field(where: KeyPath, field_type: str, raw: Any) -> FieldSpec:
    if not isinstance(raw, Mapping):
        raise SchemaProblem(where, "must be an object with name and dataType")
    spec = _time_spec(raw, where) if field_type == "TIME" else raw
    inner = (*where, "incomingGranularitySpec") if spec is not raw else where
    fmt, granularity = _date_time_parts(spec, where) if field_type == "DATE_TIME" else ("", "")
    name = _name(spec, inner)
    data_type = _data_type(spec, inner, field_type)
    single = _single_value(spec, inner)
    max_length = _max_length(spec, inner) if "maxLength" in spec else None
    transform = spec.get("transformFunction")
    return FieldSpec(name=name, field_type=field_type, data_type=data_type, single_value_field=single,
                     max_length=max_length, format=fmt or str(spec.get("timeFormat", "")),
                     granularity=granularity or str(spec.get("timeType", "")),
                     default_null_value=freeze_json(spec.get("defaultNullValue")),
                     transform_function=None if transform is None else str(transform),
                     where=where)


def _check_columns(fields: tuple[FieldSpec, ...], primary_keys: Any) -> None:
    seen: set[str] = set()
    for spec in fields:
        if spec.name in seen:
            raise SchemaProblem((*spec.where, "name"), f"column {spec.name!r} is defined twice")
        seen.add(spec.name)
    if not isinstance(primary_keys, list | tuple):
        raise SchemaProblem(("primaryKeyColumns",), "must be a list of column names")
    for index, key in enumerate(primary_keys):
        if key not in seen:
            raise SchemaProblem(("primaryKeyColumns", index), f"names {key!r}, which is not a column of the schema")


@dataclass(frozen=True)
class Schema:
    """A Pinot schema, validated once and typed; ``raw`` is the user's JSON, kept only for :meth:`to_json`.

    Build one with :meth:`from_json`. Every reader (the scenario's column checks, the planner, the
    upsert memory model) uses the typed fields, so no reader re-parses or re-validates the JSON.
    """

    schema_name: str
    fields: tuple[FieldSpec, ...]
    primary_key_columns: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, schema: Mapping[str, Any]) -> Schema:
        """Parse and validate a schema JSON object; raises :class:`SchemaProblem` at the offending key."""
        if not isinstance(schema, Mapping):
            raise SchemaProblem((), "a schema must be a JSON object with schemaName and field specs")
        name = schema.get("schemaName")
        if not isinstance(name, str) or not name.strip():
            raise SchemaProblem(("schemaName",), f"is required (the schema's name, usually the raw table name), "
                                                 f"got {name!r}")
        fields = tuple(_field(where, field_type, spec) for where, field_type, spec in _field_specs(schema))
        primary_keys = schema.get("primaryKeyColumns") or []
        _check_columns(fields, primary_keys)
        return cls(name, fields, tuple(str(k) for k in primary_keys), freeze_json(schema))

    def field(self, name: str) -> FieldSpec | None:
        """The spec of column ``name``, or ``None`` when the schema has no such column."""
        return next((f for f in self.fields if f.name == name), None)

    @property
    def data_types(self) -> dict[str, str]:
        """Column name -> Pinot data type (``STRING``, ``LONG``...), every section."""
        return {f.name: f.data_type for f in self.fields}

    @property
    def places(self) -> dict[str, str]:
        """Each column and where its name is written (``dimensionFieldSpecs[2].name``)."""
        return {f.name: dotted((*f.where, "incomingGranularitySpec", "name") if f.field_type == "TIME"
                               else (*f.where, "name")) for f in self.fields}

    def to_json(self) -> dict[str, Any]:
        """The schema exactly as the user wrote it, as plain JSON data."""
        return dict(thaw_json(self.raw))

    def rows(self) -> list[dict[str, Any]]:
        """One row per column (:data:`SCHEMA_COLUMNS`), the importer's table."""
        return [{"schema_name": self.schema_name, "column_name": f.name, "field_type": f.field_type,
                 "data_type": f.data_type, "single_value": f.single_value_field,
                 "is_primary_key": f.name in self.primary_key_columns, "format": f.format,
                 "granularity": f.granularity,
                 "default_null_value": "" if f.default_null_value is None
                 else json.dumps(thaw_json(f.default_null_value)),
                 "max_length": -1 if f.max_length is None else f.max_length} for f in self.fields]


def schema_rows(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per column (:data:`SCHEMA_COLUMNS`) of a valid schema; raises :class:`SchemaProblem`."""
    return Schema.from_json(schema).rows()


def dotted(keys: KeyPath) -> str:
    """A key path as the docs write it: ``dimensionFieldSpecs[2].dataType``."""
    return ".".join(f"[{k}]" if isinstance(k, int) else str(k) for k in keys).replace(".[", "[")


def column_places(schema: Mapping[str, Any]) -> dict[str, str]:
    """Each column of a valid schema and where its name is written (``dimensionFieldSpecs[2].name``).

    An error about a column (a name that clashes, one a query needs) then points at the line to edit,
    in the field list the user put it in.
    """
    return Schema.from_json(schema).places
