"""Protocol edges of `didChange` versions (issue 28). LSP 3.17 (text document synchronisation)
says a document's version increases after each change; the server must still never leave the
editor showing diagnostics of text that is gone, and never drop a change without telling it."""

from __future__ import annotations

from typing import Any

import pytest
from raw_client import RawClient

BROKEN = "nika: v1\nworkflow:\n  id: w\ntasks:\n  a:\n    infer: { prompt: hi }\n    depends_on: [nope]\n"
FIXED = "nika: v1\nworkflow:\n  id: w\ntasks:\n  a:\n    infer: { prompt: hi }\n"
URI = "file:///edges/w.nika.yaml"


@pytest.fixture
def client() -> Any:
    c = RawClient()
    c.call("initialize", {"processId": None, "capabilities": {}})
    c.notify("initialized", {})
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait()


def _mentions_nope(params: dict[str, Any]) -> bool:
    """Whether the pushed diagnostics include the one about BROKEN's unknown `nope` task."""
    return any("nope" in d["message"] for d in params["diagnostics"])


def _open_broken(client: RawClient) -> None:
    item = {"uri": URI, "languageId": "nika-workflow", "version": 5, "text": BROKEN}
    client.notify("textDocument/didOpen", {"textDocument": item})
    first = client.next_notification("textDocument/publishDiagnostics")["params"]
    assert first["version"] == 5 and _mentions_nope(first)


def _change(client: RawClient, version: Any, text: str) -> None:
    doc = {"uri": URI, "version": version}
    client.notify("textDocument/didChange", {"textDocument": doc, "contentChanges": [{"text": text}]})


@pytest.mark.parametrize("version", [3, -1])
def test_a_lower_or_negative_version_is_taken_pushed_and_reported(client: RawClient, version: int) -> None:
    """A change numbered below the current version (or negative) is still the client's newest
    edit: refusing it would desynchronise every later incremental change, so the server takes
    the text, pushes its diagnostics (the editor must not keep errors of text that is gone) and
    tells the client with window/logMessage that the numbering went backwards."""
    _open_broken(client)
    _change(client, version, FIXED)
    note = client.next_notification("window/logMessage")["params"]
    assert f"version {version}" in note["message"] and "after version 5" in note["message"]
    pushed = client.next_notification("textDocument/publishDiagnostics")["params"]
    assert pushed["version"] == version
    assert not _mentions_nope(pushed)
    _change(client, version + 1, BROKEN)  # and later edits keep being pushed
    again = client.next_notification("textDocument/publishDiagnostics")["params"]
    assert again["version"] == version + 1 and _mentions_nope(again)


@pytest.mark.parametrize("version", ["6", 6.5, None])
def test_a_non_integer_version_is_dropped_and_the_client_told(client: RawClient, version: Any) -> None:
    """A didChange whose version is not an integer is malformed (LSP: `integer`); it is dropped,
    and the client hears why through window/logMessage, not only the server's stderr."""
    _open_broken(client)
    _change(client, version, FIXED)
    note = client.next_notification("window/logMessage")["params"]
    assert "textDocument/didChange" in note["message"] and "dropped" in note["message"]
    reply = client.call("nika/graph", {"textDocument": {"uri": URI}})
    assert "result" in reply  # the server goes on serving
