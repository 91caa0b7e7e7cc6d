"""The server answers malformed input with findings or empty results and keeps serving."""

from __future__ import annotations

import pytest
from lsp_wire import next_publication
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

GOOD = 'nika: v1\nworkflow:\n  id: ok\ntasks:\n  a:\n    exec: { command: ["true"] }\n'
GOOD += 'permits: {exec: ["true"]}\n'
MALFORMED = {
    "half-key": "nika: v1\nworkflow:\n  id: x\ntasks:\n  a:\n    exe",
    "unclosed-island": 'nika: v1\nworkflow: {id: x}\ntasks:\n  a:\n    infer: { prompt: "${{ inputs.',
    "tabs": "nika: v1\nworkflow:\n\tid: x\ntasks:\n\ta:\n\t\texec: {}\n",
    "binary": "\x00\x01\x02\ufffd\ufffdPK\x03\x04" * 50,
    "deep": "a: " + "[" * 3000,
    "huge": "nika: v1\n" + "# padding\n" * 120_000,
    "empty": "",
}


async def _settle(client: LanguageClient, uri: str) -> list[lsp.Diagnostic]:
    caps = client.capabilities.text_document
    if caps and caps.diagnostic:
        rep = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        return list(getattr(rep, "items", []) or [])
    return list((await next_publication(client, uri)).diagnostics)


@pytest.mark.parametrize("name", sorted(MALFORMED))
async def test_malformed_documents_get_findings_and_the_server_survives(client: LanguageClient, name: str) -> None:
    uri = f"file:///tmp/robust/{name}.nika.yaml"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=MALFORMED[name])
        )
    )
    diags = await _settle(client, uri)
    assert diags, "a malformed document must produce at least one finding"
    # the server still answers afterwards
    ok = "file:///tmp/robust/good.nika.yaml"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=ok, language_id="yaml", version=1, text=GOOD)
        )
    )
    assert not await _settle(client, ok)


async def test_change_for_a_never_opened_document_is_ignored(client: LanguageClient) -> None:
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri="file:///tmp/robust/ghost.nika.yaml", version=3),
            content_changes=[
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
                    text="x",
                )
            ],
        )
    )
    ok = "file:///tmp/robust/after-ghost.nika.yaml"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=ok, language_id="yaml", version=1, text=GOOD)
        )
    )
    assert not await _settle(client, ok)


async def test_requests_for_unknown_documents_answer_empty(client: LanguageClient) -> None:
    caps = client.capabilities.text_document
    if caps and caps.diagnostic:
        rep = await client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri="file:///nowhere.nika.yaml"))
        )
        assert list(rep.items) == []


async def test_versions_never_go_backwards(client: LanguageClient) -> None:
    caps = client.capabilities.text_document
    if caps and caps.diagnostic:
        pytest.skip("push-only behaviour")
    uri = "file:///tmp/robust/versions.nika.yaml"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=GOOD)
        )
    )
    await next_publication(client, uri)
    for v in range(2, 8):  # a burst of edits: only the newest may be published last
        client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=v),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=GOOD.replace("id: ok", f"id: v{v}"))],
            )
        )
    params = await next_publication(client, uri)
    assert params.version == 7
