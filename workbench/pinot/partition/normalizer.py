"""``PartitionIdNormalizer``: how a signed hash becomes a partition id in ``[0, numPartitions)``.

A hash is a signed Java ``int`` (or ``long``), and Pinot has several ways of folding negative
values into range. They disagree on negative hashes, so two systems that hash identically can still
disagree on the partition; matching a Kafka producer, for example, needs ``MASK`` for Murmur but
``PRE_MODULO_ABS`` for the old ``ByteArrayPartitioner``. ``%`` below is Java's *truncated*
remainder (its sign follows the dividend), unlike Python's ``%``.

========================  ======================================================
normalizer                rule
========================  ======================================================
``POSITIVE_MODULO``       ``r = v % N``; add ``N`` if ``r < 0``
``ABS``                   ``r = v % N``; negate if ``r < 0`` (sarama's behaviour)
``MASK``                  clear the sign bit, then ``% N`` (Kafka ``toPositive``)
``PRE_MODULO_ABS``        ``abs(v) % N`` with ``abs(MIN_VALUE)`` taken as 0
``NO_OP``                 ``v`` unchanged (the ``long`` form narrows to ``int``)
========================  ======================================================

Each has an ``int`` and a ``long`` form (``bits=32``/``64``); 64-bit hashes and Modulo use the long one.

>>> PartitionIdNormalizer.from_config_string(" abs ").to_partition(-10, 7)
3
>>> [n.to_partition(-2147483648, 7) for n in PartitionIdNormalizer]
[5, 2, 0, 0, -2147483648]
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

import numpy as np
from numpy.typing import NDArray

from workbench.errors import InputError, TableConfigError

__all__ = ["PartitionIdNormalizer"]

Int64Array = NDArray[np.int64]


def _java_rem(value: int, n: int) -> int:
    """Java's ``%``: truncated division, so the remainder has the dividend's sign."""
    r = abs(value) % n
    return -r if value < 0 else r


def _narrow_int(value: int) -> int:
    value &= 0xFFFF_FFFF
    return value - (1 << 32) if value >> 31 else value


def _min_value(bits: int) -> int:
    return -(1 << (bits - 1))


# -- scalar rules (value, N, bits) -> id ----------------------------------------------------------------
def _positive_modulo(v: int, n: int, bits: int) -> int:
    r = _java_rem(v, n)
    return r + n if r < 0 else r


def _abs(v: int, n: int, bits: int) -> int:
    return abs(_java_rem(v, n))


def _mask(v: int, n: int, bits: int) -> int:
    return (v & ((1 << (bits - 1)) - 1)) % n


def _pre_modulo_abs(v: int, n: int, bits: int) -> int:
    return 0 if v == _min_value(bits) else abs(v) % n


def _no_op(v: int, n: int, bits: int) -> int:
    return _narrow_int(v)


# -- array rules (int64 values, N, bits) -> int64 ids ---------------------------------------------------
def _positive_modulo_array(v: Int64Array, n: int, bits: int) -> Int64Array:
    r = np.fmod(v, n)  # C/Java truncated remainder
    return np.where(r < 0, r + n, r)


def _abs_array(v: Int64Array, n: int, bits: int) -> Int64Array:
    return np.abs(np.fmod(v, n))


def _mask_array(v: Int64Array, n: int, bits: int) -> Int64Array:
    return (v & np.int64((1 << (bits - 1)) - 1)) % n


def _pre_modulo_abs_array(v: Int64Array, n: int, bits: int) -> Int64Array:
    return np.where(v == _min_value(bits), 0, np.abs(v)) % n  # abs(MIN_LONG) wraps, but is replaced


def _no_op_array(v: Int64Array, n: int, bits: int) -> Int64Array:
    return v.astype(np.int32).astype(np.int64)  # narrowing keeps the low 32 bits, as Java's (int)


ScalarRule = Callable[[int, int, int], int]
ArrayRule = Callable[[Int64Array, int, int], Int64Array]


class PartitionIdNormalizer(Enum):
    """The five Pinot normalizers; config strings match the names in any case."""

    POSITIVE_MODULO = (_positive_modulo, _positive_modulo_array)
    ABS = (_abs, _abs_array)
    MASK = (_mask, _mask_array)
    PRE_MODULO_ABS = (_pre_modulo_abs, _pre_modulo_abs_array)
    NO_OP = (_no_op, _no_op_array)

    def __init__(self, scalar: ScalarRule, array: ArrayRule) -> None:
        self._scalar = scalar
        self._array = array

    @classmethod
    def from_config_string(cls, text: str | None) -> PartitionIdNormalizer:
        """Parse ``functionConfig.partitionIdNormalizer``: trimmed, any case; blank or unknown is an error.

        >>> try:
        ...     PartitionIdNormalizer.from_config_string("saramaCompat")
        ... except TableConfigError as error:
        ...     print(error.problem)
        Unsupported partitionIdNormalizer: saramaCompat
        """
        where = "functionConfig.partitionIdNormalizer"
        if text is None or not text.strip():
            raise TableConfigError(where, "'partitionIdNormalizer' must not be blank")
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise TableConfigError(where, f"Unsupported partitionIdNormalizer: {text}") from None

    def to_partition(self, value: int, num_partitions: int, bits: int = 32) -> int:
        """Partition id of one signed hash ``value`` (a Java ``int`` if ``bits`` is 32, else a ``long``)."""
        _check_partitions(num_partitions)
        return self._scalar(value, num_partitions, bits)

    def to_partitions(self, values: Int64Array, num_partitions: int, bits: int = 32) -> NDArray[np.int32]:
        """Partition id of every signed hash in ``values`` (``int64`` holding ints or longs)."""
        _check_partitions(num_partitions)
        return self._array(np.asarray(values, dtype=np.int64), num_partitions, bits).astype(np.int32)


def _check_partitions(num_partitions: int) -> None:
    if num_partitions <= 0:
        raise InputError("numPartitions", "Number of partitions must be > 0")
