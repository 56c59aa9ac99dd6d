"""Many byte strings packed into one numpy buffer, ready for row-parallel hashing.

Hashing a million short strings one at a time in Python costs microseconds each. The kernels in
:mod:`workbench.pinot.partition.kernels` instead run each hash round once over *all* rows with numpy.
That needs the inputs laid out so "the j-th 4-byte block of every row" is one gather:

* every row's bytes sit in one flat ``uint8`` buffer (plus zero padding, so reading a whole word
  near the end never runs off the buffer);
* rows are sorted by length, longest first, so the rows that still have a j-th block (or j-th byte)
  are always a *prefix* of the batch: round j touches exactly those rows and nothing else.

Java semantics for the text-to-bytes step live here too: ``String.getBytes(UTF_8)`` writes ``?`` for
an unpaired surrogate, ``String.hashCode`` runs over UTF-16 code units, and ``useRawBytes`` decodes
hex text (commons-codec rules: even length, ``0-9a-fA-F`` only).

>>> batch = UnitBatch.from_strings(["ab", "", "abcde"])
>>> batch.lengths.tolist(), batch.order.tolist(), batch.rows_longer_than(1)
([5, 2, 0], [2, 0, 1], 2)
>>> java_utf8("a\\ud800b"), decode_hex("0A0b")
(b'a?b', b'\\n\\x0b')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from workbench.errors import InputError

__all__ = ["UnitBatch", "decode_hex", "java_utf8"]

#: Zero bytes appended to every buffer so a 16-byte read starting at any row start stays in bounds.
PAD = 16

_HEX_TEXT = re.compile(r"(?:[0-9a-fA-F]{2})*")


def java_utf8(text: str) -> bytes:
    """``text`` encoded as Java's ``String.getBytes(UTF_8)`` would encode it.

    Python strings may hold surrogate code points (Java strings are UTF-16 and always can). Java
    joins a high+low pair into one character and replaces a lone surrogate with ``?``.
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        return joined.encode("utf-8", "replace")


def decode_hex(text: str, where: str = "useRawBytes") -> bytes:
    """Hex text to bytes, rejecting what commons-codec's ``Hex.decodeHex`` rejects.

    Parameters
    ----------
    text
        Hex digits, either case, two per byte.
    where
        Where the text came from, for the error message (``useRawBytes`` or a BYTES ``value``).

    Raises
    ------
    InputError
        Odd length or a non-hex character (Pinot raises IllegalArgumentException).
    """
    if len(text) % 2:
        raise InputError(where, f"odd number of hex characters in {text!r}")
    if not _HEX_TEXT.fullmatch(text):
        raise InputError(where, f"illegal hexadecimal character in {text!r}")
    return bytes.fromhex(text)


def _lengths(items: Sequence[Any]) -> NDArray[np.int64]:
    return np.fromiter(map(len, items), dtype=np.int64, count=len(items))


def _longest_first(lengths: NDArray[np.int64]) -> NDArray[np.intp]:
    """Row order by decreasing length, stable; 16-bit keys let numpy use its O(n) radix sort."""
    longest = int(lengths.max(initial=0))
    keys = (longest - lengths).astype(np.uint16) if longest < 2**16 else -lengths
    return np.argsort(keys, kind="stable")


@dataclass(frozen=True)
class UnitBatch:
    """Rows of code units (bytes, or UTF-16 units) packed for row-parallel hashing.

    Attributes
    ----------
    buf
        All rows' units back to back, followed by :data:`PAD` zeros. ``uint8`` or ``uint16``.
    starts, lengths
        Offset and length (in units) of each row, in *sorted* order (longest row first).
    order
        ``order[i]`` is the caller's index of sorted row ``i``; :meth:`unsort` undoes the sort.
    """

    buf: NDArray[Any]
    starts: NDArray[np.int64]
    lengths: NDArray[np.int64]
    order: NDArray[np.intp]

    @classmethod
    def from_flat(cls, flat: NDArray[Any], lengths: NDArray[np.int64]) -> UnitBatch:
        """Pack rows given as one flat unit array and each row's length."""
        starts = np.cumsum(lengths) - lengths
        return cls.from_rows(flat, starts, lengths)

    @classmethod
    def from_rows(cls, units: NDArray[Any], starts: NDArray[np.int64], lengths: NDArray[np.int64]) -> UnitBatch:
        """Pack rows found at ``starts`` in ``units``; the buffer gets its zero padding here."""
        buf = np.concatenate([units.ravel(), np.zeros(PAD, dtype=units.dtype)])
        order = _longest_first(lengths)
        return cls(buf, starts[order].astype(np.int64), lengths[order].astype(np.int64), order)

    @classmethod
    def from_bytes(cls, rows: Sequence[bytes]) -> UnitBatch:
        """Pack byte strings (already Java-encoded, or raw ``BYTES`` values)."""
        flat = np.frombuffer(b"".join(rows), dtype=np.uint8)
        return cls.from_flat(flat, _lengths(rows))

    @classmethod
    def from_strings(cls, texts: Sequence[str]) -> UnitBatch:
        """Pack strings as Java UTF-8; one encode call for the common all-valid case."""
        joined = "".join(texts)
        try:
            data = joined.encode("utf-8")
        except UnicodeEncodeError:  # a surrogate somewhere: encode row by row, the Java way
            return cls.from_bytes([java_utf8(t) for t in texts])
        if len(data) != len(joined):  # non-ASCII: character counts are not byte counts
            return cls.from_bytes([t.encode("utf-8") for t in texts])
        return cls.from_flat(np.frombuffer(data, dtype=np.uint8), _lengths(texts))

    @classmethod
    def from_hex(cls, texts: Sequence[str]) -> UnitBatch:
        """Pack the bytes that hex texts decode to (``useRawBytes``), validating all texts in one pass."""
        joined = "".join(texts)
        lengths = _lengths(texts)
        if _HEX_TEXT.fullmatch(joined) and not (lengths % 2).any():
            return cls.from_flat(np.frombuffer(bytes.fromhex(joined), dtype=np.uint8), lengths // 2)
        return cls.from_bytes([decode_hex(t) for t in texts])  # raises for the first bad text

    @classmethod
    def from_fixed_width(cls, array: NDArray[np.bytes_]) -> UnitBatch:
        """Pack a numpy ``S`` array (NUL-padded fixed width) without copying row by row."""
        width = array.dtype.itemsize
        units = np.ascontiguousarray(array).view(np.uint8).reshape(len(array), width)
        lengths = np.char.str_len(array).astype(np.int64)  # numpy drops trailing NULs, as on read
        return cls.from_rows(units, np.arange(len(array), dtype=np.int64) * width, lengths)

    @classmethod
    def utf16_from_strings(cls, texts: Sequence[str]) -> UnitBatch:
        """Pack strings as Java sees them for ``hashCode``: UTF-16 code units (``uint16``)."""
        joined = "".join(texts).encode("utf-16-le", "surrogatepass")
        flat = np.frombuffer(joined, dtype="<u2").astype(np.uint16)
        lengths = _lengths(texts)
        if len(flat) != lengths.sum():  # astral characters take two units
            lengths = np.array([len(t.encode("utf-16-le", "surrogatepass")) // 2 for t in texts], np.int64)
        return cls.from_flat(flat, lengths)

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def max_length(self) -> int:
        """Length of the longest row (0 for an empty batch)."""
        return int(self.lengths[0]) if len(self) else 0

    def rows_longer_than(self, size: int) -> int:
        """How many rows have more than ``size`` units: they form a prefix of the sorted batch."""
        return int(np.searchsorted(-self.lengths, -size, side="left"))

    def units_at(self, offset: int | NDArray[np.int64], rows: int | None = None) -> NDArray[Any]:
        """Unit ``offset`` of each of the first ``rows`` rows (``offset`` may be per row)."""
        return self.buf[self.starts[:rows] + offset]  # type: ignore[no-any-return]

    def words(self, dtype: str, offset: int | NDArray[np.int64], rows: int | None = None) -> NDArray[Any]:
        """Little-endian word (``"<u4"`` or ``"<u8"``) at byte ``offset`` of the first ``rows`` rows.

        A strided view reads a word at *every* byte position, so one fancy-index gathers the
        block of all rows at once. Bytes past a row's end are whatever follows; callers mask them.
        """
        size = np.dtype(dtype).itemsize
        view = np.ndarray((len(self.buf) - size + 1,), dtype=dtype, buffer=self.buf, strides=(1,))
        return view[self.starts[:rows] + offset]  # type: ignore[no-any-return]

    def unsort(self, values: NDArray[Any]) -> NDArray[Any]:
        """Put per-row results computed in sorted order back into the caller's order."""
        out = np.empty_like(values)
        out[self.order] = values
        return out
