"""jq programs (04 §jq): ``output:`` bindings, ``nika:jq`` ``expression`` and ``nika:fetch`` ``jq``
must compile (NIKA-VAR-005), and none may look like a command-line flag.

The two places differ on ``${{ … }}``. An ``output:`` binding is pure jq over the task's raw
output: an island there is refused by the expression rule, with its exact span. A tool argument
is rendered like every other verb field before the tool runs (04 §resolution order, step 3), so
an island inside ``expression:`` or ``jq:`` is allowed; the program is judged with each island
standing for a value.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic
from checker.expr import Island, Template, has_island, parse_template
from checker.jq.problem import JqProblem
from checker.model.workflow import Invoke, Verb
from checker.parse.values import MapValue, ScalarValue, TemplateValue, Value
from checker.rules.support.context import RuleContext

JQ_ARGS = {"nika:jq": "expression", "nika:fetch": "jq"}

# What an island may render to, tried in turn: a name fits after a `.`, `$` or `@`, inside a jq
# string, as an object key and in a value position (the judge treats it as defined there, at any
# arity); a number fits an index; a quoted string fits where jq wants a string literal.
ISLAND_NAME = "__nika_island"
_PLACEHOLDERS = (ISLAND_NAME, "0", '"x"')


def _tool_verbs(ctx: RuleContext) -> Iterator[tuple[str, Verb]]:
    for task in ctx.workflow.tasks.values():
        if task.verb is not None:
            yield task.id, task.verb
        for step in task.on_finally:
            if step.verb is not None:
                yield task.id, step.verb


def _programs(ctx: RuleContext) -> Iterator[tuple[str, ScalarValue, str, bool]]:
    """(task, node, what, templated) for every jq program; ``templated`` allows islands."""
    for task in ctx.workflow.tasks.values():
        for b in task.output:
            if isinstance(b.value, ScalarValue) and isinstance(b.value.value, str):
                yield task.id, b.value, f"output binding `{b.name}`", False
    for tid, verb in _tool_verbs(ctx):
        if isinstance(verb, Invoke) and verb.tool in JQ_ARGS and isinstance(verb.args, MapValue):
            arg = JQ_ARGS[verb.tool]
            v: Value | None = verb.args.get(arg)
            if isinstance(v, ScalarValue) and isinstance(v.value, str):
                yield tid, v, f"`{verb.tool}` `{arg}:`", True


def rendered_program(text: str, placeholder: str, template: Template | None = None) -> tuple[str, list[int]] | None:
    """``text`` with every ``${{ … }}`` replaced by ``placeholder``, and for each character of
    the result its offset in ``text``. ``None`` when the template itself is broken (the
    expression rule reports that). ``template`` is the compiler's parse of ``text``."""
    if template is None:
        template = parse_template(text)
    if template.errors:
        return None
    parts = template.parts
    out: list[str] = []
    where: list[int] = []
    raw_at = 0
    for i, part in enumerate(parts):
        if isinstance(part, Island):
            out.append(placeholder)
            where.extend([part.start] * len(placeholder))
            raw_at = part.end
            continue
        nxt = parts[i + 1] if i + 1 < len(parts) else None
        raw_end = nxt.start if isinstance(nxt, Island) else len(text)
        out.append(part)
        # Rendering only drops backslashes (escaped `\${{`): match the rest greedily.
        k = raw_at
        for ch in part:
            while k < raw_end - 1 and text[k] != ch:
                k += 1
            where.append(k)
            k += 1
        raw_at = raw_end
    return "".join(out), where


def _templated_problem(text: str, template: Template | None) -> JqProblem | None:
    """The problem of a program whose islands are values, or ``None`` when some rendering fits."""
    from checker.jq.syntax import jq_problem  # the recogniser loads only when there is jq to judge

    first: JqProblem | None = None
    for placeholder in _PLACEHOLDERS:
        rendered = rendered_program(text, placeholder, template)
        if rendered is None:
            return None
        program, where = rendered
        problem = jq_problem(program, open_name=ISLAND_NAME)
        if problem is None:
            return None
        if first is None:
            start = where[problem.start] if problem.start < len(where) else len(text)
            end = where[problem.end - 1] + 1 if 0 < problem.end <= len(where) else max(start, len(text))
            message = problem.message.replace(ISLAND_NAME, "${{ … }}")  # the stand-in is ours, not theirs
            first = JqProblem(message, start, max(end, start + 1))
    return first


def check_jq(ctx: RuleContext) -> Iterator[Diagnostic]:
    for tid, node, what, templated in _programs(ctx):
        text = node.value
        if has_island(text):
            if not templated:
                continue  # reported with its exact island by the expression rule
            problem = _templated_problem(text, node.template if isinstance(node, TemplateValue) else None)
        else:
            from checker.jq.syntax import jq_problem  # loads only when there is jq to judge

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
