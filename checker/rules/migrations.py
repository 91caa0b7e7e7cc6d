"""Dead forms of earlier drafts that need the whole model to migrate: ``depends_on`` (03).

``depends_on: [a]`` admitted its task when ``a`` settled ``success`` or ``skipped``. The rewrite
``after: {a: success}`` is offered as a safe fix only when it is provably the same schedule: every
named producer can never settle ``skipped``, the task has no ``when:`` and no ``after:`` of its
own, and the list is plain task names. Anything else is reported without a fix: the author must
choose (03 §depends_on: equivalence or stop).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Edit, Fix
from checker.core.vocab import Status
from checker.model.workflow import Task
from checker.parse.values import ListValue, ScalarValue, TemplateValue
from checker.rules.dag import reachable_states
from checker.rules.support.context import RuleContext


def check_depends_on(ctx: RuleContext) -> Iterator[Diagnostic]:
    for task in ctx.workflow.tasks.values():
        entry = task.value.entry("depends_on")
        if entry is None:
            continue
        fix, why = _migration(ctx, task)
        help_text = (
            "Pass data with `with: {x: ${{ tasks.a.output }}}` (the reference is the edge) "
            "or order tasks with `after: {a: success}`."
        )
        if fix is None and why:
            help_text += f" (No automatic rewrite: {why}.)"
        yield report(
            "NIKA-PARSE-024",
            entry.key.span,
            "`depends_on:` no longer exists",
            help_text,
            task=task.id,
            fixes=(fix,) if fix else (),
        )


def _names(task: Task) -> list[str] | None:
    v = task.value.get("depends_on")
    items = v.items if isinstance(v, ListValue) else (v,) if isinstance(v, ScalarValue) else ()
    out: list[str] = []
    for it in items:
        if isinstance(it, TemplateValue) or not isinstance(it, ScalarValue) or not isinstance(it.value, str):
            return None
        out.append(it.value)
    return out or None


def _migration(ctx: RuleContext, task: Task) -> tuple[Fix | None, str | None]:
    names = _names(task)
    if names is None:
        return None, "the list is not plain task names"
    tasks = ctx.workflow.tasks
    missing = [n for n in names if n not in tasks]
    if missing:
        return None, f"`{missing[0]}` is not a task"
    if len(set(names)) != len(names) or task.id in names:
        return None, "the list repeats a name or names the task itself"
    skippable = [n for n in names if Status.SKIPPED in reachable_states(tasks[n])]
    if skippable:
        return None, f"`{skippable[0]}` may settle skipped, which `after: {{{skippable[0]}: success}}` would refuse"
    if task.when is not None:
        return None, "the task has a `when:`, which the old gate may have replaced"
    if "after" in task.value:
        return None, "the task already has an `after:` block"
    entry = task.value.entry("depends_on")
    assert entry is not None
    if task.value.flow:
        return None, "the task is written in flow style"
    text = ctx.source.text
    tail_end = text.find("\n", entry.value.span.end)
    tail = text[entry.value.span.end : len(text) if tail_end == -1 else tail_end]
    if tail.strip() and not tail.strip().startswith("#"):
        return None, "the entry shares its line with other text"
    new = "after: { " + ", ".join(f"{n}: success" for n in names) + " }"
    span = entry.key.span.cover(entry.value.span)
    comments = _COMMENT.findall(text[span.start : span.end])  # keep what the author wrote inside
    edit = Edit(span, new + "".join(f"  {c.strip()}" for c in comments))
    return Fix(f"Replace with `{new}`", (edit,)), None


_COMMENT = re.compile(r"(?:^|(?<=\s))(#[^\n]*)", re.M)
