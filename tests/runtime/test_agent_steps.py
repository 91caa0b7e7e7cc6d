"""A reply is one step for every stop rule (issue 40 item 1), proven with MIXED batches against the
fake OpenAI-wire server on loopback that counts requests: each stop fires at the reply this
reading says, not at the call inside a reply. Also a whitelisted name with no tool behind it
(item 3): fed back, counted toward the failure budget; a name outside the whitelist stays SEC-002.

In every test below, the step a stop fires at equals the number of requests the server received
(the stop is judged once the reply's calls are settled, before any further request)."""

from __future__ import annotations

import json

from fake_llm import openai, serve
from test_agent_loop import compose, env, rec, wf

from runtime.guard import limits

HASH_TOOLS = '      prompt: "go"\n      tools: ["nika:hash"]\n      max_turns: 20'


def hit(tag: str) -> tuple[str, dict[str, str]]:
    """A successful call with a result of its own (the hash of ``tag``)."""
    return ("nika_hash", {"content": tag})


def miss(n: int = 0) -> tuple[str, dict[str, object]]:
    """A failing call (its arguments miss the contract: fed back as NIKA-BUILTIN-001)."""
    return ("nika_hash", {"contentx": n})


def tool_answers(fake, i: int) -> list[str]:
    return [m["content"] for m in fake.seen[i].body["messages"] if m["role"] == "tool"]


def test_failure_budget_counts_replies_whose_calls_all_failed(run):
    """Three calls failing in ONE reply are one failed step: the budget (3) is reached at the third
    all-failing reply, not at the third call."""
    replies = [openai(calls=[miss(1), miss(2), miss(3)]) for _ in range(5)]
    with serve(replies) as fake:
        result = run(wf(HASH_TOOLS), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "failure-budget" and r.error["code"] == "NIKA-AGENT-001"
    assert r.error["details"]["tool_code"] == "NIKA-BUILTIN-001"  # a check-phase code: the loop is stuck
    assert fake.count == limits.FAILURE_BUDGET == 3
    assert r.agent["turns"] == 3 and r.agent["failed_tool_calls"] == 9
    assert "3 replies in a row" in r.error["message"]


def test_a_mixed_reply_is_judged_by_its_results(run):
    """One hit among two misses makes a step that worked: the count starts again after it."""
    all_miss = [miss(1), miss(2), miss(3)]
    replies = [
        openai(calls=all_miss),
        openai(calls=all_miss),
        openai(calls=[hit("fresh"), miss(4), miss(5)]),  # mixed: a success resets the failure count
        openai(calls=all_miss),
        openai(calls=all_miss),
        openai(calls=all_miss),
        openai("never"),
    ]
    with serve(replies) as fake:
        result = run(wf(HASH_TOOLS), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "failure-budget"
    assert fake.count == 6  # steps 1, 2 failed; 3 worked; 4, 5, 6 failed: the third in a row stops
    assert len(tool_answers(fake, 2)) == 6  # the reply-3 answers went back (two earlier replies of three)


def test_no_novelty_counts_replies_not_calls(run):
    """Two calls of one reply returning the same verdict are one observation: the loop stops at the
    third reply that observed nothing new (mixed: a failing call beside them changes nothing)."""
    replies = [openai(calls=[compose(3 * i), compose(3 * i + 1), miss(i)]) for i in range(6)]
    with serve(replies) as fake:
        result = run(
            wf('      prompt: "go"\n      tools: ["nika:compose", "nika:hash"]\n      max_turns: 20'),
            engine_env=env(fake.url),
        )
    r = rec(result)
    assert r.agent["stop_reason"] == "no-novelty" and r.error["code"] == "NIKA-AGENT-001"
    assert fake.count == limits.NO_NOVELTY_REPEATS == 3
    assert r.agent["tool_calls"] == 9  # every call of the three replies ran before the judgement


def test_streak_counts_replies_of_one_tool(run):
    """Three parallel successful calls of one tool per reply: the streak is one per reply, so it is
    exhausted at reply STREAK_LIMIT (8), not at reply 3 (mixed: a miss rides along)."""
    replies = [openai(calls=[hit(f"a{i}"), hit(f"b{i}"), miss(i)]) for i in range(12)]
    with serve(replies) as fake:
        result = run(wf(HASH_TOOLS), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "streak-exhausted"
    assert fake.count == limits.STREAK_LIMIT == 8
    assert "8 replies in a row" in r.error["message"]


def test_executed_duplicate_counts_what_the_model_was_told(run):
    """Two copies of an executed call in one reply are one refusal the model reads: the stop comes
    when a LATER reply proposes it again (mixed: a fresh success rides along the copies)."""
    a = hit("a")
    replies = [openai(calls=[a]), openai(calls=[a, a, hit("b")]), openai(calls=[a]), openai("never")]
    with serve(replies) as fake:
        result = run(wf(HASH_TOOLS), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "executed-duplicate" and r.error["code"] == "NIKA-AGENT-001"
    assert fake.count == 3
    assert r.agent["duplicates_refused"] == 3  # two in reply 2 (told once), one in reply 3
    assert all("already succeeded" in json.loads(t).get("refused", "") for t in tool_answers(fake, 2)[1:3])


def test_a_copy_inside_the_first_reply_is_not_a_told_duplicate(run):
    """[a, a]: the first copy runs, the second is answered with its result, but the model had not
    been told before, so it does not count: the stop is at reply 3, after two told refusals."""
    a = hit("a")
    replies = [openai(calls=[a, a]), openai(calls=[a]), openai(calls=[a]), openai("never")]
    with serve(replies) as fake:
        result = run(wf(HASH_TOOLS), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "executed-duplicate"
    assert fake.count == 3 and r.agent["tool_calls"] == 1


# -- item 3: a whitelisted name without a tool ------------------------------------------------------


def test_a_whitelisted_name_with_no_tool_is_fed_back(run):
    """`nika:frobnicate` is inside `nika:*` but no builtin answers to it: the model is told which
    tools there are (naming the tool id, not the wire name), and the loop goes on."""
    replies = [openai(calls=[("nika_frobnicate", {"x": 1})]), openai("done without it")]
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:hash", "nika:done"]'), engine_env=env(fake.url))
    r = rec(result)
    assert r.error is not None and r.error["code"] == "NIKA-SEC-002"  # outside this whitelist: refused
    assert "`nika:frobnicate`" in r.error["message"] and "nika_frobnicate" not in r.error["message"]
    assert fake.count == 1
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:*"]'), engine_env=env(fake.url))
    r = rec(result)
    assert r.status == "success" and r.output == "done without it" and fake.count == 2
    (answer,) = tool_answers(fake, 1)
    err = json.loads(answer)["error"]
    assert err["code"] == "NIKA-INVOKE-001"
    assert err["message"].startswith("no such tool `nika:frobnicate`; the tools are: ")
    assert "nika:hash" in err["message"] and r.agent["failed_tool_calls"] == 1


def test_missing_tools_count_toward_the_failure_budget(run):
    replies = [openai(calls=[("nika_nope", {}), miss(i)]) for i in range(5)]
    with serve(replies) as fake:
        result = run(wf('      prompt: "go"\n      tools: ["nika:*"]'), engine_env=env(fake.url))
    r = rec(result)
    assert r.agent["stop_reason"] == "failure-budget" and fake.count == 3
