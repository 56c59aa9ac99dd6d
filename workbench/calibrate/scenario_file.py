"""Write the calibrated ``scenario.yaml``: every value with a comment saying where it came from.

A calibrated scenario mixes three kinds of value, and a reader must be able to tell them apart at a
glance: values read from the user's files (servers, replicas, the table config, the GC logs), values
fitted from the broker log (with one standard error), and defaults the files cannot give (server cores,
the network delay), marked ``DEFAULT`` with the place the default comes from, so the user knows exactly
what to measure or set before trusting an answer that depends on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

__all__ = ["Entry", "render_scenario"]


@dataclass(frozen=True)
class Entry:
    """One scenario key (dotted path), its value and the comment written beside it."""

    key: str
    value: Any
    note: str = ""


def _scalar(value: Any) -> str:
    """A value as inline YAML (mappings and lists in flow style, on one line)."""
    text: str = yaml.safe_dump(value, default_flow_style=True, width=2**31 - 1, sort_keys=False).strip()
    return text.removesuffix("\n...").strip()


def _comment(note: str, indent: int) -> list[str]:
    return [f"{' ' * indent}# {line}" for line in note.split("\n")]


def _emit(tree: Mapping[str, Any], notes: Mapping[str, str], prefix: str, indent: int) -> Iterable[str]:
    pad = " " * indent
    for key, value in tree.items():
        path = f"{prefix}{key}"
        note = notes.get(path, "")
        if isinstance(value, dict) and path not in notes:
            yield f"{pad}{key}:"
            yield from _emit(value, notes, f"{path}.", indent + 2)
            continue
        line = f"{pad}{key}: {_scalar(value)}"
        if note and "\n" not in note and len(line) + len(note) < 118:
            yield f"{line:<40} # {note}" if len(line) < 40 else f"{line}  # {note}"
        else:
            yield from _comment(note, indent) if note else ()
            yield line


def render_scenario(header: Sequence[str], entries: Sequence[Entry]) -> str:
    """The scenario's YAML text: a comment header, then the entries nested by their dotted keys.

    >>> text = render_scenario(["hello"], [Entry("cluster.servers", 6, "from the log"), Entry("name", "x")])
    >>> [[part.strip() for part in line.split("#")] for line in text.splitlines()]
    [['', 'hello'], ['cluster:'], ['servers: 6', 'from the log'], ['name: x']]
    """
    tree: dict[str, Any] = {}
    for entry in entries:
        node = tree
        *parents, leaf = entry.key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = entry.value
    notes = {e.key: e.note for e in entries if e.note}
    lines = [f"# {h}" if h else "#" for h in header]
    lines.extend(_emit(tree, notes, "", 0))
    return "\n".join(lines) + "\n"
