"""The server says exactly what `nika check` says: same findings for every conformance file.

Skipped (with the reason shown) when ../shared/nika-spec is not beside the project.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

SUITE = Path(__file__).resolve().parents[3] / "shared" / "nika-spec" / "conformance" / "tests"
pytestmark = pytest.mark.skipif(not SUITE.is_dir(), reason=f"conformance suite not found at {SUITE}")


def _files() -> list[Path]:
    return sorted(p for p in SUITE.rglob("*.yaml") if p.name.startswith("input")) if SUITE.is_dir() else []


def _cli_findings(files: list[Path]) -> dict[str, list[tuple[str, int, int, str]]]:
    proc = subprocess.run(
        [sys.executable, "-m", "nika", "check", "--output-format", "json", *map(str, files)],
        capture_output=True,
        text=True,
    )
    doc = json.loads(proc.stdout)
    out = {}
    for rep in doc["reports"]:
        text = Path(rep["path"]).read_text(encoding="utf-8", errors="replace")
        lines = text.split("\n")
        rows = []
        for f in rep["findings"]:
            line = f["span"]["start"]["line"] - 1
            col = f["span"]["start"]["column"] - 1
            prefix = lines[line][:col] if line < len(lines) else ""
            utf16 = len(prefix.encode("utf-16-le")) // 2
            rows.append((f["code"] or f["rule"], line, utf16, f["message"]))
        out[rep["path"]] = sorted(rows)
    return out


async def test_server_matches_cli_on_every_conformance_file(vscode_server: LanguageClient) -> None:
    files = _files()
    assert files
    expected = _cli_findings(files)
    for i, path in enumerate(files):
        uri = path.as_uri()
        vscode_server.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(
                    uri=uri, language_id="yaml", version=1, text=path.read_text(encoding="utf-8")
                )
            )
        )
        rep = await vscode_server.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        got = sorted(
            (str(d.code), d.range.start.line, d.range.start.character, d.message.split("\n")[0]) for d in rep.items
        )
        want = [(c, ln, ch, m.split("\n")[0]) for c, ln, ch, m in expected[str(path)]]
        assert got == want, f"{path}: server {got} != cli {want}"
        vscode_server.text_document_did_close(
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
        )
        assert i < 10_000
