"""Fit an importer's table to a shared Arrow schema of the workload directory.

Generated and imported data must be interchangeable (:mod:`workbench.workload.schema` is the contract),
so an importer's table starts with exactly the schema's columns, in its order and with its types.
What an observed input cannot know (a query's dashboard, a segment's seal time) gets the schema's
"unknown" value: ``-1`` for integers, NaN for floats, null for strings, false for booleans. Columns
only an observed input has (a query's ``time_ms``) follow, so readers of the shared columns see no
difference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
import pyarrow as pa

__all__ = ["arrow_schema", "conform"]


def _unknown(arrow_type: Any) -> Any:
    if pa.types.is_integer(arrow_type):
        return -1
    if pa.types.is_floating(arrow_type):
        return math.nan
    if pa.types.is_boolean(arrow_type):
        return False
    return None


def _is_text(arrow_type: Any) -> bool:
    return bool(pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type))


def _cast(values: pd.Series, arrow_type: Any) -> pd.Series:
    """``values`` with the pandas dtype Arrow maps ``arrow_type`` to (object holding str/None for strings)."""
    if _is_text(arrow_type):
        return pd.Series([None if value is None or value is pd.NA or value != value else str(value)
                          for value in values], index=values.index, dtype=object)
    return values.astype(arrow_type.to_pandas_dtype())


def conform(frame: pd.DataFrame, schema: Any, extras: Sequence[str]) -> pd.DataFrame:
    """``schema``'s columns (cast, or filled with "unknown"), then ``extras`` from ``frame`` unchanged.

    >>> import pyarrow as pa
    >>> out = conform(pd.DataFrame({"b": ["x"], "c": [1.5]}), pa.schema([("a", pa.int32()), ("b", pa.string())]),
    ...               ["c"])
    >>> out.to_dict("records"), str(out["a"].dtype)
    ([{'a': -1, 'b': 'x', 'c': 1.5}], 'int32')
    """
    columns: dict[str, pd.Series] = {}
    for field in schema:
        values = frame[field.name] if field.name in frame else pd.Series([_unknown(field.type)] * len(frame),
                                                                         index=frame.index, dtype=object)
        columns[field.name] = _cast(values, field.type)
    for name in extras:
        columns[name] = frame[name]
    return pd.DataFrame(columns, index=frame.index).reset_index(drop=True)


def arrow_schema(frame: pd.DataFrame, shared: Any | None) -> Any:
    """The Arrow schema to write ``frame`` with: inferred, but with ``shared``'s exact field types.

    Inference alone would write an all-null string column as Arrow ``null`` and lose the contract.
    """
    schema = pa.Schema.from_pandas(frame, preserve_index=False)
    for field in shared or ():
        schema = schema.set(schema.get_field_index(field.name), field)
    return schema
