"""Per-segment upsert state: the docs' keys and values, and their valid/queryable flags.

Pinot keeps two roaring bitmaps per segment (validDocIds, queryableDocIds). The hot loops here flip
one doc at a time, millions of times, and a ``bytearray`` store is several times cheaper from Python
than a ``BitMap.add``/``discard`` call, so a segment keeps one flag byte per doc and builds the
bitmaps when asked:

- ``VALID_QUERYABLE`` (3): the doc is the current version of its key and visible to queries;
- ``VALID`` (1): current version but a delete marker (valid, not queryable);
- ``0``: superseded (or an out-of-order row that was kept).

Without ``deleteRecordColumn`` every valid doc is ``VALID_QUERYABLE`` and queries use validDocIds.

The tie rule between segments (``shouldReplaceOnComparisonTie``, reference §5.3) also lives here,
because it is a property of segment names and creation times.

>>> llc_sequence("events__3__17__20240101T0000Z"), llc_sequence("events_0"), is_uploaded_name("events_0")
(17, None, False)
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pyroaring import BitMap

__all__ = [
    "VALID",
    "VALID_QUERYABLE",
    "SegmentInput",
    "SegmentState",
    "bitmap_from_flags",
    "is_uploaded_name",
    "llc_sequence",
    "replaces_on_tie",
]

VALID = 1
VALID_QUERYABLE = 3
_TIME = re.compile(r"^\d{8}T\d{4}Z$")


def llc_sequence(name: str) -> int | None:
    """Sequence number of an LLC segment name ``table__partition__sequence__creationTime``, else None."""
    parts = name.split("__")
    if len(parts) != 4 or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    return int(parts[2])


def is_uploaded_name(name: str) -> bool:
    """``uploaded__table__partition__sequence__yyyyMMddTHHmmZ[__suffix]`` (HEAD's UploadedRealtimeSegmentName)."""
    parts = name.split("__")
    if len(parts) not in (5, 6) or parts[0] != "uploaded":
        return False
    stamp = 4
    return bool(_TIME.match(parts[stamp])) and parts[2].isdigit() and parts[3].isdigit()


class SegmentState:
    """One segment as the upsert manager sees it.

    Attributes
    ----------
    name
        Segment name.
    keys, values
        Map key and comparison value per doc (doc id = list index). An immutable segment given numpy
        columns keeps them as arrays (a tenth of the memory of Python lists) until a per-doc loop
        needs lists; :meth:`key_column` and :meth:`value_column` expose whichever is held.
    deletes
        One byte per doc, 1 for a delete record.
    flags
        One byte per doc: 0, ``VALID`` or ``VALID_QUERYABLE``.
    mutable
        True for the consuming segment.
    in_map
        False for a segment loaded out of metadata TTL: its bitmaps came from a snapshot and none of
        its keys are in the map.
    has_bitmaps
        False when such a segment had no snapshot: Pinot then keeps no bitmaps and queries every doc.
    dirty
        Changed since the last snapshot (Pinot's ``_updatedSegmentsSinceLastSnapshot``).
    max_value
        Segment-metadata max of the comparison column (raises the watermark).
    creation_time_ms, llc_seq, uploaded
        Inputs of the tie rule between segments.
    out_of_order
        ``outOfOrderRecordColumn`` values of a consuming segment (1 = the row arrived out of order).
    """

    __slots__ = ("_keys", "_values", "creation_time_ms", "deletes", "dirty", "flags", "has_bitmaps", "in_map",
                 "llc_seq", "max_value", "mutable", "name", "out_of_order", "uploaded")

    def __init__(self, name: str, *, mutable: bool, creation_time_ms: int = 0) -> None:
        self.name = name
        self._keys: list[Hashable] | np.ndarray = []
        self._values: list[Any] | np.ndarray = []
        self.deletes = bytearray()
        self.flags = bytearray()
        self.mutable = mutable
        self.in_map = True
        self.has_bitmaps = True
        self.dirty = not mutable
        self.max_value = float("-inf")
        self.creation_time_ms = creation_time_ms
        self.llc_seq = llc_sequence(name)
        self.uploaded = is_uploaded_name(name)
        self.out_of_order: bytearray | None = None

    def __repr__(self) -> str:
        kind = "mutable" if self.mutable else "immutable"
        return f"SegmentState({self.name!r}, {kind}, docs={len(self.flags)}, valid={self.num_valid()})"

    @property
    def keys(self) -> list[Hashable]:
        """Map key per doc, as a list (an array column is converted once, on first use)."""
        if isinstance(self._keys, np.ndarray):
            self._keys = self._keys.tolist()
        assert isinstance(self._keys, list)
        return self._keys

    @property
    def values(self) -> list[Any]:
        """Comparison value per doc, as a list (converted once, like :attr:`keys`)."""
        if isinstance(self._values, np.ndarray):
            self._values = self._values.tolist()
        assert isinstance(self._values, list)
        return self._values

    def set_columns(self, keys: list[Hashable] | np.ndarray, values: list[Any] | np.ndarray) -> None:
        """Give an immutable segment its key and value columns (lists or 1-D arrays).

        Arrays are kept by reference, not copied (a segment's columns are immutable in Pinot too), and
        marked read-only here so the manager cannot change them by accident.
        """
        self._keys = _read_only(keys)
        self._values = _read_only(values)

    def key_column(self) -> list[Hashable] | np.ndarray:
        """The key column as held: an array when the segment was given one, else the list."""
        return self._keys

    def value_column(self) -> list[Any] | np.ndarray:
        """The value column as held."""
        return self._values

    @property
    def num_docs(self) -> int:
        """Docs indexed so far (dropped out-of-order records are not indexed)."""
        return len(self.flags)

    def flag_array(self) -> np.ndarray:
        """The flags as a uint8 view (no copy)."""
        return np.frombuffer(self.flags, dtype=np.uint8) if self.flags else np.zeros(0, np.uint8)

    def num_valid(self) -> int:
        """Number of valid docs."""
        return int(np.count_nonzero(self.flag_array()))

    def valid_bitmap(self) -> BitMap:
        """validDocIds."""
        return bitmap_from_flags(self.flag_array() != 0)

    def queryable_bitmap(self) -> BitMap:
        """queryableDocIds (validDocIds minus delete markers)."""
        return bitmap_from_flags(self.flag_array() == VALID_QUERYABLE)

    def set_from_bitmap(self, valid: BitMap) -> None:
        """Flags from a validDocIds snapshot; queryable is recomputed from the delete column (§5.6)."""
        flags = np.zeros(self.num_docs, dtype=np.uint8)
        docs = np.frombuffer(valid.to_array(), dtype=np.uint32).astype(np.int64)
        docs = docs[docs < len(flags)]
        deletes = np.frombuffer(self.deletes, dtype=np.uint8) if self.deletes else np.zeros(len(flags), np.uint8)
        flags[docs] = np.where(deletes[docs] != 0, VALID, VALID_QUERYABLE)
        self.flags = bytearray(flags.tobytes())


def _read_only(column: Any) -> Any:
    if isinstance(column, np.ndarray):
        column = column.view()
        column.flags.writeable = False
    return column


def bitmap_from_flags(mask: np.ndarray) -> BitMap:
    """A run-optimised BitMap of the true positions (``array('I')`` is the fast constructor input)."""
    docs = array("I")
    docs.frombytes(np.flatnonzero(mask).astype(np.uint32).tobytes())
    bitmap = BitMap(docs)
    bitmap.run_optimize()
    return bitmap


def replaces_on_tie(new: SegmentState, current: SegmentState) -> bool:
    """Pinot's ``shouldReplaceOnComparisonTie`` for a record in ``new`` against one in ``current``.

    Both LLC: the higher sequence number wins. Otherwise the newer creation time wins; at equal times
    an uploaded-realtime name beats any other name, and otherwise the current location is kept.
    """
    if new.llc_seq is not None and current.llc_seq is not None:
        return new.llc_seq > current.llc_seq
    if new.creation_time_ms != current.creation_time_ms:
        return new.creation_time_ms > current.creation_time_ms
    return new.uploaded and not current.uploaded


@dataclass(frozen=True, eq=False)
class SegmentInput:
    """An immutable segment handed to the manager: its docs' keys, comparison values and delete flags.

    Attributes
    ----------
    name
        Segment name (LLC names ``table__partition__sequence__time`` enable the sequence tie rule).
    primary_keys
        One primary key per doc, in doc order (scalars, or tuples for several key columns). Integer
        numpy arrays are kept as they are (read-only), not copied.
    comparison_values
        One comparison value per doc.
    is_delete
        Delete-record flag per doc, or None for none.
    max_comparison_value
        The segment metadata's max of the comparison column; defaults to the largest value.
    creation_time_ms
        The segment's authoritative creation (or push) time, for the tie rule between non-LLC segments.
    """

    name: str
    primary_keys: Any
    comparison_values: Any
    is_delete: Any = None
    max_comparison_value: float | None = None
    creation_time_ms: int = 0
