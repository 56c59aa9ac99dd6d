"""The broker result cache (RFC §4.1): whole query results, keyed by query and data versions.

Key = canonical SQL with the result-changing options (:func:`~.keys.query_key`) + for each table the
routing touches, its schema and config epochs + every participating segment with its epoch. A new,
replaced, reloaded or deleted segment, or a routing change, therefore yields a different key by
construction; lifecycle events additionally purge the entries that can no longer be reached.

The broker checks the cache before dispatch and stores the merged response after reduce, skipping
partial or errored responses (RFC §5.6, Appendix A). Entries are accounted to the *raw* table name
(``events`` for ``events_OFFLINE`` and ``events_REALTIME``), since one hybrid query reads both.

Safety gates (RFC §3.2): results that read a consuming segment, or any upsert table, are not cached.
:class:`~.config.BrokerCacheConfig` has switches to allow both for experiments; hits are then checked
against the segments' data versions and counted as ``outdated_answers`` when the data moved on.

>>> from workbench.pinot.cache.sizing import BrokerResult, ColumnShape
>>> cache = BrokerResultCache(BrokerCacheConfig(enabled=True))
>>> _ = cache.add_table("events_OFFLINE")
>>> _ = cache.on_segment_added("events_OFFLINE", "events_0")
>>> from workbench.pinot.sql import parse_query
>>> q = parse_query("SELECT COUNT(*) FROM events")
>>> route = {"events_OFFLINE": ["events_0"]}
>>> leader = cache.begin(q, route, now_ms=0)
>>> cache.complete(leader.flight, BrokerResult(1, (ColumnShape(),)), now_ms=25)
()
>>> cache.begin(parse_query("select count(*) from events limit 10"), route, now_ms=30)  # doctest: +ELLIPSIS
Cached(value=BrokerResult(num_rows=1, ...), expired=False, outdated=False)
>>> _ = cache.on_segment_reloaded("events_OFFLINE", "events_0")
>>> type(cache.begin(q, route, now_ms=40)).__name__
'Leader'
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass

from workbench.pinot.cache.base import Decision, Memo, ResultCache
from workbench.pinot.cache.config import BrokerCacheConfig
from workbench.pinot.cache.keys import query_key
from workbench.pinot.cache.options import RESULT_CACHE_OPTION, cache_allowed
from workbench.pinot.cache.sizing import ResultValue
from workbench.pinot.cache.state import SegmentKind, SegmentState, TableState, raw_table_name
from workbench.pinot.sql.query import Query

__all__ = ["BrokerCacheKey", "BrokerResultCache", "Routing"]

#: Table name with type -> names of the segments the broker routes the query to.
Routing = Mapping[str, Iterable[str]]


@dataclass(frozen=True)
class BrokerCacheKey:
    """A broker cache key.

    Attributes
    ----------
    query
        Canonical SQL including the options that change results.
    tables
        ``(table name with type, schema epoch, config epoch)`` for every routed table, sorted.
    segments
        ``(table name with type, segment, epoch)`` for every routed segment, sorted.
    """

    query: str
    tables: tuple[tuple[str, int, int], ...]
    segments: tuple[tuple[str, str, int], ...]


@dataclass(frozen=True)
class _Request:
    """One lookup's inputs, as the gates read them."""

    config: BrokerCacheConfig
    owner: str
    query: Query
    tables: tuple[TableState | None, ...]
    segments: tuple[SegmentState | None, ...]


def _any_consuming(r: _Request) -> bool:
    return any(s is not None and s.kind is SegmentKind.CONSUMING for s in r.segments)


#: Gate registry, checked in order: (reason, blocks-the-cache test).
_GATES: tuple[tuple[str, Callable[[_Request], bool]], ...] = (
    ("disabled", lambda r: not r.config.enabled_for(r.owner)),
    ("query-option", lambda r: not cache_allowed(r.query, RESULT_CACHE_OPTION)),
    ("unknown-table", lambda r: not r.tables or any(t is None for t in r.tables)),
    ("unknown-segment", lambda r: any(s is None for s in r.segments)),
    ("consuming", lambda r: not r.config.cache_consuming and _any_consuming(r)),
    ("upsert", lambda r: not r.config.cache_upsert and any(t is not None and t.upsert for t in r.tables)),
)


class BrokerResultCache(ResultCache[ResultValue]):
    """The broker's cache of final query results.

    Parameters
    ----------
    config
        Capacity, TTL, compression, single flight, stale-while-revalidate, per-table overrides and
        the two safety switches.
    """

    def __init__(self, config: BrokerCacheConfig | None = None) -> None:
        self.broker_config = config or BrokerCacheConfig()
        super().__init__(self.broker_config)
        self._query_keys: Memo[str] = Memo()

    def _owner(self, table: str) -> str:
        return raw_table_name(table)

    def _reads_segment(self, key: Hashable, table: str, segment: str) -> bool:
        return isinstance(key, BrokerCacheKey) and any(t == table and s == segment for t, s, _ in key.segments)

    def begin(self, query: Query, routing: Routing, now_ms: float) -> Decision[ResultValue]:
        """Look a query up before dispatch.

        Parameters
        ----------
        query
            The query as received (any spelling).
        routing
            The segments the routing chose, per table name with type.
        now_ms
            Simulated time.

        Returns
        -------
        Decision
            :class:`~.base.Bypass`, :class:`~.base.Cached`, a :class:`~.flight.Leader` (execute, then
            :meth:`complete` with the merged response, ``partial=True`` if servers failed) or a
            :class:`~.flight.Waiter`.
        """
        request = self._request(query, routing)
        blocked = next((reason for reason, blocks in _GATES if blocks(request)), None)
        if blocked is not None:
            return self._bypass(request.owner, blocked)
        segments = tuple(sorted((s.table, s.name) for s in request.segments if s is not None))
        return self._begin(self._key(request), request.owner, segments, now_ms)

    def key_for(self, query: Query, routing: Routing) -> BrokerCacheKey:
        """The key a lookup would use (every table and segment must be registered)."""
        return self._key(self._request(query, routing))

    def _request(self, query: Query, routing: Routing) -> _Request:
        tables = tuple(self.view.table(t) for t in sorted(routing))
        segments = tuple(self.view.segment(t, s) for t in sorted(routing) for s in routing[t])
        return _Request(self.broker_config, raw_table_name(query.table), query, tables, segments)

    def _key(self, request: _Request) -> BrokerCacheKey:
        known = [t for t in request.tables if t is not None]
        first = known[0] if known else None
        memo_key = (request.query, first.name if first else None, first.schema_epoch if first else None)
        return BrokerCacheKey(
            query=self._query_keys.get(memo_key, lambda: query_key(request.query, first.schema if first else None)),
            tables=tuple((t.name, t.schema_epoch, t.config_epoch) for t in known),
            segments=tuple(sorted((s.table, s.name, s.epoch) for s in request.segments if s is not None)),
        )
