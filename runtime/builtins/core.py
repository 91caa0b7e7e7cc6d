"""Core builtins: ``nika:log``, ``nika:emit``, ``nika:assert``, ``nika:prompt``, ``nika:wait``.

``nika:done`` is served by the agent loop, not here: a standalone call stays unregistered.

Keys read from ``BuiltinContext.extra``:

``"clock"``
    The run's clock (see :mod:`runtime.builtins._support`); ``nika:wait`` sleeps on it and reads
    ``until:`` against its ``now()``, so a virtual clock makes waits instantaneous and exact.
``"ask"``
    ``async (request: dict) -> Any``: how an interactive host puts a ``nika:prompt`` question to
    a person. ``request`` is ``{"task", "mode", "message", "choices", "default"}``. Used only
    when ``ctx.interactive`` is true; without it a prompt behaves as in a non-interactive run.

Events sent through ``ctx.emit``:

- ``{"type": "log", "task", "level", "message", "data"}`` for ``nika:log``;
- ``{"type": "emit", "task", "event_type", "payload"}`` for ``nika:emit`` (wrapped, so a
  workflow can never forge one of the engine's own event types);
- ``{"type": "prompt", "task", "mode", "answered_by": "human" | "default"}`` for ``nika:prompt``.
"""

from __future__ import annotations

import contextlib
import re
from datetime import datetime
from typing import Any

from checker.core.durations import parse_duration
from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._support import ARG_CODE, arg, clock, describe, need, non_json_at, pattern, render, values
from runtime.errors import TaskError

# ── nika:log ──────────────────────────────────────────────────────────────────────────────────

LOG = "nika:log"
# The contract gives `level` no default; a level-less line is an ordinary one.
_LOG_LEVEL = "info"


@builtin(LOG)
async def log(args: dict[str, Any], ctx: BuiltinContext) -> None:
    """A human-readable line on the event stream. Best-effort: nothing here fails the task."""
    event = {
        "type": "log",
        "task": ctx.task_id,
        "level": args.get("level") or _LOG_LEVEL,
        "message": render(args.get("message", "")),
    }
    if "data" in args:
        event["data"] = args["data"]
    with contextlib.suppress(Exception):  # best-effort by the spec: a lost line never fails the task
        ctx.emit(event)
    return None


# ── nika:emit ─────────────────────────────────────────────────────────────────────────────────

EMIT = "nika:emit"
EMIT_001 = "NIKA-BUILTIN-EMIT-001"


@builtin(EMIT)
async def emit(args: dict[str, Any], ctx: BuiltinContext) -> None:
    """A typed machine event for the journal and its subscribers.

    The name comes from ``event_type`` (or ``event``, the spelling spec 03's ``on_finally``
    examples use). The payload is ``payload``; without it, the remaining arguments are the
    payload, which is what those examples carry (``{event, task_id}``).
    """
    name = args.get("event_type", args.get("event"))
    if not isinstance(name, str) or not re.fullmatch(pattern(EMIT, "event_type") or ".+", name):
        raise TaskError(
            EMIT_001,
            f"the event name must be a lower-case dotted name such as `deploy.done`, but it is {describe(name)}",
        )
    if "payload" in args:
        payload = args["payload"]
    else:
        payload = {k: v for k, v in args.items() if k not in ("event_type", "event")}
    bad = non_json_at(payload)
    if bad is not None:
        raise TaskError(EMIT_001, f"the payload of `{name}` is not a JSON value at `{bad or '/'}`")
    with contextlib.suppress(Exception):  # delivery is best-effort once the event is well-formed
        ctx.emit({"type": "emit", "task": ctx.task_id, "event_type": name, "payload": payload})
    return None


# ── nika:assert ───────────────────────────────────────────────────────────────────────────────

ASSERT = "nika:assert"
ASSERT_001 = "NIKA-BUILTIN-ASSERT-001"
TYPE_CODE = "NIKA-VAR-006"


@builtin(ASSERT)
async def assert_(args: dict[str, Any], ctx: BuiltinContext) -> bool:
    """``true`` when the (already evaluated) condition holds; a failure otherwise."""
    condition = args.get("condition")
    if not isinstance(condition, bool):
        # No implicit truthiness: a condition that is not a boolean is a type error, not a pass.
        raise TaskError(TYPE_CODE, f"the condition of `{ASSERT}` must be a boolean, but it is {describe(condition)}")
    if not condition:
        message = args.get("message")
        text = render(message) if message is not None else "the assertion does not hold"
        raise TaskError(ASSERT_001, text, transient=False, details={"condition": False})
    return True


# ── nika:prompt ───────────────────────────────────────────────────────────────────────────────

PROMPT = "nika:prompt"
PROMPT_001 = "NIKA-BUILTIN-PROMPT-001"
PROMPT_002 = "NIKA-BUILTIN-PROMPT-002"
_ANSWER_TYPE = {"confirm": (bool, "a boolean"), "input": (str, "a string")}


@builtin(PROMPT)
async def prompt(args: dict[str, Any], ctx: BuiltinContext) -> Any:
    """A person's answer when one can be asked, else the declared ``default:``, else a failure.

    Nothing here pauses for show: a non-interactive run answers at once or fails at once.
    """
    mode = arg(args, PROMPT, "mode")
    modes = values(PROMPT, "mode")
    if mode not in modes:
        raise TaskError(ARG_CODE, f"`mode:` of `{PROMPT}` must be one of {', '.join(modes)}, not {describe(mode)}")
    message = render(args.get("message", ""))
    choices = args.get("choices")
    if mode == "choice" and (not isinstance(choices, list) or not choices):
        raise TaskError(ARG_CODE, f"a `mode: choice` prompt needs a non-empty `choices:` list, not {describe(choices)}")
    has_default = args.get("default") is not None
    if has_default:
        check_answer(mode, args["default"], choices, "default:", PROMPT_002 if mode == "choice" else ARG_CODE)
    gate = ctx.extra.get("gate")
    if gate is not None:  # the run's human gate (runtime.durable.gate): a TTY, an --answer, or a durable pause
        request = {"mode": mode, "message": message, "choices": choices, "default": args.get("default")}
        answered, answer = await gate.resolve(
            ctx.task_id, request, lambda v: check_answer(mode, v, choices, "the answer", ARG_CODE)
        )
        if answered:
            _note_prompt(ctx, mode, "human")
            return answer
    ask = ctx.extra.get("ask")
    if ctx.interactive and ask is not None:
        request = {"task": ctx.task_id, "mode": mode, "message": message, "choices": choices}
        request["default"] = args.get("default")
        answer = await ask(request)
        check_answer(mode, answer, choices, "the answer", ARG_CODE)
        _note_prompt(ctx, mode, "human")
        return answer
    if not has_default:
        raise TaskError(
            PROMPT_001,
            f"nobody can answer the prompt {message!r} in this run and it has no `default:`",
            details={"mode": mode},
        )
    _note_prompt(ctx, mode, "default")
    return args["default"]


def answer_problem(mode: Any, value: Any, choices: Any) -> str | None:
    """Why ``value`` cannot answer a ``mode`` prompt (with these ``choices``), or ``None``: the one
    rule, which ``nika run --resume --answer`` applies before the resume runs anything."""
    if mode not in _ANSWER_TYPE and mode != "choice":
        return f"the prompt's mode {describe(mode)} is not one of confirm, input, choice"
    try:
        check_answer(mode, value, choices if isinstance(choices, list) else None, "the answer", ARG_CODE)
    except TaskError as exc:
        return exc.message
    return None


def check_answer(mode: str, value: Any, choices: list[Any] | None, what: str, code: str) -> None:
    if mode == "choice":
        if choices is None or value not in choices:
            raise TaskError(code, f"{what} of a `choice` prompt must be one of `choices:`, but it is {describe(value)}")
        return
    kind, noun = _ANSWER_TYPE[mode]
    if not isinstance(value, kind):
        raise TaskError(code, f"{what} of a `{mode}` prompt must be {noun}, but it is {describe(value)}")


def _note_prompt(ctx: BuiltinContext, mode: str, by: str) -> None:
    ctx.emit({"type": "prompt", "task": ctx.task_id, "mode": mode, "answered_by": by})


# ── nika:wait ─────────────────────────────────────────────────────────────────────────────────

WAIT = "nika:wait"
WAIT_001 = "NIKA-BUILTIN-WAIT-001"
WAIT_002 = "NIKA-BUILTIN-WAIT-002"
WAIT_003 = "NIKA-BUILTIN-WAIT-003"


@builtin(WAIT)
async def wait(args: dict[str, Any], ctx: BuiltinContext) -> dict[str, int]:
    """Sleep for ``duration:`` or until ``until:``; returns ``{"elapsed_ms": N}`` on the run's clock.

    An absolute wait whose target lies beyond its ``timeout:`` fails at once (WAIT-001) instead
    of sleeping the whole cap first: the outcome is already certain and the cap is there to stop
    a miscomputed target from holding the run open.
    """
    has_duration, has_until = args.get("duration") is not None, args.get("until") is not None
    if has_duration == has_until:
        raise TaskError(WAIT_003, "give exactly one of `duration:` (relative) and `until:` (absolute)")
    clk = clock(ctx)
    start = clk.now()
    if has_duration:
        seconds = _duration_ms(need(args, WAIT, "duration", str), "duration") / 1000
    else:
        target = _timestamp(need(args, WAIT, "until", str))
        seconds = (target - start).total_seconds()
        if seconds < 0:
            raise TaskError(
                WAIT_002,
                f"`until:` {args['until']} was {_ms(-seconds)} ms in the past when the wait began",
                details={"until": args["until"], "now": start.isoformat()},
            )
        if args.get("timeout") is not None:
            cap_ms = _duration_ms(need(args, WAIT, "timeout", str), "timeout")
            if seconds * 1000 > cap_ms:
                raise TaskError(
                    WAIT_001,
                    f"`until:` {args['until']} is {_ms(seconds)} ms away, past the {args['timeout']} `timeout:`",
                    details={"until": args["until"], "timeout_ms": _ms(cap_ms / 1000), "remaining_ms": _ms(seconds)},
                )
    if seconds > 0:
        await clk.sleep(seconds)
    return {"elapsed_ms": _ms((clk.now() - start).total_seconds())}


def _duration_ms(text: str, name: str) -> float:
    ms, why = parse_duration(text, positive=False, max_ms=None)
    if ms is None:
        raise TaskError(ARG_CODE, f"`{name}:` {text!r} of `{WAIT}` is not a duration: {why}")
    return ms


def _timestamp(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise TaskError(ARG_CODE, f"`until:` {text!r} of `{WAIT}` is not an ISO 8601 timestamp") from None
    if when.tzinfo is None:
        # Which zone a bare local time means depends on the machine; refuse rather than guess.
        raise TaskError(ARG_CODE, f"`until:` {text!r} of `{WAIT}` has no UTC offset; add one such as `Z` or `+02:00`")
    return when


def _ms(seconds: float) -> int:
    return max(round(seconds * 1000), 0)
