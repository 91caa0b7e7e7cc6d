"""The certificate in the editor: a hover card on `workflow:` and a code lens on each task.

What the features answer is checked in-process (``editor``, both capability sets, with non-ASCII
text around the targets); one round trip over the shared session server makes
sure the code lens request is registered and answered on the wire.
"""

from __future__ import annotations

import pytest
from lsp_local import Editor
from lsp_positions import negotiated_encoding as encoding
from lsp_positions import position_of
from lsprotocol import types as lsp
from pygls.capabilities import ServerCapabilitiesBuilder
from pytest_lsp import LanguageClient

URI = "file:///tmp/nika-test/certificate.nika.yaml"
DOC = """\
nika: v1
workflow:
  id: certified
  description: "Résumé 🚀 en deux langues"
model: openai/gpt-x
tasks:
  draft:
    for_each: [fr, de]
    infer: { prompt: "Écris 🚀 ${{ item }}", max_tokens: 1000 }
  review:
    with: { d: "${{ tasks.draft.output }}" }
    infer: { prompt: "Review ${{ with.d }}", model: "mistral/unlisted", max_tokens: 200 }
  tidy:
    with: { d: "${{ tasks.review.output }}" }
    invoke: { tool: "nika:jq", args: { input: "${{ with.d }}", expression: "." } }
"""
PRICES = '{"openai/gpt-x": {"input": 0.15, "output": 0.6}}'


@pytest.fixture(autouse=True)
def prices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIKA_PRICES", PRICES)


def test_hover_on_workflow_shows_the_certificate(editor: Editor) -> None:
    uri = editor.open(DOC, URI)
    hover = editor.hover(uri, position_of(DOC, DOC.index("workflow:") + 3, encoding(editor)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    text = hover.contents.value
    assert text.startswith("**workflow** · envelope field")  # the field's own card stays first
    assert "**Certificate** · `certified`" in text
    assert "**Plan** — 3 tasks in 3 waves · width 1 · critical path draft → review → tidy" in text
    assert "**Cost** — unknown: no price for `review`; priced parts ≤ $0.0012" in text
    assert "**Termination** — bounded:" in text and "**Risk** — **low**" in text


def test_the_hover_card_lists_what_the_run_judges_again(editor: Editor) -> None:
    """A model output in an argv word is no diagnostic in the editor (the file stays valid); the
    card lists it under the effects, as `nika check --certificate` does."""
    doc = DOC.replace("tasks:\n", 'permits: { exec: ["./publish.sh"], tools: ["nika:jq"] }\ntasks:\n', 1) + (
        '  publish:\n    with: { t: "${{ tasks.review.output }}" }\n'
        '    exec: { command: ["./publish.sh", "${{ with.t }}"] }\n'
    )
    uri = editor.open(doc, URI)
    assert not [d for d in editor.diagnostics(uri) if d.severity != lsp.DiagnosticSeverity.Hint]
    hover = editor.hover(uri, position_of(doc, doc.index("workflow:") + 3, encoding(editor)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    text = hover.contents.value
    assert "(+1 value judged only at run time)" in text
    assert "  - `publish  command[1] ← tasks.review.output  argv judge`" in text


def test_hover_elsewhere_has_no_certificate(editor: Editor) -> None:
    uri = editor.open(DOC, URI)
    hover = editor.hover(uri, position_of(DOC, DOC.index("model:") + 1, encoding(editor)))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "Certificate" not in hover.contents.value


def test_hover_on_workflow_of_a_broken_document(editor: Editor) -> None:
    text = "nika: v1\nworkflow:\n  id: x\ntasks: [\n"
    hover = editor.hover(editor.open(text), lsp.Position(line=1, character=1))
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    assert "none yet: the document does not parse" in hover.contents.value


def test_a_code_lens_on_each_task_with_its_cost_and_wave(editor: Editor) -> None:
    uri = editor.open(DOC, URI)
    lenses = editor.code_lenses(uri)
    enc = encoding(editor)
    got = {(lens.range.start.line, lens.range.start.character): lens.command.title for lens in lenses if lens.command}
    key = DOC.index("draft:")
    assert got == {
        (6, 2): "≤ $0.0012 · wave 1 of 3",
        (9, 2): "cost unknown (no price for `mistral/unlisted`) · wave 2 of 3",
        (12, 2): "no model cost · wave 3 of 3",
    }
    first = lenses[0]
    assert first.range.end == position_of(DOC, key + len("draft"), enc)  # the key, in client units
    assert all(lens.command is not None and lens.command.command == "" for lens in lenses)  # a label only


def test_no_lenses_without_a_workflow(editor: Editor) -> None:
    assert editor.code_lenses(editor.open("- just\n- a list\n")) == []


def test_the_server_offers_code_lenses() -> None:
    from nika_lsp.server import server

    fm = server.protocol.fm
    caps = ServerCapabilitiesBuilder(
        lsp.ClientCapabilities(),
        set({**fm.features, **fm.builtin_features}.keys()),
        fm.feature_options,
        list(fm.commands.keys()),
        lsp.TextDocumentSyncKind.Incremental,
        None,
        lsp.PositionEncodingKind.Utf16,
    ).build()
    assert caps.code_lens_provider == lsp.CodeLensOptions(resolve_provider=False)


@pytest.mark.asyncio
async def test_code_lens_over_the_wire(client: LanguageClient) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=URI, language_id="yaml", version=1, text=DOC)
        )
    )
    lenses = await client.text_document_code_lens_async(
        lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri=URI))
    )
    assert lenses is not None
    titles = [lens.command.title for lens in lenses if lens.command]
    assert [lens.range.start.line for lens in lenses] == [6, 9, 12]
    assert titles[0].endswith("· wave 1 of 3") and titles[2] == "no model cost · wave 3 of 3"


# -- the run lenses (setting `nika.runLenses`) ---------------------------------------------


def test_run_lenses_name_the_task_and_offer_its_dependents(editor: Editor) -> None:
    uri = editor.open(DOC, URI)
    runs = [
        (lens.range.start.line, lens.command.title, lens.command.arguments)
        for lens in editor.code_lenses(uri, run=True)
        if lens.command and lens.command.command == "nika.runTask"
    ]
    assert runs == [
        (6, "▶ Run task", [uri, "draft"]),
        (6, "with dependents", [uri, "draft", True]),
        (9, "▶ Run task", [uri, "review"]),
        (9, "with dependents", [uri, "review", True]),
        (12, "▶ Run task", [uri, "tidy"]),  # nothing depends on it
    ]
    # the certificate's lenses are still there, after the run lenses of the same line
    assert [lens.command.title for lens in editor.code_lenses(uri, run=True) if lens.command][
        2
    ] == "≤ $0.0012 · wave 1 of 3"


def test_run_lenses_are_off_unless_the_client_asks(editor: Editor) -> None:
    uri = editor.open(DOC, URI)
    assert all(lens.command is not None and lens.command.command == "" for lens in editor.code_lenses(uri))


def test_a_task_on_a_cycle_gets_no_run_lens(editor: Editor) -> None:
    doc = (
        "nika: v1\nworkflow:\n  id: loop\ntasks:\n"
        '  a:\n    with: { x: "${{ tasks.b.output }}" }\n'
        '    invoke: { tool: "nika:log", args: { message: "${{ with.x }}" } }\n'
        '  b:\n    with: { x: "${{ tasks.a.output }}" }\n'
        '    invoke: { tool: "nika:log", args: { message: "${{ with.x }}" } }\n'
        '  c:\n    invoke: { tool: "nika:log", args: { message: "hi" } }\n'
    )
    uri = editor.open(doc)
    runs = [
        lens.command.arguments for lens in editor.code_lenses(uri, run=True) if lens.command and lens.command.command
    ]
    assert runs == [[uri, "c"]]


def test_the_run_lens_setting_is_read() -> None:
    from nika_lsp.settings import parse

    assert parse({"runLenses": True}, bare=True).settings.run_lenses is True
    assert parse({"nika": {"inlayHints": False}}).settings.run_lenses is False
