"""One run history (issue 38, item 1): every journal stays one run; a resume's journal links to the
one it resumed, and a resume reads the completed records of every attempt before its first effect.

The kill of a resume is made exactly, in process: its journal cut after the prologue is what a
SIGKILL right after the prologue leaves (the journal writes each frame to the OS as it goes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from durable_helpers import cache_hits, fields, frames, run

from nika.commands.trace import run as trace_run

WF = """\
nika: v1
workflow: { id: three }
permits: { exec: ["sh"] }
tasks:
  a:
    exec: { command: ["sh", "-c", "echo a >> ran.log; echo A"] }
  b:
    with: { x: "${{ tasks.a.output }}" }
    exec: { command: ["sh", "-c", "echo b >> ran.log; echo $0B", "${{ with.x }}"] }
  c:
    with: { x: "${{ tasks.b.output }}" }
    exec: { command: ["sh", "-c", "echo c >> ran.log; test -f ok && echo $0C", "${{ with.x }}"] }
outputs:
  out: "${{ tasks.c.output }}"
"""


@pytest.fixture
def wf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "wf.nika.yaml"
    p.write_text(WF)
    return p


def ran(tmp_path: Path) -> list[str]:
    log = tmp_path / "ran.log"
    return log.read_text().split() if log.exists() else []


def killed_after_prologue(trace: str) -> str:
    """What a resume SIGKILLed right after its prologue leaves: its journal's first frame only."""
    p = Path(trace)
    p.write_bytes(p.read_bytes().splitlines(keepends=True)[0])
    return trace


def ls(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    import argparse

    args = argparse.Namespace(trace_command="ls", trace_dir=str(tmp_path / "traces"), output_format="text")
    if extra:
        args.output_format = extra[0]
    assert trace_run(args) == 0
    return capsys.readouterr().out


def test_a_killed_resume_keeps_the_cache_of_the_attempt_before_it(wf, tmp_path, capsys):
    """The HIGH finding, made deterministic: before, the third run re-ran `a` and `b`."""
    code, first, _ = run(wf)
    assert code == 1 and ran(tmp_path) == ["a", "b", "c"]
    _, second, _ = run(wf, resume=first["trace"])  # c fails again
    killed_after_prologue(second["trace"])  # as if killed before it re-journaled a single cache hit
    (tmp_path / "ok").touch()
    code, third, err = run(wf, resume=second["trace"])
    assert code == 0 and third["outputs"] == {"out": "ABC"}, err
    assert cache_hits(third) == {"a", "b"}  # read through the pointer: never run again
    assert ran(tmp_path) == ["a", "b", "c", "c", "c"]
    (prologue,) = frames(second["trace"])
    pro = fields(prologue)
    assert pro["resumed_from"] == Path(first["trace"]).name and pro["attempt"] == 2
    assert pro["history"] == fields(frames(first["trace"])[0])["history"]
    assert pro["resumed_from_frames"] == len(frames(first["trace"])) and len(pro["resumed_from_head"]) == 64
    # `trace ls` shows the history together, and marks the head holding the most completed work
    rows = json.loads(ls(tmp_path, capsys, "json"))["runs"]
    assert [r["attempt"] for r in rows] == [3, 2, 1] and len({r["history"] for r in rows}) == 1
    assert [r["resume_candidate"] for r in rows] == [True, False, False]
    assert rows[0]["resumed_from"] == Path(second["trace"]).name.removesuffix(".ndjson")
    text = ls(tmp_path, capsys)
    assert f"↳ resumes {Path(first['trace']).stem}" in text and "one run history" in text
    from runtime.journal.history import latest_history

    chain = latest_history(tmp_path / "traces", "three")  # what a later `--watch` or seeded run reads
    assert [m.attempt for m in chain] == [1, 2, 3] and chain[-1].path == Path(third["trace"])


def test_the_killed_resume_is_not_the_candidate_when_an_older_attempt_holds_more(wf, tmp_path, capsys):
    """A resume killed before its prologue reached the disk left an empty journal: not the one to resume."""
    (tmp_path / "ok").touch()
    _, first, _ = run(wf)
    empty = Path(first["trace"]).with_name("20990101T000000Z-000000000000.ndjson")
    empty.write_bytes(b"")
    rows = json.loads(ls(tmp_path, capsys, "json"))["runs"]
    marked = [r["run"] for r in rows if r["resume_candidate"]]
    assert marked == [Path(first["trace"]).stem]
    code, _, err = run(wf, resume=str(empty))  # and resuming it says why, in one line
    assert code == 2 and "the journal is empty" in err and "nothing to resume" in err


def test_resuming_a_journal_that_already_has_a_successful_descendant_is_refused(wf, tmp_path):
    """The MEDIUM finding: before, resuming the old journal again redid its descendant's work."""
    code, first, _ = run(wf)
    (tmp_path / "ok").touch()
    code, second, _ = run(wf, resume=first["trace"])
    assert code == 0
    before = ran(tmp_path)
    code, rep, err = run(wf, resume=first["trace"])
    assert code == 2 and rep["workflow_state"] == "refused"
    assert Path(second["trace"]).stem in err and "already succeeded after this journal" in err
    assert ran(tmp_path) == before  # refused before any effect
    code, third, _ = run(wf, resume=second["trace"])  # the head itself resumes: every task a cache hit
    assert code == 0 and cache_hits(third) == {"a", "b", "c"} and ran(tmp_path) == before


def test_any_journal_of_the_history_resumes_with_every_attempts_work(wf, tmp_path):
    """Resuming the older journal after a later attempt failed does not redo the later one's work."""
    code, first, _ = run(wf)  # a, b done; c failed
    wf.write_text(WF.replace('echo b >> ran.log; echo $0B"', 'echo b >> ran.log; echo $0B2"'))
    code, _second, _ = run(wf, resume=first["trace"])  # b edited: re-runs (B2); c fails again
    assert code == 1 and ran(tmp_path).count("b") == 2
    (tmp_path / "ok").touch()
    code, third, _ = run(wf, resume=first["trace"])  # the older journal, but its history holds b's B2 record
    assert code == 0 and third["outputs"] == {"out": "AB2C"} and cache_hits(third) == {"a", "b"}
    assert ran(tmp_path).count("b") == 2


def test_resume_latest_is_the_journal_trace_ls_marks(wf, tmp_path):
    code, first, _ = run(wf)
    _, second, _ = run(wf, resume=first["trace"])
    killed_after_prologue(second["trace"])
    (tmp_path / "ok").touch()
    code, _rep, err = run(wf, resume="latest", fmt="text")
    assert code == 0 and f"cache hit a (from {Path(first['trace']).name}" in err
    other = tmp_path / "other.nika.yaml"
    other.write_text(WF.replace("id: three", "id: other"))
    code, _, err = run(other, resume="latest")
    assert code == 2 and "no journal of workflow `other`" in err


def test_a_rewritten_parent_is_refused(wf, tmp_path):
    """The pointer binds the parent's bytes as read: a parent re-chained after the fact is seen."""
    from runtime.journal.write import encode

    _, first, _ = run(wf)
    _, second, _ = run(wf, resume=first["trace"])
    killed_after_prologue(second["trace"])
    parent = Path(first["trace"])
    fs = frames(parent)
    for f in fs:
        for kv in f["fields"]:
            if kv["key"] == "output" and kv["value"] == '"A"':
                kv["value"] = '"EVIL"'
    import hashlib

    from runtime.journal.scan import GENESIS_TAG

    out, chain = [], hashlib.sha256(GENESIS_TAG).hexdigest()
    for f in fs:  # re-chained: `verify` alone would call it clean
        f["chain"] = chain
        line = encode(f)
        chain = hashlib.sha256(line).hexdigest()
        out.append(line + b"\n")
    parent.write_bytes(b"".join(out))
    code, _, err = run(wf, resume=second["trace"])
    assert code == 2 and "changed since" in err and "rewritten history is never resumed" in err


def test_a_missing_parent_is_said_and_its_work_runs_again(wf, tmp_path):
    _, first, _ = run(wf)
    _, second, _ = run(wf, resume=first["trace"])
    killed_after_prologue(second["trace"])
    Path(first["trace"]).unlink()
    (tmp_path / "ok").touch()
    code, _rep, err = run(wf, resume=second["trace"], fmt="text")
    assert code == 0 and f"the journal this one resumed, {Path(first['trace']).name}, is not in" in err


def test_retention_keeps_a_history_whole(wf, tmp_path, monkeypatch):
    """The newest journal's history is the resume candidate's cache: collection never takes part of it."""
    from runtime.journal.retention import Policy, collect

    _, first, _ = run(wf)
    _, second, _ = run(wf, resume=first["trace"])
    killed_after_prologue(second["trace"])
    plan = collect(tmp_path / "traces", Policy(keep=0, max_age_s=0, max_size=0))
    assert plan.removed == [] and len(plan.kept) == 2
