"""Pinot ``DateTimeFieldSpec`` formats: turning a time-column literal into epoch millis.

The time pruner compares filter literals with segment ranges in millis, so it needs the time column's
format from the schema, exactly as Pinot's ``DateTimeFormatSpec.fromFormatToMillis`` uses it. Both
spellings Pinot accepts are read:

* pipe form: ``EPOCH|MILLISECONDS[|size]``, ``SIMPLE_DATE_FORMAT|yyyyMMdd[|zone]``, ``TIMESTAMP``;
* colon form: ``1:DAYS:EPOCH``, ``1:DAYS:SIMPLE_DATE_FORMAT:yyyyMMdd[ tz(zone)]``,
  ``1:MILLISECONDS:TIMESTAMP``.

>>> DateTimeFormat.parse("EPOCH|DAYS").to_millis("2")
172800000
>>> DateTimeFormat.parse("1:DAYS:SIMPLE_DATE_FORMAT:yyyyMMdd").to_millis("20200102")
1577923200000
>>> DateTimeFormat.parse("SIMPLE_DATE_FORMAT|yyyy-MM-dd HH:mm|America/New_York").to_millis("2020-01-01 00:00")
1577854800000

Simple-date patterns are translated from Joda letters (``y M d H h a m s S Z E`` and quoted text);
two-digit years pivot at 2000 (``00``-``49`` -> 20xx, ``50``-``99`` -> 19xx). TIMESTAMP strings are read
as ISO-8601 in UTC, or as a plain count of millis; Pinot reads them in the JVM's zone, which is UTC on
the usual server images.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import numpy.typing as npt

from workbench.errors import InputError
from workbench.pinot.segment import time_unit_to_millis

__all__ = ["DateTimeFormat", "granularity_millis"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)
_LONG = re.compile(r"^[+-]?\d+$")
_TZ_SUFFIX = re.compile(r"^(?P<pattern>.*?)\s*tz\((?P<zone>[^)]*)\)\s*$")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_NUMERIC = frozenset("yMdHhmsS")


def _parse_long(text: str) -> int:
    """Java ``Long.parseLong``: optional sign and decimal digits, nothing else."""
    if not _LONG.match(text):
        raise ValueError(f"not a long: {text!r}")
    return int(text)


# -- simple date format --------------------------------------------------------------------------


def _field_regex(letter: str, count: int, adjacent_numeric: bool) -> str:
    if letter == "M" and count >= 3:
        return r"[A-Za-z]+"
    if letter in _NUMERIC:
        return rf"\d{{{count}}}" if adjacent_numeric else r"\d+"
    if letter == "a":
        return r"[AaPp][Mm]"
    if letter == "E":
        return r"[A-Za-z]+"
    if letter == "Z":
        return r"Z|[+-]\d{2}:?\d{2}"
    raise ValueError(f"pattern letter {letter!r} is not supported")


def _pattern_parts(pattern: str) -> list[tuple[str, int] | str]:
    """Split a Joda pattern into ``(letter, count)`` fields and literal strings."""
    parts: list[tuple[str, int] | str] = []
    for match in re.finditer(r"'([^']*)'|([A-Za-z])\2*|.", pattern):
        if match.group(1) is not None:
            parts.append(match.group(1) or "'")
        elif match.group(2):
            parts.append((match.group(2), len(match.group())))
        else:
            parts.append(match.group())
    return parts


def _is_numeric(part: tuple[str, int] | str | None) -> bool:
    return isinstance(part, tuple) and part[0] in _NUMERIC and not (part[0] == "M" and part[1] >= 3)


def _compile_pattern(pattern: str) -> tuple[re.Pattern[str], list[tuple[str, int]]]:
    parts = _pattern_parts(pattern)
    regex, fields = [], []
    for i, part in enumerate(parts):
        if isinstance(part, str):
            regex.append(re.escape(part))
            continue
        neighbours = (parts[i - 1] if i else None, parts[i + 1] if i + 1 < len(parts) else None)
        adjacent = _is_numeric(part) and any(_is_numeric(n) for n in neighbours)
        regex.append(f"({_field_regex(part[0], part[1], adjacent)})")
        fields.append(part)
    return re.compile("".join(regex)), fields


def _two_digit_year(text: str, count: int) -> int:
    year = int(text)
    if count == 2 and len(text) <= 2:
        return 2000 + year if year < 50 else 1900 + year
    return year


def _month(text: str) -> int:
    if text.isdigit():
        return int(text)
    key = text[:3].lower()
    if key not in _MONTHS:
        raise ValueError(f"unknown month name {text!r}")
    return _MONTHS.index(key) + 1


def _offset(text: str) -> timedelta:
    if text == "Z":
        return timedelta(0)
    digits = text[1:].replace(":", "")
    delta = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return delta if text[0] == "+" else -delta


@dataclass
class _Fields:
    year: int = 1970
    month: int = 1
    day: int = 1
    hour: int = 0
    minute: int = 0
    second: int = 0
    millis: int = 0
    pm: bool | None = None
    offset: timedelta | None = None


_FIELD_SETTERS: dict[str, Callable[[_Fields, str, int], None]] = {
    "y": lambda f, t, n: setattr(f, "year", _two_digit_year(t, n)),
    "M": lambda f, t, n: setattr(f, "month", _month(t)),
    "d": lambda f, t, n: setattr(f, "day", int(t)),
    "H": lambda f, t, n: setattr(f, "hour", int(t)),
    "h": lambda f, t, n: setattr(f, "hour", int(t) % 12),
    "m": lambda f, t, n: setattr(f, "minute", int(t)),
    "s": lambda f, t, n: setattr(f, "second", int(t)),
    "S": lambda f, t, n: setattr(f, "millis", int((t + "00")[:3])),
    "a": lambda f, t, n: setattr(f, "pm", t.lower() == "pm"),
    "E": lambda f, t, n: None,
    "Z": lambda f, t, n: setattr(f, "offset", _offset(t)),
}


@dataclass(frozen=True)
class _SimpleDateParser:
    pattern: str
    zone: str
    _compiled: tuple[re.Pattern[str], list[tuple[str, int]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", _compile_pattern(self.pattern))

    def to_millis(self, text: str) -> int:
        regex, fields = self._compiled
        match = regex.fullmatch(text.strip())
        if match is None:
            raise ValueError(f"{text!r} does not match the pattern {self.pattern!r}")
        values = _Fields()
        for (letter, count), value in zip(fields, match.groups(), strict=True):
            _FIELD_SETTERS[letter](values, value, count)
        return self._instant(values)

    def _instant(self, f: _Fields) -> int:
        hour = f.hour + (12 if f.pm else 0)
        zone = ZoneInfo(self.zone) if f.offset is None else UTC
        moment = datetime(f.year, f.month, f.day, hour, f.minute, f.second, f.millis * 1000, tzinfo=zone)
        moment -= f.offset or timedelta(0)
        return (moment - _EPOCH) // _ONE_MS


_QUARTER_HOUR_MS = 900_000
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")


def _format_field(letter: str, count: int, moment: datetime) -> str:
    """One Joda pattern field of ``moment`` (already in the pattern's zone), as Joda prints it."""
    numbers = {"y": moment.year, "d": moment.day, "H": moment.hour, "h": (moment.hour % 12) or 12,
               "m": moment.minute, "s": moment.second}
    if letter == "y" and count == 2:
        return f"{moment.year % 100:02d}"
    if letter in numbers:
        return f"{numbers[letter]:0{count}d}"
    if letter == "M":
        name = _MONTH_NAMES[moment.month - 1]
        return f"{moment.month:0{count}d}" if count < 3 else (name[:3] if count == 3 else name)
    if letter == "S":
        return f"{moment.microsecond // 1000:03d}"[:count].ljust(count, "0")
    if letter == "a":
        return "PM" if moment.hour >= 12 else "AM"
    if letter == "E":
        name = _DAY_NAMES[moment.weekday()]
        return name[:3] if count <= 3 else name
    if letter == "Z":
        offset = moment.utcoffset() or timedelta(0)
        minutes = int(offset.total_seconds() // 60)
        sign, minutes = ("+" if minutes >= 0 else "-"), abs(minutes)
        return f"{sign}{minutes // 60:02d}{':' if count == 2 else ''}{minutes % 60:02d}"
    raise ValueError(f"pattern letter {letter!r} is not supported")


def _format_instant(pattern: str, moment: datetime, zone: ZoneInfo) -> str:
    local = moment.astimezone(zone)
    return "".join(p if isinstance(p, str) else _format_field(p[0], p[1], local) for p in _pattern_parts(pattern))


def granularity_millis(text: str) -> int:
    """A ``dateTimeFieldSpecs`` granularity (``1:DAYS``, ``15:MINUTES`` or ``DAYS|1``) in ms; 1 when empty.

    >>> granularity_millis("15:MINUTES"), granularity_millis("DAYS|1"), granularity_millis("")
    (900000, 86400000, 1)
    """
    if not text.strip():
        return 1
    if ":" in text:
        size, unit = text.split(":", 1)
    else:
        unit, size = [*text.split("|"), "1"][:2]
    try:
        return max(1, time_unit_to_millis(int(size.strip()), unit.strip()))
    except ValueError:
        raise InputError("granularity", f"cannot read the granularity {text!r}; e.g. 1:MILLISECONDS or 1:DAYS"
                         ) from None


# -- the format spec ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DateTimeFormat:
    """A time column's format, as Pinot's schema ``dateTimeFieldSpecs[].format`` states it.

    Parameters
    ----------
    kind
        ``EPOCH``, ``SIMPLE_DATE_FORMAT`` or ``TIMESTAMP``.
    size, unit
        For EPOCH: a value v means ``v * size`` units since the epoch (``unit`` a Java TimeUnit name).
    pattern, zone
        For SIMPLE_DATE_FORMAT: the Joda pattern and the zone its wall-clock times are in.
    """

    kind: str
    size: int = 1
    unit: str = "MILLISECONDS"
    pattern: str = ""
    zone: str = "UTC"
    _parser: _SimpleDateParser | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in _TO_MILLIS:
            allowed = ", ".join(_TO_MILLIS)
            raise InputError("format", f"unknown time format {self.kind!r}; use one of {allowed}")
        time_unit_to_millis(0, self.unit)  # validates the unit name
        if self.kind == "SIMPLE_DATE_FORMAT":
            object.__setattr__(self, "_parser", _checked_parser(self.pattern, self.zone))

    @classmethod
    def parse(cls, text: str) -> DateTimeFormat:
        """Read a format string in either the pipe or the colon form (see the module docs)."""
        head = text.split(":", 1)[0].strip()
        return _parse_colon(text) if head.isdigit() else _parse_pipe(text)

    @classmethod
    def for_field(cls, text: str, data_type: str | None = None) -> DateTimeFormat:
        """The format Pinot uses for a ``dateTimeFieldSpecs`` entry: a TIMESTAMP column is read as
        TIMESTAMP whatever format string it declares (Pinot's ``SegmentPrunerTest`` declares
        ``EPOCH|MILLISECONDS`` on one and queries it with ``'2020-01-31 00:00:00'``).

        >>> DateTimeFormat.for_field("EPOCH|MILLISECONDS", "TIMESTAMP").kind
        'TIMESTAMP'
        """
        if data_type is not None and data_type.upper() == "TIMESTAMP":
            return cls("TIMESTAMP")
        return cls.parse(text)

    def to_millis(self, value: str) -> int:
        """Epoch millis of a value written in this format; ``ValueError`` if it does not parse."""
        return _TO_MILLIS[self.kind](self, value.strip())

    @property
    def granule_ms(self) -> int:
        """The step between two values of the column, in ms: ``size`` units for EPOCH (a day for
        ``1:DAYS:EPOCH``), the finest field of a SIMPLE_DATE_FORMAT pattern (a day for ``yyyyMMdd``), 1 ms
        for TIMESTAMP. A segment's values sit on this grid, which is what a share of its range means.

        >>> [DateTimeFormat.parse(f).granule_ms for f in ("1:DAYS:EPOCH", "SIMPLE_DATE_FORMAT|yyyyMMddHH")]
        [86400000, 3600000]
        """
        if self.kind == "EPOCH":
            return max(1, time_unit_to_millis(self.size, self.unit))
        if self.kind == "SIMPLE_DATE_FORMAT":
            return min((ms for letter, ms in _FIELD_MS.items() if letter in self.pattern), default=_DAY_MS)
        return 1

    def floor_millis(self, millis: npt.NDArray[np.int64], granularity_ms: int = 1) -> npt.NDArray[np.int64]:
        """Epoch millis the column's values stand for: ``millis`` floored to the column's granularity and
        to its format's step (what writing each value in this format and reading it back gives).

        >>> DateTimeFormat.parse("1:DAYS:EPOCH").floor_millis(np.array([86_400_001, 86_399_999])).tolist()
        [86400000, 0]
        """
        step = max(1, granularity_ms)
        floored = np.floor_divide(millis, step) * step
        if self.kind == "SIMPLE_DATE_FORMAT":
            texts = self.format_millis(floored)
            return np.asarray([self.to_millis(t) for t in texts], dtype=np.int64)
        grain = self.granule_ms
        out: npt.NDArray[np.int64] = np.floor_divide(floored, grain) * grain
        return out

    def format_millis(self, millis: npt.NDArray[np.int64]) -> npt.NDArray[Any]:
        """The column values of epoch millis ``millis`` in this format: EPOCH counts of ``size`` units
        (floored, as Pinot's ``fromMillisToFormat``), TIMESTAMP millis, SIMPLE_DATE_FORMAT strings in the
        pattern's zone. The inverse of :meth:`to_millis` on the format's grid.

        >>> DateTimeFormat.parse("1:DAYS:EPOCH").format_millis(np.array([1767225600000])).tolist()
        [20454]
        >>> day = DateTimeFormat.parse("1:DAYS:SIMPLE_DATE_FORMAT:yyyy-MM-dd")
        >>> day.format_millis(np.array([1767225600000])).tolist()
        ['2026-01-01']
        """
        millis = np.asarray(millis, dtype=np.int64)
        if self.kind == "EPOCH":
            return np.floor_divide(millis, max(1, time_unit_to_millis(self.size, self.unit)))
        if self.kind == "TIMESTAMP":
            return millis
        grid = min(self.granule_ms, _QUARTER_HOUR_MS)  # every zone's offset is a multiple of 15 minutes
        cells, inverse = np.unique(np.floor_divide(millis, grid), return_inverse=True)
        zone = ZoneInfo(self.zone)
        texts = [_format_instant(self.pattern, _EPOCH + timedelta(milliseconds=int(c) * grid), zone)
                 for c in cells.tolist()]
        return np.asarray(texts, dtype=object)[inverse.ravel()]

    def simple_date_millis(self, value: str) -> int:
        """Epoch millis of a SIMPLE_DATE_FORMAT value (``ValueError`` for other kinds)."""
        if self._parser is None:
            raise ValueError(f"{self.kind} is not a SIMPLE_DATE_FORMAT format")
        return self._parser.to_millis(value)


def _checked_parser(pattern: str, zone: str) -> _SimpleDateParser:
    try:
        ZoneInfo(zone)
        return _SimpleDateParser(pattern, zone)
    except ZoneInfoNotFoundError:
        raise InputError("format", f"unknown time zone {zone!r}") from None
    except ValueError as exc:
        raise InputError("format", f"simple date pattern {pattern!r}: {exc}") from None


def _epoch_millis(fmt: DateTimeFormat, value: str) -> int:
    return time_unit_to_millis(_parse_long(value) * fmt.size, fmt.unit)


def _simple_date_millis(fmt: DateTimeFormat, value: str) -> int:
    return fmt.simple_date_millis(value)


def _timestamp_millis(fmt: DateTimeFormat, value: str) -> int:
    if _LONG.match(value):
        return int(value)
    moment = datetime.fromisoformat(value.replace(" ", "T", 1))
    return (moment.replace(tzinfo=moment.tzinfo or UTC) - _EPOCH) // _ONE_MS


_DAY_MS = 86_400_000
#: The step of each Joda pattern letter's field, in ms (letters coarser than a day step a day at most).
_FIELD_MS = {"S": 1, "s": 1000, "m": 60_000, "H": 3_600_000, "h": 3_600_000, "k": 3_600_000, "K": 3_600_000,
             "d": _DAY_MS, "D": _DAY_MS, "E": _DAY_MS, "M": _DAY_MS, "y": _DAY_MS}

_TO_MILLIS: dict[str, Callable[[DateTimeFormat, str], int]] = {
    "EPOCH": _epoch_millis,
    "SIMPLE_DATE_FORMAT": _simple_date_millis,
    "TIMESTAMP": _timestamp_millis,
}


def _bad_format(text: str) -> InputError:
    return InputError(
        "format",
        f"cannot read the time format {text!r}; e.g. EPOCH|MILLISECONDS, "
        "SIMPLE_DATE_FORMAT|yyyyMMdd, TIMESTAMP or 1:DAYS:EPOCH",
    )


def _parse_pipe(text: str) -> DateTimeFormat:
    tokens = [t.strip() for t in text.split("|")]
    kind = tokens[0].upper()
    if kind == "EPOCH" and len(tokens) <= 3:
        size = int(tokens[2]) if len(tokens) == 3 and tokens[2].isdigit() else 1
        return DateTimeFormat("EPOCH", size=size, unit=(tokens[1:2] or ["MILLISECONDS"])[0].upper())
    if kind == "SIMPLE_DATE_FORMAT" and 2 <= len(tokens) <= 3:
        return DateTimeFormat(kind, pattern=tokens[1], zone=(tokens[2:3] or ["UTC"])[0])
    if kind == "TIMESTAMP" and len(tokens) == 1:
        return DateTimeFormat(kind)
    raise _bad_format(text)


def _parse_colon(text: str) -> DateTimeFormat:
    tokens = text.split(":", 3)
    if len(tokens) < 3:
        raise _bad_format(text)
    size, unit, kind = int(tokens[0]), tokens[1].strip().upper(), tokens[2].strip().upper()
    if kind == "SIMPLE_DATE_FORMAT" and len(tokens) == 4:
        match = _TZ_SUFFIX.match(tokens[3])
        pattern, zone = (match["pattern"], match["zone"]) if match else (tokens[3], "UTC")
        return DateTimeFormat(kind, size=size, unit=unit, pattern=pattern.strip(), zone=zone.strip())
    if kind in ("EPOCH", "TIMESTAMP") and len(tokens) == 3:
        return DateTimeFormat(kind, size=size, unit=unit)
    raise _bad_format(text)
