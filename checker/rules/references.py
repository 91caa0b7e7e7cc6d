"""Expressions and references: NIKA-VAR-001/005/008/020/021 and NIKA-VALUES-001..003 (04, 03 §boundary).

Every ``${{ … }}`` island was parsed once by the compiler; here each reference is resolved
against the envelope's declarations and the position it sits in, by the judge of its root
(``_ROOTS``); ``tasks.*`` reads are judged in :mod:`checker.rules.task_refs`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Edit, Fix
from checker.core.records import record
from checker.core.source import Span
from checker.core.suggest import did_you_mean
from checker.core.vocab import LOOP_ROOTS, ROOTS, VALUE_ROOTS, WHERE_TEXT, Where, in_scope
from checker.expr import Island, is_boolean_shaped
from checker.expr.refs import Ref
from checker.model.workflow import ExprSite
from checker.rules.support.context import RuleContext
from checker.rules.task_refs import tasks_ref

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


@record
class _Read:
    """One reference being judged: the site it sits in, the island and the reference, its span."""

    ctx: RuleContext
    site: ExprSite
    declared: dict[str, set[str]]
    island: Island
    ref: Ref
    span: Span

    def finding(self, code: str, message: str, help: str | None, fixes: tuple[Fix, ...] = ()) -> Diagnostic:
        return report(code, self.span, message, help, task=self.site.task, fixes=fixes)

    def first_name(self) -> str | None:
        """The name after the root (``inputs.<name>``), or None when there is none."""
        path = self.ref.path
        return path[0] if path and isinstance(path[0], str) else None


def _site_refs(ctx: RuleContext, site: ExprSite, declared: dict[str, set[str]]) -> Iterator[Diagnostic]:
    """Each reference of the site, judged by the handler of its root (an unknown root by ``_unknown_root``)."""
    for island, ref, span in site.references():
        handler = _ROOTS.get(ref.root, _unknown_root)
        yield from handler(_Read(ctx, site, declared, island, ref, span))


def _value_read(r: _Read) -> Iterator[Diagnostic]:
    """``inputs``/``config``/``const``/``secrets``: in scope (no secret in ``when:``), a declared name."""
    root, site = r.ref.root, r.site
    if not in_scope(root, site.where):
        yield r.finding(
            "NIKA-VAR-001",
            f"{root} cannot be read in {WHERE_TEXT.get(site.where, 'here')}",
            "Decide on "
            + ", ".join(x for x in VALUE_ROOTS if in_scope(x, site.where))
            + (" or `with:` values" if in_scope("with", site.where) else "")
            + " instead.",
        )
        return
    name = r.first_name()
    if name is None:
        yield r.finding(
            "NIKA-VAR-001", f"`{root}` must be followed by a declared name", f"Read one entry, e.g. `{root}.<name>`."
        )
    elif name not in r.declared[root] and not r.ref.in_has:
        yield _unknown(root, name, r.declared[root], r.span, site, r.island, r.ref)


def _with_read(r: _Read) -> Iterator[Diagnostic]:
    """``with.<name>``: in scope in a task's own positions, naming one of its bindings."""
    site = r.site
    task = r.ctx.workflow.tasks.get(site.task) if site.task else None
    name = r.first_name()
    if site.where == Where.WITH and task is not None:
        yield r.finding(
            "NIKA-VAR-001",
            f"a `with:` binding cannot read its sibling `with.{name or '…'}`: the bindings are made together,"
            " before any of them can be read",
            "Write the sibling's expression in this binding too, or combine the values where the body reads them.",
        )
    elif not in_scope("with", site.where) or task is None:
        yield r.finding(
            "NIKA-VAR-001",
            f"`with.*` is not in scope in {WHERE_TEXT.get(site.where, 'here')}",
            "`with.*` reads the current task's bindings; outside a task body use `tasks.<id>.output`.",
        )
    elif name is None:
        yield r.finding("NIKA-VAR-001", "`with` must be followed by a binding name", None)
    elif task.binding(name) is None and not r.ref.in_has:
        names = [b.name for b in task.with_]
        yield _unknown("with", name, set(names), r.span, site, r.island, r.ref)


def _tasks_read(r: _Read) -> Iterator[Diagnostic]:
    yield from tasks_ref(r.ctx, r.site, r.ref, r.span)


def _loop_read(r: _Read) -> Iterator[Diagnostic]:
    """``item``/``index``: only inside a ``for_each`` task's body, never in its own collection."""
    root, site = r.ref.root, r.site
    if site.where == "for_each":
        yield r.finding(
            "NIKA-VAR-005",
            f"`{root}` is not defined yet in the `for_each:` expression itself",
            "The collection is computed before the fan-out; read `item`/`index` in the body or `with:`.",
        )
    elif not (site.in_for_each and in_scope(root, site.where)):
        yield r.finding(
            "NIKA-VAR-001",
            f"`{root}` only exists inside a `for_each` task's body",
            "Add `for_each:` to this task, or bind the value through `with:`.",
        )


def _vars_read(r: _Read) -> Iterator[Diagnostic]:
    yield r.finding(
        "NIKA-VALUES-001",
        "`vars.*` no longer exists",
        "Read per-run values from `inputs.*` and fixed values from `const.*`.",
    )


def _env_read(r: _Read) -> Iterator[Diagnostic]:
    yield r.finding(
        "NIKA-VALUES-002",
        "`env.*` no longer exists",
        "Read deployment settings from `config.*` and credentials from `secrets.*`.",
    )


def _foreign_read(r: _Read) -> Iterator[Diagnostic]:
    yield r.finding(
        "NIKA-VALUES-003",
        f"`{r.ref.root}.*` is not a Nika value namespace",
        "Values come from exactly four places: `inputs`, `config`, `const` and `secrets`.",
    )


def _unknown_root(r: _Read) -> Iterator[Diagnostic]:
    root = r.ref.root
    guess = did_you_mean(root, ROOTS)
    yield r.finding(
        "NIKA-VAR-001",
        f"unknown name `{root}`",
        (f"Did you mean `{guess}`? " if guess else "")
        + f"Expressions read {', '.join(x for x in ROOTS if x not in LOOP_ROOTS)}"
        + f" (and {'/'.join(LOOP_ROOTS)} in a for_each).",
        _rename_root_fix(r.site, r.island, r.ref, guess),
    )


# The judge of each root a reference may start with (precedence as the roots are listed: a value
# namespace, then `with`, `tasks`, the loop variables, the retired namespaces, the foreign ones).
_ROOTS: dict[str, Callable[[_Read], Iterator[Diagnostic]]] = {
    **dict.fromkeys(FOREIGN_VALUE_ROOTS, _foreign_read),
    "vars": _vars_read,
    "env": _env_read,
    **dict.fromkeys(LOOP_ROOTS, _loop_read),
    "tasks": _tasks_read,
    "with": _with_read,
    **dict.fromkeys(VALUE_ROOTS, _value_read),
}


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
