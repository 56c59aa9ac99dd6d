"""Reading the workbench's own outputs back (run and sweep directories), with clean errors.

``report`` and a resumed sweep read files an earlier command wrote; a user may hand them anything (a
half-copied directory, a file from another tool, a hand edit). Each reader names the file and, for
JSON, the missing key, instead of failing inside pandas or the report code.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from workbench.errors import InputError
from workbench.io.reading import load_json, read_text

__all__ = ["read_json_file", "read_parquet", "require_keys"]


def read_parquet(path: str | Path, required: Sequence[str] = (), *, columns: Sequence[str] | None = None,
                 what: str = "table") -> pd.DataFrame:
    """A Parquet file as a frame (only ``columns``, when given); a missing, corrupt or foreign file, or a
    missing ``required`` column, is an InputError naming the file."""
    source = Path(path)
    if not source.is_file():
        raise InputError(str(source), f"is missing; the {what} should be there")
    try:
        schema = pq.read_schema(source)
        missing = [c for c in (*required, *(columns or ())) if c not in schema.names]
        if missing:
            raise InputError(str(source), f"has no column {', '.join(map(repr, missing))}; is it a workbench {what}? "
                                          f"(columns: {', '.join(schema.names[:12])})")
        table = pq.read_table(source, columns=list(columns) if columns is not None else None)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(source), f"is not a readable Parquet file ({str(exc).splitlines()[0][:160]})") from None
    frame: pd.DataFrame = table.to_pandas()
    return frame


def read_json_file(path: str | Path, what: str) -> Any:
    """A JSON document the workbench wrote (``summary.json``, ``sweep.json``), read strictly."""
    source = Path(path)
    if not source.is_file():
        raise InputError(str(source), f"is missing; the {what} should be there")
    return load_json(read_text(source, what=what, limit_name="document_bytes"), str(source))


def require_keys(document: Any, paths: Sequence[str], source: str) -> None:
    """Every dotted key of ``paths`` must be present in ``document`` (a JSON object)."""
    for dotted in paths:
        node = document
        for part in dotted.split("/"):
            if not isinstance(node, dict) or part not in node:
                raise InputError(source, f"has no {dotted.replace('/', '.')!r}; was it written by this version of "
                                         "the workbench?")
            node = node[part]
