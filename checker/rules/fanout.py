"""``for_each:`` over a value the check can see is not a list (NIKA-VAR-006, 03 §for_each).

The run fails such a fan-out with NIKA-VAR-006 before any item runs; when the value is written
in the file (a quoted string with no ``${{ }}``) or comes only from ``const:``, the check knows it
too and says so now. Anything that depends on inputs, config, tasks or secrets is left to the run.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic
from checker.core.display import kind_of
from checker.parse.values import ListValue, ScalarValue, TemplateValue
from checker.rules.support.context import RuleContext
from checker.rules.support.flow import Unresolvable, resolve, template_refs


def check_for_each_shape(ctx: RuleContext) -> Iterator[Diagnostic]:
    for task in ctx.workflow.tasks.values():
        fe = task.for_each
        if fe is None or isinstance(fe, ListValue):
            continue
        if isinstance(fe, TemplateValue):
            if any(ref.root != "const" for ref, _span in template_refs(fe)):
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
        what = "a value that is not a list" if isinstance(fe, TemplateValue) else kind_of(value)
        yield report(
            "NIKA-VAR-006",
            fe.span,
            f"task `{task.id}`: `for_each:` iterates over {what}; the run stops here with NIKA-VAR-006",
            "Write the items as a YAML list, or point `for_each:` at an array (`${{ const.items }}`).",
            task=task.id,
        )
