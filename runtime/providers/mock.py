"""``mock``: the deterministic test provider (stdlib/providers-v0.1.md §mock).

``mock/echo`` (and its long-form alias ``mock/mock-deterministic``) replies with the prompt
exactly as rendered. With a ``schema:`` it replies with the schema's typed zero value: ``""`` for
strings, ``0`` for numbers, ``false`` for booleans, ``[]`` for arrays, objects recursed over their
required properties. No network, no entropy: the same input gives the same output everywhere.
In an agent loop (the request offers tools) ``mock/echo`` calls the first offered tool with the
arguments that tool's parameter schema shapes, every turn; without tools it echoes the last user
message (the zero value as JSON text when the agent has a ``schema:``).

``mock/scripted`` plays a script from engine configuration, one step per call, and fails loudly
when the script runs out. ``NIKA_MOCK_SCRIPT`` holds the script as JSON, or the path of a JSON
file: a list of steps, each ``{"text": …, "tool_calls": [{"name": …, "arguments": …}],
"tokens_in": n, "tokens_out": n}`` (``arguments`` as a string is sent raw, to play a malformed
call) or ``{"error": {"code": …, "message": …, "transient": bool}}``. ``mock-error``, ``mock-json`` and
``mock-streaming`` answer from their fixtures (:mod:`runtime.providers.mock_configured`).

The mock accepts ``vision:`` and ``thinking:`` and ignores them: the images are still judged and
read by the engine (the permits are tested), and the echo stays the prompt.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from runtime.errors import TaskError, not_built
from runtime.providers import mock_configured as configured
from runtime.providers.base import Provider, Request, Response, ToolCall

ECHO_MODELS = ("echo", "mock-deterministic")
SCRIPTED = "scripted"
SCRIPT_VAR = configured.SCRIPT_VAR


# Ours: the largest mock fixture or script file read (engine configuration, never a blob).
MOCK_FILE_BYTES = 16 * 1024 * 1024


def zero_value(schema: Any, depth: int = 0) -> Any:
    """The deterministic zero value a schema describes."""
    if not isinstance(schema, dict) or depth > 32:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("oneOf", "anyOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return zero_value(schema[key][0], depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), t[0] if t else None)
    if t == "string":
        return ""
    if t in ("number", "integer"):
        return 0
    if t == "boolean":
        return False
    if t == "array":
        return []
    if t == "null":
        return None
    if t == "object" or "properties" in schema:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        return {k: zero_value(props.get(k, {}), depth + 1) for k in required}
    return None


def _words(text: str) -> int:
    return len(text.split())


class MockProvider(Provider):
    id = "mock"

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = env or {}
        self._script: list[Any] | None = None
        self._cursor = 0
        self.calls = 0

    async def complete(self, name: str, request: Request) -> Response:
        self.calls += 1
        if name == SCRIPTED:
            return self._scripted(request)
        if name in configured.CONFIGURED:
            if name == "mock-error":
                raise configured.configured_error(self._env)
            if name == "mock-streaming":
                return await configured.configured_streaming(self._env, request)
            return configured.configured_json(self._env, request)
        if name not in ECHO_MODELS:
            raise not_built(
                "mock-model",
                f"`mock/{name}` is not available in this build of nika; use `mock/echo`, `mock/mock-error`, "
                f"`mock/mock-json` or `mock/mock-streaming` (fixtures from engine configuration), or "
                f"`mock/{SCRIPTED}` with {SCRIPT_VAR}",
                provider="mock",
                model=name,
            )
        if request.messages:
            return self._agent_turn(request)
        if request.schema is not None:
            return Response(zero_value(request.schema), tokens=0, cost_note="mock_provider")
        n = _words(request.prompt)
        return Response(request.prompt, tokens=n, cost_note="mock_provider", tokens_in=n, tokens_out=n)

    def _agent_turn(self, request: Request) -> Response:
        seen = sum(_words(m.content) for m in request.messages) + _words(request.system or "")
        if request.tools:
            # finish at once when the loop may (`nika:done` granted), else try the first tool
            tool = next((t for t in request.tools if t.tool_id == "nika:done"), request.tools[0])
            call = ToolCall(f"call_{self.calls}", tool.name, zero_value(tool.parameters) or {})
            return Response(None, seen, "mock_provider", seen, 0, (call,), "", "tool_calls")
        last = next((m.content for m in reversed(request.messages) if m.role == "user"), request.prompt)
        text = json.dumps(zero_value(request.schema)) if request.schema is not None else last
        return Response(text, seen + _words(text), "mock_provider", seen, _words(text), (), text, "stop")

    # -- the scripted model ----------------------------------------------------------------

    def _load_script(self) -> list[Any]:
        raw = self._env.get(SCRIPT_VAR)
        if not raw:
            raise TaskError(
                "NIKA-PROVIDER-001",
                f"`mock/{SCRIPTED}` plays a script from engine configuration, and {SCRIPT_VAR} is not set",
            )
        text = raw
        if not raw.lstrip().startswith(("[", "{")):
            from checker.core.reader import FileReadError, read_file

            try:  # the one bounded reader: a regular file, capped, never blocking
                text = read_file(os.path.expanduser(raw), MOCK_FILE_BYTES).decode("utf-8", errors="replace")
            except FileReadError as exc:
                raise TaskError(
                    "NIKA-PROVIDER-001", f"{SCRIPT_VAR} names `{raw}`, which cannot be read: {exc.reason}"
                ) from None
            except OSError as exc:
                raise TaskError(
                    "NIKA-PROVIDER-001", f"{SCRIPT_VAR} names `{raw}`, which cannot be read: {exc.strerror}"
                ) from None
        try:
            steps = json.loads(text)
        except ValueError as exc:
            raise TaskError("NIKA-PROVIDER-001", f"the {SCRIPT_VAR} script is not JSON: {exc}") from None
        if isinstance(steps, dict):
            steps = steps.get("steps")
        if not isinstance(steps, list):
            raise TaskError("NIKA-PROVIDER-001", f"the {SCRIPT_VAR} script must be a list of steps")
        return steps

    def _tool_call(self, i: int, c: dict[str, Any]) -> ToolCall:
        """One scripted tool call: its arguments as given (a JSON string is decoded, kept raw too)."""
        args = c.get("arguments", {})
        if isinstance(args, str):
            try:
                decoded = json.loads(args)
            except ValueError:
                decoded = None
            return ToolCall(
                c.get("id", f"s{self._cursor}_{i}"), c["name"], decoded if isinstance(decoded, dict) else None, args
            )
        return ToolCall(
            c.get("id", f"s{self._cursor}_{i}"), c["name"], args if isinstance(args, dict) else None, json.dumps(args)
        )

    def _scripted(self, request: Request) -> Response:
        if self._script is None:
            self._script = self._load_script()
        if self._cursor >= len(self._script):
            raise TaskError(
                "NIKA-PROVIDER-001",
                f"the `mock/{SCRIPTED}` script is exhausted: call {self._cursor + 1} asked for a step and the "
                f"script has {len(self._script)}",
                details={"script_steps": len(self._script)},
            )
        step = self._script[self._cursor]
        self._cursor += 1
        if not isinstance(step, dict):
            step = {"text": step if isinstance(step, str) else json.dumps(step)}
        if isinstance(step.get("error"), dict):
            e = step["error"]
            details = {"retry_after_ms": e["retry_after_ms"]} if "retry_after_ms" in e else {}
            raise TaskError(
                str(e.get("code", "NIKA-PROVIDER-001")),
                str(e.get("message", "scripted provider failure")),
                bool(e.get("transient", False)),
                details,
            )
        calls = [self._tool_call(i, c) for i, c in enumerate(step.get("tool_calls") or [])]
        text = step.get("text", "")
        if not isinstance(text, str):
            text = json.dumps(text)
        t_in = int(step.get("tokens_in", 0))
        t_out = int(step.get("tokens_out", 0))
        value: Any = text
        if not request.messages and request.schema is not None:
            try:
                value = json.loads(text)
            except ValueError:
                value = text
        return Response(
            value, t_in + t_out, "mock_provider", t_in, t_out, tuple(calls), text, "tool_calls" if calls else "stop"
        )
