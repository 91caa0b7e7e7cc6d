"""`nika run FILE --resume TRACE --task ID [--with-dependents]` (runtime/durable/selection.py): the named
tasks run, their ancestors are reused from the journal's matching records or run when they have none,
everything else is not scheduled, and a gate is asked again, never reused."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from durable_helpers import kinds

from nika.commands.run import run_command
from nika.commands.run_durable import Durable

# every exec appends its id to ran.log: the exact set of effects a run performed
WF = """\
nika: v1
workflow: { id: task-run }
permits: { exec: ["sh"], tools: ["nika:prompt"] }
tasks:
  a:
    exec: { command: ["sh", "-c", "echo a >> ran.log; echo A"] }
  b:
    with: { x: "${{ tasks.a.output }}" }
    exec: { command: ["sh", "-c", "echo b >> ran.log; echo B-$0", "${{ with.x }}"] }
  c:
    with: { y: "${{ tasks.b.output }}" }
    exec: { command: ["sh", "-c", "echo c >> ran.log; echo C-$0", "${{ with.y }}"] }
  side:
    exec: { command: ["sh", "-c", "echo side >> ran.log; echo S"] }
outputs:
  c: "${{ tasks.c.output }}"
"""


@pytest.fixture
def wf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "wf.nika.yaml"
    p.write_text(WF)
    return p


def run(path: Path, **durable) -> tuple[int, dict, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_command(
        str(path),
        output_format="json",
        trace_dir=str(path.parent / "traces"),
        durable=Durable(**durable),
        out=out,
        err=err,
    )
    text = out.getvalue()
    return code, json.loads(text) if text.strip() else {}, err.getvalue()


def ran(root: Path) -> list[str]:
    log = root / "ran.log"
    out = log.read_text().split() if log.exists() else []
    log.unlink(missing_ok=True)
    return out


def test_a_task_run_reuses_recorded_ancestors_and_runs_only_the_named_task(wf, tmp_path):
    code, first, _ = run(wf)
    assert code == 0 and sorted(ran(tmp_path)) == ["a", "b", "c", "side"]
    code, rep, _ = run(wf, resume=first["trace"], tasks=["b"])
    assert code == 0, rep
    assert ran(tmp_path) == ["b"]  # a is reused, c and side are not part of the run
    assert rep["outputs"] == {"b": "B-A"}
    assert rep["tasks"]["a"]["cache_hit"] is True
    assert set(rep["tasks"]) == {"a", "b"}  # c and side are not part of the run
    assert {f["task"] for f in kinds(rep["trace"], "task_scheduled")} == {"a", "b"}


def test_an_ancestor_without_a_matching_record_runs(wf, tmp_path):
    code, first, _ = run(wf)
    ran(tmp_path)
    wf.write_text(WF.replace("echo A", "echo A2"))  # a's record no longer matches its definition
    code, rep, _ = run(wf, resume=first["trace"], tasks=["c"])
    assert code == 0 and ran(tmp_path) == ["a", "b", "c"]  # b's inputs changed with a's output
    assert rep["outputs"] == {"c": "C-B-A2"}


def test_with_dependents_runs_what_depends_on_the_named_task(wf, tmp_path):
    _, first, _ = run(wf)
    ran(tmp_path)
    code, rep, _ = run(wf, resume=first["trace"], tasks=["b"], with_dependents=True)
    assert code == 0 and ran(tmp_path) == ["b", "c"]
    assert set(rep["outputs"]) == {"b"}


GATED = WF.replace(
    """  c:
    with""",
    """  ok:
    after: { b: success }
    invoke: { tool: "nika:prompt", args: { message: "Go?", mode: confirm } }
  c:
    after: { ok: success }
    with""",
)


def test_a_gate_is_never_reused_and_a_task_run_nobody_can_answer_is_refused_before_any_effect(wf, tmp_path):
    wf.write_text(GATED)
    code, first, _ = run(wf)
    assert code == 4  # paused on the prompt: nobody at a terminal
    ran(tmp_path)
    code, _, err = run(wf, resume=first["trace"], tasks=["c"])
    assert code == 2 and "`ok` asks a person" in err and "not a terminal" in err
    assert ran(tmp_path) == []
    code, _, _ = run(wf, resume=first["trace"], tasks=["side"])  # no gate above `side`: it runs
    assert code == 0 and ran(tmp_path) == ["side"]


def test_task_refusals_say_why(wf, tmp_path):
    _, first, _ = run(wf)
    code, _, err = run(wf, tasks=["b"])
    assert code == 2 and "--task needs --resume TRACE" in err and "not built yet" in err
    code, _, err = run(wf, resume=first["trace"], tasks=["nope"])
    assert code == 2 and "--task `nope`: the workflow has no such task" in err
    code, _, err = run(wf, resume=first["trace"], tasks=["b"], from_task="a")
    assert code == 2 and "do not combine" in err
    code, _, err = run(wf, resume=first["trace"], with_dependents=True)
    assert code == 2 and "--with-dependents needs --task" in err


FAN = """\
nika: v1
workflow: { id: fan-run }
permits: { exec: ["sh"] }
tasks:
  each:
    for_each: ["x", "y", "z"]
    exec: { command: ["sh", "-c", "echo ${{ item }} >> ran.log; echo got-${{ item }}"] }
  joined:
    with: { all: "${{ tasks.each.output }}" }
    exec: { command: ["sh", "-c", "echo joined >> ran.log; echo $0", "${{ size(with.all) }}"] }
"""


def test_item_re_runs_one_iteration_and_reuses_the_others(wf, tmp_path):
    wf.write_text(FAN)
    _, first, _ = run(wf)
    assert sorted(ran(tmp_path)) == ["joined", "x", "y", "z"]
    code, rep, _ = run(wf, resume=first["trace"], tasks=["each"], item=1)
    assert code == 0 and ran(tmp_path) == ["y"]
    assert rep["outputs"] == {"each": ["got-x", "got-y", "got-z"]}
    hits = [f["index"] for f in kinds(rep["trace"], "task_cache_hit") if f.get("index") is not None]
    assert sorted(hits) == [0, 2]
    code, _, err = run(wf, resume=first["trace"], tasks=["joined"], item=0)
    assert code == 2 and "--item N needs one --task naming a `for_each:` task" in err
