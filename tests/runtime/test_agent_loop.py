"""The agent loop: one test per stop reason, each against the fake OpenAI-wire server on loopback,
asserting the reason, the code, and how many model calls the server received (never one more
after a budget ran out)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_llm import Reply, openai, serve

from runtime.agent import Envelope, Ledger, Stop, StopReason, compose_system, fingerprint

KEY = "sk-test-0123456789abcdef"
OK_SCHEMA = "schema: { type: object, required: [ok], properties: { ok: { type: boolean } } }"
DRAFT = "nika: v1\nworkflow: {{ id: d{n} }}\nmodel: mock/echo\ntasks:\n  a:\n    infer: {{ prompt: hi }}\n"


def env(url: str, **more: str) -> dict[str, str]:
    return {"NIKA_OPENAI_BASE_URL": url + "/v1/chat/completions", "NIKA_OPENAI_API_KEY": KEY, **more}


def wf(agent: str, task_extra: str = "") -> str:
    """A one-task workflow; ``agent`` holds the agent's fields, one per line."""
    fields = "\n".join("      " + line.strip() for line in agent.strip().splitlines())
    extra = f"    {task_extra}\n" if task_extra else ""
    return (
        "nika: v1\nworkflow: { id: agent-test }\nmodel: openai/gpt-test\ntasks:\n  loop:\n"
        f"{extra}    agent:\n{fields}\n"
    )


def compose(n: int) -> tuple[str, dict[str, str]]:
    return ("nika_compose", {"workflow_yaml": DRAFT.format(n=n)})


def rec(result):
    return result.tasks["loop"]


def test_done_result_becomes_output(run):
    with serve([openai(calls=[("nika_done", {"result": {"status": "ok"}})])]) as fake:
        result = run(
            wf(
                '      prompt: "go"\n      tools: ["nika:done"]\n'
                "      schema: { type: object, required: [status], properties: { status: { type: string } } }"
            ),
            engine_env=env(fake.url),
        )
    assert rec(result).status == "success"
    assert rec(result).output == {"status": "ok"}
    assert rec(result).agent["stop_reason"] == "done"
    assert fake.count == 1
    sent = fake.seen[0]
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert [t["function"]["name"] for t in sent.body["tools"]] == ["nika_done"]


def test_final_message_without_tool_calls(run):
    with serve([openai("the answer")]) as fake:
        result = run(wf('      prompt: "go"'), engine_env=env(fake.url))
    assert rec(result).output == "the answer"
    assert rec(result).agent == {
        "stop_reason": "final-message",
        "turns": 1,
        "max_turns": 10,
        "tokens_in": 10,
        "tokens_out": 5,
        "max_tokens_total": 120000,
        "tool_calls": 0,
        "failed_tool_calls": 0,
        "duplicates_refused": 0,
    }
    assert "tools" not in fake.seen[0].body  # default-deny: no tools offered


def test_max_turns_fails_with_partial_output_and_no_extra_call(run):
    replies = [openai(f"step {i}", calls=[compose(i)]) for i in range(5)]
    with serve(replies) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]\n      max_turns: 2'), engine_env=env(fake.url)
        )
    r = rec(result)
    assert r.status == "failure"
    assert r.error["code"] == "NIKA-AGENT-001"
    assert r.error["category"] == "budget_error"
    assert r.error["details"]["partial_output"] == "step 1"
    assert r.error["details"]["stop_reason"] == "max-turns"
    assert r.agent["turns"] == 2
    assert fake.count == 2
    # the compose verdicts went back to the model as tool results
    tool_msgs = [m for m in fake.seen[1].body["messages"] if m["role"] == "tool"]
    assert json.loads(tool_msgs[0]["content"])["valid"] is True


def test_token_budget_is_checked_before_the_next_call(run):
    """Pre-call admission (seed "budgets first", 02 §Loop semantics case 3): spent + input estimate
    + output cap stays inside `max_tokens_total`, and a call that would overshoot is never sent."""
    replies = [openai(calls=[compose(i)], tin=3800, tout=20) for i in range(5)]
    with serve(replies) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]\n      max_tokens_total: 4000'),
            engine_env=env(fake.url),
        )
    r = rec(result)
    assert r.error["code"] == "NIKA-AGENT-002"
    assert r.agent["stop_reason"] == "token-budget"
    assert fake.count == 1  # 3820 spent: the next call's input estimate alone leaves no useful output
    first = fake.seen[0].body
    assert first["max_tokens"] + len(json.dumps(first).encode()) // 4 <= 4000  # input estimate + cap fit


def test_output_cap_never_exceeds_the_model_maximum(run):
    """The output cap is the model's documented maximum at most (limits.MODEL_MAX_OUTPUT_TOKENS),
    not the whole remaining budget."""
    with serve([openai("ok")]) as fake:
        run(wf('      prompt: "go"'), engine_env=env(fake.url))
    assert fake.seen[0].body["max_tokens"] == 4096


def test_no_request_when_the_budget_cannot_fit_one_call(run):
    with serve([openai("never")]) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]\n      max_tokens_total: 100'),
            engine_env=env(fake.url),
        )
    assert rec(result).agent["stop_reason"] == "token-budget"
    assert fake.count == 0


def test_token_budget_counts_an_estimate_when_usage_is_absent(run):
    """A provider that reports no usage still spends the token budget (by the estimate)."""
    replies = [openai(calls=[compose(i)], tin=0, tout=0) for i in range(10)]
    with serve(replies) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]\n      max_tokens_total: 700'),
            engine_env=env(fake.url),
        )
    r = rec(result)
    assert r.agent["stop_reason"] == "token-budget"
    assert r.agent["tokens_in"] > 0
    assert 1 <= fake.count < 3  # before no-novelty (3) could fire


def test_cost_budget(run):
    """The output cap is priced against the cost ceiling before the call; a call that could
    overshoot it is not sent (seed "budgets first")."""
    prices = json.dumps({"openai/gpt-test": {"input": 0, "output": 1_000_000}})  # $1 per output token
    replies = [openai(calls=[compose(i)], tin=10, tout=10) for i in range(5)]
    with serve(replies) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]'),
            engine_env=env(fake.url, NIKA_PRICES=prices, NIKA_AGENT_MAX_COST_USD="20.5"),
        )
    r = rec(result)
    assert r.agent["stop_reason"] == "cost-budget"
    assert r.error["code"] == "NIKA-AGENT-002"
    assert fake.seen[0].body["max_tokens"] == 20  # $20.50 buys at most 20 output tokens
    assert fake.count == 1  # $10 spent: $10.50 left buys 10 tokens, below a useful reply
    assert r.agent["cost_usd"] == pytest.approx(10.0)


def test_deadline_stops_the_loop_and_cuts_the_hanging_call(run):
    slow = openai(calls=[compose(2)])
    slow.delay_s = 60.0  # far past the deadline: a reply would leave a frame without an error
    with serve([openai(calls=[compose(1)]), slow, openai("late")]) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]', task_extra='timeout: "3s"'),
            engine_env=env(fake.url),
        )
        assert fake.count in (1, 2)  # the run has ended: the late reply is never asked for
    r = rec(result)
    assert r.error["code"] == "NIKA-TIMEOUT-001"
    assert r.agent["stop_reason"] == "deadline"
    model_frames = [e for e in result.events if e.get("phase") == "model_call"]
    # the call in flight at the deadline was cut: the slow one (or, on a machine too loaded to
    # answer the first within the deadline, the first), and no frame after it
    assert len(model_frames) == fake.count and model_frames[-1]["error_code"] in ("cut", "NIKA-TIMEOUT-001")


def test_deadline_checked_before_a_call():
    from runtime.agent.budgets import check_before

    env = Envelope(time.monotonic() - 0.01, "the task's `timeout:`", False)
    with pytest.raises(Stop) as stop:
        check_before(Ledger(10, 1000), env)
    assert stop.value.reason == StopReason.DEADLINE
    assert stop.value.error is not None and stop.value.error.code == "NIKA-TIMEOUT-001"


def test_failure_budget_three_failed_tool_calls(run):
    bad = ("nika_compose", {"workflow_yaml": 7})
    replies = [openai(calls=[bad]) for _ in range(5)]
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "failure-budget"
    assert r.agent["failed_tool_calls"] == 3
    # the model's arguments broke the tool's static contract: a check-phase code is never the run's
    # verdict on the workflow, so the agent fails as a stuck loop, the tool's code in details
    assert r.error["code"] == "NIKA-AGENT-001"
    assert r.error["details"]["tool_code"] == "NIKA-BUILTIN-001"
    assert fake.count == 3
    fed_back = next(m for m in fake.seen[1].body["messages"] if m["role"] == "tool")
    assert "workflow_yaml" in json.loads(fed_back["content"])["error"]["message"]


def test_a_failure_budget_keeps_a_run_code_of_the_last_tool_error():
    """A tool failure the run raises (a network error) stays the agent's code: retry can route on it."""
    from runtime.agent import stops
    from runtime.errors import TaskError

    fetch = stops.failure_budget(3, "nika:fetch", TaskError("NIKA-BUILTIN-FETCH-001", "503", transient=True))
    assert fetch.error is not None and fetch.error.code == "NIKA-BUILTIN-FETCH-001"
    args = stops.failure_budget(3, "nika:fetch", TaskError("NIKA-VAR-005", "bad jq"))
    assert args.error is not None and args.error.code == "NIKA-AGENT-001"


def test_executed_duplicate_refused_then_stops(run):
    same = compose(1)
    reordered = ("nika_compose", dict(reversed(list(same[1].items()))))
    replies = [openai(calls=[same]), openai(calls=[reordered]), openai(calls=[same]), openai("x")]
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "executed-duplicate"
    assert r.agent["duplicates_refused"] == 2
    assert r.agent["tool_calls"] == 1  # only the first call ran
    assert r.error["code"] == "NIKA-AGENT-001"
    assert fake.count == 3
    refusal = [m for m in fake.seen[2].body["messages"] if m["role"] == "tool"][-1]
    assert "already succeeded" in refusal["content"]


def test_failed_calls_stay_retryable():
    assert fingerprint("nika:x", {"a": 1, "b": 2}) == fingerprint("nika:x", {"b": 2, "a": 1})


def test_proposal_lost_after_two_malformed_replies(run):
    with serve([openai("not json"), openai("{still not"), openai('{"ok": true}')]) as fake:
        result = run(
            wf('prompt: "go"\n' + OK_SCHEMA),
            engine_env=env(fake.url),
        )
    r = rec(result)
    assert r.agent["stop_reason"] == "proposal-lost"
    assert r.error["code"] == "NIKA-INFER-002"
    assert fake.count == 2
    assert "not JSON" in fake.seen[1].body["messages"][-1]["content"]  # the one short retry said why


def test_one_malformed_reply_is_repaired(run):
    with serve([openai("oops"), openai('```json\n{"ok": true}\n```')]) as fake:
        result = run(
            wf('prompt: "go"\n' + OK_SCHEMA),
            engine_env=env(fake.url),
        )
    assert rec(result).output == {"ok": True}
    assert fake.count == 2


def test_provider_unreachable_after_bounded_retries(run):
    with serve([Reply(503, {"error": "down"}, {"Retry-After": "0"})], repeat_last=True) as fake:
        result = run(wf('      prompt: "go"'), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "provider-unreachable"
    assert r.error["code"] == "NIKA-PROVIDER-001"
    assert r.error["transient"] is True
    assert fake.count == 3  # one call and two retries, then the loop stops instead of looping blind


def test_provider_error_names_the_key_variable_never_the_key(run, tmp_path: Path):
    with serve([Reply(401, {"error": {"message": f"bad key {KEY}"}})]) as fake:
        result = run(wf('      prompt: "go"'), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "provider-error"
    assert r.error["code"] == "NIKA-INFER-001"
    assert "NIKA_OPENAI_API_KEY" in r.error["message"] and "OPENAI_API_KEY" in r.error["message"]
    assert fake.count == 1
    assert KEY not in json.dumps(result.report(), default=str)
    trace = Path(result.trace).read_text()
    assert KEY not in trace


def test_security_tool_outside_the_whitelist_fails_at_once(run):
    replies = [openai(calls=[("nika_write", {"path": "x", "content": "y"})]), openai("never")]
    with serve(replies) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:*", "!nika:write"]', task_extra="on_error: { skip: true }"),
            engine_env=env(fake.url),
        )
    r = rec(result)
    assert r.status == "skipped"
    assert r.error["code"] == "NIKA-SEC-002"
    assert r.error["category"] == "security_error"
    assert r.agent["stop_reason"] == "security"
    assert fake.count == 1
    offered = [t["function"]["name"] for t in fake.seen[0].body["tools"]]
    assert "nika_write" not in offered and "nika_read" in offered


def test_unknown_tool_is_a_security_error(run):
    with serve([openai(calls=[("shell_exec", {"cmd": "rm -rf /"})])]) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    assert rec(result).error["code"] == "NIKA-SEC-002"
    assert fake.count == 1


def test_trace_has_a_frame_per_model_and_tool_call(run):
    with serve([openai(calls=[compose(1)]), openai("done")]) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    kinds = [(e["type"], e.get("phase")) for e in result.events if e.get("task") == "loop"]
    assert kinds.count(("verb.invoked", "model_call")) == 2
    assert ("tool.invoked", "agent") in kinds
    model_call = next(e for e in result.events if e.get("phase") == "model_call")
    assert model_call["provider"] == "openai" and model_call["tokens_in"] == 10
    assert fake.count == 2


def test_skills_section_injected_after_system(run, tmp_path: Path):
    for name, body in (("a", "Do A.\n\n"), ("b", "")):
        d = tmp_path / name
        d.mkdir()
        (d / "SKILL.md").write_text(f"---\nname: skill-{name}\ndescription: about {name}\n---\n\n{body}")
    with serve([openai("ok")]) as fake:
        run(
            wf('      prompt: "go"\n      system: "Be brief."\n      skills: ["a/SKILL.md", "b/SKILL.md"]'),
            engine_env=env(fake.url),
        )
    system = fake.seen[0].body["messages"][0]
    assert system["role"] == "system"
    skills = "Be brief.\n\n## Skills\n\n### skill-a\n\nabout a\n\nDo A.\n\n### skill-b\n\nabout b"
    assert system["content"].startswith(skills + "\n\n## Your budget this turn\n")  # the snapshot follows


def test_compose_system_without_authored_system(tmp_path: Path):
    (tmp_path / "S.md").write_text("---\nname: n\ndescription: d\n---\nbody\n")
    assert compose_system(None, ["S.md"], str(tmp_path)) == "## Skills\n\n### n\n\nd\n\nbody"


def test_priced_model_without_usage_fails_closed(run):
    prices = json.dumps({"openai/gpt-test": {"input": 1, "output": 1}})
    with serve([openai("x", tin=0, tout=0), openai("never")]) as fake:
        result = run(wf('prompt: "go"'), engine_env=env(fake.url, NIKA_PRICES=prices))
    assert rec(result).error["code"] == "NIKA-AGENT-005"
    assert fake.count == 1


def test_provider_retry_is_an_attempt_not_a_turn(run):
    """A 429 retried inside the loop is an attempt of the same turn: a `max_turns: 2` agent whose
    first call is rate-limited still finishes (02 §Loop semantics counts turns, not HTTP attempts)."""
    replies = [Reply(429, {"error": "slow down"}, {"Retry-After": "0"}), openai(calls=[compose(1)]), openai("done")]
    with serve(replies) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]\n      max_turns: 2'), engine_env=env(fake.url)
        )
    r = rec(result)
    assert r.status == "success" and r.output == "done"
    assert r.agent["turns"] == 2
    assert fake.count == 3
    assert fake.seen[0].body == fake.seen[1].body  # the retry re-sent the same turn


def test_two_malformed_calls_in_one_reply_get_their_retry(run):
    """One reply with two malformed calls is one malformed reply: the second in a row stops, not
    the second call of the first reply (seed "two in a row")."""
    bad = [("nika_compose", "{not json"), ("nika_compose", "[1]")]
    with serve([openai(calls=bad), openai("fixed")]) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    r = rec(result)
    assert r.status == "success" and r.output == "fixed"
    assert fake.count == 2
    assert [m["role"] for m in fake.seen[1].body["messages"]].count("tool") == 2


def test_duplicates_count_per_fingerprint_in_a_row(run):
    """Two unrelated duplicates with a new successful call between them do not end a healthy run."""
    replies = [
        openai(calls=[compose(1)]),
        openai(calls=[compose(1)]),  # duplicate of 1, refused
        openai(calls=[compose(2)]),  # progress resets the count
        openai(calls=[compose(2)]),  # duplicate of 2, refused
        openai("finished"),
    ]
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    r = rec(result)
    assert r.status == "success" and r.output == "finished"
    assert r.agent["duplicates_refused"] == 2
    assert fake.count == 5


def test_empty_final_message_is_nudged_once(run):
    """An empty final message is not success (seed "a non-empty answer"): one nudge, then the answer."""
    with serve([openai(calls=[compose(1)]), openai(""), openai("the answer")]) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    assert rec(result).status == "success" and rec(result).output == "the answer"
    assert fake.count == 3
    assert "empty" in fake.seen[2].body["messages"][-1]["content"]


def test_empty_final_message_twice_fails_with_the_observations(run):
    with serve([openai(calls=[compose(1)]), openai(""), openai(""), openai("never")]) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    r = rec(result)
    assert r.status == "failure"
    assert r.agent["stop_reason"] == "empty-answer"
    assert r.error["code"] == "NIKA-INFER-002"
    assert '"valid": true' in r.error["details"]["partial_output"]  # the deterministic extract
    assert fake.count == 3


def test_no_novelty_stops_identical_observations(run):
    """Three successful calls in a row with the same observation stop the loop (seed no-novelty)."""
    replies = [openai(calls=[compose(i)]) for i in range(10)]  # fresh drafts, the same verdict each time
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "no-novelty"
    assert r.error["code"] == "NIKA-AGENT-001"
    assert fake.count == 3


def test_streak_exhausted_same_tool_over_and_over(run):
    """The same tool succeeding STREAK_LIMIT times in a row stops the loop (seed streak-exhausted)."""
    from runtime.guard import limits

    drafts = [("nika_compose", {"workflow_yaml": f"nika: v1\nworkflow: {{ id: d{i} }}\n"}) for i in range(12)]
    # alternate between two verdicts so no observation repeats back to back
    drafts = [d if i % 2 else compose(i) for i, d in enumerate(drafts)]
    with serve([openai(calls=[d]) for d in drafts]) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose"]\n      max_turns: 20'), engine_env=env(fake.url)
        )
    r = rec(result)
    assert r.agent["stop_reason"] == "streak-exhausted"
    assert fake.count == limits.STREAK_LIMIT


def test_tool_frames_carry_fingerprint_summary_duration_and_cost(run):
    """Audit (seed "tool.call events carry cost + result summary"): the canonical fingerprint,
    a bounded result summary, the duration and the cost are in every executed tool frame."""
    from runtime.guard import limits

    with serve([openai(calls=[compose(1)]), openai("done")]) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:compose"]'), engine_env=env(fake.url))
    frame = next(e for e in result.events if e["type"] == "tool.invoked" and e.get("phase") == "agent")
    import hashlib

    want = hashlib.sha256(fingerprint("nika:compose", compose(1)[1]).encode()).hexdigest()
    assert frame["fingerprint"] == "sha256:" + want
    assert '"valid": true' in frame["result_summary"]
    assert len(frame["result_summary"]) <= limits.TOOL_SUMMARY_CHARS + 1
    assert frame["cost_usd"] == 0.0 and frame["duration_ms"] >= 0
    assert fake.count == 2
