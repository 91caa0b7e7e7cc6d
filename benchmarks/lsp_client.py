"""A plain JSON-RPC client of ``nika lsp`` over pipes, for the benchmarks (an independent client:
the figures include the protocol round trip, the JSON both ways and the server's dispatch).

Requests the server sends (``workspace/diagnostic/refresh``, ``workspace/configuration``) are
answered with ``null``; notifications are kept in :attr:`Client.notes`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


class Client:
    def __init__(self, tree: Path | None = None, cwd: str | None = None, capabilities: Any = None) -> None:
        env = dict(os.environ)
        if tree is not None:
            env["PYTHONPATH"] = str(tree)
        self.p = subprocess.Popen(
            [sys.executable, "-m", "nika", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.next_id = 0
        self.notes: list[dict[str, Any]] = []
        caps = capabilities or {
            "textDocument": {
                "diagnostic": {"dynamicRegistration": False},
                "semanticTokens": {
                    "requests": {"full": {"delta": True}},
                    "tokenTypes": [],
                    "tokenModifiers": [],
                    "formats": ["relative"],
                },
            }
        }
        rep = self.request("initialize", {"processId": None, "rootUri": None, "capabilities": caps})
        if "result" not in rep:
            raise SystemExit(f"initialize failed: {rep}")
        self.notify("initialized", {})

    @property
    def pid(self) -> int:
        return self.p.pid

    def send(self, msg: dict[str, Any]) -> None:
        body = json.dumps(msg).encode()
        assert self.p.stdin is not None
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def start(self, method: str, params: Any) -> int:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def read(self) -> dict[str, Any]:
        out = self.p.stdout
        assert out is not None
        length = None
        while True:
            line = out.readline()
            if not line:
                raise SystemExit("the language server closed its output")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        assert length is not None
        return json.loads(out.read(length))

    def wait(self, rid: int) -> dict[str, Any]:
        while True:
            msg = self.read()
            if "method" in msg:
                if "id" in msg:  # a request of the server's: answered, so it never waits on us
                    self.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
                else:
                    self.notes.append(msg)
                continue
            if msg.get("id") == rid:
                return msg

    def request(self, method: str, params: Any) -> dict[str, Any]:
        return self.wait(self.start(method, params))

    def open(self, uri: str, text: str, version: int = 1) -> None:
        item = {"uri": uri, "languageId": "nika-workflow", "version": version, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": item})

    def change(self, uri: str, version: int, changes: list[dict[str, Any]]) -> None:
        doc = {"uri": uri, "version": version}
        self.notify("textDocument/didChange", {"textDocument": doc, "contentChanges": changes})

    def pull(self, uri: str) -> dict[str, Any]:
        rep = self.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        if "result" not in rep:
            raise SystemExit(f"diagnostic pull failed: {rep}")
        return rep["result"]

    def timed(self, method: str, params: Any) -> tuple[float, dict[str, Any]]:
        t0 = time.perf_counter()
        rep = self.request(method, params)
        return time.perf_counter() - t0, rep

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.p.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.p.wait(timeout=10)
        except Exception:
            self.p.kill()
            self.p.wait()


__all__ = ["Client"]
