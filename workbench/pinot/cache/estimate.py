"""The size of a query's cached result when only the query is known (a query log has no results).

One estimate serves every place that weighs a result it has not computed: the broker and server caches
inside the model and the cache-trace studies. Exact sizes of computed results come from
:mod:`workbench.pinot.cache.sizing`.

>>> from workbench.pinot.sql import parse_query
>>> result_size_estimate(parse_query("SELECT COUNT(*) FROM t"))
80
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.pinot.cache.sizing import ResultValue
from workbench.pinot.sql.query import Query

__all__ = ["EstimatedResult", "estimate_result", "result_size_estimate"]


def result_size_estimate(query: Query) -> int:
    """A serialised result size estimate, bytes, from the query's shape alone.

    Aggregations: 16 bytes a value plus a 64-byte header; group-by: up to the limit of rows of
    (group keys + aggregations) x 16 bytes; selections: up to the limit of rows x columns x 8 bytes.
    """
    limit = query.effective_limit
    aggs = len(query.aggregations)
    if query.group_by:
        return 64 + limit * 16 * (len(query.group_by) + aggs)
    if aggs:
        return 64 + 16 * aggs
    return 64 + limit * 8 * max(1, len(query.select))


@dataclass(frozen=True)
class EstimatedResult(ResultValue):
    """A cached value whose payload size is an estimate (:func:`result_size_estimate`)."""

    size: int

    def payload_bytes(self) -> int:
        return self.size


def estimate_result(query: Query) -> EstimatedResult:
    """The value a cache stores for ``query`` when its result is not computed."""
    return EstimatedResult(result_size_estimate(query))
