"""Reading user files safely: bounded sizes, streamed decompression, strict YAML and JSON, clean errors.

Every file a user hands the workbench is read through here, so a binary file, a corrupt or
truncated gzip, a gzip bomb, a YAML alias bomb, a 10 000-level nesting or a duplicated key ends in
one :class:`~workbench.errors.InputError` naming the file (and line), never a traceback or an
exhausted machine.

- Sizes: a document (scenario, sweep, table config, schema) may be at most
  ``WORKBENCH_MAX_DOCUMENT_SIZE`` bytes and an imported log ``WORKBENCH_MAX_INPUT_SIZE`` bytes *after*
  decompression (defaults :data:`workbench.defaults.LIMIT_DOCUMENT_BYTES` and ``LIMIT_INPUT_BYTES``);
  gzip is decompressed in blocks and stopped at the limit.
- YAML: duplicate keys are errors; at most ``WORKBENCH_MAX_YAML_NODES`` nodes after alias expansion;
  recursive aliases are refused.
- JSON: duplicate keys are errors (Pinot would silently keep the last), ``NaN``/``Infinity`` are not
  JSON (Pinot's Jackson refuses them too).
- Both: at most ``WORKBENCH_MAX_NESTING`` levels.

>>> load_yaml("a: 1\\nb: [2, 3]\\n", "s.yaml")
{'a': 1, 'b': [2, 3]}
>>> load_yaml("a: 1\\na: 2\\n", "s.yaml")
Traceback (most recent call last):
...
workbench.errors.InputError: s.yaml:2: duplicate key 'a' (first at line 1); keep one of them
>>> load_json('{"x": NaN}', "t.json")
Traceback (most recent call last):
...
workbench.errors.InputError: t.json:1: not valid JSON: NaN is not a JSON number
>>> load_json('{"a": 1,\\n "b": [2, 3,],\\n}', "t.json")
Traceback (most recent call last):
...
workbench.errors.InputError: t.json:2: not valid JSON: a trailing comma (line 2) before ']'; remove it (JSON has none)
"""

from __future__ import annotations

import gzip
import json
import os
import re
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from workbench import defaults as D
from workbench.errors import InputError
from workbench.units import parse_size

__all__ = ["LIMIT_VARIABLES", "load_json", "load_yaml", "read_document", "read_text", "reading_limit"]

ErrorType = Callable[[str, str], InputError]

#: The environment variable that raises each reading limit, and its default.
LIMIT_VARIABLES: dict[str, tuple[str, int]] = {
    "document_bytes": ("WORKBENCH_MAX_DOCUMENT_SIZE", D.LIMIT_DOCUMENT_BYTES),
    "input_bytes": ("WORKBENCH_MAX_INPUT_SIZE", D.LIMIT_INPUT_BYTES),
    "yaml_nodes": ("WORKBENCH_MAX_YAML_NODES", D.LIMIT_YAML_NODES),
    "nesting_depth": ("WORKBENCH_MAX_NESTING", D.LIMIT_NESTING_DEPTH),
}
_GZIP_MAGIC = b"\x1f\x8b"
_BLOCK = 1 << 20


def reading_limit(name: str) -> int:
    """The limit ``name`` (a key of :data:`LIMIT_VARIABLES`), raised by its environment variable if set."""
    variable, default = LIMIT_VARIABLES[name]
    raw = os.environ.get(variable)
    if raw is None or not raw.strip():
        return default
    try:
        value = parse_size(raw.strip())
    except ValueError as exc:
        raise InputError(variable, f"{exc}") from None
    if value < 1:
        raise InputError(variable, f"must be positive, got {raw!r}")
    return value


def _human(n: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def _too_big(path: Path, what: str, limit: int, how: str, decompressed: bool = False) -> InputError:
    size = "decompresses to more than" if decompressed else "is larger than"
    return InputError(str(path), f"{size} {_human(limit)}, the limit for {what} (a compression bomb, or a "
                                 f"bigger input than the workbench expects); raise it with {how}")


def _raise_with(limit_name: str) -> str:
    unit = "SIZE" if limit_name.endswith("bytes") else "N"
    return f"the environment variable {LIMIT_VARIABLES[limit_name][0]}={unit}"


def _open_error(path: Path, exc: OSError, what: str) -> InputError:
    if isinstance(exc, FileNotFoundError):
        return InputError(str(path), "no such file")
    if isinstance(exc, IsADirectoryError):
        return InputError(str(path), f"is a directory; give the {what} file")
    if isinstance(exc, PermissionError):
        return InputError(str(path), "cannot read it: permission denied")
    return InputError(str(path), f"cannot read it: {exc.strerror or exc}")


def _read_plain(path: Path, limit: int, what: str, how: str) -> bytes:
    with path.open("rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise _too_big(path, what, limit, how)
    return data


def _read_gzip(path: Path, limit: int, what: str, how: str) -> bytes:
    """Decompress in blocks, stopping as soon as the output passes ``limit``."""
    blocks: list[bytes] = []
    total = 0
    try:
        with gzip.open(path, "rb") as fh:
            while block := fh.read(_BLOCK):
                total += len(block)
                if total > limit:
                    raise _too_big(path, what, limit, how, decompressed=True)
                blocks.append(block)
    except EOFError:
        raise InputError(str(path), "is a truncated gzip file (it ends before the end of its stream)") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(str(path), f"is not a valid gzip file ({exc})") from None
    return b"".join(blocks)


def _is_gzip(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


def read_bytes(path: str | Path, *, what: str = "input", limit: int | None = None,
               limit_name: str = "input_bytes", how: str | None = None) -> bytes:
    """A file's bytes, gunzipped when it is gzip (by content, whatever its name), within a size limit.

    Raises
    ------
    InputError
        Missing, a directory, unreadable, larger than the limit (decompressed size for gzip), or
        corrupt or truncated gzip.
    """
    source = Path(path)
    cap = limit if limit is not None else reading_limit(limit_name)
    advice = how or _raise_with(limit_name)
    try:
        if _is_gzip(source):
            return _read_gzip(source, cap, what, advice)
        return _read_plain(source, cap, what, advice)
    except OSError as exc:
        raise _open_error(source, exc, what) from None


def _decode(data: bytes, source: str, strict: bool) -> str:
    if strict and b"\x00" in data[:8192]:
        raise InputError(source, "is a binary file, not text (it holds NUL bytes)")
    try:
        return data.decode("utf-8", errors="strict" if strict else "replace").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{source}:{line}", f"is not UTF-8 text (byte {exc.start}: {exc.reason}); "
                                             "is it a binary file or another encoding?") from None


def read_text(path: str | Path, *, what: str = "input", strict_utf8: bool = True, limit: int | None = None,
              limit_name: str = "input_bytes", how: str | None = None) -> str:
    """A text file (gzip transparently), within a size limit.

    ``strict_utf8`` false turns undecodable bytes into U+FFFD (a log may carry a stray byte in a
    literal; that must not lose the whole file).
    """
    data = read_bytes(path, what=what, limit=limit, limit_name=limit_name, how=how)
    return _decode(data, str(path), strict_utf8)


def read_document(path: str | Path, what: str, error: ErrorType = InputError) -> Any:
    """Parse a whole YAML or JSON document (by suffix: ``.json`` is JSON, anything else YAML)."""
    source = Path(path)
    try:
        text = read_text(source, what=what, limit_name="document_bytes")
    except InputError as exc:
        raise error(exc.where, f"cannot read the {what} file: {exc.problem}") from None
    if source.suffix.lower() == ".json":
        return load_json(text, str(source), error)
    return load_yaml(text, str(source), error)


# -- JSON -------------------------------------------------------------------------------------------
class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _Objects:
    """An ``object_pairs_hook`` that notes duplicated keys and the object they were found in."""

    def __init__(self) -> None:
        self.duplicates: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                self.duplicates.append((key, out))
            out[key] = value
        return out


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _line_of_second(text: str, key: str) -> int:
    hits = [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]
    at = hits[1] if len(hits) > 1 else (hits[0] if hits else 0)
    return text.count("\n", 0, at) + 1


def _json_depth_ok(text: str, limit: int) -> int | None:
    """The line where nesting passes ``limit`` (brackets outside strings), or None."""
    depth, in_string, escaped = 0, False, False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, index) + 1
        elif char in "]}":
            depth -= 1
    return None


def _trailing_comma(text: str, pos: int) -> int | None:
    """The line of a comma that stands right before a closing ``}`` or ``]`` at ``pos``, or None.

    Python's parser stops at the bracket ("Expecting property name enclosed in double quotes"), which
    does not say what is wrong; a trailing comma is the commonest slip in a hand-edited table config
    or schema (JavaScript and Python allow it; JSON and Pinot's Jackson do not).
    """
    if pos >= len(text) or text[pos] not in "}]":
        return None
    before = text[:pos].rstrip()
    return before.count("\n") + 1 if before.endswith(",") else None


def load_json(text: str, source: str, error: ErrorType = InputError, *, top_level_duplicates: bool = False) -> Any:
    """Parse JSON strictly: duplicate keys, NaN/Infinity and nesting past the limit are errors.

    ``top_level_duplicates`` lets the outermost object repeat a key, for callers that walk its
    entries themselves and report a repeat with its line (the segments importer: a segment listed twice).
    """
    limit = reading_limit("nesting_depth")
    if (deep := _json_depth_ok(text, limit)) is not None:
        raise error(f"{source}:{deep}", f"nests deeper than {limit} levels; raise with "
                                        f"{_raise_with('nesting_depth')}")
    objects = _Objects()
    try:
        data = json.loads(text, object_pairs_hook=objects, parse_constant=_not_a_number)
        for key, found_in in objects.duplicates:
            if not (top_level_duplicates and found_in is data):
                raise _Duplicate(key)
        return data
    except RecursionError:
        raise error(source, "nests too deeply to be read") from None
    except _Duplicate as exc:
        raise error(f"{source}:{_line_of_second(text, exc.key)}",
                    f"duplicate key {exc.key!r}; keep one of them (Pinot would silently use the last)") from None
    except json.JSONDecodeError as exc:
        if (comma := _trailing_comma(text, exc.pos)) is not None:
            raise error(f"{source}:{exc.lineno}", f"not valid JSON: a trailing comma (line {comma}) before "
                                                  f"{text[exc.pos]!r}; remove it (JSON has none)") from None
        raise error(f"{source}:{exc.lineno}", f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except ValueError as exc:
        raise error(f"{source}:1", f"not valid JSON: {exc}") from None


# -- YAML -------------------------------------------------------------------------------------------
class _YamlProblem(Exception):
    def __init__(self, line: int, problem: str) -> None:
        super().__init__(problem)
        self.line = line
        self.problem = problem


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader with a nesting bound and duplicate keys refused."""

    def __init__(self, stream: str, max_depth: int) -> None:
        super().__init__(stream)
        self.max_depth = max_depth
        self.depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        self.depth += 1
        try:
            if self.depth > self.max_depth:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise _YamlProblem(mark.line + 1, f"nests deeper than {self.max_depth} levels; raise with "
                                                  f"{_raise_with('nesting_depth')}")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, ScalarNode):
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise _YamlProblem(line, f"duplicate key {key!r} (first at line {seen[key]}); keep one of them")
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def _expanded_size(root: Node, limit: int) -> None:
    """Count nodes as if every alias were copied out; refuse more than ``limit`` and recursion."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise _YamlProblem(node.start_mark.line + 1, "an alias refers to the node that contains it "
                                                         "(a recursive alias)")
        open_nodes.add(key)
        total = 1
        if isinstance(node, SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        open_nodes.discard(key)
        if total > limit:
            raise _YamlProblem(node.start_mark.line + 1, f"expands to more than {limit:,} nodes through its "
                                                         "aliases (an alias bomb?); raise with "
                                                         f"{_raise_with('yaml_nodes')}")
        sizes[key] = total
        return total

    size(root)


def load_yaml(text: str, source: str, error: ErrorType = InputError) -> Any:
    """Parse one YAML document strictly (see the module docstring); ``None`` for an empty one."""
    loader = _StrictLoader(text, reading_limit("nesting_depth"))
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, reading_limit("yaml_nodes"))
        return loader.construct_document(node)
    except _YamlProblem as exc:
        raise error(f"{source}:{exc.line}", exc.problem) from None
    except RecursionError:
        raise error(source, "nests too deeply through its aliases to be read") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        raise error(where, f"not valid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise error(source, f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()
