"""Code actions: quick fixes from `Diagnostic.data`, and `source.fixAll.nika`.

A quick fix round trip and the ``only`` filter go over the wire (``client``); the other cases
call the action functions in-process (``editor``) with the same capability sets.
"""

from __future__ import annotations

import pytest
from lsp_local import Editor
from lsp_wire import diagnostics
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from checker.core.source import SourceText
from nika_lsp.convert import range_to_span

URI = "file:///tmp/nika-test/actions.nika.yaml"
TYPO = 'nika: v1\nworkflow:\n  id: w\ntasks:\n  a:\n    exec: { command: ["true"] }\n    timout: "30s"\n'
TYPO += 'permits: {exec: ["true"]}\n'
MANY = (
    "nika: v1\nworkflow:\n  id: w\ntasks:\n"
    '  a:\n    exec: { command: ["true"] }\n    timout: "30s"\n'
    '  b:\n    exec:\n      command: "echo hi | wc -c"\n    after: { a: sucess }\n    max_paralel: 2\n'
    'permits: {exec: ["true"]}\n'
)


def encoding_of(client: LanguageClient) -> str:
    """The position encoding the server picks: the client's first offer, else UTF-16."""
    general = client.capabilities.general if client.capabilities else None
    for enc in (general.position_encodings if general else None) or ():
        if enc in ("utf-8", "utf-16", "utf-32"):
            return str(enc)
    return "utf-16"


async def open_doc(client: LanguageClient, text: str) -> list[lsp.Diagnostic]:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=URI, language_id="yaml", version=1, text=text)
        )
    )
    return await diagnostics(client, URI)


async def replace_text(client: LanguageClient, text: str, version: int) -> list[lsp.Diagnostic]:
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=URI, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    return await diagnostics(client, URI)


def apply(text: str, edits: list[lsp.TextEdit], encoding: str) -> str:
    """Apply edits that all refer to the original text, as an editor does."""
    src = SourceText(text)
    spans = sorted(((range_to_span(src, e.range, encoding), e.new_text) for e in edits), reverse=True)
    for span, new in spans:
        text = text[: span.start] + new + text[span.end :]
    return text


def edits_of(edit: lsp.WorkspaceEdit | None) -> list[lsp.TextEdit]:
    """The text edits for our document, whichever of the two shapes the server chose."""
    assert edit is not None
    if edit.changes:
        return list(edit.changes[URI])
    out: list[lsp.TextEdit] = []
    for change in edit.document_changes or []:
        assert isinstance(change, lsp.TextDocumentEdit) and change.text_document.uri == URI
        out += [e for e in change.edits if isinstance(e, lsp.TextEdit)]
    return out


async def code_actions(
    client: LanguageClient, rng: lsp.Range, diags: list[lsp.Diagnostic], only: list[str] | None
) -> list[lsp.CodeAction]:
    result = await client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=URI),
            range=rng,
            context=lsp.CodeActionContext(diagnostics=diags, only=only),
        )
    )
    return [a for a in result or [] if isinstance(a, lsp.CodeAction)]


@pytest.mark.asyncio
async def test_quick_fix_round_trip(client: LanguageClient) -> None:
    [d] = await open_doc(client, TYPO)
    assert d.code == "NIKA-PARSE-005" and d.data and d.data["fixes"]
    actions = await code_actions(client, d.range, [d], [lsp.CodeActionKind.QuickFix.value])
    [action] = actions
    assert action.title == "Rename `timout` to `timeout`"
    assert action.kind == lsp.CodeActionKind.QuickFix
    assert action.is_preferred is True  # the only fix, and a safe one
    assert action.diagnostics and action.diagnostics[0].code == "NIKA-PARSE-005"
    fixed = apply(TYPO, edits_of(action.edit), encoding_of(client))
    assert fixed == TYPO.replace("timout", "timeout")
    assert await replace_text(client, fixed, 2) == []


def test_quick_fixes_come_only_from_the_sent_diagnostics(editor: Editor) -> None:
    diags = editor.diagnostics(editor.open(MANY, URI))
    unsafe = next(d for d in diags if d.code == "NIKA-PARSE-019")
    [action] = editor.code_actions(URI, [unsafe], [lsp.CodeActionKind.QuickFix.value])
    assert action.title == "Run the string through the shell (`shell:`, which needs `permits.exec: true`)"
    assert action.is_preferred is None  # an unsafe fix is never applied automatically
    # a diagnostic from another tool, or without fix data, yields nothing
    foreign = lsp.Diagnostic(range=unsafe.range, message="x", source="yaml", data=unsafe.data)
    assert editor.code_actions(URI, [foreign], [lsp.CodeActionKind.QuickFix.value]) == []


def test_fix_all_applies_every_safe_fix(editor: Editor) -> None:
    diags = editor.diagnostics(editor.open(MANY, URI))
    assert {d.code for d in diags} == {"NIKA-PARSE-005", "NIKA-PARSE-019", "NIKA-DAG-005"}
    [action] = editor.code_actions(URI, [], ["source.fixAll"])
    assert action.kind == "source.fixAll.nika"
    edits = edits_of(action.edit)
    assert len(edits) == 3
    fixed = apply(MANY, edits, editor.encoding)
    assert "timeout:" in fixed and "sucess" not in fixed and "max_parallel:" in fixed
    assert 'command: "echo hi | wc -c"' in fixed  # the unsafe rewrite is left to the author
    editor.change(URI, fixed, 2)
    remaining = editor.diagnostics(URI)
    assert [d.code for d in remaining] == ["NIKA-PARSE-019"]
    # nothing safe is left, so no fix-all action is offered any more
    assert editor.code_actions(URI, [], ["source.fixAll.nika"]) == []


@pytest.mark.asyncio
async def test_only_filter_separates_quick_fixes_from_fix_all(client: LanguageClient) -> None:
    [d] = await open_doc(client, TYPO)
    kinds = {a.kind for a in await code_actions(client, d.range, [d], None)}
    assert kinds == {lsp.CodeActionKind.QuickFix, "source.fixAll.nika"}
    assert {a.kind for a in await code_actions(client, d.range, [d], ["source"])} == {"source.fixAll.nika"}
    assert await code_actions(client, d.range, [d], ["refactor"]) == []


def test_a_finding_can_be_suppressed_on_its_line(editor: Editor) -> None:
    text = (
        "nika: v1\nworkflow: {id: s}\ntasks:\n  build:\n    infer: { model: mock/echo, prompt: x }\n"
        "  b:\n    after: { biuld: success }\n    infer: { model: mock/echo, prompt: y }\n"
    )
    uri = URI
    [dag] = [d for d in editor.diagnostics(editor.open(text, uri)) if d.code == "NIKA-DAG-002"]
    rename, suppress = editor.code_actions(uri, [dag], [lsp.CodeActionKind.QuickFix.value])
    assert rename.is_preferred and suppress.title == "Suppress NIKA-DAG-002 on this line"
    assert suppress.is_preferred is None  # silencing is never the automatic choice
    silenced = apply(text, edits_of(suppress.edit), editor.encoding)
    assert "    # nika: ignore[NIKA-DAG-002]\n    after: { biuld: success }" in silenced
    assert [d.code for d in editor.diagnostics(editor.open(silenced, URI.replace("actions", "silenced")))] == []


ASTRAL = (
    'nika: v1\nworkflow: { id: t, description: "🎉 𝒳" }\npermits: { exec: [echo] }\ntasks:\n'
    '  alpha: { exec: { command: [echo, "😀"] }, timout: "3s" }\n'
    '  beta: { exec: { command: [echo, "𝒳"] }, after: { alpah: succeeded } }\n'
)
ASTRAL_FIXED = ASTRAL.replace("timout", "timeout").replace("alpah: succeeded", "alpha: success")
SHAPES = {
    "plain": lambda t: t,
    "bom": lambda t: "\ufeff" + t,
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "bom+crlf": lambda t: "\ufeff" + t.replace("\n", "\r\n"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_fix_all_lands_exactly_in_bom_crlf_and_astral_documents(editor: Editor, shape: str) -> None:
    """A position indexes the document as the editor holds it (BOM and CR included, astral
    characters counted in the negotiated encoding): applying fix-all gives the plain fix, shaped
    like the document, never a shifted edit (`taskss:`)."""
    text = SHAPES[shape](ASTRAL)
    uri = URI.replace("actions", f"astral-{shape.replace('+', '-')}")
    editor.diagnostics(editor.open(text, uri))
    [action] = editor.code_actions(uri, [], ["source.fixAll.nika"])
    edit = action.edit
    assert edit is not None
    edits = list(edit.changes[uri]) if edit.changes else [e for c in edit.document_changes or [] for e in c.edits]
    assert apply(text, edits, editor.encoding) == SHAPES[shape](ASTRAL_FIXED)


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_a_lone_surrogate_does_not_break_position_conversion(encoding: str) -> None:
    """A document with a lone surrogate (not text, refused by the checker) still converts
    positions in every encoding: the server answers instead of logging an exception."""
    from nika_lsp.convert import offset_of, position

    src = SourceText("a: '\ud800x'\n")
    at = offset_of(src, lsp.Position(line=0, character=20), encoding)
    assert at == len("a: '\ud800x'")
    assert offset_of(src, position(src, 5, encoding), encoding) == 5
