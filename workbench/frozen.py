"""Read-only copies of parsed JSON and YAML that pickle, so a validated scenario can cross processes.

A scenario keeps the user's own maps (the table config, Pinot properties) whole and read-only. The
standard library's read-only view, ``types.MappingProxyType``, cannot be pickled, so a scenario holding
one could not be handed to a sweep worker and each worker validated its point again from plain data.
:class:`FrozenMap` is as read-only and pickles by value.

>>> import pickle
>>> frozen = freeze_json({"a": [1, {"b": 2}]})
>>> frozen["a"][1]["b"], pickle.loads(pickle.dumps(frozen)) == frozen, thaw_json(frozen)
(2, True, {'a': [1, {'b': 2}]})
>>> frozen["a"] = 3
Traceback (most recent call last):
...
TypeError: 'FrozenMap' object does not support item assignment
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["FrozenMap", "freeze_json", "thaw_json"]


class FrozenMap(Mapping[str, Any]):
    """A read-only mapping that pickles by value (``MappingProxyType`` does not pickle)."""

    __slots__ = ("_data",)
    _data: dict[str, Any]

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        object.__setattr__(self, "_data", dict(data or {}))

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"FrozenMap is read-only (cannot set {name!r})")

    def __reduce__(self) -> tuple[type[FrozenMap], tuple[dict[str, Any]]]:
        return FrozenMap, (self._data,)


def freeze_json(value: Any) -> Any:
    """Return a read-only deep copy of parsed JSON (dicts become :class:`FrozenMap`, lists tuples)."""
    if isinstance(value, Mapping):
        return FrozenMap({str(k): freeze_json(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze_json(v) for v in value)
    return value


def thaw_json(value: Any) -> Any:
    """Inverse of :func:`freeze_json`: plain dicts and lists, ready for ``json.dumps``."""
    if isinstance(value, Mapping):
        return {k: thaw_json(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw_json(v) for v in value]
    return value
