"""Every feature answers the same after edits that moved reused tasks as on a fresh analysis.

The language server reuses unchanged tasks across versions and only moves their anchors (see
:mod:`checker.engine.incremental`); positions are read off those objects by every feature. One editor
walks a document through edits above its tasks, another opens the final text fresh, and each
feature is asked the same questions of both.
"""

from __future__ import annotations

from typing import Any

import pytest
from lsp_local import Editor
from lsprotocol import types as lsp

from checker.core.source import SourceText
from nika_lsp.convert import position

DOC = """\
nika: v1
workflow:
  id: moved
  description: "short"
model: mock/echo
permits:
  fs: { read: ["./in/**"] }
tasks:
  fetch:
    invoke:
      tool: nika:read
      args: { path: "./in/a.txt" }
  summarize:
    with:
      page: ${{ tasks.fetch.output }}
      state: ${{ tasks.fetch.status }}
    when: ${{ with.state == 'failed' }}
    infer:
      prompt: |
        Summarize:
        ${{ with.page }}
      max_tokens: 100
  report:
    after: { summarize: success }
    infer: "Report on ${{ tasks.summarize.outptu }}"
    retyr: 2
outputs:
  final: ${{ tasks.report.output }}
"""

# Each edit lengthens or shortens text above some tasks, so reused tasks move.
EDITS = [
    ('description: "short"', 'description: "a much longer description than before"'),
    ("tool: nika:read", "tool: nika:read  # the file"),
    ("max_tokens: 100", "max_tokens: 1000"),
    ('description: "a much longer description than before"', 'description: "s"'),
]


def _positions(text: str) -> list[lsp.Position]:
    """A position inside every task key, every `tasks.X` reference and every binding use."""
    src = SourceText(text)
    out = []
    for needle in ("fetch", "summarize", "report", "tasks.fetch", "with.page", "with.state", "outptu", "retyr"):
        i = text.find(needle)
        while i != -1:
            out.append(position(src, i + 1))
            i = text.find(needle, i + 1)
    return out


def _answers(ed: Editor, uri: str, text: str) -> list[Any]:
    full = lsp.Range(
        start=lsp.Position(line=0, character=0), end=lsp.Position(line=len(text.splitlines()), character=0)
    )
    diags = ed.diagnostics(uri)
    out: list[Any] = [
        diags,
        ed.code_actions(uri, diags, None),
        ed.document_symbols(uri),
        ed.folding_ranges(uri),
        ed.semantic_tokens(uri),
        ed.inlay_hints(uri, full),
        ed.semantic_document(uri),
        ed.code_lenses(uri),
    ]
    for at in _positions(text):
        out.append(ed.hover(uri, at))
        out.append(ed.definition(uri, at))
        out.append(ed.references(uri, at, include_declaration=True))
        out.append(ed.prepare_rename(uri, at))
    return out


@pytest.mark.parametrize("caps", ["visual-studio-code", "neovim"])
def test_features_after_moves_match_a_fresh_analysis(caps: str) -> None:
    walked, fresh = Editor.of(caps), Editor.of(caps)
    uri = "file:///tmp/nika-local/moved.nika.yaml"
    walked.open(DOC, uri)
    _answers(walked, uri, DOC)  # the first analysis, and every memo features keep on it
    text = DOC
    for version, (old, new) in enumerate(EDITS, start=2):
        assert old in text
        text = text.replace(old, new)
        walked.change(uri, text, version)
        before = walked.snap(uri).compiled
        fresh_uri = uri.replace("moved", f"moved-{version}")
        fresh.open(text, fresh_uri, version)
        a = _answers(walked, uri, text)
        b = _answers(fresh, fresh_uri, text)
        assert repr(a).replace(fresh_uri, uri) == repr(b).replace(fresh_uri, uri), (old, new)
        assert before.workflow is not None and before.diagnostics
