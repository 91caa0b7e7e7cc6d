"""`nika inspect`: the canonical projection as JSON (its bytes) or text, its exit codes, and a cold
start that loads neither the language server nor the runtime."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_cli import nika_here

from checker import compile_text
from checker.views.projection import project

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "nika" / "templates" / "hello.nika.yaml"
CYCLE = (
    "nika: v1\nworkflow: {id: loop}\npermits: {exec: true}\ntasks:\n"
    '  a:\n    after: { b: success }\n    exec: { command: ["true"] }\n'
    '  b:\n    after: { a: success }\n    exec: { command: ["true"] }\n'
)


def test_json_is_the_canonical_bytes_and_a_newline() -> None:
    proc = nika_here("inspect", str(HELLO), "--format", "json", cwd=ROOT)
    assert proc.returncode == 0 and proc.stderr == ""
    assert proc.stdout == project(compile_text(HELLO.read_text(), str(HELLO), str(ROOT))).canonical() + "\n"
    assert json.loads(proc.stdout)["workflow"] == "hello"


def test_text_is_the_same_document_for_a_person() -> None:
    proc = nika_here("inspect", "-", stdin=HELLO.read_text(), cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (
        "workflow hello · 2 tasks in 2 waves · graph_format 2\n"
        "wave 1\n"
        "  greet  infer mock/echo · cost $0\n"
        "wave 2\n"
        "  shout  exec · permits exec:echo\n"
        "edges\n"
        "  greet -> shout  value (greeting)\n"
    )


def test_no_projection_is_exit_2_with_the_one_word_reason() -> None:
    proc = nika_here("inspect", "-", "--format", "json", stdin=CYCLE, cwd=ROOT)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "nika inspect: -: no projection (findings): the workflow has check errors; `nika check -` shows them\n"
    )
    proc = nika_here("inspect", "-", stdin="- just\n- a list\n", cwd=ROOT)
    assert proc.returncode == 2 and "no projection (parse): the text is not a workflow" in proc.stderr


def test_an_unreadable_file_is_exit_1() -> None:
    proc = nika_here("inspect", "no/such.nika.yaml", cwd=ROOT)
    assert proc.returncode == 1 and proc.stderr == "nika inspect: no/such.nika.yaml: no such file or directory\n"
    proc = nika_here("inspect", str(HELLO), "--format", "yaml", cwd=ROOT)
    assert proc.returncode == 1 and "invalid choice" in proc.stderr


def test_the_findings_that_decide_are_the_ones_nika_check_prints(tmp_path: Path) -> None:
    """The project's configuration applies: an error demoted to a warning no longer blocks the graph."""
    flow = tmp_path / "flow.nika.yaml"
    flow.write_text('nika: v1\nworkflow: {id: s}\ntasks:\n  shout:\n    exec: { command: ["echo", "hi"] }\n')
    assert nika_here("inspect", "flow.nika.yaml", cwd=tmp_path).returncode == 2  # NIKA-AUTH-006: no permits
    (tmp_path / "nika.toml").write_text('[severity]\n"NIKA-AUTH-006" = "warning"\n')
    assert nika_here("check", "flow.nika.yaml", cwd=tmp_path).returncode == 0
    proc = nika_here("inspect", "flow.nika.yaml", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout)["nodes"][0]["permits"] == ["exec:echo"]


def test_inspect_never_loads_the_language_server_or_the_runtime() -> None:
    code = (
        f"import sys; from nika.cli import main; main(['inspect', {str(HELLO)!r}, '--format', 'json']); "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'nika_lsp', 'runtime', 'mcp')]; "
        "sys.stderr.write(repr(bad))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.stderr == "[]"
