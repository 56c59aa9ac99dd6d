"""Which aggregation queries a Pinot server answers over a whole segment without reading its rows.

Pinot 1.5.1's ``AggregationPlanNode.buildNonFilteredAggOperator`` (pinot-core, ``core/plan``) picks, per segment,
the ``NonScanBasedAggregationOperator`` for an aggregation without GROUP BY when the segment's filter matches all
of its rows (no filter; or a range on a dictionary-encoded column whose bounds hold the segment's whole dictionary:
the dictionary-based range evaluator is then "always true") and every aggregation can be read from the segment's
metadata or dictionaries: ``COUNT``, and ``MIN``/``MAX``/``MINMAXRANGE`` of a column (its metadata's or
dictionary's bounds) take constant time per segment. Its log line still counts the segment's documents as
scanned (``numDocsScanned`` is the segment's total), and the query's threads do none of the per-document work:
against Pinot 1.5.1 a ``SELECT COUNT(*) ... WHERE ts >= t`` over 8 segments logged 200,000 documents and
0.04-0.16 ms of measured work, where a 10,600-document group-by took about 1 ms.

Left out, and why:

- the dictionary-based functions (``DISTINCTCOUNT``, ``DISTINCTCOUNTHLL``...) also take this operator, but it
  walks the column's dictionary, so their work grows with the segment's distinct values, which the workbench does
  not know: they stay charged per document, an upper bound;
- star-tree indexes (tried first by Pinot) and ``FastFilteredCountOperator`` (a lone ``COUNT(*)`` whose filter an
  index answers) are not modelled;
- with null handling on (the ``enableNullHandling`` query option) Pinot takes this path only for columns without
  nulls, which the workbench cannot see: such a query is charged its scan.
"""

from __future__ import annotations

from workbench.pinot.sql.query import Identifier, Query

__all__ = ["CONSTANT_TIME_FUNCTIONS", "answers_from_metadata"]

#: Aggregations Pinot reads from a segment's metadata or its dictionary's bounds, in constant time (canonical
#: names: Pinot's ``METADATA_BASED_FUNCTIONS``, which are also dictionary-based except ``COUNT``).
CONSTANT_TIME_FUNCTIONS = frozenset({"count", "min", "minmv", "minlong", "max", "maxmv", "maxlong", "minmaxrange",
                                     "minmaxrangemv"})


def answers_from_metadata(query: Query | None) -> bool:
    """Whether Pinot answers ``query`` from metadata wherever its filter matches a whole segment (see the module).

    ``None`` (the synthetic full scan) is not: it stands for a query that reads every row.

    >>> from workbench.pinot.sql import parse_query
    >>> answers_from_metadata(parse_query("SELECT COUNT(*), MAX(ts) FROM t WHERE ts >= 10"))
    True
    >>> [answers_from_metadata(parse_query(s)) for s in ("SELECT SUM(v) FROM t", "SELECT MAX(a + b) FROM t",
    ...     "SELECT a, COUNT(*) FROM t GROUP BY a", "SELECT DISTINCTCOUNT(a) FROM t", "SELECT a FROM t")]
    [False, False, False, False, False]
    """
    if query is None or not query.is_aggregation or query.group_by or query.distinct:
        return False
    if (query.option("enableNullHandling") or "").lower() == "true":
        return False
    for function in query.aggregations:
        name = function.canonical_name
        if name not in CONSTANT_TIME_FUNCTIONS:
            return False
        if name != "count" and not (function.args and isinstance(function.args[0], Identifier)):
            return False
    return True
