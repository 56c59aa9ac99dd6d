"""Read a long broker query log in chunks, keeping one table's queries and what calibration uses.

A production broker log holds millions of lines of every table. Read whole, the importer keeps a Python
row per line (a few kB each), so a million-line log needs several GB. Calibration reads it in chunks of
whole records (a multi-line SQL stays with its line) through the same importer
(:func:`~workbench.workload.importers.read_query_log`, so every Pinot version's layout and every check
is the importer's), keeps only the table's rows, reduces ``serverStats`` to what the fit uses (the
slowest server's round trip and the servers' names) and drops the other long texts. Errors keep the
original file's name and line numbers.
"""

from __future__ import annotations

import gzip
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from workbench.calibrate.features import server_stats
from workbench.errors import InputError
from workbench.workload.importers import read_query_log

__all__ = ["CHUNK_LINES", "LogRead", "read_log", "table_of_log_name"]

#: Lines per chunk: ~0.5 GB of the importer's rows at a time.
CHUNK_LINES = 100_000
#: A log record starts with a timestamp (optionally after a container prefix), as the importer reads it.
_RECORD = re.compile(r"^\s*(?:[\w.-]+\s*\|\s*)?\[?\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}")
#: Long texts calibration does not read (``serverStats`` is reduced first).
_QUERY = re.compile(r"requestId=|RequestId:")
_DROP = ("server_stats", "extra", "client_ip", "pools")
_TYPED = re.compile(r"^(?P<raw>.+)_(?:OFFLINE|REALTIME)$")


def table_of_log_name(name: str) -> str | None:
    """The raw table name of a log's ``table=`` value (``None`` for a multi-stage ``[a, b]`` set).

    >>> table_of_log_name("events_OFFLINE"), table_of_log_name("events"), table_of_log_name("[a, b]")
    ('events', 'events', None)
    """
    if name.startswith("["):
        return None
    match = _TYPED.match(name)
    return match["raw"] if match else name


@dataclass(frozen=True)
class LogRead:
    """The table's logged queries (the importer's columns less the long texts, plus
    ``slowest_response_ms``), the servers named in their ``serverStats``, every ``table=`` value seen
    with its count, and the import's counts summed over the chunks."""

    frame: pd.DataFrame
    hosts: frozenset[str]
    tables: Counter[str]
    counts: dict[str, int]


def _lines(path: Path) -> Iterator[str]:
    """The file's lines (gunzipped for ``*.gz``); undecodable bytes become U+FFFD, as the importer reads them."""
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="") as zipped:
                yield from zipped
        else:
            with path.open(encoding="utf-8", errors="replace", newline="") as plain:
                yield from plain
    except FileNotFoundError:
        raise InputError(str(path), "no such file") from None
    except IsADirectoryError:
        raise InputError(str(path), "is a directory; give the file to import") from None
    except (OSError, EOFError) as exc:
        raise InputError(str(path), f"cannot read it: {exc}") from None


def _chunks(path: Path, size: int) -> Iterator[tuple[int, list[str]]]:
    """``(number of the chunk's first line, its lines)``, cut only where a query's record starts, so
    every chunk holds a query line (unless the file holds none)."""
    chunk: list[str] = []
    first = 1
    for number, line in enumerate(_lines(path), start=1):
        if len(chunk) >= size and _RECORD.match(line) and _QUERY.search(line):
            yield first, chunk
            chunk, first = [], number
        chunk.append(line)
    if chunk:
        yield first, chunk


def _moved(exc: InputError, path: Path, offset: int) -> InputError:
    """The error at the original file's line."""
    where, _, line = exc.where.rpartition(":")
    if where and line.isdigit():
        return InputError(f"{path}:{int(line) + offset}", exc.problem)
    return InputError(str(path), exc.problem)


def _keep(frame: pd.DataFrame, table: str, offset: int) -> tuple[pd.DataFrame, frozenset[str]]:
    raw = frame["table"].astype(str).map(table_of_log_name)
    mine = frame[(raw.str.lower() == table.lower()).fillna(False).to_numpy(dtype=bool)]
    slowest, hosts = server_stats(mine)
    kept = mine.drop(columns=[c for c in _DROP if c in mine]).assign(slowest_response_ms=slowest)
    return kept.assign(source_line=kept["source_line"] + offset), hosts


def _rebased(frame: pd.DataFrame) -> pd.DataFrame:
    """Arrival order over the whole log, times from its first arrival (ms resolution, as logged)."""
    now = frame["now_ms"].to_numpy(dtype=np.int64)
    arrival = np.round((now - now.min()) / 1000.0, 6)
    frame = frame.assign(arrival_s=arrival, logged_s=np.round(arrival + frame["time_ms"].to_numpy() / 1000.0, 6))
    frame = frame.sort_values(["arrival_s", "source_line"], kind="mergesort").reset_index(drop=True)
    return frame.assign(query_id=np.arange(len(frame), dtype=np.int64))


def read_log(path: str | Path, table: str, *, lenient: bool = False, chunk_lines: int = CHUNK_LINES) -> LogRead:
    """Read ``path`` chunk by chunk and keep the queries of ``table`` (its raw name).

    Raises
    ------
    InputError
        At the original ``file:line`` for a malformed line (strict mode), or naming the file when it
        holds no query lines at all.
    """
    source = Path(path)
    frames: list[pd.DataFrame] = []
    hosts: set[str] = set()
    tables, counts = Counter[str](), Counter[str]()
    with tempfile.TemporaryDirectory(prefix="workbench-log-") as tmp:
        chunk_path = Path(tmp) / "chunk.log"
        for first, lines in _chunks(source, chunk_lines):
            chunk_path.write_text("".join(lines), encoding="utf-8")
            try:
                result = read_query_log(chunk_path, lenient)
            except InputError as exc:
                raise _moved(exc, source, first - 1) from None
            counts.update(result.counts)
            if result.frame.empty:
                continue
            tables.update(result.frame["table"].astype(str))
            kept, named = _keep(result.frame, table, first - 1)
            hosts |= named
            frames.append(kept)
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return LogRead(_rebased(frame) if len(frame) else frame, frozenset(hosts), tables, dict(counts))
