"""The durable human gate (ADR-099 rider) and its NEP-0013 tickets: a default-less prompt pauses the run
(exit 4), `--resume --answer` re-arms it, resumed without an answer it pauses again; content binding,
scope, TTL, the per-run rate limit, dedup and the `approval_decided` attestation."""

from __future__ import annotations

from pathlib import Path

import pytest
from durable_helpers import cache_hits, kinds, run
from rt_helpers import run_yaml

from runtime.durable import gate as gate_mod
from runtime.durable.resume_index import ResumeIndex
from runtime.journal.write import verify

GATED = """\
nika: v1
workflow: { id: gate-demo }
model: mock/echo
inputs:
  version: { type: string, default: "v2" }
permits: { exec: ["sh"], tools: ["nika:prompt"] }
tasks:
  draft:
    infer: { prompt: "notes for ${{ inputs.version }}" }
  approve:
    with: { notes: "${{ tasks.draft.output }}" }
    invoke:
      tool: "nika:prompt"
      args: { message: "Publish? ${{ with.notes }}", mode: confirm }
  publish:
    with: { ok: "${{ tasks.approve.output }}" }
    when: "${{ with.ok == true }}"
    exec: { command: ["sh", "-c", "echo published >> ran.log; echo published"] }
outputs:
  published: "${{ tasks.publish.output }}"
"""


@pytest.fixture
def wf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "gate.nika.yaml"
    p.write_text(GATED)
    return p


def test_a_defaultless_prompt_without_a_tty_pauses_durably(wf, tmp_path):
    code, rep, _ = run(wf)
    assert code == 4 and rep["workflow_state"] == "paused"
    assert rep["tasks"]["draft"]["status"] == "success" and rep["tasks"]["publish"]["status"] == "pending"
    assert verify(Path(rep["trace"]).read_bytes())["verdict"] == "clean"  # the pause is a terminal frame
    (paused,) = kinds(rep["trace"], "workflow_paused")
    assert paused["task"] == "approve" and paused["mode"] == "confirm" and paused["message"] == "Publish? notes for v2"
    (prompt,) = rep["paused"]
    ticket = prompt["ticket"]
    assert ticket["step"] == "approve" and ticket["shown_hash"] == prompt["shown_hash"]
    assert ticket["ttl_s"] == gate_mod.TICKET_TTL_S and ticket["digest"].startswith("sha256:")
    assert not (tmp_path / "ran.log").exists()


def test_resumed_without_an_answer_it_pauses_again_and_with_one_it_finishes(wf, tmp_path):
    _, first, _ = run(wf)
    code, second, _ = run(wf, resume=first["trace"])
    assert code == 4 and cache_hits(second) == {"draft"}  # idempotent: pauses again, nothing re-spent
    t1, t2 = first["paused"][0]["ticket"], second["paused"][0]["ticket"]
    assert t2["issued_at"] == t1["issued_at"] and t2["shown_hash"] == t1["shown_hash"]  # the TTL is not extended
    code, _, err = run(wf, resume=second["trace"], answers=["approve=true"], fmt="text")
    assert code == 0 and "approval approve: allow (answer)" in err and "cache hit draft" in err
    assert (tmp_path / "ran.log").read_text() == "published\n"
    trace = err.split("trace: ")[-1].strip()
    (decided,) = kinds(trace, "approval_decided")
    assert decided["decision"] == "allow" and decided["ticket"] == t2["digest"] and decided["ttl_remaining_s"] > 0
    assert verify(Path(trace).read_bytes())["verdict"] == "clean"


def test_a_false_confirm_is_a_deny_and_the_gated_task_does_not_run(wf, tmp_path):
    _, first, _ = run(wf)
    code, rep, _ = run(wf, resume=first["trace"], answers=["approve=false"])
    assert code == 0 and rep["tasks"]["publish"]["status"] == "skipped"
    assert [d["decision"] for d in kinds(rep["trace"], "approval_decided")] == ["deny"]


def test_bad_answers_are_refused(wf, tmp_path):
    _, first, _ = run(wf)
    code, _, err = run(wf, resume=first["trace"], answers=["draft=yes"])
    assert code == 2 and "no paused prompt for `draft`" in err
    code, _, err = run(wf, answers=["approve=true"])
    assert code == 2 and "need --resume" in err
    # a string for a confirm: refused up front, exit 2, naming what the prompt takes (issue 38), nothing run
    code, rep, err = run(wf, resume=first["trace"], answers=["approve=maybe"])
    assert code == 2 and rep["workflow_state"] == "refused"
    assert "takes true or false" in err and "must be a boolean" in err
    code, _, err = run(wf, resume=first["trace"], answers=["approve=yes"])
    assert code == 2 and '--answer approve="yes": `approve` is a confirm prompt, which takes true or false' in err
    assert not (tmp_path / "ran.log").exists()


def test_an_answer_for_content_that_changed_halts(wf, tmp_path):
    _, first, _ = run(wf)
    code, rep, _ = run(wf, resume=first["trace"], answers=["approve=true"], var_pairs=["version=v3"])
    err = rep["tasks"]["approve"]["error"]
    assert code == 1 and err["code"] == "NIKA-SEC-010" and "approval.content_mismatch" in err["message"]
    assert not (tmp_path / "ran.log").exists()


def test_an_expired_ticket_is_never_inherited(wf, tmp_path, monkeypatch):
    _, first, _ = run(wf)
    issued = first["paused"][0]["ticket"]["issued_at"]
    monkeypatch.setattr(gate_mod, "now", lambda: issued + gate_mod.TICKET_TTL_S + 1)
    code, rep, _ = run(wf, resume=first["trace"], answers=["approve=true"])
    assert code == 4 and rep["paused"][0]["ticket"]["issued_at"] > issued  # re-prompted with a new ticket
    assert not kinds(rep["trace"], "approval_decided")


def _prompts(n: int, same: bool = False) -> str:
    tasks = ""
    for i in range(n):
        after = f"    after: {{ p{i - 1}: success }}\n" if i else ""
        msg = "Go?" if same else f"Go {i}?"
        tasks += f'  p{i}:\n{after}    invoke: {{ tool: "nika:prompt", args: {{ message: "{msg}", mode: confirm }} }}\n'
    return f'nika: v1\nworkflow: {{ id: many }}\npermits: {{ tools: ["nika:prompt"] }}\ntasks:\n{tasks}'


def test_the_sixth_approval_of_a_run_halts(tmp_path):
    asked: list[str] = []
    res = run_yaml(_prompts(6), tmp_path, interactive=True, prompter=lambda r: asked.append(r["message"]) or True)
    assert [res.tasks[f"p{i}"].status for i in range(5)] == ["success"] * 5
    err = res.tasks["p5"].error
    assert err is not None and err["code"] == "NIKA-SEC-010" and "approval.rate_limited" in err["message"]
    assert len(asked) == gate_mod.APPROVALS_PER_RUN  # never queued, never asked
    decided = [e for e in res.events if e["type"] == "approval.decided"]
    assert len(decided) == 5 and all(e["answered_by"] == "human" for e in decided)


def test_identical_prompts_ride_one_ticket(tmp_path):
    asked: list[str] = []
    res = run_yaml(_prompts(3, same=True), tmp_path, interactive=True, prompter=lambda r: asked.append(1) or True)
    assert res.workflow_state == "success" and len(asked) == 1
    decided = [e for e in res.events if e["type"] == "approval.decided"]
    assert [e["decision"] for e in decided] == ["allow", "dedup", "dedup"]
    assert len({e["ticket"] for e in decided}) == 1


def test_a_ticket_minted_for_another_run_is_refused(tmp_path):
    index = ResumeIndex(tmp_path / "t.ndjson", run_nonce="run-B")
    g = gate_mod.Gate(nonce="run-C", workflow="w", emit=lambda k, f: None, effects_after=lambda t: [], resume=index)
    request = {"message": "Go?", "mode": "confirm", "choices": None}
    h = gate_mod.sha256(g.shown("p", request))
    body = {"run": "run-A", "step": "p", "shown_hash": h, "issued_at": 0.0, "ttl_s": 10**12}
    index.paused["p"] = [{"task": "p", "shown_hash": h, "ticket": {**body, "digest": gate_mod.sha256(body)}}]
    g.answers = {"p": True}
    with pytest.raises(Exception) as info:
        import asyncio

        asyncio.run(g.resolve("p", request, lambda v: None))
    assert getattr(info.value, "code", None) == "NIKA-SEC-010" and "scope_mismatch" in str(info.value.message)


def test_the_decided_tickets_rise_to_the_receipt(wf, tmp_path):
    from runtime.journal.read import read_run
    from runtime.journal.receipt import receipt

    _, first, _ = run(wf)
    _, rep, _ = run(wf, resume=first["trace"], answers=["approve=true"])
    r = receipt(read_run(Path(rep["trace"])), wf)
    (a,) = r["approvals"]
    assert a["task"] == "approve" and a["decision"] == "allow" and a["ticket"] == first["paused"][0]["ticket"]["digest"]


def test_the_terminal_prompter_asks_each_mode(monkeypatch):
    import io

    import rich.prompt

    from nika.commands.run_durable import tty_prompter

    seen: list[str] = []
    monkeypatch.setattr(rich.prompt.Confirm, "ask", classmethod(lambda cls, m, **kw: seen.append(m) or True))
    monkeypatch.setattr(rich.prompt.Prompt, "ask", classmethod(lambda cls, m, **kw: kw.get("choices", ["typed"])[-1]))
    ask = tty_prompter(io.StringIO())
    assert ask({"task": "g", "mode": "confirm", "message": "Ship?"}) is True and "Ship?" in seen[0]
    assert ask({"task": "g", "mode": "choice", "message": "Pick", "choices": [1, 2]}) == 2  # the value, not its text
    assert ask({"task": "g", "mode": "input", "message": "Name"}) == "typed"


def test_pause_resume_and_approval_events_fit_the_event_schema(wf):
    import json

    import jsonschema

    schema = json.loads((Path(__file__).resolve().parents[3] / "docs" / "events.schema.json").read_text())
    _, first, _ = run(wf)
    _, second, _ = run(wf, resume=first["trace"], answers=["approve=true"])
    events = first["events"] + second["events"]
    types = {e["type"] for e in events}
    assert {"workflow.paused", "task.cache_hit", "approval.decided"} <= types
    assert any(e["type"] == "verb.invoked" and e.get("cost_usd") == 0.0 for e in events)  # mock: free, priced
    for e in events:
        jsonschema.validate(e, schema)


def test_a_fan_out_of_prompts_pauses_each_and_an_answer_binds_the_same_question_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "fan.nika.yaml"
    p.write_text(
        'nika: v1\nworkflow: { id: fan }\npermits: { tools: ["nika:prompt"] }\ntasks:\n  ask:\n'
        '    for_each: ["a", "a"]\n'
        '    invoke: { tool: "nika:prompt", args: { message: "Keep ${{ item }}?", mode: confirm } }\n'
    )
    code, first, _ = run(p)
    assert code == 4 and [q["message"] for q in first["paused"]] == ["Keep a?", "Keep a?"]
    code, rep, _ = run(p, resume=first["trace"], answers=["ask=true"])
    assert code == 0 and rep["outputs"] == {} and rep["tasks"]["ask"]["output"] == [True, True]
    decisions = sorted(d["decision"] for d in kinds(rep["trace"], "approval_decided"))
    assert decisions in (["allow", "allow"], ["allow", "dedup"])  # the same question rides one ticket once decided
