"""``invoke:`` — a ``nika:*`` builtin, an MCP tool, or a child workflow (02 §invoke, 14).

Builtins run through :func:`runtime.builtins.call`, which validates the arguments against the same
contract data ``nika check`` reads. Before that, the dispatch boundary judges authority: an
effectful tool needs a grant, and a network tool's resolved URL must fit ``permits.net``.

A child workflow is compiled by the checker (a child ``nika check`` refuses fails the task with
the child's first error code), its arguments are bound to its ``inputs:`` exactly like ``--var``,
and it runs through ``VerbContext.run_child``: a fresh run with its own scope and its own journal,
under its own permits *and* its caller's (a child never gains authority). Nesting is bounded
(NIKA-SEC-003), and a workflow that calls itself is refused.

A child that pauses on a prompt pauses its caller's task: the caller's run ends ``paused`` with the
child's prompts addressed ``TASK/CHILD_TASK`` (recursively, ``a/b/c`` two levels down), each naming
the child's journal. Resumed with ``--answer TASK/CHILD_TASK=VALUE``, the task resumes the child from
that journal with the answer, which the child's own gate judges (:mod:`runtime.durable.gate`).
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Any

from checker.core.paths import resolve_named
from runtime.errors import TaskError, not_built, unbuilt_what
from runtime.values import materialise

if TYPE_CHECKING:
    from checker.model.workflow import Invoke
    from runtime.engine.context import VerbContext
    from runtime.engine.records import RunResult

DEPTH_CODE = "NIKA-SEC-003"
CALL_FIT_CODE = "NIKA-COMP-004"
PAUSE_CODE = "NIKA-BUILTIN-PROMPT-001"


async def run_invoke(ctx: VerbContext, verb: Invoke) -> Any:
    args = materialise(verb.args, ctx.scope, "`args:`") if verb.args is not None else {}
    if verb.workflow is not None:
        return await _child(ctx, verb, args)
    tool = verb.tool or ""
    trusted = _trusted_args(ctx, verb) if tool == "nika:notify" else ()
    return await call_tool(ctx, tool, args if isinstance(args, dict) else {}, computed=True, trusted=trusted)


def _trusted_args(ctx: VerbContext, verb: Invoke) -> tuple[str, ...]:
    """The arguments written in the file (spec 10 §the permit-parameterization taint: a literal, a
    ``const.*``, a ``secrets.*``, judged by the checker's own integrity): what a judge may treat
    as visible at review distance. An agent's tool call has none."""
    from checker.parse.values import MapValue
    from checker.rules.support.flow import trusted

    if not isinstance(verb.args, MapValue):
        return ()
    return tuple(k for k, e in verb.args.items() if trusted(ctx.workflow, ctx.task, e.value))


async def call_tool(
    ctx: VerbContext, tool: str, args: dict[str, Any], *, computed: bool = False, trusted: tuple[str, ...] = ()
) -> Any:
    """One tool call, from ``invoke:`` or from an agent's turn: judged here (the tool grant, a
    network tool's URL), then performed by the run's executor (an MCP tool through the run's MCP
    client, a builtin with its paths re-judged at the moment of the effect)."""
    from runtime.engine.executor import McpEffect, ToolEffect

    tid = ctx.task_id
    if tool.startswith("mcp:"):
        from runtime.tools.deadline import tool_timeout_s

        ctx.boundary.check_tool(tid, tool, ("mcp",))
        timeout = ctx.task.timeout if ctx.task is not None else None
        ends = ctx.started_monotonic + timeout.ms / 1000 if timeout is not None and ctx.started_monotonic else None
        return (await ctx.perform(McpEffect(tid, tool, args, tool_timeout_s(ends)))).value()
    from checker.contracts import tables as contracts

    c = contracts.contract(tool)
    effects = c.effects if c is not None else ()
    ctx.boundary.check_tool(tid, tool, effects)
    inert = ctx.task is not None and ctx.task.inert is not None
    if "net" in effects and ("url" in args or (c is not None and c.arg("url"))):
        ctx.boundary.check_url(tid, args.get("url"), inert=inert)
    call = ToolEffect(tid, tool, args, computed, ctx.settings.interactive, "net" in effects, inert, trusted)
    return (await ctx.perform(call)).value()


async def _child(ctx: VerbContext, verb: Invoke, args: Any) -> Any:
    """Compile, admit and run the child workflow; its outputs, or its first failure."""
    from runtime.engine.inputs import InputError, bind_inputs
    from runtime.engine.options import Options

    s = ctx.settings
    target, path, stack = _child_target(ctx, verb)
    # the file is read through the one bounded reader (a regular file only, under a deadline) and
    # compiled off the event loop: a FIFO or a slow disk never stops the run's timers and signals
    compiled = await asyncio.to_thread(_admit_child, target, path)
    assert compiled.workflow is not None
    try:
        inputs = bind_inputs(compiled.workflow, args if isinstance(args, dict) else {}, what=f"`{target}` args")
    except InputError as exc:
        raise TaskError(CALL_FIT_CODE, str(exc), details={"workflow": target}) from None
    opts = Options(
        max_parallel=s.max_parallel,
        model=s.model,
        trace_dir=s.trace_dir,
        interactive=s.interactive,
        depth=s.depth + 1,
        max_depth=s.max_depth,
        call_stack=stack,
        engine_env=ctx.engine_env,
        executor=s.executor,
        parent_meter=ctx.services.meter,  # the caller's --max-cost-usd binds the child's model calls too
        parent_gate=ctx.gate,  # the caller's approvals-per-run budget binds the child's prompts too
        prompter=ctx.gate.prompter if ctx.gate is not None else None,  # on a terminal, the child's prompts ask too
        mcp_config=ctx.services.mcp_config,  # the root run's MCP table, read once before its first task
        claims=ctx.gate.claims if ctx.gate is not None else {},  # the tickets the caller's --answer spent
    )
    where = _iteration(ctx)
    journal, answers = ctx.gate.child_resume(ctx.task_id, where) if ctx.gate is not None else (None, {})
    if journal is not None:  # it paused in an earlier run: resumed from its own journal, with its answers
        opts.resume, opts.answers = _child_journal(target, journal, compiled, answers, s.model), answers
    try:
        result = await ctx.run_child(compiled, inputs, opts)
    finally:
        if opts.resume is not None:
            opts.resume.release()
    ctx.emit(
        "tool_invoked",
        [
            ("task", ctx.task_id),
            ("workflow", target),
            ("state", result.workflow_state),
            ("trace", result.trace),
            ("chain_head", result.head),
        ],
    )
    _mirror_approvals(ctx, result)
    if result.workflow_state == "paused":
        raise _child_paused(ctx, target, result, where)
    return _child_result(target, result)


def _child_target(ctx: VerbContext, verb: Invoke) -> tuple[str, str, tuple[str, ...]]:
    """The child's name, its file, and the call chain it runs under (self-calls and nesting bounded)."""
    s = ctx.settings
    target = materialise(verb.workflow, {}, "`workflow:`")
    if not isinstance(target, str) or not target or "\0" in target:
        raise TaskError("NIKA-COMP-001", "`invoke.workflow` must name a workflow file")
    if target.startswith("registry:"):
        raise not_built(
            "registry-workflow",
            f"this build of nika does not implement {unbuilt_what('registry-workflow')} yet (`{target}`)",
            workflow=target,
        )
    path = resolve_named(target, str(ctx.workdir), ctx.source_path)
    me = os.path.realpath(ctx.source_path) if ctx.source_path else ""
    stack = (*s.call_stack, me)
    if path in stack:
        raise TaskError(
            DEPTH_CODE,
            f"`{target}` is already running further up this call chain; a workflow may not launch itself",
            details={"workflow": target, "chain": list(stack)},
        )
    if s.depth + 1 > s.max_depth:
        raise TaskError(
            DEPTH_CODE,
            f"calling `{target}` would nest workflows {s.depth + 1} deep; the limit is {s.max_depth}",
            details={"workflow": target, "max_depth": s.max_depth},
        )
    return target, path, stack


def _admit_child(target: str, path: str) -> Any:
    """The child compiled and admitted as ``nika check`` judges it (its suppressions and
    configuration apply), or the task failure naming its first error."""
    from checker.project.admission import admit
    from checker.project.finalize import SettingsError
    from runtime.engine.inputs import compile_file, unsupported_features, unsupported_run_block

    compiled, why = compile_file(path, named=False)
    if compiled is None:
        raise TaskError("NIKA-COMP-001", f"cannot read the child workflow `{target}`: {why}", details={})
    try:
        verdict = admit(compiled, path)
    except SettingsError as exc:
        raise TaskError("NIKA-COMP-001", f"the child workflow `{target}`: configuration error in {exc}") from None
    errors = list(verdict.errors) if verdict.refused else []
    if verdict.refused or compiled.workflow is None:
        first = errors[0] if errors else None
        code = (first.code if first is not None else None) or "NIKA-COMP-001"
        msg = first.full_message() if first is not None else "the file holds no workflow"
        raise TaskError(
            code,
            f"the child workflow `{target}` does not pass `nika check`: {msg}",
            details={"workflow": target, "codes": [d.code for d in errors]},
        )
    unsupported = unsupported_run_block(compiled.workflow)
    if unsupported is not None:
        features = unsupported_features(compiled.workflow)
        message = f"the child workflow `{target}`: {unsupported}"
        raise not_built(features[0], message, workflow=target, features=features)
    return compiled


def _iteration(ctx: VerbContext) -> tuple[Any, Any] | None:
    """Which call of the child this is: ``None`` for a task, the index and item in a ``for_each``."""
    if ctx.task is None or ctx.task.for_each is None:
        return None
    return ctx.scope.get("index"), ctx.scope.get("item")


def _mirror_approvals(ctx: VerbContext, result: RunResult) -> None:
    """The child's approval decisions, journaled here too at their paths (``TASK/CHILD_TASK``): this
    run's receipt lists their tickets and a resume of this run counts them against its budget. The
    child's journal (named by ``journal``) holds the decisions themselves."""
    from runtime.journal.write import APPROVAL_FIELDS

    for e in result.events:
        if e.get("type") == "approval.decided":
            fields = [("task", f"{ctx.task_id}/{e.get('task')}"), *((k, e.get(k)) for k in APPROVAL_FIELDS)]
            ctx.emit("approval_decided", [*fields, ("journal", result.trace)])


def _child_journal(target: str, journal: str, compiled: Any, answers: dict[str, Any], model: str | None) -> Any:
    """The paused child's journal opened for its resume (verified, matched, locked), or the task failure."""
    from runtime.durable.resume_index import ResumeRefused, open_resume

    try:
        return open_resume(journal, compiled, None, answers, model, child=True)
    except ResumeRefused as exc:
        raise TaskError(PAUSE_CODE, f"cannot resume the paused child workflow `{target}`: {exc}") from None


def _child_paused(ctx: VerbContext, target: str, result: RunResult, where: tuple[Any, Any] | None) -> Exception:
    """A child paused on a prompt: this task pauses too (the gate's ``GatePause``), its prompts addressed
    ``TASK/CHILD_TASK``, unless nothing could resume it (no journal, or an ``on_finally`` step)."""
    p = result.paused[0] if result.paused else {}
    why = None
    if ctx.task is None:
        why = "an `on_finally` step cannot wait for an answer"
    elif result.trace is None or ctx.gate is None:
        why = "the child kept no journal to resume it from"
    if why is None:
        return ctx.gate.child_pause(ctx.task_id, target, os.path.abspath(result.trace), result.paused, where)
    return TaskError(
        PAUSE_CODE,
        f"child workflow `{target}` paused on the prompt of task `{p.get('task')}` and {why}",
        details={"workflow": target, "paused": result.paused, "trace": result.trace},
    )


def _child_result(target: str, result: RunResult) -> Any:
    if result.workflow_state == "success":
        return result.outputs
    failed = next((r for r in result.tasks.values() if r.status == "failure" and r.error), None)
    if failed is not None and failed.error is not None:
        e = failed.error
        raise TaskError(
            e["code"],
            f"child workflow `{target}` failed in task `{failed.id}`: {e['message']}",
            bool(e.get("transient")),
            {"workflow": target, "task": failed.id, "child_error": e},
        )
    err = result.error or {"code": "NIKA-CANCEL-001", "message": "the child workflow was cancelled"}
    raise TaskError(err["code"], f"child workflow `{target}`: {err['message']}", details={"workflow": target})
