"""Tools and models: the ``invoke.tool`` grammar, the closed builtin set (NIKA-INVOKE-001),
agent-only builtins (NIKA-BUILTIN-DONE-001 / -COMPOSE-001), per-tool argument contracts
(NIKA-BUILTIN-*) and ``<provider>/<name>`` model references (NIKA-PROVIDER-002) (02, stdlib).

The argument contract is the run's own judge; a literal it refuses with a code the stdlib gives
the run ("Throws · NIKA-BUILTIN-HASH-001 …") is said here as a warning, every run failing there."""

from __future__ import annotations

import re
from collections.abc import Iterator

from checker.contracts import tables as contracts
from checker.core.codes import at_check, report
from checker.core.diagnostics import Diagnostic, Severity
from checker.expr import has_island
from checker.model.workflow import Agent, Infer, Invoke
from checker.parse.values import ScalarValue, Value
from checker.rules.support.context import RuleContext

MCP_RE = re.compile(r"^mcp:[a-z][a-z0-9-]*/[A-Za-z0-9_/-]+\Z")


def grammar_problem(tool: str) -> tuple[str, str] | None:
    """(message, help) when ``tool`` breaks the tool-id grammar (NIKA-PARSE-019), else ``None``.

    Whether a well-formed ``nika:`` id names a builtin is the contracts' question
    (:func:`checker.contracts.tables.check_tool_ref`).
    """
    if tool.startswith("nika:"):
        if re.match(r"^[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)*\Z", tool[5:]):
            return None
        return f"`{tool}` is not a valid builtin id", "Builtins are spelled `nika:<name>`, e.g. `nika:read`."
    if tool.startswith("mcp:"):
        if MCP_RE.match(tool):
            return None
        if "/" not in tool:
            return f"`{tool}` names an MCP server but no tool", f"Write `{tool}/<tool_name>`."
        return f"`{tool}` is not a valid MCP tool id", "Use `mcp:<server>/<tool>` with a kebab-case server name."
    ns = tool.split(":", 1)[0] if ":" in tool else None
    return (
        f"`{tool}` is not a valid tool id" + (f": the `{ns}:` namespace does not exist" if ns else ""),
        "Tools are `nika:<builtin>` or `mcp:<server>/<tool>`; wrap anything else in an MCP server.",
    )


def _tool_id_findings(node: ScalarValue, tool: str, tid: str) -> list[Diagnostic]:
    problem = grammar_problem(tool)
    if problem is not None:
        return [report("NIKA-PARSE-019", node.span, problem[0], problem[1], task=tid)]
    return contracts.check_tool_ref(node, task=tid)


def check_invoke(ctx: RuleContext) -> Iterator[Diagnostic]:
    for tid, verb in ctx.verbs():
        if not isinstance(verb, Invoke) or verb.tool is None or not isinstance(verb.tool_value, ScalarValue):
            continue
        tool = verb.tool
        node = verb.tool_value
        if has_island(tool):
            yield report(
                "NIKA-PARSE-019",
                node.span,
                "`tool:` must be a literal tool id",
                "Pick the tool statically; branch with `when:` across tasks if it depends on data.",
                task=tid,
            )
            continue
        found = _tool_id_findings(node, tool, tid) or contracts.check_standalone_invoke(
            tool, task=tid, anchor=node.span
        )
        if found:
            yield from found
            continue
        if tool.startswith("nika:"):
            entry = verb.value.entry("args")
            if entry is not None and verb.args is None and not _is_null(entry.value):
                continue  # `args:` is not a mapping: the compiler's finding says so, nothing to judge
            anchor = entry.key.span if entry is not None else node.span
            for d in contracts.check_tool_args(tool, verb.args, task=tid, anchor=anchor):
                yield at_check(d)


def check_agent_tools(ctx: RuleContext) -> Iterator[Diagnostic]:
    for tid, verb in ctx.verbs():
        if not isinstance(verb, Agent):
            continue
        for item in verb.tools:
            pattern = str(item.value)
            body = pattern[1:] if pattern.startswith("!") else pattern
            if "*" in body or "?" in body:
                if not (body.startswith("nika:") or body.startswith("mcp:")):
                    yield report(
                        "NIKA-PARSE-019",
                        item.span,
                        f"`{pattern}` is not a tool glob",
                        "Tool globs start with `nika:` or `mcp:`, e.g. `nika:*` or `mcp:github/*`.",
                        task=tid,
                    )
                continue
            if body == pattern:
                yield from _tool_id_findings(item, body, tid)
            elif (problem := grammar_problem(body)) is not None:
                yield report("NIKA-PARSE-019", item.span, problem[0], problem[1], task=tid)


def check_models(ctx: RuleContext) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    if isinstance(wf.model, ScalarValue) and isinstance(wf.model.value, str):
        yield from contracts.check_model_ref(wf.model, task=None)
    unmodelled: set[str] = set()
    for tid, verb in ctx.verbs():
        if isinstance(verb, (Infer, Agent)):
            m: Value | None = verb.model
            if isinstance(m, ScalarValue) and isinstance(m.value, str):
                yield from contracts.check_model_ref(m, task=tid)
            if verb.effective_model is None and tid not in unmodelled:
                unmodelled.add(tid)
                kind = "infer" if isinstance(verb, Infer) else "agent"
                yield report(
                    "NIKA-PROVIDER-002",
                    wf.tasks[tid].key.span,
                    f"task `{tid}` (`{kind}:`) names no model, and the workflow sets none: the run fails unless "
                    "`nika run --model provider/name` supplies one",
                    "Set `model: provider/name` on the workflow (or on the task).",
                    task=tid,
                    severity=Severity.WARNING,
                )


def _is_null(v: Value) -> bool:
    return isinstance(v, ScalarValue) and v.value is None
