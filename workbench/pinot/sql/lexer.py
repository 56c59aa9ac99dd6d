"""The tokenizer of :mod:`workbench.pinot.sql`, and the error both raise.

Kept apart from the parser so each module stays small: this one knows characters, the parser knows
grammar. Comments (``--`` and ``/* */``) and blanks are dropped; every token keeps its character
offset so errors can point at the text.

>>> [(t.kind, t.text) for t in tokenize("ts >= 'a''b' -- note")]
[('word', 'ts'), ('op', '>='), ('string', "'a''b'"), ('eof', '')]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workbench.errors import InputError
from workbench.pinot.sql.query import RESERVED_WORDS, LiteralValue

__all__ = ["QueryParseError", "Token", "tokenize"]


class QueryParseError(InputError):
    """SQL the query model cannot represent, or that is not valid SQL.

    Attributes
    ----------
    position
        0-based character offset in the SQL text where the problem starts.
    construct
        The unsupported construct's name (``"JOIN"``, ``"window function (OVER)"``...), or ``None``
        for a plain syntax error.
    """

    def __init__(self, sql: str, position: int, problem: str, construct: str | None = None) -> None:
        self.sql = sql
        self.position = position
        self.construct = construct
        super().__init__(f"query at character {position + 1}", f"{problem} near {_snippet(sql, position)!r}")


def _snippet(sql: str, position: int, width: int = 24) -> str:
    start, end = max(0, position - width), position + width
    return ("..." if start else "") + sql[start:end] + ("..." if end < len(sql) else "")


# -- tokens ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    """One lexical token: ``kind`` is word, qident, string, number, op or eof."""

    kind: str
    text: str
    position: int
    value: LiteralValue = None

    def is_word(self, *words: str) -> bool:
        """True for a bare word equal (case-insensitively) to one of ``words``."""
        return self.kind == "word" and self.text.upper() in words

    def is_name(self) -> bool:
        """True for a token usable as a name: a quoted identifier or a bare non-reserved word."""
        return self.kind == "qident" or (self.kind == "word" and self.text.upper() not in RESERVED_WORDS)

    def is_op(self, *ops: str) -> bool:
        """True for one of the punctuation/operator tokens ``ops``."""
        return self.kind == "op" and self.text in ops


_TOKEN_PATTERN = re.compile(
    r"""(?P<space>\s+|--[^\n]*|/\*.*?\*/)
      | (?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
      | (?P<string>'(?:[^']|'')*')
      | (?P<qident>"(?:[^"]|"")*")
      | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
      | (?P<op><>|!=|<=|>=|=|<|>|[(),.*+\-/%;?])""",
    re.VERBOSE | re.DOTALL,
)


def _token_value(kind: str, text: str) -> LiteralValue:
    if kind == "number":
        return float(text) if any(c in text for c in ".eE") else int(text)
    if kind == "string":
        return text[1:-1].replace("''", "'")
    if kind == "qident":
        return text[1:-1].replace('""', '"')
    return None


def tokenize(sql: str) -> list[Token]:
    """Split SQL text into tokens, ending with an ``eof`` token; comments and blanks are dropped.

    >>> [t.text for t in tokenize("a >= 'it''s' -- note")]
    ['a', '>=', "'it''s'", '']
    """
    tokens: list[Token] = []
    position = 0
    while position < len(sql):
        match = _TOKEN_PATTERN.match(sql, position)
        if match is None:
            raise _lex_error(sql, position)
        kind, text = match.lastgroup or "space", match.group()
        if kind != "space":
            tokens.append(Token(kind, text, position, _token_value(kind, text)))
        position = match.end()
    tokens.append(Token("eof", "", len(sql)))
    return tokens


def _lex_error(sql: str, position: int) -> QueryParseError:
    opening = sql[position]
    if opening in "'\"":
        kind = "string literal" if opening == "'" else "quoted identifier"
        return QueryParseError(sql, position, f"unterminated {kind}")
    if opening == "`":
        return QueryParseError(sql, position, "backtick-quoted identifiers are not SQL; use double quotes")
    return QueryParseError(sql, position, f"unexpected character {opening!r}")
