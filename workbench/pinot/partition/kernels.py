"""Row-parallel (numpy) versions of the hashes in :mod:`workbench.pinot.partition.hashes`.

Each kernel takes a :class:`~workbench.pinot.partition.batch.UnitBatch` and returns the signed hash
of every row, in the caller's order, as ``int64``. The work is organised by *round*, not by row:
round ``j`` gathers the ``j``-th block (or byte) of every row that is long enough, and applies the
hash step to all of them in a handful of numpy operations. Because the batch is sorted longest
first, those rows are always a prefix, so no masking is needed in the main loop; only the ragged
tails are masked. numpy's ``uint32``/``uint64`` arithmetic wraps modulo 2**32 / 2**64, which is
exactly Java's ``int``/``long`` overflow.

>>> from workbench.pinot.partition.batch import UnitBatch
>>> murmur2(UnitBatch.from_strings(["hello", "", "user_123"])).tolist()
[2132663229, 275646681, -1159050033]
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from workbench.pinot.partition import hashes as h
from workbench.pinot.partition.batch import UnitBatch

__all__ = ["array_hash_code", "fnv", "murmur2", "murmur3_x64_32", "murmur3_x86_32", "string_hash_code"]

U32 = np.uint32
U64 = np.uint64
I64Array = NDArray[np.int64]

#: ``_TAIL_MASK32[t]`` keeps the low ``t`` bytes of a little-endian word (the rest belongs to other rows).
_TAIL_MASK32 = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF], dtype=U32)


def _signed32(values: NDArray[np.uint32]) -> I64Array:
    return values.astype(U32).view(np.int32).astype(np.int64)


def _signed64(values: NDArray[np.uint64]) -> I64Array:
    return values.astype(U64).view(np.int64)


def _rotl32(x: NDArray[np.uint32], r: int) -> NDArray[np.uint32]:
    return (x << U32(r)) | (x >> U32(32 - r))


def _rotl64(x: NDArray[np.uint64], r: int) -> NDArray[np.uint64]:
    return (x << U64(r)) | (x >> U64(64 - r))


def _tail_word32(batch: UnitBatch) -> tuple[NDArray[np.uint32], NDArray[np.int64]]:
    """The bytes after the last full 4-byte block of each row, zero-padded, and their count."""
    full = batch.lengths & ~3
    tail = batch.lengths & 3
    return batch.words("<u4", full) & _TAIL_MASK32[tail], tail


# -- MurmurHash2 ---------------------------------------------------------------------------------------
def _murmur2_mix(k: NDArray[np.uint32]) -> NDArray[np.uint32]:
    m = U32(h.MURMUR2_M)
    k = k * m
    return (k ^ (k >> U32(24))) * m


def murmur2(batch: UnitBatch) -> I64Array:
    """Kafka MurmurHash2 of every row (see :func:`workbench.pinot.partition.hashes.murmur2`)."""
    m = U32(h.MURMUR2_M)
    acc = U32(h.MURMUR2_SEED) ^ batch.lengths.astype(U32)
    for j in range(batch.max_length // 4):
        rows = batch.rows_longer_than(4 * j + 3)
        acc[:rows] = (acc[:rows] * m) ^ _murmur2_mix(batch.words("<u4", 4 * j, rows))
    word, tail = _tail_word32(batch)
    acc = np.where(tail > 0, (acc ^ word) * m, acc)
    acc ^= acc >> U32(13)
    acc *= m
    return _signed32(batch.unsort(acc ^ (acc >> U32(15))))


# -- MurmurHash3 x86_32 ----------------------------------------------------------------------------------
def _x86_mix(k: NDArray[np.uint32]) -> NDArray[np.uint32]:
    return _rotl32(k * U32(h.X86_C1), 15) * U32(h.X86_C2)


def _fmix32(x: NDArray[np.uint32]) -> NDArray[np.uint32]:
    x = (x ^ (x >> U32(16))) * U32(0x85EBCA6B)
    x = (x ^ (x >> U32(13))) * U32(0xC2B2AE35)
    return x ^ (x >> U32(16))


def murmur3_x86_32(batch: UnitBatch, seed: int = 0) -> I64Array:
    """Standard MurmurHash3_x86_32 of every row with a Java-int ``seed``."""
    acc = np.full(len(batch), seed & h.MASK32, dtype=U32)
    for j in range(batch.max_length // 4):
        rows = batch.rows_longer_than(4 * j + 3)
        mixed = acc[:rows] ^ _x86_mix(batch.words("<u4", 4 * j, rows))
        acc[:rows] = _rotl32(mixed, 13) * U32(5) + U32(0xE6546B64)
    word, _ = _tail_word32(batch)
    acc ^= _x86_mix(word)  # a zero tail mixes to zero, so rows without a tail are unchanged
    return _signed32(batch.unsort(_fmix32(acc ^ batch.lengths.astype(U32))))


# -- Pinot's MurmurHash3 x64_32 --------------------------------------------------------------------------
Lanes = tuple[NDArray[np.uint64], NDArray[np.uint64]]


def _bmix(lanes: Lanes, k1: NDArray[np.uint64], k2: NDArray[np.uint64], c1: Any, c2: Any) -> Lanes:
    """One block of the x64 mix; ``c1``/``c2`` are scalars (main loop) or per-row arrays (tails)."""
    h1, h2 = lanes
    h1 = (h1 ^ (_rotl64(k1 * c1, 23) * c2)) + h2
    h2 = (_rotl64(h2, 41) ^ (_rotl64(k2 * c2, 23) * c1)) + h1
    return h1 * U64(3) + U64(0x52DCE729), h2 * U64(3) + U64(0x38495AB5)


def _x64_multipliers(blocks: int) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """``c1``/``c2`` as they stand after 0, 1, ..., ``blocks`` blocks (they depend only on the count)."""
    c1, c2 = [h.X64_C1], [h.X64_C2]
    for _ in range(blocks):
        c1.append((c1[-1] * 5 + 0x7B7D159C) & h.MASK64)
        c2.append((c2[-1] * 5 + 0x6BCE6396) & h.MASK64)
    return np.array(c1, dtype=U64), np.array(c2, dtype=U64)


def _x64_tail(batch: UnitBatch) -> tuple[NDArray[np.uint64], NDArray[np.uint64]]:
    """Tail words; each byte is sign-extended to 64 bits before the shift, as Java does."""
    tail = batch.lengths & 15
    start = batch.lengths & ~15
    words = [np.zeros(len(batch), dtype=U64), np.zeros(len(batch), dtype=U64)]
    for j in range(int(tail.max(initial=0))):
        byte = batch.units_at(start + j).view(np.int8).astype(np.int64).view(U64) << U64(8 * (j & 7))
        words[j >> 3] ^= np.where(tail > j, byte, U64(0))
    return words[0], words[1]


def murmur3_x64_32(batch: UnitBatch, seed: int = 0) -> I64Array:
    """Pinot's ``x64_32`` Murmur3 variant of every row (see :mod:`workbench.pinot.partition.hashes`)."""
    blocks = batch.max_length // 16
    c1, c2 = _x64_multipliers(blocks)
    s = seed & h.MASK64
    h1, h2 = np.full(len(batch), h.X64_H1 ^ s, dtype=U64), np.full(len(batch), h.X64_H2 ^ s, dtype=U64)
    for j in range(blocks):
        rows = batch.rows_longer_than(16 * j + 15)
        k1, k2 = batch.words("<u8", 16 * j, rows), batch.words("<u8", 16 * j + 8, rows)
        h1[:rows], h2[:rows] = _bmix((h1[:rows], h2[:rows]), k1, k2, c1[j], c2[j])
    k1, k2 = _x64_tail(batch)
    has = np.flatnonzero(batch.lengths & 15)
    done = batch.lengths[has] >> 4
    h1[has], h2[has] = _bmix((h1[has], h2[has]), k1[has], k2[has], c1[done], c2[done])
    h2 ^= batch.lengths.astype(U64)
    h1 += h2
    h2 += h1
    h1 = _fmix64(h1) + _fmix64(h2)
    return _signed32(batch.unsort((h1 >> U64(32)).astype(U32)))


def _fmix64(k: NDArray[np.uint64]) -> NDArray[np.uint64]:
    k = (k ^ (k >> U64(33))) * U64(0xFF51AFD7ED558CCD)
    k = (k ^ (k >> U64(33))) * U64(0xC4CEB9FE1A85EC53)
    return k ^ (k >> U64(33))


# -- Byte-serial hashes: FNV and Java's polynomial hashCode ----------------------------------------------
def fnv(batch: UnitBatch, variant: str = "fnv1a_32") -> I64Array:
    """FNV of every row in the named variant; one numpy step per byte position."""
    spec = h.FNV_VARIANTS[variant]
    dtype: type[Any] = U32 if spec.bits == 32 else U64
    prime = dtype(spec.prime)
    acc: NDArray[Any] = np.full(len(batch), spec.offset_basis, dtype=dtype)
    for j in range(batch.max_length):
        rows = batch.rows_longer_than(j)
        byte: NDArray[Any] = batch.units_at(j, rows).astype(dtype)
        acc[:rows] = (acc[:rows] ^ byte) * prime if spec.xor_first else (acc[:rows] * prime) ^ byte
    out = batch.unsort(acc)
    return _signed32(out) if spec.bits == 32 else _signed64(out)


def _polynomial31(batch: UnitBatch, start: int, signed_units: bool) -> I64Array:
    acc = np.full(len(batch), start, dtype=U32)
    for j in range(batch.max_length):
        rows = batch.rows_longer_than(j)
        units = batch.units_at(j, rows)
        units = units.view(np.int8) if signed_units else units
        acc[:rows] = acc[:rows] * U32(31) + units.astype(U32)  # int8 -> uint32 wraps like Java
    return _signed32(batch.unsort(acc))


def string_hash_code(batch: UnitBatch) -> I64Array:
    """Java ``String.hashCode`` of every row of a UTF-16 batch (:meth:`UnitBatch.utf16_from_strings`)."""
    return _polynomial31(batch, 0, signed_units=False)


def array_hash_code(batch: UnitBatch) -> I64Array:
    """Java ``Arrays.hashCode(byte[])`` of every row of a byte batch (signed bytes, start 1)."""
    return _polynomial31(batch, 1, signed_units=True)
