"""Static typing of ``cel-subset/0.1`` expressions over declared types (04, 09 §typed value edges).

Each node gets the static type of its value (see :mod:`checker.rules.support.value_types`):
typed ``inputs:`` (``| null`` when optional without a default, as the run binds them), ``config:``,
``const:`` values, a producer's ``returns:`` (``| null``: a skipped producer reads ``null``),
``with:`` bindings (the type of what they bind) and ``item``/``index`` of a ``for_each``. Anything
else is ``UNKNOWN``.

:meth:`Typer.failure` walks the nodes every evaluation reaches, in the evaluator's order, and
returns the first one that fails on every run: the node's own operation is evaluated by the
runtime's evaluator on every combination of operand witnesses, and each combination fails, with
one code, for a reason that does not depend on the value (a missing key or an index out of range
counts only when the keys or the items are known). Sub-expressions that read nothing are left to
:mod:`checker.rules.literal_types`.
"""

from __future__ import annotations

import itertools
from typing import Any

from checker.core.records import record
from checker.core.vocab import (
    LOOP_ALLOWED,
    LOOP_ROOTS,
    STATUSES,
    TASK_RECORD,
    TASKS_ALLOWED,
    WITH_ALLOWED,
    OnErrorAction,
    Where,
)
from checker.expr.evaluate import EvalError, evaluate
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
    walk,
)
from checker.model import typesys
from checker.model.typesys import UNKNOWN, Type
from checker.model.workflow import Agent, Infer, Task, Workflow
from checker.parse.values import ListValue, MapValue, TemplateValue, Value
from checker.rules.support import value_types as vt
from checker.rules.support import witness_eval as we
from checker.rules.support.value_types import Known

_FIELD_KIND = {f.name: f.kind for f in TASK_RECORD}  # the one task-record table (checker/core/vocab.py)

MAX_COMBINATIONS = 64
Frame = tuple[str | None, str, bool]  # (task, position class, inside a for_each task)


class _Fails(Exception):
    def __init__(self, error: EvalError | None, node: Expr, types: list[Type]) -> None:
        self.error = error  # None: the failure is the literal rule's (the sub-expression reads nothing)
        self.node = node
        self.types = types


@record(eq=False)
class Failure:
    """An operation that fails on every run: the run's error (expression offsets), the node, and
    its operands with their static types."""

    error: EvalError
    node: Expr
    operands: tuple[tuple[Expr, Type], ...]


class Typer:
    """The static types of one workflow's expressions (bindings and fan-outs typed once)."""

    def __init__(self, wf: Workflow) -> None:
        self.wf = wf
        self._memo: dict[tuple[str, str, str], Type] = {}
        self._busy: set[tuple[str, str, str]] = set()
        # What the types found so far were read from: task ids, and "" for the envelope's
        # declarations (the language server's memo keys a site's verdict on them).
        self.reads: set[str] = set()
        self._reads_of: dict[tuple[str, str, str], set[str]] = {}

    # -- entry points ----------------------------------------------------------------------------

    def failure(self, expr: Expr, frame: Frame) -> Failure | None:
        """The first node of ``expr`` that fails on every run (in the evaluator's order)."""
        try:
            self._infer(expr, frame, True)
        except _Fails as f:
            if f.error is None:
                return None
            return Failure(f.error, f.node, tuple(zip(we.operands(f.node), f.types, strict=True)))
        return None

    def type_of(self, expr: Expr, frame: Frame) -> Type:
        try:
            return self._infer(expr, frame, False)
        except _Fails:  # pragma: no cover - never raised outside report mode
            return UNKNOWN

    # -- the roots ---------------------------------------------------------------------------------

    def _root(self, node: Expr, frame: Frame) -> Type | None:
        """The type of a namespace read (``inputs.x``, ``with.x``, ``tasks.p.output``, ``item``), or
        ``None`` when ``node`` is not one."""
        task, where, in_loop = frame
        if isinstance(node, Ident):
            if node.name in LOOP_ROOTS and in_loop and where in LOOP_ALLOWED and task is not None:
                return vt.INTEGER if node.name == "index" else self._item(task)
            return UNKNOWN
        if not isinstance(node, Member) or not isinstance(node.obj, Ident | Member):
            return None
        obj, name = node.obj, node.name
        if isinstance(obj, Ident):
            root = obj.name
            if root in ("inputs", "config", "const"):
                self.reads.add("")
                return self._once(("decl", root, name), lambda: self._declared(root, name))
            if root == "with":
                return self._binding(task, name) if where in WITH_ALLOWED and task is not None else UNKNOWN
            return UNKNOWN if root in ("tasks", "secrets") else None
        if isinstance(obj.obj, Ident) and obj.obj.name == "tasks":
            return self._task_field(obj.name, name) if where in TASKS_ALLOWED else UNKNOWN
        return None

    def _declared(self, root: str, name: str) -> Type:
        wf = self.wf
        if root == "const":
            c = next((c for c in wf.const if c.name == name), None)
            v = (c.literal if c.type is not None else c.value) if c is not None else None
            return (vt.known_value(v) or UNKNOWN) if v is not None else UNKNOWN
        decl = next((d for d in getattr(wf, root) if d.name == name), None)
        if decl is None or decl.type is None:
            return UNKNOWN
        t = typesys.declared(decl.type, wf.types)
        if root == "inputs" and not decl.required and decl.default is None:
            return vt.nullable(t)  # an optional input nobody supplied reads as null
        return t

    def _task_field(self, producer: str, name: str) -> Type:
        self.reads.update((producer, ""))  # its task, and the envelope's `types:` its `returns:` names
        p = self.wf.tasks.get(producer)
        if p is None:
            return UNKNOWN
        if name == "output":  # `null` when the producer was skipped, cancelled or failed
            t = self._once(("returns", producer, ""), lambda: _returns(p, self.wf))
            return UNKNOWN if t is UNKNOWN else vt.nullable(t)
        kind = _FIELD_KIND.get(name)
        if kind == "status":
            return typesys.Enum(tuple(sorted(str(s) for s in STATUSES)))
        if kind == "timestamp":
            return vt.nullable(vt.STRING)
        if kind == "duration":
            return vt.nullable(typesys.Prim("number"))
        if kind == "error":
            return vt.nullable(typesys.MapOf(UNKNOWN))
        return UNKNOWN  # an `output:` jq binding: its value is the program's

    def _binding(self, task: str, name: str) -> Type:
        self.reads.add(task)
        t = self.wf.tasks.get(task)
        b = t.binding(name) if t is not None else None
        if t is None or b is None:
            return UNKNOWN
        frame = (task, Where.WITH, t.for_each is not None)
        return self._once(("with", task, name), lambda: self._value(b.value, frame))

    def _item(self, task: str) -> Type:
        self.reads.add(task)
        t = self.wf.tasks.get(task)
        if t is None or t.for_each is None:
            return UNKNOWN
        fe = t.for_each
        return self._once(("item", task, ""), lambda: vt.item_type(self._value(fe, (task, Where.FOR_EACH, True))))

    def _once(self, key: tuple[str, str, str], make: Any) -> Type:
        if key in self._memo:
            self.reads |= self._reads_of[key]
            return self._memo[key]
        if key in self._busy:  # a binding that reads itself through another: left to its own rule
            return UNKNOWN
        self._busy.add(key)
        outer, self.reads = self.reads, set()
        try:
            out = self._memo[key] = make()
        finally:
            self._busy.discard(key)
            inner = self._reads_of[key] = self.reads
            self.reads = outer | inner
        return out

    def value_type(self, v: Value, frame: Frame) -> Type:
        """The type of what a model value materialises to at run time (``UNKNOWN`` when not known)."""
        return self._value(v, frame)

    def _value(self, v: Value, frame: Frame) -> Type:
        """The type of what a model value materialises to at run time."""
        if isinstance(v, TemplateValue):
            tpl = v.template
            if tpl is None or tpl.errors:
                return UNKNOWN
            if tpl.is_single_island:
                island = tpl.islands[0]
                return self.type_of(island.expr, frame) if island.expr is not None else UNKNOWN
            return vt.STRING
        known = vt.known_value(v)
        if known is not None:
            return known
        if isinstance(v, ListValue):
            return typesys.Arr(vt.union(self._value(i, frame) for i in v.items))
        if isinstance(v, MapValue):
            if not all(isinstance(e.key.value, str) for e in v.entries):
                return UNKNOWN
            fields = {str(e.key.value): typesys.Field(self._value(e.value, frame)) for e in reversed(v.entries)}
            return typesys.Obj(tuple(sorted(fields.items())))
        return UNKNOWN

    # -- inference ---------------------------------------------------------------------------------

    def _infer(self, node: Expr, frame: Frame, report: bool) -> Type:
        if isinstance(node, Literal):
            return Known(node.value)
        root = self._root(node, frame)
        if root is not None:
            return root
        if isinstance(node, Call) and node.name == "has":
            return vt.BOOL  # its argument may be absent: never judged
        if isinstance(node, Binary) and node.op in ("&&", "||"):
            self._judge(node, [self._infer(node.left, frame, report)], report)
            return vt.BOOL
        if isinstance(node, Ternary):
            cond = self._infer(node.cond, frame, report)
            self._judge(node, [cond], report)
            branches = (node.then, node.else_)
            if isinstance(cond, Known) and isinstance(cond.value, bool):
                return self._infer(branches[0 if cond.value else 1], frame, False)
            return vt.union(self._infer(b, frame, False) for b in branches)
        kids = we.operands(node)
        types = [self._infer(k, frame, report) for k in kids]
        value = self._judge(node, types, report)
        if value is not _MAYBE:
            return Known(value)
        return _result(node, types)

    def _judge(self, node: Expr, types: list[Type], report: bool) -> Any:
        """Evaluate ``node``'s own operation on every combination of operand witnesses: the value when
        every operand is known (and it succeeds), else ``_MAYBE``; raises :class:`_Fails` in report
        mode when every combination fails for a reason no value of those kinds avoids."""
        if not types or all(t is UNKNOWN for t in types):
            return _MAYBE
        keyed = isinstance(node, Member | Index)
        sets = [vt.witnesses(t, keyed and i == 0) for i, t in enumerate(types)]
        n = 1
        for s in sets:
            n *= len(s)
        if n == 0 or n > MAX_COMBINATIONS:
            return _MAYBE
        errors: list[EvalError] = []
        exact = all(isinstance(t, Known) for t in types)
        for combo in itertools.product(*sets):
            try:
                value = evaluate(*we.rebuilt(node, combo))
            except EvalError as e:
                if not exact and we.depends_on_value(node, combo, e):
                    return _MAYBE
                errors.append(e)
                continue
            except Exception:  # an operand the evaluator was never meant to see: no judgement
                return _MAYBE
            return value if exact else _MAYBE
        if not report or len({e.code for e in errors}) != 1:
            return _MAYBE
        raise _Fails(None if exact and _closed(node) else errors[0], node, types)


_MAYBE: Any = object()


def _returns(p: Task, wf: Workflow) -> Type:
    """The business type of ``p``'s output on success: its ``returns:``, when the run holds it to it."""
    if p.returns is None or p.for_each is not None:
        return UNKNOWN  # a fan-out's output is the list of its iterations' outputs
    if p.on_error is not None and p.on_error.action is OnErrorAction.RECOVER:
        return UNKNOWN  # a recovered value is not held to `returns:`
    if isinstance(p.verb, Infer | Agent) and p.verb.schema is not None:
        return UNKNOWN  # two contracts (NIKA-TYPE-003): the schema walk speaks for it
    return typesys.declared(p.returns, wf.types)


def _closed(node: Expr) -> bool:
    """Whether ``node`` reads nothing (its failure is the literal rule's)."""
    return not any(isinstance(n, Ident) for n in walk(node))


def _result(node: Expr, types: list[Type]) -> Type:
    """The type of ``node``'s value when it succeeds and is not known."""
    if isinstance(node, Member):
        return vt.field_type(types[0], node.name)
    if isinstance(node, Index):
        key = types[1].value if isinstance(types[1], Known) else None
        obj = types[0]
        if isinstance(key, str):
            return vt.field_type(obj, key)
        if any(isinstance(m, typesys.MapOf | typesys.Obj) for m in vt.members(obj)):
            return UNKNOWN
        return vt.item_type(obj, key)
    if isinstance(node, Call | MethodCall):
        return vt.INTEGER if node.name == "size" else vt.BOOL
    if isinstance(node, Unary | Binary):
        return vt.BOOL
    if isinstance(node, ListLit):
        return typesys.Arr(vt.union(types))
    return UNKNOWN


__all__ = ["Failure", "Frame", "Typer"]
