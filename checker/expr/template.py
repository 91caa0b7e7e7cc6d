"""Splitting a YAML string value into literal text and ``${{ … }}`` islands (spec 04 §Escaping).

Rules implemented here:

* An island opens at ``${{`` and closes at the first ``}}`` that is not inside a quoted string
  of the expression. (If a quote inside the island is never closed, the island closes at the
  first ``}}`` anyway, and the parser then reports the unterminated string.)
* Escaping looks at the contiguous run of backslashes right before ``${{``. An odd run escapes
  the opener: the text stays literal and one backslash is dropped. An even run (zero included)
  leaves the island live. Either way every remaining pair in that run renders as a single
  backslash. Backslashes anywhere else are ordinary characters.
* A live ``${{`` without a closing ``}}`` is ``NIKA-VAR-008``.

Literal parts of a :class:`Template` are already rendered (escapes applied); island offsets are
relative to the whole string value.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

from checker.core.records import field, record
from checker.expr.lexer import ExprError
from checker.expr.nodes import Expr
from checker.expr.parser import parse_expression

__all__ = [
    "UNCLOSED_CODE",
    "Island",
    "Template",
    "has_island",
    "legacy_mustache_spans",
    "parse_template",
]

UNCLOSED_CODE: Final = "NIKA-VAR-008"
_OPEN: Final = "${{"


@record
class Island:
    """One live ``${{ … }}`` occurrence.

    ``start``/``end`` cover ``${{`` through ``}}``; ``expr_start``/``expr_end`` cover the inner
    text. Exactly one of ``expr`` and ``error`` is set; the error's offsets are relative to the
    whole value (node offsets inside ``expr`` stay relative to ``expr_start``).
    """

    start: int
    end: int
    expr_start: int
    expr_end: int
    text: str
    expr: Expr | None
    error: ExprError | None


@record
class Template:
    """A string value split into rendered literal text and islands, plus every static error."""

    parts: tuple[str | Island, ...]
    errors: tuple[ExprError, ...]
    islands: tuple[Island, ...] = field(init=False, repr=False)  # the parts that are islands

    def __post_init__(self) -> None:
        object.__setattr__(self, "islands", tuple(p for p in self.parts if isinstance(p, Island)))

    @property
    def is_single_island(self) -> bool:
        """True when the value is exactly one island, ignoring surrounding whitespace; such a
        value keeps the island's native type at run time instead of becoming a string."""
        found = False
        for part in self.parts:
            if isinstance(part, Island):
                if found:
                    return False
                found = True
            elif part.strip():
                return False
        return found


def _backslash_run(value: str, i: int, floor: int) -> int:
    """Length of the run of backslashes ending just before ``value[i]``, not reaching below
    ``floor``."""
    j = i
    while j > floor and value[j - 1] == "\\":
        j -= 1
    return i - j


def _find_close(value: str, j: int) -> int:
    """Offset of the ``}}`` that closes an island whose inner text starts at ``j``, or -1."""
    first = value.find("}}", j)
    if first == -1:
        return -1
    if "'" not in value[j:first] and '"' not in value[j:first]:
        return first
    n = len(value)
    k = j
    while k < n:
        c = value[k]
        if c == "}" and k + 1 < n and value[k + 1] == "}":
            return k
        if c == "'" or c == '"':
            k += 1
            while k < n and value[k] != c:
                k += 2 if value[k] == "\\" else 1
            if k >= n:
                return first  # the quote never closes: let the parser report it
        k += 1
    return first


def has_island(value: str) -> bool:
    """Whether ``value`` contains a live (unescaped) ``${{`` — closed or not.

    Costs one substring search when there is no ``${{`` at all.
    """
    i = value.find(_OPEN)
    while i != -1:
        if _backslash_run(value, i, 0) % 2 == 0:
            return True
        i = value.find(_OPEN, i + 3)
    return False


def _island(value: str, start: int, close: int) -> Island:
    expr_start = start + 3
    text = value[expr_start:close]
    end = close + 2
    try:
        expr = parse_expression(text)
    except ExprError as exc:
        if text.strip():
            err = exc.shifted(expr_start)
        else:
            err = ExprError(
                "this `${{ }}` is empty: put a reference such as `inputs.name` inside, or remove it",
                start,
                end,
                exc.code,
            )
        return Island(start, end, expr_start, close, text, None, err)
    return Island(start, end, expr_start, close, text, expr, None)


@lru_cache(maxsize=2048)
def _parse(value: str) -> Template:
    parts: list[str | Island] = []
    errors: list[ExprError] = []
    buf: list[str] = []
    pos = 0
    i = value.find(_OPEN)
    while i != -1:
        run = _backslash_run(value, i, pos)
        buf.append(value[pos : i - run])
        buf.append("\\" * (run // 2))
        if run % 2 == 1:
            buf.append(_OPEN)
            pos = i + 3
            i = value.find(_OPEN, pos)
            continue
        close = _find_close(value, i + 3)
        if close == -1:
            errors.append(
                ExprError(
                    "this `${{` is never closed: add `}}` after the expression, or write `\\${{` for a literal `${{`",
                    i,
                    i + 3,
                    UNCLOSED_CODE,
                )
            )
            buf.append(value[i:])
            pos = len(value)
            break
        literal = "".join(buf)
        if literal:
            parts.append(literal)
        buf.clear()
        island = _island(value, i, close)
        if island.error is not None:
            errors.append(island.error)
        parts.append(island)
        pos = island.end
        i = value.find(_OPEN, pos)
    buf.append(value[pos:])
    literal = "".join(buf)
    if literal:
        parts.append(literal)
    return Template(tuple(parts), tuple(errors))


def parse_template(value: str) -> Template:
    """Split ``value`` into literal text and islands; never raises.

    Static problems (unclosed ``${{``, expressions outside ``cel-subset/0.1``) are collected in
    :attr:`Template.errors` with offsets relative to ``value``.
    """
    if _OPEN not in value:
        return Template((value,) if value else (), ())
    return _parse(value)


def _island_bounds(value: str) -> list[tuple[int, int]]:
    """Spans of live islands; an unclosed opener extends to the end of the value."""
    bounds: list[tuple[int, int]] = []
    i = value.find(_OPEN)
    pos = 0
    while i != -1:
        if _backslash_run(value, i, pos) % 2 == 1:
            pos = i + 3
            i = value.find(_OPEN, pos)
            continue
        close = _find_close(value, i + 3)
        if close == -1:
            bounds.append((i, len(value)))
            break
        bounds.append((i, close + 2))
        pos = close + 2
        i = value.find(_OPEN, pos)
    return bounds


def legacy_mustache_spans(value: str) -> list[tuple[int, int]]:
    """Spans ``[start, end)`` of bare ``{{ … }}`` (legacy mustache syntax, not preceded by ``$``)
    found in the literal text of ``value``; the caller decides how to report them."""
    if "{{" not in value:
        return []
    gaps: list[tuple[int, int]] = []
    pos = 0
    for start, end in _island_bounds(value):
        gaps.append((pos, start))
        pos = end
    gaps.append((pos, len(value)))
    spans: list[tuple[int, int]] = []
    for lo, hi in gaps:
        k = value.find("{{", lo, hi)
        while k != -1:
            if k > 0 and value[k - 1] == "$":
                k = value.find("{{", k + 2, hi)
                continue
            close = value.find("}}", k + 2, hi)
            if close == -1:
                break
            # the innermost opener before this close is the one it pairs with
            k = value.rfind("{{", k, close)
            if k == 0 or value[k - 1] != "$":
                spans.append((k, close + 2))
            k = value.find("{{", close + 2, hi)
    return spans
