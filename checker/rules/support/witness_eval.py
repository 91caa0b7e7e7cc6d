"""One operation of an expression evaluated on witnesses with the runtime's own evaluator.

:func:`rebuilt` gives a node whose operands stand for chosen witness values (a reference chain
reads its witness from a scope built for it, so the run's message names it; any other operand
becomes a literal), and :func:`depends_on_value` tells a failure that another value of the same
kinds could have avoided (a missing key, an index out of range) from one no value avoids.
"""

from __future__ import annotations

from typing import Any

from checker.core.records import replace
from checker.expr.evaluate import UNRESOLVED, EvalError
from checker.expr.nodes import (
    Binary,
    Call,
    Expr,
    Ident,
    Index,
    ListLit,
    Literal,
    Member,
    MethodCall,
    Ternary,
    Unary,
    children,
)
from checker.rules.support.value_types import Witness


def operands(node: Expr) -> tuple[Expr, ...]:
    """The sub-expressions whose values ``node``'s own operation reads on every evaluation: its
    children, except the parts a run may skip (the branches of ``?:``, the right of ``&&``/``||``)."""
    if isinstance(node, Ternary):
        return (node.cond,)
    if isinstance(node, Binary) and node.op in ("&&", "||"):
        return (node.left,)
    return children(node)


def depends_on_value(node: Expr, combo: tuple[Witness, ...], e: EvalError) -> bool:
    """Whether another value of the same kinds could have avoided ``e``."""
    if isinstance(node, Member | Index):  # a missing key, or an index out of range
        obj = combo[0]
        key_exact = isinstance(node, Member) or combo[1].exact
        collection = dict if isinstance(node, Member) else list | dict
        return e.code == UNRESOLVED and isinstance(obj.value, collection) and not (obj.keys and key_exact)
    if isinstance(node, Binary) and node.op in ("==", "!=", "in"):
        a, b = combo
        if node.op == "in":
            return isinstance(b.value, list) and isinstance(a.value, list | dict) and not a.exact
        return isinstance(a.value, list | dict) and isinstance(b.value, list | dict) and not (a.exact and b.exact)
    return False


def rebuilt(node: Expr, combo: tuple[Witness, ...]) -> tuple[Expr, dict[str, Any]]:
    """``node`` with its operands standing for the witnesses, and the scope they read."""
    scope: dict[str, Any] = {}
    made: set[int] = set()
    subs: list[Expr] = []
    kids = operands(node)
    assert len(kids) == len(combo) and not isinstance(node, Literal | Ident)
    for kid, w in zip(kids, combo, strict=True):
        subs.append(kid if plant(scope, made, kid, w.value) else Literal(w.value, kid.start, kid.end))
    if isinstance(node, Member):
        return replace(node, obj=subs[0]), scope
    if isinstance(node, Index):
        return replace(node, obj=subs[0], index=subs[1]), scope
    if isinstance(node, Call):
        return replace(node, args=tuple(subs)), scope
    if isinstance(node, MethodCall):
        return replace(node, obj=subs[0], args=tuple(subs[1:])), scope
    if isinstance(node, Unary):
        return replace(node, operand=subs[0]), scope
    if isinstance(node, Binary):
        if node.op in ("&&", "||"):  # only the left side is always evaluated
            return replace(node, left=subs[0], right=Literal(True, node.right.start, node.right.end)), scope
        return replace(node, left=subs[0], right=subs[1]), scope
    if isinstance(node, Ternary):
        none = (Literal(None, node.then.start, node.then.end), Literal(None, node.else_.start, node.else_.end))
        return replace(node, cond=subs[0], then=none[0], else_=none[1]), scope
    if isinstance(node, ListLit):
        return replace(node, items=tuple(subs)), scope
    return node, scope


def plant(scope: dict[str, Any], made: set[int], chain: Expr, value: Any) -> bool:
    """Make ``chain`` (``inputs.p``, ``with.x[0]``) read ``value`` in ``scope``, so the run's own
    message names it; ``False`` when it is not a plain chain or collides with another."""
    steps: list[Any] = []
    node = chain
    while not isinstance(node, Ident):
        if isinstance(node, Member):
            steps.append(node.name)
        elif isinstance(node, Index) and isinstance(node.index, Literal) and isinstance(node.index.value, str):
            steps.append(node.index.value)
        else:
            return False
        node = node.obj
    steps.append(node.name)
    steps.reverse()
    level: dict[str, Any] = scope
    for step in steps[:-1]:
        nxt = level.get(step)
        if nxt is None:
            nxt = level[step] = {}
            made.add(id(nxt))
        elif id(nxt) not in made:  # a witness sits there: never write into it
            return False
        level = nxt
    if steps[-1] in level:
        return False  # the same chain read twice (`x < x`): the second reads a literal
    level[steps[-1]] = value
    return True


__all__ = ["depends_on_value", "operands", "rebuilt"]
