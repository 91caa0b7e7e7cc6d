"""The syntax tree of a ``cel-subset/0.1`` expression.

Every node is an immutable value with ``start``/``end``: the code-point offsets ``[start, end)``
of the source text that produced it, relative to the start of the expression text given to the
parser. Add the offset of the expression inside its YAML string (see
:class:`checker.expr.template.Island`) to place a node in the document.

A parenthesised group produces no node of its own: the inner node keeps the span of the inner
text, while the enclosing nodes' spans include the parentheses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeAlias

from checker.core.records import record

__all__ = [
    "Binary",
    "Call",
    "Expr",
    "Ident",
    "Index",
    "ListLit",
    "Literal",
    "LiteralValue",
    "Member",
    "MethodCall",
    "Ternary",
    "Unary",
    "children",
    "walk",
]

LiteralValue: TypeAlias = int | float | str | bool | None


@record
class Literal:
    """``42`` · ``3.14`` · ``'text'`` · ``true`` · ``false`` · ``null``."""

    value: LiteralValue
    start: int
    end: int


@record
class Ident:
    """A bare identifier: a namespace root (``inputs``, ``with``, …) or a loop local (``item``)."""

    name: str
    start: int
    end: int


@record
class Member:
    """Field selection ``obj.name``. The name is always the last token of the span, so it sits
    at ``[end - len(name), end)``."""

    obj: Expr
    name: str
    start: int
    end: int


@record
class Index:
    """Index access ``obj[index]``."""

    obj: Expr
    index: Expr
    start: int
    end: int


@record
class Call:
    """A free function call; only ``size(x)`` and ``has(x)`` exist."""

    name: str
    args: tuple[Expr, ...]
    start: int
    end: int


@record
class MethodCall:
    """A method call ``obj.name(args)``; only ``size``, ``contains``, ``startsWith``, ``endsWith``."""

    obj: Expr
    name: str
    args: tuple[Expr, ...]
    start: int
    end: int


@record
class Unary:
    """Logical negation ``!operand`` (the only unary operator)."""

    op: str
    operand: Expr
    start: int
    end: int


@record
class Binary:
    """``||`` ``&&`` or one relation (``==`` ``!=`` ``<`` ``<=`` ``>`` ``>=`` ``in``)."""

    op: str
    left: Expr
    right: Expr
    start: int
    end: int


@record
class Ternary:
    """Conditional value ``cond ? then : else_``."""

    cond: Expr
    then: Expr
    else_: Expr
    start: int
    end: int


@record
class ListLit:
    """A list literal ``[a, b, …]``."""

    items: tuple[Expr, ...]
    start: int
    end: int


Expr: TypeAlias = Literal | Ident | Member | Index | Call | MethodCall | Unary | Binary | Ternary | ListLit


def children(node: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``node``, in source order."""
    if isinstance(node, Member):
        return (node.obj,)
    if isinstance(node, Index):
        return (node.obj, node.index)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, MethodCall):
        return (node.obj, *node.args)
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Ternary):
        return (node.cond, node.then, node.else_)
    if isinstance(node, ListLit):
        return node.items
    return ()


def walk(node: Expr) -> Iterator[Expr]:
    """Every node of the tree rooted at ``node``, pre-order and in source order (no recursion)."""
    stack: list[Expr] = [node]
    pop = stack.pop
    while stack:
        current = pop()
        yield current
        kids = children(current)
        if kids:
            stack.extend(reversed(kids))
