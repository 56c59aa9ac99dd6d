"""A workload directory (``workbench generate``, an import or a calibration) as a value, read checked.

:class:`WorkloadDir` owns the directory's file names (``segments.parquet``, ``queries.parquet``, the
``events/`` dataset and ``manifest.json``) and reads the manifest once; every module outside
:mod:`workbench.workload` and :mod:`workbench.io` takes one instead of a path, so none spells a name.

A run trusts two tables of the directory: ``segments.parquet`` (the table's segments: names, doc
counts, time ranges, ZK metadata) and, for replayed arrivals, ``queries.parquet``. A directory handed
to ``--data`` may be anything, though: a corrupt file, another tool's Parquet, a hand-edited import.
These readers name the file, the column and the first bad row instead of failing deep in the model.

>>> import tempfile, pandas as pd
>>> with tempfile.TemporaryDirectory() as d:
...     pd.DataFrame({"segment_name": ["s0", "s1"], "total_docs": [10, -1]}).to_parquet(f"{d}/segments.parquet")
...     read_segments(d)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
workbench.errors.InputError: .../segments.parquet: total_docs of segment 's1' (row 1) is -1: every segment \
needs its number of documents (0 or more)
"""

from __future__ import annotations

import json
import logging
import math
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from workbench import defaults as D
from workbench.errors import InputError
from workbench.io import atomic_file
from workbench.io.tables import read_json_file, read_parquet
from workbench.pinot.segment import check_segment_name

__all__ = ["EVENTS_DIR", "LOGGED_DOCS", "LOGGED_FILTER_ENTRIES", "MANIFEST_FILE", "QUERIES_FILE", "SEGMENTS_FILE",
           "WorkloadDir", "read_events", "read_replay_queries", "read_segments"]

_LOG = logging.getLogger(__name__)
SEGMENTS_FILE = "segments.parquet"
EVENTS_DIR = "events"
QUERIES_FILE = "queries.parquet"
MANIFEST_FILE = "manifest.json"


def _bad_row(path: Path, frame: pd.DataFrame, mask: Any, column: str, problem: str) -> InputError:
    row = int(mask.to_numpy().nonzero()[0][0])
    name = frame["segment_name"].iloc[row] if "segment_name" in frame else None
    label = f"of segment {name!r} (row {row})" if isinstance(name, str) else f"(row {row})"
    value = frame[column].iloc[row]
    value = value.item() if hasattr(value, "item") else value
    return InputError(str(path), f"{column} {label} is {value!r}: {problem}")


def _check_names(path: Path, frame: pd.DataFrame) -> None:
    names = frame["segment_name"]
    for row, name in enumerate(names):
        try:
            check_segment_name(name)
        except InputError as exc:
            raise InputError(str(path), f"segment_name (row {row}): {exc.problem}") from None
    duplicated = names.duplicated()
    if duplicated.any():
        raise InputError(str(path), f"segment {names[duplicated].iloc[0]!r} is listed twice; names must be unique")


def _consuming(frame: pd.DataFrame) -> pd.Series:
    if "status" not in frame:
        return pd.Series(False, index=frame.index)
    return frame["status"] == "IN_PROGRESS"


def _half_full(frame: pd.DataFrame, docs: pd.Series, unknown: pd.Series) -> list[int]:
    """A consuming segment of unknown size, at a random moment, is on average half as full as the
    segments its partition sealed (flushing by rows or time fills it evenly): half their median, or of
    every sealed segment's when its partition has none yet (0 when none is sealed)."""
    sealed = docs[~_consuming(frame) & (docs >= 0)]
    overall = float(sealed.median()) if len(sealed) else 0.0
    if "partition" not in frame:
        return [round(overall / 2)] * int(unknown.sum())
    by_partition = sealed.groupby(frame.loc[sealed.index, "partition"]).median()
    return [round(float(by_partition.get(p, overall)) / 2) for p in frame.loc[unknown, "partition"]]


def _check_docs(path: Path, frame: pd.DataFrame) -> None:
    docs = pd.to_numeric(frame["total_docs"], errors="coerce")
    unknown = (docs == -1) & _consuming(frame)
    if unknown.any():
        fill = _half_full(frame, docs, unknown)
        _LOG.warning("%s: %d consuming segment(s) have no doc count (ZK records none while a segment consumes); "
                     "each is taken as half of its partition's median sealed segment (%s docs)", path,
                     int(unknown.sum()), ", ".join(f"{v:g}" for v in sorted(set(fill))))
        fill_docs = pd.Series([int(v) for v in fill], index=frame.index[unknown], dtype="int64")
        frame.loc[unknown, "total_docs"] = fill_docs
        docs = docs.astype("float64")
        docs[unknown] = fill_docs.astype("float64")
    bad = docs.isna() | (docs < 0)
    if bad.any():
        raise _bad_row(path, frame, bad, "total_docs", "every segment needs its number of documents (0 or more)")
    too_many = docs > D.LIMIT_DOCS_PER_SEGMENT
    if too_many.any():
        raise _bad_row(path, frame, too_many, "total_docs", f"Pinot's doc ids are Java ints: at most "
                                                            f"{D.LIMIT_DOCS_PER_SEGMENT:,} documents per segment")


def _check_zk(path: Path, frame: pd.DataFrame) -> None:
    if "zk_metadata" not in frame:
        for column in ("start_time_ms", "end_time_ms"):
            if column not in frame:
                raise InputError(str(path), f"has neither zk_metadata nor {column}; segments need a time range")
        return
    for row, text in enumerate(frame["zk_metadata"]):
        if text is None or text == "" or (isinstance(text, float) and math.isnan(text)):
            continue
        try:
            ok = isinstance(json.loads(text), dict)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise InputError(str(path), f"zk_metadata of row {row} is not a JSON object of ZK simple fields: "
                                        f"{str(text)[:80]!r}")


def read_segments(data: str | Path) -> pd.DataFrame:
    """The segments table of a workload directory, every row checked (names, doc counts, ZK metadata).

    A consuming segment (``IN_PROGRESS``) imported from ZK has no doc count yet (-1); it is taken as
    half its partition's median sealed segment, with a warning. Any other missing or negative count is
    an error.

    Raises
    ------
    InputError
        No ``segments.parquet``, an unreadable one, no segments, or the first bad row.
    """
    path = Path(data) / SEGMENTS_FILE
    if not path.is_file():
        raise InputError(str(data), f"has no {SEGMENTS_FILE}; run `workbench generate` (or import) first")
    frame = read_parquet(path, ["segment_name", "total_docs"], what="segments table")
    if frame.empty:
        raise InputError(str(path), "holds no segments")
    _check_names(path, frame)
    _check_docs(path, frame)
    _check_zk(path, frame)
    return frame


def read_events(data: str | Path) -> pd.DataFrame:
    """Every event (row) of a workload directory, with the segment each went into (``segment_name``).

    Raises
    ------
    InputError
        No ``events/`` dataset, or one that cannot be read.
    """
    path = Path(data) / EVENTS_DIR
    if not path.exists():
        raise InputError(str(data), f"has no {EVENTS_DIR}/ dataset; run `workbench generate` first")
    try:
        frame: pd.DataFrame = pq.read_table(path).to_pandas()
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(path), f"is not a readable Parquet dataset ({str(exc).splitlines()[0][:160]})") from None
    if "segment_name" not in frame:
        raise InputError(str(path), "has no segment_name column; is it a workbench events dataset?")
    return frame


#: The column of an observed query's documents scanned (the broker log's ``docs=``), which a replay charges it.
LOGGED_DOCS = "num_docs_scanned"
#: The column of an observed query's entries scanned in its filter (the broker log's ``entries=`` before the slash),
#: which a replay charges it.
LOGGED_FILTER_ENTRIES = "num_entries_scanned_in_filter"


def read_replay_queries(data: str | Path) -> pd.DataFrame:
    """``arrival_s`` and ``sql`` of a workload directory's query log, in arrival order, checked; and, for an
    observed log (an import or a calibration), each query's logged documents scanned (:data:`LOGGED_DOCS`) and
    filter entries scanned (:data:`LOGGED_FILTER_ENTRIES`).

    Raises
    ------
    InputError
        No ``queries.parquet``, an unreadable one, no queries, a missing SQL text or an arrival
        time that is not a finite number of seconds >= 0.
    """
    path = Path(data) / QUERIES_FILE
    try:
        names = pq.read_schema(path).names
    except (pa.ArrowException, OSError):
        names = []  # read_parquet below says what is wrong with the file
    columns = ["arrival_s", "sql", *(c for c in (LOGGED_DOCS, LOGGED_FILTER_ENTRIES) if c in names)]
    frame = read_parquet(path, columns=columns, what="queries table")
    if frame.empty:
        raise InputError(str(path), "holds no queries to replay")
    arrival = pd.to_numeric(frame["arrival_s"], errors="coerce")
    bad = arrival.isna() | ~arrival.apply(math.isfinite) | (arrival < 0)
    if bad.any():
        raise _bad_row(path, frame, bad, "arrival_s", "arrival times are finite seconds >= 0")
    sql = frame["sql"]
    missing = sql.isna() | ~sql.map(lambda v: isinstance(v, str) and bool(v.strip()))
    if missing.any():
        raise _bad_row(path, frame, missing, "sql", "every replayed query needs its SQL text")
    return frame.sort_values("arrival_s", kind="stable")


@dataclass(frozen=True)
class WorkloadDir:
    """A workload directory: its segments, its query log, its events and its manifest.

    Equal (and hashed) by its path, so it keys a cache of work done on the data; the manifest is read
    once per value, on first use.
    """

    path: Path

    @property
    def segments_path(self) -> Path:
        """The segments table (one row per segment)."""
        return self.path / SEGMENTS_FILE

    @property
    def queries_path(self) -> Path:
        """The query log (one row per query, at its arrival time)."""
        return self.path / QUERIES_FILE

    @property
    def events_path(self) -> Path:
        """The events dataset (a directory of Parquet parts; generated workloads only)."""
        return self.path / EVENTS_DIR

    @property
    def manifest_path(self) -> Path:
        """The manifest, written last: a directory without one is not finished."""
        return self.path / MANIFEST_FILE

    def has_segments(self) -> bool:
        """Whether the directory holds a segments table."""
        return self.segments_path.is_file()

    def has_queries(self) -> bool:
        """Whether the directory holds a query log."""
        return self.queries_path.is_file()

    def has_events(self) -> bool:
        """Whether the directory holds an events dataset."""
        return self.events_path.exists()

    def has_manifest(self) -> bool:
        """Whether the directory's manifest is written."""
        return self.manifest_path.is_file()

    @cached_property
    def manifest(self) -> dict[str, Any]:
        """The manifest (row counts, time span, checksums ...), read once per value."""
        data = read_json_file(self.manifest_path, "workload manifest")
        if not isinstance(data, dict):
            raise InputError(str(self.manifest_path), "is not a JSON object; is it a workbench workload manifest?")
        return data

    def segments(self) -> pd.DataFrame:
        """The segments table, every row checked (:func:`read_segments`)."""
        return read_segments(self.path)

    def segment_columns(self, columns: Sequence[str], what: str = "segments table") -> pd.DataFrame:
        """Only ``columns`` of the segments table, as written (for summaries that need no checked rows)."""
        return read_parquet(self.segments_path, columns=columns, what=what)

    def replay_queries(self) -> pd.DataFrame:
        """The query log's arrival times and SQL, in arrival order, checked (:func:`read_replay_queries`)."""
        return read_replay_queries(self.path)

    def queries(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The query log (only ``columns``, when given), as written."""
        return read_parquet(self.queries_path, columns=columns, what="queries table")

    def events(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The events (only ``columns``, when given), unchecked and in file order."""
        frame: pd.DataFrame = self.event_table(columns).to_pandas()
        return frame

    def event_table(self, columns: Sequence[str] | None = None) -> pa.Table:
        """The events as an Arrow table (only ``columns``, when given), in file order."""
        return pq.read_table(self.events_path, columns=list(columns) if columns is not None else None)

    def with_queries(self, source: WorkloadDir, queries: pd.DataFrame) -> None:
        """Make this directory ``source``'s segments with ``queries`` as its query log (a faster replay);
        the query log is written last and atomically, so a directory with one is whole."""
        self.path.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source.segments_path, self.segments_path)
        with atomic_file(self.queries_path) as tmp:
            queries.to_parquet(tmp, index=False)
