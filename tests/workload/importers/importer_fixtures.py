"""Shared helpers for the importer tests (a uniquely named module: test directories have no packages)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def line_of(path: Path, marker: str) -> int:
    """1-based number of the first line of ``path`` that contains ``marker``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if marker in line:
            return number
    raise AssertionError(f"{marker!r} not in {path}")


def write(tmp: Path, name: str, *lines: str) -> Path:
    """Write ``lines`` (newline-terminated) to ``tmp/name`` and return the path."""
    path = tmp / name
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path
