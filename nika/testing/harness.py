"""The run a test case drives: :class:`runtime.engine.run.Run` with its verbs mockable, its model
calls scripted per task, an agent's tool calls answerable by tool id, and no back-off waits.

Only ``nika test`` imports this module, so the runtime loads only when a test runs.
"""

from __future__ import annotations

import contextvars
import json
from pathlib import Path
from typing import Any

from nika.testing.spec import Case
from runtime.engine.run import Run
from runtime.engine.services import Services
from runtime.errors import TaskError
from runtime.providers.mock import SCRIPT_VAR, MockProvider

_TASK: contextvars.ContextVar[str | None] = contextvars.ContextVar("nika_test_task", default=None)


class ScriptedServices(Services):
    """The run's services, with a scripted mock provider for each task the case gives replies."""

    def __init__(self, env: dict[str, str], workdir: Path, secrets: set[str], replies: dict[str, Any]) -> None:
        super().__init__(env, workdir, secrets)
        self.scripted = {t: MockProvider({SCRIPT_VAR: json.dumps(s)}) for t, s in replies.items()}

    def provider_for(self, model: str) -> tuple[Any, str]:
        tid = _TASK.get()
        if tid in self.scripted:
            return self.scripted[tid], "scripted"
        return super().provider_for(model)


class TestRun(Run):
    """One run of a test case (``__test__``: not a pytest class, whatever its name)."""

    __test__ = False

    def __init__(self, *args: Any, case: Case, **kwargs: Any) -> None:
        self.case = case
        self.calls: dict[str, int] = {}
        self.skipped_wait = 0.0
        super().__init__(*args, **kwargs)

    def make_services(self) -> Services:
        return ScriptedServices(self.engine_env, self.workdir, self.secret_values, self.case.replies)

    async def backoff_wait(self, seconds: float) -> None:
        """Retry back-off is not waited for in a test: the attempts and their order are the same."""
        self.skipped_wait += seconds

    def replies_used(self, tid: str) -> int:
        return self.services.scripted[tid].calls

    async def run_verb(self, tid: str, verb: Any, scope: dict[str, Any], task: Any) -> Any:
        if tid in self.case.mocks:
            return self._played(f"the mock of `{tid}`", tid, self.case.mocks, self.case.repeat)
        token = _TASK.set(tid)
        try:
            return await super().run_verb(tid, verb, scope, task)
        finally:
            _TASK.reset(token)

    async def call_tool(self, ctx: Any, tool: str, args: dict[str, Any]) -> Any:
        if tool not in self.case.tools:
            return await super().call_tool(ctx, tool, args)
        from checker.contracts import tables as contracts

        c = contracts.contract(tool)
        self.boundary.check_tool(ctx.task_id, tool, c.effects if c is not None else ())  # permits still judge it
        return self._played(f"the result of `{tool}`", f"tool {tool}", self.case.tools, self.case.tools_repeat)

    def _played(self, what: str, key: str, table: dict[str, Any], repeat: set[str]) -> Any:
        name = key.removeprefix("tool ")
        steps = table[name]
        n = self.calls.get(key, 0)
        self.calls[key] = n + 1
        if name in repeat:
            n = 0
        elif n >= len(steps):
            raise TaskError("NIKA-PROVIDER-001", f"{what} has {len(steps)} results; call {n + 1} asked for one")
        step = steps[n]
        if "error" in step:
            e = step["error"]
            details = e.get("details") if isinstance(e.get("details"), dict) else {}
            raise TaskError(e["code"], str(e.get("message", "mocked failure")), bool(e.get("transient")), details)
        return step["output"]
