"""A durable pause inside a child workflow (`invoke: { workflow: … }`): the calling task pauses too, the
caller's run ends `paused` with the child's prompts addressed `TASK/CHILD_TASK`, and
`--resume CALLER_TRACE --answer TASK/CHILD_TASK=VALUE` resumes the child from its own journal, its
gate judging the answer's ticket as at top level (content, scope, TTL)."""

from __future__ import annotations

from pathlib import Path

import pytest
from durable_helpers import cache_hits, kinds, run

from runtime.durable import gate as gate_mod
from runtime.journal.write import verify

CHILD = """\
nika: v1
workflow: { id: kid }
inputs:
  what: { type: string, default: "x" }
permits: { exec: ["sh"], tools: ["nika:prompt"] }
tasks:
  prep:
    exec: { command: ["sh", "-c", "echo prep-$0 >> ran.log; echo prepped", "${{ inputs.what }}"] }
  ok:
    after: { prep: success }
    invoke: { tool: "nika:prompt", args: { message: "Ship ${{ inputs.what }}?", mode: confirm } }
  ship:
    with: { ok: "${{ tasks.ok.output }}" }
    when: "${{ with.ok == true }}"
    exec: { command: ["sh", "-c", "echo ship-$0 >> ran.log; echo shipped-$0", "${{ inputs.what }}"] }
outputs:
  shipped: "${{ tasks.ship.output }}"
"""

PARENT = """\
nika: v1
workflow: { id: parent }
inputs:
  version: { type: string, default: "v2" }
permits: { exec: ["sh"], tools: ["nika:prompt"] }
tasks:
  call:
    invoke: { workflow: "./child.nika.yaml", args: { what: "${{ inputs.version }}" } }
  after:
    with: { got: "${{ tasks.call.output.shipped }}" }
    exec: { command: ["sh", "-c", "echo after >> ran.log; echo done"] }
outputs:
  got: "${{ tasks.call.output.shipped }}"
"""


@pytest.fixture
def parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "child.nika.yaml").write_text(CHILD)
    p = tmp_path / "parent.nika.yaml"
    p.write_text(PARENT)
    return p


def _log(tmp_path: Path) -> list[str]:
    log = tmp_path / "ran.log"
    return log.read_text().split() if log.exists() else []


def test_a_child_pause_pauses_its_caller_and_an_answer_resumes_both(parent, tmp_path):
    code, first, _ = run(parent)
    assert code == 4 and first["workflow_state"] == "paused"
    assert first["tasks"]["call"]["status"] == "pending" and first["tasks"]["after"]["status"] == "pending"
    (entry,) = first["paused"]
    assert entry["task"] == "call/ok" and entry["message"] == "Ship v2?" and entry["mode"] == "confirm"
    child = entry["child"]
    assert child["task"] == "call" and child["step"] == "ok" and entry["journals"] == [child["trace"]]
    (child_paused,) = kinds(child["trace"], "workflow_paused")
    assert child_paused["task"] == "ok"  # the child's own journal waits on its own step
    (parent_paused,) = kinds(first["trace"], "workflow_paused")
    assert parent_paused["task"] == "call/ok"  # what `nika trace replay` (and the VS Code approve) reads
    assert entry["ticket"]["step"] == "ok" and entry["ticket"]["shown_hash"] == entry["shown_hash"]
    assert _log(tmp_path) == ["prep-v2"]

    code, done, _ = run(parent, resume=first["trace"], answers=["call/ok=true"])
    assert code == 0 and done["outputs"] == {"got": "shipped-v2"}
    assert _log(tmp_path) == ["prep-v2", "ship-v2", "after"]  # the child's `prep` was a cache hit
    (invoked,) = kinds(done["trace"], "tool_invoked")
    resumed_child = invoked["trace"]
    assert kinds(resumed_child, "task_cache_hit")[0]["task"] == "prep"
    (decided,) = kinds(resumed_child, "approval_decided")
    assert decided["decision"] == "allow" and decided["ticket"] == entry["ticket"]["digest"]
    (mirrored,) = kinds(done["trace"], "approval_decided")  # the caller's journal and receipt carry it too
    assert mirrored["task"] == "call/ok" and mirrored["ticket"] == decided["ticket"]
    assert mirrored["journal"] == resumed_child and mirrored["scope"] == decided["scope"]
    from runtime.journal.read import read_run
    from runtime.journal.receipt import receipt

    (approval,) = receipt(read_run(Path(done["trace"])), parent)["approvals"]
    assert approval["task"] == "call/ok" and approval["ticket"] == entry["ticket"]["digest"]
    for trace in (done["trace"], resumed_child):
        assert verify(Path(trace).read_bytes())["verdict"] == "clean"
    _fit_the_event_schema(first["events"] + done["events"])


def _fit_the_event_schema(events: list[dict]) -> None:
    import json

    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[3] / "docs" / "events.schema.json").read_text())
    for e in events:
        jsonschema.validate(e, schema)


def test_a_traces_folder_moved_as_one_still_resumes_the_child(parent, tmp_path):
    import shutil

    _, first, _ = run(parent)
    shutil.move(tmp_path / "traces", tmp_path / "moved")
    moved = tmp_path / "moved" / Path(first["trace"]).name
    code, done, _ = run(parent, resume=str(moved), answers=["call/ok=true"])
    assert code == 0 and done["outputs"] == {"got": "shipped-v2"} and _log(tmp_path) == ["prep-v2", "ship-v2", "after"]


def test_resumed_without_an_answer_both_pause_again_on_the_same_ticket(parent, tmp_path):
    _, first, _ = run(parent)
    code, second, _ = run(parent, resume=first["trace"])
    assert code == 4 and second["paused"][0]["task"] == "call/ok"
    t1, t2 = first["paused"][0]["ticket"], second["paused"][0]["ticket"]
    assert t2["issued_at"] == t1["issued_at"] and t2["shown_hash"] == t1["shown_hash"]
    assert second["paused"][0]["child"]["trace"] != first["paused"][0]["child"]["trace"]  # a new child journal
    assert _log(tmp_path) == ["prep-v2"]
    code, done, _ = run(parent, resume=second["trace"], answers=["call/ok=false"])  # a deny: `ship` skipped
    assert code == 0 and _log(tmp_path) == ["prep-v2", "after"] and done["tasks"]["call"]["output"] == {"shipped": None}


def test_an_answer_to_a_path_that_did_not_pause_is_one_line_listing_the_paused_paths(parent):
    _, first, _ = run(parent)
    for wrong in ("ok=true", "call/prep=true", "call=true"):
        code, _, err = run(parent, resume=first["trace"], answers=[wrong])
        path = wrong.split("=")[0]
        assert code == 2 and err.count("\n") == 1, err
        assert f"no paused prompt for `{path}` (paused: call/ok)" in err


def test_an_answer_for_content_that_changed_halts_as_at_top_level(parent, tmp_path):
    _, first, _ = run(parent)
    code, rep, _ = run(parent, resume=first["trace"], answers=["call/ok=true"], var_pairs=["version=v3"])
    err = rep["tasks"]["call"]["error"]
    assert code == 1 and err["code"] == "NIKA-SEC-010" and "approval.content_mismatch" in err["message"]
    assert "ship-v3" not in _log(tmp_path) and "after" not in _log(tmp_path)


def test_an_expired_child_ticket_is_never_inherited(parent, tmp_path, monkeypatch):
    _, first, _ = run(parent)
    issued = first["paused"][0]["ticket"]["issued_at"]
    monkeypatch.setattr(gate_mod, "now", lambda: issued + gate_mod.TICKET_TTL_S + 1)
    code, rep, _ = run(parent, resume=first["trace"], answers=["call/ok=true"])
    assert code == 4 and rep["paused"][0]["ticket"]["issued_at"] > issued  # asked again, with a new ticket
    assert not kinds(rep["paused"][0]["child"]["trace"], "approval_decided")
    assert "ship-v2" not in _log(tmp_path)


def test_the_child_journal_is_not_resumed_on_its_own(parent, tmp_path):
    _, first, _ = run(parent)
    code, _, err = run(tmp_path / "child.nika.yaml", resume=first["paused"][0]["child"]["trace"], answers=["ok=true"])
    assert code == 2 and "a child workflow's run paused on a prompt" in err and "CALLER_TASK/ok=VALUE" in err
    assert _log(tmp_path) == ["prep-v2"]


def test_two_levels_down_the_path_grows_and_the_resume_recurses(parent, tmp_path):
    top = tmp_path / "top.nika.yaml"
    top.write_text(
        'nika: v1\nworkflow: { id: top }\npermits: { exec: ["sh"], tools: ["nika:prompt"] }\ntasks:\n'
        '  outer:\n    invoke: { workflow: "./parent.nika.yaml", args: { version: "v9" } }\n'
    )
    code, first, _ = run(top)
    (entry,) = first["paused"]
    assert code == 4 and entry["task"] == "outer/call/ok" and len(entry["journals"]) == 2
    assert entry["child"]["step"] == "call/ok"
    code, done, _ = run(top, resume=first["trace"], answers=["outer/call/ok=true"])
    assert code == 0 and done["tasks"]["outer"]["output"] == {"got": "shipped-v9"}
    assert [d["task"] for d in kinds(done["trace"], "approval_decided")] == ["outer/call/ok"]  # once per level
    assert _log(tmp_path) == ["prep-v9", "ship-v9", "after"]


def test_a_child_pause_inside_for_each_resumes_each_iteration_from_its_own_journal(parent, tmp_path):
    fan = tmp_path / "fan.nika.yaml"
    fan.write_text(
        'nika: v1\nworkflow: { id: fan }\npermits: { exec: ["sh"], tools: ["nika:prompt"] }\ntasks:\n'
        '  call:\n    for_each: ["a", "b"]\n'
        '    invoke: { workflow: "./child.nika.yaml", args: { what: "${{ item }}" } }\n'
    )
    code, first, _ = run(fan)
    assert code == 4 and sorted(p["message"] for p in first["paused"]) == ["Ship a?", "Ship b?"]
    assert {p["task"] for p in first["paused"]} == {"call/ok"}
    assert sorted(p["child"]["where"]["index"] for p in first["paused"]) == [0, 1]
    code, done, _ = run(fan, resume=first["trace"], answers=["call/ok=true"])
    assert code == 0 and [o["shipped"] for o in done["tasks"]["call"]["output"]] == ["shipped-a", "shipped-b"]
    assert sorted(_log(tmp_path)) == ["prep-a", "prep-b", "ship-a", "ship-b"]  # each `prep` ran once
    assert cache_hits(done) == set()
    from runtime.durable.resume_index import open_resume
    from runtime.engine.inputs import compile_file

    compiled, _ = compile_file(str(fan))
    index = open_resume(done["trace"], compiled)  # the children's decisions count against this run's budget
    assert index.approvals_used == 2
    index.release()


def test_an_on_finally_step_whose_child_pauses_fails_that_step_and_says_why(parent, tmp_path):
    fin = tmp_path / "fin.nika.yaml"
    fin.write_text(
        'nika: v1\nworkflow: { id: fin }\npermits: { exec: ["sh"], tools: ["nika:prompt"] }\ntasks:\n'
        '  work:\n    exec: { command: ["sh", "-c", "echo hi"] }\n'
        '    on_finally:\n      - invoke: { workflow: "./child.nika.yaml" }\n'
    )
    code, rep, _ = run(fin)
    assert code == 0 and rep["tasks"]["work"]["status"] == "success" and not rep.get("paused")
    (step,) = [e for e in rep["events"] if e["type"] == "verb.invoked" and e.get("phase") == "on_finally"]
    assert step["status"] == "failure" and step["error_code"] == "NIKA-BUILTIN-PROMPT-001"


def test_trace_ls_and_replay_offer_the_callers_journal_not_the_childs(parent, tmp_path, capsys):
    """What the VS Code "Approve Paused Run" reads: `trace ls` (which runs wait) and `trace replay`."""
    import json

    from nika.cli import main

    _, first, _ = run(parent)
    capsys.readouterr()
    assert main(["trace", "ls", "--trace-dir", str(tmp_path / "traces"), "--output-format", "json"]) == 0
    waiting = {r["workflow"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    assert waiting["parent"]["resume_candidate"] and waiting["parent"]["paused_task"] == "call/ok"
    assert waiting["kid"]["state"] == "paused" and not waiting["kid"]["resume_candidate"]
    assert main(["trace", "replay", first["trace"], "--output-format", "json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]
    (paused,) = [e for e in lines if e["type"] == "workflow.paused"]
    assert paused["task"] == "call/ok" and paused["mode"] == "confirm" and paused["message"] == "Ship v2?"


def test_children_do_not_multiply_the_approvals_a_run_may_mint(parent, tmp_path):
    fan = tmp_path / "fan6.nika.yaml"
    fan.write_text(
        'nika: v1\nworkflow: { id: fan6 }\npermits: { exec: ["sh"], tools: ["nika:prompt"] }\ntasks:\n'
        '  call:\n    for_each: ["a", "b", "c", "d", "e", "f"]\n    max_parallel: 1\n'
        '    invoke: { workflow: "./child.nika.yaml", args: { what: "${{ item }}" } }\n'
    )
    code, first, _ = run(fan)
    assert code == 4 and len(first["paused"]) == gate_mod.APPROVALS_PER_RUN  # the sixth child's ticket: a halt
    failed = [e for e in first["events"] if e["type"] == "tool.invoked" and e["state"] == "failure"]
    assert len(failed) == 1
    (halted,) = [t for t in kinds(failed[0]["trace"], "task_failed") if t["task"] == "ok"]
    assert halted["error_code"] == "NIKA-SEC-010" and "approval.rate_limited" in halted["message"]
    assert "the run that called this workflow already used its 5" in halted["message"]


def test_on_a_terminal_a_childs_prompt_is_asked_and_counts_against_the_caller(parent, tmp_path):
    from rt_helpers import run_yaml

    asked: list[str] = []
    fan = (
        'nika: v1\nworkflow: { id: ask6 }\npermits: { exec: ["sh"], tools: ["nika:prompt"] }\ntasks:\n'
        '  call:\n    for_each: ["a", "b", "c", "d", "e", "f"]\n    max_parallel: 1\n'
        '    invoke: { workflow: "./child.nika.yaml", args: { what: "${{ item }}" } }\n'
    )
    res = run_yaml(fan, tmp_path, interactive=True, prompter=lambda r: asked.append(r["message"]) or True)
    assert asked == [f"Ship {c}?" for c in "abcde"] and not res.paused
    err = res.tasks["call"].error
    assert err is not None and err["code"] == "NIKA-SEC-010" and err["details"]["failed_index"] == 5


def test_without_a_journal_a_childs_pause_fails_its_caller_and_says_why(parent, tmp_path):
    import asyncio

    from runtime.engine.inputs import bind_inputs, compile_file
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    compiled, _ = compile_file(str(parent))
    assert compiled is not None and compiled.workflow is not None
    res = asyncio.run(Run(compiled, bind_inputs(compiled.workflow, {}), Options(trace_dir=None), verbs=VERBS).execute())
    err = res.tasks["call"].error
    assert res.workflow_state == "failure" and err is not None and err["code"] == "NIKA-BUILTIN-PROMPT-001"
    assert "paused on the prompt of task `ok` and the child kept no journal to resume it from" in err["message"]
