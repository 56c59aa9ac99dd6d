"""Scalar hash primitives with Java's 32/64-bit wrapping semantics, in plain Python integers.

These are the reference ("one value at a time") implementations. Pinot computes every partition id
from a hash over the value's bytes (or UTF-16 code units), so each primitive here mirrors the Java
arithmetic exactly: Python integers are masked to 32 or 64 bits after each step and the final value
is read back as a *signed* Java ``int``/``long``. The vectorised kernels in
:mod:`workbench.pinot.partition.kernels` must agree with these bit for bit; the tests check that.

>>> murmur2(b"hello"), murmur3_x86_32(b"hello"), string_hash_code("polygenelubricants")
(2132663229, 613153351, -2147483648)
>>> fnv(b"a", "fnv1a_32") == to_signed(0xE40C292C, 32)
True
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "FNV_VARIANTS",
    "FnvVariant",
    "array_hash_code",
    "fmix64",
    "fnv",
    "murmur2",
    "murmur3_x64_32",
    "murmur3_x86_32",
    "string_hash_code",
    "to_signed",
    "utf16_units",
]

MASK32 = 0xFFFF_FFFF
MASK64 = 0xFFFF_FFFF_FFFF_FFFF

# MurmurHash2 as Kafka's default partitioner uses it (fixed seed).
MURMUR2_SEED = 0x9747B28C
MURMUR2_M = 0x5BD1E995

# Standard MurmurHash3_x86_32 constants.
X86_C1 = 0xCC9E2D51
X86_C2 = 0x1B873593

# Pinot's x64_32 variant: starting lanes, starting multipliers and their per-block updates.
X64_H1 = 0x9368E53C2F6AF274
X64_H2 = 0x586DCD208F7CD3FD
X64_C1 = 0x87C37B91114253D5
X64_C2 = 0x4CF5AD432745937F


def to_signed(value: int, bits: int) -> int:
    """Read the low ``bits`` bits of ``value`` as a two's-complement (Java) integer.

    >>> to_signed(0xFFFFFFFF, 32), to_signed(0x7FFFFFFF, 32), to_signed(1 << 63, 64)
    (-1, 2147483647, -9223372036854775808)
    """
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _rotl32(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (32 - shift))) & MASK32


def _rotl64(value: int, shift: int) -> int:
    return ((value << shift) | (value >> (64 - shift))) & MASK64


# -- MurmurHash2 (Kafka) -----------------------------------------------------------------------------
def _murmur2_block(h: int, k: int) -> int:
    k = (k * MURMUR2_M) & MASK32
    k ^= k >> 24
    k = (k * MURMUR2_M) & MASK32
    return ((h * MURMUR2_M) & MASK32) ^ k


def murmur2(data: bytes) -> int:
    """Kafka's 32-bit MurmurHash2 (seed ``0x9747b28c``) of ``data``, as a signed int.

    Kafka's default producer partitioner uses this hash, which is why Pinot's ``Murmur`` function
    does: a table partitioned like its topic lets the broker prune by stream partition.
    """
    h = (MURMUR2_SEED ^ len(data)) & MASK32
    full = len(data) & ~3
    for i in range(0, full, 4):
        h = _murmur2_block(h, int.from_bytes(data[i : i + 4], "little"))
    if full < len(data):
        h = ((h ^ int.from_bytes(data[full:], "little")) * MURMUR2_M) & MASK32
    h ^= h >> 13
    h = (h * MURMUR2_M) & MASK32
    return to_signed(h ^ (h >> 15), 32)


# -- MurmurHash3 x86_32 (standard, Guava's murmur3_32_fixed) ------------------------------------------
def _x86_mix_k(k: int) -> int:
    k = (k * X86_C1) & MASK32
    return (_rotl32(k, 15) * X86_C2) & MASK32


def _fmix32(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK32
    return h ^ (h >> 16)


def murmur3_x86_32(data: bytes, seed: int = 0) -> int:
    """Standard MurmurHash3_x86_32 of ``data`` with a Java-int ``seed``, as a signed int.

    Equal to ``mmh3.hash(data, seed, signed=True)``; the default variant of Pinot's ``Murmur3``.
    """
    h = seed & MASK32
    full = len(data) & ~3
    for i in range(0, full, 4):
        h ^= _x86_mix_k(int.from_bytes(data[i : i + 4], "little"))
        h = (_rotl32(h, 13) * 5 + 0xE6546B64) & MASK32
    h ^= _x86_mix_k(int.from_bytes(data[full:], "little"))  # mixing a zero tail is a no-op
    return to_signed(_fmix32(h ^ len(data)), 32)


# -- Pinot's MurmurHash3 "x64_32" (Infinispan x64 64-bit, upper 32 bits) -------------------------------
@dataclass
class _X64State:
    """The two hash lanes and the two multipliers, all of which evolve block by block."""

    h1: int
    h2: int
    c1: int = X64_C1
    c2: int = X64_C2

    def bmix(self, k1: int, k2: int) -> None:
        """Mix one 16-byte block (two 64-bit words) into the lanes, then advance the multipliers."""
        k1 = (_rotl64((k1 * self.c1) & MASK64, 23) * self.c2) & MASK64
        self.h1 = ((self.h1 ^ k1) + self.h2) & MASK64
        self.h2 = _rotl64(self.h2, 41)
        k2 = (_rotl64((k2 * self.c2) & MASK64, 23) * self.c1) & MASK64
        self.h2 = ((self.h2 ^ k2) + self.h1) & MASK64
        self.h1 = (self.h1 * 3 + 0x52DCE729) & MASK64
        self.h2 = (self.h2 * 3 + 0x38495AB5) & MASK64
        self.c1 = (self.c1 * 5 + 0x7B7D159C) & MASK64
        self.c2 = (self.c2 * 5 + 0x6BCE6396) & MASK64


def fmix64(k: int) -> int:
    """The standard MurmurHash3 64-bit finaliser."""
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK64
    return k ^ (k >> 33)


def _x64_tail_words(tail: bytes) -> tuple[int, int]:
    """Tail bytes XOR-ed into two words; each byte is sign-extended first, as Java's ``(long) byte``."""
    words = [0, 0]
    for j, byte in enumerate(tail):
        words[j >> 3] ^= (to_signed(byte, 8) << (8 * (j & 7))) & MASK64
    return words[0], words[1]


def murmur3_x64_32(data: bytes, seed: int = 0) -> int:
    """Pinot's ``Murmur3`` ``x64_32`` hash of ``data``: *not* the top half of MurmurHash3_x64_128.

    The multipliers change after every block and tail bytes are sign-extended, so standard
    libraries (``mmh3.hash64``) give different numbers; see the reference, section 1.5.
    """
    state = _X64State(X64_H1 ^ (seed & MASK64), X64_H2 ^ (seed & MASK64))
    full = len(data) & ~15
    for i in range(0, full, 16):
        state.bmix(int.from_bytes(data[i : i + 8], "little"), int.from_bytes(data[i + 8 : i + 16], "little"))
    if full < len(data):
        state.bmix(*_x64_tail_words(data[full:]))
    h2 = state.h2 ^ len(data)
    h1 = (state.h1 + h2) & MASK64
    h2 = (h2 + h1) & MASK64
    h1 = (fmix64(h1) + fmix64(h2)) & MASK64
    return to_signed(h1 >> 32, 32)


# -- FNV ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FnvVariant:
    """One of the four FNV variants Pinot offers: width, offset basis, prime and round order."""

    name: str
    bits: int
    offset_basis: int
    prime: int
    xor_first: bool  # FNV-1a XORs the byte in before multiplying; FNV-1 multiplies first


_FNV32 = (32, 0x811C9DC5, 0x01000193)
_FNV64 = (64, 0xCBF29CE484222325, 0x100000001B3)

#: Pinot's FNV variants by config name (``functionConfig.variant``; default ``fnv1a_32``).
FNV_VARIANTS: dict[str, FnvVariant] = {
    "fnv1_32": FnvVariant("fnv1_32", *_FNV32, xor_first=False),
    "fnv1a_32": FnvVariant("fnv1a_32", *_FNV32, xor_first=True),
    "fnv1_64": FnvVariant("fnv1_64", *_FNV64, xor_first=False),
    "fnv1a_64": FnvVariant("fnv1a_64", *_FNV64, xor_first=True),
}


def fnv(data: bytes, variant: str = "fnv1a_32") -> int:
    """FNV hash of ``data`` in the named variant, as a signed Java int (32-bit) or long (64-bit)."""
    spec = FNV_VARIANTS[variant]
    mask = (1 << spec.bits) - 1
    h = spec.offset_basis
    for byte in data:
        h = ((h ^ byte) * spec.prime) & mask if spec.xor_first else ((h * spec.prime) & mask) ^ byte
    return to_signed(h, spec.bits)


# -- Java hashCode ------------------------------------------------------------------------------------
def _polynomial31(units: bytes | list[int], start: int) -> int:
    h = start
    for unit in units:
        h = (31 * h + unit) & MASK32
    return to_signed(h, 32)


def utf16_units(text: str) -> list[int]:
    """Java's view of ``text``: UTF-16 code units, astral characters as two surrogates."""
    raw = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(raw[i : i + 2], "little") for i in range(0, len(raw), 2)]


def string_hash_code(text: str) -> int:
    """Java ``String.hashCode``: ``31*h + unit`` over UTF-16 code units, from 0."""
    return _polynomial31(utf16_units(text), 0)


def array_hash_code(data: bytes) -> int:
    """Java ``Arrays.hashCode(byte[])``: ``31*h + b`` over *signed* bytes, from 1."""
    return _polynomial31([to_signed(b, 8) for b in data], 1)
