"""Diagnostics over the wire: push (with versions) or pull, the same findings as `nika check`."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

BAD = 'nika: v1\nworkflow:\n  id: w\ntasks:\n  a:\n    after: { ghost: success }\n    exec: { command: ["true"] }\n'
BAD += 'permits: {exec: ["true"]}\n'
URI = "file:///tmp/nika-test/flow.nika.yaml"


def _pull(client: LanguageClient) -> bool:
    caps = client.capabilities.text_document
    return bool(caps and caps.diagnostic)


async def diagnostics(client: LanguageClient, uri: str) -> list[lsp.Diagnostic]:
    if _pull(client):
        rep = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        assert isinstance(rep, lsp.RelatedFullDocumentDiagnosticReport)
        return list(rep.items)
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[uri]


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
    import sys

    from pytest_lsp import ClientServerConfig, make_test_lsp_client

    config = ClientServerConfig(server_command=[sys.executable, "-m", "nika", "lsp"])
    client = make_test_lsp_client()
    await client.start_io(*config.server_command)
    caps = lsp.ClientCapabilities(general=lsp.GeneralClientCapabilities(position_encodings=[encoding]))
    result = await client.initialize_session(lsp.InitializeParams(capabilities=caps))
    assert result.capabilities.position_encoding == encoding
    uri = f"file:///tmp/nika-test/enc-{encoding}.nika.yaml"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=UNICODE)
        )
    )
    params = await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    [d] = params.diagnostics
    assert d.code == "NIKA-VAR-001"
    assert d.range.start == lsp.Position(line=5, character=EXPECTED_COLUMN[encoding])
    await client.shutdown_session()
