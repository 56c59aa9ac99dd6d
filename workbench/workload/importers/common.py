"""What every importer shares: the result record, strict/lenient bookkeeping, reading files, timestamps.

Importers read one file each and never stop at the first oddity silently: a malformed record either
raises (strict, the default, so a user never models a workload that was half read) or is skipped and
counted (lenient, for the long production log with a few torn lines). Keeping that policy here means
every kind reports problems the same way: ``file:line`` plus what was wrong and the expected form.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from workbench.errors import InputError
from workbench.io.reading import read_text as read_input

__all__ = ["ImportResult", "Malformed", "Tally", "line_count", "numbered_lines", "parse_timestamp", "read_text"]


class Malformed(Exception):
    """One record cannot be read; the message says what is wrong and the expected form."""


def _frozen_counts() -> Mapping[str, int]:
    return MappingProxyType({})


@dataclass(frozen=True, eq=False)
class ImportResult:
    """What an importer read from one file.

    Parameters
    ----------
    kind
        The importer's registry name (``query-log``, ``gc-log``, ...).
    source
        The file that was read.
    frame
        One row per record, with the columns ``docs/importers.md`` lists for the kind.
    skipped
        ``(line_no, reason)`` for every malformed record skipped in lenient mode (empty in strict
        mode, which raises instead).
    counts
        ``lines`` read, ``records`` kept, ``skipped`` and ``ignored`` (lines that are valid but carry
        nothing to import, such as other loggers' lines), plus kind-specific counts.
    documents
        JSON documents to write next to the table (``{"table_config.json": {...}}``), for the kinds
        whose input is itself a document the rest of the workbench reads.
    """

    kind: str
    source: str
    frame: pd.DataFrame
    skipped: tuple[tuple[int, str], ...] = ()
    counts: Mapping[str, int] = field(default_factory=_frozen_counts)
    documents: Mapping[str, Any] = field(default_factory=_frozen_counts)


@dataclass
class Tally:
    """Mutable bookkeeping while one file is read: strict raising, lenient skipping, counts."""

    source: Path
    lenient: bool
    skipped: list[tuple[int, str]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)

    def malformed(self, line_no: int, problem: str) -> None:
        """Raise for ``line_no`` in strict mode; remember and count it in lenient mode."""
        if not self.lenient:
            raise InputError(f"{self.source}:{line_no}", problem)
        self.skipped.append((line_no, problem))
        self.counts["skipped"] += 1

    def require_rows(self, rows: int, empty: str) -> None:
        """Stop when a file yields no record: strict or lenient, an empty import would model nothing.

        ``empty`` says what the file should have held; when every record was malformed (lenient
        mode), the error counts them and shows the first.
        """
        if rows:
            return
        if self.skipped:
            line, reason = self.skipped[0]
            raise InputError(str(self.source), f"none of its {len(self.skipped):,} records could be read, so nothing "
                                               f"was imported (first, line {line}: {reason})")
        raise InputError(str(self.source), empty)

    def count(self, name: str, by: int = 1) -> None:
        """Add ``by`` to the named count."""
        self.counts[name] += by

    def result(self, kind: str, frame: pd.DataFrame, documents: Mapping[str, Any] | None = None) -> ImportResult:
        """Freeze what was read into an :class:`ImportResult`."""
        counts = {"lines": 0, "skipped": 0, "ignored": 0, **self.counts, "records": len(frame)}
        return ImportResult(
            kind=kind,
            source=str(self.source),
            frame=frame,
            skipped=tuple(self.skipped),
            counts=MappingProxyType(dict(counts)),
            documents=MappingProxyType(dict(documents or {})),
        )


def read_text(path: Path, *, strict_utf8: bool = False, max_bytes: int | None = None) -> str:
    """Read a text file, transparently gunzipping it (rotated logs usually are), within a size limit.

    Logs may carry a stray non-UTF-8 byte in a query literal; that must not lose the whole file, so
    undecodable bytes become U+FFFD unless ``strict_utf8`` (JSON documents, where it is an error).
    Decompression is streamed and stops at ``max_bytes`` (default: the input limit of
    :mod:`workbench.io.reading`), so a gzip bomb is refused, not inflated.
    """
    return read_input(path, what="input", strict_utf8=strict_utf8, limit=max_bytes,
                      how="--max-input-size SIZE (or WORKBENCH_MAX_INPUT_SIZE)")


def numbered_lines(text: str) -> Iterator[tuple[int, str]]:
    r"""Yield ``(line_no, line)`` from 1, splitting on ``\n`` only and dropping a trailing ``\r``.

    ``str.splitlines`` would also split on form feeds and Unicode separators, which can occur inside
    a logged SQL literal and would shift every later line number.

    >>> list(numbered_lines("a\r\nb\x0cc\n"))
    [(1, 'a'), (2, 'b\x0cc')]
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        yield number, line.removesuffix("\r")


def line_count(text: str) -> int:
    """How many lines :func:`numbered_lines` yields for ``text``."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _zone(text: str | None) -> timezone:
    if not text or text == "Z":
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4])))


def parse_timestamp(date: str, clock: str, fraction: str | None, zone: str | None) -> float:
    """Epoch seconds of a log timestamp split into its parts; a zone-less time is read as UTC.

    Only differences between timestamps of one file are used (arrival gaps, pause intervals), so
    the broker's local zone does not matter as long as it is the same for the whole file.

    >>> parse_timestamp("2026/01/02", "03:04:05", "678", None)
    1767323045.678
    >>> parse_timestamp("2024-01-01", "01:00:00", "5", "+0100")
    1704067200.5

    Raises
    ------
    ValueError
        When the date or time does not exist (month 13, hour 25).
    """
    year, month, day = (int(part) for part in date.replace("/", "-").split("-"))
    hour, minute, second = (int(part) for part in clock.split(":"))
    micros = int((fraction or "0").ljust(6, "0")[:6])
    stamp = datetime(year, month, day, hour, minute, second, micros, tzinfo=_zone(zone))
    return round(stamp.timestamp(), 6)
