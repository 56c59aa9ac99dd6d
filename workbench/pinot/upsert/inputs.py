"""Caller input to segment state: key encoding, column checks, delete flags, immutable segments.

Every way in (consumed records, an added or replaced segment, the vectorised bootstrap, preload)
turns the caller's columns into map keys and comparison values the same way and rejects the same bad
input with the same error, so the conversion lives here once and each part calls it with the
partition's :class:`~workbench.pinot.upsert.state.UpsertState`.

>>> max_comparison_value([3, 9, 4], None), max_comparison_value([], None), max_comparison_value([3], 7)
(9.0, -inf, 7.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.errors import InputError
from workbench.pinot.upsert.hashing import HashFunction
from workbench.pinot.upsert.segments import SegmentInput, SegmentState
from workbench.pinot.upsert.state import UpsertState
from workbench.pinot.upsert.ttl import WATERMARK_NOT_SET

__all__ = [
    "as_list",
    "delete_flags",
    "encode_columns",
    "immutable_segment",
    "max_comparison_value",
    "segment_from_input",
]


def as_list(values: Any, where: str) -> list[Any]:
    """A column as a Python list; a bare string (a common slip for one key) is refused, naming ``where``."""
    if isinstance(values, np.ndarray):
        return list(values.tolist())
    if isinstance(values, str | bytes):
        raise InputError(where, "must be a sequence of values, not a single string")
    return list(values)


def max_comparison_value(values: list[Any] | np.ndarray, given: float | None) -> float:
    """The segment metadata's max of the comparison column: ``given`` if known, else the largest value."""
    if given is not None:
        return float(given)
    return float(max(values) if isinstance(values, list) else values.max()) if len(values) else WATERMARK_NOT_SET


def _numeric_array(values: Any) -> bool:
    return isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "iuf"


def delete_flags(state: UpsertState, is_delete: Any, n: int) -> bytes | None:
    """One byte per record (1 = delete), or None when there are no deletes to honour.

    Deletes need ``deleteRecordColumn``: a true flag without it is an error, all-false flags are
    simply dropped.
    """
    if is_delete is None:
        return None
    flags = np.asarray(is_delete, dtype=bool)
    if flags.shape != (n,):
        raise InputError("is_delete", f"needs one flag per record ({n}), got shape {flags.shape}")
    if not state.settings.has_delete_column:
        if flags.any():
            raise InputError("is_delete", "delete records need delete_record_column (deleteRecordColumn)")
        return None
    return flags.astype(np.uint8).tobytes()


def encode_columns(state: UpsertState, primary_keys: Any, comparison_values: Any, *,
                   keep_arrays: bool = False) -> tuple[Any, Any]:
    """Map keys and comparison values, as lists for the per-record loops.

    With ``keep_arrays`` (immutable segments) an integer key array under hashFunction NONE and a
    numeric value array stay numpy: the vectorised bootstrap reads them as they are, and a 10M-doc
    column costs 80 MB instead of ~360 MB of Python ints.
    """
    encoder = state.encoder
    keys_stay = (keep_arrays and encoder.hash_function is HashFunction.NONE and encoder.single
                 and _numeric_array(primary_keys) and primary_keys.dtype.kind in "iu")
    keys = primary_keys if keys_stay else encoder.encode_many(
        primary_keys if isinstance(primary_keys, np.ndarray) else as_list(primary_keys, "primary_keys"))
    values = (comparison_values if keep_arrays and _numeric_array(comparison_values)
              else as_list(comparison_values, "comparison_values"))
    if len(keys) != len(values):
        raise InputError("comparison_values", f"has {len(values)} values for {len(keys)} primary keys")
    return keys, values


def immutable_segment(name: str, keys: Any, values: Any, deletes: bytes | None, max_value: float | None,
                      creation_time_ms: int) -> SegmentState:
    """An immutable segment holding these columns, no doc valid yet (the map decides which are)."""
    seg = SegmentState(name, mutable=False, creation_time_ms=creation_time_ms)
    seg.set_columns(keys, values)
    seg.deletes = bytearray(deletes if deletes is not None else bytes(len(keys)))
    seg.flags = bytearray(len(keys))
    seg.max_value = max_comparison_value(values, max_value)
    return seg


def segment_from_input(state: UpsertState, spec: SegmentInput) -> SegmentState:
    """The immutable segment a :class:`SegmentInput` describes, its columns encoded and checked."""
    keys, values = encode_columns(state, spec.primary_keys, spec.comparison_values, keep_arrays=True)
    return immutable_segment(spec.name, keys, values, delete_flags(state, spec.is_delete, len(keys)),
                             spec.max_comparison_value, spec.creation_time_ms)
