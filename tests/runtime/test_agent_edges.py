"""The edges of an agent turn (issue 40 items 2, 4, 5, 6), each against a scripted provider on
loopback that counts requests: a truncated answer is never the answer; a task's `retry:` attempts
draw on one budget; provider refusals read from their bodies; admission that cannot overshoot
(the input estimate covers the provider's own count, no call outlasts the time left)."""

from __future__ import annotations

import json
import math

from fake_llm import Reply, anthropic, openai, serve
from test_agent_loop import KEY, env, rec, wf

TOOLS = '      prompt: "go"\n      tools: ["nika:hash"]'


def hit(tag: str) -> tuple[str, dict[str, str]]:
    return ("nika_hash", {"content": tag})


def model_frames(result) -> list[dict]:
    return [e for e in result.events if e.get("phase") == "model_call" and e.get("task") == "loop"]


# -- item 2: truncation is never an answer -------------------------------------------------------------


def test_a_cut_answer_gets_one_continue_request(run):
    replies = [openai("The answer is forty-", finish="length"), openai("two.")]
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"'), engine_env=env(fake.url))
    r = rec(result)
    assert r.status == "success" and r.output == "The answer is forty-two."
    assert fake.count == 2 and r.agent["turns"] == 2  # the continue request is a turn
    last = fake.seen[1].body["messages"]
    assert last[-2] == {"role": "assistant", "content": "The answer is forty-"}
    assert "cut off by the output limit" in last[-1]["content"]


def test_cut_twice_fails_with_the_output_limit_code(run):
    """The model's own output limit set the cap (an uncatalogued model: the 4096 default)."""
    replies = [openai("part one, ", finish="length"), openai("part two", finish="length"), openai("never")]
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"'), engine_env=env(fake.url))
    r = rec(result)
    assert r.status == "failure" and r.error["code"] == "NIKA-AGENT-OUTPUT-001"
    assert r.agent["stop_reason"] == "output-limit" and r.error["category"] == "budget_error"
    assert r.error["details"]["partial_output"] == "part one, part two"
    assert fake.count == 2
    assert [f["capped_by"] for f in model_frames(result)] == ["model-limit", "model-limit"]


def test_a_cut_answer_with_no_budget_left_is_a_token_budget_failure(run):
    """The token budget set the cap, and nothing is left for the continue request: AGENT-002 with the
    partial text, and no second request."""
    replies = [openai("a long answer that was", finish="length", tin=1200, tout=700), openai("never")]
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"\n      max_tokens_total: 2000'), engine_env=env(fake.url))
    r = rec(result)
    assert r.error["code"] == "NIKA-AGENT-002" and r.agent["stop_reason"] == "token-budget"
    assert r.error["details"]["partial_output"] == "a long answer that was"
    assert fake.count == 1
    assert model_frames(result)[0]["capped_by"] == "token-budget"


def test_anthropic_max_tokens_stop_is_a_cut_too(run):
    replies = [anthropic("half", stop="max_tokens"), anthropic(" and the rest")]
    with serve(replies) as fake:
        result = run(
            wf('      prompt: "go"').replace("openai/gpt-test", "anthropic/claude-test"),
            engine_env={"NIKA_ANTHROPIC_BASE_URL": fake.url + "/v1/messages", "ANTHROPIC_API_KEY": KEY},
        )
    r = rec(result)
    assert r.output == "half and the rest" and fake.count == 2


# -- item 4: one budget across task retries --------------------------------------------------------------


def test_retry_attempts_draw_on_one_token_budget(run):
    """Attempt 1 spends 2,400 tokens, then the provider goes down; attempt 2 starts from what was
    spent (max_turns stays per attempt): one more call fits under 4,000, the next would not."""
    down = Reply(503, {"error": "down"}, {"Retry-After": "0"})
    spend = {"tin": 1000, "tout": 200}
    replies = [
        openai(calls=[hit("a")], **spend),
        openai(calls=[hit("b")], **spend),
        down,
        down,
        down,
        *(openai(calls=[hit(f"c{i}")], **spend) for i in range(5)),
        openai("done"),
    ]
    with serve(replies) as fake:
        result = run(
            wf(TOOLS + "\n      max_tokens_total: 4000", task_extra="retry: { max_attempts: 2, backoff_ms: 1 }"),
            engine_env=env(fake.url),
        )
    r = rec(result)
    head = r.agent
    assert head["stop_reason"] == "token-budget" and r.error["code"] == "NIKA-AGENT-002"
    assert fake.count == 6  # 2 answered + 3 down (attempt 1), then 1 answered (attempt 2)
    assert head["tokens_in"] + head["tokens_out"] == 3600 <= head["max_tokens_total"]
    attempts = head["attempts"]
    # turns: the failed turn of attempt 1 counts (a provider-unreachable stop ends a turn)
    assert [(a["attempt"], a["tokens_in"] + a["tokens_out"], a["turns"]) for a in attempts] == [
        (1, 2400, 3),
        (2, 1200, 1),
    ]
    assert sum(a["tokens_in"] + a["tokens_out"] for a in attempts) == head["tokens_in"] + head["tokens_out"]


# -- item 5: provider refusals read from their bodies ----------------------------------------------------


def test_quota_exhausted_is_permanent_with_its_own_message(run):
    body = {
        "error": {
            "message": "You exceeded your current quota, please check your plan and billing details.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    }
    with serve([Reply(429, body)], repeat_last=True) as fake:
        result = run(
            wf('      prompt: "go"', task_extra="retry: { max_attempts: 3, backoff_ms: 1 }"), engine_env=env(fake.url)
        )
    r = rec(result)
    assert fake.count == 1  # not a rate limit: no retry inside the loop, none by the task's `retry:`
    assert r.error["code"] == "NIKA-INFER-001" and r.error["transient"] is False
    assert "quota or credit is used up" in r.error["message"] and "billing" in r.error["message"]
    assert r.error["details"]["reason"] == "quota" and r.agent["stop_reason"] == "provider-error"


def test_a_region_block_says_so(run):
    body = {
        "error": {
            "code": "unsupported_country_region_territory",
            "message": "Country, region, or territory not supported",
            "param": None,
            "type": "request_forbidden",
        }
    }
    with serve([Reply(403, body)]) as fake:
        result = run(wf('      prompt: "go"'), engine_env=env(fake.url))
    err = rec(result).error
    assert "country or region" in err["message"] and "rejected the API key" not in err["message"]
    assert err["details"]["reason"] == "region" and fake.count == 1


def test_a_permission_block_says_so(run):
    body = {
        "type": "error",
        "error": {
            "type": "permission_error",
            "message": "Your API key does not have permission to use the specified resource.",
        },
    }
    with serve([Reply(403, body)]) as fake:
        result = run(
            wf('      prompt: "go"').replace("openai/gpt-test", "anthropic/claude-test"),
            engine_env={"NIKA_ANTHROPIC_BASE_URL": fake.url + "/v1/messages", "ANTHROPIC_API_KEY": KEY},
        )
    err = rec(result).error
    assert "accepted the API key but does not allow it" in err["message"] and "`ANTHROPIC_API_KEY`" in err["message"]
    assert err["details"]["reason"] == "permission" and KEY not in err["message"] and fake.count == 1


# -- item 6: admission that cannot overshoot -------------------------------------------------------------


def _chat_tokens(body: dict) -> int:
    """A provider's count of a chat request: its text at 3 bytes a token, message by message, plus
    the chat format's tokens (4 a message, 3 to prime the reply), as OpenAI documents its own."""
    msgs = body.get("messages") or []
    per = sum(math.ceil(len(json.dumps(m, ensure_ascii=False).encode()) / 3) + 4 for m in msgs)
    return 3 + per + math.ceil(len(json.dumps(body.get("tools") or [], ensure_ascii=False).encode()) / 3)


def counting(calls: list | None = None, text: str | None = None) -> Reply:
    def make(body: dict) -> dict:
        return openai(text, calls, tin=_chat_tokens(body), tout=20).body

    return Reply(make=make)


def test_the_admitted_estimate_covers_the_providers_own_count(run):
    replies = [counting(calls=[hit(f"x{i}" * 40)]) for i in range(4)] + [counting(text="done")]
    with serve(replies) as fake:
        result = run(wf(TOOLS), engine_env=env(fake.url))
    assert rec(result).status == "success" and fake.count == 5
    frames = model_frames(result)
    counted = [_chat_tokens(s.body) for s in fake.seen]
    assert [f["tokens_in"] for f in frames] == counted
    for frame, reported in zip(frames, counted, strict=True):
        assert frame["input_estimate"] >= reported, (frame["input_basis"], frame["input_estimate"], reported)


def test_no_call_is_sent_that_would_outlast_the_time_left(run):
    """The first call takes 3.5 s of the task's 6 s: less than that is left when it returns, so the
    next is not sent (it would be cut in flight) and the loop stops at the deadline with nothing in
    flight. The reply's delay is over half the timeout, so the refusal holds however slow the
    machine (a slower start only leaves less time), and the first call has 2.5 s of slack to be
    sent before the timeout would cut it (1.2 s of 2 s failed at a load average of 10)."""
    slow = openai(calls=[hit("a")])
    slow.delay_s = 3.5
    with serve([slow, openai("late")]) as fake:
        result = run(wf(TOOLS, task_extra='timeout: "6s"'), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "deadline" and r.error["code"] == "NIKA-TIMEOUT-001"
    assert "expected to take about" in r.error["message"]
    assert fake.count == 1
    assert not [f for f in model_frames(result) if f.get("cut")]  # nothing was cut: nothing was sent


def _dense_tokens(body: dict) -> int:
    """A provider whose tokenizer runs denser than the estimator's 3 bytes a token (2.5: text in a
    script it splits finely, digests, numbers)."""
    seen = {"messages": body.get("messages") or [], "tools": body.get("tools") or []}
    return math.ceil(len(json.dumps(seen, ensure_ascii=False).encode()) / 2.5)


def test_a_denser_tokenizer_is_corrected_by_the_providers_count(run):
    """From the second call on the estimate reads the density the provider's own count showed: it
    covers the count of every later request (the first is the heuristic's, 3 bytes a token)."""

    def dense(calls=None, text=None) -> Reply:
        return Reply(make=lambda body: openai(text, calls, tin=_dense_tokens(body), tout=20).body)

    replies = [dense(calls=[hit(f"y{i}" * 60)]) for i in range(4)] + [dense(text="done")]
    with serve(replies) as fake:
        result = run(wf(TOOLS), engine_env=env(fake.url))
    assert rec(result).status == "success" and fake.count == 5
    frames = model_frames(result)
    for frame, seen in list(zip(frames, fake.seen, strict=True))[1:]:
        assert frame["input_basis"] == "provider"
        assert frame["input_estimate"] >= _dense_tokens(seen.body), frame
