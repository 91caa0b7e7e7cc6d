"""The wire fixes of issue 40 item 8, each a recorded real-shaped request/response pair against a
server on loopback: the request bodies the wires send are validated with the official `openai`
and `anthropic` SDKs' own request types, and the recorded replies with their response types (both
SDKs are in the `[test]` extra, so these tests never skip). What travels is decided per model from
the catalog, never for every model at once: `max_completion_tokens` where OpenAI's own API takes
it, `max_tokens` for other OpenAI-compatible servers; no `temperature` for a model that takes none.
Also: no empty text block in the Anthropic history after an empty answer; the OpenAI stream fold
with a server that repeats `function.name` and omits `index`; Ollama's native `/api/chat`."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
import sse_llm
from fake_llm import Reply, serve
from pydantic import TypeAdapter
from test_providers_stream import _call

from runtime.providers.base import Request
from runtime.providers.wire_openai import OpenAIChat

KEY = "sk-test-0123456789abcdef"


def _deep(value: Any) -> Any:
    """Walk what a TypeAdapter returned: the SDKs type lists as ``Iterable``, which pydantic
    validates lazily, item by item, as they are read."""
    if isinstance(value, dict):
        return {k: _deep(v) for k, v in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    try:
        return [_deep(v) for v in value]
    except TypeError:
        return value


def _valid(params: Any, body: dict[str, Any], ignore: frozenset[str] = frozenset()) -> None:
    known = params.__required_keys__ | params.__optional_keys__
    assert set(body) - ignore <= known, f"fields the SDK does not know: {set(body) - ignore - known}"
    _deep(TypeAdapter(params).validate_python(body))


def openai_request_ok(body: dict[str, Any]) -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    _valid(CompletionCreateParamsNonStreaming, body)


def anthropic_request_ok(body: dict[str, Any]) -> None:
    """The Messages request against the SDK's types: the envelope as a whole, then every message's
    blocks each against its own block type (pydantic-core cannot walk the SDK's lazily validated
    union of every block type at once: it panics on the recursive definitions)."""
    from anthropic import types as t
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    _valid(MessageCreateParamsNonStreaming, {**body, "messages": []})
    blocks_of = {
        "text": t.TextBlockParam,
        "image": t.ImageBlockParam,
        "tool_use": t.ToolUseBlockParam,
        "tool_result": t.ToolResultBlockParam,
        "thinking": t.ThinkingBlockParam,
    }
    roles = [m["role"] for m in body["messages"]]
    assert roles and roles[0] == "user" and set(roles) <= {"user", "assistant"}, roles
    assert all(a != b for a, b in itertools.pairwise(roles)), roles  # the roles alternate
    for m in body["messages"]:
        assert set(m) == {"role", "content"}, m
        blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        assert blocks, m  # an empty content list is refused too
        for b in blocks:
            _valid(blocks_of[b["type"]], b)
            assert b.get("text") != "", m  # the API refuses an empty text block
    for tool in body.get("tools") or []:
        _valid(t.ToolParam, tool)


# -- recorded replies, shaped as the vendors document them -----------------------------------------


def chat_completion(model: str, text: str | None, calls: list[tuple[str, dict]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None, "annotations": []}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}abc", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(calls)
        ]
    doc = {
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion",
        "created": 1741569952,
        "model": model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {
            "prompt_tokens": 19,
            "completion_tokens": 10,
            "total_tokens": 29,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
        "service_tier": "default",
    }
    from openai.types.chat import ChatCompletion  # the SDKs load in the tests that use them, not at collection

    ChatCompletion.model_validate(doc)  # the recording is the SDK's own shape
    return doc


def claude_message(model: str, blocks: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    doc = {
        "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 2095, "output_tokens": 503},
    }
    from anthropic.types import Message

    Message.model_validate(doc)
    return doc


def agent_wf(model: str, extra: str = "") -> str:
    return (
        f"nika: v1\nworkflow: {{ id: sdk }}\nmodel: {model}\ntasks:\n  t:\n    agent:\n"
        f'      prompt: "go"\n      tools: ["nika:hash"]\n{extra}'
    )


def openai_env(url: str, pid: str = "openai") -> dict[str, str]:
    return {f"NIKA_{pid.upper()}_BASE_URL": url + "/v1/chat/completions", f"NIKA_{pid.upper()}_API_KEY": KEY}


# -- OpenAI: the output field and the temperature, per model ------------------------------------------


def test_openai_catalogued_model_sends_max_completion_tokens(run):
    replies = [
        Reply(body=chat_completion("gpt-4o", None, [("nika_hash", {"content": "a"})])),
        Reply(body=chat_completion("gpt-4o", "done")),
    ]
    with serve(replies) as fake:
        result = run(agent_wf("openai/gpt-4o", "      temperature: 0.3\n"), engine_env=openai_env(fake.url))
    assert result.tasks["t"].output == "done", result.tasks["t"].error
    for seen in fake.seen:
        openai_request_ok(seen.body)
        assert "max_tokens" not in seen.body and seen.body["max_completion_tokens"] <= 16_384  # gpt-4o's limit
        assert seen.body["temperature"] == 0.3  # the catalog: gpt-4o takes one
    assert [m["role"] for m in fake.seen[1].body["messages"]] == ["system", "user", "assistant", "tool"]


def test_a_model_that_takes_no_temperature_is_sent_none(run):
    with serve([Reply(body=chat_completion("gpt-5.2", "ok"))]) as fake:
        result = run(agent_wf("openai/gpt-5.2", "      temperature: 0.3\n"), engine_env=openai_env(fake.url))
    assert result.tasks["t"].output == "ok"
    openai_request_ok(fake.seen[0].body)
    assert "temperature" not in fake.seen[0].body and "max_completion_tokens" in fake.seen[0].body


def test_a_local_openai_compatible_server_keeps_max_tokens(run):
    with serve([Reply(body=chat_completion("m", "ok"))]) as fake:
        result = run(agent_wf("vllm/meta-llama-3.1-70b-instruct"), engine_env=openai_env(fake.url, "vllm"))
    assert result.tasks["t"].output == "ok"
    openai_request_ok(fake.seen[0].body)
    assert "max_tokens" in fake.seen[0].body and "max_completion_tokens" not in fake.seen[0].body


# -- Anthropic: no empty text block, no temperature where the model takes none --------------------------


def anthropic_env(url: str) -> dict[str, str]:
    return {"NIKA_ANTHROPIC_BASE_URL": url + "/v1/messages", "ANTHROPIC_API_KEY": KEY}


def test_anthropic_history_after_an_empty_answer_has_no_empty_text_block(run):
    model = "claude-sonnet-4-6"
    replies = [
        Reply(
            body=claude_message(
                model,
                [{"type": "tool_use", "id": "toolu_01", "name": "nika_hash", "input": {"content": "a"}}],
                "tool_use",
            )
        ),
        Reply(body=claude_message(model, [])),  # an empty answer: nudged once
        Reply(body=claude_message(model, [{"type": "text", "text": "the answer"}])),
    ]
    with serve(replies) as fake:
        result = run(agent_wf(f"anthropic/{model}"), engine_env=anthropic_env(fake.url))
    assert result.tasks["t"].output == "the answer", result.tasks["t"].error
    assert fake.count == 3
    for seen in fake.seen:
        anthropic_request_ok(seen.body)
    last = fake.seen[2].body["messages"]
    assert last[-1]["role"] == "user"
    assert last[-1]["content"][0]["type"] == "tool_result" and "empty" in last[-1]["content"][-1]["text"]


def test_anthropic_model_that_takes_no_temperature_is_sent_none(run):
    model = "claude-opus-4-7"  # the catalog (models.dev): temperature false
    with serve([Reply(body=claude_message(model, [{"type": "text", "text": "ok"}]))]) as fake:
        result = run(agent_wf(f"anthropic/{model}", "      temperature: 0.5\n"), engine_env=anthropic_env(fake.url))
    assert result.tasks["t"].output == "ok"
    anthropic_request_ok(fake.seen[0].body)
    assert "temperature" not in fake.seen[0].body
    with serve([Reply(body=claude_message("claude-sonnet-4-6", [{"type": "text", "text": "ok"}]))]) as fake:
        run(agent_wf("anthropic/claude-sonnet-4-6", "      temperature: 0.5\n"), engine_env=anthropic_env(fake.url))
    assert fake.seen[0].body["temperature"] == 0.5  # a model that takes one keeps it


# -- the OpenAI stream fold with a loose compatible server ----------------------------------------------


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    return sse_llm.sse(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1741569952,
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


@pytest.mark.parametrize("loose", ["repeats-name", "no-index"])
def test_the_stream_fold_takes_a_loose_compatible_server(loose: str):
    def call(i: int, cid: str | None, name: str | None, args: str) -> dict[str, Any]:
        c: dict[str, Any] = {"function": {"arguments": args}}
        if loose != "no-index":
            c["index"] = i
        if cid:
            c["id"], c["type"] = cid, "function"
        if name:
            c["function"]["name"] = name
        return c

    repeat = loose == "repeats-name"
    events = [
        _chunk({"role": "assistant", "content": None}),
        _chunk({"tool_calls": [call(0, "call_a", "nika_hash", "")]}),
        _chunk({"tool_calls": [call(0, None, "nika_hash" if repeat else None, '{"content":')]}),
        _chunk({"tool_calls": [call(0, None, "nika_hash" if repeat else None, ' "x"}')]}),
        _chunk({"tool_calls": [call(1, "call_b", "nika_read", "")]}),
        _chunk({"tool_calls": [call(1, None, "nika_read" if repeat else None, '{"path": "a"}')]}),
        _chunk({}, "tool_calls"),
        sse_llm.sse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [],
                "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
            }
        ),
        b"data: [DONE]\n\n",
    ]
    if repeat:  # these recorded chunks are the SDK's own shape (the loose server's without `index` are not)
        from openai.types.chat import ChatCompletionChunk

        for e in events[:-1]:
            ChatCompletionChunk.model_validate(json.loads(e.decode()[len("data: ") :]))
    script = sse_llm.Script({"choices": []}, events)
    with sse_llm.serve(script) as fake:
        reply = asyncio.run(_call(OpenAIChat, "openai", fake.url, Request("m", "p")))
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("nika_hash", {"content": "x"}),
        ("nika_read", {"path": "a"}),
    ]
    assert (reply.tokens_in, reply.tokens_out) == (5, 7)


# -- Ollama's native chat API ------------------------------------------------------------------------------


def ollama_reply(content: str, calls: list[tuple[str, dict]] | None = None, reason: str = "stop") -> dict[str, Any]:
    """The shape of Ollama's `/api/chat` answer (`stream: false`), as its API documentation records it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [{"function": {"name": n, "arguments": a}} for n, a in calls]
    return {
        "model": "qwen3.5:9b",
        "created_at": "2025-10-17T23:14:07.414671Z",
        "message": message,
        "done": True,
        "done_reason": reason,
        "total_duration": 4883583458,
        "load_duration": 1334875,
        "prompt_eval_count": 26,
        "prompt_eval_duration": 342546000,
        "eval_count": 282,
        "eval_duration": 4535599000,
    }


def test_ollama_speaks_its_native_chat_api_with_think(run):
    replies = [
        Reply(body=ollama_reply("", [("nika_hash", {"content": "a"})])),
        Reply(body=ollama_reply("done")),
    ]
    with serve(replies) as fake:
        result = run(
            agent_wf("ollama/qwen3.5:9b", "      temperature: 0.2\n"),
            engine_env={"NIKA_OLLAMA_BASE_URL": fake.url + "/api/chat"},
        )
    r = result.tasks["t"]
    assert r.output == "done", r.error
    assert [s.path for s in fake.seen] == ["/api/chat", "/api/chat"]
    first, second = fake.seen[0].body, fake.seen[1].body
    assert first["stream"] is False and first["model"] == "qwen3.5:9b"
    assert first["options"]["temperature"] == 0.2 and first["options"]["num_predict"] > 0
    assert first["tools"][0]["function"]["name"] == "nika_hash"
    assert second["messages"][-2]["tool_calls"] == [{"function": {"name": "nika_hash", "arguments": {"content": "a"}}}]
    assert second["messages"][-1]["role"] == "tool" and second["messages"][-1]["tool_name"] == "nika_hash"
    assert (r.agent["tokens_in"], r.agent["tokens_out"]) == (52, 564)


def test_ollama_infer_thinking_sends_think(run):
    wf = (
        "nika: v1\nworkflow: { id: think }\ntasks:\n  t:\n    infer:\n      model: ollama/qwen3.5:9b\n"
        '      prompt: "why?"\n      thinking: { enabled: false }\n'
    )
    with serve([Reply(body=ollama_reply("because", reason="length"))]) as fake:
        result = run(wf, engine_env={"NIKA_OLLAMA_BASE_URL": fake.url + "/api/chat"})
    assert result.tasks["t"].output == "because", result.tasks["t"].error
    assert fake.seen[0].body["think"] is False and fake.seen[0].path == "/api/chat"
