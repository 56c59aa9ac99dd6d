"""Pinot's segment partition functions and the registry that builds them by name.

Each class mirrors one Pinot ``PartitionFunction`` (reference section 1.5): it turns a value into
Pinot's string form, hashes it (or parses it, for Modulo) and folds the result into
``[0, numPartitions)`` with a :class:`~workbench.pinot.partition.normalizer.PartitionIdNormalizer`.
``get_partition`` does one value with plain-Python hashes; ``get_partitions`` does many at once with
the numpy kernels. The two paths are independent implementations that the tests hold equal.

Functions are looked up case-insensitively under every name Pinot registers (``Murmur`` and
``Murmur2`` are one function). Adding a function is one decorated class: no dispatch code changes.

>>> fn = get_partition_function("mUrMuR2", 4)
>>> fn.name, [fn.get_partition(v) for v in ("0", "1", "2")], fn.get_partitions(["0", "1", "2"]).tolist()
('Murmur', [0, 3, 0], [0, 3, 0])
>>> get_partition_function("Modulo", 5).get_partitions([0, 1, 2, -1]).tolist()
[0, 1, 2, 4]
"""

from __future__ import annotations

import functools
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import numpy as np
from numpy.typing import NDArray

from workbench.errors import InputError, TableConfigError
from workbench.pinot.partition import hashes, kernels
from workbench.pinot.partition.batch import UnitBatch, decode_hex, java_utf8
from workbench.pinot.partition.normalizer import PartitionIdNormalizer
from workbench.pinot.partition.values import (
    Values,
    parse_java_long,
    to_java_longs,
    to_pinot_string,
    to_pinot_strings,
    to_utf8_batch,
)

__all__ = ["PartitionFunction", "get_partition_function", "partition_function_names"]

Int32Array = NDArray[np.int32]
Int64Array = NDArray[np.int64]
INT_MIN, INT_MAX = -(2**31), 2**31 - 1


def _config_text(value: Any) -> str | None:
    """A functionConfig value as the string Pinot's ``Map<String, String>`` would hold (JSON coercion)."""
    if value is None or isinstance(value, str):
        return value
    return str(value).lower() if isinstance(value, bool) else str(value)


class PartitionFunction(ABC):
    """A Pinot partition function: ``name``, ``num_partitions``, ``function_config`` and the mapping.

    Parameters
    ----------
    num_partitions
        Number of partitions (``numPartitions``); must be positive.
    function_config
        The ``functionConfig`` map, or ``None``. Values are read as strings, as Pinot does.

    Attributes
    ----------
    normalizer
        How signed hashes become ids: ``functionConfig.partitionIdNormalizer``, else the default.
    """

    #: Canonical Pinot name first, then aliases; all are registered lower-cased.
    names: ClassVar[tuple[str, ...]]
    default_normalizer: ClassVar[PartitionIdNormalizer] = PartitionIdNormalizer.MASK
    #: Width of the value the normalizer receives: 32 (Java ``int``) or 64 (``long``).
    bits: int = 32

    def __init__(self, num_partitions: int, function_config: Mapping[str, Any] | None = None) -> None:
        if isinstance(num_partitions, bool) or not isinstance(num_partitions, int | np.integer):
            raise TableConfigError("numPartitions", f"must be an integer, got {num_partitions!r}")
        if num_partitions <= 0:
            raise TableConfigError("numPartitions", "Number of partitions must be > 0")
        self.num_partitions = int(num_partitions)
        self.function_config = None if function_config is None else dict(function_config)
        self.normalizer = self._normalizer()

    @property
    def name(self) -> str:
        """Pinot's name for the function (``getName()``), e.g. ``Murmur`` for ``murmur2``."""
        return self.names[0]

    def config(self, key: str) -> str | None:
        """``functionConfig[key]`` as a string, or ``None`` when absent."""
        return _config_text((self.function_config or {}).get(key))

    def _normalizer(self) -> PartitionIdNormalizer:
        text = self.config("partitionIdNormalizer")
        if text is None or not text.strip():
            return self.default_normalizer
        return PartitionIdNormalizer.from_config_string(text)

    @abstractmethod
    def raw_value(self, text: str) -> int:
        """The signed value (hash, or parsed long) Pinot computes from one Pinot string."""

    @abstractmethod
    def raw_values(self, values: Values, data_type: str | None) -> Int64Array:
        """:meth:`raw_value` of every value, vectorised."""

    def get_partition(self, value: Any, data_type: str | None = None) -> int:
        """Partition id of one column value (converted to Pinot's string form first).

        Parameters
        ----------
        value
            The value; ``str`` is used as-is, other types follow :mod:`~workbench.pinot.partition.values`.
        data_type
            Optional Pinot data type of the column, when the Python type is not enough.
        """
        raw = self.raw_value(to_pinot_string(value, data_type))
        return self.normalizer.to_partition(raw, self.num_partitions, self.bits)

    def get_partitions(self, values: Values, data_type: str | None = None) -> Int32Array:
        """Partition ids of many values at once, as an ``int32`` array (vectorised with numpy)."""
        raw = self.raw_values(values, data_type)
        return self.normalizer.to_partitions(raw, self.num_partitions, self.bits)

    def to_json(self) -> dict[str, Any]:
        """The four fields Pinot serialises: ``name``, ``numPartitions``, ``functionConfig``, normalizer."""
        return {
            "name": self.name,
            "numPartitions": self.num_partitions,
            "functionConfig": self.function_config,
            "partitionIdNormalizer": self.normalizer.name,
        }

    def __repr__(self) -> str:
        config = f", {self.function_config!r}" if self.function_config else ""
        return f"get_partition_function({self.name!r}, {self.num_partitions}{config})"


# -- registry ------------------------------------------------------------------------------------------
Factory = Callable[[int, Mapping[str, Any] | None], PartitionFunction]
_REGISTRY: dict[str, Factory] = {}
_F = TypeVar("_F", bound=type[PartitionFunction])


def _register(cls: _F) -> _F:
    for alias in cls.names:
        _REGISTRY[alias.lower()] = cls
    return cls


def partition_function_names() -> tuple[str, ...]:
    """Every registered name (lower-cased), e.g. ``('bytearray', 'fnv', ...)``."""
    return tuple(sorted(_REGISTRY))


def get_partition_function(
    name: str, num_partitions: int, function_config: Mapping[str, Any] | None = None
) -> PartitionFunction:
    """Build the partition function Pinot registers as ``name`` (case-insensitive).

    Parameters
    ----------
    name
        ``functionName`` from ``columnPartitionMap`` or segment metadata, e.g. ``"Murmur"``.
    num_partitions
        ``numPartitions``.
    function_config
        ``functionConfig`` (``seed``, ``variant``, ``useRawBytes``, ``partitionIdNormalizer``, ...).

    Raises
    ------
    TableConfigError
        Unknown name, or a config Pinot rejects (bad variant, bad normalizer, size mismatch).

    Examples
    --------
    >>> get_partition_function("Murmur3", 8, {"variant": "x64_32", "seed": "9001"}).get_partition("hello")
    0
    >>> get_partition_function("Crc32", 8)
    Traceback (most recent call last):
    ...
    workbench.errors.TableConfigError: functionName: No partition function registered for name: Crc32
    """
    factory = _REGISTRY.get(name.lower())
    if factory is None:
        raise TableConfigError("functionName", f"No partition function registered for name: {name}")
    return factory(num_partitions, function_config)


# -- Modulo ----------------------------------------------------------------------------------------------
@_register
class ModuloPartitionFunction(PartitionFunction):
    """``Long.parseLong(value) % N`` (default POSITIVE_MODULO): integral columns only."""

    names = ("Modulo",)
    default_normalizer = PartitionIdNormalizer.POSITIVE_MODULO
    bits = 64

    def raw_value(self, text: str) -> int:
        return parse_java_long(text)

    def raw_values(self, values: Values, data_type: str | None) -> Int64Array:
        return to_java_longs(values, data_type)


# -- hashes over bytes -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ByteHash:
    """One hash in both forms: ``scalar`` on ``bytes`` and ``kernel`` on a :class:`UnitBatch`."""

    scalar: Callable[[bytes], int]
    kernel: Callable[[UnitBatch], Int64Array]
    bits: int = 32


class _BytesPartitionFunction(PartitionFunction):
    """A hash of the value's UTF-8 bytes, or of hex-decoded bytes when ``useRawBytes`` is true."""

    supports_raw_bytes: ClassVar[bool] = True

    def __init__(self, num_partitions: int, function_config: Mapping[str, Any] | None = None) -> None:
        super().__init__(num_partitions, function_config)
        flag = self.config("useRawBytes") if self.supports_raw_bytes else None
        self.use_raw_bytes = (flag or "").lower() == "true"  # Java Boolean.parseBoolean
        self.hash = self._hash()
        self.bits = self.hash.bits

    @abstractmethod
    def _hash(self) -> ByteHash:
        """The hash this function applies, chosen from its config."""

    def raw_value(self, text: str) -> int:
        return self.hash.scalar(decode_hex(text) if self.use_raw_bytes else java_utf8(text))

    def raw_values(self, values: Values, data_type: str | None) -> Int64Array:
        if self.use_raw_bytes:
            return self.hash.kernel(UnitBatch.from_hex(to_pinot_strings(values, data_type)))
        return self.hash.kernel(to_utf8_batch(values, data_type))


@_register
class MurmurPartitionFunction(_BytesPartitionFunction):
    """Kafka's MurmurHash2 of the UTF-8 bytes, masked: the same ids as Kafka's default partitioner."""

    names = ("Murmur", "Murmur2")

    def _hash(self) -> ByteHash:
        return ByteHash(hashes.murmur2, kernels.murmur2)


def _java_int(text: str, where: str) -> int:
    """``Integer.parseInt``: like ``Long.parseLong`` but the value must fit 32 bits."""
    try:
        value = parse_java_long(text, where)
    except InputError:
        value = None
    if value is None or not INT_MIN <= value <= INT_MAX:
        raise TableConfigError(where, f'NumberFormatException: For input string: "{text}"')
    return value


_MURMUR3_VARIANTS: dict[str, tuple[Callable[..., int], Callable[..., Int64Array]]] = {
    "x86_32": (hashes.murmur3_x86_32, kernels.murmur3_x86_32),
    "x64_32": (hashes.murmur3_x64_32, kernels.murmur3_x64_32),
}


@_register
class Murmur3PartitionFunction(_BytesPartitionFunction):
    """MurmurHash3, ``variant`` ``x86_32`` (standard, default) or ``x64_32`` (Pinot's own), ``seed``."""

    names = ("Murmur3",)

    def _hash(self) -> ByteHash:
        variant = self.config("variant") or "x86_32"
        if variant not in _MURMUR3_VARIANTS:  # exact match: Pinot compares case-sensitively
            raise TableConfigError("functionConfig.variant", "Murmur3 variant must be either x86_32 or x64_32")
        seed_text = self.config("seed")
        seed = _java_int(seed_text, "functionConfig.seed") if seed_text else 0
        scalar, kernel = _MURMUR3_VARIANTS[variant]
        return ByteHash(functools.partial(scalar, seed=seed), functools.partial(kernel, seed=seed))


@_register
class FnvPartitionFunction(_BytesPartitionFunction):
    """FNV-1/FNV-1a in 32 or 64 bits (``variant``, default ``fnv1a_32``); HEAD-only in Pinot."""

    names = ("FNV",)

    def _hash(self) -> ByteHash:
        text = self.config("variant")
        variant = (text or "").strip().lower() or "fnv1a_32"
        if variant not in hashes.FNV_VARIANTS:
            raise TableConfigError(
                "functionConfig.variant",
                f"FNV variant must be one of fnv1_32, fnv1a_32, fnv1_64 or fnv1a_64, but was: '{text}'",
            )
        bits = hashes.FNV_VARIANTS[variant].bits
        return ByteHash(
            functools.partial(hashes.fnv, variant=variant), functools.partial(kernels.fnv, variant=variant), bits
        )


@_register
class ByteArrayPartitionFunction(_BytesPartitionFunction):
    """Java ``Arrays.hashCode`` of the UTF-8 bytes, Kafka ``abs`` style: the old ByteArrayPartitioner."""

    names = ("ByteArray",)
    default_normalizer = PartitionIdNormalizer.PRE_MODULO_ABS
    supports_raw_bytes = False

    def _hash(self) -> ByteHash:
        return ByteHash(hashes.array_hash_code, kernels.array_hash_code)


# -- hashCode over UTF-16 ---------------------------------------------------------------------------------
@_register
class HashCodePartitionFunction(PartitionFunction):
    """Java ``String.hashCode`` (UTF-16 code units), Kafka ``abs`` style."""

    names = ("HashCode",)
    default_normalizer = PartitionIdNormalizer.PRE_MODULO_ABS

    def raw_value(self, text: str) -> int:
        return hashes.string_hash_code(text)

    def raw_values(self, values: Values, data_type: str | None) -> Int64Array:
        return kernels.string_hash_code(UnitBatch.utf16_from_strings(to_pinot_strings(values, data_type)))


# -- BoundedColumnValue ----------------------------------------------------------------------------------
def _split_every_char(text: str, separators: str) -> list[str]:
    """commons-lang ``StringUtils.split``: every separator char splits, empty tokens are dropped."""
    if not separators:
        return [text] if text else []
    return [token for token in re.split(f"[{re.escape(separators)}]", text) if token]


def _simple_fold(char: str) -> str:
    """Java's per-character case folding for ``equalsIgnoreCase`` (no multi-character expansions)."""
    upper = char.upper()
    upper = upper if len(upper) == 1 else char
    lower = upper.lower()
    return lower if len(lower) == 1 else upper


def _fold(text: str) -> str:
    return "".join(map(_simple_fold, text))


@_register
class BoundedColumnValuePartitionFunction(PartitionFunction):
    """One partition per configured value (1-based, case-insensitive); everything else is partition 0.

    ``columnValues`` is split on *every* character of ``columnValuesDelimiter``; ``numPartitions``
    must be the number of values plus one. The normalizer is always NO_OP.
    """

    names = ("BoundedColumnValue",)
    default_normalizer = PartitionIdNormalizer.NO_OP

    def __init__(self, num_partitions: int, function_config: Mapping[str, Any] | None = None) -> None:
        super().__init__(num_partitions, function_config)
        if not self.function_config:
            raise TableConfigError("functionConfig", "'functionConfig' should be present, specified")
        values, delimiter = self.config("columnValues"), self.config("columnValuesDelimiter")
        if values is None:
            raise TableConfigError("functionConfig.columnValues", "columnValues must be configured")
        if delimiter is None:
            raise TableConfigError("functionConfig", "'columnValuesDelimiter' must be configured")
        self.values = tuple(_split_every_char(values, delimiter))
        if self.num_partitions != len(self.values) + 1:
            raise TableConfigError(
                "numPartitions", "'numPartitions' must just be one greater than number of column values configured"
            )
        self._ids: dict[str, int] = {}
        for index, value in enumerate(self.values):  # the first match wins, as in Pinot's loop
            self._ids.setdefault(_fold(value), index + 1)

    def _normalizer(self) -> PartitionIdNormalizer:
        return PartitionIdNormalizer.NO_OP  # fixed: the config key is ignored

    def raw_value(self, text: str) -> int:
        return self._ids.get(_fold(text), 0)

    def raw_values(self, values: Values, data_type: str | None) -> Int64Array:
        texts = to_pinot_strings(values, data_type)
        ids = {text: self.raw_value(text) for text in dict.fromkeys(texts)}  # each distinct text once
        return np.fromiter(map(ids.__getitem__, texts), dtype=np.int64, count=len(texts))
