"""Outline, folding, plan inlay hints and `${{ }}` semantic tokens.

The features are called in-process (``editor``) for both capability sets; the inlay-hint
setting, which needs the configuration notification and the refresh request, goes over the
wire (``client``).
"""

from __future__ import annotations

import pytest
from lsp_local import Editor
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from nika_lsp.documents import analyze
from nika_lsp.features.outline import symbol_information
from nika_lsp.features.tokens import TOKEN_TYPES, classify

URI = "file:///tmp/nika-test/structure.nika.yaml"
DOC = """nika: v1
workflow:
  id: demo
model: mock/echo
inputs:
  topic:
    type: string
tasks:
  fetch:
    invoke:
      tool: "nika:fetch"
      args:
        url: "https://example.com/${{ inputs.topic }}"
  summarize:
    with:
      page: ${{ tasks.fetch.output }}
    infer:
      prompt: |
        Summarize this page:
        ${{ with.page }}
  report:
    after: { summarize: success }
    with:
      code: ${{ tasks.fetch.status }}
    exec:
      command: ["echo", "🚀 résumé ${{ size(with.code) > 3 && inputs.topic.startsWith('x') }}"]
outputs:
  summary: ${{ tasks.summarize.output }}
"""
LINES = DOC.split("\n")


def open_doc(client: LanguageClient, text: str = DOC, uri: str = URI) -> None:
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
        )
    )


def negotiated_encoding(client: LanguageClient) -> str:
    """The position encoding the server picks: the client's first offer, else UTF-16."""
    general = client.capabilities.general if client.capabilities else None
    for enc in (general.position_encodings if general else None) or ():
        if enc in ("utf-8", "utf-16", "utf-32"):
            return str(enc)
    return "utf-16"


def to_codepoints(line: str, units: int, encoding: str) -> int:
    """The code-point column of a column counted in ``encoding`` units."""
    used = 0
    for i, ch in enumerate(line):
        if used >= units:
            return i
        if encoding == "utf-8":
            used += len(ch.encode("utf-8"))
        elif encoding == "utf-16":
            used += 2 if ord(ch) > 0xFFFF else 1
        else:
            used += 1
    return len(line)


def doc_range() -> lsp.Range:
    return lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=len(LINES), character=0))


def label_text(hint: lsp.InlayHint) -> str:
    if isinstance(hint.label, str):
        return hint.label
    return "".join(part.value for part in hint.label)


async def inlay_labels(client: LanguageClient) -> dict[int, str]:
    hints = await client.text_document_inlay_hint_async(
        lsp.InlayHintParams(text_document=lsp.TextDocumentIdentifier(uri=URI), range=doc_range())
    )
    return {h.position.line: label_text(h) for h in hints or []}


# -- document symbols ----------------------------------------------------------------------


def test_document_symbols_tree(editor: Editor) -> None:
    assert editor.hierarchical_symbols  # both capability sets take the tree
    result = editor.document_symbols(editor.open(DOC, URI))
    assert result and all(isinstance(s, lsp.DocumentSymbol) for s in result)
    symbols: list[lsp.DocumentSymbol] = list(result)  # type: ignore[arg-type]
    assert [s.name for s in symbols] == ["nika", "workflow", "model", "inputs", "tasks", "outputs"]
    by_name = {s.name: s for s in symbols}
    assert by_name["workflow"].detail == "demo"
    tasks = by_name["tasks"]
    assert tasks.kind == lsp.SymbolKind.Namespace
    details = {c.name: c.detail for c in tasks.children or []}
    assert details == {
        "fetch": "invoke · nika:fetch",
        "summarize": "infer · mock/echo",
        "report": "exec · echo",
    }
    fetch = next(c for c in tasks.children or [] if c.name == "fetch")
    assert fetch.selection_range == lsp.Range(
        start=lsp.Position(line=8, character=2), end=lsp.Position(line=8, character=7)
    )
    assert fetch.range.start.line == 8 and fetch.range.end.line == 12
    summarize = next(c for c in tasks.children or [] if c.name == "summarize")
    assert [(b.name, b.kind) for b in summarize.children or []] == [("page", lsp.SymbolKind.Variable)]
    topic = (by_name["inputs"].children or [])[0]
    assert (topic.name, topic.detail) == ("topic", "string")


def test_flat_symbols_name_their_container() -> None:
    snap = analyze(URI, DOC, 1)
    flat = {(s.name, s.container_name) for s in symbol_information(snap, "utf-16")}
    assert {("tasks", None), ("fetch", "tasks"), ("page", "summarize"), ("summary", "outputs")} <= flat


# -- folding --------------------------------------------------------------------------------


def test_folding_ranges(editor: Editor) -> None:
    result = editor.folding_ranges(editor.open(DOC, URI))
    ranges = {(r.start_line, r.end_line) for r in result or []}
    assert {
        (1, 2),  # workflow:
        (7, 25),  # tasks:
        (8, 12),  # fetch:
        (13, 19),  # summarize:
        (17, 19),  # prompt: | (block scalar)
        (26, 27),  # outputs:
    } <= ranges
    assert all(end > start for start, end in ranges)
    assert (0, 0) not in ranges and not any(start == 3 for start, _ in ranges)  # one-line entries


# -- inlay hints ----------------------------------------------------------------------------


def test_inlay_hints_show_wave_and_incoming_edges(editor: Editor) -> None:
    uri = editor.open(DOC, URI)
    labels = {h.position.line: label_text(h) for h in editor.inlay_hints(uri, doc_range())}
    assert labels == {
        8: "wave 1",
        13: "wave 2 ← fetch (value)",
        20: "wave 3 ← fetch (terminal-observation), summarize (after: success)",
    }
    hints = editor.inlay_hints(uri, doc_range())
    report = next(h for h in hints or [] if h.position.line == 20)
    assert report.position.character == len(LINES[20])  # the end of the `report:` key line
    assert not isinstance(report.label, str)
    linked = {p.value: p.location for p in report.label if p.location is not None}
    assert linked["summarize"] is not None and linked["summarize"].range.start == lsp.Position(line=13, character=2)


@pytest.mark.asyncio
async def test_inlay_hints_follow_the_setting(client: LanguageClient) -> None:
    refreshes: list[None] = []

    @client.feature(lsp.WORKSPACE_INLAY_HINT_REFRESH)
    def inlay_hint_refresh(params: None) -> None:
        refreshes.append(params)

    open_doc(client)
    assert await inlay_labels(client)
    try:
        client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"nika": {"inlayHints": False}})
        )
        assert await inlay_labels(client) == {}
    finally:  # the server is shared: leave the setting as the other tests expect it
        client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings={"nika.inlayHints": True}))
    assert (await inlay_labels(client))[8] == "wave 1"
    ws = client.capabilities.workspace if client.capabilities else None
    if ws and ws.inlay_hint and ws.inlay_hint.refresh_support:
        assert len(refreshes) == 2  # the server asked the client to redraw after each change


def test_inlay_hints_only_inside_the_range(editor: Editor) -> None:
    hints = editor.inlay_hints(
        editor.open(DOC, URI),
        lsp.Range(start=lsp.Position(line=10, character=0), end=lsp.Position(line=15, character=0)),
    )
    assert [h.position.line for h in hints or []] == [13]


# -- semantic tokens ------------------------------------------------------------------------


def decode(data: list[int], encoding: str) -> list[tuple[int, str, str]]:
    """Absolute ``(line, text, token type)`` from the relative encoding, read in ``encoding``."""
    out = []
    line = char = 0
    for i in range(0, len(data), 5):
        d_line, d_char, length, kind, _mods = data[i : i + 5]
        line += d_line
        char = char + d_char if d_line == 0 else d_char
        text = LINES[line]
        start = to_codepoints(text, char, encoding)
        end = to_codepoints(text, char + length, encoding)
        out.append((line, text[start:end], TOKEN_TYPES[kind]))
    return out


def test_semantic_tokens_decode_to_island_tokens(editor: Editor) -> None:
    data = editor.semantic_tokens(editor.open(DOC, URI))
    assert data
    tokens = decode(data, negotiated_encoding(editor))  # type: ignore[arg-type]
    emoji_line = [(text, kind) for line, text, kind in tokens if line == 25]
    assert emoji_line == [
        ("size", "function"),
        ("with", "namespace"),
        ("code", "property"),
        (">", "operator"),
        ("3", "number"),
        ("&&", "operator"),
        ("inputs", "namespace"),
        ("topic", "property"),
        ("startsWith", "function"),
        ("'x'", "string"),
    ]
    assert [(text, kind) for line, text, kind in tokens if line == 19] == [("with", "namespace"), ("page", "property")]
    assert {line for line, _, _ in tokens} == {12, 15, 19, 23, 25, 27}  # islands only


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "has(inputs.x) ? true : null",
            ["function", "namespace", "property", "operator", "keyword", "operator", "keyword"],
        ),
        ("'a' in const.tags", ["string", "operator", "namespace", "property"]),
        ("tasks.a.output.size() == -2.5", ["namespace", "property", "property", "function", "operator", "number"]),
        (
            "!item.done || index >= 1",
            ["operator", "namespace", "property", "operator", "namespace", "operator", "number"],
        ),
        ("inputs.x | json", ["namespace", "property"]),  # lexing stops at the refused `|`
    ],
)
def test_classify(text: str, expected: list[str]) -> None:
    assert [kind for _, _, kind in classify(text)] == expected
