"""Column types, and literals normalised to them, so that spellings of one value share a cache key.

The RFC (§5.1) asks cache keys to "normalize literals to internal storage types (timezone, number
scale)". Pinot converts every filter literal to the column's stored type before evaluating it, so on an
INT column ``x = 5``, ``x = 5.0`` and ``x = '5'`` select the same rows, and on a STRING column ``s = 5``
and ``s = '5'`` do. Normalising the literal makes their keys equal.

The rule that keeps this safe: **merge two spellings only when Pinot certainly reads them as the same
value**. A spelling Pinot might reject or read differently (``'5.0'`` on an INT column, ``'yes'`` on
a BOOLEAN one) is left as written, which costs at most a cache miss, never a wrong answer.

>>> specs = column_specs_from_schema({
...     "dimensionFieldSpecs": [{"name": "country", "dataType": "STRING"},
...                             {"name": "tags", "dataType": "STRING", "singleValueField": False}],
...     "metricFieldSpecs": [{"name": "clicks", "dataType": "LONG"}],
...     "dateTimeFieldSpecs": [{"name": "ts", "dataType": "TIMESTAMP", "format": "TIMESTAMP"}]})
>>> specs["tags"].single_value, specs["ts"].data_type
(False, <DataType.TIMESTAMP: 'TIMESTAMP'>)
>>> [normalise_literal(v, DataType.LONG) for v in (5, 5.0, "5", 5.5, "5.0")]
[5, 5, 5, 5.5, '5.0']
>>> normalise_literal("2024-01-01 00:00:00", DataType.TIMESTAMP), normalise_literal(7, DataType.STRING)
(1704067200000, '7')
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any

from workbench.pinot.sql.query import Literal, LiteralValue

__all__ = ["ColumnSpec", "DataType", "Schema", "column_specs_from_schema", "normalise_literal"]


class DataType(Enum):
    """Pinot's stored data types (``FieldSpec.DataType``) that filters compare literals against."""

    INT = "INT"
    LONG = "LONG"
    FLOAT = "FLOAT"
    DOUBLE = "DOUBLE"
    BIG_DECIMAL = "BIG_DECIMAL"
    BOOLEAN = "BOOLEAN"
    TIMESTAMP = "TIMESTAMP"
    STRING = "STRING"
    JSON = "JSON"
    BYTES = "BYTES"

    @property
    def is_integral(self) -> bool:
        """True for types whose values are whole numbers (so ``x > 2`` is ``x >= 3``)."""
        return self in _INTEGRAL

    @property
    def is_numeric(self) -> bool:
        """True for types whose normalised literals compare as Python numbers."""
        return self in _INTEGRAL or self in (DataType.FLOAT, DataType.DOUBLE)


_INTEGRAL = frozenset({DataType.INT, DataType.LONG, DataType.TIMESTAMP})


@dataclass(frozen=True)
class ColumnSpec:
    """What the canonicaliser needs to know about a column: its stored type and whether it is
    single-valued (range merging and NOT push-down are only exact on single-value columns)."""

    data_type: DataType
    single_value: bool = True


#: Column name -> spec. Columns not in the mapping are treated as unknown: literals stay as written.
Schema = Mapping[str, ColumnSpec]

_FIELD_SPEC_SECTIONS = ("dimensionFieldSpecs", "metricFieldSpecs", "dateTimeFieldSpecs", "complexFieldSpecs")


def column_specs_from_schema(schema: Mapping[str, Any]) -> dict[str, ColumnSpec]:
    """Read column types from a Pinot schema JSON (field-spec sections and the legacy ``timeFieldSpec``).

    Unknown data types (``MAP``, ``LIST``, ``STRUCT``, ``UNKNOWN``) are skipped, which leaves their
    literals unnormalised.
    """
    specs: dict[str, ColumnSpec] = {}
    for section in _FIELD_SPEC_SECTIONS:
        for field in schema.get(section) or ():
            _add_spec(specs, field.get("name"), field.get("dataType"), field.get("singleValueField", True))
    legacy = schema.get("timeFieldSpec") or {}
    granularity = legacy.get("outgoingGranularitySpec") or legacy.get("incomingGranularitySpec") or {}
    _add_spec(specs, granularity.get("name"), granularity.get("dataType"), True)
    return specs


def _add_spec(specs: dict[str, ColumnSpec], name: object, data_type: object, single: object) -> None:
    if isinstance(name, str) and str(data_type).upper() in DataType.__members__:
        specs[name] = ColumnSpec(DataType[str(data_type).upper()], bool(single))


# -- literal normalisers, one per data type ------------------------------------------------------

_INTEGER_TEXT = re.compile(r"^[+-]?\d+$")
_DECIMAL_TEXT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_HEX_TEXT = re.compile(r"^([0-9a-fA-F]{2})*$")


def _is_number(value: LiteralValue) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _to_integral(value: LiteralValue) -> LiteralValue:
    """INT/LONG: integral numbers become ints (Pinot's numerical filter rewrite); digit strings too."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER_TEXT.match(value):
        return int(value)
    return value


def _to_double(value: LiteralValue) -> LiteralValue:
    """DOUBLE: any number or decimal text becomes the double Pinot parses it to."""
    if _is_number(value):
        return float(value)  # type: ignore[arg-type]
    if isinstance(value, str) and _DECIMAL_TEXT.match(value.strip()):
        return float(value)
    return value


def _to_float32(value: LiteralValue) -> LiteralValue:
    """FLOAT: the value rounded to single precision, as ``Float.parseFloat`` would store it."""
    double = _to_double(value)
    if not isinstance(double, float):
        return double
    try:
        single: float = struct.unpack("<f", struct.pack("<f", double))[0]
    except OverflowError:
        return value
    return single if math.isfinite(single) else value


def _to_big_decimal(value: LiteralValue) -> LiteralValue:
    """BIG_DECIMAL: the number without trailing zeros ('1.50' and 1.5 compare equal in Pinot)."""
    if not (_is_number(value) or isinstance(value, str)):
        return value
    try:
        number = Decimal(Literal(value).to_pinot_string().strip())
    except InvalidOperation:
        return value
    return format(number.normalize(), "f") if number.is_finite() else value


_TRUE_SPELLINGS = frozenset({"true", "1"})
_FALSE_SPELLINGS = frozenset({"false", "0"})


def _to_boolean(value: LiteralValue) -> LiteralValue:
    """BOOLEAN: TRUE, 'true' (any case), 1 and '1' are true; the matching false spellings are false."""
    if value is None or isinstance(value, bool):
        return value
    text = Literal(value).to_pinot_string().lower() if isinstance(value, int | str) else None
    if text in _TRUE_SPELLINGS:
        return True
    return False if text in _FALSE_SPELLINGS else value


def _to_timestamp(value: LiteralValue) -> LiteralValue:
    """TIMESTAMP: epoch millis; ISO-8601 text is read in UTC when it has no offset.

    Pinot's ``TimestampUtils`` reads offset-free text in the JVM's default time zone; Pinot servers
    normally run in UTC, which is the assumption here.
    """
    integral = _to_integral(value)
    if not isinstance(integral, str):
        return integral
    try:
        parsed = datetime.fromisoformat(integral.strip())
    except ValueError:
        return value
    moment = parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def _to_text(value: LiteralValue) -> LiteralValue:
    """STRING/JSON: every literal is compared as the text Pinot prints it as (5 and '5' are one value)."""
    return value if value is None else Literal(value).to_pinot_string()


def _to_bytes(value: LiteralValue) -> LiteralValue:
    """BYTES: hex text, lower-cased (Pinot parses hex case-insensitively)."""
    return value.lower() if isinstance(value, str) and _HEX_TEXT.match(value) else value


_NORMALISERS: dict[DataType, Callable[[LiteralValue], LiteralValue]] = {
    DataType.INT: _to_integral,
    DataType.LONG: _to_integral,
    DataType.TIMESTAMP: _to_timestamp,
    DataType.FLOAT: _to_float32,
    DataType.DOUBLE: _to_double,
    DataType.BIG_DECIMAL: _to_big_decimal,
    DataType.BOOLEAN: _to_boolean,
    DataType.STRING: _to_text,
    DataType.JSON: _to_text,
    DataType.BYTES: _to_bytes,
}


def normalise_literal(value: LiteralValue, data_type: DataType) -> LiteralValue:
    """The literal as a column of ``data_type`` stores it, or unchanged when that is uncertain."""
    return _NORMALISERS[data_type](value)
