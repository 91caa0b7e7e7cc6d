"""Does a jq program compile? A recogniser for the jq the runtime runs (libjq 1.8), in pure Python.

04 makes a jq compile error a static finding (NIKA-VAR-005), so the checker must refuse exactly
the programs libjq refuses, and never one it accepts. This module answers that question without
the native library (the checker's fast path imports nothing heavy):

* **Lexing** follows jq's scanner: longest match, ``#`` comments (a backslash continues one onto
  the next line), ``..``/``?//``/``//=`` and friends, ``$__loc__``, ``@format``, numbers such as
  ``.5`` and ``1.``, ``a::b`` names, strings with ``\\(…)`` interpolation whose escapes are held to
  JSON's rules (including surrogate pairs). jq reads the program as a C string, so a NUL ends it.
* **Parsing** follows jq's grammar and its precedence table: ``def``, ``as`` bindings and
  ``label`` reach to the end of the enclosing pipeline; ``try``/``catch`` and unary ``-`` take a
  postfix term; ``==``/``<``… and the assignment operators do not chain; destructuring patterns
  and ``?//`` alternatives; keywords as object keys; trailing comma in an object only.
* **Compile checks** jq makes after parsing: every function call must name a builtin or a ``def``
  in scope *with that arity*, every ``$name`` a binding in scope (``$ENV`` is always defined),
  every ``break $l`` an enclosing ``label $l``. Like jq, a ``def`` nothing calls is discarded
  unchecked. A constant object key must be a string (jq folds constants first, so ``(1 + 1)`` is
  the number 2). ``module`` metadata must be a constant object; ``import``/``include`` never
  resolve (the runtime sets no module search path); a program of definitions only has no body.

Error messages are ours, positioned on the fault. Two limits, both in the accepting direction:
a program nested deeper than about 80 brackets is judged only on what jq's scanner alone proves
(a bad escape, a stray character, an unclosed bracket or string), and jq's bytecode size limits
(64 KiB of code, 4095 closures in one function) are not modelled.
"""

from __future__ import annotations

import math
import re
from typing import Any

from checker.core.records import record
from checker.jq.builtins import BUILTINS


@record
class JqProblem:
    message: str
    start: int
    end: int


# A program that reads like jq's command-line options: a long option, or a cluster of its
# one-letter options (`-n`, `-rc`). Only used to word the refusal of a program jq refuses anyway.
_FLAG_RE = re.compile(r"--[A-Za-z][A-Za-z-]*(?=\s|=|\Z)|-[nrjascCMSeLhV]{1,4}(?=\s|\Z)")
_NOT_FLAGS = {"-nan"}

_MAX_DEPTH = 160  # parser recursion levels (two per bracket): ~80 nested brackets

# ── lexer ────────────────────────────────────────────────────────────────────────────────────

_KEYWORDS = frozenset(
    {"as", "def", "module", "import", "include", "if", "then", "else", "elif", "reduce", "foreach", "end"}
    | {"and", "or", "try", "catch", "label", "break"}
)
_IDENT_RE = re.compile(r"(?:[A-Za-z_][A-Za-z_0-9]*::)*[A-Za-z_][A-Za-z_0-9]*")
_FIELD_RE = re.compile(r"\.[A-Za-z_][A-Za-z_0-9]*")
_BINDING_RE = re.compile(r"\$(?:[A-Za-z_][A-Za-z_0-9]*::)*[A-Za-z_][A-Za-z_0-9]*")
_NUMBER_RE = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_FORMAT_RE = re.compile(r"@[A-Za-z0-9_]+")
_ESCAPES_RE = re.compile(r"(?:\\[^u(]|\\u[A-Za-z0-9]{0,4})+")
_TEXT_RE = re.compile(r'[^\\"]+')
_WS = " \t\r\n"
_OPS = {
    "?": ("?//", "?"),
    "/": ("//=", "//", "/=", "/"),
    "|": ("|=", "|"),
    "+": ("+=", "+"),
    "-": ("-=", "-"),
    "*": ("*=", "*"),
    "%": ("%=", "%"),
    "=": ("==", "="),
    "!": ("!=",),
    "<": ("<=", "<"),
    ">": (">=", ">"),
    ";": (";",),
    ",": (",",),
    ":": (":",),
}
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_HEX = frozenset("0123456789abcdefABCDEF")
_SIMPLE_ESCAPES = frozenset('"\\/bfnrt')

Token = tuple[str, int, int]  # kind, start, end; kind is the token's text for punctuation/keywords


def _comment_end(text: str, i: int) -> int:
    """Offset of the line break ending the comment at ``text[i] == '#'`` (a backslash escapes one)."""
    n = len(text)
    j = i + 1
    while j < n:
        c = text[j]
        if c == "\\" and j + 1 < n:
            if text[j + 1] in "\\\n":
                j += 2
                continue
            if text.startswith("\r\n", j + 1):
                j += 3
                continue
        if c == "\n" or (c == "\r" and text.startswith("\n", j + 1)):
            return j
        j += 1
    return n


def _escape_problem(run: str, at: int) -> JqProblem | None:
    """jq hands a run of escapes to its JSON parser; the first escape JSON refuses, if any."""
    i = 0
    n = len(run)
    while i < n:
        c = run[i + 1] if i + 1 < n else ""
        if c in _SIMPLE_ESCAPES and c:
            i += 2
            continue
        if c != "u":
            shown = run[i : i + 2]
            return JqProblem(
                f"`{shown}` is not a string escape jq knows "
                '(use \\" \\\\ \\/ \\b \\f \\n \\r \\t, \\uXXXX or \\(…) for interpolation)',
                at + i,
                at + i + 2,
            )
        digits = run[i + 2 : i + 6]
        if len(digits) < 4 or not set(digits) <= _HEX:
            return JqProblem("`\\u` must be followed by exactly four hex digits", at + i, at + i + 2 + len(digits))
        code = int(digits, 16)
        if 0xD800 <= code <= 0xDBFF:
            low = run[i + 8 : i + 12] if run.startswith("\\u", i + 6) else ""
            if len(low) < 4 or not set(low) <= _HEX or not 0xDC00 <= int(low, 16) <= 0xDFFF:
                return JqProblem(
                    f"`\\u{digits}` opens a UTF-16 surrogate pair, so it must be followed by a low "
                    "surrogate `\\uDC00`…`\\uDFFF`",
                    at + i,
                    at + i + 6,
                )
            i += 12
            continue
        i += 6
    return None


def _lex(text: str) -> tuple[list[Token], list[JqProblem], list[Token]]:
    """jq's tokens, the problems its scanner reports, and the openers left unclosed at the end."""
    toks: list[Token] = []
    problems: list[JqProblem] = []
    stack: list[str] = []  # "(", "[", "{", "I" (interpolation), "S" (inside a string)
    openers: list[Token] = []  # the token that pushed each entry of `stack`
    i = 0
    n = len(text)
    while i < n:
        if stack and stack[-1] == "S":
            c = text[i]
            if c == '"':
                stack.pop()
                openers.pop()
                toks.append(("STR_END", i, i + 1))
                i += 1
            elif text.startswith("\\(", i):
                stack.append("I")
                toks.append(("INTERP_START", i, i + 2))
                openers.append(toks[-1])
                i += 2
            elif c == "\\":
                m = _ESCAPES_RE.match(text, i)
                if m is None:  # a backslash ending the program
                    toks.append(("INVALID", i, i + 1))
                    i += 1
                    continue
                bad = _escape_problem(m.group(0), i)
                if bad is not None:
                    problems.append(bad)
                toks.append(("STR_TEXT", i, m.end()))
                i = m.end()
            else:
                m = _TEXT_RE.match(text, i)
                assert m is not None
                toks.append(("STR_TEXT", i, m.end()))
                i = m.end()
            continue
        c = text[i]
        if c in _WS:
            i += 1
            continue
        if c == "#":
            i = _comment_end(text, i)
            continue
        if c == '"':
            stack.append("S")
            toks.append(("STR_START", i, i + 1))
            openers.append(toks[-1])
            i += 1
            continue
        if c == ".":
            if text.startswith("..", i):
                toks.append(("..", i, i + 2))
                i += 2
                continue
            m = _FIELD_RE.match(text, i) or _NUMBER_RE.match(text, i)
            if m is not None:
                toks.append(("FIELD" if m.group(0)[1] not in "0123456789" else "LITERAL", i, m.end()))
                i = m.end()
                continue
            toks.append((".", i, i + 1))
            i += 1
            continue
        if c.isascii() and (c.isalpha() or c == "_"):
            m = _IDENT_RE.match(text, i)
            assert m is not None
            word = m.group(0)
            toks.append((word if word in _KEYWORDS else "IDENT", i, m.end()))
            i = m.end()
            continue
        if "0" <= c <= "9":
            m = _NUMBER_RE.match(text, i)
            assert m is not None
            toks.append(("LITERAL", i, m.end()))
            i = m.end()
            continue
        if c == "$":
            m = _BINDING_RE.match(text, i)
            if m is None:
                toks.append(("$", i, i + 1))
                i += 1
            else:
                toks.append(("LOC" if m.group(0) == "$__loc__" else "BINDING", i, m.end()))
                i = m.end()
            continue
        if c == "@":
            m = _FORMAT_RE.match(text, i)
            if m is None:
                toks.append(("INVALID", i, i + 1))
                i += 1
            else:
                toks.append(("FORMAT", i, m.end()))
                i = m.end()
            continue
        if c in _OPENERS:
            stack.append(c)
            toks.append((c, i, i + 1))
            openers.append(toks[-1])
            i += 1
            continue
        if c in ")]}":
            top = stack[-1] if stack else ""
            if top == "I" and c == ")":
                stack.pop()
                openers.pop()
                toks.append(("INTERP_END", i, i + 1))
            elif top in _OPENERS and _OPENERS[top] == c:
                stack.pop()
                openers.pop()
                toks.append((c, i, i + 1))
            else:
                toks.append(("INVALID", i, i + 1))
            i += 1
            continue
        ops = _OPS.get(c)
        if ops is not None:
            for op in ops:
                if text.startswith(op, i):
                    toks.append((op, i, i + len(op)))
                    i += len(op)
                    break
            else:
                toks.append(("INVALID", i, i + 1))
                i += 1
            continue
        toks.append(("INVALID", i, i + 1))
        i += 1
    toks.append(("EOF", n, n))
    return toks, problems, openers


# ── syntax tree ──────────────────────────────────────────────────────────────────────────────

# Constant values, as far as jq's constant folding needs them: only numbers carry their value
# (division by zero, `%` truncation and string repetition depend on it); a string carries its
# length in bytes (repetition has a size limit); other kinds carry nothing.
Const = tuple[str, Any]  # ("number", float) | ("string", int) | ("array"|"object"|"boolean"|"null", None)
_A_KIND = {"number": "a number", "boolean": "a boolean", "null": "null", "array": "an array", "object": "an object"}
_NOOP = "noop"  # the block of `.`: no instruction at all
_OTHER = "other"  # anything jq does not treat as a single constant

_FOLDED = {"+", "-", "*", "/", "%", "==", "!=", "<", ">", "<=", ">="}
_BINOP_CALL = {
    "+": "_plus",
    "-": "_minus",
    "*": "_multiply",
    "/": "_divide",
    "%": "_mod",
    "==": "_equal",
    "!=": "_notequal",
    "<": "_less",
    ">": "_greater",
    "<=": "_lesseq",
    ">=": "_greatereq",
}
_UPDATE_OPS = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%"}


class _Node:
    """One construct of the program. ``kind`` selects the meaning of the other fields."""

    __slots__ = ("_const", "arity", "end", "extra", "kids", "kind", "name", "start")

    def __init__(
        self,
        kind: str,
        start: int,
        end: int,
        kids: list[_Node] | None = None,
        name: str = "",
        arity: int = 0,
        extra: Any = None,
    ) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.kids = kids or []
        self.name = name
        self.arity = arity
        self.extra = extra
        self._const: Const | str | None = None
        # computed bottom-up as the tree is built, so a long operator chain needs no deep recursion
        self._const = _compute_const(self)


class _FuncDef:
    """``def name(params): body;``; a parameter is ``(name, True)`` when written ``$name``."""

    __slots__ = ("body", "end", "name", "params", "start")

    def __init__(self, name: str, params: list[tuple[str, bool]], body: _Node, start: int, end: int) -> None:
        self.name = name
        self.params = params
        self.body = body
        self.start = start
        self.end = end


class _Pattern:
    """A destructuring pattern: ``$v`` (``var``), ``[p, …]`` (``array``) or ``{key: p, …}``
    (``object``, whose entries are: the ``$name`` the entry binds or "", the key expression jq
    evaluates or ``None``, the sub-pattern or ``None``)."""

    __slots__ = ("end", "entries", "items", "kind", "name", "start")

    def __init__(
        self,
        kind: str,
        start: int,
        end: int,
        name: str = "",
        items: list[_Pattern] | None = None,
        entries: list[tuple[str, _Node | None, _Pattern | None]] | None = None,
    ) -> None:
        self.kind = kind
        self.start = start
        self.end = end
        self.name = name
        self.items = items
        self.entries = entries

    def names(self, out: list[tuple[str, int, int]]) -> None:
        if self.kind == "var":
            out.append((self.name, self.start, self.end))
        for p in self.items or ():
            p.names(out)
        for var, _key, sub in self.entries or ():
            if var:
                out.append((var, self.start, self.end))
            if sub is not None:
                sub.names(out)

    def keys(self, out: list[_Node]) -> None:
        for p in self.items or ():
            p.keys(out)
        for _var, key, sub in self.entries or ():
            if key is not None:
                out.append(key)
            if sub is not None:
                sub.keys(out)


# ── constant folding (jq folds operators on two constants while parsing) ─────────────────────

_INTMAX = 2**63 - 1
_INT_MAX = 2**31 - 1


def _dtoi(x: float) -> int:
    if x < -(2**63):
        return -(2**63)
    if -x <= -(2**63):
        return _INTMAX
    return int(x)


def _fold(op: str, a: Const, b: Const) -> Const | None:
    """jq's ``op`` on two constants, ``None`` where jq raises an error (it then emits no constant)."""
    if op in ("==", "!=", "<", ">", "<=", ">="):
        return ("boolean", None)
    ka, kb = a[0], b[0]
    if op == "+":
        if ka == "null":
            return b
        if kb == "null":
            return a
        if ka == kb == "number":
            return ("number", a[1] + b[1])
        if ka == kb == "string":
            return ("string", a[1] + b[1])
        return (ka, None) if ka == kb and ka in ("array", "object") else None
    if op == "-":
        if ka == kb == "number":
            return ("number", a[1] - b[1])
        return ("array", None) if ka == kb == "array" else None
    if op == "*":
        if ka == kb == "number":
            return ("number", a[1] * b[1])
        if {ka, kb} == {"string", "number"}:
            size, times = (a[1], b[1]) if ka == "string" else (b[1], a[1])
            count = -1 if times < 0 or math.isnan(times) else _INT_MAX if times > _INT_MAX else int(times)
            if count < 0:
                return ("null", None)
            return ("string", size * count) if size * count < _INT_MAX - 8 else None
        return ("object", None) if ka == kb == "object" else None
    if op == "/":
        if ka == kb == "number":
            return None if b[1] == 0 else ("number", a[1] / b[1])
        return ("array", None) if ka == kb == "string" else None
    if ka == kb == "number":  # %
        if math.isnan(a[1]) or math.isnan(b[1]):
            return ("number", math.nan)
        divisor = _dtoi(b[1])
        if divisor == 0:
            return None
        dividend = _dtoi(a[1])
        rem = 0 if divisor == -1 else abs(dividend) % abs(divisor)
        return ("number", float(-rem if dividend < 0 else rem))
    return None


def _const(node: _Node) -> Const | str:
    """The constant ``node`` compiles to, ``_NOOP`` for an empty block, else ``_OTHER``."""
    if node._const is None:
        node._const = _compute_const(node)
    return node._const


def _is_value(c: Const | str) -> bool:
    return isinstance(c, tuple)


def _kind(c: Const | str) -> str | None:
    """The jq kind of a constant (``"number"``, ``"string"``…), ``None`` for a non-constant."""
    return c[0] if isinstance(c, tuple) else None


def _compute_const(node: _Node) -> Const | str:
    kind = node.kind
    if kind == "const":
        return node.extra
    if kind == "dot":
        return _NOOP
    if kind == "pipe":
        rest = [c for c in (_const(k) for k in node.kids) if c != _NOOP]
        return _NOOP if not rest else rest[0] if len(rest) == 1 else _OTHER
    if kind == "defs":
        # a constant body calls nothing, so the definitions are unreferenced and jq drops them
        body = _const(node.kids[0])
        return body if body == _NOOP or _is_value(body) else _OTHER
    if kind == "binop" and node.name in _FOLDED:
        a, b = _const(node.kids[0]), _const(node.kids[1])
        if isinstance(a, tuple) and isinstance(b, tuple):
            folded = _fold(node.name, a, b)
            return _OTHER if folded is None else folded
        return _OTHER
    if kind == "array":
        return ("array", None) if _const_chain(node.kids[0]) else _OTHER
    if kind == "object":
        for key, value in node.extra:
            if key is None or value is None or not _is_value(_const(value)):
                return _OTHER
            kc = _const(key)
            if _kind(kc) != "string":
                return _OTHER
        return ("object", None)
    return _OTHER


def _strip(node: _Node) -> _Node:
    """The node whose block ``node``'s block is, looking through `. | x` and unused ``def``s."""
    while True:
        if node.kind == "pipe":
            rest = [k for k in node.kids if _const(k) != _NOOP]
            if len(rest) != 1:
                return node
            node = rest[0]
        elif node.kind == "defs" and _const_chain(node.kids[0]):
            node = node.kids[0]
        else:
            return node


def _const_chain(node: _Node) -> bool:
    """Whether ``[node]`` is a constant array: jq folds ``[c1, c2, …]`` when the commas nest to the
    left and every element is a constant (``[(1, 2), 3]`` folds, ``[1, (2, 3)]`` does not)."""
    while True:
        if _is_value(_const(node)):
            return True
        node = _strip(node)
        if node.kind != "comma" or not _is_value(_const(node.kids[1])):
            return False
        node = node.kids[0]


# ── parser ───────────────────────────────────────────────────────────────────────────────────


class _Syntax(Exception):
    def __init__(self, problem: JqProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


class _TooDeep(Exception):
    pass


_PREC = {
    "//": 1,
    "=": 2,
    "|=": 2,
    "+=": 2,
    "-=": 2,
    "*=": 2,
    "/=": 2,
    "%=": 2,
    "//=": 2,
    "or": 3,
    "and": 4,
    "==": 5,
    "!=": 5,
    "<": 5,
    ">": 5,
    "<=": 5,
    ">=": 5,
    "+": 6,
    "-": 6,
    "*": 7,
    "/": 7,
    "%": 7,
}
_NONASSOC = {2, 5}
_RIGHT = {1}
_TERM_START = frozenset(
    {".", "..", "FIELD", "LITERAL", "STR_START", "FORMAT", "-", "(", "[", "{", "$", "BINDING", "LOC", "IDENT"}
    | {"reduce", "foreach", "if", "try", "break"}
)
_CLOSE_NAME = {"(": ")", "[": "]", "{": "}", "INTERP_START": ")", "if": "end", "STR_START": '"'}
_DANGLING = frozenset({"|", ",", ";", ":", "as", "?//", "-", "and", "or"})
_CHAR_HINTS = {
    "!": " (`!=` compares; negation is `not`)",
    "&": " (jq's conjunction is `and`)",
    "'": " (jq strings use double quotes)",
    "@": " (a format is `@name`, e.g. `@base64`)",
}


class _Parser:
    def __init__(self, text: str, toks: list[Token], unclosed: list[Token]) -> None:
        self.text = text
        self.toks = toks
        self.unclosed = unclosed  # openers the lexer saw no closer for
        self.pos = 0
        self.depth = 0
        self.problems: list[JqProblem] = []  # found while parsing (jq reports them, then stops)

    # ── token helpers ──

    def peek(self, ahead: int = 0) -> str:
        return self.toks[min(self.pos + ahead, len(self.toks) - 1)][0]

    def tok(self) -> Token:
        return self.toks[self.pos]

    def advance(self) -> Token:
        t = self.toks[self.pos]
        if t[0] != "EOF":
            self.pos += 1
        return t

    def describe(self, t: Token) -> str:
        kind, s, e = t
        if kind == "EOF":
            return "the end of the program"
        if kind == "STR_START":
            return "a string"
        if kind == "INVALID":
            return f"the character `{self.text[s:e]}`"
        if kind == "LITERAL":
            return f"the number `{self.text[s:e]}`"
        if kind in ("IDENT", "BINDING", "FIELD", "FORMAT", "LOC"):
            return f"`{self.text[s:e]}`"
        if kind == "INTERP_END":
            return "`)`"
        return f"`{kind}`"

    def fail(self, t: Token, message: str) -> _Syntax:
        return _Syntax(JqProblem(message, t[1], max(t[2], t[1] + 1)))

    def unexpected(self, wanted: str = "") -> _Syntax:
        """The syntax error at the current token, worded for the common cases."""
        t = self.tok()
        kind, s, e = t
        prev = self.toks[self.pos - 1] if self.pos else None
        dangling = prev is not None and (prev[0] in _PREC or prev[0] in _DANGLING) and kind not in _TERM_START
        if kind == "EOF" and prev is not None:
            if dangling:
                return self.fail(prev, f"`{prev[0]}` has nothing on its right")
            if self.unclosed:
                opener = self.unclosed[-1]
                what = "string interpolation `\\(`" if opener[0] == "INTERP_START" else f"`{opener[0]}`"
                if opener[0] == "STR_START":
                    return self.fail(opener, 'unterminated string (missing the closing `"`)')
                return self.fail(opener, f"{what} is never closed (missing `{_CLOSE_NAME[opener[0]]}`)")
            need = f" (expected {wanted})" if wanted else ""
            return self.fail(prev, f"the program ends too early after {self.describe(prev)}{need}")
        if kind == "INVALID":
            ch = self.text[s:e]
            if ch in ")]}":
                return self.fail(t, f"`{ch}` closes nothing here")
            return self.fail(t, f"unexpected character `{ch}`{_CHAR_HINTS.get(ch, '')}")
        leading = prev is None or prev[0] in _PREC or prev[0] in _OPENERS or prev[0] in _DANGLING
        if (kind in ("|", ",") or kind in _PREC) and leading:
            return self.fail(t, f"`{kind}` has nothing on its left")
        if dangling and prev is not None and prev[0] != "-":
            return self.fail(prev, f"`{prev[0]}` has nothing on its right")
        if kind == "catch":
            return self.fail(
                t, "`catch` must directly follow the `try` body; put a compound body in parentheses: `try (…) catch …`"
            )
        if prev is not None and prev[0] == "." and (kind == "IDENT" or kind in _KEYWORDS):
            word = self.text[s:e]
            return self.fail(t, f'a field name must touch its `.`: write `.{word}` (or `.["{word}"]`)')
        if prev is not None and self._ends_value(prev) and kind in _TERM_START:
            return self.fail(t, "two values follow each other without an operator between them")
        need = f", expected {wanted}" if wanted else ""
        return self.fail(t, f"unexpected {self.describe(t)}{need}")

    @staticmethod
    def _ends_value(t: Token) -> bool:
        return t[0] in ("IDENT", "FIELD", "LITERAL", "BINDING", "LOC", "STR_END", ")", "]", "}", "end", "..", "FORMAT")

    def expect(self, kind: str, wanted: str) -> Token:
        if self.peek() != kind:
            raise self.unexpected(wanted)
        return self.advance()

    def close(self, kind: str, opener: Token) -> Token:
        """Consume the closer of ``opener``; a missing one is reported at the opener."""
        if self.peek() == kind:
            return self.advance()
        closer = _CLOSE_NAME.get(opener[0], kind)
        if self.peek() == "EOF":
            what = "string interpolation `\\(`" if opener[0] == "INTERP_START" else f"`{opener[0]}`"
            raise self.fail(opener, f"{what} is never closed (missing `{closer}`)")
        raise self.unexpected(f"`{closer}` to close the `{self.text[opener[1] : opener[2]]}` at offset {opener[1]}")

    # ── program ──

    def program(self) -> _Node | JqProblem:
        if self.peek() == "module":
            self.advance()
            meta = self.query()
            kind = _kind(_const(meta))
            if kind is None:
                self.problems.append(JqProblem("`module` metadata must be a constant", meta.start, meta.end))
            elif kind != "object":
                self.problems.append(JqProblem("`module` metadata must be an object", meta.start, meta.end))
            self.expect(";", "`;` after the `module` metadata")
        imports: list[Token] = []
        while self.peek() in ("import", "include"):
            imports.append(self.tok())
            self.import_()
        if self.peek() == "EOF":
            raise _Syntax(JqProblem("the jq program is empty", 0, len(self.text)))
        body = self.query(top=True)
        if self.peek() != "EOF":
            raise self.unexpected()
        if imports:
            t = imports[0]
            return JqProblem(
                f"`{t[0]}` cannot load a jq module here: the runtime's jq has no module search path", t[1], t[2]
            )
        return body

    def import_(self) -> None:
        word = self.advance()
        path = self.string_or_fail("the module path (a string)")
        if _const(path) == _OTHER:
            self.problems.append(JqProblem("an import path must be a constant string", path.start, path.end))
        if word[0] == "import":
            self.expect("as", "`as` and a name after the module path")
            if self.peek() not in ("IDENT", "BINDING"):
                raise self.unexpected("a name or `$name` for the imported module")
            self.advance()
        if self.peek() != ";":
            meta = self.query()
            if _kind(_const(meta)) != "object":
                self.problems.append(JqProblem("import metadata must be a constant object", meta.start, meta.end))
        self.expect(";", "`;` to end the import")

    # ── queries: pipelines of expressions; `def`, `… as $x |` and `label $x |` reach to the end ──

    def query(self, top: bool = False) -> _Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _TooDeep
        frames: list[tuple[list[_Node | str], str, Any, int]] = []
        items: list[_Node | str] = []  # operands and separators, alternating
        only_defs = top
        while True:
            kind = self.peek()
            if kind == "def":
                fd = self.funcdef()
                frames.append((items, "defs", fd, fd.start))
                items = []
                if only_defs and self.peek() == "EOF":
                    raise _Syntax(
                        JqProblem(
                            "the program only defines functions: add the expression to run after the last `def …;`",
                            fd.start,
                            fd.end,
                        )
                    )
                continue
            only_defs = False
            if kind == "label":
                t = self.advance()
                name = self.expect("BINDING", "a label name like `$out` after `label`")
                self.expect("|", "`|` after the label name")
                frames.append((items, "label", self.text[name[1] + 1 : name[2]], t[1]))
                items = []
                continue
            e = self.expr()
            if self.peek() == "as":
                self.advance()
                pats = self.patterns()
                self.expect("|", "`|` after the binding (`… as $x | body`)")
                frames.append((items, "bind", (e, pats), e.start))
                items = []
                continue
            items.append(e)
            if self.peek() in ("|", ","):
                items.append(self.advance()[0])
                continue
            break
        node = self.sequence(items)
        while frames:
            outer, what, data, start = frames.pop()
            if what == "defs":
                node = _Node("defs", start, node.end, [node], extra=data)
            elif what == "label":
                node = _Node("label", start, node.end, [node], name=data)
            else:
                src, pats = data
                node = _Node("bind", start, node.end, [src, node], extra=pats)
            node = self.sequence([*outer, node])
        self.depth -= 1
        return node

    @staticmethod
    def sequence(items: list[_Node | str]) -> _Node:
        """Operands joined by `,` (binding tighter, to the left) and `|` (an n-ary pipeline)."""
        stages: list[_Node] = []
        cur: _Node | None = None
        for i in range(0, len(items), 2):
            node = items[i]
            sep = items[i - 1] if i else "|"
            assert isinstance(node, _Node)
            if sep == ",":
                assert cur is not None
                cur = _Node("comma", cur.start, node.end, [cur, node])
            else:
                if cur is not None:
                    stages.append(cur)
                cur = node
        assert cur is not None
        stages.append(cur)
        if len(stages) == 1:
            return stages[0]
        return _Node("pipe", stages[0].start, stages[-1].end, stages)

    def funcdef(self) -> _FuncDef:
        start = self.advance()[1]
        if self.peek() != "IDENT":
            if self.peek() in _KEYWORDS:
                raise self.fail(self.tok(), f"`{self.peek()}` is a keyword and cannot name a function")
            raise self.unexpected("a function name after `def`")
        t = self.advance()
        name = self.text[t[1] : t[2]]
        params: list[tuple[str, bool]] = []
        if self.peek() == "(":
            opener = self.advance()
            while True:
                p = self.tok()
                if p[0] == "IDENT":
                    params.append((self.text[p[1] : p[2]], False))
                elif p[0] == "BINDING":
                    params.append((self.text[p[1] + 1 : p[2]], True))
                else:
                    raise self.unexpected("a parameter (`f` or `$v`)")
                self.advance()
                if self.peek() == ";":
                    self.advance()
                    continue
                self.close(")", opener)
                break
        self.expect(":", f"`:` before the body of `{name}`")
        body = self.query()
        end = self.expect(";", f"`;` to end the definition of `{name}`")
        return _FuncDef(name, params, body, start, end[2])

    # ── expressions: binary operators by jq's precedence table ──

    def expr(self) -> _Node:
        operands = [self.postfix_term()]
        ops: list[Token] = []

        def reduce() -> None:
            op = ops.pop()
            b = operands.pop()
            a = operands.pop()
            operands.append(_Node("binop", a.start, b.end, [a, b], name=op[0]))

        while True:
            t = self.tok()
            prec = _PREC.get(t[0])
            if prec is None:
                break
            while ops:
                top = _PREC[ops[-1][0]]
                if top > prec or (top == prec and prec not in _RIGHT):
                    if top == prec and prec in _NONASSOC:
                        raise self.fail(
                            t, f"`{t[0]}` cannot follow `{ops[-1][0]}` directly: these operators do not chain"
                        )
                    reduce()
                else:
                    break
            ops.append(self.advance())
            operands.append(self.postfix_term())
        while ops:
            reduce()
        return operands[0]

    # ── terms ──

    def postfix_term(self) -> _Node:
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _TooDeep
        node = self.term()
        while True:
            kind = self.peek()
            if kind == "FIELD":
                t = self.advance()
                node = _Node("index", node.start, t[2], [node])
            elif kind == ".":
                dot = self.advance()
                if self.peek() == "[":
                    node = self.bracket_suffix(node, dotted=True)
                elif self.peek() in ("STR_START", "FORMAT"):
                    key = self.string_or_fail("a quoted field name")
                    node = _Node("index", node.start, key.end, [node, key])
                else:
                    raise self._after_dot(dot)
            elif kind == "[":
                node = self.bracket_suffix(node)
            elif kind == "?":
                t = self.advance()
                node = _Node("try", node.start, t[2], [node])
            else:
                break
        self.depth -= 1
        return node

    def _after_dot(self, dot: Token) -> _Syntax:
        t = self.tok()
        if t[0] == "IDENT" or t[0] in _KEYWORDS:
            word = self.text[t[1] : t[2]]
            return self.fail(t, f'a field name must touch its `.`: write `.{word}` (or `.["{word}"]`)')
        if t[0] == "EOF":
            return self.fail(dot, "`.` here must be followed by a field name, a quoted string or `[`")
        return self.fail(t, f"unexpected {self.describe(t)} after `.` (expected a field name, a string or `[`)")

    def bracket_suffix(self, node: _Node, dotted: bool = False) -> _Node:
        """``[]``, ``[i]`` or a slice after ``node``; jq has no slice after a dot (``.a.[1:]``)."""
        opener = self.advance()
        kids = [node]
        if self.peek() == "]":
            pass
        elif self.peek() == ":" and dotted:
            raise self.fail(self.tok(), "a slice cannot follow a `.`: write `.a[1:2]`, not `.a.[1:2]`")
        elif self.peek() == ":":
            self.advance()
            if self.peek() == "]":
                raise self.fail(self.tok(), "a slice needs at least one bound: `.[n:]`, `.[:m]` or `.[n:m]`")
            kids.append(self.query())
        else:
            kids.append(self.query())
            if self.peek() == ":":
                if dotted:
                    raise self.fail(self.tok(), "a slice cannot follow a `.`: write `.a[1:2]`, not `.a.[1:2]`")
                self.advance()
                if self.peek() != "]":
                    kids.append(self.query())
        end = self.close("]", opener)
        return _Node("index", node.start, end[2], kids)

    def string_or_fail(self, wanted: str) -> _Node:
        if self.peek() == "FORMAT" and self.peek(1) == "STR_START":
            fmt = self.advance()
            return self.string(fmt[1])
        if self.peek() == "STR_START":
            return self.string(self.tok()[1])
        if self.peek() == "FORMAT":
            self.advance()
            raise self.unexpected("a string after the format")
        raise self.unexpected(wanted)

    def string(self, start: int) -> _Node:
        opener = self.advance()
        parts: list[_Node] = []
        size = 0
        while True:
            kind = self.peek()
            if kind == "STR_TEXT":
                t = self.advance()
                size += t[2] - t[1]
            elif kind == "INTERP_START":
                inter = self.advance()
                parts.append(self.query())
                self.close("INTERP_END", inter)
            elif kind == "STR_END":
                end = self.advance()[2]
                break
            elif kind == "EOF":
                raise self.fail(opener, 'unterminated string (missing the closing `"`)')
            else:
                raise self.unexpected("the rest of the string")
        if not parts:
            return _Node("const", start, end, extra=("string", size))
        return _Node("str", start, end, parts)

    def term(self) -> _Node:
        t = self.tok()
        kind, s, e = t
        text = self.text
        if kind == ".":
            self.advance()
            if self.peek() in ("STR_START", "FORMAT"):
                key = self.string_or_fail("a quoted field name")
                return _Node("index", s, key.end, [_Node("dot", s, e), key])
            return _Node("dot", s, e)
        if kind == "..":
            self.advance()
            return _Node("call", s, e, name="recurse", extra="implicit")
        if kind == "FIELD":
            self.advance()
            return _Node("index", s, e, [_Node("dot", s, s + 1)])
        if kind == "LITERAL":
            self.advance()
            return _Node("const", s, e, extra=("number", float(text[s:e])))
        if kind == "STR_START":
            return self.string(s)
        if kind == "FORMAT":
            if self.peek(1) == "STR_START":
                self.advance()
                node = self.string(s)
                if node.kind == "str":
                    node.extra = "format"
                return node
            self.advance()
            return _Node("format", s, e)
        if kind == "-":
            self.advance()
            inner = self.postfix_term()
            return _Node("neg", s, inner.end, [inner])
        if kind == "(":
            self.advance()
            inner = self.query()
            self.close(")", t)
            return inner
        if kind == "[":
            self.advance()
            if self.peek() == "]":
                end = self.advance()
                return _Node("const", s, end[2], extra=("array", None))
            inner = self.query()
            end = self.close("]", t)
            return _Node("array", s, end[2], [inner])
        if kind == "{":
            return self.object()
        if kind in ("reduce", "foreach"):
            return self.fold(kind)
        if kind == "if":
            return self.conditional()
        if kind == "try":
            self.advance()
            body = self.postfix_term()
            kids = [body]
            if self.peek() == "catch":
                self.advance()
                kids.append(self.postfix_term())
            return _Node("try", s, kids[-1].end, kids)
        if kind == "break":
            self.advance()
            label = self.expect("BINDING", "the label to break to (`break $name`)")
            return _Node("break", s, label[2], name=text[label[1] + 1 : label[2]])
        if kind == "$":
            self.advance()
            for _ in range(2):
                self.expect("$", "`$$$$name`")
            var = self.expect("BINDING", "`$$$$name`")
            return _Node("varn", s, var[2], name=text[var[1] + 1 : var[2]])
        if kind == "BINDING":
            self.advance()
            return _Node("var", s, e, name=text[s + 1 : e])
        if kind == "LOC":
            self.advance()
            return _Node("const", s, e, extra=("object", None))
        if kind == "IDENT":
            self.advance()
            name = text[s:e]
            if self.peek() == "(":
                opener = self.advance()
                args = [self.query()]
                while self.peek() == ";":
                    self.advance()
                    args.append(self.query())
                end = self.close(")", opener)
                return _Node("call", s, end[2], args, name=name, arity=len(args))
            if name in ("true", "false"):
                return _Node("const", s, e, extra=("boolean", None))
            if name == "null":
                return _Node("const", s, e, extra=("null", None))
            return _Node("call", s, e, name=name)
        if kind in ("then", "elif", "else", "end", "catch") and self.pos:
            raise self.fail(t, f"`{kind}` has nothing before it (an expression is missing)")
        raise self.unexpected("an expression")

    def fold(self, kind: str) -> _Node:
        start = self.advance()[1]
        src = self.expr()
        self.expect("as", f"`as $name` after the source of `{kind}`")
        pats = self.patterns()
        opener = self.expect("(", f"`(` with the `{kind}` state: `{kind} … as $x (init; update)`")
        kids = [src, self.query()]
        self.expect(";", f"`;` between the `{kind}` initial state and its update")
        kids.append(self.query())
        if kind == "foreach" and self.peek() == ";":
            self.advance()
            kids.append(self.query())
        end = self.close(")", opener)
        return _Node(kind, start, end[2], kids, extra=pats)

    def conditional(self) -> _Node:
        opener = self.advance()
        kids = [self.query()]
        self.expect("then", "`then` after the `if` condition")
        kids.append(self.query())
        while True:
            kind = self.peek()
            if kind == "elif":
                self.advance()
                kids.append(self.query())
                self.expect("then", "`then` after the `elif` condition")
                kids.append(self.query())
            elif kind == "else":
                self.advance()
                kids.append(self.query())
                end = self.close("end", opener)
                break
            elif kind == "end":
                end = self.advance()
                break
            elif kind == "EOF":
                raise self.fail(opener, "`if` is never closed (missing `end`)")
            else:
                raise self.unexpected("`elif`, `else` or `end`")
        return _Node("if", opener[1], end[2], kids)

    def object(self) -> _Node:
        opener = self.advance()
        pairs: list[tuple[_Node | None, _Node | None]] = []
        kids: list[_Node] = []
        if self.peek() != "}":
            while True:
                key, value = self.pair(kids)
                pairs.append((key, value))
                if self.peek() == ",":
                    self.advance()
                    if self.peek() == "}":
                        break
                    continue
                if self.peek() not in ("}", "EOF"):
                    raise self.fail(
                        self.tok(), f"expected `,` or `}}` after an object entry, found {self.describe(self.tok())}"
                    )
                break
        end = self.close("}", opener)
        return _Node("object", opener[1], end[2], kids, extra=pairs)

    def pair(self, kids: list[_Node]) -> tuple[_Node | None, _Node | None]:
        """One ``key: value`` of an object. Returns the key and value for constant folding (``None``
        where jq computes them), and adds what needs name resolution to ``kids``."""
        t = self.tok()
        kind, s, e = t
        if kind == "IDENT" or kind in _KEYWORDS:
            self.advance()
            key = _Node("const", s, e, extra=("string", e - s))
            if self.peek() != ":":
                return key, None
            self.advance()
            value = self.dict_value()
            kids.append(value)
            return key, value
        if kind in ("STR_START", "FORMAT"):
            key = self.string_or_fail("a key")
            kids.append(key)
            if self.peek() != ":":
                return None, None
            self.advance()
            value = self.dict_value()
            kids.append(value)
            return key, value
        if kind == "BINDING":
            self.advance()
            kids.append(_Node("var", s, e, name=self.text[s + 1 : e]))
            if self.peek() == ":":
                self.advance()
                kids.append(self.dict_value())
            return None, None
        if kind == "LOC":
            self.advance()
            return _Node("const", s, e, extra=("string", 7)), _Node("const", s, e, extra=("object", None))
        if kind == "(":
            self.advance()
            key = self.query()
            self.close(")", t)
            self.check_key(key)
            kids.append(key)
            self.expect(":", "`:` and a value after a computed key")
            value = self.dict_value()
            kids.append(value)
            return key, value
        if kind in ("LITERAL", "-", "$", "FIELD", ".", "["):
            raise self.fail(t, "an object key must be a name, a string, `$var` or a parenthesised expression `(…)`")
        raise self.unexpected("an object key")

    def check_key(self, key: _Node) -> None:
        kind = _kind(_const(key))
        if kind is not None and kind != "string":
            self.problems.append(
                JqProblem(
                    f"an object key must be a string, but this key is always {_A_KIND[kind]}",
                    key.start,
                    key.end,
                )
            )

    def dict_value(self) -> _Node:
        items: list[Any] = [self.expr()]
        while self.peek() == "|":
            self.advance()
            items += ["|", self.expr()]
        return self.sequence(items)

    # ── destructuring patterns ──

    def patterns(self) -> list[_Pattern]:
        pats = [self.pattern()]
        while self.peek() == "?//":
            self.advance()
            pats.append(self.pattern())
        return pats

    def pattern(self) -> _Pattern:
        t = self.tok()
        kind, s, e = t
        if kind == "BINDING":
            self.advance()
            return _Pattern("var", s, e, name=self.text[s + 1 : e])
        if kind == "[":
            self.advance()
            items = [self.pattern()]
            while self.peek() == ",":
                self.advance()
                items.append(self.pattern())
            end = self.close("]", t)
            return _Pattern("array", s, end[2], items=items)
        if kind == "{":
            self.advance()
            entries = [self.obj_pattern()]
            while self.peek() == ",":
                self.advance()
                entries.append(self.obj_pattern())
            end = self.close("}", t)
            return _Pattern("object", s, end[2], entries=entries)
        if kind == "LOC":
            raise self.fail(t, "`$__loc__` is reserved and cannot be bound")
        raise self.unexpected("a pattern (`$name`, `[…]` or `{…}`)")

    def obj_pattern(self) -> tuple[str, _Node | None, _Pattern | None]:
        t = self.tok()
        kind, s, e = t
        if kind == "BINDING":
            self.advance()
            name = self.text[s + 1 : e]
            if self.peek() == ":":
                self.advance()
                return name, None, self.pattern()
            return name, None, None
        if kind == "IDENT" or kind in _KEYWORDS:
            self.advance()
            self.expect(":", f"`:` and a pattern after `{self.text[s:e]}` (or write `${self.text[s:e]}`)")
            return "", None, self.pattern()
        if kind in ("STR_START", "FORMAT"):
            key = self.string_or_fail("a key")
            self.expect(":", "`:` and a pattern after the key")
            return "", key, self.pattern()
        if kind == "(":
            self.advance()
            key = self.query()
            self.close(")", t)
            self.check_key(key)
            self.expect(":", "`:` and a pattern after a computed key")
            return "", key, self.pattern()
        raise self.unexpected("a key in the object pattern")


# ── name resolution (what jq checks when it links the program) ───────────────────────────────


class _Def:
    __slots__ = ("used",)

    def __init__(self) -> None:
        self.used = False


_PARAM = _Def()  # a closure parameter: always "used", nothing to check later
_BUILTIN_NAMES = sorted({name for name, _ in BUILTINS if not name.startswith("_")})
_IMPLICIT_CALLS: dict[str, tuple[tuple[str, int], ...]] = {
    "neg": (("_negate", 0),),
    "format": (("format", 1),),
    "str": (("format", 1), ("_plus", 2)),
    "break": (("error", 0),),
    "label": (("_equal", 2), ("error", 0)),
    "=": (("_assign", 2),),
    "|=": (("_modify", 2),),
    "//=": (("_modify", 2),),
}

Funcs = dict[tuple[str, int], _Def]


class _DefBody:
    """A pending check of a ``def``'s body, walked after the code the definition scopes over."""

    __slots__ = ("fd", "mine")

    def __init__(self, fd: _FuncDef) -> None:
        self.fd = fd
        self.mine = _Def()

    def body_funcs(self, inner: Funcs) -> Funcs:
        out = dict(inner)  # the function itself (recursion) and what was in scope at the `def`
        for name, _ in self.fd.params:
            out[(name, 0)] = _PARAM  # a parameter is a filter; a `$name` one is also `name`
        return out

    def body_vars(self, vars_: frozenset[str]) -> frozenset[str]:
        return vars_ | {name for name, is_var in self.fd.params if is_var}


class _Resolver:
    def __init__(self, open_name: str | None = None) -> None:
        self.problems: list[JqProblem] = []
        self.open_name = open_name  # defined at every arity and as a variable (a template island)

    def call(self, name: str, arity: int, funcs: Funcs, node: _Node) -> None:
        if name == self.open_name:
            return
        found = funcs.get((name, arity))
        if found is not None:
            found.used = True
            return
        if (name, arity) in BUILTINS:
            return
        self.problems.append(JqProblem(self.undefined(name, arity, funcs), node.start, node.start + len(name)))

    @staticmethod
    def undefined(name: str, arity: int, funcs: Funcs) -> str:
        args = "no arguments" if arity == 0 else "1 argument" if arity == 1 else f"{arity} arguments"
        known = sorted({a for n, a in BUILTINS if n == name} | {a for n, a in funcs if n == name})
        if known:
            takes = " or ".join(str(a) for a in known)
            return f"`{name}` takes {takes} argument{'s' if known != [1] else ''}, not {arity} (`{name}/{arity}`)"
        import difflib  # only on this error path: keeps the checker's import light

        hint = difflib.get_close_matches(name, _BUILTIN_NAMES + sorted({n for n, _ in funcs}), n=1)
        guess = f"; did you mean `{hint[0]}`?" if hint else ""
        return f"`{name}` with {args} is not a jq builtin nor defined by a `def` in scope{guess}"

    def walk(self, node: _Node, funcs: Funcs, vars_: frozenset[str], labels: frozenset[str]) -> None:
        todo: list[tuple[_Node | _DefBody, Funcs, frozenset[str], frozenset[str]]] = [(node, funcs, vars_, labels)]
        while todo:
            n, f, v, lb = todo.pop()
            if isinstance(n, _DefBody):
                # everything after the `def` has been walked: its body is live only if called
                if n.mine.used:
                    todo.append((n.fd.body, n.body_funcs(f), n.body_vars(v), lb))
                continue
            kind = n.kind
            if kind == "call":
                self.call(n.name, n.arity, f, n)
            elif kind == "var":
                if n.name not in v and n.name not in ("ENV", self.open_name):
                    self.problems.append(
                        JqProblem(
                            f"`${n.name}` is not defined here (bind it with `… as ${n.name} | …` "
                            f"or a `${n.name}` parameter)",
                            n.start,
                            n.end,
                        )
                    )
            elif kind == "varn":
                if n.name not in v and n.name != self.open_name:
                    self.problems.append(JqProblem(f"`${n.name}` is not defined here", n.start, n.end))
            elif kind == "break":
                if n.name not in lb:
                    self.problems.append(
                        JqProblem(f"`break ${n.name}` has no enclosing `label ${n.name} | …`", n.start, n.end)
                    )
            elif kind == "binop" and n.name in _BINOP_CALL:
                a, b = _const(n.kids[0]), _const(n.kids[1])
                if not (_is_value(a) and _is_value(b)):
                    self.call(_BINOP_CALL[n.name], 2, f, n)
            elif kind == "binop" and n.name in _UPDATE_OPS:
                self.call("_modify", 2, f, n)
                self.call(_BINOP_CALL[_UPDATE_OPS[n.name]], 2, f, n)
            elif kind == "binop" and n.name in _IMPLICIT_CALLS:
                for name, arity in _IMPLICIT_CALLS[n.name]:
                    self.call(name, arity, f, n)
            elif kind in _IMPLICIT_CALLS:
                for name, arity in _IMPLICIT_CALLS[kind]:
                    self.call(name, arity, f, n)
            if kind == "defs":
                # `def f: …; rest`: `rest` sees `f`; jq drops a definition nothing live calls
                # before it resolves names, so `f`'s body is checked only once `rest` calls it
                fd: _FuncDef = n.extra
                body = _DefBody(fd)
                inner = {**f, (fd.name, len(fd.params)): body.mine}
                todo += [(body, inner, v, lb), (n.kids[0], inner, v, lb)]
            elif kind == "label":
                todo.append((n.kids[0], f, v, lb | {n.name}))
            elif kind in ("bind", "reduce", "foreach"):
                pats: list[_Pattern] = n.extra
                names: list[tuple[str, int, int]] = []
                keys: list[_Node] = []
                for p in pats:
                    p.names(names)
                    p.keys(keys)
                bound = v | {name for name, _, _ in names}
                key_vars = bound if len(pats) > 1 else v
                todo += [(k, f, key_vars, lb) for k in keys]
                if kind == "bind":
                    todo += [(n.kids[0], f, v, lb), (n.kids[1], f, bound, lb)]
                else:
                    todo += [(n.kids[0], f, v, lb), (n.kids[1], f, v, lb)]
                    todo += [(k, f, bound, lb) for k in n.kids[2:]]
            else:
                todo += [(k, f, v, lb) for k in n.kids]


# ── entry point ──────────────────────────────────────────────────────────────────────────────


def _judge(text: str, open_name: str | None) -> JqProblem | None:
    toks, lexical, unclosed = _lex(text)
    parser = _Parser(text, toks, unclosed)
    try:
        tree = parser.program()
    except _Syntax as exc:
        return min([*lexical, *parser.problems, exc.problem], key=lambda p: p.start)
    parse_time = lexical + parser.problems
    if parse_time:
        return min(parse_time, key=lambda p: p.start)
    if isinstance(tree, JqProblem):
        return tree
    resolver = _Resolver(open_name)
    resolver.walk(tree, {}, frozenset(), frozenset())
    return min(resolver.problems, key=lambda p: p.start) if resolver.problems else None


def _lexical_problem(text: str) -> JqProblem | None:
    """The first fault jq's scanner alone makes certain: a bad escape, a stray character or
    closer, an unclosed bracket or string. ``None`` leaves the program to the runtime."""
    toks, problems, unclosed = _lex(text)
    for kind, s, e in toks:
        if kind == "INVALID":
            problems.append(JqProblem(f"unexpected character `{text[s:e]}`", s, e))
            break
    if unclosed:
        kind, s, e = unclosed[-1]
        problems.append(JqProblem(f"`{text[s:e]}` is never closed", s, e))
    return min(problems, key=lambda p: p.start) if problems else None


def jq_problem(text: str, open_name: str | None = None) -> JqProblem | None:
    """Why libjq would refuse to compile ``text``, or ``None`` when it compiles.

    ``open_name`` is a name to treat as defined everywhere, as a function of any arity and as a
    variable: the stand-in for a ``${{ … }}`` island whose rendered text is not known yet."""
    program = text.split("\0", 1)[0]  # jq reads the program as a C string
    try:
        problem = _judge(program, open_name)
    except (_TooDeep, RecursionError):
        problem = _lexical_problem(program)  # too deep to parse here: judge what the scanner sees
    if problem is None:
        return None
    stripped = program.strip()
    flag = _FLAG_RE.match(stripped)
    if flag is not None and flag.group(0) not in _NOT_FLAGS:
        lead = len(program) - len(program.lstrip())
        word = flag.group(0)
        return JqProblem(f"`{word}` looks like a command-line flag, not a jq program", lead, lead + len(word))
    return problem
