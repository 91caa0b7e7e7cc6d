"""Diagnostics over the wire: push (with versions) or pull, the same findings as `nika check`."""

from __future__ import annotations

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

BAD = 'nika: v1\nworkflow:\n  id: w\ntasks:\n  a:\n    after: { ghost: success }\n    exec: { command: ["true"] }\n'
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
