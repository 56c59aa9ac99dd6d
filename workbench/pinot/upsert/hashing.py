"""Primary-key bytes and the map-key hash functions Pinot's upsert managers use.

Pinot keys its upsert map by ``HashUtils.hashPrimaryKey(pk, hashFunction)``: the ``PrimaryKey`` object
itself for ``NONE``, otherwise a ``ByteArray`` wrapping a digest of the key's bytes. Which one is
configured changes both *heap* (see :mod:`workbench.pinot.heap`) and, for colliding digests, which
records meet, so the workbench reproduces the byte layouts exactly (reference §5.2):

- ``PrimaryKey.asBytes()`` is big-endian; a single column is its bare bytes, several columns are
  concatenated and STRING/BYTES/BIG_DECIMAL values get a 4-byte length prefix.
- MD5 is 16 bytes; MURMUR3 is Guava's ``murmur3_128`` (seed 0), i.e. standard MurmurHash3_x64_128 as
  h1 then h2, each little-endian; XXHASH is XXH64 (seed 0) big-endian; XXH128 is XXH3-128 high then
  low 64 bits, big-endian; UUID writes each value's 16 UUID bytes (a string read by Java's
  ``UUID.fromString``, or 16 raw bytes as they are), falling back to ``asBytes()`` if any value is
  neither, and rejects a key holding a null value.

In Python the ``NONE`` key is the value itself (or a tuple of values) and every digest is ``bytes``;
both hash and compare by value, as ``PrimaryKey`` and ``ByteArray`` do in Java.

>>> primary_key_bytes([42], ["INT"]).hex()
'0000002a'
>>> hash_primary_key(42, ["INT"], "MURMUR3").hex()
'6eea611e9215a29ce7114c80bb67b3c9'
>>> hash_primary_key(42, ["INT"], "NONE")
42
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable, Hashable, Sequence
from decimal import Decimal
from enum import StrEnum
from typing import Any

import numpy as np
import xxhash

from workbench.errors import InputError
from workbench.pinot.jvm import java_uuid_from_string

__all__ = [
    "FIXED_WIDTH",
    "HashFunction",
    "KeyEncoder",
    "murmur3_x64_128",
    "murmur3_x64_128_batch",
    "primary_key_bytes",
]

MASK64 = (1 << 64) - 1
_C1 = 0x87C37B91114253D5
_C2 = 0x4CF5AD432745937F
_F1 = 0xFF51AFD7ED558CCD
_F2 = 0xC4CEB9FE1A85EC53

#: Big-endian struct formats of the fixed-width Pinot types (BOOLEAN is stored as INT, TIMESTAMP as LONG).
FIXED_WIDTH: dict[str, str] = {
    "INT": ">i", "BOOLEAN": ">i", "LONG": ">q", "TIMESTAMP": ">q", "FLOAT": ">f", "DOUBLE": ">d",
}
_VARIABLE = ("STRING", "BYTES", "BIG_DECIMAL", "JSON")


class HashFunction(StrEnum):
    """``upsertConfig.hashFunction`` values (reference §5.1); ``NONE`` keys the map by the key itself."""

    NONE = "NONE"
    MD5 = "MD5"
    MURMUR3 = "MURMUR3"
    XXHASH = "XXHASH"
    XXH128 = "XXH128"
    UUID = "UUID"

    @classmethod
    def parse(cls, value: HashFunction | str, where: str = "upsertConfig.hashFunction") -> HashFunction:
        """Read a config value case-insensitively, naming the allowed values on error."""
        try:
            return cls(str(value).upper())
        except ValueError:
            raise InputError(where, f"must be one of {[h.value for h in cls]}, got {value!r}") from None


# -- PrimaryKey.asBytes() -----------------------------------------------------------------------------
def _big_decimal_bytes(value: Any) -> bytes:
    """Pinot's BigDecimal serialisation: 2-byte scale, then the unscaled value's minimal two's complement."""
    sign, digits, exponent = Decimal(value).as_tuple()
    assert isinstance(exponent, int), "NaN/infinite BigDecimal"
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    bits = (unscaled if unscaled >= 0 else ~unscaled).bit_length()
    return struct.pack(">H", (-exponent) & 0xFFFF) + unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def _variable_bytes(value: Any, data_type: str) -> bytes:
    if data_type == "BYTES":
        return bytes(value)
    if data_type == "BIG_DECIMAL":
        return _big_decimal_bytes(value)
    return str(value).encode("utf-8")


def _value_bytes(value: Any, data_type: str, prefixed: bool) -> bytes:
    fmt = FIXED_WIDTH.get(data_type)
    if fmt is not None:
        return struct.pack(fmt, int(value) if fmt in (">i", ">q") else float(value))
    raw = _variable_bytes(value, data_type)
    return struct.pack(">i", len(raw)) + raw if prefixed else raw


def _check_types(types: Sequence[str]) -> tuple[str, ...]:
    upper = tuple(t.upper() for t in types)
    bad = [t for t in upper if t not in FIXED_WIDTH and t not in _VARIABLE]
    if not upper or bad:
        raise InputError("schema.primaryKeyColumns", f"primary-key types must be among "
                         f"{sorted([*FIXED_WIDTH, *_VARIABLE])}, got {list(types)}")
    return upper


def primary_key_bytes(values: Sequence[Any], types: Sequence[str]) -> bytes:
    """``PrimaryKey.asBytes()``: the big-endian bytes Pinot hashes (reference §5.2).

    >>> primary_key_bytes(["ab", 1], ["STRING", "INT"]).hex()
    '00000002616200000001'
    """
    checked = _check_types(types)
    if len(values) != len(checked):
        raise InputError("primary key", f"has {len(values)} values for {len(checked)} columns")
    prefixed = len(checked) > 1
    return b"".join(_value_bytes(v, t, prefixed) for v, t in zip(values, checked, strict=True))


# -- MurmurHash3_x64_128 ----------------------------------------------------------------------------------
def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & MASK64


def _fmix(k: int) -> int:
    k = ((k ^ (k >> 33)) * _F1) & MASK64
    k = ((k ^ (k >> 33)) * _F2) & MASK64
    return k ^ (k >> 33)


def _mix_k1(k1: int) -> int:
    return (_rotl((k1 * _C1) & MASK64, 31) * _C2) & MASK64


def _mix_k2(k2: int) -> int:
    return (_rotl((k2 * _C2) & MASK64, 33) * _C1) & MASK64


def _body(data: bytes, h1: int, h2: int) -> tuple[int, int]:
    for off in range(0, len(data) - len(data) % 16, 16):
        k1, k2 = struct.unpack_from("<QQ", data, off)
        h1 = ((_rotl(h1 ^ _mix_k1(k1), 27) + h2) * 5 + 0x52DCE729) & MASK64
        h2 = ((_rotl(h2 ^ _mix_k2(k2), 31) + h1) * 5 + 0x38495AB5) & MASK64
    return h1, h2


def murmur3_x64_128(data: bytes, seed: int = 0) -> bytes:
    """Standard MurmurHash3_x64_128 as Guava's ``asBytes()`` lays it out (h1 then h2, little-endian).

    >>> murmur3_x64_128(b"user_123").hex()
    '37011f62bf32481024483c8e36228c85'
    """
    h1, h2 = _body(data, seed & MASK64, seed & MASK64)
    tail = data[len(data) - len(data) % 16:]
    if len(tail) > 8:
        h2 ^= _mix_k2(int.from_bytes(tail[8:], "little"))
    if tail:
        h1 ^= _mix_k1(int.from_bytes(tail[:8], "little"))
    h1 ^= len(data)
    h2 ^= len(data)
    h1 = (h1 + h2) & MASK64
    h2 = (h2 + h1) & MASK64
    h1, h2 = _fmix(h1), _fmix(h2)
    h1 = (h1 + h2) & MASK64
    h2 = (h2 + h1) & MASK64
    return struct.pack("<QQ", h1, h2)


# Vectorised twin for many messages of one length: uint64 arithmetic wraps like Java's long.
def _vrotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _vfmix(k: np.ndarray) -> np.ndarray:
    k = (k ^ (k >> np.uint64(33))) * np.uint64(_F1)
    k = (k ^ (k >> np.uint64(33))) * np.uint64(_F2)
    out: np.ndarray = k ^ (k >> np.uint64(33))
    return out


def _vlane(block: np.ndarray) -> np.ndarray:
    """Little-endian uint64 from up to 8 byte columns (missing high bytes are zero)."""
    out = np.zeros(block.shape[0], dtype=np.uint64)
    for i in range(block.shape[1]):
        out |= block[:, i].astype(np.uint64) << np.uint64(8 * i)
    return out


def murmur3_x64_128_batch(messages: np.ndarray) -> np.ndarray:
    """MurmurHash3_x64_128 of every row of an ``(n, length)`` uint8 matrix, as ``(n, 16)`` uint8.

    The bootstrap path hashes millions of fixed-width keys (INT/LONG ids); doing it in numpy avoids a
    Python call per key. Rows must share a length; group variable-length keys by length first.
    """
    n, length = messages.shape
    c1, c2 = np.uint64(_C1), np.uint64(_C2)
    h1 = np.zeros(n, dtype=np.uint64)
    h2 = np.zeros(n, dtype=np.uint64)
    for off in range(0, length - length % 16, 16):
        k1, k2 = _vlane(messages[:, off:off + 8]), _vlane(messages[:, off + 8:off + 16])
        h1 = (_vrotl(h1 ^ (_vrotl(k1 * c1, 31) * c2), 27) + h2) * np.uint64(5) + np.uint64(0x52DCE729)
        h2 = (_vrotl(h2 ^ (_vrotl(k2 * c2, 33) * c1), 31) + h1) * np.uint64(5) + np.uint64(0x38495AB5)
    rest = length % 16
    tail = messages[:, length - rest:]
    if rest > 8:
        h2 ^= _vrotl(_vlane(tail[:, 8:]) * c2, 33) * c1
    if rest:
        h1 ^= _vrotl(_vlane(tail[:, :8]) * c1, 31) * c2
    h1 ^= np.uint64(length)
    h2 ^= np.uint64(length)
    h1 = h1 + h2
    h2 = h2 + h1
    h1, h2 = _vfmix(h1), _vfmix(h2)
    h1 = h1 + h2
    h2 = h2 + h1
    out: np.ndarray = np.stack([h1, h2], axis=1).astype("<u8").view(np.uint8).reshape(n, 16)
    return out


# -- the map key ----------------------------------------------------------------------------------------
def _uuid_value(value: Any) -> bytes | None:
    """One value's 16 UUID bytes, or ``None`` when it is not a UUID in Pinot's eyes."""
    if isinstance(value, bytes | bytearray | memoryview):
        raw = bytes(value)
        return raw if len(raw) == 16 else None
    try:
        return java_uuid_from_string(str(value))
    except ValueError:
        return None


def _uuid_bytes(values: Sequence[Any], types: Sequence[str]) -> bytes:
    """UUID hashing (``HashUtils.hashUUID``): 16 bytes per value, no length prefixes; any value that is
    not a UUID makes the whole key fall back to ``asBytes()``; a null value is an error (§5.2).

    >>> _uuid_bytes(["1-2-3-4-5"], ["STRING"]).hex()  # Java accepts short components
    '00000001000200030004000000000005'
    """
    if any(v is None for v in values):
        raise InputError("primary key", "Found null value in primary key: Pinot rejects it with hashFunction UUID")
    parts = [_uuid_value(v) for v in values]
    if any(p is None for p in parts):
        return primary_key_bytes(values, types)
    return b"".join(p for p in parts if p is not None)


_DIGESTS: dict[HashFunction, Callable[[bytes], bytes]] = {
    HashFunction.MD5: lambda b: hashlib.md5(b, usedforsecurity=False).digest(),
    HashFunction.MURMUR3: murmur3_x64_128,
    HashFunction.XXHASH: lambda b: xxhash.xxh64_digest(b, seed=0),
    HashFunction.XXH128: lambda b: xxhash.xxh3_128_digest(b, seed=0),
}


def hash_primary_key(pk: Any, types: Sequence[str], hash_function: HashFunction | str) -> Hashable:
    """The map key Pinot would use for one primary key (a scalar, or a sequence for several columns)."""
    return KeyEncoder(types, hash_function).encode(pk)


class KeyEncoder:
    """Turns primary-key values into map keys for one table's key columns and hash function.

    Parameters
    ----------
    types
        Pinot data types of the primary-key columns, in schema order (``["LONG"]``, ``["STRING", "INT"]``).
        Ignored for ``NONE`` except to know how many columns there are.
    hash_function
        ``upsertConfig.hashFunction``.

    >>> KeyEncoder(["STRING", "INT"], "NONE").encode(("a", 1))
    ('a', 1)
    >>> KeyEncoder(["LONG"], "XXHASH").encode(7) == KeyEncoder(["LONG"], "XXHASH").encode_many([7])[0]
    True
    """

    def __init__(self, types: Sequence[str], hash_function: HashFunction | str = HashFunction.NONE) -> None:
        self.types = _check_types(types)
        self.hash_function = HashFunction.parse(hash_function)
        self.single = len(self.types) == 1

    def _values(self, pk: Any) -> Sequence[Any]:
        if self.single:
            return (pk,)
        values = tuple(pk)
        if len(values) != len(self.types):
            raise InputError("primary key", f"{pk!r} has {len(values)} values for {len(self.types)} columns")
        return values

    def key_bytes(self, pk: Any) -> bytes:
        """The bytes the configured hash function digests (``asBytes()``, or UUID bytes for UUID)."""
        values = self._values(pk)
        if self.hash_function is HashFunction.UUID:
            return _uuid_bytes(values, self.types)
        return primary_key_bytes(values, self.types)

    def encode(self, pk: Any) -> Hashable:
        """The map key for one primary key."""
        if self.hash_function is HashFunction.NONE:
            return pk if self.single else tuple(self._values(pk))
        if self.hash_function is HashFunction.UUID:
            return self.key_bytes(pk)
        return _DIGESTS[self.hash_function](self.key_bytes(pk))

    def encode_many(self, pks: Sequence[Any] | np.ndarray) -> list[Hashable]:
        """Map keys for many primary keys; vectorised for MURMUR3 over fixed-width single columns."""
        if isinstance(pks, np.ndarray):
            if self.hash_function is HashFunction.MURMUR3 and self.single and self.types[0] in FIXED_WIDTH:
                return self._murmur_fixed(pks)
            pks = pks.tolist()
        if self.hash_function is HashFunction.NONE:
            return list(pks) if self.single else [tuple(p) for p in pks]
        return [self.encode(p) for p in pks]

    def _murmur_fixed(self, pks: np.ndarray) -> list[Hashable]:
        fmt = FIXED_WIDTH[self.types[0]]
        dtype = {">i": ">i4", ">q": ">i8", ">f": ">f4", ">d": ">f8"}[fmt]
        raw = np.ascontiguousarray(pks.astype(dtype)).view(np.uint8).reshape(len(pks), -1)
        digest = murmur3_x64_128_batch(raw).tobytes()
        return [digest[i:i + 16] for i in range(0, len(digest), 16)]
