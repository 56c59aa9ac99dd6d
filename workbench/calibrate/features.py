"""What each logged query asked of the cluster, in the terms the cost model charges for.

The broker's query log gives per query its total time, documents scanned, segments and servers
(``docs/importers.md``). The cost model (``docs/model.md``) charges a broker overhead and reduce per
server and per row, and on each server a runner's per-request and merge work plus each segment's
worker time. This module turns a log row into those quantities:

* the SQL is parsed once per distinct text (:func:`sql_shapes`) to know whether the query is a group-by
  (its merge runs on the workers, PE §2.2), its LIMIT (rows returned, PE §5), its ``maxExecutionThreads``
  and its *kind* for the back-test (``lookup``, ``group-by``, ``aggregation``, ``selection``);
* the segments are spread over the servers as evenly as the log's counts allow, and each server's
  task count follows Pinot's rule for the given cores (:class:`~workbench.pinot.execution_config.ServerQueryConfig`);
* rows returned follow the model's rule (:func:`workbench.sim.planner.result_rows`): one per server for an
  aggregation, up to the trim size for a group-by, up to LIMIT for a selection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.calibrate.critical_path import Shape
from workbench.errors import InputError
from workbench.pinot.execution_config import ServerQueryConfig
from workbench.pinot.sql import parse_query
from workbench.pinot.sql.query import FilterOperator, Query, iter_predicates
from workbench.pinot.table_config import TableConfig
from workbench.sim.planner import SERVER_GROUP_TRIM_MIN, delay_kind
from workbench.sim.service import function_calls

__all__ = ["KINDS", "LogFeatures", "SqlShape", "classify", "log_features", "lookup_columns", "server_stats",
           "split_shape", "sql_shapes"]

#: Query kinds the back-test reports separately, in display order.
KINDS = ("lookup", "group-by", "aggregation", "selection")
_LOOKUP_OPERATORS = (FilterOperator.EQ, FilterOperator.IN)


@dataclass(frozen=True)
class SqlShape:
    """What the fit and the back-test need of one SQL text (``query`` is ``None`` when it does not parse)."""

    query: Query | None
    kind: str
    group_by: bool
    #: Cap on the rows one server returns (``inf``: all it scanned; 1: a plain aggregation).
    row_cap: float
    threads: int | None
    error: str = ""


def classify(query: Query, lookup_columns: Iterable[str]) -> str:
    """The query's kind: ``lookup`` (EQ/IN on a partition or primary-key column), else by its shape.

    >>> from workbench.pinot.sql import parse_query
    >>> classify(parse_query("SELECT * FROM t WHERE id = 7"), {"id"})
    'lookup'
    >>> [classify(parse_query(s), ()) for s in ("SELECT a, COUNT(*) FROM t GROUP BY a", "SELECT SUM(x) FROM t",
    ...                                          "SELECT a FROM t LIMIT 5")]
    ['group-by', 'aggregation', 'selection']
    """
    keys = set(lookup_columns)
    if any(p.column in keys and p.operator in _LOOKUP_OPERATORS for p in iter_predicates(query.filter)):
        return "lookup"
    if query.group_by:
        return "group-by"
    return "aggregation" if query.is_aggregation else "selection"


def _row_cap(query: Query) -> float:
    """PE §5 as :func:`workbench.sim.planner.result_rows` applies it: rows one server returns at most."""
    if query.is_aggregation and not query.group_by:
        return 1.0
    if query.group_by:
        return float(max(5 * query.effective_limit, SERVER_GROUP_TRIM_MIN))
    return float(query.effective_limit + (query.offset or 0))


def _threads(query: Query) -> int | None:
    value = query.option("maxExecutionThreads")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _shape(sql: str, lookup_columns: frozenset[str]) -> SqlShape:
    try:
        query = parse_query(sql)
    except (InputError, ValueError) as exc:  # ValueError: a literal the query model refuses (1e999)
        return SqlShape(None, "unparsed", False, 1.0, None, str(exc))
    return SqlShape(query, classify(query, lookup_columns), bool(query.group_by), _row_cap(query), _threads(query))


def lookup_columns(table: TableConfig, schema: Mapping[str, Any] | None) -> frozenset[str]:
    """Columns whose EQ/IN filter makes a query a point lookup: partition columns and primary keys."""
    keys = set(table.column_partition_map)
    keys.update(str(c) for c in (schema or {}).get("primaryKeyColumns") or ())
    return frozenset(keys)


def sql_shapes(sql: Iterable[str], lookup: frozenset[str]) -> dict[str, SqlShape]:
    """Each distinct SQL text parsed once."""
    return {text: _shape(text, lookup) for text in dict.fromkeys(sql)}


@dataclass(frozen=True)
class LogFeatures:
    """Per logged query (one entry per row of the frame it was built from), the model's quantities.

    ``time_ms`` is the logged total; ``segments`` are the segments queried (what the model charges a
    per-segment cost for), ``docs`` the documents scanned, ``servers`` the servers that were sent a
    request and held segments, ``responded`` those that answered (the reduce's count). ``shape_id``
    indexes ``shapes``: per server, (segments, tasks, how many servers). ``rows`` is what the servers
    return under the model's rule; ``largest`` the most segments one server holds.
    """

    time_ms: np.ndarray
    servers: np.ndarray
    responded: np.ndarray
    segments: np.ndarray
    docs: np.ndarray
    entries_in_filter: np.ndarray
    entries_post_filter: np.ndarray
    group_by: np.ndarray
    rows: np.ndarray
    largest: np.ndarray
    kind: np.ndarray
    shape_id: np.ndarray
    shapes: tuple[Shape, ...]
    arrival_s: np.ndarray
    #: Per query the aggregation functions it calls, once per call, by Pinot's canonical name (an object array
    #: of tuples; :func:`~workbench.sim.service.function_calls`); ``None``: not known (no call is assumed).
    functions: np.ndarray | None = None
    #: Per query the kind whose request delay the model draws for it (:func:`~workbench.sim.planner.delay_kind`;
    #: an object array, ``None`` for an unparsed query); ``None``: not known (every query pooled).
    delay_kinds: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.time_ms)

    @property
    def calls(self) -> np.ndarray:
        """``functions``, or no calls for every query when they are not known."""
        if self.functions is not None:
            return self.functions
        out = np.empty(len(self), dtype=object)
        out[:] = [()] * len(self)
        return out

    def take(self, index: np.ndarray) -> LogFeatures:
        """The features of the rows at ``index`` (the shapes table is shared)."""
        fields = {name: getattr(self, name)[index] for name in _ARRAYS}
        return LogFeatures(shapes=self.shapes, functions=None if self.functions is None else self.functions[index],
                           delay_kinds=None if self.delay_kinds is None else self.delay_kinds[index], **fields)


_ARRAYS = ("time_ms", "servers", "responded", "segments", "docs", "entries_in_filter", "entries_post_filter",
           "group_by", "rows", "largest", "kind", "shape_id", "arrival_s")


def _numbers(frame: pd.DataFrame, column: str) -> np.ndarray:
    values: np.ndarray = frame[column].astype("Float64").fillna(0).to_numpy(dtype=float)
    return values


def _server_shapes(servers: np.ndarray, segments: np.ndarray, group_by: np.ndarray, threads: list[int | None],
                   config: ServerQueryConfig) -> tuple[np.ndarray, tuple[Shape, ...], np.ndarray]:
    """Each query's shape id, the distinct shapes, and the most segments on one server."""
    index: dict[Shape, int] = {}
    ids = np.zeros(len(servers), dtype=np.int64)
    largest = np.zeros(len(servers), dtype=np.int64)
    for i, (n, s, gb, option) in enumerate(zip(servers.tolist(), segments.tolist(), group_by.tolist(), threads,
                                                strict=True)):
        shape = _split(int(n), int(s), bool(gb), option, config)
        ids[i] = index.setdefault(shape, len(index))
        largest[i] = max((seg for seg, _, _ in shape), default=0)
    return ids, tuple(index), largest


def split_shape(counts: tuple[int, ...], group_by: bool, option: int | None, config: ServerQueryConfig) -> Shape:
    """The shape of a query whose servers serve ``counts`` segments each (each with its task count, as
    :func:`_split` gives them), servers with the same count grouped.

    >>> split_shape((3, 1, 3), False, None, ServerQueryConfig.from_properties({}, cores=2))
    ((3, 1, 2), (1, 1, 1))
    """
    grouped: dict[int, int] = {}
    for seg in sorted(counts, reverse=True):
        if seg > 0:
            grouped[seg] = grouped.get(seg, 0) + 1
    out = []
    for seg, count in grouped.items():
        tasks = config.tasks(seg, group_by, option)
        out.append((seg, min(tasks, config.cores) if group_by else tasks, count))
    return tuple(out)


def _split(servers: int, segments: int, group_by: bool, option: int | None, config: ServerQueryConfig) -> Shape:
    """Segments spread as evenly as possible over the servers, with each server's task count.

    A group-by's tasks may outnumber the cores (min(segments, 2c), PE §2.1); the cores then share them,
    so at most ``c`` run at full speed: the schedule is taken over ``min(tasks, c)`` tasks.
    """
    if servers <= 0 or segments <= 0:
        return ()
    n = min(servers, segments)
    q, r = divmod(segments, n)
    out = []
    for count, seg in ((r, q + 1), (n - r, q)):
        if count and seg:
            tasks = config.tasks(seg, group_by, option)
            out.append((seg, min(tasks, config.cores) if group_by else tasks, count))
    return tuple(out)


def _rows(servers: np.ndarray, segments: np.ndarray, docs: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Rows the servers return: per server ``min(docs it scanned, cap)``, 1 for a plain aggregation."""
    n = np.minimum(servers, np.maximum(segments, 0))
    safe_n = np.maximum(n, 1)
    q, r = np.divmod(segments, safe_n)
    per_seg = np.where(segments > 0, docs / np.maximum(segments, 1), 0.0)
    big = np.minimum(np.floor(per_seg * (q + 1)), cap)
    small = np.minimum(np.floor(per_seg * q), cap)
    rows = r * big + (n - r) * small
    rows = np.where(cap == 1.0, n, rows)   # an aggregation returns one row per server whatever it scanned
    result: np.ndarray = np.where(n > 0, rows, 0.0)
    return result


def log_features(frame: pd.DataFrame, shapes: Mapping[str, SqlShape], config: ServerQueryConfig) -> LogFeatures:
    """The model's quantities for every row of an imported query log (``read_query_log``'s columns).

    Rows must have the counters (``num_docs_scanned``, ``num_segments_queried``, ``num_servers_queried``);
    :mod:`workbench.calibrate.inputs` drops those that do not before this is called.
    """
    per_sql = [shapes[s] for s in frame["sql"].astype(str)]
    group_by = np.array([s.group_by for s in per_sql], dtype=bool)
    cap = np.array([s.row_cap for s in per_sql], dtype=float)
    servers = _numbers(frame, "num_servers_queried").astype(np.int64)
    segments = _numbers(frame, "num_segments_queried").astype(np.int64)
    docs = _numbers(frame, "num_docs_scanned")
    shape_id, table, largest = _server_shapes(servers, segments, group_by, [s.threads for s in per_sql], config)
    return LogFeatures(
        time_ms=frame["time_ms"].to_numpy(dtype=float),
        servers=np.minimum(servers, np.maximum(segments, 0)),
        responded=_numbers(frame, "num_servers_responded"),
        segments=segments,
        docs=docs,
        entries_in_filter=_numbers(frame, "num_entries_scanned_in_filter"),
        entries_post_filter=_numbers(frame, "num_entries_scanned_post_filter"),
        group_by=group_by,
        rows=_rows(servers, segments, docs, cap),
        largest=largest,
        kind=np.array([s.kind for s in per_sql], dtype=object),
        shape_id=shape_id,
        shapes=table,
        arrival_s=frame["arrival_s"].to_numpy(dtype=float),
        functions=_calls([function_calls(s.query) for s in per_sql]),
        delay_kinds=np.array([delay_kind(s.query) for s in per_sql], dtype=object),
    )


def _calls(each: list[tuple[str, ...]]) -> np.ndarray:
    out = np.empty(len(each), dtype=object)
    out[:] = each
    return out


_SERVER_STAT = r";([^;=]+)=(-?\d+),(-?\d+)"


def server_stats(frame: pd.DataFrame) -> tuple[np.ndarray, frozenset[str]]:
    """From ``serverStats`` (PB §9): each query's slowest server round trip (ms; NaN when not logged) and
    every server host named in the log (the ``_O``/``_R`` table-type suffix removed).

    Each server's entry is ``host_O=SubmitDelayMs,ResponseDelayMs,...``; ``ResponseDelayMs`` is the
    time from sending the request to receiving the server's response (Pinot's ``ServerResponse``), so
    ``timeMs`` minus the slowest one is what the broker spent on its own (compile, route, reduce).

    >>> f = pd.DataFrame({"server_stats": ["(Server=SubmitDelayMs,ResponseDelayMs);a_O=0,15,1;b_O=1,18,9",
    ...                                    "unknown", None]})
    >>> slowest, hosts = server_stats(f)
    >>> slowest.tolist()[0], sorted(hosts)
    (18.0, ['a', 'b'])
    """
    if "server_stats" not in frame:
        return np.full(len(frame), np.nan), frozenset()
    found = frame["server_stats"].astype("string").fillna("").str.findall(_SERVER_STAT)
    slowest = np.full(len(frame), np.nan)
    hosts: set[str] = set()
    for i, entries in enumerate(found.tolist()):
        delays = [int(e[2]) for e in entries if int(e[2]) >= 0]
        if delays:
            slowest[i] = float(max(delays))
        hosts.update(_host(e[0]) for e in entries)
    return slowest, frozenset(hosts)


def _host(name: str) -> str:
    return name[:-2] if name.endswith(("_O", "_R")) else name
