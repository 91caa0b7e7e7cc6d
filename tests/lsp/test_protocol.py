"""The wire protocol: `nika lsp` answers every request exactly once, whatever arrives.

A hand-written client (:mod:`raw_client`), so the test can send what no well-behaved client
library would: params that do not fit the method, ids of the wrong type, bodies that are not
JSON. One server process serves the whole module; its stderr is collected to check that
refusals print no traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from raw_client import TIMEOUT, RawClient

pytestmark = pytest.mark.xdist_group("lsp-protocol")  # one worker starts the module's server

URI = "file:///tmp/nika-protocol/flow.nika.yaml"
DOC = "nika: v1\nworkflow:\n  id: demo\ntasks:\n  hello:\n    infer: { model: mock/echo, prompt: x }\n"
HOVER_AT = {"line": 4, "character": 4}  # the `hello` task key

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002
REQUEST_FAILED = -32803


def hover_params(**position: Any) -> dict[str, Any]:
    return {"textDocument": {"uri": URI}, "position": position or HOVER_AT}


@pytest.fixture(scope="module")
def server() -> Iterator[RawClient]:
    c = RawClient()
    # before initialize: refused with ServerNotInitialized (kept for the test below)
    early = c.request("textDocument/hover", hover_params())
    c.early = c.collect_until(early)[-1]  # type: ignore[attr-defined]
    c.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    c.notify("initialized", {})
    c.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": URI, "languageId": "yaml", "version": 1, "text": DOC}},
    )
    c.next_notification("textDocument/publishDiagnostics")
    yield c
    shutdown = c.call("shutdown", None)
    assert shutdown.get("error") is None
    late = c.call("textDocument/hover", hover_params())
    c.notify("exit", ...)
    c.proc.wait(timeout=TIMEOUT)
    assert late["error"]["code"] == INVALID_REQUEST, late  # after shutdown: refused, still answered
    assert not c.tracebacks(), c.tracebacks()


def error_code(response: dict[str, Any]) -> int | None:
    err = response.get("error")
    return err["code"] if isinstance(err, dict) else None


MALFORMED: dict[str, tuple[str, Any, int]] = {
    "hover without a position": ("textDocument/hover", {"textDocument": {"uri": URI}}, INVALID_PARAMS),
    "hover with params null": ("textDocument/hover", None, INVALID_PARAMS),
    "hover without params": ("textDocument/hover", ..., INVALID_PARAMS),
    "hover with a list": ("textDocument/hover", [{"uri": URI}, HOVER_AT], INVALID_PARAMS),
    "position as a string": ("textDocument/hover", {"textDocument": {"uri": URI}, "position": "4:4"}, INVALID_PARAMS),
    "line as a string": ("textDocument/hover", hover_params(line="4", character=4), INVALID_PARAMS),
    "line as a boolean": ("textDocument/hover", hover_params(line=True, character=4), INVALID_PARAMS),
    "line as a fraction": ("textDocument/hover", hover_params(line=1.5, character=4), INVALID_PARAMS),
    "negative line": ("textDocument/hover", hover_params(line=-1, character=0), INVALID_PARAMS),
    "line 2**40": ("textDocument/hover", hover_params(line=2**40, character=0), INVALID_PARAMS),
    "negative character": ("textDocument/completion", hover_params(line=0, character=-3), INVALID_PARAMS),
    "uri as a number": ("textDocument/definition", {"textDocument": {"uri": 7}, "position": HOVER_AT}, INVALID_PARAMS),
    "rename without a name": ("textDocument/rename", hover_params(), INVALID_PARAMS),
    "range with a missing end": (
        "textDocument/inlayHint",
        {"textDocument": {"uri": URI}, "range": {"start": {"line": 0, "character": 0}}},
        INVALID_PARAMS,
    ),
    "unknown method": ("nika/noSuchThing", {}, METHOD_NOT_FOUND),
}


def test_every_malformed_request_gets_exactly_one_error(server: RawClient) -> None:
    ids = {name: server.request(method, params) for name, (method, params, _) in MALFORMED.items()}
    server.send_body(b'{"jsonrpc": "2.0", "id": 77, "method": ')  # not JSON: its id cannot be known
    good = server.request("textDocument/hover", hover_params())
    got = server.collect_until(good) + server.sync()
    by_id: dict[Any, list[dict[str, Any]]] = {}
    for msg in got:
        by_id.setdefault(msg.get("id"), []).append(msg)
    for name, msg_id in ids.items():
        answers = by_id.get(msg_id, [])
        assert len(answers) == 1, f"{name}: {answers}"
        assert error_code(answers[0]) == MALFORMED[name][2], f"{name}: {answers[0]}"
        assert answers[0]["error"]["message"]
    assert [error_code(m) for m in by_id.get(None, [])] == [PARSE_ERROR]
    assert 77 not in by_id
    # the next well-formed request is answered normally
    (answer,) = by_id[good]
    assert "error" not in answer and "hello" in answer["result"]["contents"]["value"]


def test_invalid_params_name_the_field(server: RawClient) -> None:
    answer = server.call("textDocument/hover", hover_params(line="4", character=4))
    assert error_code(answer) == INVALID_PARAMS
    assert "position.line" in answer["error"]["message"], answer


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b"[]", "a batch"),
        (b"[1, 2]", "a batch"),
        (b"42", "a number"),
        (b'"hover"', "a string"),
        (b"{}", "an empty object"),
        (b'{"jsonrpc": "2.0", "id": {"n": 1}, "method": "textDocument/hover"}', "an object id"),
        (b'{"jsonrpc": "2.0", "id": true, "method": "textDocument/hover"}', "a boolean id"),
    ],
)
def test_messages_that_are_not_requests_get_invalid_request_with_id_null(
    server: RawClient, body: bytes, what: str
) -> None:
    server.send_body(body)
    got = server.sync()
    assert [(m["id"], error_code(m)) for m in got[:-1]] == [(None, INVALID_REQUEST)], what
    assert "result" in got[-1]


def test_wrong_envelope_with_a_good_id_is_answered_on_that_id(server: RawClient) -> None:
    msg_id = server.new_id()
    server.send({"jsonrpc": "1.0", "id": msg_id, "method": "textDocument/hover", "params": hover_params()})
    server.send({"jsonrpc": "2.0", "id": msg_id + 1, "method": 12, "params": {}})
    server.new_id()
    got = server.sync()
    assert [(m["id"], error_code(m)) for m in got[:-1]] == [(msg_id, INVALID_REQUEST), (msg_id + 1, INVALID_REQUEST)]


def test_notifications_with_bad_params_are_never_answered(server: RawClient) -> None:
    server.notify("textDocument/didChange", None)
    server.notify("textDocument/didOpen", {"textDocument": {"uri": URI}})
    server.notify("textDocument/didClose", [URI])
    server.notify("workspace/didChangeConfiguration", "not settings")
    server.notify("$/cancelRequest", {"id": {"not": "an id"}})
    server.send_body(b'{"jsonrpc": "2.0", "method": "initialized", "params": {}, "id": 5}')  # a notification with an id
    got = server.sync()
    assert [(m["id"], error_code(m)) for m in got[:-1]] == [(5, INVALID_REQUEST)]
    hover = server.call("textDocument/hover", hover_params())
    assert "hello" in hover["result"]["contents"]["value"]  # the document was not touched


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("textDocument/hover", hover_params(line=10_000, character=3)),
        ("textDocument/hover", hover_params(line=4, character=2**31 - 1)),
        ("textDocument/completion", hover_params(line=10_000, character=10_000)),
        ("textDocument/definition", hover_params(line=99, character=0)),
        ("textDocument/references", {**hover_params(line=99, character=0), "context": {"includeDeclaration": True}}),
        ("textDocument/prepareRename", hover_params(line=99, character=99)),
        (
            "textDocument/inlayHint",
            {
                "textDocument": {"uri": URI},
                "range": {"start": {"line": 50, "character": 0}, "end": {"line": 2**31 - 1, "character": 0}},
            },
        ),
        ("textDocument/hover", {"textDocument": {"uri": "file:///never/opened.nika.yaml"}, "position": HOVER_AT}),
    ],
)
def test_positions_beyond_the_document_are_answered(server: RawClient, method: str, params: Any) -> None:
    answer = server.call(method, params)
    assert "result" in answer and "error" not in answer, answer


def test_expected_refusals_are_errors_without_tracebacks(server: RawClient) -> None:
    rename = server.call("textDocument/rename", {**hover_params(), "newName": "not a name!"})
    assert error_code(rename) == REQUEST_FAILED, rename
    command = server.call("workspace/executeCommand", {"command": "nika.noSuchCommand", "arguments": []})
    assert error_code(command) == INVALID_PARAMS, command
    assert "nika.noSuchCommand" in command["error"]["message"]
    server.sync()
    assert not server.tracebacks(), server.tracebacks()


def test_requests_before_initialize_are_refused(server: RawClient) -> None:
    assert error_code(server.early) == SERVER_NOT_INITIALIZED, server.early  # type: ignore[attr-defined]


# -- lines as the client counts them ----------------------------------------------------------

# U+2028, U+0085 and U+2029 end a line for str.splitlines() (and so for pygls's own document
# store), never for the protocol.
ODD_BREAKS = 'nika: v1\nworkflow:\n  id: lines\n  description: "odd \u2028 breaks \x85 here \u2029 end"\ntasks:\n  a:\n'
LINES_URI = "file:///tmp/nika-protocol/lines.nika.yaml"


def test_incremental_edits_count_lines_like_the_client(server: RawClient) -> None:
    text = ODD_BREAKS + (
        "    infer: { model: mock/echo, prompt: x }\n  b:\n    after: { aa: success }\n"
        "    infer: { model: mock/echo, prompt: y }\n"
    )
    server.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": LINES_URI, "languageId": "yaml", "version": 1, "text": text}},
    )
    first = wait_diagnostics(server, LINES_URI, 1)
    assert [d["code"] for d in first] == ["NIKA-DAG-002"]
    lines = text.split("\n")  # the protocol's lines: this text has no other break
    line = next(i for i, ln in enumerate(lines) if "aa: success" in ln)
    col = lines[line].index("aa")
    assert first[0]["range"]["start"] == {"line": line, "character": col}
    edit = {"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": col + 2}}}
    server.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": LINES_URI, "version": 2}, "contentChanges": [{**edit, "text": "a"}]},
    )
    assert wait_diagnostics(server, LINES_URI, 2) == []


def wait_diagnostics(server: RawClient, uri: str, version: int) -> list[dict[str, Any]]:
    while True:
        params = server.next_notification("textDocument/publishDiagnostics")["params"]
        if params["uri"] == uri and params.get("version") == version:
            return list(params["diagnostics"])
