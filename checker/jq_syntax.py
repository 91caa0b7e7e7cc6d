"""A structural syntax check for jq programs (the second expression layer, 04).

This is not a jq implementation: it tokenizes a program and verifies the structure a compiler
would reject outright — balanced brackets, terminated strings (with ``\\(…)`` interpolation),
``if … end`` nesting, no empty pipe or comma operands, no trailing operator — plus the
flag-injection shape (a program that starts like a command-line option, e.g. ``-n``). It runs in
microseconds and needs no native library; the runtime's real jq engine remains the last word.
"""

from __future__ import annotations

import re

from checker.records import record

_BINARY = {
    "|",
    ",",
    "//",
    "==",
    "!=",
    "<=",
    ">=",
    "<",
    ">",
    "+",
    "*",
    "/",
    "%",
    "=",
    "|=",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "//=",
    "and",
    "or",
}
_OPEN = {"(": ")", "[": "]", "{": "}"}
# A program that reads like jq's command-line options: a long option, or a cluster of its
# one-letter options (`-n`, `-rc`). `-first` or `-length` is jq (a negation), so it is not one.
_FLAG_RE = re.compile(r"--[A-Za-z][A-Za-z-]*(?=\s|=|\Z)|-[nrjascCMSeLhV]{1,4}(?=\s|\Z)")
_NOT_FLAGS = {"-nan"}
_BLOCK_OPENERS = {"if"}
_KEYWORDS = frozenset(
    {"def", "if", "then", "elif", "else", "end", "as", "reduce", "foreach", "try", "catch", "label", "break"}
    | {"import", "include", "and", "or", "__loc__"}
)
_MULTI_OPS = ("//=", "|=", "+=", "-=", "*=", "/=", "%=", "//", "==", "!=", "<=", ">=", "?//", "..")


@record
class JqProblem:
    message: str
    start: int
    end: int


def _tokens(text: str) -> list[tuple[str, int, int]] | JqProblem:
    out: list[tuple[str, int, int]] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c == '"':
            end = _string_end(text, i)
            if isinstance(end, JqProblem):
                return end
            out.append(("STR", i, end))
            i = end
            continue
        if c.isalpha() or c == "_":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_" or text.startswith("::", j)):
                j += 2 if text[j] == ":" else 1
            out.append((text[i:j], i, j))
            i = j
            continue
        if c in "$@":
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if j == i + 1 and c == "$" and not text.startswith("$__loc__", i):
                return JqProblem("`$` must be followed by a variable name", i, i + 1)
            out.append(("VAR", i, j))
            i = j
            continue
        if c.isdigit():
            j = i + 1
            while j < n and (text[j].isdigit() or text[j] in ".eE"):
                j += 1
            out.append(("NUM", i, j))
            i = j
            continue
        for op in _MULTI_OPS:
            if text.startswith(op, i):
                out.append((op, i, i + len(op)))
                i += len(op)
                break
        else:
            if c in "|,.+-*/%=<>()[]{}?:;":
                out.append((c, i, i + 1))
                i += 1
            else:
                return JqProblem(f"unexpected character `{c}`", i, i + 1)
    return out


def _string_end(text: str, i: int) -> int | JqProblem:
    """Offset just past the string starting at ``text[i] == '"'``; handles ``\\(…)`` nesting."""
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            if j + 1 < n and text[j + 1] == "(":
                depth = 1
                k = j + 2
                while k < n and depth:
                    if text[k] == '"':
                        inner = _string_end(text, k)
                        if isinstance(inner, JqProblem):
                            return inner
                        k = inner
                        continue
                    if text[k] == "(":
                        depth += 1
                    elif text[k] == ")":
                        depth -= 1
                    k += 1
                if depth:
                    return JqProblem("unterminated `\\(` interpolation in a string", j, j + 2)
                j = k
                continue
            j += 2
            continue
        if c == '"':
            return j + 1
        j += 1
    return JqProblem("unterminated string", i, n)


def jq_problem(text: str) -> JqProblem | None:
    """The first structural problem of a jq program, or ``None`` when it looks compilable."""
    stripped = text.strip()
    if not stripped:
        return JqProblem("the jq program is empty", 0, len(text))
    lead = len(text) - len(text.lstrip())
    flag = _FLAG_RE.match(stripped)
    if flag is not None and flag.group(0) not in _NOT_FLAGS:
        word = flag.group(0)
        return JqProblem(f"`{word}` looks like a command-line flag, not a jq program", lead, lead + len(word))
    toks = _tokens(text)
    if isinstance(toks, JqProblem):
        return toks
    stack: list[tuple[str, int, int]] = []
    prev: tuple[str, int, int] | None = None
    for tok in toks:
        kind, s, e = tok
        if kind in _OPEN:
            stack.append(tok)
        elif kind in (")", "]", "}"):
            if not stack or _OPEN.get(stack[-1][0]) != kind:
                return JqProblem(f"unmatched `{kind}`", s, e)
            if prev is not None and prev[0] in _BINARY and prev[0] not in ("*",):
                return JqProblem(f"`{prev[0]}` has nothing on its right", prev[1], prev[2])
            stack.pop()
        elif kind in _BLOCK_OPENERS:
            stack.append(tok)
        elif kind == "end":
            if not stack or stack[-1][0] not in _BLOCK_OPENERS:
                return JqProblem("`end` without a matching `if`", s, e)
            stack.pop()
        if prev is not None and _ends_value(prev, text) and _starts_value(tok, text) and not _joined(prev, tok, text):
            return JqProblem("two values follow each other without an operator between them", s, e)
        if kind in ("|", ",") and (prev is None or prev[0] in _BINARY or prev[0] in _OPEN or prev[0] in (";", ":")):
            return JqProblem(f"`{kind}` has nothing on its left", s, e)
        prev = tok
    if stack:
        kind, s, e = stack[-1]
        closer = _OPEN.get(kind, "end")
        return JqProblem(f"`{kind}` is never closed (missing `{closer}`)", s, e)
    if prev is not None and prev[0] in _BINARY and prev[0] != "*":
        return JqProblem(f"`{prev[0]}` has nothing on its right", prev[1], prev[2])
    return None


def _is_word(tok: tuple[str, int, int], text: str) -> bool:
    kind = tok[0]
    return kind not in ("STR", "NUM", "VAR") and (kind[0].isalpha() or kind[0] == "_") and kind not in _KEYWORDS


def _ends_value(tok: tuple[str, int, int], text: str) -> bool:
    kind = tok[0]
    return kind in ("NUM", "STR", "VAR", ")", "]", "}") or _is_word(tok, text)


def _starts_value(tok: tuple[str, int, int], text: str) -> bool:
    kind = tok[0]
    return kind in ("NUM", "STR") or (kind == "VAR" and text[tok[1]] == "$") or _is_word(tok, text)


def _joined(prev: tuple[str, int, int], tok: tuple[str, int, int], text: str) -> bool:
    """Pairs jq reads as one term: a format and its string (``@base64 "…"``)."""
    return prev[0] == "VAR" and text[prev[1]] == "@" and tok[0] == "STR"
