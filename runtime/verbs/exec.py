"""``exec:`` — one process (02 §exec).

* ``command:`` runs through ``execve`` with no shell; ``shell:`` through ``/bin/sh -c``, and only
  after the blocklist (NIKA-SEC-001) accepted the *parsed* command (bashlex; a command that
  cannot be parsed is refused, never guessed). The blocklist is a guard rail against obvious
  accidents, not a sandbox: ``permits.exec`` is the boundary, and the process itself runs with
  the engine user's rights.
* The child environment is composed, never inherited (NEP-0005): the runner floor, the names
  ``permits.env`` passes through, then ``exec.env``; dangerous names are stripped last.
* The resolved call (:class:`~runtime.tools.process_runner.ExecCall`, plain data) is performed by the run's
  executor; in process by :func:`runtime.tools.process_runner.run_process` (process group, kill on timeout
  or cancellation, capped capture, decoding).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from checker.contracts.blocklist import judge_shell, judge_words
from runtime.errors import TaskError
from runtime.guard.permits import compose_env
from runtime.tools.process_runner import (
    EXIT_CODE,
    KILL_GRACE_S,
    OUTPUT_CAP_BYTES,
    SPAWN_CODE,
    ExecCall,
    decode,
    run_process,
)

__all__ = [
    "EXIT_CODE",
    "KILL_GRACE_S",
    "OUTPUT_CAP_BYTES",
    "SPAWN_CODE",
    "ExecCall",
    "compose_env",
    "decode",
    "engine_program",
    "run_process",
]

if TYPE_CHECKING:
    from checker.model.workflow import Exec
    from runtime.engine.context import VerbContext

BLOCKED_CODE = "NIKA-SEC-001"


async def run_exec_verb(ctx: VerbContext, verb: Exec) -> Any:
    """Resolve an ``exec:`` block of the model against the task's scope, judge it, and hand the
    resolved call to the run's executor."""
    from runtime.engine.executor import ExecEffect

    call = resolve_exec(ctx, verb)
    result = await ctx.perform(ExecEffect(ctx.task_id, call))
    return result.value()


def resolve_exec(ctx: VerbContext, verb: Exec) -> ExecCall:
    """The ``exec:`` block as plain data, after the permit judge and the blocklist accepted it."""
    from checker.expr import render_string
    from checker.parse.values import TemplateValue
    from checker.rules.support.flow import exec_words, prefix_with, value_trust
    from runtime.values import materialise

    tid, scope = ctx.task_id, ctx.scope

    def text(v: Any, what: str) -> str:
        value = materialise(v, scope, what)
        return value if isinstance(value, str) else render_string(value)

    argv: list[str] | None = None
    shell: str | None = None
    if verb.command is not None:
        argv = [text(v, f"`command[{i}]`") for i, v in enumerate(verb.command)]
        if not argv or not argv[0]:
            raise TaskError(SPAWN_CODE, "`command:` is empty", details={})
        ctx.boundary.check_exec(tid, argv[0], shell=False)
        consts = scope.get("const")
        prefixes = [prefix_with(el, consts) for el in verb.command]
        ctx.boundary.check_argv(tid, exec_words(ctx.workflow, ctx.task, verb.command, list(argv), prefixes))
        why = judge_words(argv)
    else:
        shell = text(verb.shell, "`shell:`")
        ctx.boundary.check_exec(tid, "/bin/sh", shell=True)
        why = judge_shell(shell)
    if why is not None:
        raise TaskError(
            BLOCKED_CODE,
            f"the command was refused by the exec blocklist: {why}",
            details={"reason": why},
        )
    cwd = str(ctx.workdir)
    if verb.cwd is not None:
        c = text(verb.cwd, "`cwd:`")
        cwd = c if os.path.isabs(c) else str(ctx.workdir / c)
    authored: dict[str, str] = {}
    if verb.env is not None:
        untrusted = [
            name
            for name, entry in verb.env.items()
            if isinstance(entry.value, TemplateValue) and not value_trust(ctx.workflow, ctx.task, entry.value).trusted
        ]
        ctx.boundary.check_env_values(tid, untrusted)
        for name, entry in verb.env.items():
            authored[name] = text(entry.value, f"`env.{name}`")
    env = compose_env(ctx.boundary.env_passthrough(tid), authored, ctx.engine_env)
    stdin = text(verb.stdin, "`stdin:`") if verb.stdin is not None else None
    call = ExecCall(argv, shell, cwd, env, stdin, verb.capture, verb.decode)
    if argv is not None:
        call.executable = engine_program(argv[0], ctx.engine_env, cwd)
    return call


def engine_program(program: str, engine_env: Mapping[str, str], cwd: str) -> str:
    """The file ``program`` names: a bare name looked up on the *engine's* ``PATH`` (never the
    task's ``exec.env`` PATH, which would re-point an allowed name at any binary); a path with a
    separator relative to ``cwd``."""
    if "/" in program:
        return program if os.path.isabs(program) else os.path.join(cwd, program)
    found = shutil.which(program, path=engine_env.get("PATH", os.defpath))
    if found is None:
        raise TaskError(
            SPAWN_CODE,
            f"cannot start `{program}`: it was not found on the engine's PATH",
            details={"program": program},
        )
    return found
