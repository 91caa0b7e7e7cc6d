"""The language server's workspace rule (workspace/001, nika_lsp.workdir.reading_roots): files a
document names outside the workspace folders are neither read nor looked at; `nika check`
follows them as before."""

from __future__ import annotations

import os
from pathlib import Path

from checker import compile_text
from checker.core.codes import lints
from checker.core.diagnostics import Severity
from nika_lsp.documents import analyze
from nika_lsp.features.navigation import index_for, resolve_link
from tests.checker.test_teaching_examples import examples, place

CHILD = """nika: v1
workflow: { id: child }
inputs:
  secret_input_name: { type: string, required: true }
tasks:
  t: { infer: { model: mock/echo, prompt: "x" } }
"""


def _parent(target: str) -> str:
    return f'nika: v1\nworkflow: {{ id: parent }}\ntasks:\n  call:\n    invoke: {{ workflow: "{target}" }}\n'


def _layout(tmp_path: Path) -> tuple[Path, Path]:
    ws, out = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    out.mkdir()
    (out / "child.nika.yaml").write_text(CHILD)
    return ws, out


def _keys(snap: object) -> list[str]:
    return [d.code or d.rule or "" for d in snap.compiled.diagnostics]  # type: ignore[attr-defined]


def test_a_child_outside_the_workspace_is_not_read_and_is_reported(tmp_path: Path) -> None:
    ws, _ = _layout(tmp_path)
    doc = ws / "flow.nika.yaml"
    text = _parent("../outside/child.nika.yaml")
    snap = analyze(doc.as_uri(), text, 1, [str(ws)])
    found = [d for d in snap.compiled.diagnostics if d.rule == "workspace/001"]
    assert len(found) == 1 and found[0].severity is Severity.INFO
    assert text[found[0].span.start : found[0].span.end].strip('"') == "../outside/child.nika.yaml"
    assert "NIKA-COMP-004" not in _keys(snap)
    assert not any("secret_input_name" in d.message for d in snap.compiled.diagnostics)
    # nika check is not confined: it reads the child and reports the missing input
    checked = compile_text(text, str(doc), str(ws))
    assert any(d.code == "NIKA-COMP-004" and "secret_input_name" in d.message for d in checked.diagnostics)
    assert not any(d.rule == "workspace/001" for d in checked.diagnostics)


def test_a_missing_file_outside_is_not_an_existence_oracle(tmp_path: Path) -> None:
    ws, _ = _layout(tmp_path)
    doc = ws / "flow.nika.yaml"
    there = analyze(doc.as_uri(), _parent("../outside/child.nika.yaml"), 1, [str(ws)])
    absent = analyze(doc.as_uri(), _parent("../outside/nothing.nika.yaml"), 1, [str(ws)])
    assert _keys(there) == _keys(absent) == ["workspace/001"]


def test_a_symlink_inside_pointing_out_is_outside(tmp_path: Path) -> None:
    ws, out = _layout(tmp_path)
    os.symlink(out / "child.nika.yaml", ws / "link.nika.yaml")
    snap = analyze((ws / "flow.nika.yaml").as_uri(), _parent("./link.nika.yaml"), 1, [str(ws)])
    assert _keys(snap) == ["workspace/001"]


def test_inside_the_workspace_children_are_followed(tmp_path: Path) -> None:
    ws, _ = _layout(tmp_path)
    (ws / "flows").mkdir()
    (ws / "flows" / "child.nika.yaml").write_text(CHILD)
    snap = analyze((ws / "flow.nika.yaml").as_uri(), _parent("./flows/child.nika.yaml"), 1, [str(ws)])
    assert "workspace/001" not in _keys(snap)
    assert any(d.code == "NIKA-COMP-004" and "secret_input_name" in d.message for d in snap.compiled.diagnostics)


def test_a_second_workspace_folder_is_inside(tmp_path: Path) -> None:
    ws, out = _layout(tmp_path)
    snap = analyze((ws / "flow.nika.yaml").as_uri(), _parent("../outside/child.nika.yaml"), 1, [str(ws), str(out)])
    assert "workspace/001" not in _keys(snap) and "NIKA-COMP-004" in _keys(snap)


def test_without_a_workspace_the_documents_folder_is_the_root(tmp_path: Path) -> None:
    ws, _ = _layout(tmp_path)
    snap = analyze((ws / "flow.nika.yaml").as_uri(), _parent("../outside/child.nika.yaml"), 1, [])
    assert _keys(snap) == ["workspace/001"]


def test_a_skill_outside_is_reported_without_a_verdict_on_the_file(tmp_path: Path) -> None:
    ws, _ = _layout(tmp_path)
    text = (
        "nika: v1\nworkflow: { id: p }\ntasks:\n  a:\n    agent:\n      model: mock/echo\n"
        '      prompt: "x"\n      skills: ["../outside/SKILL.md"]\n'
    )
    snap = analyze((ws / "flow.nika.yaml").as_uri(), text, 1, [str(ws)])
    assert "workspace/001" in _keys(snap)
    assert not any(k.startswith("NIKA-AGENT-00") for k in _keys(snap))


def test_definition_does_not_jump_outside(tmp_path: Path) -> None:
    ws, _ = _layout(tmp_path)
    (ws / "inner.nika.yaml").write_text(CHILD)
    for target, expect in (("../outside/child.nika.yaml", None), ("./inner.nika.yaml", str(ws / "inner.nika.yaml"))):
        snap = analyze((ws / "flow.nika.yaml").as_uri(), _parent(target), 1, [str(ws)])
        index = index_for(snap)
        at = snap.source.text.index(target)
        link = index.link_at(at + 1)
        assert link is not None
        assert resolve_link(snap, link) == (os.path.realpath(expect) if expect else None)


def test_the_teaching_example_is_golden_under_a_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "a" / "b" / "ws"
    ws.mkdir(parents=True)
    ex = examples(lints()["workspace/001"].teaching)
    bad, start = place(ex["bad"])
    good, _ = place(ex["good"])
    doc = (ws / "teaching.nika.yaml").as_uri()
    hits = [d for d in analyze(doc, bad, 1, [str(ws)]).compiled.diagnostics if d.rule == "workspace/001"]
    assert hits and all(d.span.start >= start for d in hits)
    assert not any(d.rule == "workspace/001" for d in analyze(doc, good, 1, [str(ws)]).compiled.diagnostics)
