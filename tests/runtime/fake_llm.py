"""A small HTTP server on 127.0.0.1 that answers like a model API, from a script, and keeps every
request it received (path, headers, JSON body) so a test can count the calls. ``files`` (path to
content type and bytes) answers GETs, for images a call fetches; GETs are not kept in ``seen``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON; bytes/str -> as is
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    make: Any = None  # a function of the request body returning the reply body (e.g. counting its tokens)


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


class FakeLLM:
    def __init__(self, replies: list[Reply], repeat_last: bool = False) -> None:
        self.replies = list(replies)
        self.repeat_last = repeat_last
        self.seen: list[Seen] = []
        self.files: dict[str, tuple[str, bytes]] = {}
        self.gets: list[str] = []
        self._lock = threading.Lock()
        self.url = ""

    def next_reply(self) -> Reply:
        with self._lock:
            if len(self.replies) > 1 or (self.replies and not self.repeat_last):
                return self.replies.pop(0)
            if self.replies:
                return self.replies[0]
            return Reply(599, {"error": "the fake server's script is exhausted"})

    @property
    def count(self) -> int:
        return len(self.seen)


@contextmanager
def serve(replies: list[Reply], repeat_last: bool = False) -> Iterator[FakeLLM]:
    fake = FakeLLM(replies, repeat_last)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            fake.gets.append(self.path)
            kind, data = fake.files.get(self.path, ("text/plain", b""))
            self.send_response(200 if self.path in fake.files else 404)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            n = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(n)
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw
            fake.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            r = fake.next_reply()
            if r.make is not None:
                r = Reply(r.status, r.make(body), r.headers, r.delay_s)
            if r.delay_s:
                time.sleep(r.delay_s)
            data = (
                r.body
                if isinstance(r.body, bytes)
                else r.body.encode()
                if isinstance(r.body, str)
                else json.dumps(r.body).encode()
            )
            try:
                self.send_response(r.status)
                for k, v in r.headers.items():
                    self.send_header(k, v)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # a short poll makes shutdown() return at once instead of after half a second per test
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


# -- reply builders, one per wire ------------------------------------------------------------------


def openai(
    text: str | None = None,
    calls: list[tuple[str, Any]] | None = None,
    tin: int = 10,
    tout: int = 5,
    finish: str | None = None,
) -> Reply:
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        msg["tool_calls"] = [
            {
                "id": f"c{i}",
                "type": "function",
                "function": {"name": n, "arguments": a if isinstance(a, str) else json.dumps(a)},
            }
            for i, (n, a) in enumerate(calls)
        ]
    return Reply(
        body={
            "choices": [{"index": 0, "message": msg, "finish_reason": finish or ("tool_calls" if calls else "stop")}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout},
        }
    )


def anthropic(
    text: str | None = None,
    calls: list[tuple[str, Any]] | None = None,
    tin: int = 10,
    tout: int = 5,
    stop: str | None = None,
) -> Reply:
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"tu{i}", "name": n, "input": a} for i, (n, a) in enumerate(calls or [])]
    return Reply(
        body={
            "content": content,
            "stop_reason": stop or ("tool_use" if calls else "end_turn"),
            "usage": {"input_tokens": tin, "output_tokens": tout},
        }
    )


def gemini(text: str | None = None, calls: list[tuple[str, Any]] | None = None, tin: int = 10, tout: int = 5) -> Reply:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    parts += [{"functionCall": {"name": n, "args": a}} for n, a in calls or []]
    return Reply(
        body={
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": tin, "candidatesTokenCount": tout},
        }
    )
