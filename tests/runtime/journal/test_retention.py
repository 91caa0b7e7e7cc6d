"""Trace retention (ADR-100): the policy's rules and exemptions, its knobs, and `nika trace gc`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nika.cli import main
from runtime.journal.read import RunView
from runtime.journal.retention import DEFAULT_MAX_AGE_S, Policy, PolicyError, parse_duration, parse_size, plan_gc
from runtime.journal.write import Journal

DAY = 86_400
NOW = 1_800_000_000.0


def run(n: int, workflow: str = "wf", state: str = "success", age_days: float = 0.0, size: int = 100) -> RunView:
    started = int((NOW - age_days * DAY) * 1e9) + n  # n orders runs of the same instant
    return RunView(Path(f"/x/{n}.ndjson"), f"r{n}", size=size, workflow=workflow, state=state, started=started)


def removed(plan) -> list[tuple[str, str]]:
    return [(r.run_id, why) for r, why in plan.removed]


def test_a_paused_run_older_than_every_cap_survives():  # ADR-100 sketch 1 · paused-survives
    runs = [run(0, state="paused", age_days=400, size=10**9), *[run(i, age_days=1) for i in range(1, 13)]]
    plan = plan_gc(runs, Policy(keep=2, max_size=1000), NOW)
    assert "r0" not in [r for r, _ in removed(plan)]
    assert any(r.run_id == "r0" for r in plan.kept)


def test_the_newest_run_of_a_workflow_survives_even_alone_over_budget():  # sketch 2 · resume-candidate-survives
    runs = [run(0, "a", size=10), run(1, "b", size=5000), run(2, "a", size=10)]
    plan = plan_gc(runs, Policy(max_size=100), NOW)
    assert removed(plan) == [("r0", "over-budget")]  # r1 is b's newest, r2 is a's: both exempt


def test_an_over_keep_history_collects_oldest_first_with_one_line():  # sketch 3 · visible-collection
    runs = [run(i) for i in range(12)]
    plan = plan_gc(runs, Policy(keep=10), NOW)
    assert removed(plan) == [("r0", "over-keep"), ("r1", "over-keep")]
    assert plan.line() == "trace gc · removed 2 (2 over-keep) · kept 10 · 1000B"


def test_age_and_per_workflow_keep_and_unfinished_runs():
    runs = [run(0, age_days=31), run(1, age_days=29), run(2, "other", age_days=31)]
    runs += [run(3, state="unfinished", age_days=1), run(4, state="unfinished", age_days=40), run(5)]
    plan = plan_gc(runs, Policy(keep=1), NOW)
    # r2 is `other`'s only run; r3 (unfinished) does not count against keep; r1 is one over keep=1
    assert sorted(removed(plan)) == [("r0", "aged"), ("r1", "over-keep"), ("r4", "aged")]


def test_knobs_parse_and_a_bad_knob_is_named():
    assert Policy.from_env({}) == Policy()
    assert Policy().max_age_s == DEFAULT_MAX_AGE_S == 30 * DAY
    p = Policy.from_env({"NIKA_TRACE_KEEP": "3", "NIKA_TRACE_MAX_AGE": "12h", "NIKA_TRACE_MAX_SIZE": "1MB"})
    assert p == Policy(3, 12 * 3600, 1024**2)
    assert parse_duration("90m") == 5400 and parse_size("2k") == 2048 and parse_size("512") == 512
    with pytest.raises(PolicyError, match="NIKA_TRACE_MAX_AGE `soon`"):
        Policy.from_env({"NIKA_TRACE_MAX_AGE": "soon"})


def journal(directory: Path, workflow: str, state: str = "workflow_completed") -> Path:
    j = Journal(directory)
    j.append("workflow_started", [("workflow", workflow), ("trace_format", 2)])
    j.append(state, [("workflow", workflow), ("task", "gate")])
    j.close()
    assert j.path is not None
    return j.path


def test_nika_trace_gc_removes_by_the_policy_and_dry_run_removes_nothing(tmp_path, monkeypatch, capsys):
    paths = [journal(tmp_path, "wf") for _ in range(5)]
    paused = journal(tmp_path, "wf", "workflow_paused")
    monkeypatch.setenv("NIKA_TRACE_KEEP", "2")
    assert main(["trace", "gc", "--trace-dir", str(tmp_path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("trace gc · would remove 4 (4 over-keep) · kept 2") and all(p.exists() for p in paths)
    assert main(["trace", "gc", "--trace-dir", str(tmp_path), "--output-format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["reason"] for r in doc["removed"]] == ["over-keep"] * 4 and doc["policy"]["keep"] == 2
    assert sorted(tmp_path.glob("*.ndjson")) == sorted([paths[-1], paused])
    assert main(["trace", "gc", "--trace-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("trace gc · nothing to remove · kept 2")
    monkeypatch.setenv("NIKA_TRACE_MAX_SIZE", "lots")
    assert main(["trace", "gc", "--trace-dir", str(tmp_path)]) == 1
    assert "NIKA_TRACE_MAX_SIZE `lots`" in capsys.readouterr().err


def test_peek_reads_what_retention_needs_like_the_full_fold(tmp_path):
    from runtime.journal.find import peek_run
    from runtime.journal.read import read_run

    paths = [journal(tmp_path, "wf"), journal(tmp_path, "gate", "workflow_paused")]
    torn = tmp_path / "torn.ndjson"
    torn.write_bytes(paths[0].read_bytes()[:-20])
    for p in [*paths, torn]:
        full, peek = read_run(p), peek_run(p)
        facts = ("workflow", "state", "started", "ended", "size", "paused_task")
        assert [getattr(peek, f) for f in facts] == [getattr(full, f) for f in facts], p.name
    assert peek_run(paths[1]).paused_task == "gate" and peek_run(torn).state == "unfinished"


ONE = "nika: v1\nworkflow: { id: one }\ntasks:\n  t:\n    invoke: { tool: 'nika:log', args: { message: hi } }\n"


def test_nika_run_collects_at_start_with_one_line_and_no_gc_skips(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NIKA_TRACE_KEEP", "1")
    (tmp_path / "one.nika.yaml").write_text(ONE)
    argv = ["run", "one.nika.yaml", "--trace-dir", "t"]
    for _ in range(2):
        assert main(argv) == 0
    assert "trace gc" not in capsys.readouterr().err  # the newest is exempt: nothing to collect yet
    assert main([*argv, "--no-gc"]) == 0
    assert "trace gc" not in capsys.readouterr().err and len(list((tmp_path / "t").glob("*"))) == 3
    assert main(argv) == 0  # three finished runs, keep 1: the two oldest go, said in one line
    gc_lines = [line for line in capsys.readouterr().err.splitlines() if "trace gc" in line]
    assert gc_lines == [gc_lines[0]] and gc_lines[0].startswith("trace gc · removed 2 (2 over-keep) · kept 1 · ")
    assert len(list((tmp_path / "t").glob("*"))) == 2  # the survivor and this run's own journal
    monkeypatch.setenv("NIKA_TRACE_KEEP", "many")
    assert main(argv) == 0  # fail-open: the run goes on, the note says why nothing was collected
    assert "nika run: note: trace gc skipped: NIKA_TRACE_KEEP `many` is not a count" in capsys.readouterr().err


def test_doctor_reports_the_retention_in_force():
    from nika.commands.doctor import BROKEN, OK, diagnose

    def line(env):
        return next(x for x in diagnose(Path("/nonexistent"), env) if x.topic == "retention")

    assert line({}).status == OK and line({}).message.startswith("keep 10 finished runs per workflow · 30d · 256MB")
    assert "· 12h · 1.0GB" in line({"NIKA_TRACE_MAX_AGE": "12h", "NIKA_TRACE_MAX_SIZE": "1GB"}).message
    assert line({"NIKA_TRACE_KEEP": "x"}).status == BROKEN
