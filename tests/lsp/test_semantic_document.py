"""The `nika/semanticDocument` request (spec 16): the canonical projection, verbatim, with spans.

The full document and an unknown document go over the wire (``client``), so the JSON is checked
as a client receives it; the other cases call the feature in-process (``editor``).
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from lsp_local import Editor
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from checker import compile_text
from checker.views.projection import canonical, project

URI = "file:///tmp/nika-test/graph.nika.yaml"
PLAN = """nika: v1
workflow:
  id: plan
model: mock/echo
permits: {exec: true, tools: ["nika:fetch"], net: {http: ["example.com"]}}
tasks:
  fetch:
    invoke:
      tool: "nika:fetch"
      args: { url: "https://example.com" }
  summarize:
    with:
      page: ${{ tasks.fetch.output }}
      took: ${{ tasks.fetch.duration_ms }}
    infer:
      prompt: "Summarize ${{ with.page }} (${{ with.took }} ms)"
      model: mock/mock-deterministic
  translate:
    for_each: ["fr", "de"]
    when: ${{ inputs.go == true }}
    with:
      text: ${{ tasks.summarize.output }}
    infer:
      prompt: "Translate ${{ with.text }} into ${{ item }}"
    on_error:
      recover: ${{ tasks.fetch.output }}
  notify:
    after: { summarize: failure }
    with:
      why: ${{ tasks.summarize.error }}
    exec:
      command: ["echo", "${{ with.why }}"]
inputs:
  go:
    type: bool
"""


def open_doc(client: LanguageClient, text: str, uri: str = URI) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
        )
    )


@attrs.define
class RawResponse:
    """A response whose ``result`` is kept as the JSON the server sent.

    pygls turns the result of a method it has no type for into namedtuples, renaming keys such
    as ``from``; the test wants to see the document exactly as a client receives it.
    """

    id: Any
    jsonrpc: str
    result: Any = None


def keep_raw_results(client: LanguageClient) -> None:
    protocol: Any = client.protocol
    if getattr(protocol, "_nika_raw", False):
        return
    protocol._converter.register_structure_hook(RawResponse, lambda obj, cls: cls(**obj))
    typed = protocol.get_result_type
    protocol.get_result_type = lambda method: RawResponse if method == "nika/semanticDocument" else typed(method)
    protocol._nika_raw = True


async def semantic_document(client: LanguageClient, uri: str = URI) -> Any:
    keep_raw_results(client)
    return await client.protocol.send_request_async("nika/semanticDocument", {"textDocument": {"uri": uri}})


@pytest.mark.asyncio
async def test_the_semantic_document_carries_the_projection_verbatim(client: LanguageClient) -> None:
    open_doc(client, PLAN)
    doc = await semantic_document(client)
    assert list(doc) == ["semantic_document_format", "graph", "spans"]  # a healthy document has no reason
    assert doc["semantic_document_format"] == 1
    graph = doc["graph"]
    assert list(graph) == sorted(graph)  # the canonical key order survives the wire
    assert canonical(graph) == project(compile_text(PLAN)).canonical()  # the bytes nika inspect prints
    nodes = {n["id"]: n for n in graph["nodes"]}
    assert [n["id"] for n in graph["nodes"]] == ["fetch", "summarize", "translate", "notify"]
    assert nodes["fetch"] == {
        "id": "fetch",
        "verb": "invoke",
        "tool": "nika:fetch",
        "permits": ["net.http:example.com", "tool:nika:fetch"],
        "when": None,
        "fan_out": None,
        "cost_interval": None,
    }
    assert nodes["summarize"]["model"] == "mock/mock-deterministic"  # the task's own model wins
    assert nodes["translate"]["model"] == "mock/echo"  # else the envelope's
    assert nodes["translate"]["when"] == "${{ inputs.go == true }}"  # the condition as written
    assert nodes["translate"]["fan_out"] == {"kind": "list", "count": 2}
    assert nodes["translate"]["on_error"] == "recover"
    assert nodes["translate"]["cost_interval"] == [0, 0]  # mock calls no model: priced at $0, not unknown
    assert "tool" not in nodes["notify"] and "model" not in nodes["notify"]
    assert graph["edges"] == [
        {"binding": "page", "from": "fetch", "kind": "value", "to": "summarize"},
        {"binding": "took", "from": "fetch", "kind": "terminal-observation", "to": "summarize"},
        {"binding": "text", "from": "summarize", "kind": "value", "to": "translate"},
        {"from": "fetch", "kind": "recovery", "to": "translate"},
        {"from": "summarize", "kind": "control", "predicate": "failure", "to": "notify"},
        {"binding": "why", "from": "summarize", "kind": "failure-observation", "to": "notify"},
    ]
    assert set(doc["spans"]) == {"fetch", "summarize", "translate", "notify"}
    # a span is the task's id token (spec 16: the range of its declaring `id` token)
    assert doc["spans"]["fetch"] == {"start": {"line": 6, "character": 2}, "end": {"line": 6, "character": 7}}


def test_check_errors_mean_no_graph_and_reason_findings(editor: Editor) -> None:
    cyclic = (
        "nika: v1\nworkflow:\n  id: loop\npermits: {exec: true}\ntasks:\n"
        '  start:\n    exec: { command: ["true"] }\n'
        '  a:\n    after: { b: success }\n    exec: { command: ["true"] }\n'
        '  b:\n    after: { a: success, ghost: success }\n    exec: { command: ["true"] }\n'
    )
    doc = editor.semantic_document(editor.open(cyclic))
    assert doc["graph"] is None and doc["reason"] == "findings"
    assert set(doc["spans"]) == {"start", "a", "b"}  # what it could recover still links back to the text


def test_warnings_do_not_block_the_graph(editor: Editor) -> None:
    uri = editor.open(PLAN)
    assert {d.severity for d in editor.diagnostics(uri)} == {lsp.DiagnosticSeverity.Warning}  # one-obvious-way/004
    doc = editor.semantic_document(uri)
    assert doc["graph"] is not None and "reason" not in doc


def test_no_model_means_reason_parse(editor: Editor) -> None:
    doc = editor.semantic_document(editor.open("- just\n- a list\n"))
    assert doc == {"semantic_document_format": 1, "graph": None, "reason": "parse", "spans": {}}


@pytest.mark.asyncio
async def test_unknown_document(client: LanguageClient) -> None:
    assert await semantic_document(client, "file:///tmp/nika-test/never-opened.nika.yaml") is None
