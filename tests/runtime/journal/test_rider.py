"""The infallible rider, honest (issue 38, item 3; spec 17): when the journal cannot be written the
run's verdict and outputs stay, the note after the run says the journal is incomplete from frame N,
`nika trace ls` marks it, `--resume` names the completed tasks it cannot see and will run again, and
every reader (verify, show, ls, resume) gives one verdict per damage class."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from durable_helpers import cache_hits, run

from nika.commands.trace import run as trace_run
from nika.commands.trace import trace_verify
from runtime.journal import write
from runtime.journal.incomplete import mark_path, read_mark

ROOT = Path(__file__).resolve().parents[3]
WF = """\
nika: v1
workflow: { id: rider }
permits: { exec: ["sh"] }
tasks:
  a:
    exec: { command: ["sh", "-c", "echo a >> ran.log; echo A"] }
  b:
    with: { x: "${{ tasks.a.output }}" }
    exec: { command: ["sh", "-c", "echo b >> ran.log; echo $0B", "${{ with.x }}"] }
  c:
    with: { x: "${{ tasks.b.output }}" }
    exec: { command: ["sh", "-c", "echo c >> ran.log; echo $0C", "${{ with.x }}"] }
outputs:
  out: "${{ tasks.c.output }}"
"""


@pytest.fixture
def wf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "wf.nika.yaml"
    p.write_text(WF)
    return p


def disk_full_from(monkeypatch: pytest.MonkeyPatch, frame: int) -> None:
    """From the ``frame``-th frame on the journal writes to /dev/full (every write fails ENOSPC)."""
    original = write.Journal.record
    seen = {"n": 0}

    def record(self, kind, fields):  # type: ignore[no-untyped-def]
        seen["n"] += 1
        if seen["n"] == frame and self._fh is not None:
            self._fh.close()
            self._fh = open("/dev/full", "ab", buffering=0)  # noqa: SIM115
        return original(self, kind, fields)

    monkeypatch.setattr(write.Journal, "record", record)


def ls_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    args = argparse.Namespace(trace_command="ls", trace_dir=str(tmp_path / "traces"), output_format="json")
    assert trace_run(args) == 0
    return json.loads(capsys.readouterr().out)["runs"]


def ran(tmp_path: Path) -> list[str]:
    return (tmp_path / "ran.log").read_text().split()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_journal_the_disk_refused_keeps_the_verdict_and_says_where_it_stops(wf, tmp_path, capsys):
    with pytest.MonkeyPatch.context() as mp:
        disk_full_from(mp, 12)
        code, rep, err = run(wf, fmt="text")
    assert code == 0 and json.loads(rep) == {"out": "ABC"}  # the verdict and outputs stand (spec 17)
    assert "note: the journal is incomplete from frame 12 of" in err and "No space left on device" in err
    (journal,) = (tmp_path / "traces").glob("*.ndjson")
    mark = read_mark(journal)
    assert mark is not None and mark["from_frame"] == 12 and mark["end"] == "workflow_completed"
    unseen = set(mark["completed"])
    assert unseen and unseen <= {"a", "b", "c"}
    (row,) = ls_rows(tmp_path, capsys)
    assert row["incomplete_from"] == 12 and row["damage"] == "incomplete"
    out = io.StringIO()
    assert trace_verify(str(journal), "json", out) == 1
    verdict = json.loads(out.getvalue())
    assert verdict["verdict"] == "finding" and verdict["damage"] == "incomplete"
    before = ran(tmp_path)
    code, rep, err = run(wf, resume=str(journal), fmt="text")
    assert code == 0 and json.loads(rep) == {"out": "ABC"}
    for t in sorted(unseen):  # named before the run, then run again
        assert f"`{t}`" in err.split("cache hit")[0] or f"`{t}`" in err
    assert "cannot see" in err and " again" in err
    assert sorted(ran(tmp_path)[len(before) :]) == sorted(unseen), err


def test_a_file_size_limit_tears_the_journal_and_every_reader_agrees(tmp_path):
    """A write cut by RLIMIT_FSIZE (a full disk, mid-frame): `verify` said forged, `--resume` truncated;
    now both call it torn, a finding, and the resume goes on from the frames before the cut."""
    (tmp_path / "wf.nika.yaml").write_text(WF)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    limit = "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000)); "
    limit += "sys.argv = ['nika', *sys.argv[1:]]; runpy.run_module('nika', run_name='__main__')"
    proc = subprocess.run(
        [sys.executable, "-c", limit, "run", "wf.nika.yaml", "--trace-dir", "traces", "--no-gc"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "the journal is incomplete from frame" in proc.stderr and "File too large" in proc.stderr
    (journal,) = (tmp_path / "traces").glob("*.ndjson")
    assert not journal.read_bytes().endswith(b"\n")  # cut mid-frame
    out = io.StringIO()
    code = trace_verify(str(journal), "json", out)
    verdict = json.loads(out.getvalue())
    assert code == 1 and verdict["verdict"] == "finding" and verdict["damage"] == "incomplete"
    assert mark_path(journal).exists()
    mark_path(journal).unlink()  # without the mark (the disk refused it too): torn, still never forged
    out = io.StringIO()
    trace_verify(str(journal), "json", out)
    assert json.loads(out.getvalue())["damage"] == "torn"


def test_a_trace_folder_removed_mid_run_is_said(tmp_path, monkeypatch):
    """Before, the run reported success with a trace path that no longer existed."""
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "wf.nika.yaml"
    p.write_text(
        'nika: v1\nworkflow: { id: gone }\npermits: { exec: ["sh"] }\ntasks:\n'
        '  wipe:\n    exec: { command: ["sh", "-c", "rm -rf traces; echo wiped"] }\n'
    )
    code, rep, err = run(p)
    assert code == 0 and rep["workflow_state"] == "success" and rep["trace"] is None
    assert "was removed while the run wrote it" in err and "left no trace" in err


def test_a_journal_that_cannot_be_created_is_said(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a folder")
    (tmp_path / "wf.nika.yaml").write_text(WF)
    from nika.commands.run import run_command

    out, err = io.StringIO(), io.StringIO()
    code = run_command("wf.nika.yaml", output_format="json", trace_dir="afile/traces", out=out, err=err)
    assert code == 0 and json.loads(out.getvalue())["trace"] is None
    assert "the journal could not be written" in err.getvalue() and "left no trace" in err.getvalue()


def test_a_resume_of_a_truncated_or_torn_journal_names_the_effect_cut_off_in_flight(wf, tmp_path):
    """What a kill leaves: the frames up to the admitted effect of `b`; the resume says `b` runs again."""
    from durable_helpers import frames

    _, first, _ = run(wf)
    lines = Path(first["trace"]).read_bytes().splitlines(keepends=True)
    fs = frames(first["trace"])
    cut = next(
        i + 1
        for i, f in enumerate(fs)
        if f["kind"] == "permit_checked" and any(kv["value"] == "b" for kv in f["fields"] if kv["key"] == "task")
    )
    killed = tmp_path / "traces" / "killed.ndjson"
    killed.write_bytes(b"".join(lines[:cut]) + lines[cut][:20])  # torn after b's witness
    Path(first["trace"]).unlink()
    code, _, err = run(wf, resume=str(killed), fmt="text")
    assert code == 0 and "`b` cut off after its effect was admitted: it runs again" in err
    assert "cache hit a" in err
    _, again, _ = run(wf, resume="latest")
    assert cache_hits(again) == {"a", "b", "c"}


def _damaged(whole: bytes, damage: str) -> bytes:
    lines = whole.splitlines(keepends=True)
    if damage == "truncated":  # a kill at a frame boundary
        return b"".join(lines[:6])
    if damage == "torn":  # a kill or a full disk mid-write
        return b"".join(lines[:6]) + lines[6][:25]
    if damage == "empty":  # not one frame written whole
        return lines[0][:30]
    assert damage == "forged"  # an edit in the middle: the chain breaks at the next line
    return b"".join(lines[:3]) + lines[3].replace(b'"kind"', b'"kinD"', 1) + b"".join(lines[4:])


@pytest.mark.parametrize(
    ("damage", "verdict", "code", "candidate", "resumes"),
    [
        ("truncated", "finding", 1, True, True),
        ("torn", "finding", 1, True, True),
        ("empty", "finding", 1, False, False),
        ("forged", "forged", 2, False, False),
    ],
)
def test_every_reader_gives_one_verdict_per_damage_class(
    wf, tmp_path, capsys, damage, verdict, code, candidate, resumes
):
    """verify, show, ls and --resume read a damaged journal alike: before, verify called a torn or
    empty journal forged while --resume treated it as truncated, and ls offered a forged journal as
    the one to resume, which --resume then refused."""
    _, first, _ = run(wf)
    whole = Path(first["trace"])
    journal = tmp_path / "traces" / f"20990101T000000Z-{damage}.ndjson"
    journal.write_bytes(_damaged(whole.read_bytes(), damage))
    whole.unlink()
    out = io.StringIO()
    assert trace_verify(str(journal), "json", out) == code
    got = json.loads(out.getvalue())
    assert (got["verdict"], got["damage"]) == (verdict, damage)
    (row,) = ls_rows(tmp_path, capsys)
    assert row["damage"] == damage and row["resume_candidate"] is candidate
    show = argparse.Namespace(trace_command="show", run=str(journal), trace_dir=str(tmp_path / "traces"))
    show.output_format = "json"
    trace_run(show)
    shown = json.loads(capsys.readouterr().out)
    assert shown["damage"] == damage and shown["verify"] == verdict
    rc, _, err = run(wf, resume=str(journal), fmt="text")
    if resumes:
        assert rc == 0 and "cut off after its effect was admitted" in err, err
    else:
        assert rc == 2 and ("empty" if damage == "empty" else "fails verification") in err, err
