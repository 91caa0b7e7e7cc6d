"""References to other tasks (``tasks.<id>.<field>``, NIKA-VAR-001/020/021, NIKA-DAG-002): readable
only where the graph can order them, naming a declared task and one of its fields; outside those
positions the repair binds the read in ``with:`` (:func:`_hoist_fix`).
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Edit, Fix
from checker.core.source import Span
from checker.core.suggest import did_you_mean
from checker.core.vocab import WHERE_TEXT, in_scope
from checker.expr.refs import Ref
from checker.model.workflow import TASK_FIELDS, ExprSite
from checker.rules.support.context import RuleContext


def _hoist_fix(
    ctx: RuleContext, site: ExprSite, target: str, span: Span, bound: str | None = None, applicability: str = "safe"
) -> tuple[Fix, ...]:
    """The VAR-021 repair as an edit: bind the read in `with:` and read `with.<name>` instead.

    ``bound`` is the expression to bind when it differs from the text at ``span`` (a misspelled
    task or field, corrected to its unique did-you-mean).
    """
    from checker.rules.support.fixes import hoist_into_with

    task = ctx.workflow.tasks.get(site.task or "")
    if task is None or site.where not in ("body", "when", "for_each") or target == task.id:
        return ()
    if task.id in ctx.graph.upstream(target):  # the new edge would close a cycle
        return ()
    expr = bound if bound is not None else ctx.source.text[span.start : span.end]
    for b in task.with_:  # already bound: read the binding
        raw = getattr(b.value, "raw", None)
        if isinstance(raw, str) and raw.replace(" ", "") == f"${{{{{expr}}}}}".replace(" ", ""):
            return (Fix(f"Read `with.{b.name}`", (Edit(span, f"with.{b.name}"),), applicability),)
    taken = {b.name for b in task.with_}
    name = target if target not in TASK_FIELDS else f"{target}_value"
    n = 2
    while name in taken:
        name, n = f"{target}_{n}", n + 1
    fix = hoist_into_with(ctx.source.text, task, span, name, bound=bound, applicability=applicability)
    return (fix,) if fix else ()


def _corrected_read(ctx: RuleContext, ref: Ref, span: Span, name: str) -> tuple[str, str | None] | None:
    """``(shown, bound)`` for a `tasks.*` read that must be bound in `with:` under task ``name``.

    ``shown`` is the read with the task and field corrected (for the help), ``bound`` the same
    when it differs from the source text (for the fix), else ``None``. ``None`` overall when
    the field is misspelled beyond a unique guess: binding it would only move the error.
    """
    path = ref.path
    target = path[0]
    fld = path[1] if len(path) > 1 and isinstance(path[1], str) else None
    fixed_fld = fld
    if fld is not None:
        producer = ctx.workflow.tasks[name]
        choices = TASK_FIELDS | {b.name for b in producer.output}
        if fld not in choices:
            fixed_fld = did_you_mean(fld, sorted(choices))
            if fixed_fld is None:
                return None
    written = f"tasks.{target}" + (f".{fld}" if fld is not None else "")
    wanted = f"tasks.{name}" + (f".{fixed_fld}" if fixed_fld is not None else ".output")
    text = ctx.source.text[span.start : span.end]
    if fld is None:
        return wanted, None  # a bare `tasks.x`: shown, not rewritten
    if written == wanted:
        return wanted, None
    if not text.startswith(written):  # bracket notation or spacing: no safe textual rewrite
        return wanted, None
    return wanted, wanted + text[len(written) :]


def tasks_ref(ctx: RuleContext, site: ExprSite, ref: Ref, span: Span) -> Iterator[Diagnostic]:
    """A ``tasks.<id>.<field>`` read: in a position the graph orders, of a declared task and field."""
    wf = ctx.workflow
    path = ref.path
    if not path or not isinstance(path[0], str):
        yield report(
            "NIKA-VAR-020",
            span,
            "`tasks` alone is not a value",
            "Read one field of one task, e.g. `tasks.<id>.output`.",
            task=site.task,
        )
        return
    target = path[0]
    if not in_scope("tasks", site.where):
        yield _out_of_position(ctx, site, ref, span, target)
        return
    if site.where == "finally" and target != site.task:
        yield report(
            "NIKA-VAR-021",
            span,
            f"an `on_finally:` step may only read its own task, not `tasks.{target}`",
            f"Read `tasks.{site.task}.…`, or move this cleanup into a task with `after: {{{target}: terminal}}`.",
            task=site.task,
        )
        return
    producer = wf.tasks.get(target)
    if producer is None:
        yield _no_such_task(ctx, site, span, target)
        return
    if len(path) < 2 or not isinstance(path[1], str):
        yield report(
            "NIKA-VAR-020",
            span,
            f"`tasks.{target}` is the task's whole record, not a value",
            f"Read one field: `tasks.{target}.output`, `.status`, `.error` or a declared `output:` binding.",
            task=site.task,
        )
        return
    fld = path[1]
    bindings = {b.name for b in producer.output}
    if fld not in TASK_FIELDS and fld not in bindings and not ref.in_has:
        choices = sorted(TASK_FIELDS | bindings)
        guess = did_you_mean(fld, choices)
        fixes: tuple[Fix, ...] = ()
        prefix = f"tasks.{target}."
        if guess and ctx.source.text.startswith(prefix + fld, span.start):
            at = span.start + len(prefix)
            fixes = (Fix(f"Change to `{guess}`", (Edit(Span(at, at + len(fld)), guess),)),)
        yield report(
            "NIKA-VAR-001",
            span,
            f"task `{target}` has no field `{fld}`",
            (f"Did you mean `{guess}`? " if guess else "") + f"Available: {', '.join(choices)}.",
            task=site.task,
            fixes=fixes,
        )


def _out_of_position(ctx: RuleContext, site: ExprSite, ref: Ref, span: Span, target: str) -> Diagnostic:
    """NIKA-VAR-021: ``tasks.*`` where the graph cannot order it; the repair binds it in ``with:``."""
    wf = ctx.workflow
    known = target in wf.tasks
    name = target if known else did_you_mean(target, list(wf.tasks))
    corrected = _corrected_read(ctx, ref, span, name) if name is not None else None
    fixes: tuple[Fix, ...] = ()
    if name is not None and corrected is not None:
        shown, bound = corrected
        repair = f"Bind it in `with:` (`{name}: ${{{{ {shown} }}}}`) and read `with.{name}` here."
        if bound is not None or known:  # a guessed task changes what the task waits for: review it
            fixes = _hoist_fix(ctx, site, name, span, bound, "safe" if known else "maybe-incorrect")
    elif name is not None:
        repair = f"Read a field of `{name}` (`output`, `status`, …), bound in `with:`; only `with.*` is readable here."
    else:  # binding a task that does not exist would only trade this finding for NIKA-DAG-002
        repair = "Name a task declared under `tasks:`, bound in `with:`; only `with.*` is readable here."
    return report(
        "NIKA-VAR-021",
        span,
        f"`tasks.{target}` cannot be read in {WHERE_TEXT.get(site.where, 'this position')}",
        repair,
        task=site.task,
        fixes=fixes,
    )


def _no_such_task(ctx: RuleContext, site: ExprSite, span: Span, target: str) -> Diagnostic:
    """A read of a task nobody declares (NIKA-DAG-002 in ``with:``, else NIKA-VAR-001)."""
    wf = ctx.workflow
    guess = did_you_mean(target, [t for t in wf.tasks if t != site.task])  # never a self-reference
    code = "NIKA-DAG-002" if site.where == "with" else "NIKA-VAR-001"
    rename: tuple[Fix, ...] = ()
    if guess and ctx.source.text.startswith(f"tasks.{target}", span.start):  # a unique did-you-mean
        at = span.start + len("tasks.")
        rename = (Fix(f"Change to `{guess}`", (Edit(Span(at, at + len(target)), guess),)),)
    return report(
        code,
        span,
        f"no task named `{target}`",
        f"Did you mean `{guess}`?" if guess else "Reference a task declared under `tasks:`.",
        task=site.task,
        fixes=rename,
    )
