"""`workspace/diagnostic/refresh` goes only to clients that declared `refreshSupport`.

A pull client without it would receive a request it never agreed to handle (some answer it with
an error, some log it); it pulls again on its own after each edit anyway.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from lsprotocol import types as lsp
from raw_client import TIMEOUT, RawClient

URI = "file:///tmp/nika-refresh/flow.nika.yaml"
DOC = "nika: v1\nworkflow: {id: demo}\ntasks:\n  a:\n    after: { ghost: success }\n    exec: x\n"
PULL = lsp.TextDocumentClientCapabilities(diagnostic=lsp.DiagnosticClientCapabilities(dynamic_registration=False))


@pytest.mark.parametrize("refresh", [False, True])
async def test_a_finished_check_asks_for_a_refresh_only_with_refresh_support(
    monkeypatch: pytest.MonkeyPatch, refresh: bool
) -> None:
    """The debounced check of an edit, awaited to its end: one refresh request with
    `refreshSupport`, none without, and never a push to a client that pulls."""
    import asyncio

    from nika_lsp.server import server

    ws = lsp.WorkspaceClientCapabilities(diagnostics=lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True))
    caps = lsp.ClientCapabilities(text_document=PULL, workspace=ws if refresh else None)
    monkeypatch.setattr(server.protocol, "client_capabilities", caps, raising=False)
    asked: list[Any] = []

    def ask(params: Any) -> asyncio.Future[None]:
        asked.append(params)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    monkeypatch.setattr(server, "workspace_diagnostic_refresh", ask)
    published: list[Any] = []
    monkeypatch.setattr(server, "text_document_publish_diagnostics", published.append)
    server.docs.set(URI, DOC + "  b: {exec: y}\n", 2)
    try:
        await server._check_later(URI)  # the check the edit schedules (due now), run to its end
    finally:
        server.docs.close(URI)
    assert len(asked) == (1 if refresh else 0) and published == []


def test_a_refresh_reaches_a_client_with_refresh_support_over_the_wire() -> None:
    """End to end: after an edit the server sends `workspace/diagnostic/refresh` (waited for), and
    the pull that follows answers with the findings."""
    caps = {"textDocument": {"diagnostic": {"dynamicRegistration": False}}}
    caps["workspace"] = {"diagnostics": {"refreshSupport": True}}
    c = RawClient()
    try:
        c.call("initialize", {"processId": None, "rootUri": None, "capabilities": caps})
        c.notify("initialized", {})
        c.notify(
            "textDocument/didOpen", {"textDocument": {"uri": URI, "languageId": "yaml", "version": 1, "text": DOC}}
        )
        change = {"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": DOC + "  b: {exec: y}\n"}]}
        c.notify("textDocument/didChange", change)
        seen: list[str] = []
        deadline = time.monotonic() + TIMEOUT
        while "workspace/diagnostic/refresh" not in seen and time.monotonic() < deadline:
            msg = c.next_message()
            if "method" in msg and "id" in msg:
                seen.append(msg["method"])
                c.send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        assert "workspace/diagnostic/refresh" in seen, seen
        answer = c.call("textDocument/diagnostic", {"textDocument": {"uri": URI}})["result"]
        assert "NIKA-DAG-002" in [d.get("code") for d in answer["items"]]  # the pull answers with the findings
        assert not c.tracebacks(), c.tracebacks()
    finally:
        c.call("shutdown", None)
        c.notify("exit", ...)
        c.proc.wait(timeout=TIMEOUT)
