"""The query-cache RFC's caches inside the model: a broker result cache and per-server segment caches.

Each cache is Pinot's proposed one (:mod:`workbench.pinot.cache`) with the settings the scenario's
broker or server section built from its Pinot properties (off by default, as the RFC proposes). The
model registers the table and its segments with their kinds, so the RFC's safety gates apply (results
that read consuming segments, or upsert tables, are not cached unless switched on). Single-flight
waiters get a SimPy event that fires when their leader completes. Entries are weighed by
:func:`~workbench.pinot.cache.estimate.result_size_estimate` (the model computes costs, not results).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

import simpy

from workbench.pinot.cache.base import Bypass, Cached
from workbench.pinot.cache.broker import BrokerResultCache
from workbench.pinot.cache.config import BrokerCacheConfig, ServerCacheConfig
from workbench.pinot.cache.estimate import estimate_result
from workbench.pinot.cache.flight import Leader, Waiter
from workbench.pinot.cache.server import ServerSegmentCache
from workbench.pinot.cache.state import SegmentKind
from workbench.pinot.sql.query import Query
from workbench.pinot.table_config import TableConfig
from workbench.sim.layout import Layout

__all__ = ["CHURN_EVENTS", "ModelResultCache", "ModelSegmentCache", "invalidate"]

_AnyCache = BrokerResultCache | ServerSegmentCache
#: Segment events that invalidate cached results (the RFC's §7 triggers the model's churn produces).
CHURN_EVENTS: Mapping[str, Callable[[_AnyCache, str, str], object]] = {
    "replaced": lambda cache, table, segment: cache.on_segment_replaced(table, segment),
    "reloaded": lambda cache, table, segment: cache.on_segment_reloaded(table, segment),
}


def invalidate(cache: _AnyCache, event: str, table: str, segment: str) -> None:
    """Tell ``cache`` that ``segment`` of ``table`` was ``replaced`` (refresh upload) or ``reloaded``."""
    CHURN_EVENTS[event](cache, table, segment)


def _register(cache: _AnyCache, table: TableConfig, layout: Layout) -> None:
    """Tell a cache about the table and each segment's kind, which is what its safety gates read."""
    name = table.table_name_with_type
    cache.add_table(name, upsert=table.is_upsert, time_column=table.time_column_name)
    offline = table.table_type == "OFFLINE"
    for segment, consuming in zip(layout.segments, layout.consuming, strict=True):
        kind = SegmentKind.OFFLINE if offline else (SegmentKind.CONSUMING if consuming else SegmentKind.SEALED)
        cache.on_segment_added(name, segment, kind=kind)


class ModelResultCache:
    """One broker's result cache for one replication."""

    def __init__(self, config: BrokerCacheConfig, table: TableConfig, layout: Layout,
                 env: simpy.Environment) -> None:
        self.enabled = config.enabled
        self.env = env
        self.table = table.table_name_with_type
        self.cache = BrokerResultCache(config)
        self._waiting: dict[Any, list[simpy.Event]] = defaultdict(list)
        if self.enabled:
            _register(self.cache, table, layout)

    def begin(self, query: Query, segments: tuple[str, ...], now: float) -> Bypass | Cached[Any] | Leader[Any] | Waiter:
        """The cache's decision at ``now`` for a query routed to ``segments``."""
        return self.cache.begin(query, {self.table: list(segments)}, now)

    def wait(self, waiter: Waiter) -> simpy.Event:
        """An event that fires, with the completion time as its value, when the waiter's leader completes."""
        event = self.env.event()
        self._waiting[waiter.flight].append(event)
        return event

    def complete(self, leader: Leader[Any], query: Query, partial: bool, now: float) -> None:
        """Store the leader's result at ``now`` and wake its waiters."""
        self.cache.complete(leader.flight, estimate_result(query), now, partial=partial)
        for event in self._waiting.pop(leader.flight, []):
            event.succeed(now)

    def on_segment(self, event: str, segment: str) -> None:
        """Invalidate after a segment ``replaced`` (refresh upload) or ``reloaded``."""
        if self.enabled:
            invalidate(self.cache, event, self.table, segment)


class ModelSegmentCache:
    """One server's per-segment result cache (the RFC's server cache): a hit skips that segment's work.

    Consuming segments and upsert tables are gated off as the RFC specifies. A miss is stored when the
    request is executed (the model computes a request's schedule at that moment).
    """

    def __init__(self, config: ServerCacheConfig, table: TableConfig, layout: Layout) -> None:
        self.enabled = config.enabled
        self.table = table.table_name_with_type
        self.cache = ServerSegmentCache(config)
        self.hits = 0
        if self.enabled:
            _register(self.cache, table, layout)

    def hit(self, query: Query, segment: str, now_ms: float) -> bool:
        """Look ``segment``'s partial result up; on a miss, store it (computed by this request)."""
        decision = self.cache.begin(self.cache.prepare(query, self.table), segment, now_ms)
        if isinstance(decision, Cached):
            self.hits += 1
            return True
        if isinstance(decision, Leader):
            self.cache.complete(decision.flight, estimate_result(query), now_ms)
        return False

    def on_segment(self, event: str, segment: str) -> None:
        """Invalidate after a segment ``replaced`` (refresh upload) or ``reloaded``."""
        if self.enabled:
            invalidate(self.cache, event, self.table, segment)
