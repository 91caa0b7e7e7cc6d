"""Protocol edges of `didChange` versions (issue 28). LSP 3.17 (text document synchronisation)
says a document's version increases after each change; the server must still never leave the
editor showing diagnostics of text that is gone, and never drop a change without telling it."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from raw_client import RawClient

pytestmark = pytest.mark.xdist_group("lsp-version-edges")  # one worker starts the module's server

BROKEN = "nika: v1\nworkflow:\n  id: w\ntasks:\n  a:\n    infer: { prompt: hi }\n    depends_on: [nope]\n"
FIXED = "nika: v1\nworkflow:\n  id: w\ntasks:\n  a:\n    infer: { prompt: hi }\n"


class EdgeClient(RawClient):
    uri = ""  # the document of the test at hand


_DOCS = itertools.count()


@pytest.fixture(scope="module")
def server() -> Any:
    """One server for the module (a start costs most of a second); each test edits a document of
    its own, so no test sees another's versions."""
    c = EdgeClient()
    c.call("initialize", {"processId": None, "capabilities": {}})
    c.notify("initialized", {})
    yield c
    if c.proc.poll() is None:
        c.proc.kill()
        c.proc.wait()


@pytest.fixture
def client(server: EdgeClient) -> Any:
    server.sync()  # the previous test's messages are all in: none of them is read as this test's
    server.notifications.clear()
    server.uri = f"file:///edges/{next(_DOCS)}/w.nika.yaml"
    yield server
    server.notify("textDocument/didClose", {"textDocument": {"uri": server.uri}})


def _notification(client: EdgeClient, method: str) -> dict[str, Any]:
    """The next ``method`` notification about this test's document (or with no document)."""
    while True:
        msg = client.next_notification(method)
        uri = msg.get("params", {}).get("uri")
        if uri is None or uri == client.uri:
            return msg


def _mentions_nope(params: dict[str, Any]) -> bool:
    """Whether the pushed diagnostics include the one about BROKEN's unknown `nope` task."""
    return any("nope" in d["message"] for d in params["diagnostics"])


def _open_broken(client: EdgeClient) -> None:
    item = {"uri": client.uri, "languageId": "nika-workflow", "version": 5, "text": BROKEN}
    client.notify("textDocument/didOpen", {"textDocument": item})
    first = _notification(client, "textDocument/publishDiagnostics")["params"]
    assert first["version"] == 5 and _mentions_nope(first)


def _change(client: EdgeClient, version: Any, text: str) -> None:
    doc = {"uri": client.uri, "version": version}
    client.notify("textDocument/didChange", {"textDocument": doc, "contentChanges": [{"text": text}]})


@pytest.mark.parametrize("version", [3, -1])
def test_a_lower_or_negative_version_is_taken_pushed_and_reported(client: EdgeClient, version: int) -> None:
    """A change numbered below the current version (or negative) is still the client's newest
    edit: refusing it would desynchronise every later incremental change, so the server takes
    the text, pushes its diagnostics (the editor must not keep errors of text that is gone) and
    tells the client with window/logMessage that the numbering went backwards."""
    _open_broken(client)
    _change(client, version, FIXED)
    note = _notification(client, "window/logMessage")["params"]
    assert f"version {version}" in note["message"] and "after version 5" in note["message"]
    pushed = _notification(client, "textDocument/publishDiagnostics")["params"]
    assert pushed["version"] == version
    assert not _mentions_nope(pushed)
    _change(client, version + 1, BROKEN)  # and later edits keep being pushed
    again = _notification(client, "textDocument/publishDiagnostics")["params"]
    assert again["version"] == version + 1 and _mentions_nope(again)


@pytest.mark.parametrize("version", ["6", 6.5, None])
def test_a_non_integer_version_is_dropped_and_the_client_told(client: EdgeClient, version: Any) -> None:
    """A didChange whose version is not an integer is malformed (LSP: `integer`); it is dropped,
    and the client hears why through window/logMessage, not only the server's stderr."""
    _open_broken(client)
    _change(client, version, FIXED)
    note = _notification(client, "window/logMessage")["params"]
    assert "textDocument/didChange" in note["message"] and "dropped" in note["message"]
    reply = client.call("nika/semanticDocument", {"textDocument": {"uri": client.uri}})
    assert "result" in reply  # the server goes on serving
