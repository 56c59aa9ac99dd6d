"""A parser for the SQL subset that workloads and Pinot broker query logs use.

Hand-written tokenizer (:mod:`workbench.pinot.sql.lexer`) and recursive descent, because the subset
is small and the errors matter more than coverage: a workload author pasting a query the single-stage
engine model cannot represent (a JOIN, a subquery, a window function, ...) gets a
:class:`QueryParseError` that names the construct and points at it, instead of a silently wrong tree.

Accepted: ``[SET key = value;]... SELECT [DISTINCT] items FROM table [WHERE f] [GROUP BY e, ...]
[HAVING f] [ORDER BY e [ASC|DESC], ...] [LIMIT n [OFFSET m] | LIMIT m, n] [OPTION(k=v, ...)] [;]`` with
AND/OR/NOT, comparisons (``=``, ``<>``, ``!=``, ``<``, ``<=``, ``>``, ``>=``), ``[NOT] IN``,
``[NOT] BETWEEN``, ``[NOT] LIKE``, ``IS [NOT] NULL``, ``REGEXP_LIKE``/``TEXT_MATCH``/``JSON_MATCH``,
function calls, arithmetic, and literals (integers, decimals, ``'strings'`` with ``''`` escapes,
TRUE/FALSE/NULL).

>>> parse_query("SET timeoutMs = 2000; SELECT city, SUM(x) FROM t WHERE 30 < ts GROUP BY city").to_sql()
"SET timeoutMs = '2000'; SELECT city, SUM(x) FROM t WHERE ts > 30 GROUP BY city"
>>> parse_query("SELECT * FROM a JOIN b ON a.k = b.k")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
workbench.pinot.sql.lexer.QueryParseError: query at character 17: JOIN is not supported ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from workbench.pinot.sql.lexer import QueryParseError, Token, tokenize
from workbench.pinot.sql.query import (
    FUNCTION_STYLE_OPERATORS,
    RESERVED_WORDS,
    And,
    Expression,
    FilterNode,
    FilterOperator,
    Function,
    Identifier,
    Literal,
    Not,
    Or,
    OrderByItem,
    Predicate,
    Query,
    SelectItem,
    Star,
    canonical_function_name,
)

__all__ = ["parse_query"]

_T = TypeVar("_T")
_SCOPE = "the workbench models single-table, single-stage Pinot queries"


# -- unsupported constructs --------------------------------------------------------------------

#: Leading words of statements other than SELECT, and what to call them in the error.
_STATEMENT_WORDS = ("INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "SHOW", "DESCRIBE", "MERGE", "TRUNCATE")
_OTHER_STATEMENTS = {
    "WITH": "WITH (common table expressions)",
    "EXPLAIN": "EXPLAIN PLAN",
    **{word: f"{word} statements" for word in _STATEMENT_WORDS},
}
_SET_OPERATIONS = ("UNION", "INTERSECT", "EXCEPT", "MINUS")
_JOIN_WORDS = ("JOIN", "INNER", "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "OUTER")
#: Words that start an expression form the model does not represent.
_UNSUPPORTED_EXPRESSIONS = {
    "CASE": "CASE expressions",
    "CAST": "CAST",
    "EXISTS": "EXISTS subqueries",
    "INTERVAL": "INTERVAL literals",
    "ARRAY": "ARRAY constructors",
}
_COMPARISONS = ("=", "<>", "!=", "<", "<=", ">", ">=")
_ARITHMETIC = {"+": "plus", "-": "minus", "*": "times", "/": "divide", "%": "mod"}
_PREDICATE_FOLLOWERS = ("IN", "NOT", "BETWEEN", "LIKE", "IS")
_FUNCTION_PREDICATES = {canonical_function_name(op.value): op for op in FUNCTION_STYLE_OPERATORS}


def _has_columns(expr: Expression) -> bool:
    if isinstance(expr, Identifier):
        return True
    return isinstance(expr, Function) and any(_has_columns(a) for a in expr.args)


def _comparison(lhs: Expression, op: FilterOperator, rhs: Expression) -> Predicate:
    """Put the column on the left, as Pinot's broker rewrites comparisons before planning."""
    if not _has_columns(lhs) and _has_columns(rhs):
        return Predicate(rhs, op.flipped, (lhs,))
    if _has_columns(lhs) and _has_columns(rhs):
        return Predicate(Function("minus", (lhs, rhs)), op, (Literal(0),))
    return Predicate(lhs, op, (rhs,))


def _flatten(kind: type[And] | type[Or], children: list[FilterNode]) -> FilterNode:
    if len(children) == 1:
        return children[0]
    flat: list[FilterNode] = []
    for child in children:
        flat.extend(child.children if isinstance(child, kind) else (child,))
    return kind(tuple(flat))


# -- the parser --------------------------------------------------------------------------------


class _Parser:
    """Recursive descent over the token list; one method per grammar rule."""

    def __init__(self, sql: str) -> None:
        self.sql = sql
        self.tokens = tokenize(sql)
        self.index = 0
        self.options: dict[str, str] = {}

    # -- token helpers ------------------------------------------------------------------------
    @property
    def token(self) -> Token:
        return self.tokens[self.index]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.token
        self.index = min(self.index + 1, len(self.tokens) - 1)
        return token

    def accept_word(self, *words: str) -> bool:
        if self.token.is_word(*words):
            self.advance()
            return True
        return False

    def accept_op(self, *ops: str) -> bool:
        if self.token.is_op(*ops):
            self.advance()
            return True
        return False

    def expect_word(self, word: str) -> None:
        if not self.accept_word(word):
            raise self.error(f"expected {word}, found {self._describe(self.token)}")

    def expect_op(self, op: str) -> None:
        if not self.accept_op(op):
            raise self.error(f"expected {op!r}, found {self._describe(self.token)}")

    def error(self, problem: str, token: Token | None = None) -> QueryParseError:
        return QueryParseError(self.sql, (token or self.token).position, problem)

    def unsupported(self, construct: str, token: Token | None = None) -> QueryParseError:
        position = (token or self.token).position
        return QueryParseError(self.sql, position, f"{construct} is not supported ({_SCOPE})", construct)

    @staticmethod
    def _describe(token: Token) -> str:
        return "the end of the query" if token.kind == "eof" else repr(token.text)

    # -- statement ----------------------------------------------------------------------------
    def statement(self) -> Query:
        while self.token.is_word("SET"):
            self.set_option()
        if self.token.kind == "word" and self.token.text.upper() in _OTHER_STATEMENTS:
            raise self.unsupported(_OTHER_STATEMENTS[self.token.text.upper()])
        if self.token.is_op("("):
            raise self.unsupported("a parenthesised query (subquery or set operation)")
        query = self.select()
        self.accept_op(";")
        if self.token.kind != "eof":
            raise self.error(f"unexpected {self._describe(self.token)} after the query")
        return query

    def set_option(self) -> None:
        self.expect_word("SET")
        key = self.name("an option name")
        self.expect_op("=")
        self.options[key] = self.option_value()
        if not self.accept_op(";"):
            raise self.error("expected ';' after the SET statement")

    def option_value(self) -> str:
        token = self.advance()
        if token.kind in ("string", "qident"):
            return str(token.value)
        if token.is_word("TRUE", "FALSE"):
            return token.text.lower()
        if token.kind in ("number", "word"):
            return token.text
        if token.is_op("-") and self.token.kind == "number":
            return "-" + self.advance().text
        raise self.error(f"expected an option value, found {self._describe(token)}", token)

    def name(self, what: str) -> str:
        token = self.advance()
        if token.kind == "qident":
            return str(token.value)
        if token.kind == "word" and token.text.upper() not in RESERVED_WORDS:
            return token.text
        raise self.error(f"expected {what}, found {self._describe(token)}", token)

    def dotted_name(self, what: str) -> str:
        parts = [self.name(what)]
        while self.token.is_op(".") and self.peek().kind in ("word", "qident"):
            self.advance()
            parts.append(self.name(what))
        return ".".join(parts)

    # -- SELECT -------------------------------------------------------------------------------
    def select(self) -> Query:
        self.expect_word("SELECT")
        distinct = self.accept_word("DISTINCT")
        items = self.comma_list(self.select_item)
        if not self.accept_word("FROM"):
            raise self.error(f"expected FROM after the select list, found {self._describe(self.token)}")
        table = self.table()
        filter_ = self.boolean() if self.accept_word("WHERE") else None
        group_by = self.comma_list(self.expression) if self.accept_words("GROUP", "BY") else ()
        having = self.boolean() if self.accept_word("HAVING") else None
        order_by = self.comma_list(self.order_item) if self.accept_words("ORDER", "BY") else ()
        limit, offset = self.limit_offset()
        self.option_clause()
        self.reject_trailing_constructs()
        return Query(
            table, items, filter_, group_by, having, order_by, limit, offset, distinct, tuple(self.options.items())
        )

    def accept_words(self, first: str, second: str) -> bool:
        if not self.token.is_word(first):
            return False
        self.advance()
        self.expect_word(second)
        return True

    def comma_list(self, rule: Callable[[], _T]) -> tuple[_T, ...]:
        items = [rule()]
        while self.accept_op(","):
            items.append(rule())
        return tuple(items)

    def select_item(self) -> SelectItem:
        if self.accept_op("*"):
            return SelectItem(Star())
        expr = self.expression()
        if self.accept_word("AS"):
            return SelectItem(expr, self.name("an alias"))
        if self.token.is_name():
            return SelectItem(expr, self.name("an alias"))
        return SelectItem(expr)

    def table(self) -> str:
        if self.token.is_op("("):
            raise self.unsupported("subquery in FROM")
        name = self.dotted_name("a table name")
        if self.token.is_op(","):
            raise self.unsupported("implicit join (several tables in FROM)")
        if self.token.is_word(*_JOIN_WORDS):
            raise self.unsupported("JOIN")
        if self.token.is_word("LATERAL"):
            raise self.unsupported("LATERAL")
        if self.token.is_word("AS") or self.token.is_name():
            raise self.unsupported("table alias")
        return name

    def order_item(self) -> OrderByItem:
        expr = self.expression()
        descending = self.accept_word("DESC")
        if not descending:
            self.accept_word("ASC")
        if self.token.is_word("NULLS"):
            raise self.unsupported("NULLS FIRST/LAST")
        return OrderByItem(expr, descending)

    def limit_offset(self) -> tuple[int | None, int | None]:
        limit = offset = None
        if self.accept_word("LIMIT"):
            limit = self.integer("LIMIT")
            if self.accept_op(","):
                offset, limit = limit, self.integer("LIMIT")
        if self.accept_word("OFFSET"):
            offset = self.integer("OFFSET")
        return limit, offset

    def integer(self, clause: str) -> int:
        token = self.advance()
        if token.kind != "number" or not isinstance(token.value, int):
            raise self.error(f"{clause} takes a non-negative integer, found {self._describe(token)}", token)
        return token.value

    def option_clause(self) -> None:
        if not self.accept_word("OPTION"):
            return
        self.expect_op("(")
        while True:
            key = self.name("an option name")
            self.expect_op("=")
            self.options[key] = self.option_value()
            if not self.accept_op(","):
                break
        self.expect_op(")")

    def reject_trailing_constructs(self) -> None:
        token = self.token
        if token.is_word(*_SET_OPERATIONS):
            raise self.unsupported(token.text.upper())
        if token.is_word("WINDOW", "QUALIFY"):
            raise self.unsupported(f"{token.text.upper()} clause")
        if token.is_word("FETCH"):
            raise self.unsupported("FETCH FIRST (use LIMIT)")

    # -- boolean expressions ------------------------------------------------------------------
    def boolean(self) -> FilterNode:
        children = [self.conjunction()]
        while self.accept_word("OR"):
            children.append(self.conjunction())
        return _flatten(Or, children)

    def conjunction(self) -> FilterNode:
        children = [self.negation()]
        while self.accept_word("AND"):
            children.append(self.negation())
        return _flatten(And, children)

    def negation(self) -> FilterNode:
        if self.accept_word("NOT"):
            return Not(self.negation())
        return self.boolean_primary()

    def boolean_primary(self) -> FilterNode:
        if self.token.is_op("("):
            if self.peek().is_word("SELECT"):
                raise self.unsupported("subquery", self.peek())
            grouped = self.try_parenthesised_boolean()
            if grouped is not None:
                return grouped
        return self.predicate()

    def try_parenthesised_boolean(self) -> FilterNode | None:
        """Parse ``( filter )``; give way to ``(a + b) > 3``, which starts with an expression instead."""
        saved = self.index
        try:
            self.advance()
            node = self.boolean()
            self.expect_op(")")
        except QueryParseError as exc:
            if exc.construct is not None:
                raise
            node = None
        if node is not None and not self.continues_predicate():
            return node
        self.index = saved
        return None

    def continues_predicate(self) -> bool:
        token = self.token
        return token.is_op(*_COMPARISONS, *_ARITHMETIC) or token.is_word(*_PREDICATE_FOLLOWERS)

    def predicate(self) -> FilterNode:
        lhs = self.expression()
        if self.token.is_op(*_COMPARISONS):
            op = FilterOperator.parse(self.advance().text)
            return _comparison(lhs, op, self.expression())
        negated = self.accept_word("NOT")
        node = self.keyword_predicate(lhs, negated)
        if node is not None:
            return node
        if negated:
            raise self.error(f"expected IN, BETWEEN or LIKE after NOT, found {self._describe(self.token)}")
        return self.function_predicate(lhs)

    def keyword_predicate(self, lhs: Expression, negated: bool) -> FilterNode | None:
        if self.accept_word("IN"):
            values = self.in_list()
            return Predicate(lhs, FilterOperator.NOT_IN if negated else FilterOperator.IN, values)
        if self.accept_word("BETWEEN"):
            low = self.expression()
            self.expect_word("AND")
            node: FilterNode = Predicate(lhs, FilterOperator.BETWEEN, (low, self.expression()))
            return Not(node) if negated else node
        if self.accept_word("LIKE"):
            node = Predicate(lhs, FilterOperator.LIKE, (self.expression(),))
            return Not(node) if negated else node
        if not negated and self.accept_word("IS"):
            return self.is_predicate(lhs)
        return None

    def in_list(self) -> tuple[Expression, ...]:
        self.expect_op("(")
        if self.token.is_word("SELECT"):
            raise self.unsupported("subquery")
        values = self.comma_list(self.expression)
        self.expect_op(")")
        return values

    def is_predicate(self, lhs: Expression) -> Predicate:
        negated = self.accept_word("NOT")
        if self.accept_word("NULL"):
            return Predicate(lhs, FilterOperator.IS_NOT_NULL if negated else FilterOperator.IS_NULL)
        if self.token.is_word("DISTINCT"):
            raise self.unsupported("IS [NOT] DISTINCT FROM")
        if self.token.is_word("TRUE", "FALSE"):
            raise self.unsupported(f"IS {self.token.text.upper()} (compare with = instead)")
        raise self.error(f"expected NULL after IS, found {self._describe(self.token)}")

    def function_predicate(self, lhs: Expression) -> Predicate:
        op = _FUNCTION_PREDICATES.get(lhs.canonical_name) if isinstance(lhs, Function) else None
        if op is None or not isinstance(lhs, Function):
            raise self.error(f"expected a comparison, IN, BETWEEN, LIKE or IS after {lhs.to_sql()!r}")
        if len(lhs.args) != 2:
            raise self.error(f"{op.value} takes a column and one argument, got {len(lhs.args)} arguments")
        return Predicate(lhs.args[0], op, (lhs.args[1],))

    # -- value expressions --------------------------------------------------------------------
    def expression(self) -> Expression:
        left = self.term()
        while self.token.is_op("+", "-"):
            name = _ARITHMETIC[self.advance().text]
            left = Function(name, (left, self.term()))
        return left

    def term(self) -> Expression:
        left = self.unary()
        while self.token.is_op("*", "/", "%"):
            name = _ARITHMETIC[self.advance().text]
            left = Function(name, (left, self.unary()))
        return left

    def unary(self) -> Expression:
        if self.accept_op("+"):
            return self.unary()
        if not self.accept_op("-"):
            return self.primary()
        operand = self.unary()
        if (
            isinstance(operand, Literal)
            and isinstance(operand.value, int | float)
            and not isinstance(operand.value, bool)
        ):
            return Literal(-operand.value)
        return Function("minus", (Literal(0), operand))

    def primary(self) -> Expression:
        token = self.token
        handler = _PRIMARY_BY_KIND.get(token.kind)
        if handler is None:
            raise self.error(f"expected an expression, found {self._describe(token)}")
        return handler(self)

    def literal(self) -> Expression:
        return Literal(self.advance().value)

    def parenthesised(self) -> Expression:
        if self.peek().is_word("SELECT"):
            raise self.unsupported("subquery", self.peek())
        if self.token.is_op("?"):
            raise self.unsupported("parameter placeholder '?' (a redacted query log)")
        self.expect_op("(")
        expr = self.expression()
        self.expect_op(")")
        return expr

    def operator_primary(self) -> Expression:
        if self.token.is_op("?"):
            raise self.unsupported("parameter placeholder '?' (a redacted query log)")
        if self.token.is_op("("):
            return self.parenthesised()
        raise self.error(f"expected an expression, found {self._describe(self.token)}")

    def word_primary(self) -> Expression:
        word = self.token.text.upper()
        if word in ("TRUE", "FALSE"):
            self.advance()
            return Literal(word == "TRUE")
        if word == "NULL":
            self.advance()
            return Literal(None)
        if word in _UNSUPPORTED_EXPRESSIONS:
            raise self.unsupported(_UNSUPPORTED_EXPRESSIONS[word])
        if word in RESERVED_WORDS:
            raise self.error(f"expected an expression, found the keyword {word}")
        if self.peek().is_op("("):
            return self.function_call()
        return Identifier(self.dotted_name("a column"))

    def quoted_primary(self) -> Expression:
        return Identifier(self.dotted_name("a column"))

    def function_call(self) -> Expression:
        name = self.advance().text
        self.expect_op("(")
        if self.token.is_word("SELECT"):
            raise self.unsupported("subquery")
        call = Function(name, self.arguments(name))
        self.expect_op(")")
        if self.token.is_word("OVER"):
            raise self.unsupported("window function (OVER)")
        if self.token.is_word("FILTER"):
            raise self.unsupported("aggregate FILTER clause")
        return call

    def arguments(self, name: str) -> tuple[Expression, ...]:
        if self.token.is_op(")"):
            return ()
        if self.token.is_op("*") and self.peek().is_op(")"):
            self.advance()
            return (Star(),)
        if self.token.is_word("DISTINCT"):
            raise self.unsupported(f"DISTINCT inside {name}() (use DISTINCTCOUNT)")
        return self.comma_list(self.expression)


_PRIMARY_BY_KIND: dict[str, Callable[[_Parser], Expression]] = {
    "number": _Parser.literal,
    "string": _Parser.literal,
    "word": _Parser.word_primary,
    "qident": _Parser.quoted_primary,
    "op": _Parser.operator_primary,
}


def parse_query(sql: str) -> Query:
    """Parse one SQL query (with optional ``SET k = v;`` prefixes) into a :class:`Query`.

    Parameters
    ----------
    sql
        The query text, e.g. the ``query=`` field of a Pinot broker query-log line.

    Raises
    ------
    QueryParseError
        For invalid SQL, and for valid SQL the model cannot represent; the message names the
        construct (``JOIN``, ``subquery``, ``window function (OVER)``, ...) and quotes the text around it.

    Examples
    --------
    >>> q = parse_query("SELECT DISTINCTCOUNT(user) FROM ev WHERE day >= 19000 AND NOT (a = 'x' OR b <> 2)")
    >>> type(q.filter).__name__, q.aggregations[0].name
    ('And', 'DISTINCTCOUNT')
    >>> parse_query("SELECT a FROM t WHERE a IN (SELECT b FROM u)")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    workbench.pinot.sql.lexer.QueryParseError: query at character 29: subquery is not supported ...
    """
    return _Parser(sql).statement()
