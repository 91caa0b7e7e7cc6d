"""``invoke:`` — a ``nika:*`` builtin, an MCP tool, or a child workflow (02 §invoke, 14).

Builtins run through :func:`runtime.builtins.call`, which validates the arguments against the same
contract data ``nika check`` reads. Before that, the dispatch boundary judges authority: an
effectful tool needs a grant, and a network tool's resolved URL must fit ``permits.net``.

A child workflow is compiled by the checker (a child ``nika check`` refuses fails the task with
the child's first error code), its arguments are bound to its ``inputs:`` exactly like ``--var``,
and it runs in a fresh :class:`~runtime.scheduler.Run` with its own scope and its own journal,
under its own permits *and* its caller's (a child never gains authority). Nesting is bounded
(NIKA-SEC-003), and a workflow that calls itself is refused.
"""

from __future__ import annotations

import os
from typing import Any

from checker.core.paths import resolve_named
from runtime.errors import NOT_BUILT, TaskError
from runtime.values import materialise

DEPTH_CODE = "NIKA-SEC-003"
CALL_FIT_CODE = "NIKA-COMP-004"


async def run_invoke(run: Any, tid: str, verb: Any, scope: dict[str, Any], task: Any) -> Any:
    args = materialise(verb.args, scope, "`args:`") if verb.args is not None else {}
    if verb.workflow is not None:
        return await _child(run, tid, verb, args)
    tool = verb.tool or ""
    return await call_tool(run, tid, tool, args if isinstance(args, dict) else {}, task, computed=True)


async def call_tool(run: Any, tid: str, tool: str, args: dict[str, Any], task: Any, *, computed: bool = False) -> Any:
    """One tool call, from ``invoke:`` or from an agent's turn: an MCP tool through the run's MCP
    client, a builtin after the authority checks of the dispatch boundary."""
    if tool.startswith("mcp:"):
        from runtime.mcp_client import call_mcp_tool

        return await call_mcp_tool(run, tid, tool, args)
    from checker.contracts import tables as contracts
    from runtime import builtins

    c = contracts.contract(tool)
    effects = c.effects if c is not None else ()
    run.boundary.check_tool(tid, tool, effects)
    if "net" in effects and ("url" in args or (c is not None and c.arg("url"))):
        inert = task is not None and task.inert is not None
        run.boundary.check_url(tid, args.get("url"), inert=inert)
    ctx = builtins.BuiltinContext(
        workdir=run.workdir,
        resolve_read=lambda p: run.boundary.resolve(tid, p, "read"),
        resolve_write=lambda p: run.boundary.resolve(tid, p, "write"),
        emit=lambda event: run._builtin_event(tid, event),
        task_id=tid,
        interactive=run.options.interactive,
        extra=_net_extra(run, tid, task) if "net" in effects else {},
    )
    return await builtins.call(tool, args, ctx, computed=computed)


def _net_extra(run: Any, tid: str, task: Any) -> dict[str, Any]:
    """What a network builtin needs: the run's one HTTP client, the engine environment (the SSRF
    allowance) and the permits judge for every redirect hop."""
    inert = task is not None and task.inert is not None
    return {
        "http": run.services.http(),
        "env": run.engine_env,
        "judge_url": lambda url: run.boundary.check_url(tid, url, inert=inert),
    }


async def _child(run: Any, tid: str, verb: Any, args: Any) -> Any:
    from runtime.admission import InputError, bind_inputs, compile_file
    from runtime.scheduler import Options, Run

    target = materialise(verb.workflow, {}, "`workflow:`")
    if not isinstance(target, str) or not target or "\0" in target:
        raise TaskError("NIKA-COMP-001", "`invoke.workflow` must name a workflow file")
    if target.startswith("registry:"):
        raise TaskError(NOT_BUILT, f"registry workflows (`{target}`) are not available in this build of nika yet")
    path = canonical = resolve_named(target, str(run.workdir), run.compiled.source.path)
    me = os.path.realpath(run.compiled.source.path) if run.compiled.source.path else ""
    stack = (*run.options.call_stack, me)
    if canonical in stack:
        raise TaskError(
            DEPTH_CODE,
            f"`{target}` is already running further up this call chain; a workflow may not launch itself",
            details={"workflow": target, "chain": list(stack)},
        )
    if run.options.depth + 1 > run.options.max_depth:
        raise TaskError(
            DEPTH_CODE,
            f"calling `{target}` would nest workflows {run.options.depth + 1} deep; the limit is "
            f"{run.options.max_depth}",
            details={"workflow": target, "max_depth": run.options.max_depth},
        )
    compiled, why = compile_file(path)
    if compiled is None:
        raise TaskError("NIKA-COMP-001", f"cannot read the child workflow `{target}`: {why}", details={})
    from checker.project.admission import admit
    from checker.project.finalize import SettingsError

    try:  # the child is admitted as `nika check` judges it: its suppressions and configuration apply
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
    from runtime.admission import unsupported_run_block

    unsupported = unsupported_run_block(compiled.workflow)
    if unsupported is not None:
        raise TaskError(NOT_BUILT, f"the child workflow `{target}`: {unsupported}", details={"workflow": target})
    try:
        inputs = bind_inputs(compiled.workflow, args if isinstance(args, dict) else {}, what=f"`{target}` args")
    except InputError as exc:
        raise TaskError(CALL_FIT_CODE, str(exc), details={"workflow": target}) from None
    opts = Options(
        max_parallel=run.options.max_parallel,
        model=run.options.model,
        trace_dir=run.options.trace_dir,
        interactive=run.options.interactive,
        depth=run.options.depth + 1,
        max_depth=run.options.max_depth,
        call_stack=stack,
        engine_env=run.engine_env,
        mcp_config=run.services.mcp_config,
    )
    child = Run(compiled, inputs, opts, workdir=run.workdir, parent_boundary=run.boundary)
    result = await child.execute()
    run.emit(
        "tool_invoked",
        [
            ("task", tid),
            ("workflow", target),
            ("state", result.workflow_state),
            ("trace", result.trace),
            ("chain_head", result.head),
        ],
    )
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
