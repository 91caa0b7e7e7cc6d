"""nika:log, nika:emit, nika:assert, nika:prompt, nika:wait, and the builtins that stay unbuilt."""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from datetime import timedelta

import pytest
from builtins_harness import VirtualClock, direct, fails, make_ctx

from runtime.builtins import call


@pytest.fixture
def host(tmp_path):
    return make_ctx(tmp_path, clock=VirtualClock())


# ── log ───────────────────────────────────────────────────────────────────────────────────────


async def test_log_lands_on_the_event_stream_and_returns_null(host):
    ctx, events = host
    assert await call("nika:log", {"level": "warn", "message": "disk at 91%", "data": {"pct": 91}}, ctx) is None
    assert events == [{"type": "log", "task": "t1", "level": "warn", "message": "disk at 91%", "data": {"pct": 91}}]


async def test_log_renders_a_non_string_message_as_json(host):
    ctx, events = host
    await direct("nika:log")({"message": {"b": 1, "a": [1, 2]}}, ctx)
    assert events[0]["message"] == '{"a":[1,2],"b":1}'
    assert events[0]["level"] == "info"


async def test_log_never_fails_when_the_event_cannot_land(tmp_path):
    ctx, _ = make_ctx(tmp_path)

    def broken(event):
        raise OSError("journal full")

    ctx.emit = broken
    assert await call("nika:log", {"message": "x"}, ctx) is None


async def test_log_refuses_an_unknown_level(host):
    ctx, events = host
    e = await fails("nika:log", {"level": "loud", "message": "x"}, ctx)
    assert e.code == "NIKA-BUILTIN-001"
    assert events == []


# ── emit ──────────────────────────────────────────────────────────────────────────────────────


async def test_emit_wraps_the_event_so_it_cannot_pose_as_an_engine_event(host):
    ctx, events = host
    assert await call("nika:emit", {"event_type": "deploy.done", "payload": {"env": "prod"}}, ctx) is None
    assert events == [{"type": "emit", "task": "t1", "event_type": "deploy.done", "payload": {"env": "prod"}}]


async def test_emit_refuses_a_malformed_event_name(host):
    ctx, events = host
    e = await fails("nika:emit", {"event_type": "Deploy Done", "payload": {}}, ctx)
    assert e.code == "NIKA-BUILTIN-EMIT-001"
    assert events == []


async def test_emit_refuses_a_payload_that_is_not_json(host):
    ctx, _ = host
    e = await fails("nika:emit", {"event_type": "blob.seen", "payload": {"raw": b"\x00"}}, ctx)
    assert e.code == "NIKA-BUILTIN-EMIT-001"
    assert "/raw" in e.message


async def test_emit_without_payload_carries_the_other_arguments(host):
    # spec 03's on_finally examples write `{ event: …, task_id: … }`, which the contract of this
    # build does not accept yet
    ctx, events = host
    await direct("nika:emit")({"event": "task_done", "task_id": "process"}, ctx)
    assert events[0]["event_type"] == "task_done"
    assert events[0]["payload"] == {"task_id": "process"}


# ── assert ────────────────────────────────────────────────────────────────────────────────────


async def test_assert_passes_with_true(host):
    ctx, _ = host
    assert await call("nika:assert", {"condition": True, "message": "never shown"}, ctx) is True


async def test_assert_fails_with_its_message(host):
    ctx, _ = host
    e = await fails("nika:assert", {"condition": False, "message": "export is empty"}, ctx)
    assert (e.code, e.message, e.transient, e.category) == (
        "NIKA-BUILTIN-ASSERT-001",
        "export is empty",
        False,
        "tool_error",
    )


async def test_assert_has_a_message_of_its_own_when_none_is_given(host):
    ctx, _ = host
    e = await fails("nika:assert", {"condition": False}, ctx)
    assert e.code == "NIKA-BUILTIN-ASSERT-001" and e.message


async def test_assert_refuses_a_literal_string_condition(host):
    ctx, _ = host
    e = await fails("nika:assert", {"condition": "yes"}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


@pytest.mark.parametrize("value", [1, None, [], {"ok": True}])
async def test_assert_has_no_truthiness(host, value):
    ctx, _ = host
    e = await fails("nika:assert", {"condition": value}, ctx)
    assert e.code in ("NIKA-VAR-006", "NIKA-BUILTIN-001")


# ── prompt ────────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("args", "answer"),
    [
        ({"message": "Deploy?", "default": False}, False),
        ({"mode": "input", "message": "OTP?", "default": ""}, ""),
        ({"mode": "choice", "message": "Title?", "choices": ["a", "b"], "default": "b"}, "b"),
    ],
)
async def test_prompt_answers_with_the_default_when_nobody_can_answer(host, args, answer):
    ctx, events = host
    assert await call("nika:prompt", args, ctx) == answer
    assert events[-1]["answered_by"] == "default"


async def test_prompt_without_default_fails_at_once_in_a_non_interactive_run(host):
    ctx, _ = host
    e = await fails("nika:prompt", {"message": "Deploy?"}, ctx)
    assert (e.code, e.category) == ("NIKA-BUILTIN-PROMPT-001", "validation_error")


async def test_prompt_is_interactive_only_with_a_way_to_ask(tmp_path):
    ctx, _ = make_ctx(tmp_path, interactive=True)  # interactive, but the host gave no `ask`
    e = await fails("nika:prompt", {"message": "Deploy?"}, ctx)
    assert e.code == "NIKA-BUILTIN-PROMPT-001"


async def test_prompt_asks_a_person_when_the_host_can(tmp_path):
    asked = []

    async def ask(request):
        asked.append(request)
        return "b"

    ctx, events = make_ctx(tmp_path, interactive=True, ask=ask)
    args = {"mode": "choice", "message": "Title?", "choices": ["a", "b"], "default": "a"}
    assert await call("nika:prompt", args, ctx) == "b"
    assert asked[0]["choices"] == ["a", "b"] and asked[0]["task"] == "t1"
    assert events[-1]["answered_by"] == "human"


async def test_prompt_refuses_an_answer_outside_the_choices(tmp_path):
    async def ask(request):
        return "c"

    ctx, _ = make_ctx(tmp_path, interactive=True, ask=ask)
    e = await fails("nika:prompt", {"mode": "choice", "message": "?", "choices": ["a", "b"]}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


async def test_prompt_choice_default_must_be_a_choice(host):
    ctx, _ = host
    e = await fails("nika:prompt", {"mode": "choice", "message": "?", "choices": ["a"], "default": "z"}, ctx)
    assert e.code == "NIKA-BUILTIN-PROMPT-002"


async def test_prompt_confirm_default_must_be_a_boolean(host):
    ctx, _ = host
    e = await fails("nika:prompt", {"message": "?", "default": "yes"}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


async def test_prompt_refuses_a_missing_message(host):
    ctx, _ = host
    e = await fails("nika:prompt", {"default": True, "mode": "sometimes"}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


# ── wait ──────────────────────────────────────────────────────────────────────────────────────


async def test_wait_duration_sleeps_on_the_run_clock(tmp_path):
    clock = VirtualClock()
    ctx, _ = make_ctx(tmp_path, clock=clock)
    assert await call("nika:wait", {"duration": "1m30s"}, ctx) == {"elapsed_ms": 90_000}
    assert clock.slept == [90.0]


async def test_wait_zero_duration_does_not_sleep(tmp_path):
    clock = VirtualClock()
    ctx, _ = make_ctx(tmp_path, clock=clock)
    assert await call("nika:wait", {"duration": "0s"}, ctx) == {"elapsed_ms": 0}
    assert clock.slept == []


async def test_wait_on_the_system_clock_sleeps_on_the_event_loop(tmp_path, monkeypatch):
    """Without a clock seam the wait is an `asyncio.sleep` of the asked duration (recorded here,
    not timed: how long a sleep takes is the machine's business)."""
    import asyncio

    real, slept = asyncio.sleep, []

    async def recorded(seconds, *args, **kwargs):
        slept.append(seconds)
        return await real(0)

    monkeypatch.setattr(asyncio, "sleep", recorded)
    ctx, _ = make_ctx(tmp_path)
    out = await call("nika:wait", {"duration": "20ms"}, ctx)
    assert slept == [0.02] and isinstance(out["elapsed_ms"], int) and out["elapsed_ms"] >= 0


async def test_wait_until_sleeps_to_the_target(tmp_path):
    clock = VirtualClock()
    ctx, _ = make_ctx(tmp_path, clock=clock)
    target = (clock.at + timedelta(minutes=5)).isoformat()
    assert await call("nika:wait", {"until": target, "timeout": "1h"}, ctx) == {"elapsed_ms": 300_000}
    assert clock.now().isoformat() == target


async def test_wait_until_past_its_timeout_fails_without_sleeping(tmp_path):
    clock = VirtualClock()
    ctx, _ = make_ctx(tmp_path, clock=clock)
    target = (clock.at + timedelta(hours=3)).isoformat()
    e = await fails("nika:wait", {"until": target, "timeout": "1h"}, ctx)
    assert (e.code, e.category) == ("NIKA-BUILTIN-WAIT-001", "timeout_error")
    assert e.details["remaining_ms"] == 3 * 3_600_000
    assert clock.slept == []


async def test_wait_until_in_the_past_fails(host):
    ctx, _ = host
    e = await fails("nika:wait", {"until": "2024-01-01T09:00:00Z"}, ctx)
    assert e.code == "NIKA-BUILTIN-WAIT-002"


@pytest.mark.parametrize("args", [{}, {"duration": "1s", "until": "2030-01-01T00:00:00Z"}])
async def test_wait_needs_exactly_one_mode(host, args):
    ctx, _ = host
    e = await fails("nika:wait", args, ctx)
    assert e.code == "NIKA-BUILTIN-WAIT-003"


@pytest.mark.parametrize("until", ["next tuesday", "2030-01-01T09:00:00"])
async def test_wait_until_must_be_a_timestamp_with_an_offset(host, until):
    ctx, _ = host
    e = await fails("nika:wait", {"until": until}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


async def test_wait_refuses_a_bad_duration(host):
    ctx, _ = host
    e = await fails("nika:wait", {"duration": "2d"}, ctx)
    assert e.code == "NIKA-BUILTIN-001"


# ── the media family (built in issue 22; their own tests are test_chart/test_image_fx/test_media_*) ──


@pytest.mark.parametrize("tool", ["nika:chart", "nika:image_generate", "nika:image_fx", "nika:tts_generate"])
async def test_media_builtins_are_registered_and_the_contract_speaks_first(host, tool):
    from runtime.builtins import REGISTRY

    ctx, _ = host
    e = await fails(tool, None, ctx)
    assert tool in REGISTRY
    assert e.code == "NIKA-BUILTIN-001"  # no args: a required argument is missing, said by the contract


@pytest.mark.parametrize("tool", ["nika:done", "nika:compose"])
async def test_agent_loop_builtins_are_not_served_standalone(host, tool):
    from runtime.builtins import REGISTRY

    await call("nika:log", {"message": "load the registry"}, host[0])
    assert tool not in REGISTRY


async def test_prompt_mode_outside_the_contract_is_refused_by_the_tool_too(host):
    ctx, _ = host
    with pytest.raises(Exception) as info:
        await direct("nika:prompt")({"mode": "maybe", "message": "?", "default": True}, ctx)
    assert info.value.code == "NIKA-BUILTIN-001"


async def test_a_registry_one_family_filled_first_still_loads_every_builtin(host, monkeypatch):
    """A module that imported one family (a resume with --answer imports the core family for the
    prompt's answer check) leaves the registry not empty; a call to a builtin of another family
    still finds it, never "not available in this build"."""
    import runtime.builtins as builtins

    monkeypatch.setattr(builtins, "REGISTRY", {})
    monkeypatch.setattr(builtins, "_LOADED", [])
    with fresh_builtin_modules():
        importlib.import_module("runtime.builtins.core")  # one family, as runtime.durable.answers loads it
        assert "nika:prompt" in builtins.REGISTRY and "nika:write" not in builtins.REGISTRY
        e = await fails("nika:write", None, host[0])
        assert e.code == "NIKA-BUILTIN-001"  # the contract speaks, and the builtin is there
        assert "nika:write" in builtins.REGISTRY


@contextlib.contextmanager
def fresh_builtin_modules() -> Iterator[None]:
    """The builtin family modules imported afresh inside, and the loaded ones back afterwards: in
    ``sys.modules`` and as the package's attributes (an import rebinds those, and a later
    ``from runtime.builtins import files`` would otherwise get a copy the registry never saw)."""
    import runtime.builtins as builtins

    prefix = "runtime.builtins."
    loaded = {m: mod for m, mod in sys.modules.items() if m.startswith(prefix)}
    attrs = {leaf: getattr(builtins, leaf) for leaf in dir(builtins) if prefix + leaf in loaded}
    for m in loaded:
        del sys.modules[m]
    try:
        yield
    finally:
        for m in [m for m in sys.modules if m.startswith(prefix)]:
            del sys.modules[m]
            leaf = m.removeprefix(prefix)
            if "." not in leaf and leaf not in attrs and hasattr(builtins, leaf):
                delattr(builtins, leaf)
        sys.modules.update(loaded)
        for leaf, mod in attrs.items():
            setattr(builtins, leaf, mod)
