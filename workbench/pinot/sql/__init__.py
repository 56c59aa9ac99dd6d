"""Pinot's single-stage SQL subset: the query model, its parser, and a reference evaluator.

- :mod:`.query`: the immutable query tree (filters, aggregations, GROUP BY, options) that pruners,
  result-cache keys and cost models read;
- :mod:`.lexer` and :mod:`.parser`: SQL text (workload queries, broker query-log lines) into that tree,
  with errors that name unsupported constructs;
- :mod:`.evaluate`: the *answer* of a query on segment rows (per-segment partial results and the
  broker's merge). The simulator never needs answers, only costs; the evaluator is the ground truth that
  proves the result caches return what an uncached cluster would.

The dependency order is query <- lexer <- parser; :mod:`.evaluate` reads the tree only.
"""

from workbench.pinot.sql.lexer import QueryParseError, Token, tokenize
from workbench.pinot.sql.parser import parse_query
from workbench.pinot.sql.query import Query

__all__ = ["Query", "QueryParseError", "Token", "parse_query", "tokenize"]
