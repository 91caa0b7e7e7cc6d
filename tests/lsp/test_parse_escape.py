"""The editor reports the same typed parse finding as `nika check` for an escape past U+10FFFF,
on open and on an incremental edit (never NIKA-IMPL-001)."""

from __future__ import annotations

from lsp_local import Editor

from checker import compile_text

URI = "file:///tmp/nika-test/escape.nika.yaml"
GOOD = 'nika: v1\nworkflow: { id: y }\ntasks:\n  t:\n    infer: { model: mock/echo, prompt: "hi" }\n'
BAD = GOOD.replace('"hi"', '"\\U00110000"')


def test_the_editor_and_the_check_agree_on_a_big_escape(editor: Editor) -> None:
    want = [d.code for d in compile_text(BAD, "escape.nika.yaml").diagnostics]
    assert want == ["NIKA-PARSE-001"]
    assert [d.code for d in editor.diagnostics(editor.open(BAD, URI))] == want
    editor.change(URI, GOOD, 2)
    assert [d.code for d in editor.diagnostics(URI)] == []
    editor.change(URI, BAD, 3)  # an edit inside one task: the incremental path parses the piece
    assert [d.code for d in editor.diagnostics(URI)] == want
