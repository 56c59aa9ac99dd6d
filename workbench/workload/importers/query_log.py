"""Import the broker's query log (``querylog.log``) into the workbench's queries table.

Each completed query is one log4j line (``yyyy/MM/dd HH:mm:ss.SSS LEVEL [QueryLogger] [thread]``) whose
message is comma-joined ``name=value`` entries ending with ``query=<sql>``. The entry list has grown
release by release (``queryHash`` in 1.5, ``groupsTrimmed``/``queryEngine``/``pools`` in 1.4,
``workloadName`` at HEAD, and pre-1.0 brokers wrote ``segments(queried/processed/matched/consuming/
unavailable)``), so entries are matched by *name*, never by position: missing ones become nulls and
unknown ones are kept in ``extra``. Values that contain commas (MSE ``table=[a, b]``, ``serverStats``,
``pools=[0, 1]``) are safe because an entry boundary is a comma followed by ``name=`` or
``name(sub/names):``, which no such value contains; the SQL, which may contain anything, is split off
first at the ``,query=`` after the last fixed entry.

The line is written when the query *completes*, so a query arrived ``timeMs`` before its timestamp;
``arrival_s`` is that instant, in seconds after the earliest arrival in the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from workbench.workload.importers.common import (
    ImportResult,
    Malformed,
    Tally,
    line_count,
    numbered_lines,
    parse_timestamp,
    read_text,
)
from workbench.workload.importers.conform import conform
from workbench.workload.schema import QUERIES_SCHEMA

__all__ = ["OBSERVED_COLUMNS", "OBSERVED_KIND", "QUERY_LOG_COLUMNS", "parse_query_message", "read_query_log"]

_TIMESTAMP = (r"(?P<date>\d{4}[-/]\d{2}[-/]\d{2})[ T](?P<clock>\d{2}:\d{2}:\d{2})(?:[.,](?P<fraction>\d{1,9}))?"
              r"(?:\s?(?P<zone>Z|[+-]\d{2}:?\d{2})\b)?")
_STAMP = re.compile(_TIMESTAMP)
#: A log record starts with a timestamp, optionally after a container prefix (``pinot-broker-0 | ``).
_RECORD_START = re.compile(r"^\s*(?:[\w.-]+\s*\|\s*)?\[?" + _TIMESTAMP)
#: After the timestamp: the level and the bracketed logger and thread of the default log4j pattern.
_LAYOUT_FIELDS = re.compile(r"\s*(?:[A-Z]+\s+)?(?:\[[^\]]*\]\s*)*")
_MESSAGE_START = re.compile(r"requestId=|RequestId:")
_QUERY_ENTRY = re.compile(r",\s*query[=:]")
_BOUNDARY = re.compile(r",\s*(?=[A-Za-z_]\w*(?:\([^()]*\))?[=:])")
_ENTRY = re.compile(r"(?P<name>[A-Za-z_]\w*)(?:\((?P<subs>[^()]*)\))?[=:](?P<value>.*)\Z", re.DOTALL)
_DROPPED = re.compile(r"(\d+) logs were dropped")
_EXPECTED = ("expected the broker's query log: '<yyyy/MM/dd HH:mm:ss.SSS> <LEVEL> [QueryLogger] [<thread>] "
             "requestId=<id>,table=<name>,timeMs=<ms>,...,query=<sql>'")


def _int(value: str) -> int:
    return int(value.strip())


def _bool(value: str) -> bool:
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError(value)
    return lowered == "true"


def _text(value: str) -> str:
    return value


#: Single-valued entries: lower-cased name -> (column, parser).
_SIMPLE: Mapping[str, tuple[str, Callable[[str], Any]]] = {
    "requestid": ("request_id", _int),
    "table": ("table", _text),
    "queryhash": ("query_hash", _text),
    "timems": ("time_ms", _int),
    "consumingfreshnesstimems": ("consuming_freshness_time_ms", _int),
    "groupstrimmed": ("groups_trimmed", _bool),
    "grouplimitreached": ("num_groups_limit_reached", _bool),
    "groupwarninglimitreached": ("num_groups_warning_limit_reached", _bool),
    "brokerreducetimems": ("broker_reduce_time_ms", _int),
    "exceptions": ("num_exceptions", _int),
    "serverstats": ("server_stats", _text),
    "clientip": ("client_ip", _text),
    "queryengine": ("query_engine", _text),
    "pools": ("pools", _text),
    "rlsfiltersapplied": ("rls_filters_applied", _bool),
    "workloadname": ("workload_name", _text),
}
#: ``a/b`` entries: name -> (column of a, column of b).
_PAIRS: Mapping[str, tuple[str, str]] = {
    "docs": ("num_docs_scanned", "total_docs"),
    "entries": ("num_entries_scanned_in_filter", "num_entries_scanned_post_filter"),
    "servers": ("num_servers_responded", "num_servers_queried"),
}
_CPU = {"total": "total", "thread": "thread", "sysactivity": "sys_activity", "resser": "res_ser"}
_MEM = {"total": "total", "thread": "thread", "resser": "res_ser"}
#: ``name(sub/names):a/b/...`` entries: name -> {lower-cased sub-name: column}.
_COMPOSITES: Mapping[str, Mapping[str, str]] = {
    "segments": {
        "queried": "num_segments_queried", "processed": "num_segments_processed",
        "matched": "num_segments_matched", "consumingqueried": "num_consuming_segments_queried",
        "consuming": "num_consuming_segments_queried", "consumingprocessed": "num_consuming_segments_processed",
        "consumingmatched": "num_consuming_segments_matched", "unavailable": "num_segments_unavailable",
    },
    **{f"{side}threadcputimens": {k: f"{side}_thread_cpu_time_ns_{v}" for k, v in _CPU.items()}
       for side in ("offline", "realtime")},
    **{f"{side}memallocatedbytes": {k: f"{side}_mem_allocated_bytes_{v}" for k, v in _MEM.items()}
       for side in ("offline", "realtime")},
}
_REQUIRED = {"request_id": "requestId", "table": "table", "time_ms": "timeMs"}
_BOOL_COLUMNS = ("partial", "groups_trimmed", "num_groups_limit_reached", "num_groups_warning_limit_reached",
                 "rls_filters_applied")
_TEXT_COLUMNS = ("table", "query_hash", "server_stats", "client_ip", "query_engine", "pools", "workload_name", "extra")
#: What only an observed query has, after the shared ``queries.parquet`` columns.
OBSERVED_COLUMNS = (
    "table", "time_ms", "num_docs_scanned", "num_segments_queried", "num_segments_processed", "num_segments_matched",
    "num_servers_queried", "num_servers_responded", "partial",
    "logged_s", "request_id", "query_hash", "total_docs", "num_entries_scanned_in_filter",
    "num_entries_scanned_post_filter", "num_consuming_segments_queried", "num_consuming_segments_processed",
    "num_consuming_segments_matched", "num_segments_unavailable", "consuming_freshness_time_ms",
    "groups_trimmed", "num_groups_limit_reached", "num_groups_warning_limit_reached", "broker_reduce_time_ms",
    "num_exceptions", "server_stats",
    *(f"{side}_thread_cpu_time_ns_{v}" for side in ("offline", "realtime") for v in _CPU.values()),
    *(f"{side}_mem_allocated_bytes_{v}" for side in ("offline", "realtime") for v in _MEM.values()),
    "client_ip", "query_engine", "pools", "rls_filters_applied", "workload_name", "extra", "source_line",
)
#: Observed columns the shared schema does not already have (all of them, today).
_EXTRAS = tuple(c for c in OBSERVED_COLUMNS if c not in QUERIES_SCHEMA.names)
#: Columns of the queries table: the shared ``queries.parquet`` schema, then :data:`OBSERVED_COLUMNS`.
QUERY_LOG_COLUMNS = (*QUERIES_SCHEMA.names, *_EXTRAS)
_INT_COLUMNS = tuple(c for c in OBSERVED_COLUMNS if c not in (*_BOOL_COLUMNS, *_TEXT_COLUMNS, "logged_s"))
#: ``kind`` of every imported query (synthetic ones are dashboard, adhoc, lookup or timerange).
OBSERVED_KIND = "observed"


def _split_query(message: str) -> tuple[str, str]:
    """``(entries, sql)``: the SQL is everything after the first ``,query=`` past the fixed entries."""
    anchor = message.find("workloadName=")
    match = _QUERY_ENTRY.search(message, max(anchor, 0))
    if match is None:
        raise Malformed("no ',query=<sql>' entry; every broker query-log line ends with the SQL")
    return message[: match.start()], message[match.end():]


def _entries(head: str) -> dict[str, tuple[str, str | None, str]]:
    """Lower-cased name -> ``(name as written, sub-names or None, value)``."""
    found: dict[str, tuple[str, str | None, str]] = {}
    for token in _BOUNDARY.split(head):
        match = _ENTRY.match(token)
        if match is None:
            raise Malformed(f"cannot read {token[:60]!r} as name=value")
        name = match["name"]
        if name.lower() in found:
            raise Malformed(f"entry {name!r} appears twice")
        found[name.lower()] = (name, match["subs"], match["value"])
    return found


def _simple(name: str, value: str) -> dict[str, Any]:
    column, parse = _SIMPLE[name.lower()]
    try:
        return {column: parse(value)}
    except ValueError:
        kind = "true or false" if parse is _bool else "an integer"
        raise Malformed(f"{name}={value!r}: the value must be {kind}") from None


def _numbers(name: str, value: str, count: int) -> list[int]:
    parts = value.split("/")
    try:
        if len(parts) != count:
            raise ValueError
        return [int(p) for p in parts]
    except ValueError:
        raise Malformed(f"{name}={value!r}: expected {count} integers separated by '/'") from None


def _composite(name: str, subs: str | None, value: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Columns for a known composite entry; sub-names it does not know go to ``extra``."""
    columns = _COMPOSITES[name.lower()]
    names = subs.split("/") if subs is not None else ["total"]
    label = f"{name}({subs})" if subs is not None else name
    known: dict[str, Any] = {}
    extra: dict[str, str] = {}
    for sub, number in zip(names, _numbers(label, value, len(names)), strict=True):
        column = columns.get(sub.lower())
        if column is None:
            extra[f"{name}.{sub}"] = str(number)
        else:
            known[column] = number
    return known, extra


def _entry_columns(name: str, subs: str | None, value: str) -> tuple[dict[str, Any], dict[str, str]]:
    lowered = name.lower()
    if lowered in _COMPOSITES:
        return _composite(name, subs, value)
    if subs is None and lowered in _SIMPLE:
        return _simple(name, value), {}
    if subs is None and lowered in _PAIRS:
        return dict(zip(_PAIRS[lowered], _numbers(name, value, 2), strict=True)), {}
    return {}, {name if subs is None else f"{name}({subs})": value}


def _partial(row: Mapping[str, Any]) -> bool:
    """What the log shows of Pinot's partialResult: exceptions, group limit, or a server that did not answer."""
    queried, responded = row.get("num_servers_queried"), row.get("num_servers_responded")
    return bool((row.get("num_exceptions") or 0) > 0 or row.get("num_groups_limit_reached")
                or (queried is not None and responded is not None and responded < queried))


#: Counts a broker never logs negative: (column, the entry that holds it).
_NON_NEGATIVE = (("time_ms", "timeMs"), ("num_docs_scanned", "docs"), ("total_docs", "docs"),
                 ("num_servers_queried", "servers"), ("num_servers_responded", "servers"),
                 ("num_segments_queried", "segments"), ("num_segments_processed", "segments"),
                 ("num_segments_matched", "segments"))


def _check_possible(row: Mapping[str, Any]) -> None:
    """Values no broker writes: negative times or counts, more servers answering than were asked."""
    for column, name in _NON_NEGATIVE:
        if (row.get(column) or 0) < 0:
            raise Malformed(f"{name}: {column} is {row[column]}, but it cannot be negative")
    queried, responded = row.get("num_servers_queried"), row.get("num_servers_responded")
    if queried is not None and responded is not None and responded > queried:
        raise Malformed(f"servers={responded}/{queried}: more servers responded than were queried")
    if not str(row.get("table", "")).strip():
        raise Malformed("table= is empty; every query names its table")


def parse_query_message(message: str) -> dict[str, Any]:
    """The columns of one query-log message (the part from ``requestId=`` on).

    >>> row = parse_query_message("requestId=7,table=t,timeMs=12,docs=3/9,servers=2/2,"
    ...                           "newKey=x,query=SELECT a, b FROM t WHERE c = 'x,y'")
    >>> row["request_id"], row["time_ms"], row["num_docs_scanned"], row["sql"], row["extra"]
    (7, 12, 3, "SELECT a, b FROM t WHERE c = 'x,y'", '{"newKey": "x"}')

    Raises
    ------
    Malformed
        When an entry cannot be read, a value has the wrong form or a required entry is missing.
    """
    head, sql = _split_query(message)
    row: dict[str, Any] = {"sql": sql}
    extra: dict[str, str] = {}
    for name, subs, value in _entries(head).values():
        known, unknown = _entry_columns(name, subs, value)
        row.update(known)
        extra.update(unknown)
    for column, name in _REQUIRED.items():
        if column not in row:
            raise Malformed(f"no {name}= entry; every broker query-log line has requestId, table and timeMs")
    _check_possible(row)
    row["extra"] = json.dumps(extra, sort_keys=True) if extra else ""
    row["partial"] = _partial(row)
    return row


def _logged_at(first: str, request_id_at: int) -> tuple[float, int]:
    """The log timestamp (epoch s) and where the message starts: after the level, logger and thread.

    The message normally starts at ``requestId=``; a broker that wrote entries before it (a fork, a
    future order) still has them read, because the message is taken to start after the layout fields.
    """
    stamp = _STAMP.search(first, 0, request_id_at)
    if stamp is None:
        raise Malformed(f"no log timestamp before requestId=; {_EXPECTED}")
    try:
        logged = parse_timestamp(stamp["date"], stamp["clock"], stamp["fraction"], stamp["zone"])
    except ValueError:
        raise Malformed(f"log timestamp {stamp[0]!r} is not a valid date and time") from None
    layout = _LAYOUT_FIELDS.match(first, stamp.end())
    return logged, min(layout.end() if layout else request_id_at, request_id_at)


def _query_row(first: str, more: list[str]) -> dict[str, Any]:
    match = _MESSAGE_START.search(first)
    assert match is not None
    logged, start = _logged_at(first, match.start())
    row = parse_query_message("\n".join([first[start:], *more]).rstrip())
    return {**row, "logged_epoch_s": logged}


def _logical_records(text: str) -> Iterator[tuple[int, str, list[str]]]:
    """``(line_no, first line, continuation lines)``: a multi-line SQL continues on lines without a timestamp."""
    current: tuple[int, str, list[str]] | None = None
    for line_no, line in numbered_lines(text):
        if current is None or _RECORD_START.match(line) or _MESSAGE_START.search(line):
            if current is not None:
                yield current
            current = (line_no, line, [])
        else:
            current[2].append(line)
    if current is not None:
        yield current


def _other_line(first: str, more: list[str], tally: Tally) -> None:
    """Account for a log record that is not a completed query (other loggers, rate-limit notices)."""
    dropped = _DROPPED.search(first)
    if dropped:
        tally.count("dropped_by_rate_limit", int(dropped[1]))
    tally.count("ignored", 1 + len(more))


def _rows(text: str, tally: Tally) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for line_no, first, more in _logical_records(text):
        if _MESSAGE_START.search(first):
            try:
                rows.append({**_query_row(first, more), "source_line": line_no})
                tally.count("continuation_lines", len(more))
            except Malformed as exc:
                tally.malformed(line_no, str(exc))
        elif _RECORD_START.match(first) or not first.strip():
            _other_line(first, more, tally)
        else:
            tally.malformed(line_no, f"not a log line (no timestamp, no requestId=); {_EXPECTED}")
    return rows


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Order by arrival and number the queries; ``now_ms`` is the arrival's wall-clock time."""
    frame = pd.DataFrame(rows)
    logged = frame["logged_epoch_s"].to_numpy(dtype=float)
    arrival = logged - frame["time_ms"].to_numpy(dtype=float) / 1000.0
    origin = float(arrival.min())
    frame["arrival_s"] = np.round(arrival - origin, 6)
    frame["logged_s"] = np.round(logged - origin, 6)
    frame["now_ms"] = np.round(arrival * 1000.0).astype(np.int64)
    frame = frame.sort_values(["arrival_s", "source_line"], kind="mergesort").reset_index(drop=True)
    frame["query_id"] = np.arange(len(frame), dtype=np.int64)
    return _typed(frame)


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Shared columns first with the shared types, then the observed ones with fixed (nullable) dtypes.

    Brokers before 1.4 do not write ``queryHash``, ``groupsTrimmed`` or ``queryEngine``; those are
    nulls, so a table has the same columns and dtypes whichever version wrote the log.
    """
    observed = frame.reindex(columns=list(OBSERVED_COLUMNS))
    dtypes = {**{c: "Int64" for c in _INT_COLUMNS}, **{c: "boolean" for c in _BOOL_COLUMNS},
              **{c: "string" for c in _TEXT_COLUMNS}, "logged_s": "float64"}
    observed = observed.astype(dtypes).astype({"request_id": "int64", "time_ms": "int64", "source_line": "int64",
                                               "partial": "bool"})
    typed = frame.assign(**{c: observed[c] for c in OBSERVED_COLUMNS})
    if len(typed):
        typed = typed.assign(kind=OBSERVED_KIND)
    return conform(typed, QUERIES_SCHEMA, _EXTRAS)


def read_query_log(path: str | Path, lenient: bool = False, *, max_bytes: int | None = None) -> ImportResult:
    """Read a broker query log into one row per completed query, in arrival order.

    Parameters
    ----------
    path
        ``querylog.log`` (or a broker log holding ``QueryLogger`` lines), optionally gzipped.
    lenient
        Skip malformed query lines (counted, with their line numbers) instead of raising.
    max_bytes
        Largest input read (after decompression); ``None`` for the default limit.

    Returns
    -------
    ImportResult
        ``frame`` has :data:`QUERY_LOG_COLUMNS` (the shared queries schema with ``kind`` "observed",
        ``now_ms`` the arrival's wall-clock time and -1 for the synthetic-only ids); ``counts`` adds
        ``continuation_lines`` (lines of multi-line SQL) and ``dropped_by_rate_limit`` (lines the
        broker's rate limiter reported dropping).

    Raises
    ------
    InputError
        At ``file:line`` for the first malformed query line in strict mode, or when the file holds no
        query lines at all.
    """
    source = Path(path)
    tally = Tally(source, lenient)
    text = read_text(source, max_bytes=max_bytes)
    rows = _rows(text, tally)
    tally.require_rows(len(rows), f"holds no broker query-log lines; {_EXPECTED}")
    tally.count("lines", line_count(text))
    frame = _frame(rows)
    return tally.result("query-log", frame)
