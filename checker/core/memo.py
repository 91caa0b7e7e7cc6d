"""Rule results kept across versions of one document, for the language server's incremental analysis.

After an edit inside one task of a big workflow, every other task keeps its very model objects
(:class:`~checker.compiler.TaskMemo`): the same :class:`~checker.model.workflow.Task`, the same
:class:`~checker.model.workflow.ExprSite` objects, with spans that follow their task's anchor. A
rule whose findings about such an object depend only on that object, and on a few other objects
it names as *dependencies*, can reuse what it found last time instead of judging it again.

A :class:`RuleMemo` maps ``(kind, object)`` to ``(object, dependencies, result)``. A result is
reused only when the object is the very one it was computed for and each dependency is the very
object it was then (model objects are immutable and compare by identity, so the same object means
the same content; see :func:`same`). Each analysis starts a generation (:meth:`RuleMemo.start`): what it does not
ask for again is forgotten, so the memo never holds more than one version's objects.

``nika check`` passes no memo (``RuleContext.memo`` is ``None``) and computes everything once;
the helpers below then cost one ``is None`` test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_MISS: Any = object()


def same(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """Whether two dependency tuples hold the same objects, position by position.

    Tuple equality, which tries identity first: a model object (a task, a site) is an ``eq=False``
    record, equal to itself only; a value (a token, ``None``) compares by value.
    """
    return a == b


Entry = tuple[object, tuple[object, ...], Any]  # (the object, its dependencies, the result)
Table = dict[int, Entry]  # keyed by the object's id (the entry holds the object: the id stays its own)


class RuleMemo:
    """What the rules found about each model object in the previous analysis of a document."""

    __slots__ = ("_tables", "_tokens")

    def __init__(self) -> None:
        self._tables: dict[str, tuple[Table, Table]] = {}
        self._tokens: dict[str, object] = {}

    def start(self) -> None:
        """Begin one analysis: what the last one stored can be recalled once, then is dropped."""
        self._tables = {kind: (cur, {}) for kind, (_prev, cur) in self._tables.items()}

    def tables(self, kind: str) -> tuple[Table, Table]:
        """``(previous, current)`` for ``kind``: look up in the first, keep in the second (the
        loops of the costliest rules use them directly; :meth:`recall` and :meth:`store` wrap them)."""
        pair = self._tables.get(kind)
        if pair is None:
            pair = self._tables[kind] = ({}, {})
        return pair

    def recall(self, kind: str, obj: object, deps: tuple[object, ...] = ()) -> Any:
        """The result stored for ``obj`` under ``kind`` with the same ``deps``, or :data:`MISS`."""
        prev, cur = self.tables(kind)
        hit = prev.get(id(obj))
        if hit is None or hit[0] is not obj or not same(hit[1], deps):
            return _MISS
        cur[id(obj)] = hit
        return hit[2]

    def store(self, kind: str, obj: object, result: T, deps: tuple[object, ...] = ()) -> T:
        self.tables(kind)[1][id(obj)] = (obj, deps, result)
        return result

    def token(self, kind: str, value: T) -> T:
        """``value``, or the object given last time under ``kind`` when it is equal: a value
        rebuilt by every analysis (the envelope's declared names) then serves as a dependency."""
        last = self._tokens.get(kind, _MISS)
        if last is not _MISS and last == value:
            return last  # type: ignore[no-any-return]
        self._tokens[kind] = value
        return value

    def __len__(self) -> int:
        return sum(len(cur) for _prev, cur in self._tables.values())


MISS: Any = _MISS


def memoised(memo: RuleMemo | None, kind: str, obj: object, compute: Callable[[], T]) -> T:
    """``compute()``, a pure function of ``obj`` alone, remembered under ``kind`` when there is a memo."""
    if memo is None:
        return compute()
    hit = memo.recall(kind, obj)
    if hit is not MISS:
        return hit  # type: ignore[no-any-return]
    return memo.store(kind, obj, compute())


def reuse(prev: Table, cur: Table, obj: object, deps: tuple[object, ...] = ()) -> Any:
    """:meth:`RuleMemo.recall` on tables from :meth:`RuleMemo.tables` (the inner loops' form)."""
    hit = prev.get(id(obj))
    if hit is None or hit[0] is not obj or (hit[1] is not deps and not same(hit[1], deps)):
        return _MISS
    cur[id(obj)] = hit
    return hit[2]


__all__ = ["MISS", "RuleMemo", "memoised", "reuse", "same"]
