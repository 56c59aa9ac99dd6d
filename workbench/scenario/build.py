"""Turn plain mappings (parsed YAML/JSON) into the frozen scenario dataclasses, or fail once, clearly.

The builder reads each dataclass's type hints and field metadata, so a section of the scenario is
declared once (as a dataclass) and validated by the same generic code. Field metadata keys:

``min`` / ``max``
    Inclusive numeric bounds (``min=1`` reads as "a positive integer").
``gt``
    Exclusive lower bound for floats (``gt=0`` reads as "a positive number").
``kind``
    ``"size"`` (``"512MB"``, bytes), ``"duration"`` (``"30s"`` or a number of seconds, read as seconds),
    ``"duration_ms"`` (``"250ms"``, ``"10s"`` or a number of milliseconds, read as milliseconds: a key
    named ``..._ms`` takes every duration the docs allow, in its own unit), ``"distribution"`` or ``"table"``.
``unit``
    For a distribution of times: ``"s"`` or ``"ms"``, the unit its numbers are in; a duration string
    (``"300ms"``, or ``{dist: exponential, mean: 30s}``) is read into that unit.
``doc``
    One line for the documentation and for error messages.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from workbench.distributions import make_distribution
from workbench.errors import ScenarioError
from workbench.frozen import FrozenMap
from workbench.pinot.table_config import freeze_json
from workbench.units import parse_duration, parse_size

T = TypeVar("T")

__all__ = ["build_section", "join"]


def join(path: str, key: str) -> str:
    """``join("cluster", "servers") == "cluster.servers"``."""
    return f"{path}.{key}" if path else key


def _describe(value: Any) -> str:
    return repr(value) if not isinstance(value, Mapping | list) else type(value).__name__


def _bounds_text(meta: Mapping[str, Any], noun: str) -> str:
    lo, hi, gt = meta.get("min"), meta.get("max"), meta.get("gt")
    if gt == 0 or (lo == 1 and noun == "integer"):
        return f"a positive {noun}" + (f" of at most {hi}" if hi is not None else "")
    if lo == 0 and hi is None:
        return f"a non-negative {noun}"
    if lo is not None and hi is not None:
        return f"{'an' if noun == 'integer' else 'a'} {noun} between {lo} and {hi}"
    if lo is not None:
        return f"{'an' if noun == 'integer' else 'a'} {noun} >= {lo}"
    if gt is not None:
        return f"a {noun} > {gt}"
    return f"{'an' if noun == 'integer' else 'a'} {noun}"


def _check_bounds(value: float, meta: Mapping[str, Any], path: str, noun: str) -> None:
    lo, hi, gt = meta.get("min"), meta.get("max"), meta.get("gt")
    bad = (lo is not None and value < lo) or (hi is not None and value > hi) or (gt is not None and value <= gt)
    if bad:
        raise ScenarioError(path, f"must be {_bounds_text(meta, noun)}, got {value!r}")


def _to_int(value: Any, path: str, meta: Mapping[str, Any]) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ScenarioError(path, f"must be {_bounds_text(meta, 'integer')}, got {_describe(value)}")
    _check_bounds(value, meta, path, "integer")
    return int(value)


#: How each unit kind reads a value: sizes in bytes, durations in seconds, ``duration_ms`` in milliseconds
#: (a bare number is already in the key's unit).
_UNITS: dict[str, Callable[[Any], float]] = {
    "size": lambda v: float(parse_size(v)),
    "duration": parse_duration,
    "duration_ms": lambda v: float(v) if _is_number(v) else 1000.0 * parse_duration(v),
}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _to_float(value: Any, path: str, meta: Mapping[str, Any]) -> float:
    kind = meta.get("kind")
    if kind in _UNITS:
        try:
            number = _UNITS[kind](value)
        except ValueError as exc:
            unit = " (a bare number here is milliseconds)" if kind == "duration_ms" else ""
            raise ScenarioError(path, f"{exc}{unit}") from None
    elif isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(path, f"must be {_bounds_text(meta, 'number')}, got {_describe(value)}")
    else:
        number = float(value)
    if not math.isfinite(number):
        raise ScenarioError(path, f"must be {_bounds_text(meta, 'number')} (finite), got {value!r}")
    _check_bounds(number, meta, path, "number")
    return number


#: The parameters of a distribution that are times (its others, such as lognormal's ``sigma``, are not).
_TIME_PARAMETERS = ("value", "mean", "low", "high", "values")


def _in_unit(value: Any, unit: str | None) -> Any:
    """A duration string read into ``unit`` (``"s"``, ``"ms"``); anything else as it is."""
    if unit is None or not isinstance(value, str):
        return value
    try:
        return parse_duration(value) * (1000.0 if unit == "ms" else 1.0)
    except ValueError:
        return value  # left for the distribution's own check to name


def _times_in_unit(value: Any, unit: str | None) -> Any:
    """A distribution spec with its duration strings read into ``unit``: ``"300ms"`` or
    ``{dist: exponential, mean: 30s}`` as the numbers the distribution takes."""
    if unit is None or not isinstance(value, Mapping):
        return _in_unit(value, unit)
    return {k: ([_in_unit(x, unit) for x in v] if k == "values" and isinstance(v, list) else _in_unit(v, unit))
            if k in _TIME_PARAMETERS else v for k, v in value.items()}


def _to_distribution(value: Any, path: str, unit: str | None = None) -> Any:
    try:
        return make_distribution(_times_in_unit(value, unit))
    except KeyError as exc:
        key, _, problem = str(exc.args[0]).partition(": ")
        raise ScenarioError(join(path, key), problem) from None
    except (TypeError, ValueError) as exc:
        raise ScenarioError(path, str(exc)) from None


def _convert(tp: Any, value: Any, path: str, meta: Mapping[str, Any]) -> Any:
    """Convert ``value`` to type ``tp`` or raise a ScenarioError at ``path``."""
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if value is None:
            return None
        words = [w for a in args if get_origin(a) is Literal for w in get_args(a)]
        if value in words:  # ``float | Literal["peak"]``: the word, else the other type
            return value
        others = [a for a in args if get_origin(a) is not Literal]
        if not others:
            raise ScenarioError(path, f"must be one of {', '.join(map(str, words))}, got {value!r}")
        return _convert(others[0], value, path, meta)
    if meta.get("kind") == "distribution":
        return _to_distribution(value, path, meta.get("unit"))
    if origin is Literal:
        allowed = get_args(tp)
        if value not in allowed:
            raise ScenarioError(path, f"must be one of {', '.join(map(str, allowed))}, got {value!r}")
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return build_section(tp, value, path)
    if origin is Mapping and not isinstance(value, Mapping):
        raise ScenarioError(path, f"must be a mapping of key: value, got {_describe(value)}")
    if origin is Mapping and dataclasses.is_dataclass(item := get_args(tp)[-1]) and isinstance(item, type):
        # ``Mapping[str, Section]``: a section per key (``workload.generate.columns.NAME``)
        return FrozenMap({str(k): build_section(item, v, join(path, str(k))) for k, v in value.items()})
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ScenarioError(path, f"must be a list, got {_describe(value)}")
        (item_tp, _) = get_args(tp)
        return tuple(_convert(item_tp, v, f"{path}[{i}]", meta) for i, v in enumerate(value))
    return _SCALARS.get(tp, _passthrough)(value, path, meta)


def _to_bool(value: Any, path: str, meta: Mapping[str, Any]) -> bool:
    if not isinstance(value, bool):
        raise ScenarioError(path, f"must be true or false, got {_describe(value)}")
    return value


def _to_str(value: Any, path: str, meta: Mapping[str, Any]) -> str:
    if not isinstance(value, str) or not value:
        raise ScenarioError(path, f"must be a non-empty string, got {_describe(value)}")
    return value


def _passthrough(value: Any, path: str, meta: Mapping[str, Any]) -> Any:
    return freeze_json(value)


_SCALARS: dict[Any, Callable[[Any, str, Mapping[str, Any]], Any]] = {
    int: _to_int,
    float: _to_float,
    bool: _to_bool,
    str: _to_str,
}


def build_section(cls: type[T], data: Any, path: str, *, check: bool = True) -> T:
    """Build dataclass ``cls`` from mapping ``data``; unknown keys, bad types and bounds raise.

    Construction runs the dataclass's ``__post_init__``, which builds derived settings (a broker's
    adaptive-selection and cache configs from its Pinot properties) and names bad keys relative to the
    section; they are reported under ``path``. After construction, a ``check(path)`` method (when
    present) runs the rules that involve several fields, so that those errors also carry the key path;
    ``check=False`` skips it for a section a run already validated (its recorded scenario).
    """
    if data is None:
        data = {}
    # fields a section derives from its other fields (``init=False``) are not keys a user writes
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    if not isinstance(data, Mapping):
        raise ScenarioError(path, f"must be a mapping with keys {', '.join(fields)}, got {_describe(data)}")
    hints = get_type_hints(cls)
    for key in data:
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ScenarioError(
                join(path, str(key)), f"unknown key{hint}; allowed keys here: {', '.join(fields)}"
            )
    kwargs = {
        name: _convert(hints[name], data[name], join(path, name), f.metadata)
        for name, f in fields.items()
        if name in data
    }
    try:
        obj = cls(**kwargs)
    except ScenarioError as exc:  # a section's own derivation names keys relative to the section
        raise ScenarioError(join(path, exc.where), exc.problem) from None
    rules = getattr(obj, "check", None) if check else None
    if callable(rules):
        rules(path)
    return obj
