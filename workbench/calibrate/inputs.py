"""Read the user's cluster files for calibration and check that they describe one table.

Each file goes through its importer (``docs/importers.md``), so every format those accept works here.
Then the files are checked against each other, because a fit of one table's log against another
table's segments would give confident nonsense:

* the table config may hold both table types (``GET /tables/{t}``); the segments choose which;
* the query log is usually a whole broker's (every table): only this table's queries are kept, and a log
  with none of them is an error naming both files;
* the segment list must be this table's (its segments' recorded table names) and large enough for the
  log (no query can touch more segments or documents than the table has);
* the log must carry the counters the cost is fitted on (``docs``, ``segments(...)``, ``servers``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.calibrate.log_reader import LogRead, read_log, table_of_log_name
from workbench.errors import InputError
from workbench.pinot.table_config import TableConfig
from workbench.workload.importers import read_gc_log, read_schema, read_segments, read_table_config

__all__ = ["COUNTERS", "CalibrationInputs", "read_inputs", "table_of_segment"]

#: Log columns the fit needs, with the entry that carries each.
COUNTERS = {"num_docs_scanned": "docs=", "num_segments_queried": "segments(queried/...)",
            "num_servers_queried": "servers=", "time_ms": "timeMs="}
_VERSIONS = ("every Pinot broker writes them on each query line: the 0.x releases in BaseBrokerRequestHandler's "
             "line ('RequestId:..., timeMs:..., docs:a/b, entries:a/b, segments(queried/processed/matched/"
             "consuming):..., servers:a/b, ..., query:...') and QueryLogger from 0.12.1 on ('requestId=..., "
             "timeMs=..., docs=a/b, entries=a/b, segments(queried/processed/matched/consumingQueried/...):..., "
             "servers=a/b, ..., query=...'); export the broker's querylog.log as written, without a custom layout")
#: Tolerance of the size checks: a segment list exported a little before or after the log.
_GROWTH = 1.25


def table_of_segment(name: str, zk_metadata: str | None) -> str | None:
    """The raw table a segment belongs to, when its record says so (ZK ``segment.table.name``), its name
    is an LLC name (``table__p__seq__time``) or it carries the type (``table_OFFLINE_...``); else ``None``.

    >>> table_of_segment("events__3__12__20260101T0000Z", None), table_of_segment("trips_OFFLINE_1_2_0", None)
    ('events', 'trips')
    >>> table_of_segment("my_custom_name", None) is None
    True
    """
    if zk_metadata:
        recorded = json.loads(zk_metadata).get("segment.table.name")
        if recorded:
            return table_of_log_name(str(recorded))
    if "__" in name:
        return name.split("__", 1)[0]
    for marker in ("_OFFLINE_", "_REALTIME_"):
        if marker in name:
            return name.split(marker, 1)[0]
    return None


@dataclass(frozen=True)
class CalibrationInputs:
    """The imported files of one table, checked against each other.

    ``queries`` are this table's logged queries in arrival order (``arrival_s`` from the first of them,
    ``query_id`` renumbered; :mod:`~workbench.calibrate.log_reader`'s columns); ``hosts`` the servers
    their ``serverStats`` name; ``segments`` this table type's segments; ``dropped`` counts the log lines
    left out and why; ``gc`` holds each GC log's pauses by path.
    """

    table: TableConfig
    schema: dict[str, Any] | None
    segments: pd.DataFrame
    queries: pd.DataFrame
    sources: dict[str, list[str]]
    hosts: frozenset[str] = frozenset()
    dropped: dict[str, int] = field(default_factory=dict)
    gc: dict[str, pd.DataFrame] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)


def _choose_config(path: Path, segments: pd.DataFrame, segments_path: Path) -> TableConfig:
    documents = read_table_config(path).documents
    configs = [TableConfig.from_json(doc) for doc in documents.values()]
    types = sorted(set(segments["table_type"].astype(str)))
    if len(types) > 1:
        raise InputError(str(segments_path), f"holds {' and '.join(types)} segments; calibrate one table type at a "
                                             "time: give the segments of one type (and its table config)")
    chosen = [c for c in configs if not types or c.table_type == types[0]]
    if not chosen:
        have = ", ".join(c.table_name_with_type for c in configs)
        raise InputError(f"{segments_path} and {path}", f"the segments are {types[0]} but the table config is "
                                                        f"for {have}: they are not the same table")
    return chosen[0]


def _check_fields(queries: pd.DataFrame, path: Path) -> None:
    missing = [entry for column, entry in COUNTERS.items()
               if column not in queries or queries[column].isna().all()]
    if missing:
        raise InputError(str(path), f"its query lines have no {', '.join(missing)} entries; calibrate fits the "
                                    f"service cost on {', '.join(COUNTERS.values())} and {_VERSIONS}")


def _this_table(log: LogRead, table: TableConfig, path: Path, segments_path: Path) -> dict[str, int]:
    """How many queries of other tables (and of the multi-stage engine) the log held; none of this table
    is an error naming both files."""
    if log.frame.empty:
        seen = ", ".join(sorted(log.tables)[:8])
        raise InputError(f"{path} and {segments_path}", f"the query log has no queries of table {table.table_name} "
                                                        f"(it has {seen}): the log and the segment list are not of "
                                                        "the same table")
    multi = sum(n for name, n in log.tables.items() if table_of_log_name(name) is None)
    others = sum(log.tables.values()) - len(log.frame) - multi
    return {"other tables": others, "multi-stage (several tables)": multi}


def _check_segments(segments: pd.DataFrame, queries: pd.DataFrame, table: TableConfig, seg_path: Path,
                    log: Path) -> None:
    zk = segments["zk_metadata"] if "zk_metadata" in segments else pd.Series([None] * len(segments))
    owners = {table_of_segment(str(n), z if isinstance(z, str) else None) for n, z in zip(
        segments["segment_name"], zk, strict=True)} - {None}
    others = sorted(str(o) for o in owners if str(o).lower() != table.table_name.lower())
    if others:
        raise InputError(f"{seg_path} and {log}", f"the segments belong to table {', '.join(others)} but the query "
                                                  f"log's queries are of table {table.table_name}: they are not the "
                                                  "same table")
    most = int(queries["num_segments_queried"].astype("Float64").max(skipna=True) or 0)
    if most > _GROWTH * len(segments) + 1:
        raise InputError(f"{seg_path} and {log}", f"a logged query of {table.table_name} touched {most} segments "
                                                  f"but the segment list has {len(segments)}: they are not the same "
                                                  "table (or the list is of another time); export both together")
    docs = segments["total_docs"].to_numpy(dtype=float)
    total = float(docs[docs > 0].sum())
    logged = float(queries["total_docs"].astype("Float64").max(skipna=True) or 0) if "total_docs" in queries else 0
    if total > 0 and logged > _GROWTH * total + 1:
        raise InputError(f"{seg_path} and {log}", f"a logged query of {table.table_name} saw {logged:,.0f} documents "
                                                  f"but the segments hold {total:,.0f}: they are not the same table "
                                                  "(or the list is of another time); export both together")


def read_inputs(table_config: str | Path, schema: str | Path, segments: str | Path, query_log: str | Path,
                gc_logs: tuple[str | Path, ...] = (), *, lenient: bool = False) -> CalibrationInputs:
    """Import every file and check they are one table's (see the module text for the checks).

    Raises
    ------
    InputError
        Naming the file (and line) for bad input, or both files when they do not belong together.
    """
    seg_path, log_path = Path(segments), Path(query_log)
    seg = read_segments(seg_path, lenient)
    table = _choose_config(Path(table_config), seg.frame, seg_path)
    schema_doc = dict(read_schema(Path(schema)).documents["schema.json"])
    log = read_log(log_path, table.table_name, lenient=lenient)
    dropped = _this_table(log, table, log_path, seg_path)
    _check_fields(log.frame, log_path)
    queries = log.frame
    _check_segments(seg.frame, queries, table, seg_path, log_path)
    gc = {str(p): read_gc_log(Path(p), lenient).frame for p in gc_logs}
    sources = {"table_config": [str(table_config)], "schema": [str(schema)], "segments": [str(seg_path)],
               "query_log": [str(log_path)], "gc_logs": [str(p) for p in gc_logs]}
    counts = {"query_log": log.counts, "segments": dict(seg.counts)}
    return CalibrationInputs(table, schema_doc, seg.frame, queries, sources, log.hosts,
                             {k: v for k, v in dropped.items() if v}, gc, counts)
