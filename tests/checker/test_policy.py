"""policy: → POLICY-001 (rule, task, witness) and SEC-013 (endorsement mode) (spec 10)."""

from __future__ import annotations

from tests.checker.authority_helpers import codes, diags, wf

PERMITS = 'permits: { exec: ["echo"], tools: ["nika:prompt", "nika:fetch"], net: { http: ["example.com"] } }\n'
GATE = '  human:\n    invoke: { tool: "nika:prompt", args: { message: "ok?" } }\n'
ACT = '  act:\n    exec: { command: ["echo", "x"] }\n'
FETCH = '  fetch_page:\n    invoke: { tool: "nika:fetch", args: { url: "https://example.com/" } }\n'


def test_human_gate_before() -> None:
    pol = "policy:\n  endorsement: solo\n  require: { human_gate_before: [exec] }\n"
    (d,) = diags(wf(ACT, PERMITS + pol))
    assert d.code == "NIKA-POLICY-001" and d.task == "act" and "human_gate_before" in d.message
    gated = GATE + ACT.replace("    exec:", "    after: { human: success }\n    exec:")
    assert codes(wf(gated, PERMITS + pol)) == []
    # a gate that is not an ancestor does not count
    assert codes(wf(GATE + ACT, PERMITS + pol)) == ["NIKA-POLICY-001"]


def test_exec_after_names_the_path() -> None:
    mid = '  mid:\n    with: { b: "${{ tasks.fetch_page.output }}" }\n    infer: { prompt: "${{ with.b }}" }\n'
    act = '  act:\n    with: { s: "${{ tasks.mid.output }}" }\n    exec: { command: ["echo", "${{ with.s }}"] }\n'
    (d,) = diags(wf(FETCH + mid + act, PERMITS + "policy:\n  forbid: { exec_after: [net] }\n"))
    assert d.code == "NIKA-POLICY-001" and "fetch_page → mid → act" in d.message
    assert codes(wf(FETCH + ACT, PERMITS + "policy:\n  forbid: { exec_after: [net] }\n")) == []


def test_providers_allowlist() -> None:
    pol = "policy:\n  allow: { providers: [ollama] }\n"
    assert codes(wf('  s:\n    infer: { prompt: "x", model: "openai/gpt-4o" }\n', pol)) == ["NIKA-POLICY-001"]
    assert codes(wf('  s:\n    infer: { prompt: "x", model: "ollama/llama3.2" }\n', pol)) == []
    # the envelope model counts; a templated model cannot be verified (fail-closed)
    assert codes(wf('  s:\n    infer: { prompt: "x" }\n', 'model: "openai/gpt-4o"\n' + pol)) == ["NIKA-POLICY-001"]
    templated = 'inputs:\n  m: { type: string, default: "ollama/x" }\n' + pol
    assert codes(wf('  s:\n    infer: { prompt: "x", model: "${{ inputs.m }}" }\n', templated)) == ["NIKA-POLICY-001"]


def test_max_tasks_and_soft_families() -> None:
    body = "".join(f'  t{i}:\n    infer: {{ prompt: "x" }}\n' for i in range(3))
    assert codes(wf(body, "policy:\n  limits: { max_tasks: 2 }\n")) == ["NIKA-POLICY-001"]
    assert codes(wf(body, "policy:\n  limits: { max_tasks: 3 }\n")) == []
    assert codes(wf(body, "policy:\n  prefer: { providers: [ollama] }\n  optimize: cost\n")) == []


def test_endorsement_mode() -> None:
    assert codes(wf(GATE, PERMITS + "policy:\n  limits: { max_tasks: 5 }\n")) == ["NIKA-SEC-013"]
    assert codes(wf(GATE, PERMITS + "policy:\n  endorsement: solo\n")) == []
    two = GATE + GATE.replace("human:", "other:")
    assert codes(wf(two, PERMITS + "policy:\n  endorsement: solo\n")) == ["NIKA-SEC-013"]
    assert codes(wf(two, PERMITS)) == []  # no policy: no endorsement law
