"""What each query touches: Pinot's broker pruners on the layout, and the documents each segment scans.

A :class:`Planner` parses each distinct SQL text once (Pinot's SQL subset, :mod:`workbench.pinot.sql`),
runs the table's broker pruners (empty -> time -> partition, built from the table config by Pinot's
factory rules) over the segments, and estimates the documents each surviving segment scans: the
share of the segment's time range that the filter's time intervals cover, times its documents
(rows are taken as spread evenly over a segment's time range; a consuming segment, which has no
range yet, scans everything). An aggregation Pinot answers from a segment's metadata where its filter
matches the whole segment (``COUNT(*)`` over whole days: :mod:`workbench.pinot.aggregation_plan`) scans none of
that segment's documents. Plans are cached per SQL text, so dashboards that repeat a query pay once; the decision
is the pruners', the cost a dictionary look-up.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench import defaults as D
from workbench.pinot.aggregation_plan import answers_from_metadata
from workbench.pinot.pruning import TimeSegmentPruner, build_segment_pruners, init_pruners, prune_segments
from workbench.pinot.routing.options import parse_routing_options, routing_options_set
from workbench.pinot.schema import Schema
from workbench.pinot.segment import SegmentMetadata
from workbench.pinot.sql import parse_query
from workbench.pinot.sql.query import Query, iter_predicates
from workbench.pinot.table_config import TableConfig
from workbench.workload.directory import LOGGED_DOCS, LOGGED_FILTER_ENTRIES

__all__ = ["FULL_SCAN", "Planner", "QueryPlan", "default_schema", "logged_docs", "logged_filter_entries", "result_rows",
           "segment_metadata"]

#: PE §2.2: a server trims group-by results to max(5 x LIMIT, ``min.server.group.trim.size`` 5000) groups.
SERVER_GROUP_TRIM_MIN = 5000

#: ``parse_query`` kept per process for the texts seen last (queries are immutable values).
_parsed = functools.lru_cache(maxsize=D.PARSED_SQL_CACHE)(parse_query)


@dataclass(frozen=True)
class QueryPlan:
    """The segments a query keeps after pruning (indices into the layout), docs each scans, and a key.

    ``docs_scanned`` are the rows the server reads in each segment, which the cost model charges per document: 0
    for a segment Pinot answers from its metadata, whose log line still counts all of its rows. ``filter_entries``
    are the values its filter reads row by row, which it charges per entry (``service.ns_per_filter_entry``)."""

    key: int
    segments: tuple[int, ...] | None
    names: tuple[str, ...] | None
    docs_scanned: tuple[float, ...] | None
    pruned: int
    #: The parsed query (``None`` for the synthetic full scan), for the result cache's key.
    query: Query | None = None
    #: The entries each kept segment's filter reads row by row (Pinot's ``numEntriesScannedInFilter``; ``None``:
    #: none, as for the synthetic full scan, which has no filter).
    filter_entries: tuple[float, ...] | None = None

    @functools.cached_property
    def _kept(self) -> tuple[np.ndarray, np.ndarray] | None:
        if self.segments is None:
            return None
        segments = np.asarray(self.segments, dtype=np.int32)
        docs = np.asarray(self.docs_scanned, dtype=float)
        segments.flags.writeable = docs.flags.writeable = False
        return segments, docs

    def arrays(self, layout_docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The kept segments (layout indices, int32, plan order) and the documents each scans, as read-only
        arrays made once per plan: every replication of a run, and its routing, reads them.
        ``layout_docs``: the layout's documents per segment, which a full scan (no ``segments``) keeps."""
        kept = self._kept
        if kept is None:
            return np.arange(len(layout_docs), dtype=np.int32), np.asarray(layout_docs, dtype=float)
        return kept


#: The plan of a query without a filter: every segment, all its documents.
FULL_SCAN = QueryPlan(0, None, None, None, 0)


def result_rows(query: Query | None, docs_scanned: float) -> int:
    """Rows one server returns for ``query`` after scanning ``docs_scanned`` documents (PE §5).

    An aggregation (and the synthetic full scan, a ``COUNT(*)``) returns one row; a group-by at most the
    server's trim size and no more groups than documents; a selection at most ``LIMIT`` (+ ``OFFSET``)
    rows and no more than documents.

    >>> from workbench.pinot.sql import parse_query
    >>> result_rows(parse_query("SELECT COUNT(*) FROM t"), 1e6), result_rows(parse_query("SELECT a FROM t LIMIT 7"), 3)
    (1, 3)
    >>> result_rows(parse_query("SELECT a, COUNT(*) FROM t GROUP BY a LIMIT 2000"), 1e6)
    10000
    """
    docs = max(0, int(docs_scanned))
    if query is None or (query.is_aggregation and not query.group_by):
        return 1
    if query.group_by:
        return min(docs, max(5 * query.effective_limit, SERVER_GROUP_TRIM_MIN))
    return min(docs, query.effective_limit + (query.offset or 0))


def delay_kind(query: Query | None) -> str | None:
    """The kind of query whose own request delay a request of ``query`` draws
    (``cluster.network.request_delay_by_kind_ms``): ``group_by``, ``aggregation`` or ``selection``; ``None`` for
    an unparsed query or the synthetic full scan (``request_delay_ms``). ``calibrate`` groups a log's delays by
    the same function, so the delays a kind is given are those its own queries logged.

    >>> from workbench.pinot.sql import parse_query
    >>> [delay_kind(parse_query(s)) for s in ("SELECT a, COUNT(*) FROM t GROUP BY a", "SELECT SUM(x) FROM t",
    ...                                        "SELECT * FROM t WHERE id = 7 LIMIT 1")] + [delay_kind(None)]
    ['group_by', 'aggregation', 'selection', None]
    """
    if query is None:
        return None
    if query.group_by:
        return "group_by"
    return "aggregation" if query.is_aggregation else "selection"


def default_schema(table: TableConfig) -> Schema | None:
    """A Pinot schema for generated data: its time column holds epoch milliseconds.

    Pinot's broker needs the schema's DateTimeFieldSpec to build the time pruner; scenarios that
    carry the user's own schema (``schema:``) use that instead.
    """
    column = table.time_column_name
    if column is None:
        return None
    return Schema.from_json({"schemaName": table.table_name, "dateTimeFieldSpecs": [
        {"name": column, "dataType": "LONG", "format": "1:MILLISECONDS:EPOCH", "granularity": "1:MILLISECONDS"}]})


def segment_metadata(segments: pd.DataFrame) -> dict[str, SegmentMetadata]:
    """Pruner metadata from a segments table: the ZK record when present, else the plain columns."""
    out: dict[str, SegmentMetadata] = {}
    has_zk = "zk_metadata" in segments
    for row in segments.to_dict("records"):
        name = str(row["segment_name"])
        zk = row.get("zk_metadata") if has_zk else None
        if isinstance(zk, str) and zk:
            out[name] = SegmentMetadata.from_zk_metadata(name, json.loads(zk))
        else:
            start, end = int(row["start_time_ms"]), int(row["end_time_ms"])
            out[name] = SegmentMetadata(name, start if start >= 0 else None, end if end >= 0 else None,
                                        total_docs=int(row["total_docs"]))
    return out


def _overlap(interval: tuple[int, int] | None, query: list[tuple[int, int]], granule: int = 1) -> float:
    """The share of a segment's time values the query's intervals cover, its values spread evenly over
    the grid ``lo, lo + granule, ..., hi`` (``granule`` the time column's step: 1 ms, or a day for a day
    column, whose values Pinot's time pruner reads as each day's first millisecond)."""
    if interval is None:
        return 1.0
    lo, hi = interval
    steps = max(0, hi - lo) // granule  # grid points past lo
    covered = 0
    for a, b in query:
        first = max(0, -((lo - a) // granule))  # ceil((a - lo) / granule), at least the first point
        last = min(steps, (b - lo) // granule) if b >= lo else -1
        covered += max(0, last - first + 1)
    return min(1.0, covered / (steps + 1))


def logged_docs(replay: pd.DataFrame) -> dict[str, float]:
    """Per SQL text of a replayed log, the median of the documents its queries' log lines say they scanned
    (:data:`~workbench.workload.directory.LOGGED_DOCS`), which the replay's planner charges it (:class:`Planner`'s
    ``logged``); none for a log without the column (a generated workload) or a text none of whose lines gives it.
    One plan per text: the same SQL over the same segments scans the same rows, and the median keeps one odd line
    (a query that timed out) from setting every copy's cost.

    >>> logged_docs(pd.DataFrame({"sql": ["a", "a", "a", "b"], "num_docs_scanned": [10, 12, 400, None]}))
    {'a': 12.0}
    """
    return _logged_medians(replay, LOGGED_DOCS)


def logged_filter_entries(replay: pd.DataFrame) -> dict[str, float]:
    """Per SQL text of a replayed log, the median of the filter entries its queries' log lines say they scanned
    (:data:`~workbench.workload.directory.LOGGED_FILTER_ENTRIES`, the ``entries=`` count before the slash), as
    :func:`logged_docs` does for the documents.

    >>> logged_filter_entries(pd.DataFrame({"sql": ["a", "a", "b"], "num_entries_scanned_in_filter": [10, 30, 5]}))
    {'a': 20.0, 'b': 5.0}
    """
    return _logged_medians(replay, LOGGED_FILTER_ENTRIES)


def _logged_medians(replay: pd.DataFrame, column: str) -> dict[str, float]:
    if column not in replay:
        return {}
    values = pd.to_numeric(replay[column], errors="coerce")
    medians = values.groupby(replay["sql"].astype(str)).median().dropna()
    return {str(k): float(v) for k, v in medians.items()}


def _spread(planned: tuple[float, ...], logged: float) -> tuple[float, ...]:
    """``logged`` documents over a query's kept segments in the proportions of ``planned`` (evenly when those are 0).

    >>> _spread((100.0, 300.0), 200.0), _spread((0.0, 0.0), 10.0)
    ((50.0, 150.0), (5.0, 5.0))
    """
    total = sum(planned)
    if total > 0:
        return tuple(d * logged / total for d in planned)
    return tuple(logged / len(planned) for _ in planned)


class Planner:
    """Plans queries for one layout; build once per replication (plans are deterministic)."""

    def __init__(self, names: tuple[str, ...], docs: np.ndarray, table: TableConfig,
                 schema: Schema | None, metadata: Mapping[str, SegmentMetadata] | None,
                 logged: Mapping[str, float] | None = None,
                 logged_entries: Mapping[str, float] | None = None) -> None:
        # The pruner factory ports Pinot's broker SegmentPrunerFactory, which reads the schema JSON itself.
        self.names = names
        self.docs = docs
        self.logged = dict(logged or {})
        self.logged_entries = dict(logged_entries or {})
        self.metadata = dict(metadata or {})
        self.pruners = build_segment_pruners(table, schema.to_json() if schema else None) if metadata else []
        if self.pruners:
            init_pruners(self.pruners, self.metadata, names)
        self._time = next((p for p in self.pruners if isinstance(p, TimeSegmentPruner)), None)
        self._raw = table.no_dictionary_columns
        self._indexed = table.filter_index_columns
        self._index = {n: i for i, n in enumerate(names)}
        self._plans: dict[str, QueryPlan] = {}

    def plan(self, sql: str, query: Query | None = None) -> QueryPlan:
        """The plan of one SQL text (cached); ``query`` is the text already parsed, when the caller has it
        (calibration parses a log's SQL once for its own needs, and parsing is most of planning).

        A text in ``logged`` (the documents a replayed broker log says its queries scanned, ``docs=``:
        :func:`logged_docs`) charges that many, spread over its kept segments as the planner's own estimate
        spreads them (each segment's time-range share of its documents; evenly where that is 0). Why: the planner
        knows which segments a query keeps (checked against Pinot query by query) but not how many of their rows
        its filter matches; a lookup on an indexed column scans a few rows where the time-range share charges
        thousands, and a replayed log knows the real count. Any other text, as for a generated workload: the
        time-range share. Either way a segment Pinot answers from its metadata
        (:func:`~workbench.pinot.aggregation_plan.answers_from_metadata`, the filter matching all of its rows)
        scans none: the log counted its rows, and the threads did not read them."""
        hit = self._plans.get(sql)
        if hit is None:
            hit = self._plans[sql] = self._make(query if query is not None else _parsed(sql), len(self._plans) + 1,
                                                self.logged.get(sql), self.logged_entries.get(sql))
        return hit

    def _make(self, query: Query, key: int, logged: float | None = None,
              logged_entries: float | None = None) -> QueryPlan:
        if query.options:  # the broker reads its routing options before it routes: a bad one fails the query here
            parse_routing_options(routing_options_set(query.options))
        kept = prune_segments(self.pruners, query, self.names) if self.pruners else self.names
        indices = tuple(self._index[n] for n in kept)
        intervals, granule = None, 1
        if self._time is not None and query.filter is not None:
            intervals = self._time.filter_intervals(query.filter)
            granule = self._time.time_format.granule_ms
        # each kept segment's share of its time range the filter's time bounds cover (all of it without them)
        cover = (None if intervals is None else
                 [_overlap(self.metadata[self.names[i]].time_range, intervals, granule) for i in indices])
        docs = tuple(float(self.docs[i]) * (1.0 if cover is None else cover[k]) for k, i in enumerate(indices))
        if logged is not None and docs:
            docs = _spread(docs, logged)
        whole = self._whole(query, indices, intervals, cover)
        if answers_from_metadata(query):
            docs = tuple(0.0 if w else d for d, w in zip(docs, whole, strict=True))
        entries = self._entries(query, indices, whole, cover)
        if logged_entries is not None and entries:   # spread as planned, else over the segments not matched whole
            weights = entries if sum(entries) > 0 else tuple(
                0.0 if w else float(self.docs[i]) for i, w in zip(indices, whole, strict=True))
            entries = _spread(weights, logged_entries) if sum(weights) > 0 else tuple(0.0 for _ in indices)
        return QueryPlan(key, indices, tuple(kept), docs, len(self.names) - len(indices), query, entries)

    def _entries(self, query: Query, indices: tuple[int, ...], whole: tuple[bool, ...],
                 cover: list[float] | None) -> tuple[float, ...]:
        """Per kept segment, the entries its filter reads row by row, estimated as Pinot's scan-based filter reads
        them: each of the filter's columns without an inverted, sorted or range index reads every row of the
        segment once; none where the filter matches the whole segment; the time column's predicates none where the
        segment's time range lies inside them (Pinot drops an always-true leaf from an AND). An upper bound for a
        selection with a LIMIT, which stops reading at its LIMIT-th match; a replayed log's own count
        (``entries=``) replaces it."""
        predicates = list(iter_predicates(query.filter))
        columns = {p.column for p in predicates if p.column is not None} - self._indexed
        expressions = sum(1 for p in predicates if p.column is None)   # a transform's predicate reads every row
        time_column = self._time.time_column if self._time is not None else None
        # per segment, whether the time leaf is always true there (inside the time bounds): Pinot reads none of it
        inside = [False] * len(indices)
        if cover is not None and time_column in columns and time_column not in self._raw:
            inside = [c >= 1.0 and self.metadata[self.names[i]].time_range is not None
                      for i, c in zip(indices, cover, strict=True)]
        scanned = len(columns) + expressions
        return tuple(0.0 if w else float(self.docs[i]) * (scanned - drop)
                     for i, w, drop in zip(indices, whole, inside, strict=True))

    def _whole(self, query: Query, indices: tuple[int, ...], intervals: list[tuple[int, int]] | None,
               cover: list[float] | None) -> tuple[bool, ...]:
        """Per kept segment, whether ``query``'s filter matches all of its rows, as a Pinot server decides it: no
        filter; or a filter on the time column alone (the rows its time bounds make certain,
        :meth:`~workbench.pinot.pruning.time_pruner.TimeSegmentPruner.certain_intervals`) holding the segment's
        whole time range, the column having a dictionary (a raw column's range is never "always true")."""
        if query.filter is None:
            return tuple(True for _ in indices)
        if self._time is None or self._time.time_column in self._raw:
            return tuple(False for _ in indices)
        certain = self._time.certain_intervals(query.filter)
        if not certain:
            return tuple(False for _ in indices)
        ranges = [self.metadata[self.names[i]].time_range for i in indices]
        if certain == intervals and cover is not None:   # the time bounds are exact: their cover says it
            return tuple(r is not None and c >= 1.0 for r, c in zip(ranges, cover, strict=True))
        granule = self._time.time_format.granule_ms
        return tuple(r is not None and _overlap(r, certain, granule) >= 1.0 for r in ranges)
