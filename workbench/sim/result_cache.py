"""The RFC's broker result cache inside the model: a hit answers after the broker's overhead only.

The cache is Pinot's proposed one (:mod:`workbench.pinot.cache`), configured from the scenario's
broker properties (``pinot.broker.query.cache.*`` in ``cluster.broker.config``, off by default as the
RFC proposes). The model registers the table and its segments with their kinds, so the RFC's safety
gates apply (results that read consuming segments, or upsert tables, are not cached unless switched
on). Single-flight waiters get a SimPy event that fires when their leader completes.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import simpy

from workbench.analysis.studies import result_size_estimate
from workbench.pinot.cache.base import Bypass, Cached
from workbench.pinot.cache.broker import BrokerResultCache
from workbench.pinot.cache.config import BrokerCacheConfig, ServerCacheConfig
from workbench.pinot.cache.flight import Leader, Waiter
from workbench.pinot.cache.server import ServerSegmentCache
from workbench.pinot.cache.sizing import BrokerResult, ColumnShape, ResultValue
from workbench.pinot.cache.state import SegmentKind
from workbench.pinot.sql.query import Query
from workbench.scenario import Scenario
from workbench.sim.layout import Layout

__all__ = ["ModelResultCache", "ModelSegmentCache", "result_shape"]


def _register(cache: BrokerResultCache | ServerSegmentCache, scenario: Scenario, layout: Layout) -> None:
    """Tell a cache about the table and each segment's kind, which is what its safety gates read."""
    table = scenario.table.table_name_with_type
    cache.add_table(table, upsert=scenario.table.is_upsert, time_column=scenario.table.time_column_name)
    offline = scenario.table.table_type == "OFFLINE"
    for name, consuming in zip(layout.segments, layout.consuming, strict=True):
        kind = SegmentKind.OFFLINE if offline else (SegmentKind.CONSUMING if consuming else SegmentKind.SEALED)
        cache.on_segment_added(table, name, kind=kind)


def result_shape(query: Query) -> BrokerResult:
    """The broker response's shape: one row for aggregations, up to the limit otherwise."""
    rows = 1 if query.is_aggregation and not query.group_by else query.effective_limit
    return BrokerResult(rows, tuple(ColumnShape() for _ in query.select))


class ModelResultCache:
    """One broker's result cache for one replication."""

    def __init__(self, scenario: Scenario, layout: Layout, env: simpy.Environment) -> None:
        config = BrokerCacheConfig.from_properties({str(k): str(v) for k, v in scenario.cluster.broker.config.items()})
        self.enabled = config.enabled
        self.env = env
        self.table = scenario.table.table_name_with_type
        self.cache = BrokerResultCache(config)
        self._waiting: dict[Any, list[simpy.Event]] = defaultdict(list)
        if self.enabled:
            _register(self.cache, scenario, layout)

    def begin(self, query: Query, segments: tuple[str, ...]) -> Bypass | Cached[Any] | Leader[Any] | Waiter:
        """The cache's decision for a query routed to ``segments``."""
        return self.cache.begin(query, {self.table: list(segments)}, self.env.now)

    def wait(self, waiter: Waiter) -> simpy.Event:
        """An event that fires when the waiter's leader completes (or fails)."""
        event = self.env.event()
        self._waiting[waiter.flight].append(event)
        return event

    def complete(self, leader: Leader[Any], query: Query, partial: bool) -> None:
        """Store the leader's result and wake its waiters."""
        self.cache.complete(leader.flight, result_shape(query), self.env.now, partial=partial)
        for event in self._waiting.pop(leader.flight, []):
            event.succeed()


@dataclass(frozen=True)
class _SegmentResult(ResultValue):
    """A segment's partial result, sized from the query's shape (a query log carries no results)."""

    size: int

    def payload_bytes(self) -> int:
        return self.size


class ModelSegmentCache:
    """One server's per-segment result cache (the RFC's server cache): a hit skips that segment's work.

    Configured from ``cluster.server.config`` (``pinot.server.segment.query.cache.*``, off by default).
    Consuming segments and upsert tables are gated off as the RFC specifies. A miss is stored when the
    request is executed (the model computes a request's schedule at that moment).
    """

    def __init__(self, scenario: Scenario, layout: Layout) -> None:
        config = ServerCacheConfig.from_properties({str(k): str(v) for k, v in scenario.cluster.server.config.items()})
        self.enabled = config.enabled
        self.table = scenario.table.table_name_with_type
        self.cache = ServerSegmentCache(config)
        self.hits = 0
        if self.enabled:
            _register(self.cache, scenario, layout)

    def hit(self, query: Query, segment: str, now_ms: float) -> bool:
        """Look ``segment``'s partial result up; on a miss, store it (computed by this request)."""
        decision = self.cache.begin(self.cache.prepare(query, self.table), segment, now_ms)
        if isinstance(decision, Cached):
            self.hits += 1
            return True
        if isinstance(decision, Leader):
            self.cache.complete(decision.flight, _SegmentResult(result_size_estimate(query)), now_ms)
        return False
