"""Import a Pinot schema (the JSON ``POST /schemas`` takes) as one row per column.

The cache canonicaliser, the cost model and the upsert heap model need each column's type, whether
it is single-valued and which columns form the primary key; this importer checks exactly what Pinot's
schema validation would refuse among those, and reports it at the line of the offending field spec.
The controller's ``GET /tableConfigs/{name}`` response is accepted too (its ``schema`` member).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.errors import InputError
from workbench.workload.importers.common import ImportResult, Tally, line_count, read_text
from workbench.workload.importers.jsonpos import load_json, nearest_line

__all__ = ["DATA_TYPES", "SCHEMA_COLUMNS", "read_schema"]

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


class _Problem(Exception):
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
            raise _Problem((section,), "must be a list of field specs")
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
    raise _Problem(where, "needs an incomingGranularitySpec object (name, dataType, timeType)")


def _name(spec: Mapping[str, Any], where: KeyPath) -> str:
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _Problem((*where, "name"), f"must be a non-empty column name, got {name!r}")
    return name


def _data_type(spec: Mapping[str, Any], where: KeyPath, field_type: str) -> str:
    raw = spec.get("dataType")
    value = str(raw).upper()
    if value not in DATA_TYPES:
        raise _Problem((*where, "dataType"), f"must be one of {', '.join(sorted(DATA_TYPES))}, got {raw!r}")
    if field_type == "METRIC" and value not in _METRIC_TYPES:
        raise _Problem((*where, "dataType"), f"a metric must be numeric ({', '.join(sorted(_METRIC_TYPES))}), "
                                             f"got {value}")
    return value


def _date_time_parts(spec: Mapping[str, Any], where: KeyPath) -> tuple[str, str]:
    parts = (spec.get("format"), spec.get("granularity"))
    for key, value in zip(("format", "granularity"), parts, strict=True):
        if not isinstance(value, str) or not value:
            raise _Problem((*where, key), f"is required for a dateTime field, e.g. "
                                          f"{'1:MILLISECONDS:EPOCH' if key == 'format' else '1:MILLISECONDS'}")
    return str(parts[0]), str(parts[1])


def _single_value(spec: Mapping[str, Any], where: KeyPath) -> bool:
    value = spec.get("singleValueField", True)
    if not isinstance(value, bool):
        raise _Problem((*where, "singleValueField"), f"must be true or false, got {value!r}")
    return value


def _max_length(spec: Mapping[str, Any], where: KeyPath) -> int:
    value = spec.get("maxLength", -1)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Problem((*where, "maxLength"), f"must be an integer number of characters, got {value!r}")
    return value


def _row(where: KeyPath, field_type: str, raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise _Problem(where, "must be an object with name and dataType")
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
            raise _Problem((*row["_where"], "name"), f"column {row['column_name']!r} is defined twice")
        seen.add(row["column_name"])
    if not isinstance(primary_keys, list):
        raise _Problem(("primaryKeyColumns",), "must be a list of column names")
    for index, key in enumerate(primary_keys):
        if key not in seen:
            raise _Problem(("primaryKeyColumns", index), f"names {key!r}, which is not a column of the schema")


def _rows(schema: Mapping[str, Any]) -> list[dict[str, Any]]:
    name = schema.get("schemaName")
    if not isinstance(name, str) or not name.strip():
        raise _Problem(("schemaName",), f"is required (the schema's name, usually the raw table name), got {name!r}")
    rows = [_row(where, field_type, spec) for where, field_type, spec in _field_specs(schema)]
    primary_keys = schema.get("primaryKeyColumns") or []
    _check_columns(rows, primary_keys)
    for row in rows:
        row.pop("_where")
        row["schema_name"] = name
        row["is_primary_key"] = row["column_name"] in primary_keys
    return rows


def _unwrap(data: Any) -> tuple[KeyPath, Mapping[str, Any]] | None:
    if isinstance(data, Mapping) and "schemaName" not in data and isinstance(data.get("schema"), Mapping):
        return ("schema",), data["schema"]
    return ((), data) if isinstance(data, Mapping) else None


def read_schema(path: str | Path, lenient: bool = False) -> ImportResult:
    """Read and validate a Pinot schema file.

    Parameters
    ----------
    path
        The schema JSON (or a ``GET /tableConfigs/{name}`` response holding one).
    lenient
        Accepted for a uniform importer signature; a schema is one document, so every problem raises.

    Returns
    -------
    ImportResult
        ``frame`` has one row per column (:data:`SCHEMA_COLUMNS`); ``documents`` holds the schema
        as ``schema.json``.

    Raises
    ------
    InputError
        At ``file:line`` with the key path of the offending field spec.
    """
    source = Path(path)
    text = read_text(source, strict_utf8=True)
    found = _unwrap(load_json(text, str(source)))
    if found is None:
        raise InputError(f"{source}:1", "a schema must be a JSON object with schemaName and field specs")
    prefix, schema = found
    try:
        rows = _rows(schema)
    except _Problem as exc:
        keys = (*prefix, *exc.where)
        dotted = ".".join(f"[{k}]" if isinstance(k, int) else str(k) for k in keys).replace(".[", "[")
        raise InputError(f"{source}:{nearest_line(text, keys)}", f"{dotted}: {exc.problem}") from None
    tally = Tally(source, lenient)
    tally.count("lines", line_count(text))
    frame = pd.DataFrame(rows, columns=list(SCHEMA_COLUMNS))
    return tally.result("schema", frame, {"schema.json": dict(schema)})
