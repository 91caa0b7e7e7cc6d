"""The language server resolves a document's relative paths from the workspace folder.

Spec 02 §Agent Skills (Resolution): relative paths resolve from the working directory, like
every other relative path in the language. The editor's working directory is the workspace
folder containing the document (else the document's folder), never the server's own process
directory: the same files `nika check` finds when started in that folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from nika_lsp.documents import Documents, analyze
from nika_lsp.server import NikaLanguageServer
from nika_lsp.workdir import working_directory

CHILD = """\
nika: v1
workflow: {id: child}
inputs:
  n: {type: integer, required: true}
tasks:
  t: {infer: {model: mock/echo, prompt: "${{ inputs.n }}"}}
"""

PARENT = """\
nika: v1
workflow: {id: parent}
tasks:
  call:
    invoke: {workflow: "flows/child.nika.yaml", args: {n: "not a number"}}
"""


def errors(snap) -> list[str]:
    return [d.code or "" for d in snap.compiled.diagnostics if d.is_error]


def test_working_directory_is_the_first_containing_workspace_folder(tmp_path: Path) -> None:
    doc = str(tmp_path / "w" / "flows" / "p.nika.yaml")
    other, w = str(tmp_path / "other"), str(tmp_path / "w")
    assert working_directory(doc, [other, w, str(tmp_path)]) == w
    assert working_directory(doc, [other]) == os.path.dirname(doc)  # no folder holds it
    assert working_directory(doc, []) == os.path.dirname(doc)
    assert working_directory(str(tmp_path / "wx" / "p.nika.yaml"), [w]) == str(tmp_path / "wx")  # not a prefix match
    assert working_directory(None, [w]) is None and working_directory("untitled:1", [w]) is None


def test_a_child_path_resolves_from_the_workspace_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """From the workspace root `flows/child.nika.yaml` is found and the misfit argument is
    NIKA-COMP-004, although the server's own process directory is elsewhere; without a
    workspace the document's folder is the base, where no `flows/flows/child` exists
    (NIKA-COMP-001, as `nika check` run from that folder reports)."""
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "child.nika.yaml").write_text(CHILD)
    doc = tmp_path / "flows" / "parent.nika.yaml"
    doc.write_text(PARENT)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert errors(analyze(doc.as_uri(), PARENT, 1, [str(tmp_path)])) == ["NIKA-COMP-004"]
    assert errors(analyze(doc.as_uri(), PARENT, 1)) == ["NIKA-COMP-001"]


def test_documents_and_the_server_pass_the_workspace_folders(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "child.nika.yaml").write_text(CHILD)
    doc = tmp_path / "flows" / "parent.nika.yaml"
    docs = Documents(lambda: [str(tmp_path)])
    docs.set(doc.as_uri(), PARENT, 1)
    snap = docs.snapshot(doc.as_uri())
    assert snap is not None and errors(snap) == ["NIKA-COMP-004"] and snap.work_dir == str(tmp_path)
    server = NikaLanguageServer()
    assert server.workspace_paths() == ()  # before `initialize`: no workspace
    folder = SimpleNamespace(uri=tmp_path.as_uri())
    fake = SimpleNamespace(folders={"w": folder}, root_uri=None)
    monkeypatch.setattr(NikaLanguageServer, "workspace", property(lambda self: fake))
    assert server.workspace_paths() == (str(tmp_path),)
    fake.folders, fake.root_uri = {}, (tmp_path / "flows").as_uri()
    assert server.workspace_paths() == (str(tmp_path / "flows"),)
