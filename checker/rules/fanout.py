"""``for_each:`` over a value the check can see is not a list (NIKA-VAR-006, 03 §for_each).

The run fails such a fan-out with NIKA-VAR-006 before any item runs; when the value is written
in the file (a quoted string with no ``${{ }}``) or comes only from ``const:``, the check knows it
too and says so now, as a warning: spec 03 makes it "an evaluation error", so the workflow stays
valid (an ``on_error:`` may recover it, a test may expect it). A value of a declared type that is
never a list (a typed input, a binding of a producer's `returns:`, a string template;
:mod:`checker.rules.support.expr_typing`) is reported the same way; a value of unknown type is left to the run.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import run_failure
from checker.core.diagnostics import Diagnostic
from checker.core.display import kind_of
from checker.core.vocab import Where
from checker.model import typesys
from checker.parse.values import ListValue, ScalarValue, TemplateValue, Value
from checker.rules.support import value_types as vt
from checker.rules.support.context import RuleContext
from checker.rules.support.expr_typing import Typer
from checker.rules.support.flow import Unresolvable, resolve, template_refs


def _never_a_list(t: typesys.Type) -> bool:
    for m in vt.members(t):
        if m is typesys.UNKNOWN or isinstance(m, typesys.Arr):
            return False
        if isinstance(m, vt.Known) and isinstance(m.value, list):
            return False
    return t is not typesys.NEVER


def check_for_each_shape(ctx: RuleContext) -> Iterator[Diagnostic]:
    typer = Typer(ctx.workflow)
    for task in ctx.workflow.tasks.values():
        fe = task.for_each
        if fe is None or isinstance(fe, ListValue):
            continue
        if isinstance(fe, TemplateValue):
            if any(ref.root != "const" for ref, _span in template_refs(fe)):
                if fe.template is None or fe.template.errors:
                    continue
                if _never_a_list(typer.value_type(fe, (task.id, Where.FOR_EACH, True))):
                    yield _not_a_list(task.id, fe, "a value whose declared type is never a list")
                continue
            try:
                value = resolve(ctx, task, fe)
            except Unresolvable:
                continue
        elif isinstance(fe, ScalarValue):
            value = fe.value
        else:
            continue
        if isinstance(value, list):
            continue
        yield _not_a_list(task.id, fe, f"{kind_of(value)}, not a list")


def _not_a_list(task: str, fe: Value, what: str) -> Diagnostic:
    return run_failure(
        "NIKA-VAR-006",
        fe.span,
        f"`for_each:` of task `{task}` iterates over {what}",
        "Write the items as a YAML list, or point `for_each:` at an array (`${{ const.items }}`).",
        task=task,
    )
