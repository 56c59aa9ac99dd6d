"""JVM heap model of Pinot's upsert metadata, and Pinot's own estimator beside it.

Upsert keeps one map entry per live primary key on the server's heap, in every replica. The bytes
per entry decide how many keys a server can hold before the old generation fills (and the G1 model of
the simulator starts paying for it), so this module counts them from the JVM object layout rather
than from a rule of thumb.

Layout assumed (64-bit HotSpot, heap < 32 GB, the defaults): compressed oops (4-byte references),
compressed class pointers (12-byte object headers), array headers of 16 bytes (12 + 4-byte length),
every object rounded up to 8 bytes. Per live key Pinot's ``ConcurrentMapPartitionUpsertMetadataManager``
holds (reference §5.3):

===================  =====================================================================  ==========
object               fields                                                                 bytes
===================  =====================================================================  ==========
CHM ``Node``         header 12 + int hash 4 + key, value, next refs 3x4 = 28                 32
table slot           one 4-byte reference in the ``Node[]`` table; the table doubles when    4 x cap / n
                     the size reaches 0.75 x capacity and never shrinks
map key, NONE        ``PrimaryKey`` (12 + ``Object[]`` ref = 16) + ``Object[n]`` (16 + 4n,   e.g. 64
                     aligned) + each boxed value (Long 24, Integer 16, String 24 + byte[])   (one LONG)
map key, digest      ``ByteArray`` (12 + ref = 16) + ``byte[d]`` (16 + d, aligned)           48 (16-B)
``RecordLocation``   header 12 + segment ref 4 + int docId 4 + comparison ref 4 = 24         24
comparison value     the boxed ``Comparable`` (Long 24, Integer 16, Double 24, Float 16)     24 (LONG)
===================  =====================================================================  ==========

So a LONG key with a LONG comparison column and ``hashFunction=NONE`` costs 32 + 64 + 24 + 24 = 144 B
plus 4 x capacity / n of table (8.4 B at 1M keys: capacity 2^21), i.e. 152.4 B; with MD5 or MURMUR3
the key shrinks to 48 B and the entry to 136.4 B. Pinot's estimator (``POST /upsert/estimateHeapUsage``,
reference §6) says 40 + 60 = 100 B for the same table: it counts the key as its raw bytes + 32 and the
value as 52 + comparison size, and leaves out the map node and table (a TODO in its source).
``docs/upsert.md`` walks through the difference.

>>> round(upsert_bytes_per_key(["LONG"]), 3)
152.389
>>> pinot_estimate(["LONG"], 1_000_000, num_partitions=4)["totalSpacePerPartition(bytes)"]
25000000.0
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from pyroaring import BitMap

from workbench.errors import InputError

__all__ = [
    "ARRAY_HEADER",
    "OBJECT_HEADER",
    "REFERENCE",
    "EntryLayout",
    "UpsertHeapModel",
    "align8",
    "bitmap_bytes",
    "boxed_bytes",
    "byte_array_bytes",
    "chm_table_bytes",
    "chm_table_capacity",
    "entry_layout",
    "java_double_str",
    "pinot_estimate",
    "pinot_estimate_for_table",
    "pinot_estimate_json",
    "schema_types",
    "string_bytes",
    "upsert_bytes_per_key",
]

OBJECT_HEADER = 12  # mark word 8 + compressed class pointer 4
REFERENCE = 4  # compressed oops
ARRAY_HEADER = 16  # object header 12 + int length 4
NODE_BYTES = 32  # ConcurrentHashMap.Node: 12 + hash 4 + key/val/next 3 x 4 = 28 -> 32
RECORD_LOCATION_BYTES = 24  # 12 + segment ref 4 + docId 4 + comparisonValue ref 4 = 24
WRAPPER_BYTES = 16  # PrimaryKey {Object[]} and ByteArray {byte[]}: 12 + 4 = 16
STRING_OBJECT = 24  # JDK 9+ String: 12 + value ref 4 + hash 4 + coder 1 + hashIsZero 1 = 22 -> 24
BIG_DECIMAL_OBJECT = 40  # 12 + intVal ref 4 + scale 4 + precision 4 + stringCache ref 4 + intCompact 8 = 36 -> 40
CHM_INITIAL_CAPACITY = 16
CHM_LOAD_FACTOR = 0.75

_BOXED = {"INT": 16, "BOOLEAN": 16, "FLOAT": 16, "LONG": 24, "TIMESTAMP": 24, "DOUBLE": 24}
# Digest bytes of each hashFunction (reference §5.2); UUID is 16 per column, NONE keeps the key objects.
_DIGEST_BYTES = {"MD5": 16, "MURMUR3": 16, "XXH128": 16, "XXHASH": 8}
_HASH_FUNCTIONS = ("NONE", "UUID", *_DIGEST_BYTES)
# Pinot's FieldSpec.DataType.size() for the fixed-width types (reference §6); UUID is HEAD-only.
PINOT_TYPE_SIZE = {"INT": 4, "LONG": 8, "FLOAT": 4, "DOUBLE": 8, "BOOLEAN": 4, "TIMESTAMP": 8, "UUID": 16}


def align8(size: int) -> int:
    """Round an object size up to HotSpot's 8-byte alignment.

    >>> align8(20), align8(24), align8(28)
    (24, 24, 32)
    """
    return (size + 7) // 8 * 8


def boxed_bytes(data_type: str) -> int:
    """Bytes of the boxed Java value of a fixed-width Pinot type (``Long`` is 12 + 8 -> 24)."""
    try:
        return _BOXED[data_type.upper()]
    except KeyError:
        raise InputError("data type", f"boxed size known for {sorted(_BOXED)}, got {data_type!r}") from None


def byte_array_bytes(length: int) -> int:
    """A ``byte[length]``: 16-byte array header plus the bytes, aligned."""
    return align8(ARRAY_HEADER + length)


def string_bytes(length: float, latin1: bool = True) -> float:
    """A ``java.lang.String`` of ``length`` characters with compact strings (JDK 9+).

    Latin-1 text stores one byte per character, anything else two (UTF-16). ``length`` may be an
    average, so the array part is the aligned size of that average (a mean, not a per-string bound).
    """
    payload = length * (1 if latin1 else 2)
    return STRING_OBJECT + align8(ARRAY_HEADER + round(payload))


# -- the map table ------------------------------------------------------------------------------------------
def chm_table_capacity(max_keys: int) -> int:
    """``ConcurrentHashMap`` table length after ``max_keys`` insertions from the default 16.

    The table doubles as soon as the size reaches ``0.75 x capacity`` and never shrinks, so it is set
    by the largest number of keys the map has ever held (keys removed by TTL leave the table behind).

    >>> chm_table_capacity(11), chm_table_capacity(12), chm_table_capacity(1_000_000)
    (16, 32, 2097152)
    """
    capacity = CHM_INITIAL_CAPACITY
    while max_keys >= capacity - (capacity >> 2):
        capacity <<= 1
    return capacity


def chm_table_bytes(capacity: int) -> int:
    """Bytes of a ``Node[capacity]`` table (array header plus one compressed reference per slot)."""
    return align8(ARRAY_HEADER + REFERENCE * capacity)


# -- one entry ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EntryLayout:
    """Bytes of one live map entry, by object, excluding the table slot (which depends on map size).

    Attributes
    ----------
    node
        The ``ConcurrentHashMap.Node``.
    key
        The map key: ``PrimaryKey`` + ``Object[]`` + boxed values, or ``ByteArray`` + ``byte[]``.
    record_location
        ``RecordLocation``.
    comparison_value
        The boxed comparison value(s) the location points at.
    """

    node: float
    key: float
    record_location: float
    comparison_value: float

    @property
    def total(self) -> float:
        """Sum of the parts: the per-key bytes before table slots."""
        return self.node + self.key + self.record_location + self.comparison_value


def _value_bytes(data_type: str, avg_string_length: float | None, latin1: bool) -> float:
    upper = data_type.upper()
    if upper in _BOXED:
        return _BOXED[upper]
    if upper == "BIG_DECIMAL":
        return BIG_DECIMAL_OBJECT
    if avg_string_length is None:
        raise InputError("avg_string_length", f"is required for a {upper} primary-key column with hashFunction NONE")
    if upper in ("STRING", "JSON"):
        return string_bytes(avg_string_length, latin1)
    return WRAPPER_BYTES + byte_array_bytes(round(avg_string_length))  # BYTES -> ByteArray + byte[]


def _hash_name(hash_function: str) -> str:
    name = str(hash_function).upper()
    if name not in _HASH_FUNCTIONS:
        raise InputError("upsertConfig.hashFunction", f"must be one of {list(_HASH_FUNCTIONS)}, got {hash_function!r}")
    return name


def _key_bytes(types: Sequence[str], hash_function: str, avg_string_length: float | None,
               latin1: bool) -> float:
    if hash_function == "NONE":
        values = sum(_value_bytes(t, avg_string_length, latin1) for t in types)
        return WRAPPER_BYTES + align8(ARRAY_HEADER + REFERENCE * len(types)) + values
    digest = _DIGEST_BYTES.get(hash_function, 16 * len(types))  # UUID: 16 bytes per column
    return WRAPPER_BYTES + byte_array_bytes(digest)


def _comparison_bytes(comparison_type: str | Sequence[str]) -> float:
    """One boxed value; several columns become a ``ComparisonColumns`` holding a ``Comparable[]``."""
    if isinstance(comparison_type, str):
        return boxed_bytes(comparison_type)
    columns = list(comparison_type)
    if len(columns) == 1:
        return boxed_bytes(columns[0])
    holder = align8(OBJECT_HEADER + REFERENCE + 4)  # Comparable[] ref + int comparableIndex
    return holder + align8(ARRAY_HEADER + REFERENCE * len(columns)) + sum(boxed_bytes(c) for c in columns)


def entry_layout(primary_key_types: Sequence[str], hash_function: str = "NONE",
                 comparison_type: str | Sequence[str] = "LONG", avg_string_length: float | None = None,
                 *, latin1: bool = True) -> EntryLayout:
    """Per-object bytes of one upsert map entry (see the module table)."""
    if not primary_key_types:
        raise InputError("primary_key_types", "needs at least one column")
    hf = _hash_name(hash_function)
    return EntryLayout(NODE_BYTES, _key_bytes(primary_key_types, hf, avg_string_length, latin1),
                       RECORD_LOCATION_BYTES, _comparison_bytes(comparison_type))


def upsert_bytes_per_key(primary_key_types: Sequence[str], hash_function: str = "NONE",
                         comparison_type: str | Sequence[str] = "LONG", num_keys: int = 1_000_000,
                         avg_string_length: float | None = None, *, latin1: bool = True) -> float:
    """Heap bytes per primary key of a partition's upsert map holding ``num_keys`` keys.

    Parameters
    ----------
    primary_key_types
        Pinot types of the primary-key columns.
    hash_function
        ``upsertConfig.hashFunction``; anything but NONE replaces the key objects by a digest.
    comparison_type
        Type of the comparison column (or several, for multiple comparison columns).
    num_keys
        Keys in the map; sets the table capacity, whose slots are spread over the keys.
    avg_string_length
        Mean characters (STRING) or bytes (BYTES) of variable-width key columns; needed with NONE.
    latin1
        Strings hold only Latin-1 characters (one byte each under compact strings).

    >>> round(upsert_bytes_per_key(["LONG"], "MD5"), 3), round(upsert_bytes_per_key(["LONG"], "XXHASH"), 3)
    (136.389, 128.389)
    """
    if num_keys <= 0:
        raise InputError("num_keys", f"must be positive, got {num_keys}")
    layout = entry_layout(primary_key_types, hash_function, comparison_type, avg_string_length, latin1=latin1)
    return layout.total + chm_table_bytes(chm_table_capacity(num_keys)) / num_keys


def bitmap_bytes(bitmap: BitMap) -> int:
    """Heap bytes of a validDocIds/queryableDocIds bitmap, taken as its portable serialised size.

    Roaring's serialised form is its containers laid end to end, which is what the Java
    ``MutableRoaringBitmap`` keeps on heap give or take a few object headers per container.
    """
    return len(bitmap.serialize())


@dataclass(frozen=True)
class UpsertHeapModel:
    """Heap of one partition's upsert metadata as a function of its key count (used by the replay).

    >>> model = UpsertHeapModel(entry_layout(["LONG"]))
    >>> model.map_bytes(1_000_000) == 1_000_000 * 144 + chm_table_bytes(2_097_152)
    True
    """

    layout: EntryLayout

    def map_bytes(self, num_keys: int, max_keys: int | None = None) -> float:
        """Entries plus the table sized by the most keys ever held (``max_keys``, default ``num_keys``)."""
        capacity = chm_table_capacity(max(num_keys, max_keys or 0))
        return num_keys * self.layout.total + chm_table_bytes(capacity)


# -- Pinot's estimator ------------------------------------------------------------------------------------
def _pinot_size(data_type: str, problem: str) -> int:
    size = PINOT_TYPE_SIZE.get(data_type.upper())
    if size is None:
        raise InputError("estimateHeapUsage", problem)
    return size


def _pinot_bytes_per_value(comparison_types: Sequence[str] | None) -> int:
    if comparison_types is None:
        return 60
    problem = "Not support data types for the comparison column"
    if len(comparison_types) == 1:
        return 52 + _pinot_size(comparison_types[0], problem)
    return 52 + sum(8 + _pinot_size(t, problem) for t in comparison_types) + 48 + 4


def _pinot_bytes_per_key(primary_key_types: Sequence[str], primary_key_size: int) -> int:
    if primary_key_size > 0:
        return primary_key_size
    problem = "Primary key sizes much be provided for non fixed-width columns"  # sic, as Pinot says it
    return sum(_pinot_size(t, problem) for t in primary_key_types) + 32


def pinot_estimate(primary_key_types: Sequence[str], cardinality: int,
                   comparison_types: Sequence[str] | None = None, primary_key_size: int = -1,
                   num_partitions: int = -1, table_name: str = "table") -> dict[str, Any]:
    """Pinot's ``POST /upsert/estimateHeapUsage`` answer, key for key (reference §6).

    ``comparison_types`` is ``None`` when ``upsertConfig.comparisonColumns`` is unset (then 60 bytes
    per value, even though the time column is compared). Errors Pinot returns as HTTP 400 raise
    :class:`~workbench.errors.InputError` with Pinot's message.

    >>> pinot_estimate(["INT", "LONG"], 10)["bytesPerKey"]
    44
    >>> pinot_estimate(["LONG"], 10, ["LONG", "INT"])["bytesPerValue"]
    132
    """
    per_key = _pinot_bytes_per_key(primary_key_types, primary_key_size)
    per_value = _pinot_bytes_per_value(comparison_types)
    out: dict[str, Any] = {
        "tableName": table_name,
        "bytesPerKey": per_key,
        "bytesPerValue": per_value,
        "totalKeySpace(bytes)": per_key * cardinality,
        "totalValueSpace(bytes)": per_value * cardinality,
        "totalSpace(bytes)": (per_key + per_value) * cardinality,
    }
    if num_partitions > 0:
        out["numPartitions"] = num_partitions
        out["totalSpacePerPartition(bytes)"] = out["totalSpace(bytes)"] / num_partitions
    return out


def schema_types(schema: Mapping[str, Any]) -> dict[str, str]:
    """Column name -> data type from a Pinot schema JSON (all field-spec lists and the legacy time spec)."""
    types: dict[str, str] = {}
    for section in ("dimensionFieldSpecs", "metricFieldSpecs", "dateTimeFieldSpecs", "complexFieldSpecs"):
        for spec in schema.get(section) or ():
            types[str(spec["name"])] = str(spec.get("dataType", "STRING")).upper()
    time_spec = schema.get("timeFieldSpec") or {}
    for part in ("incomingGranularitySpec", "outgoingGranularitySpec"):
        if part in time_spec:
            types[str(time_spec[part]["name"])] = str(time_spec[part]["dataType"]).upper()
    return types


def pinot_estimate_for_table(table_config: Any, schema: Mapping[str, Any], cardinality: int,
                             primary_key_size: int = -1, num_partitions: int = -1) -> dict[str, Any]:
    """:func:`pinot_estimate` from a :class:`~workbench.pinot.table_config.TableConfig` and schema JSON."""
    types = schema_types(schema)
    pk_columns = list(schema.get("primaryKeyColumns") or ())
    missing = [c for c in pk_columns if c not in types]
    if not pk_columns or missing:
        raise InputError("schema.primaryKeyColumns", f"must name schema columns, missing {missing or 'all'}")
    comparison = table_config.upsert.comparison_columns if table_config.upsert is not None else ()
    comparison_types = [types.get(c, "STRING") for c in comparison] if comparison else None
    return pinot_estimate([types[c] for c in pk_columns], cardinality, comparison_types, primary_key_size,
                          num_partitions, table_config.table_name_with_type)


def java_double_str(value: float) -> str:
    """``Double.toString`` (shortest round-trip digits, as JDK 19+ prints them; Jackson uses this form).

    >>> java_double_str(135000.0), java_double_str(2.5e7), java_double_str(1e7), java_double_str(0.0001)
    ('135000.0', '2.5E7', '1.0E7', '1.0E-4')
    """
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(float(value))
    _, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits))
    return f"{'-' if value < 0 else ''}{text[0]}.{text[1:] or '0'}E{len(text) - 1 + exponent}"


def pinot_estimate_json(estimate: Mapping[str, Any]) -> str:
    """Render a :func:`pinot_estimate` result as the controller's JSON body (doubles in Java form).

    >>> pinot_estimate_json({"totalSpacePerPartition(bytes)": 2.5e7})
    '{"totalSpacePerPartition(bytes)":2.5E7}'
    """
    parts = [f"{json.dumps(k)}:{java_double_str(v) if isinstance(v, float) else json.dumps(v)}"
             for k, v in estimate.items()]
    return "{" + ",".join(parts) + "}"
