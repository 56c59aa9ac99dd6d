"""Single-flight loading and stale-while-revalidate, without threads.

The RFC (§5.5) de-duplicates concurrent misses with a per-key registry of ``CompletableFuture``\\ s:
one thread computes, the others wait for its result. A discrete-event model has no threads, so the
same protocol is spelled as three calls that a SimPy process can make between ``yield``\\ s:

1. :meth:`SingleFlightCache.begin` answers :class:`Hit` (use the value), :class:`Leader` (compute it,
   then call ``complete``) or :class:`Waiter` (someone is computing it; wait for them).
2. :meth:`SingleFlightCache.complete` stores the leader's value and returns the waiters to wake.
3. :meth:`SingleFlightCache.fail` ends a flight without storing (errors, partial responses).

>>> cache = SingleFlightCache(WeightedLRUCache(max_bytes=1_000))
>>> first, second = cache.begin("q", now_ms=0), cache.begin("q", now_ms=1)
>>> type(first).__name__, type(second).__name__
('Leader', 'Waiter')
>>> woken = cache.complete(first.flight, "rows", weight_bytes=100, now_ms=40)
>>> [w.waiter_id for w in woken], cache.begin("q", now_ms=50)
([2], Hit(value='rows', stale=False))
>>> cache.flight_stats.waiters, cache.cache.stats.savings_ms
(1, 40.0)

Counting: a waiter's read is a cache miss (it found no value) and a ``singleflight.waiters`` count; the
leader's compute time (``complete`` time minus ``begin`` time) is stored as the entry's cost, so each
later hit adds it to ``savings_ms``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from workbench.pinot.cache.lru import Freshness, Removal, WeightedLRUCache

__all__ = ["Flight", "FlightStats", "Hit", "Leader", "Lookup", "SingleFlightCache", "Waiter"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True)
class Flight:
    """One in-progress computation of a key's value: the token leaders and waiters share.

    ``context`` is whatever the caller attached at :meth:`SingleFlightCache.begin` (the broker and
    server caches attach the data versions the computation reads, to detect stale answers later).
    """

    key: Hashable
    flight_id: int
    started_ms: float
    table: str | None = None
    context: object = None


@dataclass(frozen=True)
class Hit(Generic[V]):
    """The cache had the value. ``stale`` marks a stale-while-revalidate answer (expired, in window)."""

    value: V
    stale: bool = False


@dataclass(frozen=True)
class Leader(Generic[V]):
    """The caller computes the value and must end the flight with ``complete`` or ``fail``.

    With stale-while-revalidate, ``stale_value`` holds the expired value the caller may answer with at
    once; the computation is then a background refresh.
    """

    flight: Flight
    stale_value: V | None = None


@dataclass(frozen=True)
class Waiter:
    """Another caller is computing the value; wait until ``complete``/``fail`` returns this waiter."""

    flight: Flight
    waiter_id: int


Lookup = Hit[V] | Leader[V] | Waiter


@dataclass
class FlightStats:
    """Single-flight counters: flights started, waiters parked, flights failed, total load time (ms)."""

    leaders: int = 0
    waiters: int = 0
    failures: int = 0
    load_ms: float = 0.0


@dataclass
class _InFlight:
    flight: Flight
    waiters: list[Waiter] = field(default_factory=list)
    store: bool = True


class SingleFlightCache(Generic[K, V]):
    """A :class:`WeightedLRUCache` front that computes each missing key once, however many ask.

    Parameters
    ----------
    cache
        The backing cache; its ``stale_window_ms`` turns on stale-while-revalidate.
    singleflight
        When False every miss leads its own flight (the RFC's ``singleflight.enabled = false``).
    """

    def __init__(self, cache: WeightedLRUCache[K, V], *, singleflight: bool = True) -> None:
        self.cache = cache
        self.singleflight = singleflight
        self.flight_stats = FlightStats()
        self._flights: dict[int, _InFlight] = {}
        self._leaders: dict[Hashable, int] = {}
        self._next_id = 0

    def begin(self, key: K, now_ms: float, *, table: str | None = None, context: object = None) -> Lookup[V]:
        """Look ``key`` up and say what the caller should do (see the module docstring)."""
        value, freshness = self.cache.lookup(key, now_ms)
        if freshness is Freshness.FRESH:
            return Hit(value)  # type: ignore[arg-type]
        running = self._running(key)
        if freshness is Freshness.STALE:
            if running is not None:
                return Hit(value, stale=True)  # type: ignore[arg-type]
            return Leader(self._start(key, now_ms, table, context), stale_value=value)
        if running is not None:
            return self._park(running)
        return Leader(self._start(key, now_ms, table, context))

    def complete(self, flight: Flight, value: V, weight_bytes: int, now_ms: float, *,
                 ttl_ms: float | None = None, store: bool = True) -> tuple[Waiter, ...]:
        """End ``flight`` with ``value``: store it (unless ``store`` is False or the key was
        invalidated meanwhile) and return the waiters to hand the value to."""
        state = self._finish(flight)
        cost = now_ms - flight.started_ms
        self.flight_stats.load_ms += cost
        if store and state.store:
            self.cache.put(flight.key, value, weight_bytes, now_ms, table=flight.table,  # type: ignore[arg-type]
                           ttl_ms=ttl_ms, cost_ms=cost)
        return tuple(state.waiters)

    def fail(self, flight: Flight, now_ms: float) -> tuple[Waiter, ...]:
        """End ``flight`` without a value; the returned waiters must compute (or give up) themselves."""
        del now_ms
        self.flight_stats.failures += 1
        return tuple(self._finish(flight).waiters)

    def invalidate_where(self, predicate: Callable[[K], bool], table: str | None = None) -> Removal:
        """Remove matching entries, and stop in-flight computations of matching keys from storing.

        A computation that started before the invalidation read the old data, so its result must not
        land in the cache afterwards; its waiters are still woken with it.
        """
        for state in self._flights.values():
            if (table is None or state.flight.table == table) and predicate(state.flight.key):  # type: ignore[arg-type]
                state.store = False
        return self.cache.invalidate_where(predicate, table)

    def invalidate_table(self, table: str) -> Removal:
        """Remove a table's entries and keep its in-flight results out of the cache."""
        return self.invalidate_where(lambda _key: True, table)

    def clear(self) -> Removal:
        """Remove everything and keep every in-flight result out of the cache."""
        return self.invalidate_where(lambda _key: True)

    @property
    def in_flight(self) -> int:
        """How many computations are running right now."""
        return len(self._flights)

    def _running(self, key: K) -> _InFlight | None:
        flight_id = self._leaders.get(key) if self.singleflight else None
        return None if flight_id is None else self._flights[flight_id]

    def _start(self, key: K, now_ms: float, table: str | None, context: object) -> Flight:
        self._next_id += 1
        self.flight_stats.leaders += 1
        flight = Flight(key, self._next_id, now_ms, table, context)
        self._flights[flight.flight_id] = _InFlight(flight)
        self._leaders.setdefault(key, flight.flight_id)
        return flight

    def _park(self, running: _InFlight) -> Waiter:
        self._next_id += 1
        self.flight_stats.waiters += 1
        waiter = Waiter(running.flight, self._next_id)
        running.waiters.append(waiter)
        return waiter

    def _finish(self, flight: Flight) -> _InFlight:
        state = self._flights.pop(flight.flight_id, None)
        if state is None:
            raise ValueError(f"flight {flight.flight_id} for {flight.key!r} is not in progress (ended twice?)")
        if self._leaders.get(flight.key) == flight.flight_id:
            del self._leaders[flight.key]
        return state
