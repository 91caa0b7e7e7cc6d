"""Diagnostics over the wire: push (with versions) or pull, the same findings as `nika check`."""

from __future__ import annotations

import pytest
from lsp_wire import SERVER, diagnostics, next_publication
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

BAD = 'nika: v1\nworkflow:\n  id: w\ntasks:\n  a:\n    after: { ghost: success }\n    exec: { command: ["true"] }\n'
BAD += 'permits: {exec: ["true"]}\n'
URI = "file:///tmp/nika-test/flow.nika.yaml"


@pytest.mark.asyncio
async def test_open_reports_dag_002(client: LanguageClient) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=URI, language_id="yaml", version=1, text=BAD)
        )
    )
    [d] = await diagnostics(client, URI)
    assert d.code == "NIKA-DAG-002" and d.source == "nika"
    assert d.range.start == lsp.Position(line=5, character=13)
    assert d.code_description and d.code_description.href.endswith("NIKA-DAG-002")


UNICODE = (
    'nika: v1\nworkflow:\n  id: w\ntasks:\n  a:\n    infer: { model: mock/echo, prompt: "Café 🍰 ${{ const.nope }}" }\n'
)
# "    infer: { model: mock/echo, prompt: \"" is 40 code units in any encoding; then
# "Café 🍰 ${{ " is 11 code points, 12 UTF-16 units (the emoji is a surrogate pair), 15 UTF-8 bytes.
EXPECTED_COLUMN = {"utf-8": 40 + 15, "utf-16": 40 + 12, "utf-32": 40 + 11}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
async def test_position_encoding_is_negotiated(encoding: str) -> None:
    client = await SERVER.start()  # a server of its own: the encoding is fixed at initialize
    caps = lsp.ClientCapabilities(general=lsp.GeneralClientCapabilities(position_encodings=[encoding]))
    result = await client.initialize_session(lsp.InitializeParams(capabilities=caps))
    assert result.capabilities.position_encoding == encoding
    uri = f"file:///tmp/nika-test/enc-{encoding}.nika.yaml"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=UNICODE)
        )
    )
    params = await next_publication(client, uri)
    [d] = params.diagnostics
    assert d.code == "NIKA-VAR-001"
    assert d.range.start == lsp.Position(line=5, character=EXPECTED_COLUMN[encoding])
    await client.shutdown_session()
    await client.stop()
