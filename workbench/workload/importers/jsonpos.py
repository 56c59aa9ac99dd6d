"""Line numbers inside JSON documents, so a bad segment or field is reported at its line.

``json.loads`` says where a *syntax* error is but forgets positions once parsing succeeds. These
helpers walk an already-valid document with :meth:`json.JSONDecoder.raw_decode`, which returns the
end offset of each value it decodes, so the start of every entry (and hence its line) is known
without a second JSON parser.

>>> text = '{\\n  "a": 1,\\n  "b": {"c": [10,\\n 20]}\\n}'
>>> [(key, line) for key, line, _ in entries(text)]
[('a', 2), ('b', 3)]
>>> locate(text, ["b", "c", 1])
4
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from workbench.errors import InputError
from workbench.io.reading import load_json as strict_load_json

__all__ = ["entries", "line_of", "load_json", "locate", "nearest_line"]

_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def line_of(text: str, index: int) -> int:
    """1-based line number of character ``index``."""
    return text.count("\n", 0, index) + 1


def load_json(text: str, source: str, error: type[InputError] = InputError, *,
              top_level_duplicates: bool = False) -> Any:
    """Parse a whole document strictly (:func:`workbench.io.reading.load_json`: duplicate keys, NaN and
    deep nesting are errors), reporting a problem as ``error`` at ``source:line``."""
    return strict_load_json(text, source, error, top_level_duplicates=top_level_duplicates)


def _skip(text: str, index: int) -> int:
    match = _WHITESPACE.match(text, index)
    return match.end() if match else index


def _children(text: str, start: int) -> Iterator[tuple[str | int, int, Any, int]]:
    """``(key or index, entry start, value, value start)`` for the container opening at ``start``."""
    is_object = text[start] == "{"
    index = _skip(text, start + 1)
    position = 0
    while text[index] not in "}]":
        entry_start = index
        key: str | int = position
        if is_object:
            key, index = _DECODER.raw_decode(text, index)
            index = _skip(text, _skip(text, index) + 1)
        value, end = _DECODER.raw_decode(text, index)
        yield key, entry_start, value, index
        index = _skip(text, end)
        if text[index] == ",":
            index = _skip(text, index + 1)
        position += 1


def entries(text: str) -> Iterator[tuple[str | int, int, Any]]:
    """``(key or index, line, value)`` for each top-level entry of a valid JSON object or array."""
    start = _skip(text, 0)
    if start >= len(text) or text[start] not in "{[":
        return
    for key, entry_start, value, _ in _children(text, start):
        yield key, line_of(text, entry_start), value


def locate(text: str, path: Sequence[str | int]) -> int | None:
    """Line of the entry at ``path`` (keys and list indexes) in a valid document, or ``None``.

    The deepest existing prefix does not count: a path that is not in the document gives ``None``,
    so callers fall back to a shorter path rather than point at the wrong line.
    """
    index = _skip(text, 0)
    line: int | None = None
    for step in path:
        if index >= len(text) or text[index] not in "{[":
            return None
        found = next(((s, v) for k, s, _, v in _children(text, index) if k == step), None)
        if found is None:
            return None
        line, index = line_of(text, found[0]), found[1]
    return line


def nearest_line(text: str, path: Sequence[str | int]) -> int:
    """Line of the longest prefix of ``path`` found in the document (1 when none is).

    Key paths from validators are dotted strings, and a dotted column name splits into parts that
    are not keys; falling back to the longest prefix that exists still points near the problem.
    """
    for length in range(len(path), 0, -1):
        line = locate(text, path[:length])
        if line is not None:
            return line
    return 1
