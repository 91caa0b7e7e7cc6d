"""Expressions that fail on every run by their declared types (cel-subset/0.1, 04, 09).

Typed ``inputs:``, ``config:`` and ``const:`` values, a producer's ``returns:``, ``with:`` bindings
and the ``item`` of a ``for_each`` give operands a static type
(:mod:`checker.rules.support.expr_typing`). An operation that fails for every value of those types
— ``inputs.flag.startsWith('a')`` on a ``bool`` input, ``with.n < "5"`` on an integer binding,
``inputs.p.x`` on a string, ``const.hosts.startsWith('a')`` on a list — is reported here with the
code and the words of the run's own evaluator (NIKA-VAR-006, NIKA-VAR-001), as a warning: both are
failures at evaluation (05), so the workflow stays valid. A member read outside
the closed object a producer's ``returns:`` declares is NIKA-VAR-003 (04 §static binding
validation: the ``returns:`` walk). Unknown types and the parts of an expression a run may skip
(the right of ``&&``/``||``, the branches of ``?:``, the argument of ``has()``) are never judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import report, run_failure
from checker.core.diagnostics import Diagnostic, Edit, Fix
from checker.core.suggest import did_you_mean
from checker.expr.evaluate import UNRESOLVED
from checker.expr.nodes import Binary, Call, Expr, Ident, Index, Literal, Member, MethodCall
from checker.model import typesys
from checker.model.workflow import ExprSite, Workflow
from checker.rules.support.context import RuleContext
from checker.rules.support.expr_typing import Failure, Typer
from checker.rules.support.value_types import describe, members


def check_typed_expressions(ctx: RuleContext) -> Iterator[Diagnostic]:
    typer = Typer(ctx.workflow)
    memo = ctx.memo
    if memo is None:
        for site in ctx.sites:
            yield from _site_findings(typer, site)
        return
    # With the language server's memo, a site found clean is not judged again while everything
    # its types were read from is the very same: its task, each task it read (a binding, a
    # producer's `returns:`), and the envelope's declarations (compared by value).
    wf = ctx.workflow
    envelope = memo.token("expr_types.envelope", _declarations(wf))
    tasks = wf.tasks
    prev, cur = memo.tables("expr_types")
    for site in ctx.sites:
        own = tasks.get(site.task) if site.task else None
        hit = prev.get(id(site))
        if hit is not None and hit[0] is site:
            deps, names = hit[1], hit[2]
            if deps[0] is envelope and deps[1] is own and deps[2:] == tuple(map(tasks.get, names)):
                cur[id(site)] = hit
                continue
        typer.reads = set()
        found = tuple(_site_findings(typer, site))
        if not found:
            names = tuple(sorted(n for n in typer.reads if n))
            cur[id(site)] = (site, (envelope, own, *map(tasks.get, names)), names)
        yield from found


def _declarations(wf: Workflow) -> tuple[object, ...]:
    """The envelope's declarations the types are read from, as plain values (rebuilt by every
    analysis, so compared by value: :meth:`RuleMemo.token`)."""
    return tuple(
        (kind, d.name, d.value.to_python())
        for kind, decls in (("types", wf.types), ("inputs", wf.inputs), ("config", wf.config), ("const", wf.const))
        for d in decls
    )


def _site_findings(typer: Typer, site: ExprSite) -> Iterator[Diagnostic]:
    if site.where == "output" or site.template.errors:
        return
    for island in site.template.islands:
        if island.expr is None:
            continue
        found = typer.failure(island.expr, (site.task, site.where, site.in_for_each))
        if found is None:
            continue
        error, node = found.error, found.node
        start, end = island.expr_start + error.start, island.expr_start + max(error.end, error.start + 1)
        producer = _producer_output(node)
        if producer is not None and error.code == UNRESOLVED:
            yield _outside_returns(site, found, producer, start, end, island.expr_start)
            continue
        text = site.value.value[island.expr_start : island.expr_start + island.expr.end]
        yield run_failure(
            error.code,
            site.span_of(start, end),
            f"{error.message} (by the declared types)",
            _typed(found, text) + _repair(node),
            task=site.task,
        )


def _typed(found: Failure, text: str) -> str:
    """What the declared types say of the operands (``with.n` is integer; …``)."""
    said = [
        f"`{text[e.start : e.end]}` is {describe(t)}"
        for e, t in found.operands
        if t is not typesys.UNKNOWN and not isinstance(e, Literal)
    ]
    return ("; ".join(said) + ". ") if said else ""


def _repair(node: Expr) -> str:
    if isinstance(node, Member | Index):
        return "Read a member the type has, or change the type where it is declared."
    if isinstance(node, Call | MethodCall):
        return f"Give `{node.name}` a value of a type it takes, or change the declared type."
    if isinstance(node, Binary) and node.op not in ("&&", "||"):
        return "Make both sides one type, or change the declared type."
    return "Use a boolean here, or change the declared type."


def _producer_output(node: Expr) -> str | None:
    """The producer when ``node`` steps into ``tasks.<p>.output`` directly (the `returns:` walk)."""
    obj = node.obj if isinstance(node, Member | Index) else None
    while isinstance(obj, Member | Index):
        if isinstance(obj, Member) and obj.name == "output" and isinstance(obj.obj, Member):
            root = obj.obj
            if isinstance(root.obj, Ident) and root.obj.name == "tasks":
                return root.name
        obj = obj.obj
    return None


def _outside_returns(site: ExprSite, found: Failure, producer: str, start: int, end: int, at: int) -> Diagnostic:
    """NIKA-VAR-003: the `returns:` walk (04 §static binding validation), with a rename when one
    declared member is close."""
    node = found.node
    step = node.name if isinstance(node, Member) else "[…]"
    level = found.operands[0][1]
    names = sorted({n for m in members(level) if isinstance(m, typesys.Obj) for n, _ in m.fields})
    guess = did_you_mean(step, names) if names and isinstance(node, Member) else None
    fixes: tuple[Fix, ...] = ()
    if guess is not None:
        name_span = site.span_of(at + node.end - len(step), at + node.end)
        if name_span != site.span:
            fixes = (Fix(f"Change to `.{guess}`", (Edit(name_span, guess),)),)
    return report(
        "NIKA-VAR-003",
        site.span_of(start, end),
        f"this read is outside the `returns:` type of `{producer}`: {found.error.message}",
        (f"Did you mean `.{guess}`? " if guess else "")
        + (f"Declared here: {', '.join(names)}; " if names else "")
        + "fix the path, or add the member to the type.",
        task=site.task,
        fixes=fixes,
    )


__all__ = ["check_typed_expressions"]
