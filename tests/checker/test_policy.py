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


def test_providers_allowlist_fails_closed_without_a_model() -> None:
    """Spec 10 §policy: a provider that cannot be determined statically violates a declared
    allowlist (fail-closed); a task naming no model, in a file with no `model:`, has none."""
    pol = "policy:\n  allow: { providers: [ollama] }\n"
    (d,) = diags(wf('  s:\n    infer: { prompt: "x" }\n', pol))
    assert d.code == "NIKA-POLICY-001" and d.task == "s" and "names no model" in d.message
    (d,) = diags(wf('  s:\n    agent: { prompt: "x" }\n', pol))
    assert d.code == "NIKA-POLICY-001" and d.task == "s"
    assert codes(wf('  s:\n    infer: { prompt: "x" }\n', 'model: "ollama/x"\n' + pol)) == []
    # without an allowlist, no model in the file is not a policy matter
    assert codes(wf('  s:\n    infer: { prompt: "x" }\n', "policy:\n  limits: { max_tasks: 3 }\n")) == []


def test_a_gate_that_answers_itself_is_not_a_human_gate() -> None:
    """Spec 10 §policy: the human gate is a `nika:prompt` and "the pause is the consent"; a
    prompt whose `default:` consents for an unattended run (stdlib: non-interactive runs use
    `default:`) is not counted; a refusing default (`false`) or none still counts."""
    pol = "policy:\n  endorsement: solo\n  require: { human_gate_before: [exec] }\n"
    act = ACT.replace("    exec:", "    after: { human: success }\n    exec:")

    def gate(args: str) -> str:
        return f'  human:\n    invoke: {{ tool: "nika:prompt", args: {{ message: "ok?"{args} }} }}\n'

    (d,) = diags(wf(gate(", default: true") + act, PERMITS + pol))
    assert d.code == "NIKA-POLICY-001" and d.task == "act" and "answers itself" in d.message
    assert codes(wf(gate(", default: false") + act, PERMITS + pol)) == []
    assert codes(wf(gate("") + act, PERMITS + pol)) == []
    # an input prompt with a default answers itself too; a templated default cannot be verified
    assert codes(wf(gate(', mode: input, default: "yes"') + act, PERMITS + pol)) == ["NIKA-POLICY-001"]
    templated = "inputs:\n  ok: { type: boolean, default: true }\n" + PERMITS + pol
    assert codes(wf(gate(', default: "${{ inputs.ok }}"') + act, templated)) == ["NIKA-POLICY-001"]
