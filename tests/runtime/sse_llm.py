"""A model API on 127.0.0.1 that answers a stream request with Server-Sent Events in the provider's
own format and any other request with the whole JSON reply, so one test can run the same call
streamed and unstreamed. A script can go silent after some events (a stalled stream) or drop the
connection (a stream cut mid-way, with or without chunked transfer encoding)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    doc: dict[str, Any]  # the unstreamed reply
    events: list[bytes]  # the streamed reply, one SSE event per item
    stall_after: int | None = None  # go silent after this many events
    cut_after: int | None = None  # drop the connection after this many events
    chunked: bool = False
    ignore_stream: bool = False  # answer a stream request with the whole JSON reply, as some servers do


@dataclass
class SseLLM:
    script: Script
    url: str = ""
    then: list[Script] = field(default_factory=list)  # the scripts of the later calls, in order
    seen: list[tuple[str, Any]] = field(default_factory=list)  # (path, JSON body)
    release: threading.Event = field(default_factory=threading.Event)


@contextmanager
def serve(script: Script, *then: Script) -> Iterator[SseLLM]:
    """One call per script, in order (the last one answers every call after it)."""
    fake = SseLLM(script, then=list(then))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            fake.seen.append((self.path, body))
            s = fake.script
            if fake.then:
                fake.script = fake.then.pop(0)
            wants = body.get("stream") is True or "streamGenerateContent" in self.path
            if not wants or s.ignore_stream:
                data = json.dumps(s.doc).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("cache-control", "no-cache")
            if s.chunked:
                self.send_header("transfer-encoding", "chunked")
            self.send_header("connection", "close")
            self.end_headers()
            self.close_connection = True
            with suppress(BrokenPipeError, ConnectionResetError):
                for i, event in enumerate(s.events):
                    if i == s.stall_after:
                        fake.release.wait(5)
                        return
                    if i == s.cut_after:
                        if s.chunked:  # a chunk announced and never finished
                            self.wfile.write(b"400\r\n" + event[: len(event) // 2])
                            self.wfile.flush()
                        return
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event) if s.chunked else event)
                    self.wfile.flush()
                if s.chunked:
                    self.wfile.write(b"0\r\n\r\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()


def sse(data: Any, event: str | None = None, eol: bytes = b"\n") -> bytes:
    line = (f"event: {event}".encode() + eol) if event else b""
    payload = data if isinstance(data, str) else json.dumps(data)
    return line + b"data: " + payload.encode() + eol + eol


# -- one reply in each wire's two forms ------------------------------------------------------------


def openai(
    pieces: list[str],
    tin: int,
    tout: int,
    reasoning: list[str] = (),  # type: ignore[assignment]
    calls: list[tuple[str, list[str]]] = (),  # type: ignore[assignment]
    reasoning_tokens: int | None = None,
) -> Script:
    usage: dict[str, Any] = {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    finish = "tool_calls" if calls else "stop"
    message: dict[str, Any] = {"role": "assistant", "content": "".join(pieces)}
    if calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": "".join(a)}}
            for i, (n, a) in enumerate(calls)
        ]
    doc = {
        "id": "c1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }
    doc["usage"] = usage

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        return sse(
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
            }
        )

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"reasoning_content": r}) for r in reasoning]
    events += [chunk({"content": p}) for p in pieces]
    for i, (name, args) in enumerate(calls):
        events.append(
            chunk({"tool_calls": [{"index": i, "id": f"call_{i}", "type": "function", "function": {"name": name}}]})
        )
        events += [chunk({"tool_calls": [{"index": i, "function": {"arguments": a}}]}) for a in args]
    events.append(chunk({}, finish))
    events.append(sse({"id": "c1", "object": "chat.completion.chunk", "choices": [], "usage": usage}))
    events.append(sse("[DONE]"))
    return Script(doc, events)


def anthropic(
    pieces: list[str],
    tin: int,
    tout: int,
    thinking: list[str] = (),  # type: ignore[assignment]
    calls: list[tuple[str, list[str]]] = (),  # type: ignore[assignment]
) -> Script:
    blocks: list[dict[str, Any]] = []
    if thinking:
        blocks.append({"type": "thinking", "thinking": "".join(thinking), "signature": "sig-1"})
    blocks.append({"type": "text", "text": "".join(pieces)})
    blocks += [
        {"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": json.loads("".join(a))}
        for i, (n, a) in enumerate(calls)
    ]
    stop = "tool_use" if calls else "end_turn"
    doc = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": blocks,
        "stop_reason": stop,
        "usage": {"input_tokens": tin, "output_tokens": tout},
    }
    start = {
        "type": "message_start",
        "message": {**doc, "content": [], "stop_reason": None, "usage": {"input_tokens": tin, "output_tokens": 1}},
    }
    events = [sse(start, "message_start"), sse({"type": "ping"}, "ping")]
    index = 0
    if thinking:
        events.append(
            sse(
                {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
                "content_block_start",
            )
        )
        events += [
            sse(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": t}},
                "content_block_delta",
            )
            for t in thinking
        ]
        events.append(
            sse(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-1"}},
                "content_block_delta",
            )
        )
        events.append(sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
        index = 1
    events.append(
        sse(
            {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            "content_block_start",
        )
    )
    events += [
        sse(
            {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": p}},
            "content_block_delta",
        )
        for p in pieces
    ]
    events.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    for i, (name, args) in enumerate(calls):
        k = index + 1 + i
        events.append(
            sse(
                {
                    "type": "content_block_start",
                    "index": k,
                    "content_block": {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": {}},
                },
                "content_block_start",
            )
        )
        events += [
            sse(
                {"type": "content_block_delta", "index": k, "delta": {"type": "input_json_delta", "partial_json": a}},
                "content_block_delta",
            )
            for a in args
        ]
        events.append(sse({"type": "content_block_stop", "index": k}, "content_block_stop"))
    events.append(
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": tout},
            },
            "message_delta",
        )
    )
    events.append(sse({"type": "message_stop"}, "message_stop"))
    return Script(doc, events)


def gemini(
    pieces: list[str],
    tin: int,
    tout: int,
    thoughts: list[str] = (),  # type: ignore[assignment]
    thought_tokens: int | None = None,
    calls: list[tuple[str, dict[str, Any]]] = (),  # type: ignore[assignment]
) -> Script:
    usage: dict[str, Any] = {"promptTokenCount": tin, "candidatesTokenCount": tout}
    if thought_tokens is not None:
        usage["thoughtsTokenCount"] = thought_tokens
    parts: list[dict[str, Any]] = [{"text": "".join(thoughts), "thought": True}] if thoughts else []
    parts.append({"text": "".join(pieces)})
    parts += [{"functionCall": {"name": n, "args": a}} for n, a in calls]
    doc = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": usage,
    }

    def chunk(ps: list[dict[str, Any]], last: bool = False) -> bytes:
        cand: dict[str, Any] = {"content": {"role": "model", "parts": ps}, "index": 0}
        if last:
            cand["finishReason"] = "STOP"
        so_far = usage if last else {"promptTokenCount": tin}
        return sse({"candidates": [cand], "usageMetadata": so_far, "modelVersion": "m-1"}, eol=b"\r\n")

    events = [chunk([{"text": t, "thought": True}]) for t in thoughts]
    events += [chunk([{"text": p}]) for p in pieces[:-1]]
    tail: list[dict[str, Any]] = [{"text": pieces[-1]}] + [{"functionCall": {"name": n, "args": a}} for n, a in calls]
    events.append(chunk(tail, last=True))
    return Script(doc, events)
