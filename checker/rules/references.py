"""Expressions and references: NIKA-VAR-001/005/008/020/021 and NIKA-VALUES-001..003 (04, 03 §boundary).

Every ``${{ … }}`` island was parsed once by the compiler; here each reference is resolved
against the envelope's declarations and the position it sits in.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Edit, Fix
from checker.core.source import Span
from checker.core.suggest import did_you_mean
from checker.core.vocab import LOOP_ALLOWED, TASKS_ALLOWED, VALUE_ROOTS, WITH_ALLOWED
from checker.expr import Island, is_boolean_shaped
from checker.expr.refs import Ref
from checker.model.workflow import TASK_FIELDS, ExprSite
from checker.rules.support.context import RuleContext

# Value namespaces of other tools (or of older Nika drafts) that are refused outright.
FOREIGN_VALUE_ROOTS = frozenset(
    {
        "params",
        "parameters",
        "args",
        "arguments",
        "variables",
        "var",
        "context",
        "ctx",
        "settings",
        "globals",
        "defaults",
    }
)
KNOWN_ROOTS = ("inputs", "config", "const", "secrets", "with", "tasks", "item", "index")

_WHERE_TEXT = {
    "when": "`when:`",
    "for_each": "`for_each:`",
    "body": "a verb field",
    "with": "`with:`",
    "recover": "`on_error.recover`",
    "outputs": "`outputs:`",
    "finally": "`on_finally:`",
    "output": "an `output:` jq binding",
    "envelope": "an envelope field",
}


def check_expressions(ctx: RuleContext) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    declared = {root: wf.section_names(root) for root in VALUE_ROOTS}
    memo = ctx.memo
    if memo is None:
        for site in ctx.sites:
            yield from _site_findings(ctx, site, declared)
        return
    # With the language server's memo, a site found clean is not judged again while what its
    # findings depend on is the very same: the declared names, its task, each task it reads.
    declared = memo.token("references.declared", declared)
    tasks = wf.tasks
    prev, cur = memo.tables("references")
    for site in ctx.sites:
        hit = prev.get(id(site))
        if hit is not None and hit[0] is site:
            deps, names = hit[1], hit[2]  # the ids the site reads: a function of the site alone
            if (
                deps[0] is declared
                and deps[1] is (tasks.get(site.task) if site.task else None)
                and (
                    not names
                    or (deps[2] is tasks.get(names[0]) if len(names) == 1 else deps[2:] == tuple(map(tasks.get, names)))
                )
            ):
                cur[id(site)] = hit
                continue
        found = tuple(_site_findings(ctx, site, declared))
        if not found:
            names = _task_names(site)
            task = tasks.get(site.task) if site.task else None
            cur[id(site)] = (site, (declared, task, *[tasks.get(n) for n in names]), names)
        yield from found


def _task_names(site: ExprSite) -> tuple[str, ...]:
    """The task id each `tasks.<id>` reference of ``site`` names."""
    return tuple(
        ref.path[0]
        for _island, ref, _span in site.references()
        if ref.root == "tasks" and ref.path and isinstance(ref.path[0], str)
    )


def _site_findings(ctx: RuleContext, site: ExprSite, declared: dict[str, set[str]]) -> Iterator[Diagnostic]:
    if site.where == "output":
        for island in site.template.islands:
            yield report(
                "NIKA-VAR-005",
                site.span_of(island.start, island.end),
                "an `output:` binding is a pure jq program and cannot hold `${{ … }}`",
                "Compute the dynamic part in `with:` or in the task body, and keep the jq path literal.",
                task=site.task,
            )
        return
    for err in site.template.errors:
        yield report(
            err.code,
            site.span_of(err.start, max(err.end, err.start + 1)),
            err.message,
            "Write the expression in the cel-subset/0.1 grammar (see `nika explain " + err.code + "`).",
            task=site.task,
        )
    if site.where == "when" and site.template.is_single_island:
        island = site.template.islands[0]
        if island.expr is not None and not is_boolean_shaped(island.expr):
            yield report(
                "NIKA-VAR-005",
                site.span_of(island.expr_start + island.expr.start, island.expr_start + island.expr.end),
                "`when:` must be a boolean expression, not a bare value",
                "Compare it explicitly, e.g. `${{ with.count > 0 }}` or `${{ has(with.x) }}`.",
                task=site.task,
            )
    yield from _site_refs(ctx, site, declared)


def _site_refs(ctx: RuleContext, site: ExprSite, declared: dict[str, set[str]]) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    task = wf.tasks.get(site.task) if site.task else None
    for island, ref, span in site.references():
        root = ref.root
        path = ref.path
        where_text = _WHERE_TEXT.get(site.where, "here")
        if root in VALUE_ROOTS:
            if root == "secrets" and site.where == "when":
                yield report(
                    "NIKA-VAR-001",
                    span,
                    "secrets cannot be read in `when:`",
                    "Decide on inputs, config, const or `with:` values instead.",
                    task=site.task,
                )
                continue
            name = path[0] if path and isinstance(path[0], str) else None
            if name is None:
                yield report(
                    "NIKA-VAR-001",
                    span,
                    f"`{root}` must be followed by a declared name",
                    f"Read one entry, e.g. `{root}.<name>`.",
                    task=site.task,
                )
            elif name not in declared[root] and not ref.in_has:
                yield _unknown(root, name, declared[root], span, site, island, ref)
            continue
        if root == "with":
            name = path[0] if path and isinstance(path[0], str) else None
            if site.where not in WITH_ALLOWED or task is None:
                yield report(
                    "NIKA-VAR-001",
                    span,
                    f"`with.*` is not in scope in {where_text}",
                    "`with.*` reads the current task's bindings; outside a task body use `tasks.<id>.output`.",
                    task=site.task,
                )
            elif name is None:
                yield report("NIKA-VAR-001", span, "`with` must be followed by a binding name", None, task=site.task)
            elif task.binding(name) is None and not ref.in_has:
                names = [b.name for b in task.with_]
                yield _unknown("with", name, set(names), span, site, island, ref)
            continue
        if root == "tasks":
            yield from _tasks_ref(ctx, site, ref, span)
            continue
        if root in ("item", "index"):
            if site.where == "for_each":
                yield report(
                    "NIKA-VAR-005",
                    span,
                    f"`{root}` is not defined yet in the `for_each:` expression itself",
                    "The collection is computed before the fan-out; read `item`/`index` in the body or `with:`.",
                    task=site.task,
                )
            elif not (site.in_for_each and site.where in LOOP_ALLOWED):
                yield report(
                    "NIKA-VAR-001",
                    span,
                    f"`{root}` only exists inside a `for_each` task's body",
                    "Add `for_each:` to this task, or bind the value through `with:`.",
                    task=site.task,
                )
            continue
        if root == "vars":
            yield report(
                "NIKA-VALUES-001",
                span,
                "`vars.*` no longer exists",
                "Read per-run values from `inputs.*` and fixed values from `const.*`.",
                task=site.task,
            )
        elif root == "env":
            yield report(
                "NIKA-VALUES-002",
                span,
                "`env.*` no longer exists",
                "Read deployment settings from `config.*` and credentials from `secrets.*`.",
                task=site.task,
            )
        elif root in FOREIGN_VALUE_ROOTS:
            yield report(
                "NIKA-VALUES-003",
                span,
                f"`{root}.*` is not a Nika value namespace",
                "Values come from exactly four places: `inputs`, `config`, `const` and `secrets`.",
                task=site.task,
            )
        else:
            guess = did_you_mean(root, KNOWN_ROOTS)
            yield report(
                "NIKA-VAR-001",
                span,
                f"unknown name `{root}`",
                (f"Did you mean `{guess}`? " if guess else "")
                + "Expressions read inputs, config, const, secrets, with, tasks (and item/index in a for_each).",
                task=site.task,
                fixes=_rename_root_fix(site, island, ref, guess),
            )


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


def _tasks_ref(ctx: RuleContext, site: ExprSite, ref: Ref, span: Span) -> Iterator[Diagnostic]:
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
    if site.where not in TASKS_ALLOWED:
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
            repair = (
                f"Read a field of `{name}` (`output`, `status`, …), bound in `with:`; only `with.*` is readable here."
            )
        else:  # binding a task that does not exist would only trade this finding for NIKA-DAG-002
            repair = "Name a task declared under `tasks:`, bound in `with:`; only `with.*` is readable here."
        yield report(
            "NIKA-VAR-021",
            span,
            f"`tasks.{target}` cannot be read in {_WHERE_TEXT.get(site.where, 'this position')}",
            repair,
            task=site.task,
            fixes=fixes,
        )
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
        guess = did_you_mean(target, [t for t in wf.tasks if t != site.task])  # never a self-reference
        code = "NIKA-DAG-002" if site.where == "with" else "NIKA-VAR-001"
        rename: tuple[Fix, ...] = ()
        if guess and ctx.source.text.startswith(f"tasks.{target}", span.start):  # a unique did-you-mean
            at = span.start + len("tasks.")
            rename = (Fix(f"Change to `{guess}`", (Edit(Span(at, at + len(target)), guess),)),)
        yield report(
            code,
            span,
            f"no task named `{target}`",
            f"Did you mean `{guess}`?" if guess else "Reference a task declared under `tasks:`.",
            task=site.task,
            fixes=rename,
        )
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


def _unknown(
    root: str, name: str, declared: set[str], span: Span, site: ExprSite, island: Island, ref: Ref
) -> Diagnostic:
    guess = did_you_mean(name, sorted(declared))
    where = {
        "inputs": "`inputs:`",
        "config": "`config:`",
        "const": "`const:`",
        "secrets": "`secrets:`",
        "with": "this task's `with:`",
    }[root]
    fixes: tuple[Fix, ...] = ()
    if guess:
        # The name is the first member after the root: `root.` then name.
        start = island.expr_start + ref.start + len(root) + 1
        name_span = site.span_of(start, start + len(name))
        if name_span != site.span:
            fixes = (Fix(f"Change to `{root}.{guess}`", (Edit(name_span, guess),)),)
    return report(
        "NIKA-VAR-001",
        span,
        f"`{root}.{name}` is not declared",
        f"Did you mean `{root}.{guess}`?" if guess else f"Declare `{name}` under {where}.",
        task=site.task,
        fixes=fixes,
    )


def _rename_root_fix(site: ExprSite, island: Island, ref: Ref, guess: str | None) -> tuple[Fix, ...]:
    if not guess:
        return ()
    start = island.expr_start + ref.start
    span = site.span_of(start, start + len(ref.root))
    if span == site.span:
        return ()
    return (Fix(f"Change to `{guess}`", (Edit(span, guess),)),)
