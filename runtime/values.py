"""Turning model values into run-time data: templates rendered with the checker's own evaluator.

Nothing here parses an expression: a :class:`~checker.parse.values.TemplateValue` already carries its
parsed template, and :func:`checker.expr.render_template` evaluates it. Evaluation errors become
:class:`~runtime.errors.TaskError` objects carrying the evaluator's code (NIKA-VAR-001/006/007).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from checker.core.vocab import LOOP_ROOTS
from checker.expr import EvalError, ExprError, references, render_template
from checker.expr.evaluate import evaluate_bool
from checker.parse.values import ListValue, MapValue, ScalarValue, TemplateValue, Value
from runtime.errors import TaskError

LOCAL_ROOTS = frozenset(LOOP_ROOTS)  # the scope table (checker/core/vocab.py)


def eval_error(exc: EvalError | ExprError, what: str) -> TaskError:
    code = getattr(exc, "code", None) or "NIKA-VAR-006"
    return TaskError(code, f"{what}: {exc.message if hasattr(exc, 'message') else exc}")


def materialise(value: Value | None, scope: Mapping[str, Any], what: str = "a value") -> Any:
    """The run-time value of a model value: templates rendered, literals as they are."""
    if value is None:
        return None
    if isinstance(value, TemplateValue):
        template = value.template
        if template is None:  # pragma: no cover - the compiler always parses templates
            return value.value
        try:
            return render_template(template, scope)
        except (EvalError, ExprError) as exc:
            raise eval_error(exc, what) from None
    if isinstance(value, ScalarValue):
        return value.value
    if isinstance(value, MapValue):
        out: dict[Any, Any] = {}
        for e in value.entries:
            k = e.key.value
            if k not in out:
                out[k] = materialise(e.value, scope, what)
        return out
    if isinstance(value, ListValue):
        return [materialise(i, scope, what) for i in value.items]
    return value.to_python()


def condition(value: Value, scope: Mapping[str, Any], what: str = "`when:`") -> bool:
    """A ``when:`` value: a YAML boolean, or a single-island template that must yield a boolean."""
    if isinstance(value, TemplateValue) and value.template is not None:
        t = value.template
        if t.errors:
            first = t.errors[0]
            raise TaskError(first.code or "NIKA-VAR-005", f"{what}: {first.message}")
        if t.is_single_island:
            island = t.islands[0]
            assert island.expr is not None
            try:
                return evaluate_bool(island.expr, scope)
            except EvalError as exc:
                raise eval_error(exc, what) from None
        raise TaskError("NIKA-VAR-006", f"{what} must be a boolean, got a string")
    if isinstance(value, ScalarValue) and isinstance(value.value, bool):
        return value.value
    raise TaskError("NIKA-VAR-006", f"{what} must be a boolean")


def roots_of(value: Value | None) -> Iterator[str]:
    """The root names every template inside ``value`` reads (``inputs``, ``with``, ``item``…)."""
    if value is None:
        return
    from checker.parse.values import templates

    for tv in templates(value):
        if tv.template is None:
            continue
        for island in tv.template.islands:
            if island.expr is not None:
                for ref in references(island.expr):
                    yield ref.root


def reads_locals(value: Value | None) -> bool:
    """True when ``value`` reads ``item`` or ``index`` (it must be evaluated per iteration)."""
    return any(r in LOCAL_ROOTS for r in roots_of(value))


def reads_with(value: Value | None, names: set[str]) -> bool:
    """True when ``value`` reads one of the ``with:`` bindings ``names`` (``with.X``; a ``with``
    read by a computed key counts as reading them all)."""
    if value is None or not names:
        return False
    from checker.parse.values import templates

    for tv in templates(value):
        for island in tv.template.islands if tv.template is not None else ():
            for ref in references(island.expr) if island.expr is not None else ():
                if ref.root == "with" and (not ref.path or ref.path[0] is None or ref.path[0] in names):
                    return True
    return False


def plain(value: Any) -> Any:
    """A JSON-friendly copy of run-time data (tuples to lists, bytes described)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, bytes | bytearray):
        return {"bytes": len(value)}
    return value


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` arrays/objects deep (iterative: a hostile
    value cannot exhaust the stack here, and every recursive walker after this check is safe)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict | list | tuple):
            if depth >= limit:
                return True
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return False
