"""How Pinot turns a column value into the string its partition function sees.

Every Pinot partition function takes the *string form* of a value (reference section 1.3), and
that form follows Java, not Python: ``Double.toString`` prints ``1.0E7`` where ``str`` prints
``10000000.0``, and BYTES are lower-case hex. Getting this wrong silently sends rows to the wrong
partition, so the conversion is spelled out per data type here:

==============================  =====================================================
Pinot data type (Python value)  string hashed
==============================  =====================================================
INT, LONG, TIMESTAMP (``int``)  decimal, ``-`` for negatives
FLOAT (``numpy.float32``)       Java ``Float.toString`` (never widened to double first)
DOUBLE (``float``)              Java ``Double.toString``
BIG_DECIMAL (``Decimal``)       ``toPlainString``: no exponent, scale kept, no ``-0``
BOOLEAN (``bool``)              ``1``/``0``: Pinot stores BOOLEAN as INT
STRING, JSON (``str``)          as-is
BYTES (``bytes``)               lower-case hex
==============================  =====================================================

Without ``data_type`` the Python type decides (table above, right to left). Nulls are rejected:
Pinot never partitions a null, it substitutes the column's ``defaultNullValue`` first.

>>> [to_pinot_string(v) for v in (42, 1e7, np.float32(0.1), Decimal("1E+3"), True, b"\\x01\\xab")]
['42', '1.0E7', '0.1', '1000', '1', '01ab']
>>> to_pinot_strings(np.array([1.5, 2.0, 1.5e-7]))
['1.5', '2.0', '1.5E-7']
>>> to_pinot_string("0.1", data_type="FLOAT"), to_pinot_string("TRUE", data_type="BOOLEAN")
('0.1', '1')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

import numpy as np
from numpy.typing import NDArray

from workbench.errors import InputError
from workbench.pinot.partition.batch import UnitBatch, decode_hex
from workbench.pinot.partition.javafloat import java_double_to_string, java_float_to_string

__all__ = [
    "DATA_TYPES",
    "Values",
    "parse_java_long",
    "to_java_longs",
    "to_pinot_string",
    "to_pinot_strings",
    "to_utf8_batch",
]

#: What ``get_partitions`` accepts: a list or tuple, a numpy array, or a pandas Series/Index.
Values = Iterable[Any] | NDArray[Any]

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
_JAVA_INTEGER = re.compile(r"[+-]?\d+")  # Java's Character.digit accepts any Unicode decimal digit


def parse_java_long(text: str, where: str = "value") -> int:
    """Parse ``text`` the way Java's ``Long.parseLong`` does (sign, digits, 64-bit range; nothing else).

    >>> parse_java_long("-42"), parse_java_long("+7")
    (-42, 7)
    >>> parse_java_long("1.5")
    Traceback (most recent call last):
    ...
    workbench.errors.InputError: value: NumberFormatException: For input string: "1.5"
    """
    if _JAVA_INTEGER.fullmatch(text):
        value = int(text)
        if LONG_MIN <= value <= LONG_MAX:
            return value
    raise InputError(where, f'NumberFormatException: For input string: "{text}"')


# -- one value -----------------------------------------------------------------------------------------
def _integral(value: Any) -> str:
    if isinstance(value, str):
        return str(parse_java_long(value))
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise InputError("value", f"expected an integer, got {value!r}")
    return str(int(value))


def _plain_decimal(value: Any) -> str:
    try:
        number = value if isinstance(value, Decimal) else Decimal(repr(value) if isinstance(value, float) else value)
    except (TypeError, ValueError, ArithmeticError):
        raise InputError("value", f"not a BIG_DECIMAL: {value!r}") from None
    if not number.is_finite():
        raise InputError("value", f"BIG_DECIMAL cannot hold {value!r}")
    return format(abs(number) if number.is_zero() else number, "f")  # Java has no negative zero


def _boolean(value: Any) -> str:
    if isinstance(value, str):  # Pinot BooleanUtils: "true" in any case, or "1"
        return "1" if value.lower() == "true" or value == "1" else "0"
    return "1" if value else "0"


def _hex(value: Any) -> str:
    return (decode_hex(value, where="value") if isinstance(value, str) else bytes(value)).hex()


def _string(value: Any) -> str:
    return value if isinstance(value, str) else _by_python_type(value)


_BY_DATA_TYPE: dict[str, Callable[[Any], str]] = {
    "INT": _integral,
    "LONG": _integral,
    "TIMESTAMP": _integral,
    "FLOAT": lambda v: java_float_to_string(float(v)),
    "DOUBLE": lambda v: java_double_to_string(float(v)),
    "BIG_DECIMAL": _plain_decimal,
    "BOOLEAN": _boolean,
    "STRING": _string,
    "JSON": _string,
    "BYTES": _hex,
}

#: Pinot data types accepted as ``data_type``.
DATA_TYPES = tuple(_BY_DATA_TYPE)

# Looked up along the value's MRO, so subclasses (numpy scalars, ``np.str_``) find their family.
_BY_PYTHON_TYPE: dict[type, Callable[[Any], str]] = {
    str: str,
    bool: _boolean,
    np.bool_: _boolean,
    int: _integral,
    np.integer: _integral,
    np.float32: java_float_to_string,
    np.float16: java_float_to_string,
    float: java_double_to_string,
    np.floating: java_double_to_string,
    Decimal: _plain_decimal,
    bytes: _hex,
    bytearray: _hex,
    memoryview: _hex,
}


def _by_python_type(value: Any) -> str:
    for klass in type(value).__mro__:
        formatter = _BY_PYTHON_TYPE.get(klass)
        if formatter is not None:
            return formatter(value)
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        raise InputError("value", "null: Pinot partitions the column's defaultNullValue, fill nulls first")
    raise InputError("value", f"cannot partition a {type(value).__name__} value ({value!r})")


def _formatter(data_type: str | None) -> Callable[[Any], str]:
    if data_type is None:
        return _by_python_type
    try:
        return _BY_DATA_TYPE[data_type.upper()]
    except KeyError:
        raise InputError("data_type", f"must be one of {', '.join(DATA_TYPES)}, got {data_type!r}") from None


def _convert(formatter: Callable[[Any], str], items: Iterable[Any]) -> list[str]:
    """Apply ``formatter``; Python's own parse errors (``float("x")``) become :class:`InputError`."""
    try:
        return [formatter(v) for v in items]
    except InputError:
        raise
    except (TypeError, ValueError, ArithmeticError) as error:  # decimal.InvalidOperation is arithmetic
        raise InputError("value", f"cannot convert to the Pinot data type: {error}") from None


def to_pinot_string(value: Any, data_type: str | None = None) -> str:
    """The string Pinot's partition function receives for ``value`` (see the module table).

    Parameters
    ----------
    value
        A column value. ``None`` is rejected (Pinot substitutes the default null value first).
    data_type
        Pinot data type (``"INT"``, ``"FLOAT"``, ...); when omitted the Python type decides.
    """
    return _convert(_formatter(data_type), [value])[0]


# -- many values ---------------------------------------------------------------------------------------
def _float_strings(array: NDArray[Any], single: bool) -> list[str]:
    """Format each *distinct bit pattern* once (so ``-0.0`` stays apart from ``0.0``), then expand."""
    array = array.astype(np.float32 if single else np.float64)
    bits, inverse = np.unique(array.view(np.uint32 if single else np.uint64), return_inverse=True)
    fmt = java_float_to_string if single else java_double_to_string
    formatted = [fmt(x) for x in bits.view(array.dtype)]
    return [formatted[i] for i in inverse.ravel()]


def _array_strings(array: NDArray[Any], data_type: str | None) -> list[str] | None:
    """Fast paths for numpy arrays whose dtype already says how to format; ``None`` if there is none."""
    kind, dtype = array.dtype.kind, (data_type or "").upper()
    if kind == "U" and dtype in ("", "STRING", "JSON"):
        return array.tolist()  # type: ignore[no-any-return]
    if kind in "iu" and dtype in ("", "INT", "LONG", "TIMESTAMP"):
        return array.astype(str).tolist()  # type: ignore[no-any-return]
    if kind == "f" and dtype in ("", "FLOAT", "DOUBLE"):
        return _float_strings(array, single=dtype == "FLOAT" or (not dtype and array.itemsize < 8))
    if kind == "b" and dtype in ("", "BOOLEAN"):
        return np.where(array, "1", "0").tolist()  # type: ignore[no-any-return]
    return None


def _as_array_or_list(values: Values) -> NDArray[Any] | list[Any]:
    to_numpy = getattr(values, "to_numpy", None)  # pandas Series / Index
    if callable(to_numpy):
        return to_numpy()  # type: ignore[no-any-return]
    return values if isinstance(values, np.ndarray) else list(values)


def to_pinot_strings(values: Values, data_type: str | None = None) -> list[str]:
    """:func:`to_pinot_string` of every value, with numpy fast paths (floats are formatted once each).

    >>> to_pinot_strings(np.array([-0.0, 0.0], dtype=np.float32)), to_pinot_strings(["a", 7])
    (['-0.0', '0.0'], ['a', '7'])
    """
    items = _as_array_or_list(values)
    if isinstance(items, np.ndarray):
        fast = _array_strings(items.ravel(), data_type)
        if fast is not None:
            return fast
        items = items.ravel().tolist()
    if data_type is None and set(map(type, items)) <= {str}:  # C-speed check of the common case
        return items
    return _convert(_formatter(data_type), items)


def to_utf8_batch(values: Values, data_type: str | None = None) -> UnitBatch:
    """The Java UTF-8 bytes of every value's Pinot string, packed for the hash kernels.

    Integer and ASCII-text numpy arrays skip Python strings entirely (numpy writes the digits).
    """
    items = _as_array_or_list(values)
    if isinstance(items, np.ndarray) and (data_type or "").upper() in ("", "INT", "LONG", "TIMESTAMP", "STRING"):
        if items.dtype.kind in "iu" and (data_type or "").upper() != "STRING":
            return UnitBatch.from_fixed_width(items.ravel().astype("S"))
        if items.dtype.kind == "U":
            try:
                return UnitBatch.from_fixed_width(items.ravel().astype("S"))
            except UnicodeEncodeError:  # non-ASCII text: take the general path
                pass
    return UnitBatch.from_strings(to_pinot_strings(items, data_type))


def _parse_all(texts: list[str]) -> NDArray[np.int64]:
    """Parse decimal texts as Java longs: one regex pass over all of them, then C-level ``int``."""
    joined = "\n".join(texts)
    if joined.count("\n") == len(texts) - 1 and _JAVA_INTEGERS.fullmatch(joined):
        try:
            return np.fromiter(map(int, texts), dtype=np.int64, count=len(texts))
        except OverflowError:
            pass  # out of 64-bit range somewhere: let the scalar parser name it
    return np.array([parse_java_long(t) for t in texts], dtype=np.int64)


_JAVA_INTEGERS = re.compile(r"(?:[+-]?\d+\n)*[+-]?\d+|")


def to_java_longs(values: Values, data_type: str | None = None) -> NDArray[np.int64]:
    """Every value as the Java ``long`` that ``Long.parseLong`` makes of its Pinot string.

    Integer and boolean numpy arrays convert directly; anything else goes through the string form,
    so ``1.5`` (``"1.5"``) is rejected exactly as Pinot's Modulo rejects it.

    >>> to_java_longs(["7", -3, np.int8(2)]).tolist()
    [7, -3, 2]
    """
    items = _as_array_or_list(values)
    if isinstance(items, np.ndarray) and items.dtype.kind in "iub" and data_type is None:
        if items.dtype.kind == "u" and items.size and items.max() > LONG_MAX:
            raise InputError("value", f'NumberFormatException: For input string: "{items.max()}"')
        return items.ravel().astype(np.int64)
    return _parse_all(to_pinot_strings(items, data_type))
