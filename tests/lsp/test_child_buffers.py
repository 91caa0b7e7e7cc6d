"""Open documents are the source of truth for child workflows (issue 41): a parent is judged
against the child as the editor holds it, an edit of an open child re-diagnoses its open
parents, and a finding that comes from an unsaved buffer says so (`nika run` reads the disk)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_wire import diagnostics, next_publication, pulls
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from checker.core.buffers import unsaved_note
from nika_lsp.documents import Documents

CHILD = """\
nika: v1
workflow: {id: child}
inputs:
  url: {type: string, default: "https://x.test"}
tasks:
  get:
    infer: {model: mock/echo, prompt: "${{ inputs.url }}"}
"""
# The same child, now requiring an input the parent does not pass.
CHILD_REQUIRES = CHILD.replace("inputs:\n", "inputs:\n  depth: {type: integer, required: true}\n")
PARENT = 'nika: v1\nworkflow: {id: parent}\ntasks:\n  call:\n    invoke: {workflow: "./child.nika.yaml"}\n'
NOTE = unsaved_note("./child.nika.yaml")


def _files(tmp: Path) -> tuple[str, str]:
    (tmp / "child.nika.yaml").write_text(CHILD)
    (tmp / "parent.nika.yaml").write_text(PARENT)
    return (tmp / "child.nika.yaml").as_uri(), (tmp / "parent.nika.yaml").as_uri()


def _codes(docs: Documents, uri: str) -> list[tuple[str | None, str]]:
    snap = docs.snapshot(uri)
    assert snap is not None
    return [(d.code, d.message) for d in snap.compiled.diagnostics if d.is_error]


def test_a_parent_reads_the_open_child_buffer_and_says_so(tmp_path: Path) -> None:
    child, parent = _files(tmp_path)
    docs = Documents()
    docs.set(parent, PARENT, 1)
    docs.set(child, CHILD, 1)
    assert _codes(docs, parent) == []
    assert docs.dependents(child) == [parent]  # the analysis recorded what it read
    docs.change(child, 2, [lsp.TextDocumentContentChangeWholeDocument(text=CHILD_REQUIRES)])
    assert _codes(docs, parent) == []  # the analysis of version 1 stands until it is invalidated
    docs.invalidate(parent)
    [(code, message)] = _codes(docs, parent)
    assert code == "NIKA-COMP-004" and "`depth`" in message and message.endswith(NOTE)
    # Saved: the same finding, now from the disk, without the note.
    (tmp_path / "child.nika.yaml").write_text(CHILD_REQUIRES)
    docs.invalidate(parent)
    [(code, message)] = _codes(docs, parent)
    assert code == "NIKA-COMP-004" and NOTE not in message


def test_a_parent_of_a_parent_depends_on_the_grandchild(tmp_path: Path) -> None:
    child, parent = _files(tmp_path)
    top = tmp_path / "top.nika.yaml"
    top.write_text(PARENT.replace("id: parent", "id: top").replace("child.nika", "parent.nika"))
    docs = Documents()
    for uri, text in ((top.as_uri(), top.read_text()), (parent, PARENT), (child, CHILD)):
        docs.set(uri, text, 1)
        docs.snapshot(uri)
    assert sorted(docs.dependents(child)) == sorted([parent, top.as_uri()])


def test_a_never_saved_child_still_does_not_exist_for_the_run(tmp_path: Path) -> None:
    _child, parent = _files(tmp_path)
    (tmp_path / "child.nika.yaml").unlink()
    docs = Documents()
    docs.set(parent, PARENT, 1)
    docs.set((tmp_path / "child.nika.yaml").as_uri(), CHILD, 1)
    [(code, message)] = _codes(docs, parent)
    assert code == "NIKA-COMP-001" and "open in the editor, unsaved" in message


def _open(client: LanguageClient, uri: str, text: str) -> None:
    item = lsp.TextDocumentItem(uri=uri, language_id="nika-workflow", version=1, text=text)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))


@pytest.mark.asyncio
async def test_editing_an_open_child_re_diagnoses_its_open_parent(client: LanguageClient, tmp_path: Path) -> None:
    child, parent = _files(tmp_path)
    _open(client, parent, PARENT)
    assert [d.code for d in await diagnostics(client, parent)] == []
    _open(client, child, CHILD)
    await diagnostics(client, child)
    change = lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=child, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=CHILD_REQUIRES)],
    )
    if pulls(client):
        client.text_document_did_change(change)
        got = await diagnostics(client, parent)  # pulled after the change: the parent's analysis is new
    else:
        client.text_document_did_change(change)
        # pushed without anything asked of the parent (publications of its earlier analyses,
        # the one the child's opening caused among them, may come first)
        async with asyncio.timeout(30):
            while not client.diagnostics.get(parent):
                await next_publication(client, parent)
        got = client.diagnostics[parent]
    [d] = got
    assert d.code == "NIKA-COMP-004" and NOTE in d.message
