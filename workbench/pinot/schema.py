"""Pinot schemas: the checks Pinot's own schema validation applies to what the workbench reads.

The cache canonicaliser, the cost model, the time pruner and the upsert heap model read each column's
type, whether it is single-valued, the date-time format of time columns and the primary-key columns.
:func:`schema_rows` checks exactly those (what Pinot would refuse among them) and returns one row per
column; a problem raises :class:`SchemaProblem` with its key path inside the schema, which the
importer turns into ``file:line`` and the scenario loader into ``schema.<path>``.

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
from typing import Any

from workbench.errors import InputError
from workbench.pinot.pruning.timeformat import DateTimeFormat

__all__ = ["DATA_TYPES", "SCHEMA_COLUMNS", "SECTIONS", "KeyPath", "SchemaProblem", "column_places", "dotted",
           "schema_rows"]

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


def _row(where: KeyPath, field_type: str, raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise SchemaProblem(where, "must be an object with name and dataType")
    spec = _time_spec(raw, where) if field_type == "TIME" else raw
    inner = (*where, "incomingGranularitySpec") if spec is not raw else where
    fmt, granularity = _date_time_parts(spec, where) if field_type == "DATE_TIME" else ("", "")
    default = spec.get("defaultNullValue")
    return {
        "column_name": _name(spec, inner),
        "field_type": field_type,
        "data_type": _data_type(spec, inner, field_type),
        "single_value": _single_value(spec, inner),
        "format": fmt or str(spec.get("timeFormat", "")),
        "granularity": granularity or str(spec.get("timeType", "")),
        "default_null_value": "" if default is None else json.dumps(default),
        "max_length": _max_length(spec, inner),
        "_where": where,
    }


def _check_columns(rows: list[dict[str, Any]], primary_keys: Any) -> None:
    seen: set[str] = set()
    for row in rows:
        if row["column_name"] in seen:
            raise SchemaProblem((*row["_where"], "name"), f"column {row['column_name']!r} is defined twice")
        seen.add(row["column_name"])
    if not isinstance(primary_keys, list | tuple):
        raise SchemaProblem(("primaryKeyColumns",), "must be a list of column names")
    for index, key in enumerate(primary_keys):
        if key not in seen:
            raise SchemaProblem(("primaryKeyColumns", index), f"names {key!r}, which is not a column of the schema")


def schema_rows(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per column (:data:`SCHEMA_COLUMNS`) of a valid schema; raises :class:`SchemaProblem`."""
    if not isinstance(schema, Mapping):
        raise SchemaProblem((), "a schema must be a JSON object with schemaName and field specs")
    name = schema.get("schemaName")
    if not isinstance(name, str) or not name.strip():
        raise SchemaProblem(("schemaName",), f"is required (the schema's name, usually the raw table name), "
                                             f"got {name!r}")
    rows = [_row(where, field_type, spec) for where, field_type, spec in _field_specs(schema)]
    primary_keys = schema.get("primaryKeyColumns") or []
    _check_columns(rows, primary_keys)
    for row in rows:
        row.pop("_where")
        row["schema_name"] = name
        row["is_primary_key"] = row["column_name"] in primary_keys
    return rows


def dotted(keys: KeyPath) -> str:
    """A key path as the docs write it: ``dimensionFieldSpecs[2].dataType``."""
    return ".".join(f"[{k}]" if isinstance(k, int) else str(k) for k in keys).replace(".[", "[")


def column_places(schema: Mapping[str, Any]) -> dict[str, str]:
    """Each column of a valid schema and where its name is written (``dimensionFieldSpecs[2].name``).

    An error about a column (a name that clashes, one a query needs) then points at the line to edit,
    in the field list the user put it in.
    """
    places: dict[str, str] = {}
    for where, field_type, spec in _field_specs(schema):
        inner = _time_spec(spec, where) if field_type == "TIME" else spec
        key = (*where, "incomingGranularitySpec", "name") if inner is not spec else (*where, "name")
        places.setdefault(str(inner.get("name")), dotted(key))
    return places
