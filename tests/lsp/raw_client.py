"""A hand-written LSP client over stdio (Content-Length framing, no pytest-lsp) for tests that
send what no well-behaved client library would, and read the server's stderr."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30.0


class RawClient:
    """Frames and reads JSON-RPC messages by hand; responses are sorted by id as they arrive."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "nika", "lsp"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr: list[str] = []
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 1000
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # -- transport -----------------------------------------------------------------------------
    def send_body(self, body: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_body(json.dumps(message).encode())

    def _read_stdout(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            assert length is not None, "a message without Content-Length"
            self.inbox.put(json.loads(out.read(length)))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    # -- messages ------------------------------------------------------------------------------
    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: Any, msg_id: Any = None) -> Any:
        msg_id = self.new_id() if msg_id is None else msg_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not ...:
            message["params"] = params
        self.send(message)
        return msg_id

    def notify(self, method: str, params: Any) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not ...:
            message["params"] = params
        self.send(message)

    def next_message(self) -> dict[str, Any]:
        try:
            return self.inbox.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail("the server sent nothing within the timeout; stderr:\n" + "".join(self.stderr[-40:]))

    def collect_until(self, msg_id: Any) -> list[dict[str, Any]]:
        """Every response up to and including the one for ``msg_id``; requests from the server
        are answered on the way, its notifications kept for :meth:`next_notification`."""
        got: list[dict[str, Any]] = []
        while True:
            msg = self.next_message()
            if "method" in msg:
                if "id" in msg:  # a request from the server (registerCapability, refresh…)
                    self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                else:
                    self.notifications.append(msg)  # kept for next_notification
                continue
            got.append(msg)
            if msg.get("id") == msg_id:
                return got

    def call(self, method: str, params: Any) -> dict[str, Any]:
        msg_id = self.request(method, params)
        return self.collect_until(msg_id)[-1]

    def next_notification(self, method: str) -> dict[str, Any]:
        """The oldest notification of ``method`` not yet taken (passed over or still to come)."""
        for i, msg in enumerate(self.notifications):
            if msg["method"] == method:
                return self.notifications.pop(i)
        while True:
            msg = self.next_message()
            if msg.get("method") == method and "id" not in msg:
                return msg

    def sync(self) -> list[dict[str, Any]]:
        """Every response sent before the answer to a fresh ``nika/semanticDocument`` request (the server
        reads in order), that answer last."""
        return self.collect_until(self.request("nika/semanticDocument", {"textDocument": {"uri": "file:///sync"}}))

    def tracebacks(self) -> str:
        text = "".join(self.stderr)
        return text if "Traceback" in text else ""
