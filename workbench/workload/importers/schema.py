"""Import a Pinot schema (the JSON ``POST /schemas`` takes) as one row per column.

The cache canonicaliser, the cost model and the upsert heap model need each column's type, whether
it is single-valued and which columns form the primary key; this importer checks exactly what Pinot's
schema validation would refuse among those, and reports it at the line of the offending field spec.
The controller's ``GET /tableConfigs/{name}`` response is accepted too (its ``schema`` member).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.errors import InputError
from workbench.pinot.schema import DATA_TYPES, SCHEMA_COLUMNS, KeyPath, SchemaProblem, dotted, schema_rows
from workbench.workload.importers.common import ImportResult, Tally, line_count, read_text
from workbench.workload.importers.jsonpos import load_json, nearest_line

__all__ = ["DATA_TYPES", "SCHEMA_COLUMNS", "read_schema"]


def _unwrap(data: Any) -> tuple[KeyPath, Mapping[str, Any]] | None:
    if isinstance(data, Mapping) and "schemaName" not in data and isinstance(data.get("schema"), Mapping):
        return ("schema",), data["schema"]
    return ((), data) if isinstance(data, Mapping) else None


def read_schema(path: str | Path, lenient: bool = False, *, max_bytes: int | None = None) -> ImportResult:
    """Read and validate a Pinot schema file.

    Parameters
    ----------
    path
        The schema JSON (or a ``GET /tableConfigs/{name}`` response holding one).
    max_bytes
        Largest input read (after decompression); ``None`` for the default limit.
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
    text = read_text(source, strict_utf8=True, max_bytes=max_bytes)
    found = _unwrap(load_json(text, str(source)))
    if found is None:
        raise InputError(f"{source}:1", "a schema must be a JSON object with schemaName and field specs")
    prefix, schema = found
    try:
        rows = schema_rows(schema)
    except SchemaProblem as exc:
        keys: KeyPath = (*prefix, *exc.where)
        raise InputError(f"{source}:{nearest_line(text, keys)}", f"{dotted(keys)}: {exc.problem}") from None
    tally = Tally(source, lenient)
    tally.count("lines", line_count(text))
    frame = pd.DataFrame(rows, columns=list(SCHEMA_COLUMNS))
    return tally.result("schema", frame, {"schema.json": dict(schema)})
