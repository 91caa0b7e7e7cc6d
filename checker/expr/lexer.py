"""Tokenizer for the ``cel-subset/0.1`` expression language found inside ``${{ … }}``.

The lexer is a single hand-written loop over the text (no regular expressions, so no
backtracking). Every token records the code-point offsets ``[start, end)`` of its text relative
to the start of the expression. Characters that have no place in the subset (arithmetic, pipes,
map braces, …) do not raise immediately: :func:`scan` stops at them and appends an ``ERROR`` token
carrying the diagnostic, so the parser reports whichever problem comes first in the text.

This module also defines :class:`ExprError`, the one exception every static problem with an
expression or a template is reported through.
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = [
    "EOF",
    "ERROR",
    "FALSE",
    "FLOAT",
    "IDENT",
    "IN",
    "INT",
    "NULL",
    "RESERVED_WORDS",
    "STRING",
    "TRUE",
    "ExprError",
    "Token",
    "scan",
    "tokenize",
]

# Token kinds. Punctuation and operators use their own spelling as the kind ("==", "(", …).
INT: Final = "INT"
FLOAT: Final = "FLOAT"
STRING: Final = "STRING"
IDENT: Final = "IDENT"
TRUE: Final = "true"
FALSE: Final = "false"
NULL: Final = "null"
IN: Final = "in"
EOF: Final = "EOF"
ERROR: Final = "ERROR"

RESERVED_WORDS: Final = frozenset({"true", "false", "null", "in"})

_DEFAULT_CODE: Final = "NIKA-VAR-005"


class ExprError(Exception):
    """A static problem in an expression or template, positioned on the offending text.

    ``start``/``end`` are code-point offsets relative to the text that was handed to the parser
    (or, for errors coming out of :func:`checker.expr.template.parse_template`, relative to the
    whole string value). ``code`` is the NIKA code the checker should emit.
    """

    def __init__(self, message: str, start: int, end: int, code: str = _DEFAULT_CODE) -> None:
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = end
        self.code = code

    def shifted(self, delta: int) -> ExprError:
        """A copy of this error with both offsets moved by ``delta``."""
        return ExprError(self.message, self.start + delta, self.end + delta, self.code)

    def __repr__(self) -> str:
        return f"ExprError({self.message!r}, {self.start}, {self.end}, code={self.code!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExprError):
            return NotImplemented
        return (self.message, self.start, self.end, self.code) == (
            other.message,
            other.start,
            other.end,
            other.code,
        )

    def __hash__(self) -> int:
        return hash((self.message, self.start, self.end, self.code))


class Token(NamedTuple):
    """One token. ``value`` is the decoded literal (int, float, str) or, for ``ERROR``, the
    :class:`ExprError`; for every other kind it is the token's source text."""

    kind: str
    value: object
    start: int
    end: int


_DIGITS: Final = frozenset("0123456789")
_IDENT_START: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_IDENT_PART: Final = _IDENT_START | _DIGITS
_SPACE: Final = frozenset(" \t\n\r\f")
_ESCAPES: Final = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t"}
_SINGLE: Final = frozenset("()[].,?:")
_DOUBLE: Final = frozenset({"==", "!=", "<=", ">=", "&&", "||"})
_ARITHMETIC: Final = frozenset("+-*/%")
_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**63 - 1


def _bad_char(text: str, i: int) -> ExprError:
    """The diagnostic for a character that cannot start any token at offset ``i``."""
    c = text[i]
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if c in _ARITHMETIC:
        if c == "-":
            msg = (
                "`-` is only allowed as the sign of a number literal (arithmetic is not part of "
                "cel-subset/0.1): compute the value upstream or with `nika:jq` and reference it"
            )
        elif c == "/" and nxt == "/":
            msg = "comments are not allowed inside `${{ }}`: move the note to a YAML `#` comment"
        else:
            msg = (
                f"arithmetic `{c}` is not part of cel-subset/0.1: compute the value upstream or "
                "with `nika:jq` and reference the result"
            )
        return ExprError(msg, i, i + 1)
    if c == "|":
        return ExprError(
            "a single `|` is not an operator (there are no template filters): write `||` for a "
            "logical or, or reshape the data with `nika:jq`",
            i,
            i + 1,
        )
    if c == "&":
        return ExprError("a single `&` is not an operator: write `&&` for a logical and", i, i + 1)
    if c == "=":
        return ExprError("a single `=` is not a comparison: write `==` to test equality", i, i + 1)
    if c == "$" and text.startswith("{{", i + 1):
        return ExprError(
            "`${{` cannot be nested inside another expression: write the inner expression directly",
            i,
            i + 3,
        )
    if c == "{":
        return ExprError(
            "map literals `{…}` are not part of cel-subset/0.1: build the object in `with:` or with `nika:jq`",
            i,
            i + 1,
        )
    if c == "}":
        return ExprError("unexpected `}`: remove it", i, i + 1)
    if c == "`":
        return ExprError("backticks do not quote strings here: use '…' or \"…\"", i, i + 1)
    shown = repr(c)[1:-1] if not c.isprintable() else c
    return ExprError(
        f"unexpected character `{shown}`: remove it, or put it inside a quoted string",
        i,
        i + 1,
    )


def _scan_string(text: str, i: int) -> tuple[Token | None, ExprError | None, int]:
    """Scan the quoted string starting at ``text[i]``; return (token, error, next offset)."""
    quote = text[i]
    n = len(text)
    j = i + 1
    chunks: list[str] = []
    run_start = j
    while j < n:
        c = text[j]
        if c == quote:
            chunks.append(text[run_start:j])
            return Token(STRING, "".join(chunks), i, j + 1), None, j + 1
        if c == "\\":
            chunks.append(text[run_start:j])
            if j + 1 >= n:
                break
            esc = text[j + 1]
            decoded = _ESCAPES.get(esc)
            if decoded is None:
                shown = repr(esc)[1:-1] if not esc.isprintable() else esc
                err = ExprError(
                    f"`\\{shown}` is not a recognised escape in a string: use one of "
                    "\\\\ \\' \\\" \\n \\t (write `\\\\` for a literal backslash)",
                    j,
                    j + 2,
                )
                return None, err, n
            chunks.append(decoded)
            j += 2
            run_start = j
            continue
        j += 1
    err = ExprError(
        f"this string is never closed: end it with a matching {quote}",
        i,
        n,
    )
    return None, err, n


def scan(text: str) -> list[Token]:
    """Tokenize ``text`` without raising.

    The result always ends with an ``EOF`` token, or with an ``ERROR`` token (whose ``value`` is
    the :class:`ExprError`) at the first character that cannot be tokenized.
    """
    tokens: list[Token] = []
    append = tokens.append
    n = len(text)
    i = 0
    while i < n:
        c = text[i]
        if c in _SPACE:
            i += 1
            continue
        if c in _IDENT_START:  # the commonest token, scanned in line
            j = i + 1
            while j < n and text[j] in _IDENT_PART:
                j += 1
            word = text[i:j]
            append(Token(word if word in RESERVED_WORDS else IDENT, word, i, j))
            i = j
            continue
        if c in _SINGLE:  # punctuation (no two-character operator starts with one)
            append(Token(c, c, i, i + 1))
            i += 1
            continue
        if c in _DIGITS or (c == "-" and i + 1 < n and text[i + 1] in _DIGITS):
            tok = _number(text, i, n)
        elif c == "'" or c == '"':
            tok = _string(text, i)
        else:
            tok = _operator(text, i)
        append(tok)
        if tok[0] == ERROR:
            return tokens
        i = tok[3]
    append(Token(EOF, "", n, n))
    return tokens


def _number(text: str, i: int, n: int) -> Token:
    """The number literal (with its sign) starting at ``text[i]``: a float with a fractional part,
    else a 64-bit integer (an ``ERROR`` token past that range)."""
    j = i + 1
    while j < n and text[j] in _DIGITS:
        j += 1
    if j + 1 < n and text[j] == "." and text[j + 1] in _DIGITS:
        j += 2
        while j < n and text[j] in _DIGITS:
            j += 1
        return Token(FLOAT, float(text[i:j]), i, j)
    digits = j - i - (1 if text[i] == "-" else 0)
    value = int(text[i:j]) if digits <= 19 else None
    if value is None or not _INT_MIN <= value <= _INT_MAX:
        err = ExprError(
            "this integer does not fit in 64 bits: use a smaller number, or a string if it is an identifier",
            i,
            j,
        )
        return Token(ERROR, err, i, j)
    return Token(INT, value, i, j)


def _string(text: str, i: int) -> Token:
    """The quoted string starting at ``text[i]`` (an ``ERROR`` token when it is malformed)."""
    tok, err, _ = _scan_string(text, i)
    if err is not None:
        return Token(ERROR, err, err.start, err.end)
    assert tok is not None
    return tok


def _operator(text: str, i: int) -> Token:
    """The comparison or logical operator at ``text[i]`` (an ``ERROR`` token for a character with no place)."""
    two = text[i : i + 2]
    if two in _DOUBLE:
        return Token(two, two, i, i + 2)
    c = text[i]
    if c in "<>!":
        return Token(c, c, i, i + 1)
    err = _bad_char(text, i)
    return Token(ERROR, err, err.start, err.end)


def tokenize(text: str) -> list[Token]:
    """Tokenize ``text``; raise :class:`ExprError` on the first character that is not allowed.

    The returned list ends with an ``EOF`` token.
    """
    tokens = scan(text)
    last = tokens[-1]
    if last.kind == ERROR:
        assert isinstance(last.value, ExprError)
        raise last.value
    return tokens
