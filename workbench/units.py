"""Parsing of human-friendly sizes ("512MB", "2G") and durations ("30s", "5m").

Sizes are binary (1K = 1024 bytes), as the JVM's ``-Xmx`` and Pinot's size configs read them.
Durations return seconds as a float; Pinot's own ``metadataTTL`` is a number in the comparison
column's unit and is therefore *not* parsed here.

>>> parse_size("512MB")
536870912
>>> parse_size("2G")
2147483648
>>> parse_duration("5m")
300.0
>>> parse_duration("250ms")
0.25
"""

from __future__ import annotations

import math
import re

__all__ = ["parse_duration", "parse_size"]

_SIZE_UNITS = {
    "": 1, "B": 1,
    "K": 1024, "KB": 1024, "KIB": 1024,
    "M": 1024**2, "MB": 1024**2, "MIB": 1024**2,
    "G": 1024**3, "GB": 1024**3, "GIB": 1024**3,
    "T": 1024**4, "TB": 1024**4, "TIB": 1024**4,
}
_DURATION_UNITS = {
    "us": 1e-6, "ms": 1e-3, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0,
    "h": 3600.0, "d": 86400.0,
}
_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_size(value: object) -> int:
    """Return a byte count from an int or a string such as ``"512MB"`` or ``"2G"``.

    Raises ``ValueError`` with the allowed forms when the value cannot be read.
    """
    if isinstance(value, bool):
        raise ValueError(f"must be a size such as 512MB or 2G, got {value!r}")
    if isinstance(value, int | float):
        number, unit = float(value), ""
    elif isinstance(value, str) and (m := _NUMBER.match(value)):
        number, unit = float(m.group(1)), m.group(2).upper()
    else:
        raise ValueError(f"must be a size such as 512MB or 2G, got {value!r}")
    if not math.isfinite(number):
        raise ValueError(f"must be a finite size such as 512MB or 2G, got {value!r}")
    if unit not in _SIZE_UNITS:
        raise ValueError(f"unknown size unit {unit!r} in {value!r}; use B, K/KB, M/MB, G/GB or T/TB")
    if number < 0:
        raise ValueError(f"must not be negative, got {value!r}")
    return round(number * _SIZE_UNITS[unit])


def parse_duration(value: object) -> float:
    """Return seconds from a number (already seconds) or a string such as ``"30s"``, ``"5m"``, ``"1h"``."""
    if isinstance(value, bool):
        raise ValueError(f"must be a duration such as 30s or 5m, got {value!r}")
    if isinstance(value, int | float):
        number, unit = float(value), "s"
    elif isinstance(value, str) and (m := _NUMBER.match(value)):
        number, unit = float(m.group(1)), (m.group(2) or "s")
    else:
        raise ValueError(f"must be a duration such as 30s or 5m, got {value!r}")
    if not math.isfinite(number):
        raise ValueError(f"must be a finite duration such as 30s or 5m, got {value!r}")
    if unit not in _DURATION_UNITS:
        raise ValueError(f"unknown duration unit {unit!r} in {value!r}; use us, ms, s, m, h or d")
    if number < 0:
        raise ValueError(f"must not be negative, got {value!r}")
    return number * _DURATION_UNITS[unit]
