"""`nika run --resume TRACE` (ADR-099): the content-addressed skip, `task.cache_hit`, `--from`, the
per-iteration `for_each` resume and the refusals (another workflow, a tampered trace, an unknown task,
a trace another resume holds)."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest
from durable_helpers import cache_hits, kinds, run

from runtime.journal.write import verify

# `c` fails until the file `ok` exists: the "fix the world, resume" case. Every exec appends to a log,
# so a test can see which effect ran how many times.
WF = """\
nika: v1
workflow: { id: resume-demo }
model: mock/echo
inputs:
  topic: { type: string, default: "owls" }
  other: { type: string, default: "cats" }
permits: { exec: ["sh"] }
tasks:
  a:
    infer: { prompt: "facts about ${{ inputs.topic }}" }
  b:
    exec: { command: ["sh", "-c", "echo b >> ran.log; echo $0", "${{ inputs.other }}"] }
  c:
    with: { x: "${{ tasks.a.output }}" }
    exec: { command: ["sh", "-c", "echo c >> ran.log; test -f ok && echo done-$0", "${{ with.x }}"] }
outputs:
  result: "${{ tasks.c.output }}"
  side: "${{ tasks.b.output }}"
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


def test_a_resume_after_a_failure_cache_hits_the_successful_tasks_and_reruns_the_failed_one(wf, tmp_path):
    code, first, _ = run(wf)
    assert code == 1 and first["tasks"]["c"]["status"] == "failure"
    done = kinds(first["trace"], "task_completed")
    assert {f["task"] for f in done} == {"a", "b"}
    assert all(f["input_hash"].startswith("sha256:") and f["definition_hash"].startswith("sha256:") for f in done)
    (tmp_path / "ok").touch()
    code, _, err = run(wf, resume=first["trace"], fmt="text")
    assert code == 0
    assert "cache hit a" in err and "cache hit b" in err and "… c started" in err
    assert ran(tmp_path) == ["b", "c", "c"]  # b's effect did not run again
    new_trace = err.split("trace: ")[-1].strip()
    hits = kinds(new_trace, "task_cache_hit")
    assert {h["task"] for h in hits} == {"a", "b"}
    assert all(h["cached_from"]["trace"] == Path(first["trace"]).name for h in hits)


def test_a_changed_input_reruns_only_what_it_flows_into(wf, tmp_path):
    (tmp_path / "ok").touch()
    _, first, _ = run(wf)
    code, second, _ = run(wf, resume=first["trace"], var_pairs=["topic=bats"])
    assert code == 0 and second["outputs"]["result"] == "done-facts about bats"
    assert cache_hits(second) == {"b"}  # the untouched sibling still skips; a and c (fed by a) re-run
    assert second["events"] and any(e["type"] == "task.cache_hit" and e["task"] == "b" for e in second["events"])


def test_an_edited_task_reruns_and_the_change_is_said(wf, tmp_path):
    (tmp_path / "ok").touch()
    _, first, _ = run(wf)
    wf.write_text(WF.replace("facts about ${{ inputs.topic }}", "two facts about ${{ inputs.topic }}"))
    code, _, err = run(wf, resume=first["trace"], fmt="text")
    assert code == 0 and "the workflow file changed since this trace; edited: `a` (they re-run)" in err
    assert "cache hit b" in err and "cache hit a" not in err and "cache hit c" not in err


def test_from_forces_a_task_and_its_dependents(wf, tmp_path):
    (tmp_path / "ok").touch()
    _, first, _ = run(wf)
    _, second, _ = run(wf, resume=first["trace"], from_task="a")
    assert cache_hits(second) == {"b"}
    code, _, err = run(wf, resume=second["trace"], from_task="nope")
    assert code == 2 and "--from `nope`" in err and "no such task" in err


def test_a_resume_of_a_resume_still_cache_hits(wf, tmp_path):
    (tmp_path / "ok").touch()
    _, first, _ = run(wf)
    _, second, _ = run(wf, resume=first["trace"])
    _, third, _ = run(wf, resume=second["trace"])
    assert cache_hits(third) == {"a", "b", "c"} and third["outputs"] == first["outputs"]
    assert ran(tmp_path) == ["b", "c"]


def test_another_workflows_trace_is_refused(wf, tmp_path):
    (tmp_path / "ok").touch()
    _, first, _ = run(wf)
    other = tmp_path / "other.nika.yaml"
    other.write_text(WF.replace("id: resume-demo", "id: something-else"))
    code, rep, err = run(other, resume=first["trace"])
    assert code == 2 and rep["workflow_state"] == "refused"
    assert "run of workflow `resume-demo`, not `something-else`" in err


def test_a_tampered_trace_is_refused_and_a_truncated_one_resumes(wf, tmp_path):
    _, first, _ = run(wf)
    data = Path(first["trace"]).read_bytes()
    forged = tmp_path / "forged.ndjson"
    forged.write_bytes(data.replace(b"facts about owls", b"facts about cows"))
    code, _, err = run(wf, resume=str(forged))
    assert code == 2 and "fails verification" in err and "tampered" in err
    lines = data.splitlines(keepends=True)
    cut = tmp_path / "cut.ndjson"
    cut.write_bytes(b"".join(lines[:-3]) + lines[-3][:17])  # killed mid-write: a torn last line
    assert verify(b"".join(lines[:-3]))["verdict"] == "finding"  # truncated, not forged
    (tmp_path / "ok").touch()
    code, rep, _ = run(wf, resume=str(cut))
    assert code == 0 and "a" in cache_hits(rep)


def test_two_resumes_of_one_trace_cannot_run_at_once(wf, tmp_path):
    _, first, _ = run(wf)
    with open(first["trace"], "rb") as held:  # what a running resume holds
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, _, err = run(wf, resume=first["trace"])
    assert code == 2 and "another `nika run --resume` of this trace is running" in err
    code, _, _ = run(wf, resume=first["trace"])  # released: it resumes
    assert code == 1


def test_secrets_hash_by_reference_never_by_value(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "s.nika.yaml"
    p.write_text(
        "nika: v1\nworkflow: { id: s }\nsecrets:\n  tok: { source: env, key: TOKEN_X, egress: [{ to: exec }] }\n"
        'permits: { exec: ["sh"] }\ntasks:\n  t:\n'
        '    exec: { command: ["sh", "-c", "echo t >> ran.log; echo ${{ secrets.tok }} | wc -c"] }\n'
    )
    monkeypatch.setenv("TOKEN_X", "hunter2")
    code, first, _ = run(p)
    assert code == 0, first
    text = Path(first["trace"]).read_text()
    assert "hunter2" not in text
    monkeypatch.setenv("TOKEN_X", "rotated-secret")  # the stated limit: a rotation does not invalidate
    _, second, _ = run(p, resume=first["trace"])
    assert cache_hits(second) == {"t"}
    _, third, _ = run(p, resume=second["trace"], from_task="t")  # the lever for it
    assert cache_hits(third) == set() and ran(tmp_path) == ["t", "t"]


FAN = """\
nika: v1
workflow: { id: fan }
inputs:
  items: { type: { array: integer }, default: [1, 2, 3] }
permits: { exec: ["sh"] }
tasks:
  each:
    for_each: "${{ inputs.items }}"
    fail_fast: false
    exec:
      command: ["sh", "-c", "echo $0 >> ran.log; (test $0 != 3 || test -f ok) && echo v$0", "${{ item }}"]
outputs:
  all: "${{ tasks.each.output }}"
"""


def test_a_partial_fan_out_resumes_at_the_iteration(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "fan.nika.yaml"
    p.write_text(FAN)
    code, first, _ = run(p)
    assert code == 1
    settled = {f["index"]: f for f in kinds(first["trace"], "checkpoint_written") if "index" in f}
    assert {i: f["status"] for i, f in settled.items()} == {0: "success", 1: "success", 2: "failure"}
    assert sorted(i for i, f in settled.items() if "iteration_hash" in f) == [0, 1]  # what a resume skips by
    (tmp_path / "ok").touch()
    code, _, err = run(p, resume=first["trace"], fmt="text")
    assert code == 0 and "cache hit each[0]" in err and "cache hit each[1]" in err
    assert sorted(ran(tmp_path)) == ["1", "2", "3", "3"]  # only the failed iteration ran again


def test_an_output_that_carries_a_secret_is_rerun_never_rehydrated_masked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOKEN_Y", "s3cr3t-value")
    p = tmp_path / "leak.nika.yaml"
    p.write_text(
        "nika: v1\nworkflow: { id: leak }\nsecrets:\n  tok: { source: env, key: TOKEN_Y, egress: [{ to: exec }] }\n"
        'permits: { exec: ["sh"] }\ntasks:\n  t:\n'
        '    exec: { command: ["sh", "-c", "echo t >> ran.log; echo ${{ secrets.tok }}"] }\n'
        '  u:\n    exec: { command: ["sh", "-c", "echo u >> ran.log; echo plain"] }\n'
    )
    _, first, _ = run(p)
    (done_t,) = [f for f in kinds(first["trace"], "task_completed") if f["task"] == "t"]
    assert "input_hash" not in done_t and "s3cr3t" not in Path(first["trace"]).read_text()
    _, second, _ = run(p, resume=first["trace"])
    assert cache_hits(second) == {"u"} and sorted(ran(tmp_path)) == ["t", "t", "u"]
