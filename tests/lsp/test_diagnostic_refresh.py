"""`workspace/diagnostic/refresh` goes only to clients that declared `refreshSupport`.

A pull client without it would receive a request it never agreed to handle (some answer it with
an error, some log it); it pulls again on its own after each edit anyway.
"""

from __future__ import annotations

import queue
import time
from typing import Any

import pytest
from raw_client import TIMEOUT, RawClient

URI = "file:///tmp/nika-refresh/flow.nika.yaml"
SETTLE_S = 0.6  # four times the server's debounce (DEBOUNCE_SECONDS)
DOC = "nika: v1\nworkflow: {id: demo}\ntasks:\n  a:\n    after: { ghost: success }\n    exec: x\n"


def _server_requests_after_edits(capabilities: dict[str, Any]) -> tuple[list[str], Any]:
    """The methods of the requests the server sent during an open and an edit, and a pull's answer."""
    c = RawClient()
    try:
        c.call("initialize", {"processId": None, "rootUri": None, "capabilities": capabilities})
        c.notify("initialized", {})
        c.notify(
            "textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "yaml", "version": 1, "text": DOC}}
        )
        change = {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": DOC + "  b: {exec: y}\n"}]}
        c.notify("textDocument/didChange", change)
        seen: list[str] = []
        settle = time.monotonic() + SETTLE_S  # past the debounce: the check ran (a refresh ends the wait)
        while "workspace/diagnostic/refresh" not in seen and (left := settle - time.monotonic()) > 0:
            try:
                msg = c.inbox.get(timeout=left)
            except queue.Empty:
                break
            if "method" in msg and "id" in msg:
                seen.append(msg["method"])
                c.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        sync = c.request("textDocument/diagnostic", {"textDocument": {"uri": URI}})
        deadline = time.monotonic() + TIMEOUT
        answer = None
        while time.monotonic() < deadline:
            msg = c.next_message()
            if "method" in msg and "id" in msg:
                seen.append(msg["method"])
                c.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
            elif msg.get("id") == sync:
                answer = msg.get("result")
                break
        assert not c.tracebacks(), c.tracebacks()
        return seen, answer
    finally:
        c.call("shutdown", None)
        c.notify("exit", ...)
        c.proc.wait(timeout=TIMEOUT)


@pytest.mark.parametrize("refresh", [False, True])
def test_refresh_only_with_refresh_support(refresh: bool) -> None:
    caps: dict[str, Any] = {"textDocument": {"diagnostic": {"dynamicRegistration": False}}}
    if refresh:
        caps["workspace"] = {"diagnostics": {"refreshSupport": True}}
    seen, answer = _server_requests_after_edits(caps)
    assert ("workspace/diagnostic/refresh" in seen) is refresh, seen
    codes = [d.get("code") for d in answer["items"]]
    assert "NIKA-DAG-002" in codes  # the pull still answers with the findings
