"""Java's ``Double.toString`` and ``Float.toString``, as JDK 19 and later print them.

Pinot partitions FLOAT and DOUBLE columns by hashing the Java string form of each value, so the
exact digits matter: ``1.0E7`` and ``10000000.0`` hash differently. Java's rules:

* the digits are the *shortest* decimal that reads back as the same ``double`` (or ``float``; a float
  is never widened first). Among equally short candidates the one closest to the exact binary value
  wins. When a single digit would do, Java looks at two-digit candidates too and keeps the closest,
  which is why ``Double.MIN_VALUE`` prints as ``4.9E-324`` where Python prints ``5e-324``;
* plain notation for 10^-3 <= |x| < 10^7, otherwise ``d.dddE±n``; always at least one digit after
  the point (``100.0``, ``1.0E10``); ``NaN``, ``Infinity``, ``-Infinity`` and ``-0.0`` as spelled.

JDK 18 and older used a different digit generator that, for a few values, prints a longer string;
that older behaviour is not reproduced here (see the version note in :mod:`workbench.pinot.partition`).

>>> [java_double_to_string(x) for x in (1e7, 1e-4, 100.0, 0.001, 1234567.0, -0.0, 5e-324)]
['1.0E7', '1.0E-4', '100.0', '0.001', '1234567.0', '-0.0', '4.9E-324']
>>> java_float_to_string(0.1), java_float_to_string(1e10), java_float_to_string(1.4e-45)
('0.1', '1.0E10', '1.4E-45')
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["java_double_to_string", "java_float_to_string"]

_SPECIAL = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


@dataclass(frozen=True)
class _Scaled:
    """A positive value and its rounding interval, all as integers over a common power-of-two ``den``.

    Decimals strictly between ``lo`` and ``hi`` read back as the value; the bounds themselves do too
    when ``inclusive`` (the value's significand is even, so ties round to it). Integer arithmetic
    keeps every comparison exact and is much faster than ``Fraction``.
    """

    value: int
    lo: int
    hi: int
    den: int
    inclusive: bool

    @classmethod
    def of(cls, x: float, single: bool) -> _Scaled:
        """The value ``x`` (positive, finite) in ``float`` (``single``) or ``double`` precision."""
        below, above = _neighbours(x, single)
        ratios = [v.as_integer_ratio() for v in (x, below, above) if math.isfinite(v)]
        den = 2 * max(q for _, q in ratios)  # every denominator is a power of two
        value, low, *high = (p * (den // q) for p, q in ratios)
        high_value = high[0] if high else 2 * value - low  # past the largest finite value: mirror the gap
        return cls(value, (value + low) // 2, (value + high_value) // 2, den, _is_even(x, single))

    def scales(self, step: int) -> tuple[int, int]:
        """Multipliers ``(for k, for the bounds)`` that compare ``k * 10**step`` with them exactly."""
        return (10**step * self.den, 1) if step >= 0 else (self.den, 10**-step)

    def at_least_pow10(self, e: int) -> bool:
        """Whether ``value >= 10**e``."""
        for_k, for_bounds = self.scales(e)
        return self.value * for_bounds >= for_k

    def closest_on_grid(self, step: int) -> tuple[int, int] | None:
        """Closest ``(k, step)`` with ``k * 10**step`` reading back as the value (ties: even ``k``).

        Only the grid points just below and just above the value can be the closest admissible
        one, because the admissible decimals form one interval around it.
        """
        for_k, for_bounds = self.scales(step)
        value, lo, hi = self.value * for_bounds, self.lo * for_bounds, self.hi * for_bounds
        floor_k = value // for_k
        inside = [k for k in (floor_k, floor_k + 1) if self._admits(k * for_k, lo, hi)]
        if not inside:
            return None
        return min(inside, key=lambda k: (abs(k * for_k - value), k % 2)), step

    def _admits(self, candidate: int, lo: int, hi: int) -> bool:
        return lo < candidate < hi or (self.inclusive and candidate in (lo, hi))

    def decimal_exponent(self) -> int:
        """``floor(log10(value))``, exactly (the float estimate is only a starting point)."""
        e = math.floor(math.log10(self.value) - math.log10(self.den))
        while not self.at_least_pow10(e):
            e -= 1
        while self.at_least_pow10(e + 1):
            e += 1
        return e


_FLOAT = struct.Struct("<f")
_UINT = struct.Struct("<I")


def _neighbours(x: float, single: bool) -> tuple[float, float]:
    """The next representable values below and above positive ``x`` in its own precision."""
    if single:  # adjacent bit patterns are adjacent floats; one past MAX_VALUE is infinity
        bits = _UINT.unpack(_FLOAT.pack(x))[0]
        return _FLOAT.unpack(_UINT.pack(bits - 1))[0], _FLOAT.unpack(_UINT.pack(bits + 1))[0]
    return math.nextafter(x, 0.0), math.nextafter(x, math.inf)


def _is_even(x: float, single: bool) -> bool:
    """Whether ``x``'s binary significand is even: then reading ties round *to* ``x``."""
    packed = _FLOAT.pack(x) if single else struct.pack("<d", x)
    return packed[0] % 2 == 0


def _search(scaled: _Scaled) -> tuple[int, int]:
    """Java's digit choice ``(k, e)``, value ``k * 10**e``, trying 1, 2, ... significant digits."""
    top = scaled.decimal_exponent()
    for digits in range(1, 18):
        found = scaled.closest_on_grid(top - digits + 1)
        if found is not None and digits > 1:
            return found
        if found is not None:  # one digit competes with the two-digit grid (which contains it)
            return scaled.closest_on_grid(top - 1) or found
    raise AssertionError("no decimal reads back as the value")  # pragma: no cover - 17 digits always do


def _float_digits(x: float) -> tuple[int, int]:
    """Java's digits for a positive float, starting from numpy's shortest output as a guess.

    The guess is *verified* exactly: no admissible decimal one digit shorter, and the closest
    admissible one at the guessed length. Anything else falls back to the full search.
    """
    scaled = _Scaled.of(x, single=True)
    mantissa = np.format_float_scientific(np.float32(x), unique=True).split("e")[0]
    length = len(mantissa.replace(".", "").rstrip("0"))
    if length > 1:
        top = scaled.decimal_exponent()
        if scaled.closest_on_grid(top - length + 2) is None:
            found = scaled.closest_on_grid(top - length + 1)
            if found is not None:
                return found
    return _search(scaled)


def _double_digits(x: float) -> tuple[int, int]:
    """Shortest digits of a double; Python's ``repr`` already finds them unless one digit would do."""
    mantissa, _, exponent = repr(x).partition("e")
    whole, _, fraction = mantissa.partition(".")
    k, e = _strip(int(whole + fraction), int(exponent or 0) - len(fraction))
    return _search(_Scaled.of(x, single=False)) if k < 10 else (k, e)


def _layout(k: int, exponent: int) -> str:
    """Java's notation for the positive decimal ``k * 10**exponent`` (``k`` without trailing zeros)."""
    digits = str(k)
    sci = exponent + len(digits) - 1
    if not -3 <= sci < 7:
        return f"{digits[0]}.{digits[1:] or '0'}E{sci}"
    if exponent >= 0:
        return f"{digits}{'0' * exponent}.0"
    point = len(digits) + exponent
    return f"{digits[:point]}.{digits[point:]}" if point > 0 else f"0.{'0' * -point}{digits}"


def _strip(k: int, exponent: int) -> tuple[int, int]:
    while k % 10 == 0:
        k, exponent = k // 10, exponent + 1
    return k, exponent


def _to_string(x: float, single: bool) -> str:
    if not math.isfinite(x):
        return _SPECIAL[repr(x)]
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    sign = "-" if x < 0 else ""
    k, exponent = _float_digits(abs(x)) if single else _double_digits(abs(x))
    return sign + _layout(*_strip(k, exponent))


def java_double_to_string(x: float) -> str:
    """``Double.toString(x)`` (JDK 19+).

    >>> java_double_to_string(1.0), java_double_to_string(-1.5e-7), java_double_to_string(float("nan"))
    ('1.0', '-1.5E-7', 'NaN')
    """
    return _to_string(float(x), single=False)


def java_float_to_string(x: float | np.floating[Any]) -> str:
    """``Float.toString((float) x)`` (JDK 19+): ``x`` is rounded to ``float`` first if it is not one.

    >>> java_float_to_string(np.float32(3.4028235e38)), java_float_to_string(16777217.0)
    ('3.4028235E38', '1.6777216E7')
    """
    return _to_string(float(np.float32(x)), single=True)
