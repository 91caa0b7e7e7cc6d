"""Per-item ``for_each`` state: every settled iteration is a frame, folded by one plain-data
function (runtime/journal/iterations.py) for ``nika trace show``, the live progress view and any
later reader; the rows are the same live and read back."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from nika.cli import main
from runtime.journal.iterations import iteration_rows, preview
from runtime.journal.read import read_run

FAN = """\
nika: v1
workflow: { id: fan }
permits:
  exec: ["sh"]
tasks:
  fan:
    for_each: ["a", "b", "boom", "d_a_long_item_that_the_preview_has_to_cut_short", "e"]
    fail_fast: false
    with: { it: "${{ item }}" }
    when: "${{ with.it != 'e' }}"
    exec: { command: ["sh", "-c", "echo ${{ item }} >> ran.log; test ${{ item }} != boom || test -f ok"] }
"""


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_each_iteration_is_listed_live_and_in_trace_show(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("fan.nika.yaml").write_text(FAN)
    code, _, live = _run("run", "fan.nika.yaml", "--no-gc")
    assert code == 1
    assert "ok fan[0] a (" in live and "FAILED fan[2] boom (" in live and "NIKA-EXEC-001" in live
    assert "skipped fan[4] e" in live
    code, shown, _ = _run("trace", "show", "latest")
    assert code == 0
    lines = [line.split("─ ", 1)[1] for line in shown.splitlines() if "─ [" in line]
    assert lines[0].startswith("[0] a · ok · ") and lines[1].startswith("[1] b · ok · ")
    assert lines[2].startswith("[2] boom · FAILED NIKA-EXEC-001: ")
    assert lines[3].startswith("[3] d_a_long_item_that_the_preview_has_to_c… · ok")
    assert lines[4] == "[4] e · skipped · 0 ms" or lines[4].startswith("[4] e · skipped")

    code, doc, _ = _run("trace", "show", "latest", "--output-format", "json")
    rec = json.loads(doc)["task_records"]["fan"]
    assert rec["items"] == 5
    assert [(r["index"], r["status"], r["cache_hit"], r["error_code"]) for r in rec["iterations"]] == [
        (0, "success", False, None),
        (1, "success", False, None),
        (2, "failure", False, "NIKA-EXEC-001"),
        (3, "success", False, None),
        (4, "skipped", False, None),
    ]
    assert all(isinstance(r["duration_ms"], float) for r in rec["iterations"])

    # resumed: the four that settled are cache hits, the failed one runs again; show says which
    trace = json.loads(doc)["path"]
    Path("ok").touch()
    code, _, live = _run("run", "fan.nika.yaml", "--resume", trace, "--no-gc")
    assert code == 0 and "cache hit fan[0]" in live
    code, doc, _ = _run("trace", "show", "latest", "--output-format", "json")
    rows = json.loads(doc)["task_records"]["fan"]["iterations"]
    assert [r["cache_hit"] for r in rows] == [True, True, False, True, False]
    assert rows[2]["status"] == "success"
    code, shown, _ = _run("trace", "show", "latest")
    assert "[0] a · cache hit" in shown


def test_the_rows_are_the_same_from_the_live_events_and_the_journal(tmp_path: Path, monkeypatch) -> None:
    import asyncio

    from checker.engine.pipeline import compile_text
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    monkeypatch.chdir(tmp_path)
    Path("fan.nika.yaml").write_text(FAN)
    live: list[dict] = []
    compiled = compile_text(FAN, str(tmp_path / "fan.nika.yaml"), str(tmp_path))
    options = Options(trace_dir=tmp_path / "traces", on_event=live.append)
    result = asyncio.run(Run(compiled, {}, options, verbs=VERBS, workdir=tmp_path).execute())
    assert iteration_rows(live) == iteration_rows(read_run(Path(result.trace)).events)
    assert len(iteration_rows(live)["fan"]) == 5


def test_preview_is_short_and_flat() -> None:
    assert preview("plain") == "plain"
    assert preview({"b": 1, "a": [1, 2]}) == '{"a":[1,2],"b":1}'
    assert len(preview("x" * 500)) == 40 and preview("x" * 500).endswith("…")
    assert preview("two\nlines") == "two lines"
