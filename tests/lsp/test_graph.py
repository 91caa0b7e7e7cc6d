"""The `nika/graph` request: the compiled plan as JSON.

The full plan and an unknown document go over the wire (``client``), so the JSON is checked
as a client receives it; the other cases call the graph function in-process (``editor``).
"""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from lsp_local import Editor
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

URI = "file:///tmp/nika-test/graph.nika.yaml"
PLAN = """nika: v1
workflow:
  id: plan
model: mock/echo
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
      prompt: "Summarize ${{ with.page }}"
      model: mock/fixed
  translate:
    for_each: ["fr", "de"]
    when: ${{ inputs.go }}
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
    protocol.get_result_type = lambda method: RawResponse if method == "nika/graph" else typed(method)
    protocol._nika_raw = True


async def graph(client: LanguageClient, uri: str = URI) -> Any:
    keep_raw_results(client)
    return await client.protocol.send_request_async("nika/graph", {"textDocument": {"uri": uri}})


@pytest.mark.asyncio
async def test_graph_document(client: LanguageClient) -> None:
    open_doc(client, PLAN)
    doc = await graph(client)
    assert doc["nika_graph_version"] == 1
    assert doc["waves"] == [["fetch"], ["summarize"], ["translate", "notify"]]
    nodes = {n["id"]: n for n in doc["nodes"]}
    assert [n["id"] for n in doc["nodes"]] == ["fetch", "summarize", "translate", "notify"]
    assert nodes["fetch"] == {
        "id": "fetch",
        "verb": "invoke",
        "wave": 0,
        "when": None,
        "for_each": None,
        "tool": "nika:fetch",
    }
    assert nodes["summarize"]["model"] == "mock/fixed"  # the task's own model wins
    assert nodes["translate"]["model"] == "mock/echo"  # else the envelope's
    assert nodes["translate"]["when"] == "${{ inputs.go }}"
    assert nodes["translate"]["for_each"] == '["fr","de"]'
    assert "tool" not in nodes["notify"] and "model" not in nodes["notify"]
    assert doc["edges"] == [
        {"from": "fetch", "to": "summarize", "kind": "value", "label": "output"},
        {"from": "fetch", "to": "summarize", "kind": "terminal-observation", "label": "duration_ms"},
        {"from": "summarize", "to": "translate", "kind": "value", "label": "output"},
        {"from": "fetch", "to": "translate", "kind": "recovery", "label": "output"},
        {"from": "summarize", "to": "notify", "kind": "control", "label": "failure"},
        {"from": "summarize", "to": "notify", "kind": "failure-observation", "label": "error"},
    ]
    assert set(doc["spans"]) == {"fetch", "summarize", "translate", "notify"}
    end = len(PLAN.split("\n")[8])  # the task ends with its `args:` line
    assert doc["spans"]["fetch"] == {"start": {"line": 5, "character": 2}, "end": {"line": 8, "character": end}}


def test_tasks_on_a_cycle_have_no_wave(editor: Editor) -> None:
    cyclic = (
        "nika: v1\nworkflow:\n  id: loop\ntasks:\n"
        '  start:\n    exec: { command: ["true"] }\n'
        '  a:\n    after: { b: success }\n    exec: { command: ["true"] }\n'
        '  b:\n    after: { a: success, ghost: success }\n    exec: { command: ["true"] }\n'
    )
    doc = editor.graph(editor.open(cyclic))
    assert doc["waves"] == [["start"]]
    assert [(n["id"], n["wave"]) for n in doc["nodes"]] == [("start", 0), ("a", None), ("b", None)]
    assert {e["from"] for e in doc["edges"]} == {"a", "b"}  # the undeclared `ghost` is a finding, not plan


def test_no_model_means_reason_parse(editor: Editor) -> None:
    assert editor.graph(editor.open("- just\n- a list\n")) == {"reason": "parse"}


@pytest.mark.asyncio
async def test_unknown_document(client: LanguageClient) -> None:
    assert await graph(client, "file:///tmp/nika-test/never-opened.nika.yaml") is None
