"""The three wire adapters against a fake server on 127.0.0.1 speaking each format: requests as
sent, replies as read, and every error class (401, 429 + Retry-After, 5xx, malformed and huge
bodies, empty choices, a server that hangs)."""

from __future__ import annotations

import json

import pytest
from fake_llm import Reply, anthropic, gemini, openai, serve

from checker.contracts import tables as contracts
from runtime.providers.registry import endpoint_for

KEY = "secret-key-abcdef123456"

WIRE_CASES = {
    # provider, env for the fake endpoint, reply builder, path the request must hit
    "openai": ("openai", lambda u: {"NIKA_OPENAI_BASE_URL": u + "/v1/chat/completions", "OPENAI_API_KEY": KEY}, openai),
    "anthropic": (
        "anthropic",
        lambda u: {"NIKA_ANTHROPIC_BASE_URL": u + "/v1/messages", "ANTHROPIC_API_KEY": KEY},
        anthropic,
    ),
    "gemini": (
        "gemini",
        lambda u: {"NIKA_GEMINI_BASE_URL": u + "/v1beta/models/{model}:generateContent", "GOOGLE_API_KEY": KEY},
        gemini,
    ),
}


def infer_wf(model: str, extra: str = "", task_extra: str = "") -> str:
    lines = [
        "nika: v1",
        "workflow: { id: wire }",
        "tasks:",
        "  t:",
        *([f"    {task_extra}"] if task_extra else []),
        "    infer:",
        f"      model: {model}",
        '      prompt: "Say hi"',
        '      system: "Be terse."',
        "      temperature: 0.2",
        "      max_tokens: 50",
        *[f"      {x}" for x in extra.splitlines() if x],
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("wire", list(WIRE_CASES))
def test_text_call_request_and_usage(run, wire):
    pid, env, reply = WIRE_CASES[wire]
    with serve([reply("hi there", tin=7, tout=3)]) as fake:
        result = run(infer_wf(f"{pid}/m-1"), engine_env=env(fake.url))
    assert result.tasks["t"].status == "success", result.tasks["t"].error
    assert result.tasks["t"].output == "hi there"
    seen = fake.seen[0]
    body = seen.body
    if wire == "openai":
        assert seen.path == "/v1/chat/completions"
        assert seen.headers["authorization"] == f"Bearer {KEY}"
        assert body["model"] == "m-1" and body["temperature"] == 0.2 and body["max_tokens"] == 50
        assert body["messages"] == [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Say hi"}]
    elif wire == "anthropic":
        assert seen.path == "/v1/messages"
        assert seen.headers["x-api-key"] == KEY and seen.headers["anthropic-version"]
        assert body["system"] == "Be terse." and body["max_tokens"] == 50
        assert body["messages"] == [{"role": "user", "content": "Say hi"}]
    else:
        assert seen.path == "/v1beta/models/m-1:generateContent"
        assert seen.headers["x-goog-api-key"] == KEY and KEY not in seen.path
        assert body["systemInstruction"] == {"parts": [{"text": "Be terse."}]}
        assert body["generationConfig"] == {"temperature": 0.2, "maxOutputTokens": 50}
    call = next(e for e in result.events if e["type"] == "verb.invoked" and e.get("phase") == "model_call")
    assert (call["tokens_in"], call["tokens_out"], call["provider"]) == (7, 3, pid)
    assert KEY not in json.dumps(result.report(), default=str)


@pytest.mark.parametrize("wire", list(WIRE_CASES))
def test_schema_structured_output(run, wire):
    pid, env, reply = WIRE_CASES[wire]
    schema = "schema: { type: object, required: [n], properties: { n: { type: integer } } }"
    with serve([reply('{"n": 3}'), reply('{"n": "three"}')]) as fake:
        ok = run(infer_wf(f"{pid}/m", schema), engine_env=env(fake.url))
        bad = run(infer_wf(f"{pid}/m", schema), engine_env=env(fake.url))
    assert ok.tasks["t"].output == {"n": 3}
    assert bad.tasks["t"].error["code"] == "NIKA-INFER-002"
    body = fake.seen[0].body
    if wire == "openai":
        assert body["response_format"]["json_schema"]["schema"]["required"] == ["n"]
    elif wire == "anthropic":
        assert "JSON Schema" in body["system"]
    else:
        assert body["generationConfig"]["responseMimeType"] == "application/json"


@pytest.mark.parametrize("wire", list(WIRE_CASES))
def test_agent_tool_call_turn(run, wire):
    pid, env, reply = WIRE_CASES[wire]
    draft = "nika: v1\nworkflow: { id: d }\nmodel: mock/echo\ntasks:\n  a:\n    infer: { prompt: hi }\n"
    replies = [reply("checking", calls=[("nika_compose", {"workflow_yaml": draft})]), reply("all good")]
    src = (
        f"nika: v1\nworkflow: {{ id: w }}\nmodel: {pid}/m\ntasks:\n  t:\n    agent:\n"
        '      prompt: "draft one"\n      tools: ["nika:compose"]\n'
    )
    with serve(replies) as fake:
        result = run(src, engine_env=env(fake.url))
    assert result.tasks["t"].output == "all good", result.tasks["t"].error
    assert fake.count == 2
    second = fake.seen[1].body
    if wire == "openai":
        assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "nika_compose"
        assert second["messages"][-1]["role"] == "tool" and '"valid": true' in second["messages"][-1]["content"]
    elif wire == "anthropic":
        assert second["messages"][-2]["content"][1]["type"] == "tool_use"
        result_block = second["messages"][-1]["content"][0]
        assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == "tu0"
    else:
        assert second["contents"][-2]["parts"][1]["functionCall"]["name"] == "nika_compose"
        assert second["contents"][-1]["parts"][0]["functionResponse"]["response"]["content"]["valid"] is True


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_name_the_key_variable(run, status):
    with serve([Reply(status, {"error": {"message": "invalid x-api-key"}})]) as fake:
        result = run(
            infer_wf("anthropic/m"), engine_env={"NIKA_ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": KEY}
        )
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-INFER-001" and err["transient"] is False
    assert "`ANTHROPIC_API_KEY`" in err["message"] and f"HTTP {status}" in err["message"]
    assert KEY not in err["message"] and "{" not in err["message"]


def test_missing_key_is_refused_before_any_request(run):
    with serve([openai("x")]) as fake:
        result = run(infer_wf("groq/llama"), engine_env={"NIKA_GROQ_BASE_URL": fake.url})
    assert "GROQ_API_KEY" in result.tasks["t"].error["message"]
    assert fake.count == 0


def test_429_retry_after_is_honoured_by_retry(run):
    replies = [Reply(429, {"error": "slow down"}, {"Retry-After": "0.3"}), openai("finally")]
    with serve(replies) as fake:
        result = run(
            infer_wf("openai/m", task_extra="retry: { max_attempts: 2, backoff_ms: 10 }"),
            engine_env={"NIKA_OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": KEY},
        )
    assert result.tasks["t"].output == "finally"
    assert fake.count == 2
    retry = next(e for e in result.events if e["type"] == "task.retrying")
    # the 10 ms backoff gave way to the provider's Retry-After (the delay the engine chose, not a measure)
    assert retry["error_code"] == "NIKA-PROVIDER-001" and retry["delay_ms"] >= 300


@pytest.mark.parametrize(
    ("reply", "code", "transient"),
    [
        (Reply(500, {"error": "boom"}), "NIKA-PROVIDER-001", True),
        (Reply(200, b'{"choices": [{"message": {"content": "cut'), "NIKA-PROVIDER-001", True),
        (Reply(200, {"choices": []}), "NIKA-INFER-001", False),
        (Reply(400, {"error": {"message": "unknown model m"}}), "NIKA-INFER-001", False),
        (Reply(200, b"[" + b'"x",' * (3 * 1024 * 1024) + b'"x"]'), "NIKA-INFER-001", False),
    ],
    ids=["500", "truncated-json", "empty-choices", "400", "huge-reply"],
)
def test_bad_replies_end_as_typed_failures(run, reply, code, transient):
    with serve([reply]) as fake:
        result = run(infer_wf("openai/m"), engine_env={"NIKA_OPENAI_BASE_URL": fake.url, "OPENAI_API_KEY": KEY})
    err = result.tasks["t"].error
    assert (err["code"], err["transient"]) == (code, transient), err
    if code == "NIKA-INFER-001" and "400" in err["message"]:
        assert "unknown model m" in err["message"]


def test_a_hanging_provider_is_cut_by_the_task_timeout(run):
    with serve([Reply(200, {"choices": []}, delay_s=2.0)]) as fake:
        result = run(
            infer_wf("ollama/m", task_extra='timeout: "300ms"'),
            engine_env={"NIKA_OLLAMA_BASE_URL": fake.url},
        )
    # a reply that was waited for would fail as NIKA-INFER-001 (no choices): the timeout cut it first
    assert result.tasks["t"].error["code"] == "NIKA-TIMEOUT-001"


def test_connection_refused_is_transient(run):
    result = run(infer_wf("vllm/m"), engine_env={"NIKA_VLLM_BASE_URL": "http://127.0.0.1:9/v1/chat/completions"})
    err = result.tasks["t"].error
    assert (err["code"], err["transient"]) == ("NIKA-PROVIDER-001", True)


def test_every_provider_has_a_wire_and_an_endpoint():
    ids = [p for p in contracts.providers() if p != "mock"]
    assert len(ids) == 16
    for pid in ids:
        ep = endpoint_for(pid, {})
        assert ep.url.startswith("http")
        assert (contracts.providers()[pid].kind == "cloud") != ep.local
        assert contracts.providers()[pid].wire in ("openai", "anthropic", "gemini", "ollama")
    assert endpoint_for("ollama", {}).url == "http://localhost:11434/api/chat"  # the native chat API
    assert endpoint_for("lmstudio", {}).url == "http://localhost:1234/v1/chat/completions"
    hatch = endpoint_for("openai", {"NIKA_OPENAI_BASE_URL": "http://localhost:1337/v1/chat/completions"})
    assert hatch.url == "http://localhost:1337/v1/chat/completions"  # verbatim, nothing appended
    assert endpoint_for("openai", {"NIKA_OPENAI_API_KEY": "a", "OPENAI_API_KEY": "b"}).key == "a"
