"""The query model: an immutable, typed tree for the SQL that workloads and Pinot query logs carry.

The simulator never executes SQL. It needs a query's *shape*: which table, which filter (the segment
pruners read it), which aggregations and GROUP BY (cost models read them) and which options (timeouts,
replica-group routing). So a query is a tree of frozen dataclasses that can be hashed (result caches key
on it), compared (tests and round trips) and printed back with :meth:`Query.to_sql`. Text is turned into
this tree by :func:`workbench.pinot.sql.parse_query`.

The tree follows the shape Pinot's broker compiles SQL into: AND and OR are flattened, ``literal op
column`` is turned around to ``column op' literal``, and ``NOT BETWEEN`` is ``NOT (BETWEEN)``.

>>> from workbench.pinot.sql import parse_query
>>> from workbench.pinot.sql import parse_query
>>> q = parse_query("SELECT COUNT(*) FROM events WHERE ts BETWEEN 10 AND 20 AND country IN ('nl', 'de')")
>>> q.table, q.is_aggregation, sorted(q.filter_columns)
('events', True, ['country', 'ts'])
>>> q.to_sql()
"SELECT COUNT(*) FROM events WHERE ts BETWEEN 10 AND 20 AND country IN ('nl', 'de')"
>>> parse_query(q.to_sql()) == q
True

Trees can also be built by hand, which is how workload generators make queries without SQL text:

>>> f = And.of(Predicate.of("memberId", "=", 7), Predicate.of("ts", ">=", 1000))
>>> Query("members", (SelectItem(Star()),), filter=f, limit=5).to_sql()
'SELECT * FROM members WHERE memberId = 7 AND ts >= 1000 LIMIT 5'
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TypeAlias

__all__ = [
    "AGGREGATION_FUNCTIONS",
    "And",
    "Expression",
    "FilterNode",
    "FilterOperator",
    "Function",
    "Identifier",
    "Literal",
    "LiteralValue",
    "Not",
    "Or",
    "OrderByItem",
    "Predicate",
    "Query",
    "SelectItem",
    "Star",
    "canonical_function_name",
    "iter_predicates",
    "quote_identifier",
]

LiteralValue: TypeAlias = int | float | str | bool | None

#: Aggregation function names as Pinot canonicalises them (lower case, underscores removed). Used to
#: tell aggregations from plain transforms in the select list; percentile variants such as
#: ``PERCENTILE95`` or ``PERCENTILETDIGEST99`` are matched by pattern instead of listed.
# fmt: off
AGGREGATION_FUNCTIONS = frozenset(
    {
        "count", "sum", "min", "max", "avg", "mode", "minmaxrange", "sumprecision", "distinctcount",
        "distinctcountbitmap", "distinctcounthll", "distinctcounthllplus", "distinctcountrawhll",
        "distinctcountthetasketch", "distinctcountrawthetasketch", "distinctcountcpcsketch",
        "distinctcountull", "distinctcountsmarthll", "distinctsum", "distinctavg",
        "segmentpartitioneddistinctcount", "percentile", "percentileest", "percentiletdigest",
        "percentilekll", "percentilesmarttdigest", "firstwithtime", "lastwithtime", "histogram", "countmv",
        "summv", "minmv", "maxmv", "avgmv", "distinctcountmv", "distinctcounthllmv", "percentilemv",
        "percentileestmv", "percentiletdigestmv", "idset", "arrayagg", "listagg", "booland", "boolor",
        "covarpop", "covarsamp", "varpop", "varsamp", "stddevpop", "stddevsamp", "skewness", "kurtosis",
        "exprmin", "exprmax", "anyvalue",
    }
)
# fmt: on
_PERCENTILE_SUFFIX = re.compile(r"^percentile(est|tdigest|kll|smarttdigest)?(mv)?\d+(\.\d+)?$")
_BARE_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)*$")
#: Words the parser gives a meaning to; an identifier spelled like one is printed in double quotes.
# fmt: off
RESERVED_WORDS = frozenset(
    {
        "SELECT", "FROM", "WHERE", "GROUP", "BY", "HAVING", "ORDER", "LIMIT", "OFFSET", "AND", "OR", "NOT",
        "IN", "BETWEEN", "LIKE", "IS", "NULL", "TRUE", "FALSE", "AS", "ASC", "DESC", "OPTION", "SET",
        "DISTINCT", "JOIN", "ON", "UNION", "INTERSECT", "EXCEPT", "MINUS", "WITH", "CASE", "WHEN", "THEN",
        "ELSE", "END", "CAST", "OVER", "EXISTS", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "OUTER", "NULLS",
        "LATERAL", "WINDOW", "QUALIFY", "INTO", "VALUES",
    }
)
# fmt: on


def canonical_function_name(name: str) -> str:
    """Return Pinot's lookup form of a function name: lower case with underscores removed.

    >>> canonical_function_name("DISTINCT_COUNT")
    'distinctcount'
    """
    return name.lower().replace("_", "")


def quote_identifier(name: str) -> str:
    """Print an identifier, double-quoting it when it is not a plain name or is a reserved word.

    >>> quote_identifier("ts"), quote_identifier("order"), quote_identifier('a"b')
    ('ts', '"order"', '"a""b"')
    """
    if _BARE_IDENTIFIER.match(name) and name.upper() not in RESERVED_WORDS:
        return name
    return '"' + name.replace('"', '""') + '"'


# -- expressions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Identifier:
    """A column reference, kept exactly as written (Pinot column names are case-sensitive)."""

    name: str

    def to_sql(self) -> str:
        """The identifier as SQL text."""
        return quote_identifier(self.name)


@dataclass(frozen=True, eq=False)
class Literal:
    """A constant. ``1``, ``1.0``, ``TRUE`` and ``'1'`` are four different literals.

    Python treats ``1 == 1.0 == True``; Pinot does not (they hash to different partitions and print
    differently), so equality and hashing here include the value's type.
    """

    value: LiteralValue

    def __post_init__(self) -> None:
        if isinstance(self.value, float) and not math.isfinite(self.value):
            raise ValueError(f"a SQL literal must be finite, got {self.value!r}")

    def _key(self) -> tuple[type, LiteralValue]:
        return (type(self.value), self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literal) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def to_sql(self) -> str:
        """The literal as SQL text (strings quoted with ``''`` escapes)."""
        value = self.value
        if value is None:
            return "NULL"
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        return repr(value)

    def to_pinot_string(self) -> str:
        """The string Pinot's broker hands to partition functions and time parsers for this literal.

        Pinot feeds every literal to ``PartitionFunction.getPartition`` as text, so ``memberId = 5``
        hashes ``"5"``; doubles are printed the way Java's ``Double.toString`` prints them
        (:func:`workbench.pinot.partition.javafloat.java_double_to_string`).

        >>> [Literal(v).to_pinot_string() for v in (5, "x", True, 2.5, 1e7, 0.0001)]
        ['5', 'x', 'true', '2.5', '1.0E7', '1.0E-4']
        """
        value = self.value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float):
            from workbench.pinot.partition.javafloat import java_double_to_string

            return java_double_to_string(value)
        return "null" if value is None else str(value)


@dataclass(frozen=True)
class Star:
    """The ``*`` of ``SELECT *`` and ``COUNT(*)``."""

    def to_sql(self) -> str:
        """``*``."""
        return "*"


_INFIX_FUNCTIONS = {"plus": "+", "minus": "-", "times": "*", "divide": "/", "mod": "%"}


@dataclass(frozen=True)
class Function:
    """A function call. Arithmetic is stored as Pinot stores it: ``a + b`` is ``plus(a, b)``."""

    name: str
    args: tuple[Expression, ...] = ()

    @property
    def canonical_name(self) -> str:
        """The name as Pinot looks functions up (see :func:`canonical_function_name`)."""
        return canonical_function_name(self.name)

    @property
    def is_aggregation(self) -> bool:
        """True for aggregation functions (COUNT, SUM, DISTINCTCOUNT, PERCENTILE95, ...)."""
        name = self.canonical_name
        return name in AGGREGATION_FUNCTIONS or bool(_PERCENTILE_SUFFIX.match(name))

    def to_sql(self) -> str:
        """The call as SQL; the five arithmetic functions print infix, in parentheses."""
        symbol = _INFIX_FUNCTIONS.get(self.name)
        if symbol is not None and len(self.args) == 2:
            return f"({self.args[0].to_sql()} {symbol} {self.args[1].to_sql()})"
        return f"{self.name}({', '.join(a.to_sql() for a in self.args)})"


Expression: TypeAlias = Identifier | Literal | Function | Star


def _expression_columns(expr: Expression) -> Iterator[str]:
    if isinstance(expr, Identifier):
        yield expr.name
    elif isinstance(expr, Function):
        for arg in expr.args:
            yield from _expression_columns(arg)


# -- filters -----------------------------------------------------------------------------------


class FilterOperator(Enum):
    """Predicate operators, with the arity of values each one takes (``None`` = one or more)."""

    EQ = "="
    NEQ = "<>"
    GT = ">"
    GTE = ">="
    LT = "<"
    LTE = "<="
    IN = "IN"
    NOT_IN = "NOT IN"
    BETWEEN = "BETWEEN"
    LIKE = "LIKE"
    IS_NULL = "IS NULL"
    IS_NOT_NULL = "IS NOT NULL"
    REGEXP_LIKE = "REGEXP_LIKE"
    TEXT_MATCH = "TEXT_MATCH"
    JSON_MATCH = "JSON_MATCH"

    @classmethod
    def parse(cls, text: str) -> FilterOperator:
        """Look an operator up by its SQL spelling (``"!="`` is accepted for ``<>``).

        >>> FilterOperator.parse("not in"), FilterOperator.parse("!=")
        (<FilterOperator.NOT_IN: 'NOT IN'>, <FilterOperator.NEQ: '<>'>)
        """
        key = " ".join(text.upper().split())
        if key == "!=":
            return cls.NEQ
        try:
            return cls(key)
        except ValueError:
            allowed = ", ".join(op.value for op in cls)
            raise ValueError(f"unknown filter operator {text!r}; use one of {allowed}") from None

    @property
    def arity(self) -> int | None:
        """How many values the operator takes; ``None`` means one or more (IN lists)."""
        return _ARITY.get(self, 1)

    @property
    def flipped(self) -> FilterOperator:
        """The operator with its sides swapped (``5 < x`` is ``x > 5``); others map to themselves."""
        return _FLIPPED.get(self, self)


_ARITY: dict[FilterOperator, int | None] = {
    FilterOperator.IN: None,
    FilterOperator.NOT_IN: None,
    FilterOperator.BETWEEN: 2,
    FilterOperator.IS_NULL: 0,
    FilterOperator.IS_NOT_NULL: 0,
}
_FLIPPED = {
    FilterOperator.GT: FilterOperator.LT,
    FilterOperator.LT: FilterOperator.GT,
    FilterOperator.GTE: FilterOperator.LTE,
    FilterOperator.LTE: FilterOperator.GTE,
}
#: Operators written as a function call, e.g. ``REGEXP_LIKE(col, 'a.*')``.
FUNCTION_STYLE_OPERATORS = frozenset({FilterOperator.REGEXP_LIKE, FilterOperator.TEXT_MATCH, FilterOperator.JSON_MATCH})


def _as_expression(value: LiteralValue | Expression) -> Expression:
    return value if isinstance(value, Identifier | Literal | Function | Star) else Literal(value)


@dataclass(frozen=True)
class Predicate:
    """A leaf of the filter: ``lhs <operator> values``.

    ``lhs`` is usually a bare column (:class:`Identifier`); pruners only understand that form, as in
    Pinot. ``values`` are usually literals but may be expressions such as ``ago('PT1H')``.
    """

    lhs: Expression
    operator: FilterOperator
    values: tuple[Expression, ...] = ()

    def __post_init__(self) -> None:
        arity = self.operator.arity
        count = len(self.values)
        if (arity is None and count == 0) or (arity is not None and count != arity):
            wanted = "one or more" if arity is None else str(arity)
            raise ValueError(f"{self.operator.value} takes {wanted} value(s), got {count}")

    @classmethod
    def of(cls, column: str, operator: FilterOperator | str, *values: LiteralValue | Expression) -> Predicate:
        """Build a predicate on a column from plain Python values.

        >>> Predicate.of("country", "IN", "nl", "de").to_sql()
        "country IN ('nl', 'de')"
        """
        op = operator if isinstance(operator, FilterOperator) else FilterOperator.parse(operator)
        return cls(Identifier(column), op, tuple(_as_expression(v) for v in values))

    @property
    def column(self) -> str | None:
        """The column name when the left side is a bare column, else ``None``."""
        return self.lhs.name if isinstance(self.lhs, Identifier) else None

    @property
    def literal_values(self) -> tuple[LiteralValue, ...] | None:
        """The Python values when every value is a literal, else ``None``."""
        if all(isinstance(v, Literal) for v in self.values):
            return tuple(v.value for v in self.values if isinstance(v, Literal))
        return None

    def to_sql(self) -> str:
        """The predicate as SQL text."""
        return _PREDICATE_PRINTERS.get(self.operator, _print_comparison)(self)


def _print_comparison(p: Predicate) -> str:
    return f"{p.lhs.to_sql()} {p.operator.value} {p.values[0].to_sql()}"


def _print_list(p: Predicate) -> str:
    return f"{p.lhs.to_sql()} {p.operator.value} ({', '.join(v.to_sql() for v in p.values)})"


def _print_between(p: Predicate) -> str:
    return f"{p.lhs.to_sql()} BETWEEN {p.values[0].to_sql()} AND {p.values[1].to_sql()}"


def _print_postfix(p: Predicate) -> str:
    return f"{p.lhs.to_sql()} {p.operator.value}"


def _print_function_style(p: Predicate) -> str:
    return f"{p.operator.value}({p.lhs.to_sql()}, {p.values[0].to_sql()})"


_PREDICATE_PRINTERS: dict[FilterOperator, Callable[[Predicate], str]] = {
    FilterOperator.IN: _print_list,
    FilterOperator.NOT_IN: _print_list,
    FilterOperator.BETWEEN: _print_between,
    FilterOperator.IS_NULL: _print_postfix,
    FilterOperator.IS_NOT_NULL: _print_postfix,
    **{op: _print_function_style for op in FUNCTION_STYLE_OPERATORS},
}


@dataclass(frozen=True)
class And:
    """All children must hold. Build with ``And.of(a, b, ...)``."""

    children: tuple[FilterNode, ...]

    @classmethod
    def of(cls, *children: FilterNode) -> And:
        """Conjunction of the given nodes."""
        return cls(tuple(children))

    def to_sql(self) -> str:
        """Children joined by AND; compound children are parenthesised."""
        return " AND ".join(_child_sql(c) for c in self.children)


@dataclass(frozen=True)
class Or:
    """At least one child must hold. Build with ``Or.of(a, b, ...)``."""

    children: tuple[FilterNode, ...]

    @classmethod
    def of(cls, *children: FilterNode) -> Or:
        """Disjunction of the given nodes."""
        return cls(tuple(children))

    def to_sql(self) -> str:
        """Children joined by OR; compound children are parenthesised."""
        return " OR ".join(_child_sql(c) for c in self.children)


@dataclass(frozen=True)
class Not:
    """The child must not hold."""

    child: FilterNode

    def to_sql(self) -> str:
        """``NOT child`` (parenthesised when the child is compound)."""
        return f"NOT {_child_sql(self.child)}"


FilterNode: TypeAlias = And | Or | Not | Predicate


def _child_sql(node: FilterNode) -> str:
    text = node.to_sql()
    return f"({text})" if isinstance(node, And | Or) else text


def iter_predicates(node: FilterNode | None) -> Iterator[Predicate]:
    """Yield every predicate leaf of a filter tree, left to right.

    >>> from workbench.pinot.sql import parse_query
    >>> [p.column for p in iter_predicates(parse_query("SELECT * FROM t WHERE a = 1 OR NOT b > 2").filter)]
    ['a', 'b']
    """
    if node is None:
        return
    if isinstance(node, Predicate):
        yield node
    elif isinstance(node, Not):
        yield from iter_predicates(node.child)
    else:
        for child in node.children:
            yield from iter_predicates(child)


# -- the query ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SelectItem:
    """One entry of the select list, with its optional ``AS`` alias."""

    expression: Expression
    alias: str | None = None

    def to_sql(self) -> str:
        """The item as SQL text."""
        text = self.expression.to_sql()
        return text if self.alias is None else f"{text} AS {quote_identifier(self.alias)}"


@dataclass(frozen=True)
class OrderByItem:
    """One ORDER BY key."""

    expression: Expression
    descending: bool = False

    def to_sql(self) -> str:
        """The key as SQL text (``DESC`` only when descending)."""
        return self.expression.to_sql() + (" DESC" if self.descending else "")


#: Pinot's default LIMIT when a query gives none (selection and group-by alike).
DEFAULT_LIMIT = 10


@dataclass(frozen=True)
class Query:
    """A single-table, single-stage Pinot query.

    Parameters
    ----------
    table
        The table named in FROM, as written (raw or with ``_OFFLINE``/``_REALTIME``).
    select
        The select list; aggregations and plain projections are told apart by :attr:`aggregations`.
    filter
        The WHERE tree, or ``None`` when there is no WHERE (pruners then keep every segment).
    group_by, having, order_by
        The GROUP BY keys, HAVING tree and ORDER BY keys.
    limit, offset
        ``None`` when absent; :attr:`effective_limit` applies Pinot's default of 10.
    distinct
        ``SELECT DISTINCT``.
    options
        Query options from ``SET k = v;`` prefixes and ``OPTION(...)``, as sorted ``(key, value)``
        pairs so the query stays hashable; read them with :meth:`option`.
    """

    table: str
    select: tuple[SelectItem, ...]
    filter: FilterNode | None = None
    group_by: tuple[Expression, ...] = ()
    having: FilterNode | None = None
    order_by: tuple[OrderByItem, ...] = ()
    limit: int | None = None
    offset: int | None = None
    distinct: bool = False
    options: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if not self.select:
            raise ValueError("a query selects at least one expression")
        for name, value in (("limit", self.limit), ("offset", self.offset)):
            if value is not None and value < 0:
                raise ValueError(f"{name} must not be negative, got {value}")
        object.__setattr__(self, "options", tuple(sorted(dict(self.options).items())))


    # -- derived views ------------------------------------------------------------------------
    @property
    def aggregations(self) -> tuple[Function, ...]:
        """The aggregation calls of the select list, in order."""
        return tuple(e for e in (i.expression for i in self.select) if isinstance(e, Function) and e.is_aggregation)

    @property
    def projections(self) -> tuple[Expression, ...]:
        """The select expressions that are not aggregations (columns, ``*``, transforms)."""
        return tuple(
            i.expression
            for i in self.select
            if not (isinstance(i.expression, Function) and i.expression.is_aggregation)
        )

    @property
    def is_aggregation(self) -> bool:
        """True when the query aggregates (with or without GROUP BY)."""
        return bool(self.aggregations)

    @property
    def filter_columns(self) -> frozenset[str]:
        """Columns referenced by the WHERE clause."""
        out: set[str] = set()
        for p in iter_predicates(self.filter):
            out.update(_expression_columns(p.lhs))
            for v in p.values:
                out.update(_expression_columns(v))
        return frozenset(out)

    @property
    def effective_limit(self) -> int:
        """The LIMIT Pinot applies: the given one, else 10."""
        return DEFAULT_LIMIT if self.limit is None else self.limit

    def option(self, key: str, default: str | None = None) -> str | None:
        """One query option's value (keys compared case-insensitively, as Pinot resolves them)."""
        wanted = key.lower()
        return next((v for k, v in self.options if k.lower() == wanted), default)

    @property
    def option_map(self) -> Mapping[str, str]:
        """The options as a fresh dict."""
        return dict(self.options)

    # -- printing -----------------------------------------------------------------------------
    def to_sql(self) -> str:
        """Print the query; :func:`~workbench.pinot.sql.parse_query` reads it back to an equal tree."""
        parts = [f"SET {quote_identifier(k)} = {Literal(v).to_sql()};" for k, v in self.options]
        parts.append(self._select_clause())
        parts.extend(clause for clause in self._tail_clauses() if clause)
        return " ".join(parts)

    def _select_clause(self) -> str:
        head = "SELECT DISTINCT " if self.distinct else "SELECT "
        return head + ", ".join(i.to_sql() for i in self.select) + f" FROM {quote_identifier(self.table)}"

    def _tail_clauses(self) -> Iterator[str]:
        yield f"WHERE {self.filter.to_sql()}" if self.filter is not None else ""
        yield "GROUP BY " + ", ".join(e.to_sql() for e in self.group_by) if self.group_by else ""
        yield f"HAVING {self.having.to_sql()}" if self.having is not None else ""
        yield "ORDER BY " + ", ".join(o.to_sql() for o in self.order_by) if self.order_by else ""
        yield f"LIMIT {self.limit}" if self.limit is not None else ""
        yield f"OFFSET {self.offset}" if self.offset is not None else ""
