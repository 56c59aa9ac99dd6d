"""What the broker and server result caches share: lifecycle invalidation, decisions, metrics.

A result cache answers each lookup with one :data:`Decision`:

* :class:`Bypass` — a safety gate or switch says this request must not use the cache (the reason is
  a short string such as ``"consuming"`` or ``"query-option"``, counted per table);
* :class:`Cached` — serve this value (``expired`` when stale-while-revalidate served an expired entry,
  ``outdated`` when the data changed since it was computed, possible only with a safety gate off);
* :class:`~.flight.Leader` — compute the result, then call :meth:`ResultCache.complete`;
* :class:`~.flight.Waiter` — another request is computing it; wait for the leader's ``complete``.

Lifecycle events (RFC §5.7) bump epochs in a :class:`~.state.ClusterView` — which changes every key
that depends on them — and purge the entries they made unreachable, so their bytes are freed at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar, cast

from workbench.pinot.cache.columns import Schema
from workbench.pinot.cache.config import ResultCacheConfig
from workbench.pinot.cache.flight import Flight, Hit, Leader, Lookup, SingleFlightCache, Waiter
from workbench.pinot.cache.lru import Removal, WeightedLRUCache
from workbench.pinot.cache.sizing import ResultValue
from workbench.pinot.cache.state import ClusterView, SegmentKind, SegmentState, TableState

__all__ = ["Bypass", "Cached", "Decision", "Memo", "ResultCache", "ResultCacheMetrics", "TableMetrics"]

V = TypeVar("V", bound=ResultValue)
T = TypeVar("T")
SegmentId = tuple[str, str]


class Memo(Generic[T]):
    """A bounded memo of canonicalisation results (about 1 ms each), emptied whenever it fills.

    Workloads repeat the same query objects (dashboards, templates), so one canonicalisation per
    distinct query and schema epoch is enough; the memo holds no state a result could depend on.
    """

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._values: dict[Hashable, T] = {}

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The memoised value for ``key``, computing it on first use."""
        value = self._values.get(key)
        if value is None:
            if len(self._values) >= self.capacity:
                self._values.clear()
            value = self._values[key] = compute()
        return value


@dataclass(frozen=True)
class Bypass:
    """Do not use the cache for this request (neither read nor store); ``reason`` says why."""

    reason: str


@dataclass(frozen=True)
class Cached(Generic[V]):
    """Serve ``value`` from the cache.

    ``expired``: served by stale-while-revalidate past its TTL. ``outdated``: the segments' rows
    changed after it was computed (only possible when a safety gate is switched off).
    """

    value: V
    expired: bool = False
    outdated: bool = False


Decision = Bypass | Cached[V] | Leader[V] | Waiter


@dataclass(frozen=True)
class _Stored(Generic[V]):
    """A cached value plus what is needed to tell, at a hit, whether it has become outdated."""

    value: V
    segments: tuple[SegmentId, ...]
    versions: tuple[int, ...]
    cost_ms: float


@dataclass
class _TableCounters:
    hits: int = 0
    misses: int = 0
    waiters: int = 0
    expired_answers: int = 0
    outdated_answers: int = 0
    savings_ms: float = 0.0
    bypasses: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class TableMetrics:
    """One table's share of the metrics (the RFC §7 ``stats`` endpoint, per table)."""

    table: str
    hits: int
    misses: int
    singleflight_waiters: int
    expired_answers: int
    outdated_answers: int
    savings_ms: float
    bytes: int
    bypasses: Mapping[str, int]


@dataclass(frozen=True)
class ResultCacheMetrics:
    """The RFC §8 metrics of one cache (names follow the RFC's ``cache.*`` metric names).

    ``hits`` include stale-while-revalidate answers; ``misses`` include single-flight waiters;
    ``bypasses`` are lookups a gate kept away from the cache (neither hit nor miss).
    """

    hits: int
    misses: int
    puts: int
    evictions: int
    expirations: int
    invalidations: int
    rejected: int
    bypasses: int
    size_bytes: int
    value_bytes: int
    entries: int
    load_latency_ms: float
    hit_savings_ms: float
    singleflight_waiters: int
    expired_answers: int
    outdated_answers: int

    @property
    def hit_rate(self) -> float:
        """Hits per cache lookup (bypasses excluded)."""
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else 0.0


class ResultCache(Generic[V]):
    """Shared machinery of :class:`~.broker.BrokerResultCache` and :class:`~.server.ServerSegmentCache`.

    Subclasses say which table owns an entry (:meth:`_owner`) and whether a key reads a segment
    (:meth:`_reads_segment`); everything else — the LRU, single flight, lifecycle, admin calls and
    metrics — is here.
    """

    def __init__(self, config: ResultCacheConfig) -> None:
        self.config = config
        self.view = ClusterView()
        lru: WeightedLRUCache[Hashable, _Stored[V]] = WeightedLRUCache(
            config.max_bytes, config.ttl_ms, table_limits=config.table_limits(),
            stale_window_ms=config.stale_while_revalidate_ms)
        self.flights: SingleFlightCache[Hashable, _Stored[V]] = SingleFlightCache(lru, singleflight=config.singleflight)
        self._counters: dict[str, _TableCounters] = {}
        self._translate: dict[type, Callable[[Lookup[_Stored[V]], str], Decision[V]]] = {
            Hit: self._on_hit, Leader: self._on_leader, Waiter: self._on_waiter,
        }

    # -- hooks ------------------------------------------------------------------------------------
    def _owner(self, table: str) -> str:
        """The table name entries of ``table`` (a name with type) are accounted under."""
        return table

    def _reads_segment(self, key: Hashable, table: str, segment: str) -> bool:
        """Whether the entry under ``key`` was computed from ``segment`` of ``table``."""
        raise NotImplementedError

    # -- lookups ----------------------------------------------------------------------------------
    def _bypass(self, owner: str, reason: str) -> Bypass:
        self._table(owner).bypasses[reason] += 1
        return Bypass(reason)

    def _begin(self, key: Hashable, owner: str, segments: tuple[SegmentId, ...], now_ms: float) -> Decision[V]:
        versions = self._versions(segments) if self.config.safety_gates_open else ()
        answer = self.flights.begin(key, now_ms, table=owner, context=(segments, versions))
        return self._translate[type(answer)](answer, owner)

    def _on_hit(self, answer: Lookup[_Stored[V]], owner: str) -> Decision[V]:
        assert isinstance(answer, Hit)
        stored: _Stored[V] = answer.value
        counters = self._table(owner)
        outdated = bool(stored.versions) and self._versions(stored.segments) != stored.versions
        counters.hits += 1
        counters.expired_answers += answer.stale
        counters.outdated_answers += outdated
        counters.savings_ms += stored.cost_ms
        return Cached(stored.value, expired=answer.stale, outdated=outdated)

    def _on_leader(self, answer: Lookup[_Stored[V]], owner: str) -> Decision[V]:
        assert isinstance(answer, Leader)
        if answer.stale_value is None:
            self._table(owner).misses += 1
            return Leader(answer.flight)
        hit = self._on_hit(Hit(answer.stale_value, stale=True), owner)
        assert isinstance(hit, Cached)
        return Leader(answer.flight, stale_value=hit.value)

    def _on_waiter(self, answer: Lookup[_Stored[V]], owner: str) -> Decision[V]:
        assert isinstance(answer, Waiter)
        counters = self._table(owner)
        counters.misses += 1
        counters.waiters += 1
        return answer

    def complete(self, flight: Flight, value: V, now_ms: float, *, partial: bool = False) -> tuple[Waiter, ...]:
        """Store a leader's result (weighted by its compressed serialised size); return the waiters.

        Partial or errored results are handed to the waiters but not stored (RFC §5.6).
        """
        segments, versions = cast(tuple[tuple[SegmentId, ...], tuple[int, ...]], flight.context)
        owner = flight.table or ""
        stored = _Stored(value, segments, versions, now_ms - flight.started_ms)
        weight = value.serialized_size_bytes(self.config.compression)
        return self.flights.complete(flight, stored, weight, now_ms, ttl_ms=self.config.ttl_for(owner),
                                     store=not partial)

    def fail(self, flight: Flight, now_ms: float) -> tuple[Waiter, ...]:
        """End a leader's flight without a result; the waiters must compute for themselves."""
        return self.flights.fail(flight, now_ms)

    def _versions(self, segments: tuple[SegmentId, ...]) -> tuple[int, ...]:
        states = (self.view.segment(t, s) for t, s in segments)
        return tuple(-1 if state is None else state.data_version for state in states)

    def _table(self, owner: str) -> _TableCounters:
        counters = self._counters.get(owner)
        if counters is None:
            counters = self._counters[owner] = _TableCounters()
        return counters

    # -- lifecycle (RFC §5.7) ---------------------------------------------------------------------
    def add_table(self, table: str, *, upsert: bool = False, schema: Schema | None = None,
                  time_column: str | None = None) -> TableState:
        """Register a table (name with type) with its upsert flag, column specs and time column."""
        return self.view.add_table(table, upsert=upsert, schema=schema, time_column=time_column)

    def on_segment_added(self, table: str, segment: str, *, kind: SegmentKind = SegmentKind.OFFLINE,
                         time_range: tuple[int, int] | None = None, partition_id: int | None = None,
                         end_offset: int | None = None) -> Removal:
        """A segment came online (or was re-added): fresh epoch; entries under its name are purged."""
        self.view.put_segment(table, segment, kind=kind, time_range=time_range, partition_id=partition_id,
                              end_offset=end_offset)
        return self.invalidate_segment(table, segment)

    def on_segment_replaced(self, table: str, segment: str, *, time_range: tuple[int, int] | None = None) -> Removal:
        """New content under the same name (a refresh/replace upload): fresh epoch and purge."""
        old = self.view.segment(table, segment)
        kind = old.kind if old is not None else SegmentKind.OFFLINE
        return self.on_segment_added(table, segment, kind=kind, time_range=time_range or _range(old))

    def on_segment_reloaded(self, table: str, segment: str) -> Removal:
        """A reload (new indexes or derived columns): fresh epoch and purge."""
        self.view.bump_segment(table, segment)
        return self.invalidate_segment(table, segment)

    def on_segment_sealed(self, table: str, segment: str, *, time_range: tuple[int, int] | None = None) -> Removal:
        """A consuming segment committed: it is now sealed, under a fresh epoch."""
        self.view.bump_segment(table, segment, kind=SegmentKind.SEALED, time_range=time_range)
        return self.invalidate_segment(table, segment)

    def on_segment_deleted(self, table: str, segment: str) -> Removal:
        """A segment went away: forget it and purge its entries."""
        self.view.remove_segment(table, segment)
        return self.invalidate_segment(table, segment)

    def on_rows_ingested(self, table: str, segment: str, end_offset: int | None = None) -> SegmentState:
        """Rows were appended to a consuming segment (no new epoch; counts towards outdated answers)."""
        return self.view.bump_data(table, segment, end_offset)

    def on_valid_docs_changed(self, table: str, segment: str) -> SegmentState:
        """An upsert invalidated documents of this segment (no new epoch; see :meth:`on_rows_ingested`)."""
        return self.view.bump_data(table, segment)

    def on_schema_changed(self, table: str, schema: Schema | None = None) -> Removal:
        """A schema change: new schema epoch; the table's entries are purged if so configured."""
        self.view.bump_schema(table, schema)
        return self.invalidate_table(table) if self.config.purge_on_schema_change else Removal(0, 0)

    def on_table_config_changed(self, table: str, *, upsert: bool | None = None,
                                time_column: str | None = None) -> Removal:
        """A table-config change: new config epoch; the table's entries are purged if so configured."""
        self.view.bump_config(table, upsert=upsert, time_column=time_column)
        return self.invalidate_table(table) if self.config.purge_on_schema_change else Removal(0, 0)

    # -- admin (RFC §7) ---------------------------------------------------------------------------
    def invalidate_table(self, table: str) -> Removal:
        """Remove every entry of a table (``POST .../invalidate?table=``)."""
        return self.flights.invalidate_table(self._owner(table))

    def invalidate_segment(self, table: str, segment: str) -> Removal:
        """Remove every entry computed from one segment (``invalidate?table=&segment=``)."""
        return self.flights.invalidate_where(lambda key: self._reads_segment(key, table, segment),
                                             self._owner(table))

    def clear_all(self) -> Removal:
        """Remove everything (``POST .../clearAll``)."""
        return self.flights.clear()

    # -- metrics (RFC §8) -------------------------------------------------------------------------
    def metrics(self) -> ResultCacheMetrics:
        """The whole cache's metrics."""
        s, f = self.flights.cache.stats, self.flights.flight_stats
        tables = self._counters.values()
        return ResultCacheMetrics(
            hits=s.hits, misses=s.misses, puts=s.puts, evictions=s.evictions, expirations=s.expirations,
            invalidations=s.invalidations, rejected=s.rejected, bypasses=sum(sum(t.bypasses.values()) for t in tables),
            size_bytes=s.bytes, value_bytes=s.put_bytes, entries=s.entries, load_latency_ms=f.load_ms,
            hit_savings_ms=s.savings_ms, singleflight_waiters=f.waiters,
            expired_answers=sum(t.expired_answers for t in tables),
            outdated_answers=sum(t.outdated_answers for t in tables),
        )

    def table_metrics(self, table: str) -> TableMetrics:
        """One table's metrics (``GET .../stats`` per table)."""
        owner = self._owner(table)
        c = self._table(owner)
        return TableMetrics(owner, c.hits, c.misses, c.waiters, c.expired_answers, c.outdated_answers,
                            c.savings_ms, self.flights.cache.table_bytes(owner), dict(c.bypasses))


def _range(state: SegmentState | None) -> tuple[int, int] | None:
    return None if state is None else state.time_range
