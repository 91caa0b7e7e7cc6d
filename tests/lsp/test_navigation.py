"""Navigation: definition, references, prepareRename and rename, for both clients.

A definition, a rename round trip and the refused renames go over the wire (``client``); the
other cases call the navigation functions in-process (``editor``).

Positions are computed here independently of the server, in the encoding the client and the
server agreed on (VS Code: UTF-16; Neovim offers UTF-8 first). The document puts an emoji and
accented letters before a reference on the same line, so code points, UTF-16 units and UTF-8
bytes all differ there.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_local import Editor
from lsp_positions import negotiated_encoding as encoding
from lsp_positions import position_of, units
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from checker import compile_text

FLOW = """\
nika: v1
workflow:
  id: nav
model: mock/echo
inputs:
  topic: { type: string, required: true }
permits:
  exec: ["echo"]
tasks:
  fetch:
    infer:
      prompt: "Summarise ${{ inputs.topic }}"
  shout:
    # 🦊 café — naïve
    with:
      note: "🦊 café ${{ tasks.fetch.output }}"
    after: { fetch: success }
    exec:
      command: ["echo", "${{ with.note }}"]
  helper:
    agent:
      prompt: "Help with ${{ inputs.topic }}"
      skills: ["./skills/review/SKILL.md", "./skills/missing/SKILL.md"]
outputs:
  summary: ${{ tasks.fetch.output }}
"""


# -- positions, computed independently of the server -----------------------------------------


def offset(text: str, pos: lsp.Position, enc: str) -> int:
    line_start = 0
    for _ in range(pos.line):
        line_start = text.index("\n", line_start) + 1
    i = line_start
    while units(text[line_start:i], enc) < pos.character:
        i += 1
    return i


def span(text: str, needle: str, inner: str, enc: str, nth: int = 0) -> lsp.Range:
    """The range of ``inner`` inside the ``nth`` occurrence of ``needle``."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    start = pos + needle.index(inner)
    return lsp.Range(start=position_of(text, start, enc), end=position_of(text, start + len(inner), enc))


def inside(rng: lsp.Range, chars: int = 1) -> lsp.Position:
    return lsp.Position(line=rng.start.line, character=rng.start.character + chars)


def open_doc(client: LanguageClient, path: Path, text: str = FLOW) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
        )
    )
    return uri


def doc_id(uri: str) -> lsp.TextDocumentIdentifier:
    return lsp.TextDocumentIdentifier(uri=uri)


def edits_for(edit: lsp.WorkspaceEdit, uri: str) -> list[lsp.TextEdit]:
    if edit.document_changes:
        out: list[lsp.TextEdit] = []
        for change in edit.document_changes:
            assert isinstance(change, lsp.TextDocumentEdit) and change.text_document.uri == uri
            out.extend(e for e in change.edits if isinstance(e, lsp.TextEdit))
        return out
    assert edit.changes is not None and set(edit.changes) == {uri}
    return list(edit.changes[uri])


def apply(text: str, edits: list[lsp.TextEdit], enc: str) -> str:
    spans = sorted(
        ((offset(text, e.range.start, enc), offset(text, e.range.end, enc), e.new_text) for e in edits), reverse=True
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


# -- tests ---------------------------------------------------------------------------------------

# The fixture's only findings: its two skill files do not exist (the link tests need one missing).
_SKILL_FINDINGS = ["NIKA-AGENT-003"] * 2


def _errors(text: str) -> list[str | None]:
    return [d.code for d in compile_text(text).diagnostics if d.is_error]


def test_the_fixture_is_clean_and_columns_differ_per_encoding() -> None:
    assert _errors(FLOW) == _SKILL_FINDINGS
    cols = {
        enc: span(FLOW, "tasks.fetch.output", "fetch", enc).start.character for enc in ("utf-8", "utf-16", "utf-32")
    }
    assert len(set(cols.values())) == 3, cols


@pytest.mark.asyncio
async def test_definition_from_an_after_key(client: LanguageClient, tmp_path: Path) -> None:
    enc = encoding(client)
    uri = open_doc(client, tmp_path / "flow.nika.yaml")
    got = await client.text_document_definition_async(
        lsp.DefinitionParams(text_document=doc_id(uri), position=inside(span(FLOW, "{ fetch: success", "fetch", enc)))
    )
    assert got == lsp.Location(uri=uri, range=span(FLOW, "  fetch:", "fetch", enc))


def test_definition_from_inside_an_expression_after_an_emoji(editor: Editor, tmp_path: Path) -> None:
    enc = editor.encoding
    uri = editor.open(FLOW, (tmp_path / "flow.nika.yaml").as_uri())
    use = span(FLOW, "café ${{ tasks.fetch.output", "fetch", enc)
    for cursor in (use.start, inside(use, 3), use.end):
        got = editor.definition(uri, cursor)
        assert got == lsp.Location(uri=uri, range=span(FLOW, "  fetch:", "fetch", enc)), cursor
    binding = editor.definition(uri, inside(span(FLOW, "${{ with.note", "note", enc)))
    assert binding == lsp.Location(uri=uri, range=span(FLOW, "note: ", "note", enc))
    nothing = editor.definition(uri, lsp.Position(line=0, character=1))
    assert nothing is None


def test_definition_of_a_skills_path(editor: Editor, tmp_path: Path) -> None:
    enc = editor.encoding
    skill = tmp_path / "skills" / "review" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: review\ndescription: Reviews things.\n---\nBody.\n", encoding="utf-8")
    uri = editor.open(FLOW, (tmp_path / "flow.nika.yaml").as_uri())
    got = editor.definition(uri, inside(span(FLOW, "./skills/review", "skills", enc)))
    top = lsp.Position(line=0, character=0)
    assert got == lsp.Location(uri=skill.as_uri(), range=lsp.Range(start=top, end=top))
    missing = editor.definition(uri, inside(span(FLOW, "./skills/missing", "missing", enc)))
    assert missing is None


def test_references_honour_include_declaration(editor: Editor, tmp_path: Path) -> None:
    enc = editor.encoding
    uri = editor.open(FLOW, (tmp_path / "flow.nika.yaml").as_uri())
    homes = [
        span(FLOW, "  fetch:", "fetch", enc),
        span(FLOW, "café ${{ tasks.fetch.output", "fetch", enc),
        span(FLOW, "{ fetch: success", "fetch", enc),
        span(FLOW, "summary: ${{ tasks.fetch.output", "fetch", enc),
    ]
    for include, want in ((True, homes), (False, homes[1:])):
        got = editor.references(uri, inside(homes[2]), include_declaration=include)
        assert list(got or ()) == [lsp.Location(uri=uri, range=r) for r in want]
    topic = editor.references(uri, inside(span(FLOW, "  topic:", "topic", enc)), include_declaration=False)
    assert list(topic or ()) == [
        lsp.Location(uri=uri, range=span(FLOW, "${{ inputs.topic", "topic", enc, nth=n)) for n in range(2)
    ]


def test_prepare_rename(editor: Editor, tmp_path: Path) -> None:
    enc = editor.encoding
    uri = editor.open(FLOW, (tmp_path / "flow.nika.yaml").as_uri())
    use = span(FLOW, "café ${{ tasks.fetch.output", "fetch", enc)
    got = editor.prepare_rename(uri, inside(use, 2))
    assert got == lsp.PrepareRenamePlaceholder(range=use, placeholder="fetch")
    not_a_symbol = editor.prepare_rename(uri, inside(span(FLOW, "model: mock", "mock", enc)))
    assert not_a_symbol is None


@pytest.mark.asyncio
async def test_rename_round_trip(client: LanguageClient, tmp_path: Path) -> None:
    enc = encoding(client)
    uri = open_doc(client, tmp_path / "flow.nika.yaml")
    edit = await client.text_document_rename_async(
        lsp.RenameParams(
            text_document=doc_id(uri),
            position=inside(span(FLOW, "café ${{ tasks.fetch.output", "fetch", enc)),
            new_name="gather_sources",
        )
    )
    assert edit is not None
    ws = client.capabilities.workspace if client.capabilities else None
    if ws and ws.workspace_edit and ws.workspace_edit.document_changes:
        [change] = edit.document_changes or []
        assert isinstance(change, lsp.TextDocumentEdit) and change.text_document.version == 1
    else:
        assert edit.document_changes is None and edit.changes is not None
    edits = edits_for(edit, uri)
    assert len(edits) == 4 and {e.new_text for e in edits} == {"gather_sources"}
    renamed = apply(FLOW, edits, enc)
    assert "fetch" not in renamed and renamed.count("gather_sources") == 4
    assert renamed == FLOW.replace("fetch", "gather_sources")
    assert _errors(renamed) == _SKILL_FINDINGS

    # the server sees the renamed text too: the new name has the same four homes
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=renamed)],
        )
    )
    refs = await client.text_document_references_async(
        lsp.ReferenceParams(
            text_document=doc_id(uri),
            position=inside(span(renamed, "  gather_sources:", "gather_sources", enc)),
            context=lsp.ReferenceContext(include_declaration=True),
        )
    )
    assert refs is not None and len(refs) == 4


def test_rename_of_a_with_binding(editor: Editor, tmp_path: Path) -> None:
    enc = editor.encoding
    uri = editor.open(FLOW, (tmp_path / "flow.nika.yaml").as_uri())
    edit = editor.rename(uri, inside(span(FLOW, "${{ with.note", "note", enc)), "message")
    assert isinstance(edit, lsp.WorkspaceEdit)
    renamed = apply(FLOW, edits_for(edit, uri), enc)
    assert renamed == FLOW.replace("note:", "message:").replace("with.note", "with.message")
    assert _errors(renamed) == _SKILL_FINDINGS


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("needle", "inner", "new_name", "why"),
    [
        ("{ fetch: success", "fetch", "Fetch-Data", "not a valid task id"),
        ("{ fetch: success", "fetch", "shout", "already exists"),
        ("${{ with.note", "note", "status", "reserved"),
        ("  topic:", "topic", "2nd", "not a valid"),
    ],
)
async def test_rename_refused(
    client: LanguageClient, tmp_path: Path, needle: str, inner: str, new_name: str, why: str
) -> None:
    enc = encoding(client)
    uri = open_doc(client, tmp_path / "flow.nika.yaml")
    with pytest.raises(JsonRpcException) as refused:
        await client.text_document_rename_async(
            lsp.RenameParams(
                text_document=doc_id(uri), position=inside(span(FLOW, needle, inner, enc)), new_name=new_name
            )
        )
    assert refused.value.code == lsp.LSPErrorCodes.RequestFailed
    assert why in refused.value.message
