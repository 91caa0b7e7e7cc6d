"""Hover: field docs, builtin cards, NIKA codes and `${{ }}` references.

Positions are computed in the encoding the server negotiates with each client (UTF-16 for the
VS Code capability set, UTF-8 for Neovim's), and several targets sit after non-ASCII text on
the same line, so a column mix-up shows as a miss. The cards are checked in-process
(``editor``); a hover with its range, and an empty one, also go over the wire (``client``).
"""

from __future__ import annotations

import itertools

import pytest
from lsp_local import Editor
from lsp_positions import negotiated_encoding as encoding
from lsp_positions import position_of
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from checker.core.codes import lookup

DOC = """\
nika: v1
workflow:
  id: demo
  description: "Café ☕ — résumé 🚀"
model: mock/echo
inputs:
  topic: {type: string, default: cats, description: What to write about}
config:
  region: {type: string, default: eu}
const:
  limit: 3
secrets:
  api_key: {source: env, key: API_KEY}
tasks:
  fetch:
    invoke:
      tool: "nika:fetch"
      args:
        url: https://example.com
        mode: markdown
    output:
      title: .title
    retry: {max_attempts: 3, on_codes: [NIKA-BUILTIN-FETCH-001]}
  summarize:
    with:
      page: ${{ tasks.fetch.output }}
      state: ${{ tasks.fetch.status }}
    infer:
      prompt: "Résumé 🚀 ${{ with.page }} for ${{ inputs.topic }}"
  alert:
    with:
      why: ${{ tasks.fetch.error }}
    exec: {command: [echo, "${{ with.why }}"]}
  report:
    with:
      s: ${{ tasks.summarize.output }}
    returns: string
    exec:
      command: [echo, "${{ with.s }}"]
  each:
    for_each: ${{ [1, 2, 3] }}
    infer:
      prompt: "${{ item }}"
outputs:
  final: ${{ tasks.report.output }}
"""

_ids = itertools.count()


def pos(text: str, needle: str, enc: str, *, offset: int = 0, nth: int = 0) -> lsp.Position:
    """The position of ``needle`` (its ``nth`` occurrence) plus ``offset`` code points."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    return position_of(text, i + offset, enc)


def open_doc(client: LanguageClient, text: str = DOC) -> str:
    uri = f"file:///tmp/nika-hover/flow-{next(_ids)}.nika.yaml"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
        )
    )
    return uri


async def hover(client: LanguageClient, uri: str, at: lsp.Position) -> lsp.Hover | None:
    return await client.text_document_hover_async(
        lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=at)
    )


def markdown(editor: Editor, needle: str, *, offset: int = 1, nth: int = 0) -> str:
    uri = editor.open(DOC)
    rep = editor.hover(uri, pos(DOC, needle, editor.encoding, offset=offset, nth=nth))
    assert rep is not None, f"no hover on {needle!r}"
    assert isinstance(rep.contents, lsp.MarkupContent) and rep.contents.kind == lsp.MarkupKind.Markdown
    return rep.contents.value


def test_task_field(editor: Editor) -> None:
    text = markdown(editor, "retry:")
    assert "**retry**" in text and "task field" in text and "max_attempts" in text


def test_verb_field_and_envelope_key(editor: Editor) -> None:
    assert "The user prompt" in markdown(editor, 'prompt: "Résumé')
    assert "envelope field" in markdown(editor, "secrets:")


def test_builtin_tool_id(editor: Editor) -> None:
    text = markdown(editor, "nika:fetch", offset=5)
    assert text.startswith("**`nika:fetch`**")
    assert "| `url` | string | yes |" in text and "**Returns:**" in text


def test_builtin_arg(editor: Editor) -> None:
    text = markdown(editor, "url: https")
    assert text.startswith("**url** · `nika:fetch`")
    assert "required" in text and "type: string" in text
    mode = markdown(editor, "mode: markdown")
    assert "optional" in mode and "default `markdown`" in mode


def test_nika_code_in_on_codes(editor: Editor) -> None:
    info = lookup("NIKA-BUILTIN-FETCH-001")
    text = markdown(editor, "NIKA-BUILTIN-FETCH-001", offset=8)
    assert text.startswith(f"**NIKA-BUILTIN-FETCH-001** — {info.title}")
    assert info.category in text and info.teaching.split("\n")[0] in text


def test_tasks_output_names_producer_and_value_edge(editor: Editor) -> None:
    text = markdown(editor, "tasks.fetch.output", offset=13)
    assert "**tasks.fetch.output**" in text
    assert "**value** `fetch → summarize`" in text
    assert "**Task `fetch`** · `invoke` `nika:fetch`" in text
    assert "`title` = `.title`" in text  # the producer's declared output binding


def test_status_and_error_edge_roles(editor: Editor) -> None:
    assert "**terminal-observation** `fetch → summarize`" in markdown(editor, "tasks.fetch.status", offset=14)
    assert "**failure-observation** `fetch → alert`" in markdown(editor, "tasks.fetch.error", offset=14)


def test_declared_returns_type_of_the_producer(editor: Editor) -> None:
    text = markdown(editor, "tasks.report.output", offset=7)
    assert "Returns: `string`" in text and "workflow output" in text


@pytest.mark.asyncio
async def test_inputs_reference_after_non_ascii_text(client: LanguageClient) -> None:
    enc = encoding(client)
    uri = open_doc(client)
    rep = await hover(client, uri, pos(DOC, "inputs.topic", enc, offset=8))
    assert rep is not None and isinstance(rep.contents, lsp.MarkupContent)
    text = rep.contents.value
    assert "**inputs.topic**" in text and "type: `string`" in text and "default: `cats`" in text
    assert "What to write about" in text
    # the range covers exactly `inputs.topic`, counted in the negotiated encoding
    assert rep.range == lsp.Range(
        start=pos(DOC, "inputs.topic", enc), end=pos(DOC, "inputs.topic", enc, offset=len("inputs.topic"))
    )


def test_with_binding_shows_the_bound_expression(editor: Editor) -> None:
    text = markdown(editor, "with.page", offset=6)
    assert "`page: ${{ tasks.fetch.output }}`" in text


def test_loop_local(editor: Editor) -> None:
    text = markdown(editor, "${{ item", offset=5)
    assert "**item**" in text and "`for_each: ${{ [1, 2, 3] }}`" in text


@pytest.mark.asyncio
async def test_plain_text_has_no_hover(client: LanguageClient) -> None:
    uri = open_doc(client)
    assert await hover(client, uri, pos(DOC, "Résumé 🚀 $", encoding(client), offset=2)) is None
