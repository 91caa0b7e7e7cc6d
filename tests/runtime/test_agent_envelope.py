"""The agent loop's envelope and batches (issue 27), each against the fake OpenAI-wire server on
loopback that counts requests: the self-model snapshot, batches vetted as a whole and bounded,
read-only calls at once, large arguments sent once, the default wall clock and spend cap, every
task-retry attempt in the record, the provider's own input count, and a call cut by a deadline."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fake_llm import Reply, openai, serve
from test_agent_loop import compose, env, rec, wf

from runtime.engine.executor import EffectCall, EffectResult, ExecutorHost, LocalExecutor, ModelEffect
from runtime.guard import limits


def systems(fake) -> list[str]:
    return [s.body["messages"][0]["content"] for s in fake.seen]


def tool_msgs(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


# -- the self-model snapshot ---------------------------------------------------------------------


def test_every_turn_carries_a_fresh_snapshot(run):
    with serve([openai(calls=[compose(1)], tin=10, tout=5), openai("done")]) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    assert rec(result).status == "success" and fake.count == 2
    first, second = systems(fake)
    assert "- turns left: 10 of 10" in first and "- turns left: 9 of 10" in second
    assert "- tokens left: 120000 of 120000" in first and "- tokens left: 119985 of 120000" in second
    assert "- tools wired now: nika:compose" in first
    assert "- time left: about 10 min" in first  # the default wall clock, stated coarsely
    assert "cost left" not in first  # unpriced: no cost line


def test_snapshot_states_cost_left_for_a_priced_model(run):
    prices = json.dumps({"openai/gpt-test": {"input": 100, "output": 100}})  # $0.0001 a token
    with serve([openai(calls=[compose(1)], tin=100, tout=100), openai("done")]) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url, NIKA_PRICES=prices)
        )
    assert rec(result).status == "success"
    first, second = systems(fake)
    assert "- cost left: $1.0000 of $1.0000" in first  # the default spend cap of a priced model
    assert "- cost left: $0.9800 of $1.0000" in second
    assert rec(result).agent["cost_usd"] == pytest.approx(0.02 + 0.0015)  # 200 + 15 tokens


class Through:
    """The local executor, recording every model effect that crosses the seam."""

    name = "through"

    def __init__(self, host: ExecutorHost, seen: list[EffectCall], stall_from: int | None = None) -> None:
        self.inner, self.seen, self.stall_from = LocalExecutor(host), seen, stall_from

    async def perform(self, call: EffectCall) -> EffectResult:
        if isinstance(call, ModelEffect):
            self.seen.append(call)
            if self.stall_from is not None and len(self.seen) >= self.stall_from:
                await asyncio.sleep(30)  # a model call that never returns (ignores its own timeout)
        return await self.inner.perform(call)


def test_mock_echo_runs_stay_bit_identical(run, tmp_path: Path):
    """The snapshot is built from the ledger only, so two mock/echo runs send the same requests."""
    text = (
        "nika: v1\nworkflow: { id: det }\nmodel: mock/echo\ntasks:\n  loop:\n    agent:\n"
        '      prompt: "go"\n      tools: ["nika:compose"]\n      max_turns: 2\n'
    )
    runs = []
    for _ in range(2):
        seen: list[EffectCall] = []
        result = run(text, executor=lambda host, seen=seen: Through(host, seen))
        runs.append(([(c.request.system, c.request.messages, c.request.max_tokens) for c in seen], result))
    (a, ra), (b, rb) = runs
    assert len(a) == 2 and a == b
    assert all(isinstance(c, ModelEffect) for c in seen) and seen[0].turn  # the seam carries agent turns
    assert rec(ra).agent == rec(rb).agent and rec(ra).agent["stop_reason"] == "max-turns"


# -- batches -------------------------------------------------------------------------------------


def test_at_most_n_calls_per_reply(run):
    calls = [("nika_hash", {"content": f"text {i}"}) for i in range(limits.MAX_CALLS_PER_REPLY + 1)]
    with serve([openai(calls=calls), openai("done")]) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:hash"]'), engine_env=env(fake.url))
    r = rec(result)
    assert r.status == "success" and fake.count == 2
    assert r.agent["tool_calls"] == limits.MAX_CALLS_PER_REPLY
    answers = tool_msgs(fake.seen[1].body)
    assert len(answers) == 4 and "not run" in answers[-1] and "not run" not in answers[0]


PERMITS_WF = (
    "nika: v1\nworkflow: {{ id: batch }}\nmodel: openai/gpt-test\n"
    'permits: {{ fs: {{ write: ["./out/**"], read: ["./**"] }}, tools: ["nika:write", "nika:read"] }}\n'
    'tasks:\n  loop:\n    agent:\n      prompt: "go"\n      tools: [{tools}]\n'
)


def test_the_whole_reply_is_vetted_before_any_call_runs(run, tmp_path: Path):
    write = ("nika_write", {"path": "./out/x.txt", "content": "x", "create_dirs": True})
    with serve([openai(calls=[write, ("shell_exec", {"cmd": "true"})]), openai("never")]) as fake:
        result = run(PERMITS_WF.format(tools='"nika:write"'), engine_env=env(fake.url))
    assert rec(result).error["code"] == "NIKA-SEC-002"
    assert not (tmp_path / "out" / "x.txt").exists()  # the granted call before the violation never ran
    assert fake.count == 1


def test_a_contract_misfit_is_answered_before_anything_runs(run, tmp_path: Path):
    write = ("nika_write", {"path": "./out/x.txt", "content": "x", "create_dirs": True})
    bad = ("nika_read", {"pathx": "./a"})
    with serve([openai(calls=[write, bad]), openai("done")]) as fake:
        result = run(PERMITS_WF.format(tools='"nika:write", "nika:read"'), engine_env=env(fake.url))
    r = rec(result)
    assert r.status == "success" and (tmp_path / "out" / "x.txt").read_text() == "x"
    assert r.agent["failed_tool_calls"] == 1 and fake.count == 2
    answer = json.loads(tool_msgs(fake.seen[1].body)[1])
    assert answer["error"]["code"] == "NIKA-BUILTIN-001" and "pathx" in answer["error"]["message"]
    frames = [e for e in result.events if e["type"] == "tool.invoked" and e.get("phase") == "agent"]
    assert [(f["tool"], f["status"]) for f in frames] == [("nika:write", "ok"), ("nika:read", "error")]


def _window(frame: dict[str, Any]) -> tuple[float, float]:
    end = frame["at"] / 1e9  # the frame's timestamp, in nanoseconds
    return end - frame["duration_ms"] / 1000, end


def test_read_only_calls_of_a_reply_run_at_once(run):
    waits = [("nika_wait", {"duration": "300ms"}), ("nika_wait", {"duration": "301ms"})]
    with serve([openai(calls=waits), openai("done")]) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:wait"]'), engine_env=env(fake.url))
    assert rec(result).status == "success" and fake.count == 2
    a, b = (f for f in result.events if f["type"] == "tool.invoked" and f.get("phase") == "agent")
    (a0, a1), (b0, b1) = _window(a), _window(b)
    assert a0 < b1 and b0 < a1  # each wait began before the other ended: they overlapped
    assert len(tool_msgs(fake.seen[1].body)) == 2  # answered in the reply's order


def test_large_arguments_are_sent_once_then_fingerprinted(run):
    big = DRAFT_BIG = "nika: v1\nworkflow: { id: big }\n# " + "x" * 10_000 + "\n"
    assert len(DRAFT_BIG) > limits.RESEND_ARGS_CHARS
    replies = [openai(calls=[("nika_compose", {"workflow_yaml": big})]), openai(calls=[compose(2)]), openai("done")]
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    assert rec(result).status == "success" and fake.count == 3
    for later in fake.seen[1:]:
        sent = [c for m in later.body["messages"] if m.get("tool_calls") for c in m["tool_calls"]]
        stub = json.loads(sent[0]["function"]["arguments"])
        assert stub["elided"].startswith("sha256:") and stub["chars"] > 10_000
        assert "x" * 1000 not in json.dumps(later.body)


# -- default envelopes ---------------------------------------------------------------------------


def test_a_run_wall_clock_stops_an_agent_without_timeout(run):
    slow = openai(calls=[compose(2)])
    slow.delay_s = 60.0  # far past the clock: only a cut ends this call
    clock = json.dumps({"loop": "3s", "*": "10m"})  # per task, by id
    with serve([slow, openai("late")]) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]'),
            engine_env=env(fake.url, NIKA_AGENT_TIMEOUT=clock),
        )
    r = rec(result)
    assert r.agent["stop_reason"] == "deadline" and r.error["code"] == "NIKA-TIMEOUT-001"
    assert "NIKA_AGENT_TIMEOUT" in r.error["message"]  # the message names the clock that ran out
    (cut,) = _cut_frames(result)  # the slow call was cut at the clock (a reply would leave no cut frame)
    assert cut["error_code"] == "NIKA-TIMEOUT-001" and fake.count <= 1  # and no call followed
    assert limits.DEFAULT_AGENT_WALL_CLOCK_S == 600.0


def test_the_default_spend_cap_binds_a_priced_model(run):
    prices = json.dumps({"openai/gpt-test": {"input": 0, "output": 1_000_000}})  # $1 an output token
    with serve([openai("never")]) as fake:
        result = run(wf('      prompt: "go"'), engine_env=env(fake.url, NIKA_PRICES=prices))
    r = rec(result)
    assert r.agent["stop_reason"] == "cost-budget" and fake.count == 0  # $1 buys one token: no useful call
    assert "default $1" in r.error["message"]
    override = json.dumps({"loop": 20.5})  # per task: $20.50 buys 20 output tokens
    with serve([openai("ok", tin=1, tout=1)]) as fake:
        result = run(
            wf('      prompt: "go"'), engine_env=env(fake.url, NIKA_PRICES=prices, NIKA_AGENT_MAX_COST_USD=override)
        )
    assert rec(result).status == "success" and fake.seen[0].body["max_tokens"] == 20


# -- accounting ----------------------------------------------------------------------------------


def test_every_task_retry_attempt_is_in_the_record(run):
    down = Reply(503, {"error": "down"}, {"Retry-After": "0"})
    with serve([down, down, down, openai("ok")]) as fake:
        result = run(
            wf('      prompt: "go"', task_extra="retry: { max_attempts: 2, backoff_ms: 1 }"), engine_env=env(fake.url)
        )
    r = rec(result)
    assert r.status == "success" and fake.count == 4
    attempts = r.agent["attempts"]
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert [a["stop_reason"] for a in attempts] == ["provider-unreachable", "final-message"]
    assert [(a["turns"], a["tokens_in"] + a["tokens_out"]) for a in attempts] == [(1, 0), (1, 15)]


def test_the_providers_own_input_count_admits_the_next_call(run):
    with serve([openai(calls=[compose(1)], tin=10, tout=5), openai("done")]) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]\n      max_tokens_total: 3000'),
            engine_env=env(fake.url),
        )
    assert rec(result).status == "success" and fake.count == 2
    f1, f2 = (e for e in result.events if e.get("phase") == "model_call")
    assert f1["input_basis"] == "heuristic" and f2["input_basis"] == "provider"
    assert f2["input_estimate"] < len(json.dumps(fake.seen[1].body).encode()) // limits.ESTIMATE_BYTES_PER_TOKEN
    assert fake.seen[1].body["max_tokens"] == 3000 - 15 - f2["input_estimate"]
    assert fake.seen[0].body["max_tokens"] == 3000 - f1["input_estimate"]


# -- a call cut by a deadline ----------------------------------------------------------------------


def _cut_frames(result) -> list[dict[str, Any]]:
    return [e for e in result.events if e.get("phase") == "model_call" and e.get("cut")]


@pytest.mark.parametrize("clock", ["task", "run"])
def test_a_call_in_flight_at_the_deadline_is_journaled_as_cut(run, clock: str):
    """The task's `timeout:` (the run cancels the loop) and the loop's own wall clock (it times
    itself out) both leave a `cut` frame for the call that never returned, and the record says why."""
    seen: list[EffectCall] = []
    # 3 s: time for the call to reach the executor even on a loaded machine (it stalls there)
    extra, more = ('timeout: "3s"', {}) if clock == "task" else ("", {"NIKA_AGENT_TIMEOUT": "3s"})
    with serve([openai("never")]) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]', task_extra=extra),
            engine_env=env(fake.url, **more),
            executor=lambda host: Through(host, seen, stall_from=1),
        )
    r = rec(result)
    assert fake.count == 0 and len(seen) == 1  # the call stalled inside the executor
    assert r.error["code"] == "NIKA-TIMEOUT-001" and r.agent["stop_reason"] == "deadline"
    (cut,) = _cut_frames(result)
    assert cut["turn"] == 1 and cut["error_code"] == "NIKA-TIMEOUT-001"
    assert cut["max_tokens"] == 4096 and cut["input_basis"] == "heuristic"  # what the cut call was admitted with


def test_an_agent_turn_crosses_the_seam_as_a_plain_record():
    from runtime.errors import TaskError
    from runtime.providers.base import Response, ToolCall

    reply = Response(None, 7, None, 4, 3, (ToolCall("c0", "nika_read", {"path": "a"}, '{"path": "a"}'),), "hm", "x")
    assert Response.from_record(json.loads(json.dumps(reply.record()))) == reply
    with pytest.raises(TaskError, match="without the reply record"):
        Response.from_record("a bare value drops the tool calls")  # an executor that broke the contract


def test_each_iteration_of_a_for_each_agent_is_in_the_record(run):
    text = (
        "nika: v1\nworkflow: { id: fe }\nmodel: mock/echo\ntasks:\n  loop:\n    for_each: [1, 2]\n"
        '    agent:\n      prompt: "go ${{ item }}"\n'
    )
    attempts = rec(run(text)).agent["attempts"]
    assert sorted((a["index"], a["attempt"], a["stop_reason"]) for a in attempts) == [
        (0, 1, "final-message"),
        (1, 1, "final-message"),
    ]


@pytest.mark.parametrize(
    ("var", "value", "says"),
    [
        ("NIKA_AGENT_TIMEOUT", "ten minutes", "not a duration"),
        ("NIKA_AGENT_TIMEOUT", '{"loop": ', "not JSON"),
        ("NIKA_AGENT_MAX_COST_USD", "-1", "must not be negative"),
        ("NIKA_AGENT_MAX_COST_USD", '{"loop": "lots"}', "not a number"),
    ],
)
def test_a_malformed_envelope_variable_is_a_one_line_error(run, var: str, value: str, says: str):
    with serve([openai("never")]) as fake:
        result = run(wf('      prompt: "go"'), engine_env=env(fake.url, **{var: value}))
    r = rec(result)
    assert r.status == "failure" and r.error["code"] == "NIKA-PROVIDER-001"
    assert var in r.error["message"] and says in r.error["message"] and "\n" not in r.error["message"]
    assert fake.count == 0
