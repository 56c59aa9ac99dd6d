"""Query result caches as the Pinot RFC apache/pinot#16584 designs them (nothing of it is merged in Pinot).

Two caches, both byte-weighted LRUs with TTL after write, single flight and optional
stale-while-revalidate, driven by explicit simulated time (``now_ms``) so a SimPy model can call them:

* :class:`BrokerResultCache` — final results, keyed by canonical query + options + routed segments
  and their epochs + schema/config epochs (:mod:`.broker`);
* :class:`ServerSegmentCache` — per-segment partial results, keyed by table, segment, epoch, plan
  signature and a time constraint clipped to the segment (:mod:`.server`).

Their parts are usable alone: :class:`WeightedLRUCache` (:mod:`.lru`), :class:`SingleFlightCache`
(:mod:`.flight`), canonical keys (:func:`query_key`, :mod:`.keys`), serialised result sizes
(:mod:`.sizing`), and trace-driven evaluation with the offline optimum (:func:`simulate_cache_trace`,
:func:`hit_rate_curve`, :func:`belady_hit_rate`; :mod:`.trace`, :mod:`.belady`).
"""

from workbench.pinot.cache.base import Bypass, Cached, Decision, ResultCacheMetrics, TableMetrics
from workbench.pinot.cache.belady import belady_hits, belady_size_hits, opt_upper_bound
from workbench.pinot.cache.broker import BrokerCacheKey, BrokerResultCache
from workbench.pinot.cache.columns import ColumnSpec, DataType, column_specs_from_schema, normalise_literal
from workbench.pinot.cache.config import BrokerCacheConfig, ServerCacheConfig, TableCacheOverride
from workbench.pinot.cache.flight import Flight, Hit, Leader, SingleFlightCache, Waiter
from workbench.pinot.cache.keys import KeyContext, canonicalize, query_key, schema_of
from workbench.pinot.cache.lru import CacheStats, Removal, WeightedLRUCache
from workbench.pinot.cache.options import cache_allowed, result_options
from workbench.pinot.cache.server import SegmentCacheKey, SegmentPlan, ServerSegmentCache
from workbench.pinot.cache.sizing import (
    AggregationPart,
    BrokerResult,
    ColumnShape,
    Compression,
    FunctionShape,
    GroupByPart,
    SelectionPart,
    ValueShape,
)
from workbench.pinot.cache.state import SegmentKind
from workbench.pinot.cache.trace import (
    POLICIES,
    TraceResult,
    belady_hit_rate,
    hit_rate_curve,
    simulate_cache_trace,
    zipf_trace,
)

__all__ = [
    "POLICIES",
    "AggregationPart",
    "BrokerCacheConfig",
    "BrokerCacheKey",
    "BrokerResult",
    "BrokerResultCache",
    "Bypass",
    "CacheStats",
    "Cached",
    "ColumnShape",
    "ColumnSpec",
    "Compression",
    "DataType",
    "Decision",
    "Flight",
    "FunctionShape",
    "GroupByPart",
    "Hit",
    "KeyContext",
    "Leader",
    "Removal",
    "ResultCacheMetrics",
    "SegmentCacheKey",
    "SegmentKind",
    "SegmentPlan",
    "SelectionPart",
    "ServerCacheConfig",
    "ServerSegmentCache",
    "SingleFlightCache",
    "TableCacheOverride",
    "TableMetrics",
    "TraceResult",
    "ValueShape",
    "Waiter",
    "WeightedLRUCache",
    "belady_hit_rate",
    "belady_hits",
    "belady_size_hits",
    "cache_allowed",
    "canonicalize",
    "column_specs_from_schema",
    "hit_rate_curve",
    "normalise_literal",
    "opt_upper_bound",
    "query_key",
    "result_options",
    "schema_of",
    "simulate_cache_trace",
    "zipf_trace",
]
