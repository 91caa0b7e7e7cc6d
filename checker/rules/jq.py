"""jq programs (04 §jq): ``output:`` bindings, ``nika:jq`` ``expression`` and ``nika:fetch`` ``jq``
must be pure, compilable jq — no ``${{ }}`` islands, no flag-shaped programs (NIKA-VAR-005)."""

from __future__ import annotations

from collections.abc import Iterator

from checker.codes import report
from checker.diagnostics import Diagnostic
from checker.expr import has_island
from checker.jq_syntax import jq_problem
from checker.model import Invoke
from checker.rules.context import RuleContext
from checker.values import MapValue, ScalarValue, Value

JQ_ARGS = {"nika:jq": "expression", "nika:fetch": "jq"}


def _programs(ctx: RuleContext) -> Iterator[tuple[str, ScalarValue, str]]:
    for task in ctx.workflow.tasks.values():
        for b in task.output:
            if isinstance(b.value, ScalarValue) and isinstance(b.value.value, str):
                yield task.id, b.value, f"output binding `{b.name}`"
        verb = task.verb
        if isinstance(verb, Invoke) and verb.tool in JQ_ARGS and isinstance(verb.args, MapValue):
            arg = JQ_ARGS[verb.tool]
            v: Value | None = verb.args.get(arg)
            if isinstance(v, ScalarValue) and isinstance(v.value, str):
                yield task.id, v, f"`{verb.tool}` `{arg}:`"


def check_jq(ctx: RuleContext) -> Iterator[Diagnostic]:
    for tid, node, what in _programs(ctx):
        text = node.value
        if has_island(text):
            if what.startswith("output"):
                continue  # reported with its exact island by the expression rule
            yield report(
                "NIKA-VAR-005",
                node.span,
                f"the jq program of {what} contains `${{{{ … }}}}`",
                "Keep jq literal: pass dynamic data through `input:` (or `with:`) and read it inside the program.",
                task=tid,
            )
            continue
        problem = jq_problem(text)
        if problem is None:
            continue
        yield report(
            "NIKA-VAR-005",
            node.sub_span(problem.start, max(problem.end, problem.start + 1)),
            f"the jq program of {what} does not compile: {problem.message}",
            "Fix the jq syntax (try it with `jq -n '<program>'` locally).",
            task=tid,
        )
