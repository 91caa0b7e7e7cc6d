"""The server never wedges on a file in the workspace and never keeps a Future per notification
(issue 28). Spec 02 says nothing about FIFOs; the project's rule (bad input is a finding or a
one-line error, never a hang) is what these tests enforce."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from raw_client import TIMEOUT, RawClient

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")

PARENT = (
    'nika: v1\nworkflow:\n  id: parent\npermits: {{ tools: [] }}\ntasks:\n  a:\n    invoke: {{ workflow: "{child}" }}\n'
)
OTHER = "nika: v1\nworkflow:\n  id: other\ntasks:\n  a:\n    infer: { prompt: hi }\n"


def _open(client: RawClient, uri: str, text: str) -> None:
    item = {"uri": uri, "languageId": "nika-workflow", "version": 1, "text": text}
    client.notify("textDocument/didOpen", {"textDocument": item})


def test_a_child_workflow_that_is_a_fifo_never_wedges_the_server(tmp_path: Path) -> None:
    """A child-workflow path naming a FIFO is refused unread: eight requests on that document,
    then another document and `shutdown`/`exit`, all answer (how fast: benchmarks/bounds.py)."""
    fifo = tmp_path / "child.nika.yaml"
    os.mkfifo(fifo)
    parent = tmp_path / "parent.nika.yaml"
    text = PARENT.format(child=str(fifo))
    parent.write_text(text)
    client = RawClient()
    try:
        client.call("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        _open(client, parent.as_uri(), text)
        doc = {"textDocument": {"uri": parent.as_uri()}}
        ids = [client.request("textDocument/diagnostic", doc) for _ in range(8)]
        got = client.collect_until(ids[-1])  # a wedged server answers none (the client's deadline fails the test)
        assert {m.get("id") for m in got} >= set(ids)
        other = (tmp_path / "other.nika.yaml").as_uri()
        _open(client, other, OTHER)
        reply = client.call("textDocument/diagnostic", {"textDocument": {"uri": other}})
        assert "result" in reply
        assert "result" in client.call("shutdown", None)
        client.notify("exit", None)
        assert client.proc.wait(timeout=TIMEOUT) == 0
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()


async def _settled() -> None:
    """Until no other task is left on the loop (the debounced checks included), within a generous deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    me = asyncio.current_task()
    while any(t is not me and not t.done() for t in asyncio.all_tasks()) and loop.time() < deadline:
        await asyncio.sleep(0.01)


def test_notifications_leave_no_future_behind(caplog: pytest.LogCaptureFixture) -> None:
    """pygls keeps the Future of a generator-style notification forever; 200 edits must leave
    none (the leak was about 2 KB per didOpen/didChange/didClose)."""
    from nika_lsp.server import server

    caplog.set_level(logging.CRITICAL)
    uri = "file:///memory/leak.nika.yaml"

    async def storm() -> int:
        p = server.protocol
        before = len(p._request_futures)
        item = lsp.TextDocumentItem(uri=uri, language_id="nika-workflow", version=1, text="nika: v1\n")
        p._handle_notification(lsp.TEXT_DOCUMENT_DID_OPEN, lsp.DidOpenTextDocumentParams(text_document=item))
        for v in range(2, 202):
            change = lsp.TextDocumentContentChangeWholeDocument(text=f"nika: v1\n# {v}\n")
            doc = lsp.VersionedTextDocumentIdentifier(uri=uri, version=v)
            params = lsp.DidChangeTextDocumentParams(text_document=doc, content_changes=[change])
            p._handle_notification(lsp.TEXT_DOCUMENT_DID_CHANGE, params)
        close = lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        p._handle_notification(lsp.TEXT_DOCUMENT_DID_CLOSE, close)
        await _settled()  # every task the notifications started has finished
        return len(p._request_futures) - before

    assert asyncio.run(storm()) == 0
