"""The few JVM library behaviours Pinot's results depend on, reproduced bit for bit.

Pinot's controller and broker lean on Java library semantics that Python does not share:
``String.hashCode`` (instance rotation, fixed-replica routing), ``java.util.Random`` with
``Collections.shuffle`` (the segment order a replica-group rebalance walks) and
``UUID.fromString`` (the UUID primary-key hash). Each is small, so each is written out here from the
JDK's documented algorithms; the doctests are values printed by OpenJDK 17's ``jshell``.

>>> java_string_hash("myTable_OFFLINE")
438536198
>>> JavaRandom(42).next_int(), JavaRandom(42).next_int_bounded(10)
(-1170105035, 0)
>>> items = list(range(10)); java_shuffle(items, JavaRandom(java_string_hash("myTable_OFFLINE"))); items
[1, 7, 6, 0, 9, 8, 2, 3, 4, 5]
>>> java_uuid_from_string("1-2-3-4-5").hex()
'00000001000200030004000000000005'
"""

from __future__ import annotations

import unicodedata
from collections.abc import MutableSequence
from typing import TypeVar

__all__ = [
    "JavaRandom", "java_shuffle", "java_string_hash", "java_uuid_from_string",
]

T = TypeVar("T")
_MASK48 = (1 << 48) - 1
_MULTIPLIER = 0x5DEECE66D
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MAX = 2**63 - 1


def _to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (signed 32-bit, over UTF-16 code units).

    >>> java_string_hash(""), java_string_hash("a"), java_string_hash("ab")
    (0, 97, 3105)
    """
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return _to_int32(h)


class JavaRandom:
    """``java.util.Random``: the 48-bit linear congruential generator, seeded like the JDK.

    Only here to replay the deterministic shuffles Pinot seeds with a table-name hash; simulation
    randomness always comes from a numpy ``Generator``.

    >>> r = JavaRandom(42); [r.next_int(), r.next_int_bounded(10), r.next_int_bounded(7), r.next_int_bounded(16)]
    [-1170105035, 3, 6, 0]
    """

    def __init__(self, seed: int) -> None:
        self.seed = (seed ^ _MULTIPLIER) & _MASK48

    def next_bits(self, bits: int) -> int:
        """``Random.next(bits)``: advance the generator and return its top ``bits`` bits, signed."""
        self.seed = (self.seed * _MULTIPLIER + 0xB) & _MASK48
        return _to_int32(self.seed >> (48 - bits))

    def next_int(self) -> int:
        """``Random.nextInt()``: a signed 32-bit value."""
        return self.next_bits(32)

    def next_int_bounded(self, bound: int) -> int:
        """``Random.nextInt(bound)``: uniform in ``[0, bound)`` with the JDK's rejection rule."""
        if bound <= 0:
            raise ValueError(f"bound must be positive, got {bound}")
        if bound & (bound - 1) == 0:
            return (bound * self.next_bits(31)) >> 31
        while True:
            bits = self.next_bits(31)
            value = bits % bound
            if _to_int32(bits - value + (bound - 1)) >= 0:
                return value


def java_shuffle(items: MutableSequence[T], rng: JavaRandom) -> None:
    """``Collections.shuffle(list, rnd)`` in place: swap ``i - 1`` with ``nextInt(i)`` for i = n..2."""
    for i in range(len(items), 1, -1):
        j = rng.next_int_bounded(i)
        items[i - 1], items[j] = items[j], items[i - 1]


# -- UUID.fromString ------------------------------------------------------------------------------------
def _hex_digit(ch: str) -> int:
    """``Character.digit(ch, 16)``: ASCII and fullwidth Latin a-f, and any Unicode decimal digit."""
    code = ord(ch)
    for first, offset in ((0x41, 10), (0x61, 10), (0xFF21, 10), (0xFF41, 10)):
        if first <= code < first + 6:
            return code - first + offset
    if unicodedata.category(ch) == "Nd":
        return unicodedata.decimal(ch)
    return -1


def _parse_hex_long(text: str) -> int:
    """``Long.parseLong(text, 16)``; raises ``ValueError`` where Java throws NumberFormatException."""
    body = text[1:] if text[:1] in "+-" else text
    if not body:
        raise ValueError(f"not a hex long: {text!r}")
    value = 0
    for ch in body:
        digit = _hex_digit(ch)
        if digit < 0:
            raise ValueError(f"not a hex long: {text!r}")
        value = value * 16 + digit
    value = -value if text[0] == "-" else value
    if not -_LONG_MAX - 1 <= value <= _LONG_MAX:
        raise ValueError(f"hex long out of range: {text!r}")
    return value


def java_uuid_from_string(text: str) -> bytes:
    """The 16 bytes (most then least significant, big-endian) of ``UUID.fromString(text)``.

    Java's rule (JDK 9+): at most 36 characters, exactly four dashes, five non-empty components,
    each parsed by ``Long.parseLong(..., 16)`` (so ``+`` signs, short components and Unicode digits
    pass) and masked to 32/16/16/16/48 bits. It rejects braces, ``urn:uuid:`` and dash-free forms
    that Python's ``uuid.UUID`` accepts. Raises ``ValueError`` where Java throws.

    >>> java_uuid_from_string("123456789-123-4567-89ab-cdef01234567").hex()  # first component masked
    '234567890123456789abcdef01234567'
    >>> java_uuid_from_string("{1-2-3-4-5}")
    Traceback (most recent call last):
    ...
    ValueError: not a hex long: '{1'
    """
    if len(text) > 36:
        raise ValueError(f"UUID string too large: {text!r}")
    parts = text.split("-")
    if len(parts) != 5:
        raise ValueError(f"Invalid UUID string: {text!r}")
    a, b, c, d, e = (_parse_hex_long(p) for p in parts)
    msb = ((a & 0xFFFFFFFF) << 32) | ((b & 0xFFFF) << 16) | (c & 0xFFFF)
    lsb = ((d & 0xFFFF) << 48) | (e & 0xFFFFFFFFFFFF)
    return msb.to_bytes(8, "big") + lsb.to_bytes(8, "big")
