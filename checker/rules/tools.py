"""Tools and models: the ``invoke.tool`` grammar, the closed builtin set (NIKA-INVOKE-001),
agent-only builtins (NIKA-BUILTIN-DONE-001 / -COMPOSE-001), per-tool argument contracts
(NIKA-BUILTIN-*) and ``<provider>/<name>`` model references (NIKA-PROVIDER-002) (02, stdlib)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from checker import contracts
from checker.codes import report
from checker.diagnostics import Diagnostic, Edit, Fix
from checker.expr import has_island
from checker.fields import did_you_mean
from checker.model import Agent, Infer, Invoke, Verb
from checker.nodes import Node, Scalar
from checker.rules.context import RuleContext

MCP_RE = re.compile(r"^mcp:[a-z][a-z0-9-]*/[A-Za-z0-9_/-]+\Z")
AGENT_ONLY = {"nika:done": "NIKA-BUILTIN-DONE-001", "nika:compose": "NIKA-BUILTIN-COMPOSE-001"}


def _verbs(ctx: RuleContext) -> Iterator[tuple[str, Verb]]:
    for task in ctx.workflow.tasks.values():
        if task.verb is not None:
            yield task.id, task.verb
        for step in task.on_finally:
            if step.verb is not None:
                yield task.id, step.verb


def tool_id_problem(tool: str) -> tuple[str, str, str] | None:
    """(code, message, help) when ``tool`` is not a valid tool id; ``None`` when it is."""
    if tool.startswith("nika:"):
        name = tool[5:]
        if tool in contracts.tool_ids():
            return None
        if not re.match(r"^[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)*\Z", name):
            return (
                "NIKA-PARSE-019",
                f"`{tool}` is not a valid builtin id",
                "Builtins are spelled `nika:<name>`, e.g. `nika:read`.",
            )
        guess = did_you_mean(tool, contracts.tool_ids())
        return (
            "NIKA-INVOKE-001",
            f"`{tool}` is not a builtin tool",
            f"Did you mean `{guess}`?" if guess else "See `nika explain NIKA-INVOKE-001` for the 28 builtins.",
        )
    if tool.startswith("mcp:"):
        if MCP_RE.match(tool):
            return None
        if "/" not in tool:
            return (
                "NIKA-PARSE-019",
                f"`{tool}` names an MCP server but no tool",
                f"Write `{tool}/<tool_name>`.",
            )
        return (
            "NIKA-PARSE-019",
            f"`{tool}` is not a valid MCP tool id",
            "Use `mcp:<server>/<tool>` with a kebab-case server name.",
        )
    ns = tool.split(":", 1)[0] if ":" in tool else None
    return (
        "NIKA-PARSE-019",
        f"`{tool}` is not a valid tool id" + (f": the `{ns}:` namespace does not exist" if ns else ""),
        "Tools are `nika:<builtin>` or `mcp:<server>/<tool>`; wrap anything else in an MCP server.",
    )


def check_invoke(ctx: RuleContext) -> Iterator[Diagnostic]:
    for tid, verb in _verbs(ctx):
        if not isinstance(verb, Invoke) or verb.tool is None or verb.tool_node is None:
            continue
        tool = verb.tool
        node = verb.tool_node
        if has_island(tool):
            yield report(
                "NIKA-PARSE-019",
                node.span,
                "`tool:` must be a literal tool id",
                "Pick the tool statically; branch with `when:` across tasks if it depends on data.",
                task=tid,
            )
            continue
        problem = tool_id_problem(tool)
        if problem is not None:
            code, msg, help = problem
            fixes = ()
            if code == "NIKA-INVOKE-001" and help.startswith("Did you mean"):
                guess = help.split("`")[1]
                fixes = (Fix(f"Change to `{guess}`", (Edit(_value_span(node), guess),)),)
            yield report(code, node.span, msg, help, task=tid, fixes=fixes)
            continue
        if tool in AGENT_ONLY:
            yield report(
                AGENT_ONLY[tool],
                node.span,
                f"`{tool}` can only be called by an agent",
                "List it in an `agent:` task's `tools:` instead of invoking it directly.",
                task=tid,
            )
            continue
        if tool.startswith("nika:"):
            entry = verb.node.entry("args")
            anchor = entry.key.span if entry is not None else node.span
            yield from contracts.check_tool_args(tool, verb.args, task=tid, anchor=anchor)


def _value_span(node: Scalar) -> object:
    """The span of a scalar's text without its quotes."""
    if node.offsets:
        return node.sub_span(0, len(node.raw))
    return node.span


def check_agent_tools(ctx: RuleContext) -> Iterator[Diagnostic]:
    for tid, verb in _verbs(ctx):
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
            problem = tool_id_problem(body)
            if problem is not None:
                code, msg, help = problem
                yield report(code, item.span, msg, help, task=tid)


def check_models(ctx: RuleContext) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    if isinstance(wf.model, Scalar) and isinstance(wf.model.value, str):
        yield from contracts.check_model_ref(wf.model, task=None)
    for tid, verb in _verbs(ctx):
        if isinstance(verb, (Infer, Agent)):
            m: Node | None = verb.model
            if isinstance(m, Scalar) and isinstance(m.value, str):
                yield from contracts.check_model_ref(m, task=tid)
