"""Expressions whose value is known at check (cel-subset/0.1, spec 04): a sub-expression that
reads nothing (`size(1)`, `"a" in 1`, `[1, 2][5]`, `1 < "a"`, `'abc'.startsWith(1)`) has the same
value, or the same failure, on every run. It is evaluated here with the runtime's own evaluator
(:mod:`checker.expr.evaluate`), and a failure is reported with the code the run would raise
(NIKA-VAR-006, NIKA-VAR-001) at the sub-expression, as a warning: the spec places these failures at
evaluation (05), so the workflow stays valid and the run raises them. Only what every run evaluates is judged:
the right side of `&&`/`||`, the branches of `?:` and the argument of `has()` may be skipped at
run, so they are left alone (no refusal of a run that would succeed).
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import run_failure
from checker.core.diagnostics import Diagnostic
from checker.expr.evaluate import EvalError, evaluate
from checker.expr.nodes import Binary, Call, Expr, Ident, ListLit, Literal, MethodCall, Ternary, children, walk
from checker.model.workflow import ExprSite
from checker.rules.support.context import RuleContext


def _closed_nodes(root: Expr) -> set[int] | None:
    """The ids of the sub-expressions of ``root`` that read nothing, found in one pass (children
    before parents); ``None`` when there are none (a tree of names alone: the common case)."""
    order = list(walk(root))
    if not any(isinstance(n, _LEAVES) for n in order):
        return None
    closed: set[int] = set()
    for node in reversed(order):
        if not isinstance(node, Ident) and all(id(k) in closed for k in children(node)):
            closed.add(id(node))
    return closed


_LEAVES = (Literal, ListLit, Call, MethodCall)  # what a sub-expression that reads nothing is made of


def _always_evaluated_closed(root: Expr) -> Iterator[Expr]:
    """The largest sub-expressions that read nothing and that every evaluation of ``root`` reaches."""
    closed = _closed_nodes(root)
    if closed is None:
        return
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in closed:
            yield node
            continue
        if isinstance(node, Binary) and node.op in ("&&", "||"):
            stack.append(node.left)
        elif isinstance(node, Ternary):
            stack.append(node.cond)
        elif isinstance(node, Call) and node.name == "has":
            continue
        else:
            stack.extend(reversed(children(node)))


def check_literal_expressions(ctx: RuleContext) -> Iterator[Diagnostic]:
    if ctx.memo is None:
        for site in ctx.sites:
            if site.where != "output" and not site.template.errors:
                yield from _site_findings(site)
        return
    # A pure function of the site: with the language server's memo, an unchanged one is not judged again.
    prev, cur = ctx.memo.tables("literal_types")
    for site in ctx.sites:
        if site.where == "output" or site.template.errors:
            continue
        hit = prev.get(id(site))
        if hit is not None and hit[0] is site:
            cur[id(site)] = hit
            yield from hit[2]
            continue
        found = tuple(_site_findings(site))
        cur[id(site)] = (site, (), found)
        yield from found


def _site_findings(site: ExprSite) -> Iterator[Diagnostic]:
    for island in site.template.islands:
        if island.expr is None:
            continue
        for node in _always_evaluated_closed(island.expr):
            try:
                evaluate(node, {})
            except EvalError as e:
                start, end = island.expr_start + e.start, island.expr_start + max(e.end, e.start + 1)
                yield run_failure(
                    e.code,
                    site.span_of(start, end),
                    f"{e.message} (the expression reads nothing)",
                    "Fix the literal: the value is known before the run.",
                    task=site.task,
                )
