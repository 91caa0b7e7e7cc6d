"""Static questions the checker asks about a parsed expression.

* :func:`references` — every reference chain rooted at an identifier (``tasks.fetch.output``,
  ``with.pages[0]``, ``item``), with its static path and span; this is what edges, scope checks
  and schema walks are built from.
* :func:`status_comparisons` — comparisons of a task-status observation against literals, the
  input of ``NIKA-DAG-007`` (a status literal outside the vocabulary).
* :func:`is_boolean_shaped` — the static ``when:`` shape rule (``NIKA-VAR-005``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from checker.core.records import record
from checker.expr.nodes import (
    Binary,
    Call,
    Expr,
    Ident,
    Index,
    ListLit,
    Literal,
    LiteralValue,
    Member,
    MethodCall,
    Ternary,
    Unary,
    children,
)

__all__ = [
    "STATUS_VOCABULARY",
    "PathStep",
    "Ref",
    "StatusComparison",
    "as_ref",
    "is_boolean_shaped",
    "is_status_ref",
    "references",
    "status_comparisons",
]

PathStep = str | int | None

#: the closed set of terminal task states (spec 03 · v1)
STATUS_VOCABULARY: Final = frozenset({"success", "failure", "skipped", "cancelled"})

_RELATIONS: Final = frozenset({"==", "!=", "<", "<=", ">", ">=", "in"})
_BOOL_METHODS: Final = frozenset({"contains", "startsWith", "endsWith"})


@record
class Ref:
    """A reference chain: ``root`` is the identifier, ``path`` the static steps after it.

    A member step is its name; an index step with a literal int or string is that literal; any
    other index is ``None`` and ends the static path (later steps are not recorded). ``start``/
    ``end`` span the whole chain in expression offsets. ``in_has`` marks chains that sit inside
    a ``has(…)`` argument, where an unresolved member is ``false`` rather than ``NIKA-VAR-001``.
    """

    root: str
    path: tuple[PathStep, ...]
    start: int
    end: int
    in_has: bool = False


StatusComparison = tuple[Ref, LiteralValue, int, int]


def _chain(node: Expr) -> tuple[Ident, list[Member | Index]] | None:
    """Split a Member/Index chain into its root identifier and its steps (root first)."""
    steps: list[Member | Index] = []
    current: Expr = node
    while isinstance(current, Member | Index):
        steps.append(current)
        current = current.obj
    if not isinstance(current, Ident):
        return None
    steps.reverse()
    return current, steps


def _path(steps: list[Member | Index]) -> tuple[PathStep, ...]:
    path: list[PathStep] = []
    for step in steps:
        if isinstance(step, Member):
            path.append(step.name)
            continue
        idx = step.index
        if isinstance(idx, Literal) and (
            isinstance(idx.value, str) or (isinstance(idx.value, int) and not isinstance(idx.value, bool))
        ):
            path.append(idx.value)
        else:
            path.append(None)
            break
    return tuple(path)


def as_ref(node: Expr, *, in_has: bool = False) -> Ref | None:
    """The :class:`Ref` for ``node`` when it is itself a reference chain, else ``None``."""
    split = _chain(node)
    if split is None:
        return None
    root, steps = split
    return Ref(root.name, _path(steps), node.start, node.end, in_has)


def _iter_refs(node: Expr) -> Iterator[Ref]:
    stack: list[tuple[Expr, bool]] = [(node, False)]
    while stack:
        current, in_has = stack.pop()
        if isinstance(current, Ident | Member | Index):
            split = _chain(current)
            if split is not None:
                root, steps = split
                yield Ref(root.name, _path(steps), current.start, current.end, in_has)
                # the chain itself is consumed; only index expressions can hold more references
                pending = [(s.index, in_has) for s in steps if isinstance(s, Index)]
                stack.extend(reversed(pending))
                continue
        nested = in_has or (isinstance(current, Call) and current.name == "has")
        stack.extend((kid, nested) for kid in reversed(children(current)))


_REFS_CACHE: dict[int, tuple[Expr, tuple[Ref, ...]]] = {}


def references(expr: Expr) -> list[Ref]:
    """Every reference chain in ``expr``, in source order.

    Several rules ask for the same island's references; the answer is remembered per parsed
    expression object (keyed by identity, with the object kept alive beside it so an id is
    never reused while cached). The cache is dropped when it grows large.
    """
    hit = _REFS_CACHE.get(id(expr))
    if hit is not None and hit[0] is expr:
        return list(hit[1])
    refs = tuple(_iter_refs(expr))
    if len(_REFS_CACHE) > 50_000:
        _REFS_CACHE.clear()
    _REFS_CACHE[id(expr)] = (expr, refs)
    return list(refs)


def is_status_ref(ref: Ref) -> bool:
    """Whether ``ref`` is exactly ``tasks.<id>.status``."""
    return ref.root == "tasks" and len(ref.path) == 2 and isinstance(ref.path[0], str) and ref.path[1] == "status"


def status_comparisons(expr: Expr, is_status: Callable[[Ref], bool] = is_status_ref) -> Iterator[StatusComparison]:
    """Yield ``(ref, literal, literal_start, literal_end)`` for each literal a status
    observation is compared with: ``s == 'x'`` / ``s != 'x'`` (either order) and every literal
    item of ``s in ['x', 'y']``.

    ``is_status`` decides which references count as status observations; the default matches
    ``tasks.<id>.status``. Pass a wider predicate to follow a ``with:`` binding of a status
    (``with.s`` bound to ``${{ tasks.p.status }}``). Every literal is yielded, whatever its
    value; compare against :data:`STATUS_VOCABULARY` to find the ones that can never match.
    """
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, in_has = stack.pop()
        if isinstance(node, Binary) and node.op in ("==", "!=", "in"):
            left_ref = as_ref(node.left, in_has=in_has)
            if node.op == "in":
                if left_ref is not None and is_status(left_ref) and isinstance(node.right, ListLit):
                    for item in node.right.items:
                        if isinstance(item, Literal):
                            yield left_ref, item.value, item.start, item.end
            else:
                right_ref = as_ref(node.right, in_has=in_has)
                if left_ref is not None and is_status(left_ref) and isinstance(node.right, Literal):
                    yield left_ref, node.right.value, node.right.start, node.right.end
                elif right_ref is not None and is_status(right_ref) and isinstance(node.left, Literal):
                    yield right_ref, node.left.value, node.left.start, node.left.end
        nested = in_has or (isinstance(node, Call) and node.name == "has")
        stack.extend((kid, nested) for kid in reversed(children(node)))


def is_boolean_shaped(expr: Expr) -> bool:
    """Whether ``expr`` is statically boolean-shaped, as a ``when:`` root must be.

    Boolean-shaped: a relation, ``!``, ``&&``, ``||``, ``has(…)``, ``.contains()``,
    ``.startsWith()``, ``.endsWith()``, the literals ``true``/``false``, and a conditional whose
    two branches are both boolean-shaped. Not boolean-shaped: a bare reference, any other
    literal (``null`` included), a list, ``size(…)``/``.size()``.
    """
    stack: list[Expr] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Ternary):
            stack.append(node.then)
            stack.append(node.else_)
            continue
        if isinstance(node, Binary):
            if node.op in _RELATIONS or node.op in ("&&", "||"):
                continue
            return False
        if isinstance(node, Unary):
            continue
        if isinstance(node, Call) and node.name == "has":
            continue
        if isinstance(node, MethodCall) and node.name in _BOOL_METHODS:
            continue
        if isinstance(node, Literal) and isinstance(node.value, bool):
            continue
        return False
    return True
