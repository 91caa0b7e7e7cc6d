"""The syntax tree of a jq program, and jq's constant folding (it folds operators on two constants while parsing)."""

from __future__ import annotations

import math
from typing import Any

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
