"""Tickets spent once (issue 38, item 2; NEP-0013 §2, §5): an answer claims its ticket atomically in
the trace folder; a second answer, in any process, is refused (exit 2) before any effect; an allow
may be revoked toward deny only before the gated action starts, a deny is final; an expired ticket
re-prompts; the ticket binds the gated action's compiled definition. And the plain function API a
server answers through (``runtime.durable.answers``), with its typed results."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from durable_helpers import kinds, run

from runtime.durable import gate as gate_mod
from runtime.durable import ticket as tickets
from runtime.durable.answers import answer, answer_journal
from runtime.durable.resume_index import read_history

GATED = """\
nika: v1
workflow: { id: gate-demo }
model: mock/echo
permits: { exec: ["sh"], tools: ["nika:prompt"] }
tasks:
  draft:
    infer: { prompt: "notes" }
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

# a second gate between the answer and the action: the run pauses again with the allow claimed and the
# gated action not started, which is the window in which a revocation may land (NEP-0013 §5)
TWO_GATES = GATED.replace(
    '  publish:\n    with: { ok: "${{ tasks.approve.output }}" }',
    "  again:\n    after: { approve: success }\n"
    '    invoke: { tool: "nika:prompt", args: { message: "Sure?", mode: confirm } }\n'
    '  publish:\n    after: { again: success }\n    with: { ok: "${{ tasks.approve.output }}" }',
)


@pytest.fixture
def wf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "gate.nika.yaml"
    p.write_text(GATED)
    return p


def published(tmp_path: Path) -> int:
    log = tmp_path / "ran.log"
    return log.read_text().count("published") if log.exists() else 0


def test_answering_twice_publishes_once(wf, tmp_path):
    """The HIGH finding: before, the second answer of the same paused trace published again."""
    _, first, _ = run(wf)
    code, _, _ = run(wf, resume=first["trace"], answers=["approve=true"])
    assert code == 0 and published(tmp_path) == 1
    code, rep, _ = run(wf, resume=first["trace"], answers=["approve=true"])
    assert code == 2 and rep["workflow_state"] == "refused" and published(tmp_path) == 1


def test_a_ticket_is_spent_once_in_any_process_and_a_resume_continues_under_its_answer(wf, tmp_path):
    """A server's answer (the API) spends the ticket; a later `--answer` is refused before any effect;
    a resume without an answer runs under the claimed one, once."""
    _, first, _ = run(wf)
    got = answer_journal(first["trace"], "approve", True, by="test-server")
    assert got.status == "claimed" and got.http == 200 and got.claim is not None
    code, _, err = run(wf, resume=first["trace"], answers=["approve=true"])
    assert code == 2 and "already answered true (allow, by test-server)" in err and "spent once" in err
    assert "resume without --answer approve to go on under the answer that spent it" in err
    code, _, err = run(wf, resume=first["trace"], fmt="text")
    assert code == 0 and published(tmp_path) == 1 and "approval approve: allow (claim)" in err


def test_a_deny_is_final(wf, tmp_path):
    """Before, `false` then `true` ran the gated step."""
    _, first, _ = run(wf)
    assert answer_journal(first["trace"], "approve", False).status == "claimed"
    code, _, err = run(wf, resume=first["trace"], answers=["approve=true"])
    assert code == 2 and "a deny is final" in err
    code, rep, _ = run(wf, resume=first["trace"])
    assert code == 0 and rep["tasks"]["publish"]["status"] == "skipped" and published(tmp_path) == 0


def test_a_revocation_after_the_gated_action_started_is_refused(wf, tmp_path):
    """Before, a `false` was accepted after a `true` had already run the effect."""
    _, first, _ = run(wf)
    code, second, _ = run(wf, resume=first["trace"], answers=["approve=true"])
    assert code == 0 and published(tmp_path) == 1
    got = answer_journal(second["trace"], "approve", False)
    assert got.status == "too_late" and got.http == 409 and "has started" in got.message


def test_a_revocation_before_the_gated_action_starts_stops_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    wf = tmp_path / "two.nika.yaml"
    wf.write_text(TWO_GATES)
    _, first, _ = run(wf)
    code, second, _ = run(wf, resume=first["trace"], answers=["approve=true"])  # approve done; `again` pauses
    assert code == 4 and second["paused"][0]["task"] == "again" and published(tmp_path) == 0
    code, _, err = run(wf, resume=second["trace"], answers=["approve=false", "again=true"], fmt="text")
    assert "revoked before its gated action started" in err
    assert code == 1 and "approval.revoked" in err and published(tmp_path) == 0
    code, _, err = run(wf, resume="latest", answers=["approve=true"])  # and the revocation is final
    assert code == 2 and "revoked already" in err and published(tmp_path) == 0


def test_an_edited_gated_action_halts_with_content_mismatch_and_asks_again(wf, tmp_path):
    """Before, the edited command ran under the old "yes" with only a note."""
    _, first, _ = run(wf)
    wf.write_text(GATED.replace("echo published >> ran.log", "echo published-EDITED >> ran.log"))
    code, rep, _ = run(wf, resume=first["trace"], answers=["approve=true"])
    err = rep["tasks"]["approve"]["error"]
    assert code == 1 and err["code"] == "NIKA-SEC-010" and "approval.content_mismatch" in err["message"]
    assert "be asked about what is shown now" in err["message"] and published(tmp_path) == 0
    code, again, _ = run(wf, resume=rep["trace"])  # re-asked: a new ticket, bound to the edited action
    assert code == 4 and again["paused"][0]["ticket"]["digest"] != first["paused"][0]["ticket"]["digest"]
    code, _, _ = run(wf, resume=again["trace"], answers=["approve=true"])
    assert code == 0 and (tmp_path / "ran.log").read_text() == "published-EDITED\n"


# a pure task between the gate and the action shapes what the action runs (its argument)
SHAPED = (
    GATED.replace(
        '  publish:\n    with: { ok: "${{ tasks.approve.output }}" }',
        "  shape:\n    after: { approve: success }\n"
        '    invoke: { tool: "nika:jq", args: { expression: \'"v1"\', input: {} } }\n'
        '  publish:\n    with: { ok: "${{ tasks.approve.output }}", tag: "${{ tasks.shape.output }}" }',
    )
    .replace('echo published >> ran.log; echo published"]', 'echo $0 >> ran.log; echo published", "${{ with.tag }}"]')
    .replace('tools: ["nika:prompt"]', 'tools: ["nika:prompt", "nika:jq"]')
)


def test_an_edited_pure_task_that_shapes_the_gated_action_halts_with_content_mismatch(wf, tmp_path):
    """The gated action's identity is what runs under the answer: the definitions of the gated tasks
    and of every task they read from. Before, editing a pure step between the gate and the action
    (here the jq that makes the command's argument) ran the changed command under the old "yes"."""
    wf.write_text(SHAPED)
    code, first, _ = run(wf)
    assert code == 4, first
    wf.write_text(SHAPED.replace("'\"v1\"'", "'\"v2\"'"))
    code, rep, _ = run(wf, resume=first["trace"], answers=["approve=true"])
    err = rep["tasks"]["approve"]["error"]
    assert code == 1 and "approval.content_mismatch" in err["message"] and published(tmp_path) == 0
    wf.write_text(SHAPED)  # the action as shown again: the answer its ticket was spent on stands
    code, rep, _ = run(wf, resume=rep["trace"])
    assert code == 0 and (tmp_path / "ran.log").read_text() == "v1\n", rep


def test_an_unedited_workflow_keeps_its_ticket_across_pauses(wf, tmp_path):
    """The same question paused again rides the same ticket, verbatim: one ticket, one claim."""
    _, first, _ = run(wf)
    _, second, _ = run(wf, resume=first["trace"])
    assert second["paused"][0]["ticket"] == first["paused"][0]["ticket"]


def test_eight_parallel_resumes_behind_a_barrier_run_the_effect_once(wf, tmp_path):
    """The HIGH finding (one pause, 11 publishes under concurrent resumes): eight resumes, started
    together, answering the same paused journal and later journals of its history."""
    _, first, _ = run(wf)
    _, second, _ = run(wf, resume=first["trace"])  # the same ticket paused again: a second journal to answer
    barrier = threading.Barrier(8)
    codes: list[int] = []

    def go(k: int) -> None:
        barrier.wait()
        trace = (first if k % 2 else second)["trace"]
        code, _, _ = run(wf, resume=trace, answers=["approve=true"])
        codes.append(code)

    threads = [threading.Thread(target=go, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert published(tmp_path) == 1
    assert sorted(codes) == [0] + [2] * 7


def test_concurrent_claims_in_eight_processes_have_one_winner(tmp_path):
    """The claim itself, raced by forked processes released together: one `link()` wins."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    ticket = tickets.mint("run-1", "approve", "sha256:" + "ab" * 32, 1000.0)
    start, results = ctx.Barrier(8), ctx.Queue()

    def claim(k: int) -> None:
        start.wait()
        results.put(tickets.claim(tmp_path, ticket, k % 2 == 0, by=f"p{k}", now=1001.0).status)

    procs = [ctx.Process(target=claim, args=(k,)) for k in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    got = sorted(results.get(timeout=10) for _ in procs)
    assert got.count("claimed") == 1 and set(got) <= {"claimed", "already_claimed", "revoked"}
    assert got.count("claimed") + got.count("revoked") <= 2  # a deny may revoke the one allow, once


def test_the_answer_api_returns_typed_results(wf, tmp_path, monkeypatch):
    """What `nika serve` answers through: plain data in, one typed result out, no exception."""
    _, first, _ = run(wf)
    index = read_history(first["trace"])
    t = first["paused"][0]["ticket"]
    (got,) = answer(index, "approve", "yes")
    assert got.status == "invalid_choice" and got.http == 422 and "takes true or false" in got.message
    (got,) = answer(index, "approve", True, shown_hash="sha256:" + "0" * 64)
    assert got.status == "hash_mismatch" and got.http == 412
    (got,) = answer(index, "draft", True)
    assert got.status == "not_paused" and got.http == 404
    (got,) = answer(index, "approve", True, now=t["issued_at"] + gate_mod.TICKET_TTL_S + 1)
    assert got.status == "expired" and got.http == 410
    (got,) = answer(index, "approve", True, shown_hash=t["shown_hash"])
    assert got.status == "claimed" and got.ok and got.claim is not None and got.claim.decision == "allow"
    (got,) = answer(index, "approve", True)
    assert got.status == "already_claimed" and got.http == 409 and not got.ok
    (got,) = answer(index, "approve", False)
    assert got.status == "revoked" and got.ok  # nothing started yet: the allow is revoked (NEP-0013 §5)
    (got,) = answer(index, "approve", False)
    assert got.status == "already_claimed" and "revoked already" in got.message
    assert not (tmp_path / "ran.log").exists()


def test_the_pause_line_says_which_answers_are_valid(wf, tmp_path):
    code, _, err = run(wf, fmt="text")
    assert code == 4 and "(confirm: true or false)" in err and "--answer approve=true" in err
    p = tmp_path / "pick.nika.yaml"
    p.write_text(
        'nika: v1\nworkflow: { id: pick }\npermits: { tools: ["nika:prompt"] }\ntasks:\n  which:\n'
        '    invoke: { tool: "nika:prompt", args: { message: "Which?", mode: choice, choices: ["red", "blue"] } }\n'
    )
    code, _, err = run(p, fmt="text")
    assert code == 4 and '(choice: one of "red", "blue")' in err
    code, _, err = run(p, resume="latest", answers=["which=green"])
    assert code == 2 and 'takes one of "red", "blue"' in err


def test_a_decision_journals_the_claim(wf, tmp_path):
    _, first, _ = run(wf)
    _, rep, _ = run(wf, resume=first["trace"], answers=["approve=true"])
    (decided,) = kinds(rep["trace"], "approval_decided")
    claim = tickets.read_claim(Path(first["trace"]).parent / tickets.CLAIMS, decided["ticket"])
    assert claim is not None and claim.answer is True and claim.decision == "allow"
    assert tickets.fate(Path(first["trace"]).parent / tickets.CLAIMS, decided["ticket"]) == "started"
