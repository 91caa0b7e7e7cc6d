"""Streaming over SSE in the three wire adapters, against a real server on 127.0.0.1 speaking each
provider's event format: a run with a live listener streams (``infer.chunk`` events carry the
pieces), a run without one does not, and both record the same reply; a stalled stream ends with
the task's timeout or the idle guard, a stream cut mid-way with a transient provider error."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any, ClassVar

import httpx
import pytest
import sse_llm
from sse_llm import Script, serve

from runtime.guard import limits
from runtime.providers import stream
from runtime.providers.base import Request, ToolSpec
from runtime.providers.registry import endpoint_for
from runtime.providers.wire_anthropic import AnthropicMessages
from runtime.providers.wire_gemini import GeminiGenerate, _stream_url
from runtime.providers.wire_openai import OpenAIChat

KEY = "stream-key-0123456789"
ENV = {
    "openai": lambda u: {"NIKA_OPENAI_BASE_URL": u + "/v1/chat/completions", "OPENAI_API_KEY": KEY},
    "anthropic": lambda u: {"NIKA_ANTHROPIC_BASE_URL": u + "/v1/messages", "ANTHROPIC_API_KEY": KEY},
    "gemini": lambda u: {"NIKA_GEMINI_BASE_URL": u + "/v1beta/models/{model}:generateContent", "GOOGLE_API_KEY": KEY},
}
PIECES = ["Hel", "lo, ", "wörld", " — streamed ", "in pieces 🙂", "."]


def script(wire: str) -> Script:
    if wire == "openai":
        return sse_llm.openai(PIECES, 12, 9, reasoning=["thinking ", "hard"], reasoning_tokens=4)
    if wire == "anthropic":
        return sse_llm.anthropic(PIECES, 12, 9, thinking=["first, ", "consider"])
    return sse_llm.gemini(PIECES, 12, 9, thoughts=["pondering ", "deeply"], thought_tokens=5)


def wf(model: str, task_extra: str = "") -> str:
    return (
        "nika: v1\nworkflow: { id: s }\ntasks:\n  t:\n"
        + (f"    {task_extra}\n" if task_extra else "")
        + f'    infer:\n      model: {model}\n      prompt: "Say hi"\n      max_tokens: 2000\n'
    )


def model_calls(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each model call's record, without its timing."""
    return [
        {k: v for k, v in e.items() if k not in ("at", "duration_ms")}
        for e in events
        if e["type"] == "verb.invoked" and e.get("phase") == "model_call"
    ]


def model_call(events: list[dict[str, Any]]) -> dict[str, Any]:
    return model_calls(events)[0]


@pytest.mark.parametrize("wire", list(ENV))
def test_a_streamed_reply_records_the_same_response(run, wire):
    with serve(script(wire)) as fake:
        plain = run(wf(f"{wire}/m-1"), engine_env=ENV[wire](fake.url))
        seen: list[dict[str, Any]] = []
        live = run(wf(f"{wire}/m-1"), engine_env=ENV[wire](fake.url), on_event=seen.append)
    (p_path, p_body), (s_path, s_body) = fake.seen
    if wire == "gemini":
        assert p_path.endswith(":generateContent") and s_path.endswith(":streamGenerateContent?alt=sse")
    else:
        assert "stream" not in p_body and s_body["stream"] is True
    if wire == "openai":
        assert s_body["stream_options"] == {"include_usage": True}
    assert plain.tasks["t"].status == live.tasks["t"].status == "success", live.tasks["t"].error
    assert live.tasks["t"].output == plain.tasks["t"].output == "".join(PIECES)
    assert model_call(seen) == model_call(plain.events)
    call = model_call(seen)
    assert (call["tokens_in"], call["tokens_out"]) == (12, 9 + (5 if wire == "gemini" else 0))
    if wire != "anthropic":
        assert call["thinking_tokens"] == (4 if wire == "openai" else 5)
    chunks = [e for e in seen if e["type"] == "infer.chunk"]
    assert "".join(e["delta"] for e in chunks if e["channel"] == "text") == "".join(PIECES)
    thought = "".join(e["delta"] for e in chunks if e["channel"] == "thinking")
    assert thought in ("thinking hard", "first, consider", "pondering deeply")
    assert {(e["task"], e["model"]) for e in chunks} == {("t", f"{wire}/m-1")}
    order = [e["type"] for e in seen]
    assert order.index("infer.chunk") < order.index("verb.invoked")  # the pieces came before the reply
    assert not [e for e in plain.events if e["type"] == "infer.chunk"]


@pytest.mark.parametrize("wire", list(ENV))
def test_a_stalled_stream_ends_at_the_task_timeout(run, wire):
    s = script(wire)
    s.stall_after = 3
    with serve(s) as fake:
        result = run(wf(f"{wire}/m-1", 'timeout: "300ms"'), engine_env=ENV[wire](fake.url), on_event=lambda e: None)
    err = result.tasks["t"].error
    assert result.tasks["t"].status == "failure" and err["code"] == "NIKA-TIMEOUT-001", err


@pytest.mark.parametrize("wire", list(ENV))
def test_a_stalled_stream_without_timeout_is_reaped_by_the_idle_guard(run, wire, monkeypatch):
    monkeypatch.setattr(limits, "STREAM_IDLE_TIMEOUT_S", 0.3)
    s = script(wire)
    s.stall_after = 2
    with serve(s) as fake:
        result = run(wf(f"{wire}/m-1"), engine_env=ENV[wire](fake.url), on_event=lambda e: None)
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-PROVIDER-001" and err["transient"] is True, err
    assert err["details"]["stream"] == "stalled" and "stalled" in err["message"]


@pytest.mark.parametrize("chunked", [False, True], ids=["eof", "chunked"])
@pytest.mark.parametrize("wire", list(ENV))
def test_a_stream_cut_mid_way_is_a_transient_provider_error(run, wire, chunked):
    s = script(wire)
    # the end marker (or the finishing chunk) never arrives; OpenAI's stream is whole once its
    # finishing chunk came (below), so it is cut before that chunk and the usage chunk
    s.cut_after = len(s.events) - (3 if wire == "openai" else 1)
    s.chunked = chunked
    seen: list[dict[str, Any]] = []
    with serve(s) as fake:
        result = run(wf(f"{wire}/m-1"), engine_env=ENV[wire](fake.url), on_event=seen.append)
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-PROVIDER-001" and err["transient"] is True, err
    assert err["details"]["stream"] == "cut" and err["details"]["received_bytes"] > 0
    assert "broke off" in err["message"] and KEY not in json.dumps(seen)


@pytest.mark.parametrize("usage", [True, False], ids=["usage-then-eof", "finish-then-eof"])
def test_an_openai_stream_closed_after_its_finishing_chunk_without_done_is_whole(run, usage):
    """Some OpenAI-compatible servers never send `data: [DONE]`: a stream that closes cleanly
    after the chunk carrying `finish_reason` holds the whole reply (its usage when it came)."""
    s = script("openai")
    s.cut_after = len(s.events) - (1 if usage else 2)
    with serve(s) as fake:
        result = run(wf("openai/m-1"), engine_env=ENV["openai"](fake.url), on_event=lambda e: None)
    t = result.tasks["t"]
    assert t.status == "success" and t.output == "".join(PIECES), t.error
    calls = [e for e in result.events if e["type"] == "verb.invoked" and e.get("phase") == "model_call"]
    assert calls and (calls[-1].get("tokens_in") == 12) is usage, calls


def test_a_cut_stream_is_retried_by_retry(run):
    s = script("openai")
    s.cut_after = 4
    with serve(s) as fake:
        result = run(
            wf("openai/m-1", "retry: { max_attempts: 2, backoff_ms: 1 }"),
            engine_env=ENV["openai"](fake.url),
            on_event=lambda e: None,
        )
    assert len(fake.seen) == 2 and result.tasks["t"].error["code"] == "NIKA-PROVIDER-001"


def test_an_error_event_mid_stream_is_classified():
    overloaded = sse_llm.sse({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, "error")
    bad = sse_llm.sse({"type": "error", "error": {"type": "invalid_request_error", "message": "nope"}}, "error")
    for event, code, transient in ((overloaded, "NIKA-PROVIDER-001", True), (bad, "NIKA-INFER-001", False)):
        s = sse_llm.anthropic(["a"], 1, 1)
        s.events = [*s.events[:2], event]
        with serve(s) as fake:
            err = asyncio.run(_call(AnthropicMessages, "anthropic", fake.url, Request("m", "p")))
        assert (err.code, err.transient) == (code, transient) and "mid-stream" in err.message


@pytest.mark.parametrize(("cls", "pid"), [(OpenAIChat, "openai"), (GeminiGenerate, "gemini")])
def test_an_error_member_or_a_non_json_event_mid_stream_breaks_the_stream(cls, pid):
    for event, said in (
        (sse_llm.sse({"error": {"message": "server melted"}}), "server melted"),
        (sse_llm.sse("{oops"), "not JSON"),
    ):
        s = script(pid)
        s.events = [*s.events[:2], event]
        with serve(s) as fake:
            err = asyncio.run(_call(cls, pid, fake.url, Request("m", "p")))
        assert (err.code, err.transient) == ("NIKA-PROVIDER-001", True), err
        assert "mid-stream" in err.message and said in err.message, err.message


@pytest.mark.parametrize(
    ("cls", "pid", "event"),
    [
        (OpenAIChat, "openai", sse_llm.sse({"choices": [{"delta": {"tool_calls": [{"index": "x"}]}}]})),
        (OpenAIChat, "openai", sse_llm.sse({"choices": [{"delta": {"tool_calls": [{"function": {"name": 5}}]}}]})),
        (GeminiGenerate, "gemini", sse_llm.sse({"candidates": [{"content": "not an object"}]})),
        (AnthropicMessages, "anthropic", sse_llm.sse({"type": "content_block_delta", "index": "z", "delta": {}})),
    ],
    ids=["openai-index", "openai-name", "gemini-content", "anthropic-index"],
)
def test_a_stream_event_of_the_wrong_shape_is_the_providers_failure(cls, pid, event):
    """Not an internal error of the engine (NIKA-IMPL-001): the provider sent a malformed stream."""
    s = script(pid)
    s.events = [s.events[0], event, *s.events[1:]]
    with serve(s) as fake:
        err = asyncio.run(_call(cls, pid, fake.url, Request("m", "p")))
    assert getattr(err, "code", None) == "NIKA-PROVIDER-001", repr(err)
    assert "mid-stream" in err.message and "unexpected shape" in err.message


def test_reasoning_sent_under_both_names_is_shown_once():
    """Some OpenAI-compatible servers send a reasoning delta as `reasoning_content` and `reasoning` alike."""
    from runtime.providers.wire_openai import _Fold

    got: list[list[tuple[str, Any]]] = []
    sink = stream.ChunkSink(got.append)
    fold = _Fold(OpenAIChat(endpoint_for("openai", {}), None), sink)
    fold.event("message", json.dumps({"choices": [{"delta": {"reasoning_content": "hmm", "reasoning": "hmm"}}]}))
    sink.flush()
    assert [dict(f)["delta"] for f in got] == ["hmm"]


def test_a_server_that_ignores_stream_is_read_whole(run):
    """Some OpenAI-compatible servers answer `stream: true` with the plain JSON reply."""
    s = script("openai")
    s.ignore_stream = True
    seen: list[dict[str, Any]] = []
    with serve(s) as fake:
        result = run(wf("openai/m-1"), engine_env=ENV["openai"](fake.url), on_event=seen.append)
    assert fake.seen[0][1]["stream"] is True
    assert result.tasks["t"].output == "".join(PIECES)
    assert (model_call(seen)["tokens_in"], model_call(seen)["tokens_out"]) == (12, 9)


# -- tool calls, straight through an adapter ---------------------------------------------------------


class _Services:
    def __init__(self) -> None:
        self.client = httpx.AsyncClient()

    def http(self) -> httpx.AsyncClient:
        return self.client


async def _call(cls: Any, pid: str, url: str, request: Request, pieces: list | None = None) -> Any:
    services = _Services()
    provider = cls(endpoint_for(pid, ENV[pid](url)), services)
    got: list[list[tuple[str, Any]]] = []
    sink = stream.ChunkSink(got.append)
    token = stream.SINK.set(sink)
    try:
        return await provider.complete("m-1", request)
    except Exception as exc:  # the error itself is what the caller asserts on
        return exc
    finally:
        stream.SINK.reset(token)
        sink.flush()
        if pieces is not None:
            pieces.extend(got)
        await services.client.aclose()


TOOL = ToolSpec("lookup", "lookup", "find a thing", {"type": "object", "properties": {"q": {"type": "string"}}})


@pytest.mark.parametrize(
    ("cls", "pid", "make"),
    [
        (OpenAIChat, "openai", lambda: sse_llm.openai([], 5, 3, calls=[("lookup", ['{"q": ', '"moon"}'])])),
        (
            AnthropicMessages,
            "anthropic",
            lambda: sse_llm.anthropic(["Let me look."], 5, 3, calls=[("lookup", ['{"q"', ': "moon"}'])]),
        ),
        (GeminiGenerate, "gemini", lambda: sse_llm.gemini(["ok"], 5, 3, calls=[("lookup", {"q": "moon"})])),
    ],
)
def test_streamed_tool_calls_match_the_unstreamed_ones(cls, pid, make):
    s = make()
    req = Request("m", "p", messages=(), tools=(TOOL,))
    with serve(s) as fake:
        streamed = asyncio.run(_call(cls, pid, fake.url, req))

        async def plain() -> Any:
            services = _Services()
            try:
                return await cls(endpoint_for(pid, ENV[pid](fake.url)), services).complete("m-1", req)
            finally:
                await services.client.aclose()

        unstreamed = asyncio.run(plain())
    assert streamed == unstreamed
    assert [(c.name, c.arguments) for c in streamed.tool_calls] == [("lookup", {"q": "moon"})]


def test_gemini_stream_url():
    assert (
        _stream_url("http://h/v1beta/models/m:generateContent")
        == "http://h/v1beta/models/m:streamGenerateContent?alt=sse"
    )
    assert _stream_url("http://h/m:generateContent?key=1") == "http://h/m:streamGenerateContent?key=1&alt=sse"
    assert _stream_url("http://h/custom/endpoint") is None


def test_a_secret_split_across_pieces_is_masked():
    from runtime.guard.redact import MASK, Redactor

    secret = "tok-ABCDEFGH-123"
    frames: list[list[tuple[str, Any]]] = []
    ticks = iter(range(100))
    sink = stream.ChunkSink(
        frames.append, Redactor({secret}).settle, clock=lambda: float(next(ticks))
    )  # every piece flushes
    for piece in ["the key is tok-AB", "CDEFGH", "-123 and more text " * 4, "end"]:
        sink.piece(stream.TEXT, piece)
    sink.flush()
    deltas = [dict(f)["delta"] for f in frames]
    assert all(secret[:6] not in d for d in deltas), deltas
    joined = "".join(deltas)
    assert deltas[0] == "the key is " and joined.startswith("the key is " + MASK + " and more")


# -- the progress view -----------------------------------------------------------------------------


@pytest.mark.parametrize("columns", [80, 40])
def test_the_live_line_never_wraps(columns):
    """A wrapped line leaves its first row behind at each rewrite (the erase clears one row)."""
    from nika.output.run_text import StreamLine, _cells

    live = StreamLine(columns) if columns != 80 else StreamLine()
    pieces = ["a fairly long streamed sentence ", "with 寬字符 and emoji 🙂🙂 ", "\x1b[2J", "and more words " * 5]
    for task in ("t", "summarize_the_article_for_the_weekly_digest", "x" * 200):
        for piece in pieces:
            line = live.chunk({"task": task, "channel": "text", "delta": piece})
            assert _cells(line) <= columns - 1, (task, line)
            assert "\x1b" not in line
    assert live.chunk({"task": "t", "channel": "text", "delta": "end"}).endswith("end")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("tty", [True, False])
def test_the_progress_view_shows_tokens_arriving_on_a_terminal(tmp_path, monkeypatch, tty):
    from nika.commands.run import run_command

    words = "a streamed reply \x1b[2J that is long enough to make several chunk frames, one after another"
    monkeypatch.setenv(
        "NIKA_MOCK_STREAMING", json.dumps(words.split(" ")[:1] + [" " + w for w in words.split(" ")[1:]])
    )
    path = tmp_path / "s.nika.yaml"
    path.write_text(wf("mock/mock-streaming"))
    out, err = io.StringIO(), (_Tty() if tty else io.StringIO())
    assert run_command(str(path), trace_dir=str(tmp_path / "traces"), out=out, err=err) == 0
    shown = err.getvalue()
    if not tty:
        assert "writing:" not in shown and "\r" not in shown
        return
    live = [part for part in shown.split("\r\x1b[K") if "writing:" in part]
    assert len(live) >= 2 and all(part.startswith("  … t writing: ") for part in live)
    assert live[-1].endswith("one after another") and len(live[-1]) <= len("  … t writing: ") + 60
    assert "\x1b[2J" not in shown and "\\u001b[2J" in shown  # the model's own controls are escaped
    assert "\r\x1b[K         ok t" in shown  # the live line is erased before the task's line


def test_sse_lines_split_anywhere_read_the_same():
    """Line ends (LF, CRLF, CR) and multi-byte characters split across network reads."""
    from runtime.providers.stream import sse_events

    raw = 'event: a\r\ndata: {"t": "wörld"}\r\n\r\n: keep-alive\n\ndata: one\ndata: two\r\rdata: cut'.encode()

    class Resp:
        headers: ClassVar[dict[str, str]] = {}  # no content coding: read by the bounded decoder as is

        def __init__(self, size: int) -> None:
            self.size = size

        async def aiter_raw(self):
            for i in range(0, len(raw), self.size):
                yield raw[i : i + self.size]

    async def read(size: int) -> list[tuple[str, str]]:
        wire = OpenAIChat(endpoint_for("openai", {}), None)
        return [e async for e in sse_events(wire._lines(Resp(size), [0]))]

    for size in (1, 2, 3, 7, len(raw)):
        assert asyncio.run(read(size)) == [("a", '{"t": "wörld"}'), ("message", "one\ntwo")], size
    raw = b"data: last\r\r"  # CR line ends to the very end: the last CR ends the event
    for size in (1, 2, len(raw)):
        assert asyncio.run(read(size)) == [("message", "last")], size


def test_a_long_line_in_small_reads_is_read_whole():
    """A server trickling one long line in small reads gives one event (that this costs linear
    time, not the line's length once per read, is measured in benchmarks/bounds.py)."""
    from runtime.providers.stream import sse_events

    line = b"data: " + b"x" * 200_000 + b"\n\n"

    class Resp:
        headers: ClassVar[dict[str, str]] = {}

        async def aiter_raw(self):
            for i in range(0, len(line), 1024):
                yield line[i : i + 1024]

    async def read() -> list[tuple[str, str]]:
        wire = OpenAIChat(endpoint_for("openai", {}), None)
        return [e async for e in sse_events(wire._lines(Resp(), [0]))]

    assert asyncio.run(read()) == [("message", "x" * 200_000)]


@pytest.mark.parametrize("wire", list(ENV))
def test_an_agent_streams_every_turn_and_ends_as_unstreamed(run, wire):
    draft = "nika: v1\nworkflow: { id: d }\nmodel: mock/echo\ntasks:\n  a:\n    infer: { prompt: hi }\n"
    args = json.dumps({"workflow_yaml": draft})
    if wire == "openai":
        turns = [sse_llm.openai(["checking"], 20, 4, calls=[("nika_compose", [args[:10], args[10:]])])]
        turns.append(sse_llm.openai(["all ", "good"], 30, 2))
    elif wire == "anthropic":
        turns = [sse_llm.anthropic(["checking"], 20, 4, calls=[("nika_compose", [args[:10], args[10:]])])]
        turns.append(sse_llm.anthropic(["all ", "good"], 30, 2))
    else:
        turns = [sse_llm.gemini(["checking"], 20, 4, calls=[("nika_compose", {"workflow_yaml": draft})])]
        turns.append(sse_llm.gemini(["all ", "good"], 30, 2))
    src = (
        f"nika: v1\nworkflow: {{ id: w }}\nmodel: {wire}/m\ntasks:\n  t:\n    agent:\n"
        '      prompt: "draft one"\n      tools: ["nika:compose"]\n'
    )
    with serve(*turns, *turns) as fake:
        plain = run(src, engine_env=ENV[wire](fake.url))
        seen: list[dict[str, Any]] = []
        live = run(src, engine_env=ENV[wire](fake.url), on_event=seen.append)
    assert plain.tasks["t"].output == live.tasks["t"].output == "all good", live.tasks["t"].error
    assert len(fake.seen) == 4
    calls = model_calls(seen)
    plain_calls = model_calls(plain.events)
    assert calls == plain_calls and len(calls) == 2
    text = "".join(e["delta"] for e in seen if e["type"] == "infer.chunk" and e["channel"] == "text")
    assert text == "checkingall good"


@pytest.mark.parametrize(
    ("cls", "pid", "doc"),
    [
        (OpenAIChat, "openai", {"choices": [{"message": "not an object"}]}),
        (OpenAIChat, "openai", {"choices": [{"message": {"content": "x", "tool_calls": ["not an object"]}}]}),
        (AnthropicMessages, "anthropic", {"content": [], "usage": {"input_tokens": "many"}}),
        (GeminiGenerate, "gemini", {"candidates": [{"content": "not an object"}]}),
    ],
    ids=["openai-message", "openai-tool-call", "anthropic-usage", "gemini-content"],
)
def test_a_whole_reply_of_the_wrong_shape_is_the_providers_failure(cls, pid, doc):
    """Unstreamed too: a member of the wrong type in a 200 reply is the provider's malformed
    reply (NIKA-PROVIDER-001), not an internal error of the engine."""

    async def plain(url: str) -> Any:
        services = _Services()
        provider = cls(endpoint_for(pid, ENV[pid](url)), services)
        try:
            return await provider.complete("m-1", Request("m", "p"))
        except Exception as exc:  # the error itself is what the test asserts on
            return exc
        finally:
            await services.client.aclose()

    with serve(Script(doc, [])) as fake:
        err = asyncio.run(plain(fake.url))
    assert getattr(err, "code", None) == "NIKA-PROVIDER-001", repr(err)
    assert "unexpected shape" in err.message and KEY not in err.message
