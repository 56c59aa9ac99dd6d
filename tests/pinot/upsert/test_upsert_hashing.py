"""Primary-key byte layouts and hash vectors (reference §5.2 and §1.7.2 [COMPUTED])."""

from __future__ import annotations

import hashlib
import uuid
from decimal import Decimal

import numpy as np
import pytest

from workbench.errors import InputError
from workbench.pinot.upsert import HashFunction, KeyEncoder, murmur3_x64_128, primary_key_bytes
from workbench.pinot.upsert.hashing import murmur3_x64_128_batch


@pytest.mark.parametrize(("values", "types", "expected"), [
    ([42], ["INT"], "0000002a"),
    ([-1], ["LONG"], "ffffffffffffffff"),
    ([1.5], ["FLOAT"], "3fc00000"),
    ([1.5], ["DOUBLE"], "3ff8000000000000"),
    (["héllo"], ["STRING"], "68c3a96c6c6f"),  # single column: bare UTF-8, no length prefix
    ([b"\x01\x02"], ["BYTES"], "0102"),
    ([True], ["BOOLEAN"], "00000001"),
    ([7, "ab"], ["LONG", "STRING"], "0000000000000007" "00000002" "6162"),  # prefix on variable width only
    ([b"\x00", 3], ["BYTES", "INT"], "00000001" "00" "00000003"),
])
def test_as_bytes_layout(values: list[object], types: list[str], expected: str) -> None:
    assert primary_key_bytes(values, types).hex() == expected


def test_big_decimal_is_scale_then_minimal_twos_complement() -> None:
    assert primary_key_bytes([Decimal("1.50")], ["BIG_DECIMAL"]).hex() == "0002" "0096"  # 150, scale 2
    assert primary_key_bytes([Decimal("-1")], ["BIG_DECIMAL"]).hex() == "0000" "ff"
    assert primary_key_bytes([Decimal("128")], ["BIG_DECIMAL"]).hex() == "0000" "0080"


def digest(types: list[str], hash_function: str, pk: object) -> str:
    key = KeyEncoder(types, hash_function).encode(pk)
    assert isinstance(key, bytes)
    return key.hex()


def test_reference_vectors() -> None:
    """[COMPUTED, checked against Guava] MURMUR3 and MD5 of INT 42, MURMUR3 of "user_123"."""
    assert digest(["INT"], "MURMUR3", 42) == "6eea611e9215a29ce7114c80bb67b3c9"
    assert digest(["STRING"], "MURMUR3", "user_123") == "37011f62bf32481024483c8e36228c85"
    assert digest(["INT"], "MD5", 42) == "a515855799ddbda08bc99fc2ce87fa79"


def test_xxhash_is_big_endian_xxh64_and_xxh128_is_high_then_low() -> None:
    """XXH64("") = 0xef46db3751d8e999 and XXH3-128("") = 0x99aa06d3014798d86001c324468d497f (xxHash spec)."""
    assert KeyEncoder(["STRING"], "XXHASH").encode("") == bytes.fromhex("ef46db3751d8e999")
    assert KeyEncoder(["STRING"], "XXH128").encode("") == bytes.fromhex("99aa06d3014798d86001c324468d497f")


def test_md5_matches_hashlib_on_multi_column_bytes() -> None:
    enc = KeyEncoder(["STRING", "INT"], "MD5")
    assert enc.encode(("ab", 1)) == hashlib.md5(bytes.fromhex("00000002616200000001")).digest()


def test_uuid_writes_16_bytes_per_value_and_falls_back_to_as_bytes() -> None:
    a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    enc = KeyEncoder(["STRING", "STRING"], "UUID")
    assert enc.encode((str(a), str(b))) == a.bytes + b.bytes
    assert enc.encode((str(a), "nope")) == primary_key_bytes([str(a), "nope"], ["STRING", "STRING"])


def test_none_keys_are_the_values() -> None:
    assert KeyEncoder(["LONG"]).encode(5) == 5
    assert KeyEncoder(["LONG", "STRING"]).encode([5, "x"]) == (5, "x")
    with pytest.raises(InputError, match="2 columns"):
        KeyEncoder(["LONG", "STRING"]).encode((5,))


def test_vectorised_murmur_agrees_with_scalar_for_every_tail_length() -> None:
    rng = np.random.default_rng(11)
    for length in range(0, 50):
        rows = rng.integers(0, 256, size=(5, length), dtype=np.uint8)
        got = murmur3_x64_128_batch(rows)
        assert [bytes(r) for r in got] == [murmur3_x64_128(bytes(r)) for r in rows]


@pytest.mark.parametrize("types", [["INT"], ["LONG"], ["DOUBLE"]])
def test_encode_many_matches_encode(types: list[str]) -> None:
    values = np.random.default_rng(3).integers(-(2**31), 2**31, 50)
    for hf in HashFunction:
        enc = KeyEncoder(types, hf)
        assert enc.encode_many(values) == [enc.encode(v) for v in values.tolist()]


def test_unknown_hash_function_is_rejected_with_the_allowed_list() -> None:
    with pytest.raises(InputError, match="MURMUR3"):
        KeyEncoder(["INT"], "sha1")


def test_uuid_key_with_a_null_value_is_rejected() -> None:
    """HashUtils.hashUUID throws "Found null value in primary key"."""
    with pytest.raises(InputError, match="null value"):
        KeyEncoder(["STRING", "STRING"], "UUID").encode((str(uuid.UUID(int=1)), None))


def test_uuid_given_as_16_bytes_is_used_without_length_prefix() -> None:
    a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    enc = KeyEncoder(["BYTES", "STRING"], "UUID")
    assert enc.encode((a.bytes, str(b))) == a.bytes + b.bytes  # 32 bytes, no 4-byte length prefixes
    short = KeyEncoder(["BYTES", "STRING"], "UUID").encode((b"\x01\x02", str(b)))
    assert short == primary_key_bytes([b"\x01\x02", str(b)], ["BYTES", "STRING"])


@pytest.mark.parametrize(("text", "expected"), [
    # Values printed by OpenJDK 17 jshell: UUID.fromString(text).toString().
    ("1-2-3-4-5", "00000001-0002-0003-0004-000000000005"),
    ("+1-2-3-4-5", "00000001-0002-0003-0004-000000000005"),
    ("123456789-123-4567-89ab-cdef01234567", "23456789-0123-4567-89ab-cdef01234567"),
    ("\u0661-2-3-4-5", "00000001-0002-0003-0004-000000000005"),  # Arabic-Indic one
    ("\uff21-2-3-4-5", "0000000a-0002-0003-0004-000000000005"),  # fullwidth A
    ("7fffffffffffffff-2-3-4-5", "ffffffff-0002-0003-0004-000000000005"),
])
def test_uuid_parsing_accepts_what_java_accepts(text: str, expected: str) -> None:
    assert KeyEncoder(["STRING"], "UUID").encode(text) == uuid.UUID(expected).bytes


@pytest.mark.parametrize("text", [
    # Rejected by Java (IllegalArgumentException / NumberFormatException), accepted by Python's uuid module
    # for the first two: the whole key then falls back to asBytes().
    "{00000000-0000-0000-0000-000000000001}", "00000000000000000000000000000001",
    "1-2-3-4-5-6", "1--3-4-5", "8000000000000000-2-3-4-5", " 1-2-3-4-5",
])
def test_uuid_parsing_rejects_what_java_rejects(text: str) -> None:
    assert KeyEncoder(["STRING"], "UUID").encode(text) == text.encode("utf-8")
