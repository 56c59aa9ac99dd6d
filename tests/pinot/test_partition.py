# ruff: noqa: E501  (the reference tables are pasted verbatim)
"""Pinot partition functions against the reference vectors (``shared/reference/pinot-behaviour.md`` §1).

Every expected value below is copied from the reference document, never from this code's output:
the §1.7.2 tables are pasted verbatim as Markdown and parsed here, and the §1.7.1 lists are typed in
with their Pinot test names. Each test checks the scalar path (``get_partition``) *and* the
vectorised one (``get_partitions``), which are separate implementations.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import InputError, TableConfigError
from workbench.pinot.partition import (
    PartitionIdNormalizer,
    get_partition_function,
    hashes,
    java_double_to_string,
    java_float_to_string,
    kernels,
    partition_function_names,
    to_pinot_string,
)
from workbench.pinot.partition.batch import UnitBatch, java_utf8

Config = dict[str, str] | None

# --------------------------------------------------------------------------------------------------------
# §1.7.2 [COMPUTED] tables, verbatim from the reference.
# --------------------------------------------------------------------------------------------------------
PARTITIONS_N3 = """
| `""` | 0 | 0 | 0 | 0 | 0 | 0 | 1 | 2 | 2 | 0 | 0 |
| `"a"` | 1 | 2 | 1 | 0 | 2 | 1 | 2 | 2 | 2 | 1 | 2 |
| `"abc"` | 0 | 0 | 0 | 1 | 0 | 0 | 1 | 2 | 0 | 1 | 1 |
| `"pinot"` | 2 | 2 | 0 | 0 | 2 | 2 | 0 | 0 | 1 | 2 | 1 |
| `"hello"` | 0 | 1 | 0 | 1 | 2 | 1 | 2 | 0 | 1 | 2 | 1 |
| `"Hello World"` | 2 | 0 | 0 | 0 | 2 | 0 | 0 | 1 | 2 | 2 | 2 |
| `"user_123"` | 2 | 1 | 1 | 1 | 2 | 1 | 1 | 1 | 0 | 0 | 2 |
| `"42"` | 1 | 0 | 1 | 0 | 1 | 0 | 1 | 0 | 1 | 1 | 1 |
| `"-1"` | 0 | 2 | 0 | 2 | 2 | 1 | 2 | 2 | 2 | 0 | 0 |
| `"0"` | 2 | 1 | 1 | 0 | 2 | 0 | 1 | 0 | 1 | 2 | 0 |
| `"foo"` | 2 | 1 | 1 | 2 | 1 | 0 | 1 | 1 | 2 | 1 | 2 |
| `"bar"` | 0 | 2 | 1 | 1 | 0 | 0 | 1 | 2 | 1 | 1 | 0 |
| `"日本"` | 0 | 0 | 0 | 2 | 2 | 0 | 1 | 1 | 2 | 1 | 0 |
| `"polygenelubricants"` | 2 | 0 | 0 | 1 | 1 | 0 | 0 | 2 | 2 | 1 | 2 |
| `"abcdefghijklmnopq"` | 1 | 2 | 0 | 1 | 1 | 2 | 2 | 1 | 2 | 1 | 0 |
| `"The quick brown fox jumps over the lazy dog"` | 0 | 2 | 0 | 1 | 0 | 2 | 0 | 0 | 1 | 0 | 0 |
"""

PARTITIONS_N8 = """
| `""` | 1 | 0 | 7 | 1 | 2 | 0 | 1 | 5 | 5 | 5 | 5 |
| `"a"` | 4 | 2 | 1 | 1 | 4 | 1 | 0 | 4 | 6 | 6 | 4 |
| `"abc"` | 3 | 2 | 6 | 7 | 4 | 2 | 1 | 3 | 3 | 3 | 3 |
| `"pinot"` | 1 | 6 | 7 | 2 | 0 | 2 | 1 | 7 | 7 | 7 | 7 |
| `"hello"` | 5 | 7 | 6 | 3 | 0 | 2 | 1 | 3 | 7 | 7 | 3 |
| `"Hello World"` | 1 | 6 | 6 | 2 | 0 | 4 | 5 | 7 | 7 | 7 | 7 |
| `"user_123"` | 7 | 5 | 0 | 7 | 2 | 2 | 1 | 1 | 5 | 5 | 1 |
| `"42"` | 4 | 6 | 7 | 5 | 2 | 6 | 7 | 3 | 3 | 3 | 3 |
| `"-1"` | 3 | 2 | 3 | 5 | 6 | 4 | 5 | 3 | 7 | 7 | 3 |
| `"0"` | 4 | 7 | 3 | 7 | 4 | 0 | 7 | 7 | 7 | 7 | 7 |
| `"foo"` | 0 | 0 | 1 | 5 | 1 | 6 | 5 | 7 | 3 | 3 | 7 |
| `"bar"` | 1 | 5 | 3 | 3 | 7 | 3 | 2 | 2 | 0 | 0 | 2 |
| `"日本"` | 3 | 2 | 3 | 3 | 6 | 7 | 3 | 1 | 5 | 5 | 1 |
| `"polygenelubricants"` | 2 | 0 | 7 | 4 | 2 | 0 | 1 | 7 | 3 | 3 | 7 |
| `"abcdefghijklmnopq"` | 3 | 2 | 3 | 0 | 7 | 7 | 0 | 4 | 6 | 6 | 4 |
| `"The quick brown fox jumps over the lazy dog"` | 6 | 3 | 3 | 0 | 3 | 5 | 6 | 0 | 6 | 6 | 0 |
"""

RAW_HASHES = """
| `""` | 275646681 | 0 | -537374393 | -1811735039 | 89125410 | -1786836428 | 0 | 1 | -2128831035 | -2128831035 | -3750763034362895579 | -3750763034362895579 |
| `"a"` | -1563381124 | 1009084850 | 179038849 | -1127638319 | -1119243492 | -2102743374 | 97 | 128 | 84696446 | -468965076 | -5808590958014384194 | -5808556873153909620 |
| `"abc"` | 479470107 | -1277324294 | 116462166 | 531560167 | 1809745788 | 1301352440 | 96354 | 126145 | 1134309195 | 440920331 | -2820157060406071861 | -1792535898324117685 |
| `"pinot"` | 956097713 | -296665842 | -1400231537 | 107472618 | -1705441776 | 1215256746 | 106671674 | 135300825 | 1842725263 | 586534095 | -9076932171130281585 | 1382469184613320975 |
| `"hello"` | 2132663229 | 613153351 | 1461802374 | -438922741 | 1671093224 | 48936750 | 99162322 | 127791473 | -1225100953 | 1335831723 | 8883723591023973575 | -6615550055289275125 |
| `"Hello World"` | -554020671 | 427197390 | -1320097058 | -1759627742 | 189967136 | -1719546955 | -862545276 | -733462557 | 310551791 | -1282398937 | -7929459276579654225 | 4420528118743043111 |
| `"user_123"` | -1159050033 | -1141410979 | 287938048 | 51882943 | 2005848794 | -2143765344 | -266208322 | -2073662785 | -293653571 | 330169129 | 7302035482641868797 | 4869204014610018281 |
| `"42"` | 417700972 | -1135041482 | 1257848383 | -700208339 | 959365786 | 1539893959 | 1662 | 2623 | 494316163 | -2015132285 | 590697261959971939 | 571532774284038691 |
| `"-1"` | 1531782027 | 1908024458 | 1243450971 | 788928365 | 1907627942 | -898275924 | 1444 | 2405 | 611759495 | 348981803 | 590704958541369351 | 562962081143836971 |
| `"0"` | 971027396 | -764297089 | -1112785285 | -473194025 | -1171037916 | 1563231765 | 48 | 79 | 84696367 | 890022063 | -5808590958014384145 | -5808608550200435537 |
| `"foo"` | 597841616 | -156908512 | 133927777 | 60808829 | 671280337 | -1536164864 | 101574 | 131365 | 1083137555 | -1443660073 | -2824945433545984717 | -2543842089295555209 |
| `"bar"` | 988958145 | 1158584717 | 193697875 | -1502418109 | -393671897 | 967665663 | 97299 | 127090 | 513390112 | 1991736602 | -2821042167266592640 | 16101355973854746 |
| `"日本"` | -700811021 | -992347838 | -742148549 | 1434523499 | -1871861850 | 187118707 | 835047 | 43436899 | 84073541 | -1624838575 | 7579371009098420677 | 1305338235904577169 |
| `"polygenelubricants"` | 342343466 | -1045881248 | -853840073 | -1780194244 | 500921674 | -1712939910 | -2147483648 | 1303011777 | -1813115421 | -725893209 | -2526371182808966173 | -5565582648625668825 |
| `"abcdefghijklmnopq"` | 1490128915 | -1234870710 | -2014161797 | 2047860352 | -1899392497 | -1793619148 | -485740439 | -1482812792 | 573385262 | -773295412 | -8466265109018888338 | -4485171208823179988 |
| `"The quick brown fox jumps over the lazy dog"` | 495243318 | 776992547 | 2143220259 | 211062880 | 1049944299 | 516005028 | -609428141 | -1634122062 | -372741010 | 76545936 | -6290698473031107890 | -866459186506731248 |
"""

MODULO = """
| `0` | 0 | 0 | 0 | 0 |
| `1` | 1 | 1 | 1 | 1 |
| `-1` | 3 | 6 | 9 | 15 |
| `7` | 3 | 0 | 7 | 7 |
| `42` | 2 | 0 | 2 | 10 |
| `-42` | 2 | 0 | 8 | 6 |
| `123456789` | 1 | 1 | 9 | 5 |
| `2147483647` | 3 | 1 | 7 | 15 |
| `-2147483648` | 0 | 5 | 2 | 0 |
| `9223372036854775807` | 3 | 0 | 7 | 15 |
| `-9223372036854775808` | 0 | 6 | 2 | 0 |
"""

RAW_BYTES_N5 = """
| `0102030405` | 0 | 4 | 4 | 1 | 0 |
| `deadbeef` | 4 | 2 | 2 | 1 | 1 |
| `00` | 3 | 2 | 0 | 1 | 2 |
"""

NORMALIZED_RAW_HASHES_N7 = """
| -1 | 6 | 1 | 1 | 1 |
| -7 | 0 | 0 | 2 | 0 |
| -10 | 4 | 3 | 6 | 3 |
| 10 | 3 | 3 | 3 | 3 |
| -2147483648 | 5 | 2 | 0 | 0 |
| 2147483647 | 1 | 1 | 1 | 1 |
"""

NORMALIZER_OVERRIDES = """
| Murmur, `"Hello World"`, 10 (murmur2=-554020671) | 7 | 9 | 1 |
| Murmur, `"user_123"`, 10 (murmur2=-1159050033) | 5 | 7 | 3 |
| Murmur, `"hello"`, 10 (murmur2=2132663229) | 9 | 9 | 9 |
| FNV fnv1a_32, `""`, 16 (hash=-2128831035) | 5 | 5 | 11 |
| FNV fnv1a_64, `""`, 16 (hash=-3750763034362895579) | 5 | 5 | 11 |
"""

PARTITION_COLUMNS: list[tuple[str, Config]] = [
    ("Murmur", None),
    ("Murmur3", None),
    ("Murmur3", {"seed": "9001"}),
    ("Murmur3", {"variant": "x64_32"}),
    ("Murmur3", {"variant": "x64_32", "seed": "9001"}),
    ("HashCode", None),
    ("ByteArray", None),
    ("FNV", None),
    ("FNV", {"variant": "fnv1_32"}),
    ("FNV", {"variant": "fnv1_64"}),
    ("FNV", {"variant": "fnv1a_64"}),
]


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


def _vector(kernel: Callable[[UnitBatch], Any]) -> Callable[[list[str]], list[int]]:
    return lambda texts: kernel(UnitBatch.from_strings(texts)).tolist()


RAW_HASH_COLUMNS: list[tuple[str, Callable[[str], int], Callable[[list[str]], list[int]]]] = [
    ("murmur2", lambda t: hashes.murmur2(_utf8(t)), _vector(kernels.murmur2)),
    ("x86_32 s=0", lambda t: hashes.murmur3_x86_32(_utf8(t)), _vector(kernels.murmur3_x86_32)),
    (
        "x86_32 s=9001",
        lambda t: hashes.murmur3_x86_32(_utf8(t), 9001),
        _vector(lambda b: kernels.murmur3_x86_32(b, 9001)),
    ),
    ("x64_32 s=0", lambda t: hashes.murmur3_x64_32(_utf8(t)), _vector(kernels.murmur3_x64_32)),
    (
        "x64_32 s=9001",
        lambda t: hashes.murmur3_x64_32(_utf8(t), 9001),
        _vector(lambda b: kernels.murmur3_x64_32(b, 9001)),
    ),
    ("x64_32 s=-1", lambda t: hashes.murmur3_x64_32(_utf8(t), -1), _vector(lambda b: kernels.murmur3_x64_32(b, -1))),
    (
        "String.hashCode",
        hashes.string_hash_code,
        lambda texts: kernels.string_hash_code(UnitBatch.utf16_from_strings(texts)).tolist(),
    ),
    ("Arrays.hashCode", lambda t: hashes.array_hash_code(_utf8(t)), _vector(kernels.array_hash_code)),
    *[
        (
            variant,
            (lambda v: lambda t: hashes.fnv(_utf8(t), v))(variant),
            _vector((lambda v: lambda b: kernels.fnv(b, v))(variant)),
        )
        for variant in ("fnv1_32", "fnv1a_32", "fnv1_64", "fnv1a_64")
    ],
]


def _cells(table: str) -> Iterator[list[str]]:
    for line in table.strip().splitlines():
        yield [cell.strip() for cell in line.strip().strip("|").split("|")]


def _literal(cell: str) -> Any:
    """A table cell such as ``"日本"`` (a JSON literal in backticks) or ``-1``."""
    return json.loads(cell.strip("`"))


def _column_label(name: str, config: Config) -> str:
    return name + ("" if not config else "{" + ",".join(f"{k}={v}" for k, v in config.items()) + "}")


def _partition_cases() -> Iterator[Any]:
    for n, table in ((3, PARTITIONS_N3), (8, PARTITIONS_N8)):
        for value_cell, *expected in _cells(table):
            for (name, config), cell in zip(PARTITION_COLUMNS, expected, strict=True):
                value = _literal(value_cell)
                yield pytest.param(
                    n, value, name, config, int(cell), id=f"N{n}-{_column_label(name, config)}-{value!r}"
                )


def _column_cases() -> Iterator[Any]:
    for n, table in ((3, PARTITIONS_N3), (8, PARTITIONS_N8)):
        rows = list(_cells(table))
        values = [_literal(row[0]) for row in rows]
        for i, (name, config) in enumerate(PARTITION_COLUMNS):
            expected = [int(row[i + 1]) for row in rows]
            yield pytest.param(n, values, name, config, expected, id=f"N{n}-{_column_label(name, config)}")


# -- §1.7.2 tables -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "value", "name", "config", "expected"), list(_partition_cases()))
def test_default_normalizer_tables(n: int, value: str, name: str, config: Config, expected: int) -> None:
    """[COMPUTED] numPartitions = 3 and 8 tables: one value, scalar and vectorised paths."""
    function = get_partition_function(name, n, config)
    assert function.get_partition(value) == expected
    assert function.get_partitions([value]).tolist() == [expected]


@pytest.mark.parametrize(("n", "values", "name", "config", "expected"), list(_column_cases()))
def test_default_normalizer_table_columns_in_one_batch(
    n: int, values: list[str], name: str, config: Config, expected: list[int]
) -> None:
    """A whole table column at once: rows of mixed lengths share one batch (0 to 43 bytes)."""
    result = get_partition_function(name, n, config).get_partitions(values)
    assert result.dtype == np.int32
    assert result.tolist() == expected


def _raw_hash_cases() -> Iterator[Any]:
    for value_cell, *expected in _cells(RAW_HASHES):
        for (label, scalar, vector), cell in zip(RAW_HASH_COLUMNS, expected, strict=True):
            value = _literal(value_cell)
            yield pytest.param(value, scalar, vector, int(cell), id=f"{label}-{value!r}")


@pytest.mark.parametrize(("value", "scalar", "vector", "expected"), list(_raw_hash_cases()))
def test_raw_hash_table(
    value: str, scalar: Callable[[str], int], vector: Callable[[list[str]], list[int]], expected: int
) -> None:
    """[COMPUTED] raw signed 32/64-bit hashes of the UTF-8 bytes (UTF-16 units for hashCode)."""
    assert scalar(value) == expected
    assert vector([value, "padding row of another length"])[0] == expected


def _modulo_cases() -> Iterator[Any]:
    for value_cell, *expected in _cells(MODULO):
        for n, cell in zip((4, 7, 10, 16), expected, strict=True):
            yield pytest.param(_literal(value_cell), n, int(cell), id=f"N{n}-{value_cell.strip('`')}")


@pytest.mark.parametrize(("value", "n", "expected"), list(_modulo_cases()))
def test_modulo_table(value: int, n: int, expected: int) -> None:
    """[COMPUTED] Modulo: the value as a signed 64-bit integer, POSITIVE_MODULO; text, int and int64 inputs."""
    function = get_partition_function("Modulo", n)
    assert function.get_partition(str(value)) == expected
    assert function.get_partition(value) == expected
    assert function.get_partitions(np.array([value], dtype=np.int64)).tolist() == [expected]
    assert function.get_partitions([str(value)]).tolist() == [expected]


RAW_BYTES_COLUMNS: list[tuple[str, Config]] = [
    ("Murmur", {"useRawBytes": "true"}),
    ("Murmur3", {"useRawBytes": "true"}),
    ("Murmur3", {"useRawBytes": "true", "variant": "x64_32"}),
    ("FNV", {"useRawBytes": "true"}),
    ("Murmur", None),
]


def _raw_bytes_cases() -> Iterator[Any]:
    for value_cell, *expected in _cells(RAW_BYTES_N5):
        for (name, config), cell in zip(RAW_BYTES_COLUMNS, expected, strict=True):
            value = value_cell.strip("`")
            yield pytest.param(value, name, config, int(cell), id=f"{_column_label(name, config)}-{value}")


@pytest.mark.parametrize(("value", "name", "config", "expected"), list(_raw_bytes_cases()))
def test_use_raw_bytes_table(value: str, name: str, config: Config, expected: int) -> None:
    """[COMPUTED] + [PINOT-TEST] (f): ``useRawBytes=true`` hashes the hex-decoded bytes, N=5."""
    function = get_partition_function(name, 5, config)
    assert function.get_partition(value) == expected
    assert function.get_partitions([value, value.upper()]).tolist() == [expected, expected]


def _normalizer_cases() -> Iterator[Any]:
    names = ("POSITIVE_MODULO", "ABS", "MASK", "PRE_MODULO_ABS")
    for raw_cell, *expected in _cells(NORMALIZED_RAW_HASHES_N7):
        for name, cell in zip(names, expected, strict=True):
            yield pytest.param(PartitionIdNormalizer[name], int(raw_cell), int(cell), id=f"{name}({raw_cell})")


@pytest.mark.parametrize(("normalizer", "raw", "expected"), list(_normalizer_cases()))
def test_normalizer_table(normalizer: PartitionIdNormalizer, raw: int, expected: int) -> None:
    """[COMPUTED] each normalizer on raw int hashes, N=7 (Java's truncated remainder, not Python's)."""
    assert normalizer.to_partition(raw, 7) == expected
    assert normalizer.to_partitions(np.array([raw]), 7).tolist() == [expected]


def _override_cases() -> Iterator[Any]:
    for label, *expected in _cells(NORMALIZER_OVERRIDES):
        function_text, value_cell, rest = (part.strip() for part in label.split(",", 2))
        name, *variant = function_text.split()
        n = int(rest.split()[0])
        for normalizer, cell in zip((None, "POSITIVE_MODULO", "ABS"), expected, strict=True):
            config = {"variant": variant[0]} if variant else {}
            if normalizer:
                config["partitionIdNormalizer"] = normalizer
            yield pytest.param(
                name, n, config, _literal(value_cell), int(cell), id=f"{function_text}-{value_cell}-{normalizer}"
            )


@pytest.mark.parametrize(("name", "n", "config", "value", "expected"), list(_override_cases()))
def test_partition_id_normalizer_config(name: str, n: int, config: Config, value: str, expected: int) -> None:
    """[COMPUTED] ``functionConfig.partitionIdNormalizer`` overrides the default (MASK) normalizer."""
    function = get_partition_function(name, n, config)
    assert function.get_partition(value) == expected
    assert function.get_partitions([value]).tolist() == [expected]


# -- §1.7.1 [PINOT-TEST] vectors ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"), [("maths", 1), ("English", 2), ("Chemistry", 3), ("Physics", 0), ("MATHS", 1), ("", 0)]
)
def test_bounded_column_value(value: str, expected: int) -> None:
    """(a) [PINOT-TEST] testBoundedColumnValuePartitioner, plus the [COMPUTED] "MATHS" and "" cases."""
    config = {"columnValues": "Maths|english|Chemistry", "columnValuesDelimiter": "|"}
    function = get_partition_function("BoundedColumnValue", 4, config)
    assert function.get_partition(value) == expected
    assert function.get_partitions([value, "Physics"]).tolist() == [expected, 0]
    assert function.normalizer is PartitionIdNormalizer.NO_OP


def test_bounded_column_value_splits_on_every_delimiter_character() -> None:
    """[COMPUTED] StringUtils.split: delimiter "|," splits "a|b,c" into [a, b, c]; empty tokens drop."""
    config = {"columnValues": "a|b,c||", "columnValuesDelimiter": "|,"}
    function = get_partition_function("BoundedColumnValue", 4, config)
    assert [function.get_partition(v) for v in ("a", "b", "c", "a|b")] == [1, 2, 3, 0]


NORMALIZER_UNIT_VECTORS = [  # (b) [PINOT-TEST] PartitionIdNormalizerTest: (normalizer, value, N, bits, expected)
    ("POSITIVE_MODULO", 0, 7, 32, 0),
    ("POSITIVE_MODULO", 10, 7, 32, 3),
    ("POSITIVE_MODULO", -1, 7, 32, 6),
    ("POSITIVE_MODULO", 7, 7, 64, 0),
    ("POSITIVE_MODULO", 2**31 - 1, 1024, 32, 1023),
    ("ABS", 10, 7, 32, 3),
    ("ABS", -10, 7, 32, 3),
    ("ABS", -10, 7, 64, 3),
    ("MASK", 0, 7, 32, 0),
    ("MASK", -1, 7, 32, (2**31 - 1) % 7),
    ("MASK", -1, 7, 32, 1),
    ("MASK", -(2**31), 7, 32, 0),
    ("MASK", -(2**63), 7, 64, 0),
    ("PRE_MODULO_ABS", 10, 7, 32, 3),
    ("PRE_MODULO_ABS", -10, 7, 32, 3),
    ("PRE_MODULO_ABS", -(2**31), 7, 32, 0),
    ("PRE_MODULO_ABS", -(2**63), 7, 64, 0),
    ("PRE_MODULO_ABS", 2**31 - 1, 1024, 32, 1023),
    ("PRE_MODULO_ABS", -1234, 17, 64, 1234 % 17),
    ("PRE_MODULO_ABS", -1234, 17, 64, 10),
    ("NO_OP", -5, 7, 32, -5),
    ("NO_OP", 99, 7, 32, 99),
    ("NO_OP", 42, 7, 64, 42),
]


@pytest.mark.parametrize(("name", "value", "n", "bits", "expected"), NORMALIZER_UNIT_VECTORS)
def test_normalizer_unit_vectors(name: str, value: int, n: int, bits: int, expected: int) -> None:
    """(b) [PINOT-TEST] int and long overloads of every normalizer."""
    normalizer = PartitionIdNormalizer[name]
    assert normalizer.to_partition(value, n, bits) == expected
    assert normalizer.to_partitions(np.array([value], dtype=np.int64), n, bits).tolist() == [expected]


@pytest.mark.parametrize("text", ["abs", "ABS", " Mask ", "pre_modulo_abs", "\tno_op\n", "Positive_Modulo"])
def test_normalizer_from_config_string_accepts_any_case_and_spaces(text: str) -> None:
    """(b) [PINOT-TEST] fromConfigString trims and ignores case."""
    assert PartitionIdNormalizer.from_config_string(text).name == text.strip().upper()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "'partitionIdNormalizer' must not be blank"),
        ("", "'partitionIdNormalizer' must not be blank"),
        ("   ", "'partitionIdNormalizer' must not be blank"),
        ("not-a-real-normalizer", "Unsupported partitionIdNormalizer: not-a-real-normalizer"),
        ("saramaCompat", "Unsupported partitionIdNormalizer: saramaCompat"),
    ],
)
def test_normalizer_from_config_string_rejects(text: str | None, message: str) -> None:
    """(b) [PINOT-TEST] null, blank and unknown normalizer names are rejected."""
    with pytest.raises(TableConfigError, match=message):
        PartitionIdNormalizer.from_config_string(text)


FNV_GOLDEN = {  # (c) [PINOT-TEST] FnvHashFunctionsTest, on UTF-8 of "", "a", "ab", "abc"
    "fnv1_32": [0x811C9DC5, 0x050C5D7E, 0x70772D38, 0x439C2F4B],
    "fnv1a_32": [0x811C9DC5, 0xE40C292C, 0x4D2505CA, 0x1A47E90B],
    "fnv1_64": [0xCBF29CE484222325, 0xAF63BD4C8601B7BE, 0x08326707B4EB37B8, 0xD8DCCA186BAFADCB],
    "fnv1a_64": [0xCBF29CE484222325, 0xAF63DC4C8601EC8C, 0x089C4407B545986A, 0xE71FA2190541574B],
}


@pytest.mark.parametrize("variant", list(FNV_GOLDEN))
def test_fnv_golden_hashes(variant: str) -> None:
    """(c) [PINOT-TEST] golden FNV hashes (the unsigned hex of the signed Java value)."""
    bits = 32 if variant.endswith("32") else 64
    expected = [hashes.to_signed(v, bits) for v in FNV_GOLDEN[variant]]
    texts = ["", "a", "ab", "abc"]
    assert [hashes.fnv(t.encode(), variant) for t in texts] == expected
    assert kernels.fnv(UnitBatch.from_strings(texts), variant).tolist() == expected


@pytest.mark.parametrize("variant", ["fnv1a_32", "fnv1a_64"])
def test_fnv_negative_hash_handling(variant: str) -> None:
    """(c) [PINOT-TEST asserts they differ; values COMPUTED]: "" with N=16 is 5 (MASK) and 11 (abs)."""
    assert hashes.fnv(b"", "fnv1a_32") == -2128831035
    default = get_partition_function("FNV", 16, {"variant": variant})
    with_abs = get_partition_function("FNV", 16, {"variant": variant, "partitionIdNormalizer": "abs"})
    assert (default.get_partition(""), with_abs.get_partition("")) == (5, 11)
    assert (default.get_partitions([""]).tolist(), with_abs.get_partitions([""]).tolist()) == ([5], [11])


@pytest.mark.parametrize(
    ("name", "n", "expected"), [("Murmur", 4, [0, 3, 0]), ("Modulo", 5, [0, 1, 2])], ids=["Murmur", "Modulo"]
)
def test_broker_pruner_comment(name: str, n: int, expected: list[int]) -> None:
    """(d) [PINOT-TEST] SegmentPrunerTest: "0", "1", "2" under Murmur N=4 and Modulo N=5."""
    function = get_partition_function(name, n)
    assert [function.get_partition(v) for v in ("0", "1", "2")] == expected
    assert function.get_partitions(["0", "1", "2"]).tolist() == expected


# (e) [PINOT-TEST] PartitionFunctionTest equivalence tests on Java `new Random(100)` bytes.
RANDOM_RAW = [
    "d69fd5b8b4db12", "45f3e93169e33e", "67f8caaa74570c", "98e647c751fa95", "76115d9e4289b8",
    "fd48839f1afaaf", "40c19b3c53846b", "40ebba7c0762ac", "e92430ae8d9c58", "4a9c4886be117b",
]  # fmt: skip
RANDOM_REENCODED = [
    "d69fd5b8efbfbdefbfbd12", "45efbfbdefbfbd3169efbfbd3e", "67efbfbdcaaa74570c",
    "efbfbdefbfbd47efbfbd51efbfbdefbfbd", "76115defbfbd42efbfbdefbfbd", "efbfbd48efbfbdefbfbd1aefbfbdefbfbd",
    "40efbfbdefbfbd3c53efbfbd6b", "40efbfbd7c0762efbfbd", "efbfbd2430efbfbdefbfbdefbfbd58",
    "4aefbfbd48efbfbdefbfbd117b",
]  # fmt: skip
RANDOM_MURMUR2_RAW = [-1044832774, -594851693, 1441878663, 1766739604, 1034724141, -296671913, 443511156, 1483601453, 1819695080, -931669296]  # fmt: skip
RANDOM_X64_S0 = [-930531654, 1010637996, -1251084035, -1551293561, 1591443335, 181872103, 1308755538, -432310401, -701537488, 674867586]  # fmt: skip
RANDOM_X64_S9001 = [1558697417, 933581816, 1071120824, 1964512897, 1629803052, 2037246152, -1867319466, -1003065762, -275998120, 1386652858]  # fmt: skip
RANDOM_X86_S0_RAW = [1255034832, -395463542, 659973067, 1070436837, -1193041642, -1412829846, -483463488, -1385092001, 568671606, -807299446]  # fmt: skip
RANDOM_X86_S9001_RAW = [-590969347, -315366997, 1642137565, -1732240651, -597560989, -1430018124, -448506674, 410998174, -1912106487, -19253806]  # fmt: skip
RANDOM_STRING_HASH_CODE = [1435662873, 756807774, -934173547, -394912837, -121710937, -1556088689, 614563269, -2067372701, 1423885412, -1708995233]  # fmt: skip
RANDOM_PARTITIONS_N5: list[tuple[str, Config, list[int]]] = [
    ("Murmur", None, [1, 4, 4, 1, 1, 2, 0, 4, 2, 3]),
    ("Murmur3", {"variant": "x64_32"}, [4, 1, 3, 2, 0, 3, 3, 2, 0, 1]),
    ("Murmur3", {"variant": "x64_32", "seed": "9001"}, [2, 1, 4, 2, 2, 2, 2, 1, 3, 3]),
    ("Murmur3", None, [4, 3, 3, 2, 3, 4, 0, 3, 1, 4]),
    ("Murmur3", {"seed": "9001"}, [2, 1, 3, 2, 2, 1, 1, 4, 4, 2]),
    ("ByteArray", None, [1, 3, 2, 0, 0, 4, 4, 1, 2, 4]),
    ("HashCode", None, [3, 4, 2, 2, 2, 4, 4, 1, 2, 3]),  # [COMPUTED], not in Pinot's tests
]


def _random_strings() -> list[str]:
    """Java's ``new String(bytes, UTF_8)``: malformed sequences become U+FFFD."""
    return [bytes.fromhex(raw).decode("utf-8", "replace") for raw in RANDOM_RAW]


def test_random_strings_reencode_like_java() -> None:
    """(e) the decoded strings re-encode to exactly the bytes Java produces."""
    assert [java_utf8(s).hex() for s in _random_strings()] == RANDOM_REENCODED


@pytest.mark.parametrize(
    ("scalar", "kernel", "expected"),
    [
        (hashes.murmur2, kernels.murmur2, RANDOM_MURMUR2_RAW),
        (hashes.murmur3_x86_32, kernels.murmur3_x86_32, RANDOM_X86_S0_RAW),
        (lambda b: hashes.murmur3_x86_32(b, 9001), lambda b: kernels.murmur3_x86_32(b, 9001), RANDOM_X86_S9001_RAW),
    ],
    ids=["murmur2", "x86_32-seed0", "x86_32-seed9001"],
)
def test_random_raw_byte_hashes(
    scalar: Callable[[bytes], int], kernel: Callable[[UnitBatch], Any], expected: list[int]
) -> None:
    """(e) [PINOT-TEST] murmur2 and x86_32 of the raw 7 bytes."""
    raw = [bytes.fromhex(h) for h in RANDOM_RAW]
    assert [scalar(b) for b in raw] == expected
    assert kernel(UnitBatch.from_bytes(raw)).tolist() == expected


@pytest.mark.parametrize(("seed", "expected"), [(0, RANDOM_X64_S0), (9001, RANDOM_X64_S9001)])
def test_random_string_x64_hashes(seed: int, expected: list[int]) -> None:
    """(e) [PINOT-TEST] x64_32 of the decoded strings, seeds 0 and 9001."""
    texts = _random_strings()
    assert [hashes.murmur3_x64_32(java_utf8(t), seed) for t in texts] == expected
    assert kernels.murmur3_x64_32(UnitBatch.from_strings(texts), seed).tolist() == expected


def test_random_string_hash_codes() -> None:
    """(e) [COMPUTED] Java String.hashCode of the decoded strings."""
    texts = _random_strings()
    assert [hashes.string_hash_code(t) for t in texts] == RANDOM_STRING_HASH_CODE
    assert kernels.string_hash_code(UnitBatch.utf16_from_strings(texts)).tolist() == RANDOM_STRING_HASH_CODE


@pytest.mark.parametrize(
    ("name", "config", "expected"), RANDOM_PARTITIONS_N5, ids=[_column_label(n, c) for n, c, _ in RANDOM_PARTITIONS_N5]
)
def test_random_string_partitions(name: str, config: Config, expected: list[int]) -> None:
    """(e) [PINOT-TEST] partition ids, N=5, of the decoded strings."""
    function = get_partition_function(name, 5, config)
    texts = _random_strings()
    assert [function.get_partition(t) for t in texts] == expected
    assert function.get_partitions(texts).tolist() == expected


# -- other reference facts -----------------------------------------------------------------------------------
def test_polygenelubricants_is_partition_zero_for_every_n() -> None:
    """§1.5 [COMPUTED]: its hashCode is MIN_INT, which PRE_MODULO_ABS maps to 0 for every N."""
    assert hashes.string_hash_code("polygenelubricants") == -(2**31)
    for n in range(1, 65):
        function = get_partition_function("HashCode", n)
        assert function.get_partition("polygenelubricants") == 0
        assert function.get_partitions(["polygenelubricants"]).tolist() == [0]


def test_murmur3_x86_matches_mmh3_and_x64_is_not_standard() -> None:
    """§1.5 [COMPUTED]: mmh3.hash("hello") = 613153351; Pinot's x64_32 gives -438922741, not -874993741."""
    assert hashes.murmur3_x86_32(b"hello") == 613153351
    assert hashes.murmur3_x64_32(b"hello") == -438922741


@pytest.mark.parametrize("spelling", ["modulo", "MODULO", "MoDuLo", "murmur", "mUrMuR2", "MURMUR3", "fnv", "Fnv",
                                      "bytearray", "HASHCODE", "boundedcolumnvalue"])  # fmt: skip
def test_names_are_case_insensitive(spelling: str) -> None:
    """§1.2: lookup lower-cases the name (Pinot's tests use "MoDuLo" and "mUrMuR2")."""
    config = {"columnValues": "a|b", "columnValuesDelimiter": "|"} if spelling.lower().startswith("bounded") else None
    function = get_partition_function(spelling, 3, config)
    assert function.name.lower() == spelling.lower().replace("murmur2", "murmur")


def test_registry_names_and_aliases() -> None:
    """§1.2: the registered names; Murmur and Murmur2 are one function."""
    assert set(partition_function_names()) == {
        "modulo", "murmur", "murmur2", "murmur3", "bytearray", "hashcode", "boundedcolumnvalue", "fnv",
    }  # fmt: skip
    assert type(get_partition_function("Murmur2", 4)) is type(get_partition_function("Murmur", 4))
    assert get_partition_function("Murmur2", 4).name == "Murmur"


def test_json_form_has_exactly_four_fields() -> None:
    """§1.2 (testBasicProperties): name, numPartitions, functionConfig, partitionIdNormalizer."""
    config = {"variant": "x64_32", "seed": "7"}
    assert get_partition_function("murmur3", 8, config).to_json() == {
        "name": "Murmur3",
        "numPartitions": 8,
        "functionConfig": config,
        "partitionIdNormalizer": "MASK",
    }


@pytest.mark.parametrize(
    ("name", "config", "normalizer"),
    [
        ("Modulo", None, "POSITIVE_MODULO"),
        ("Murmur", None, "MASK"),
        ("Murmur3", None, "MASK"),
        ("FNV", None, "MASK"),
        ("HashCode", None, "PRE_MODULO_ABS"),
        ("ByteArray", None, "PRE_MODULO_ABS"),
        ("Murmur", {"partitionIdNormalizer": "  "}, "MASK"),
        ("HashCode", {"partitionIdNormalizer": "mask"}, "MASK"),
        (
            "BoundedColumnValue",
            {"columnValues": "a", "columnValuesDelimiter": "|", "partitionIdNormalizer": "MASK"},
            "NO_OP",
        ),
    ],
)
def test_default_normalizers(name: str, config: Config, normalizer: str) -> None:
    """§1.4: per-function defaults; blank falls back; BoundedColumnValue ignores the key."""
    n = 2 if name == "BoundedColumnValue" else 5
    assert get_partition_function(name, n, config).normalizer.name == normalizer


# -- value-to-string rules (§1.3) ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "data_type", "expected"),
    [
        (10_000_000.0, None, "1.0E7"),  # §1.3: Java's scientific notation from 10^7
        (0.0001, None, "1.0E-4"),  # ... and below 10^-3
        (np.float32(0.1), None, "0.1"),  # FLOAT is not widened to double first
        (0.1, "FLOAT", "0.1"),
        (5.0, None, "5.0"),  # whole numbers keep ".0"
        (0.001, None, "0.001"),
        (9_999_999.0, None, "9999999.0"),
        (-1.5e-7, "DOUBLE", "-1.5E-7"),
        (float("nan"), None, "NaN"),
        (float("-inf"), None, "-Infinity"),
        (-0.0, None, "-0.0"),
        (42, None, "42"),
        (np.int64(-7), "LONG", "-7"),
        ("007", "INT", "7"),
        (Decimal("1E+3"), None, "1000"),  # BIG_DECIMAL toPlainString: no exponent
        (Decimal("1.50"), "BIG_DECIMAL", "1.50"),
        (Decimal("-0.00"), None, "0.00"),
        (b"\x01\xab\xff", None, "01abff"),  # BYTES: lower-case hex
        ("01ABFF", "BYTES", "01abff"),
        ("as-is", None, "as-is"),
        (True, None, "1"),
        ("TRUE", "BOOLEAN", "1"),
        ("yes", "BOOLEAN", "0"),
    ],
)
def test_value_to_string(value: Any, data_type: str | None, expected: str) -> None:
    """§1.3: the string each data type is hashed as."""
    assert to_pinot_string(value, data_type) == expected


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (5e-324, "4.9E-324"),  # Double.MIN_VALUE as documented by Java
        (1.7976931348623157e308, "1.7976931348623157E308"),  # Double.MAX_VALUE
        (2.2250738585072014e-308, "2.2250738585072014E-308"),  # Double.MIN_NORMAL
        (1e23, "1.0E23"),
        (123456.789, "123456.789"),
    ],
)
def test_java_double_to_string(x: float, expected: str) -> None:
    """Java's ``Double.toString`` (JDK 19+), including the two-digit rule for ``MIN_VALUE``."""
    assert java_double_to_string(x) == expected


@pytest.mark.parametrize(
    ("x", "expected"),
    [(1.4e-45, "1.4E-45"), (3.4028235e38, "3.4028235E38"), (1.17549435e-38, "1.1754944E-38"), (1e10, "1.0E10")],
)
def test_java_float_to_string(x: float, expected: str) -> None:
    """Java's ``Float.toString`` (JDK 19+, checked on JDK 25) for ``MIN_VALUE``, ``MAX_VALUE``, ``MIN_NORMAL``.

    ``MIN_NORMAL`` is where the JDK versions differ: JDK 17 prints ``1.17549435E-38``.
    """
    assert java_float_to_string(x) == expected


def test_float_values_hash_their_java_string() -> None:
    """§1.3: a DOUBLE 1e7 is partitioned as the text "1.0E7", not "10000000.0"."""
    function = get_partition_function("Murmur", 8)
    assert function.get_partition(1e7) == function.get_partition("1.0E7")
    assert function.get_partitions(np.array([1e7, 0.5])).tolist() == function.get_partitions(["1.0E7", "0.5"]).tolist()
    as_float = function.get_partitions(np.array([0.1], dtype=np.float32))
    assert as_float.tolist() == [function.get_partition("0.1")]


# -- errors ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "n", "config", "error", "message"),
    [
        ("Crc32", 4, None, TableConfigError, "No partition function registered for name: Crc32"),
        ("Murmur", 0, None, TableConfigError, "Number of partitions must be > 0"),
        ("Murmur3", 4, {"variant": "X86_32"}, TableConfigError, "Murmur3 variant must be either x86_32 or x64_32"),
        ("Murmur3", 4, {"variant": "x64"}, TableConfigError, "Murmur3 variant must be either x86_32 or x64_32"),
        ("Murmur3", 4, {"seed": "abc"}, TableConfigError, 'For input string: "abc"'),
        ("Murmur3", 4, {"seed": "2147483648"}, TableConfigError, 'For input string: "2147483648"'),
        (
            "FNV",
            4,
            {"variant": "fnv2"},
            TableConfigError,
            "FNV variant must be one of fnv1_32, fnv1a_32, fnv1_64 or fnv1a_64, but was: 'fnv2'",
        ),
        ("Murmur", 4, {"partitionIdNormalizer": "saramaCompat"}, TableConfigError, "Unsupported partitionIdNormalizer"),
        ("BoundedColumnValue", 4, None, TableConfigError, "'functionConfig' should be present, specified"),
        ("BoundedColumnValue", 4, {"columnValuesDelimiter": "|"}, TableConfigError, "columnValues must be configured"),
        ("BoundedColumnValue", 4, {"columnValues": "a|b|c"}, TableConfigError, "'columnValuesDelimiter' must be"),
        (
            "BoundedColumnValue",
            3,
            {"columnValues": "Maths|English|Chemistry", "columnValuesDelimiter": "|"},
            TableConfigError,
            "'numPartitions' must just be one greater than number of column values configured",
        ),
    ],
)
def test_configuration_errors(name: str, n: int, config: Config, error: type[Exception], message: str) -> None:
    """§1.2, §1.4, §1.5: Pinot's construction-time errors, with Pinot's messages."""
    with pytest.raises(error, match=message):
        get_partition_function(name, n, config)


@pytest.mark.parametrize("value", ["1.5", "abc", "", " 1", "1_000", "9223372036854775808", 5.0])
def test_modulo_rejects_non_integer_text(value: Any) -> None:
    """§1.5: Modulo parses with Long.parseLong; anything else is a NumberFormatException."""
    function = get_partition_function("Modulo", 4)
    text = value if isinstance(value, str) else "5.0"
    with pytest.raises(InputError, match=f'NumberFormatException: For input string: "{text}"'):
        function.get_partition(value)
    with pytest.raises(InputError, match="NumberFormatException"):
        function.get_partitions(["1", value])


@pytest.mark.parametrize("value", ["xyz", "abc", "0g"])
def test_use_raw_bytes_rejects_non_hex(value: str) -> None:
    """§1.5: useRawBytes hex-decodes; odd length or non-hex characters are rejected."""
    function = get_partition_function("Murmur", 4, {"useRawBytes": "TRUE"})
    with pytest.raises(InputError, match="useRawBytes"):
        function.get_partition(value)
    with pytest.raises(InputError, match="useRawBytes"):
        function.get_partitions(["00", value])


def test_use_raw_bytes_is_parsed_like_java_boolean() -> None:
    """``Boolean.parseBoolean``: any case of "true" enables it, anything else (even "yes") does not."""
    assert get_partition_function("Murmur", 4, {"useRawBytes": "True"}).use_raw_bytes  # type: ignore[attr-defined]
    assert not get_partition_function("Murmur", 4, {"useRawBytes": "yes"}).use_raw_bytes  # type: ignore[attr-defined]


@pytest.mark.parametrize("value", [None, [1, 2], object()])
def test_unpartitionable_values(value: Any) -> None:
    """Nulls (Pinot substitutes the default null value first) and unknown types are rejected."""
    with pytest.raises(InputError):
        get_partition_function("Murmur", 4).get_partition(value)


@pytest.mark.parametrize(
    ("value", "data_type", "message"),
    [
        ("abc", "FLOAT", "could not convert"),
        ("x", "BIG_DECIMAL", "not a BIG_DECIMAL"),
        (1.5, "INT", "expected an integer"),
        ("zz", "BYTES", "illegal hexadecimal character"),
        ("abc", "LONG", "NumberFormatException"),
        (1, "VARCHAR", "must be one of INT, LONG"),
    ],
)
def test_values_that_do_not_fit_the_data_type(value: Any, data_type: str, message: str) -> None:
    """An explicit ``data_type`` converts like Pinot would; values it cannot hold are input errors."""
    with pytest.raises(InputError, match=message):
        get_partition_function("Murmur", 4).get_partition(value, data_type)
    with pytest.raises(InputError, match=message):
        get_partition_function("Murmur", 4).get_partitions([value], data_type)


# -- properties --------------------------------------------------------------------------------------------------
PROPERTY_FUNCTIONS: list[tuple[str, Config]] = [
    *PARTITION_COLUMNS,
    ("Murmur3", {"variant": "x64_32", "seed": "-1"}),
    ("Murmur", {"partitionIdNormalizer": "ABS"}),
    ("HashCode", {"partitionIdNormalizer": "POSITIVE_MODULO"}),
    ("FNV", {"variant": "fnv1_64", "partitionIdNormalizer": "PRE_MODULO_ABS"}),
    ("BoundedColumnValue", {"columnValues": "a|é|日本|\U0001f600", "columnValuesDelimiter": "|"}),
]
# Any code point, including lone surrogates (Java strings can hold them; UTF-8 writes "?").
any_text = st.text(st.characters(exclude_categories=()), max_size=40)


def _check_agreement(name: str, config: Config, values: Any, data_type: str | None = None) -> None:
    n = 5 if name == "BoundedColumnValue" else 7
    function = get_partition_function(name, n, config)
    vector = function.get_partitions(values, data_type)
    assert vector.dtype == np.int32
    assert vector.tolist() == [function.get_partition(v, data_type) for v in values]
    assert ((vector >= 0) & (vector < n)).all()


@pytest.mark.parametrize(("name", "config"), PROPERTY_FUNCTIONS, ids=[_column_label(*c) for c in PROPERTY_FUNCTIONS])
@settings(max_examples=60, deadline=None)
@given(values=st.lists(any_text, max_size=30))
def test_vectorised_equals_scalar_on_strings(name: str, config: Config, values: list[str]) -> None:
    """get_partitions(values) == [get_partition(v) ...], ids in [0, N), for arbitrary text."""
    _check_agreement(name, config, values)


@pytest.mark.parametrize(("name", "config"), [("Modulo", None), *PARTITION_COLUMNS[:6]])
@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.integers(-(2**63), 2**63 - 1), max_size=30))
def test_vectorised_equals_scalar_on_longs(name: str, config: Config, values: list[int]) -> None:
    """Integers as Python ints and as an int64 array (numpy writes the digits) agree with the scalar path."""
    _check_agreement(name, config, values)
    _check_agreement(name, config, np.array(values, dtype=np.int64))


@settings(max_examples=100, deadline=None)
@given(
    doubles=st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=20),
    floats=st.lists(st.floats(width=32), max_size=20),
)
def test_vectorised_equals_scalar_on_floats(doubles: list[float], floats: list[float]) -> None:
    """Float columns: distinct bit patterns are formatted once; -0.0 stays apart from 0.0."""
    _check_agreement("Murmur", None, np.array(doubles, dtype=np.float64))
    _check_agreement("Murmur", None, np.array(floats, dtype=np.float32))
    _check_agreement("HashCode", None, floats, data_type="FLOAT")


@settings(max_examples=100, deadline=None)
@given(blobs=st.lists(st.binary(max_size=40), max_size=20), upper=st.booleans())
def test_vectorised_equals_scalar_on_raw_bytes(blobs: list[bytes], upper: bool) -> None:
    """BYTES values (hex) and useRawBytes hex text, for every function that supports it."""
    texts = [b.hex().upper() if upper else b.hex() for b in blobs]
    for name, variant in (("Murmur", None), ("Murmur3", "x86_32"), ("Murmur3", "x64_32"), ("FNV", "fnv1_64")):
        config = {"useRawBytes": "true", **({"variant": variant} if variant else {})}
        _check_agreement(name, config, texts)
    _check_agreement("ByteArray", None, blobs)


@settings(max_examples=300, deadline=None)
@given(x=st.floats(allow_nan=False, allow_infinity=False))
def test_java_double_strings_round_trip(x: float) -> None:
    """Java's form reads back as the same double, and uses E notation exactly outside [1e-3, 1e7)."""
    text = java_double_to_string(x)
    assert float(text) == x
    assert ("E" in text) == (x != 0 and not 1e-3 <= abs(x) < 1e7)
    assert "." in text.split("E")[0]


@settings(max_examples=300, deadline=None)
@given(x=st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_java_float_strings_round_trip(x: float) -> None:
    """``Float.toString`` reads back as the same float and is never longer than numpy's shortest form."""
    text = java_float_to_string(x)
    assert np.float32(text) == np.float32(x)
    digits = text.split("E")[0].replace("-", "").replace(".", "").strip("0")
    assert len(digits) <= max(2, len(np.format_float_scientific(np.float32(x), unique=True).split("e")[0]))


def test_importing_the_package_does_not_start_spark() -> None:
    """Style rule: importing ``workbench`` defines things only; PySpark loads inside the Spark helper."""
    import subprocess
    import sys

    code = "import sys, workbench.pinot.partition; sys.exit('pyspark' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
