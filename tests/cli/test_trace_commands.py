"""`nika trace ls|show|outputs|diff|replay|rm|receipt` on real journals: workflows run with the mock
provider, their journals read back."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from nika.cli import main
from nika.commands.run import run_command
from runtime.journal.find import resolve_run
from runtime.journal.read import read_run

FLAKY = """\
nika: v1
workflow: { id: flaky }
model: mock/echo
inputs:
  word: { type: string, required: true }
tasks:
  ask:
    infer: { prompt: "say ${{ inputs.word }}", max_tokens: 20 }
  check:
    with: { said: "${{ tasks.ask.output }}" }
    retry: { max_attempts: 2, backoff_ms: 1, on_codes: ["NIKA-BUILTIN-ASSERT-001"] }
    invoke:
      tool: "nika:assert"
      args: { condition: "${{ with.said == 'say bye' }}", message: "the model did not say bye" }
outputs:
  said: "${{ tasks.ask.output }}"
"""


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """Two runs of one workflow: `hi` (check fails after a retry), then `bye` (all succeed)."""
    monkeypatch.chdir(tmp_path)
    wf = tmp_path / "flaky.nika.yaml"
    wf.write_text(FLAKY)
    got: dict[str, object] = {"wf": wf, "dir": tmp_path / "traces"}
    seen: set[Path] = set()
    for word in ("hi", "bye"):
        out, err = io.StringIO(), io.StringIO()
        code = run_command(str(wf), var_pairs=[f"word={word}"], trace_dir="traces", out=out, err=err)
        (journal,) = set((tmp_path / "traces").glob("*.ndjson")) - seen
        seen.add(journal)
        got[word] = {"code": code, "err": err.getvalue(), "journal": journal}
    return got


def trace(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["trace", *argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_ls_lists_runs_newest_first_with_state_tasks_and_marker(runs, capsys):
    code, out, _ = trace("ls", "--trace-dir", "traces", "--output-format", "json", capsys=capsys)
    assert code == 0
    rows = json.loads(out)["runs"]
    assert [r["state"] for r in rows] == ["success", "failure"]
    assert [r["workflow"] for r in rows] == ["flaky", "flaky"]
    assert all(r["tasks"] == 2 and isinstance(r["duration_ms"], (int, float)) and r["duration_ms"] >= 0 for r in rows)
    assert [r["resume_candidate"] for r in rows] == [True, False]
    assert rows[0]["cost_usd"] == 0.0  # the terminal frame's total: mock calls are provably free
    code, out, _ = trace("ls", "--trace-dir", "traces", capsys=capsys)
    lines = out.splitlines()
    assert lines[0].split() == ["RUN", "WORKFLOW", "STATE", "STARTED", "DURATION", "TASKS", "COST"]
    assert "success *" in lines[1] and "failure" in lines[2] and "$0.0000" in lines[2]


def test_show_has_the_task_tree_failures_with_codes_model_calls_and_timeline(runs, capsys):
    journal = runs["hi"]["journal"]
    code, out, _ = trace("show", str(journal), capsys=capsys)
    assert code == 0
    assert "workflow flaky · failure" in out and "verify: clean" in out
    assert "FAILED check" in out and "NIKA-BUILTIN-ASSERT-001: the model did not say bye" in out
    assert "retry after attempt 1: NIKA-BUILTIN-ASSERT-001" in out and "2 attempts" in out
    assert "model mock/echo · 2→2 tokens" in out
    timeline = out.split("timeline:\n", 1)[1].splitlines()
    assert timeline[0].lstrip().startswith("ask ") and timeline[1].lstrip().startswith("check ")
    assert "█" in timeline[0] and "▒" in timeline[1]  # a failure is drawn apart
    code, out, _ = trace("show", str(journal), "--output-format", "json", capsys=capsys)
    doc = json.loads(out)
    ask, check = doc["task_records"]["ask"], doc["task_records"]["check"]
    assert ask["model_calls"][0]["tokens_in"] == 2 and ask["tokens_out"] == 2
    assert check["error"] == {"code": "NIKA-BUILTIN-ASSERT-001", "message": "the model did not say bye"}
    assert check["attempts"] == 2 and len(check["retries"]) == 1


def test_outputs_gives_the_workflow_and_task_outputs(runs, capsys):
    code, out, _ = trace("outputs", str(runs["bye"]["journal"]), "--output-format", "json", capsys=capsys)
    doc = json.loads(out)
    assert code == 0 and doc["outputs"] == {"said": "say bye"}
    assert doc["tasks"]["ask"] == {"status": "success", "output": "say bye", "output_recorded": True}
    assert doc["tasks"]["check"]["output"] is True
    _, text, _ = trace("outputs", str(runs["hi"]["journal"]), capsys=capsys)
    assert '"said": "say hi"' in text and "check: (failure, no output recorded)" in text


def test_diff_names_the_tasks_that_changed(runs, capsys):
    a, b = (runs[w]["journal"].name.removesuffix(".ndjson") for w in ("hi", "bye"))
    code, out, _ = trace("diff", a, b, "--trace-dir", "traces", "--output-format", "json", capsys=capsys)
    d = json.loads(out)
    assert code == 0 and d["changed_tasks"] == ["ask", "check"]
    ask, check = d["tasks"]
    assert ask["changed"] == ["input", "output"] and ask["output"] == {"a": "say hi", "b": "say bye", "changed": True}
    assert "input" not in ask["unrecorded"]  # terminal frames carry input_hash (ADR-099)
    assert check["status"]["a"] == "failure" and check["status"]["b"] == "success"
    _, text, _ = trace("diff", a, b, "--trace-dir", "traces", capsys=capsys)
    assert "check: status failure NIKA-BUILTIN-ASSERT-001 → success" in text and "2 tasks changed" in text
    _, same, _ = trace("diff", a, a, "--trace-dir", "traces", capsys=capsys)
    assert "0 tasks changed" in same


def test_replay_re_renders_the_progress_view_the_run_printed(runs, capsys):
    for word in ("hi", "bye"):
        as_printed = runs[word]["journal"].relative_to(runs["dir"].parent)  # the path the run printed
        code, out, _ = trace("replay", str(as_printed), capsys=capsys)
        assert code == 0
        assert out == runs[word]["err"]  # the same lines, byte for byte, as the live run's stderr


def test_replay_json_is_the_event_stream_of_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "flaky.nika.yaml").write_text(FLAKY)
    out = io.StringIO()
    run_command("flaky.nika.yaml", output_format="json", var_pairs=["word=bye"], trace_dir="t", out=out, err=out)
    report = json.loads(out.getvalue().splitlines()[0])
    code, text, _ = trace("replay", report["trace"], "--output-format", "json", capsys=capsys)
    assert code == 0 and [json.loads(line) for line in text.splitlines()] == report["events"]


def test_a_run_is_named_by_path_id_prefix_short_id_or_latest(runs, capsys):
    d = runs["dir"]
    hi, bye = runs["hi"]["journal"], runs["bye"]["journal"]
    assert resolve_run(str(hi), d) == hi
    assert resolve_run(hi.stem, d) == hi
    assert resolve_run(bye.stem.rpartition("-")[2][:6], d) == bye
    assert resolve_run("latest", d) == bye
    code, _, err = trace("show", "2", "--trace-dir", "traces", capsys=capsys)  # both stems start with 2
    assert code == 1 and "ambiguous, 2 runs match" in err
    code, _, err = trace("show", "zzz", "--trace-dir", "traces", capsys=capsys)
    assert code == 1 and err.count("\n") == 1 and "no run with that id" in err and "Traceback" not in err


def test_a_torn_journal_is_read_as_unfinished(runs, capsys):
    src = runs["bye"]["journal"]
    torn = src.parent / "torn.ndjson"
    data = src.read_bytes()
    torn.write_bytes(data[: data.rindex(b'"kind":"workflow_completed"')])  # killed mid-line
    view = read_run(torn)
    assert view.state == "unfinished" and view.torn_lines == [view.frames + 1]
    code, out, _ = trace("show", str(torn), capsys=capsys)
    # one reader, one verdict: a journal cut mid-write is torn (a finding), never forged (issue 38)
    assert code == 0 and "unfinished" in out and "1 torn line(s) skipped" in out and "verify: finding (torn)" in out


def test_receipt_folds_certificate_verdict_and_outcome(runs, capsys):
    journal = str(runs["bye"]["journal"])
    code, out, _ = trace("receipt", journal, "--output-format", "json", capsys=capsys)
    r = json.loads(out)
    assert code == 0 and r["receipt_format"] == 1 and r["workflow"] == "flaky"
    assert r["trace_verdict"]["verdict"] == "clean"
    assert r["trace_verdict"]["outcome"] == {
        "state": "success",
        "tasks": {"ask": "success", "check": "success"},
        "cost_usd": 0.0,
    }
    assert r["certificate"]["workflow"] == "flaky" and r["certificate"]["risk"]["grade"] == "low"
    assert r["assertions"] is None and "assertions" in r["unrecorded"] and "lock_digest" in r["unrecorded"]
    assert r["digest"].startswith("blake3:")
    _, again, _ = trace("receipt", journal, "--output-format", "json", capsys=capsys)
    assert json.loads(again)["digest"] == r["digest"]  # a fold, deterministic
    _, text, _ = trace("receipt", journal, capsys=capsys)
    assert "trace verdict clean" in text and "certificate   risk low" in text


def test_receipt_refuses_to_certify_a_changed_workflow_and_flags_a_forged_trace(runs, capsys):
    runs["wf"].write_text(FLAKY.replace("max_tokens: 20", "max_tokens: 30"))
    _, out, _ = trace("receipt", str(runs["bye"]["journal"]), "--output-format", "json", capsys=capsys)
    r = json.loads(out)
    assert r["certificate"] is None and "changed since the run" in r["unrecorded"]["certificate"]
    forged = runs["dir"] / "forged.ndjson"
    forged.write_bytes(runs["bye"]["journal"].read_bytes().replace(b"say bye", b"say BYE"))
    _, out, _ = trace("receipt", str(forged), "--output-format", "json", capsys=capsys)
    assert json.loads(out)["trace_verdict"]["verdict"] == "forged"


def _paused_journal(directory: Path) -> Path:
    from runtime.journal.write import Journal

    j = Journal(directory)
    j.append("workflow_started", [("workflow", "gate"), ("trace_format", 2)])
    j.append("task_scheduled", [("task", "approve")])
    j.append("workflow_paused", [("workflow", "gate"), ("state", "paused"), ("task", "approve")])
    j.close()
    assert j.path is not None
    return j.path


def test_rm_refuses_a_paused_run_without_force_and_names_the_task(runs, capsys):
    paused = _paused_journal(runs["dir"])
    code, _, err = trace("rm", str(paused), capsys=capsys)
    assert code == 2 and "unanswered prompt for task approve" in err and paused.exists()
    code, _, err = trace("rm", "--all", "--trace-dir", "traces", capsys=capsys)
    assert code == 2 and paused.exists() and runs["hi"]["journal"].exists()  # nothing removed
    code, out, _ = trace("rm", str(runs["hi"]["journal"]), capsys=capsys)
    assert code == 0 and "removed 1" in out and not runs["hi"]["journal"].exists()
    code, _, _ = trace("rm", "--all", "--force", "--trace-dir", "traces", capsys=capsys)
    assert code == 0 and not list(runs["dir"].glob("*.ndjson"))
    assert trace("rm", capsys=capsys)[0] == 1


def test_ls_of_an_empty_or_missing_folder(tmp_path, capsys):
    code, out, _ = trace("ls", "--trace-dir", str(tmp_path / "none"), capsys=capsys)
    assert code == 0 and out == "no runs\n"
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_child_workflow_run_is_marked_and_linked_from_its_parent(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "child.nika.yaml").write_text(
        "nika: v1\nworkflow: { id: child }\nmodel: mock/echo\n"
        "tasks:\n  t:\n    for_each: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]\n"
        '    infer: { prompt: "n ${{ item }}" }\n'
    )
    (tmp_path / "parent.nika.yaml").write_text(
        'nika: v1\nworkflow: { id: parent }\ntasks:\n  call:\n    invoke: { workflow: "./child.nika.yaml" }\n'
    )
    assert run_command("parent.nika.yaml", trace_dir="t", out=io.StringIO(), err=io.StringIO()) == 0
    _, out, _ = trace("ls", "--trace-dir", "t", capsys=capsys)
    assert "child (child)" in out and "parent " in out
    _, out, _ = trace("show", "latest", "--trace-dir", "t", capsys=capsys)
    assert "child workflow ./child.nika.yaml · success · trace t/" in out
    child = next(p for p in (tmp_path / "t").glob("*.ndjson") if read_run(p).workflow == "child")
    _, out, _ = trace("show", str(child), capsys=capsys)
    assert "14 model calls" in out and "… 3 more (--output-format json lists all)" in out


def test_the_fan_out_example_reads_back(tmp_path, monkeypatch, capsys):
    example = Path(__file__).resolve().parents[2] / "examples" / "translate-fanout.nika.yaml"
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    assert run_command(str(example), output_format="json", trace_dir="t", out=out, err=io.StringIO()) == 0
    report = json.loads(out.getvalue())
    code, text, _ = trace("show", "latest", "--trace-dir", "t", capsys=capsys)
    assert code == 0 and "ok translate" in text and "4 model calls" in text and "ok collect" in text
    _, doc, _ = trace("outputs", "latest", "--trace-dir", "t", "--output-format", "json", capsys=capsys)
    assert json.loads(doc)["outputs"] == report["outputs"] and len(report["outputs"]["translations"]) == 4


def test_verify_takes_latest_and_a_run_id_like_every_trace_verb(runs, capsys):
    """Before, `nika trace verify latest` was read as a file name (and failed) though the other verbs took it."""
    code, out, err = trace("verify", "latest", "--trace-dir", "traces", capsys=capsys)
    assert code == 0 and "latest: clean" in out, err
    stem = runs["hi"]["journal"].stem
    code, out, _ = trace("verify", stem, "--trace-dir", "traces", "--output-format", "json", capsys=capsys)
    assert code == 0 and json.loads(out)["verdict"] == "clean" and json.loads(out)["damage"] == "whole"


def test_show_lists_a_paused_task_as_paused_not_running(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    wf = tmp_path / "ask.nika.yaml"
    wf.write_text(
        'nika: v1\nworkflow: { id: ask }\npermits: { tools: ["nika:prompt"] }\ntasks:\n'
        '  ask:\n    invoke: { tool: "nika:prompt", args: { message: "Go?", mode: confirm } }\n'
    )
    out, err = io.StringIO(), io.StringIO()
    assert run_command(str(wf), trace_dir="traces", out=out, err=err) == 4
    code, text, _ = trace("show", "latest", "--trace-dir", "traces", capsys=capsys)
    assert code == 0 and "PAUSED ask" in text and "running" not in text
    code, doc, _ = trace("show", "latest", "--trace-dir", "traces", "--output-format", "json", capsys=capsys)
    assert json.loads(doc)["task_records"]["ask"]["status"] == "paused"
