"""Attack class: `policy:` judged at check only. `nika run --model` swaps the model after the check,
and a `nika:prompt` gate that answers itself with `default:` passes an unattended run through a
`require.human_gate_before` law. Each test plays the attack and counts what left the process
(loopback model server requests, a marker file an `exec:` would create)."""

from __future__ import annotations

import io
from pathlib import Path

from fake_llm import openai, serve

from checker.engine.pipeline import compile_text
from nika.commands.run import run_command

KEY = "sk-test-0123456789abcdef"
ALLOW_OLLAMA = "policy:\n  allow: { providers: [ollama] }\n"


def _env(url: str) -> dict[str, str]:
    return {"NIKA_OPENAI_BASE_URL": url + "/v1/chat/completions", "NIKA_OPENAI_API_KEY": KEY}


def _infer(policy: str) -> str:
    return (
        "nika: v1\nworkflow: { id: p }\nmodel: ollama/llama3.2\n" + policy + "tasks:\n"
        '  s:\n    infer: { prompt: "the secret plan" }\n'
    )


def _agent(policy: str) -> str:
    return (
        "nika: v1\nworkflow: { id: p }\nmodel: ollama/llama3.2\n" + policy + "tasks:\n"
        '  s:\n    agent: { prompt: "the secret plan" }\n'
    )


def test_model_override_cannot_reach_a_forbidden_provider(run) -> None:
    """Spec 10 §policy: every infer/agent call's provider is in `allow.providers`, and the provider
    is that of the model actually used. A `--model openai/x` given at run replaces the literal the
    check judged, so the engine judges the resolved model again before any prompt is sent."""
    for body in (_infer, _agent):
        with serve([openai("leaked")], repeat_last=True) as fake:
            result = run(body(ALLOW_OLLAMA), model="openai/gpt-test", engine_env=_env(fake.url))
            assert fake.count == 0, "a prompt reached the forbidden provider"
        rec = result.tasks["s"]
        assert rec.status == "failure"
        assert rec.error["code"] == "NIKA-POLICY-001"
        assert rec.error["category"] == "security_error"
        assert "openai" in rec.error["message"]
        # the control: without the law, the same override does reach the server
        with serve([openai("fine")], repeat_last=True) as fake:
            result = run(body(""), model="openai/gpt-test", engine_env=_env(fake.url))
            assert fake.count >= 1
        assert result.tasks["s"].status == "success"


def test_model_override_inside_the_allowlist_runs(run) -> None:
    """The re-judgement refuses only what the law refuses: an override from an allowed provider
    runs (spec 10 §policy: the allowlist, not a ban on `--model`)."""
    pol = "policy:\n  allow: { providers: [ollama, mock] }\n"
    result = run(_infer(pol), model="mock/echo")
    assert result.tasks["s"].status == "success"


GATED = (
    "nika: v1\nworkflow: {{ id: g }}\n"
    "policy:\n  endorsement: solo\n  require: {{ human_gate_before: [exec] }}\n"
    'permits: {{ exec: ["touch"], tools: ["nika:prompt"] }}\n'
    "tasks:\n"
    '  human:\n    invoke: {{ tool: "nika:prompt", args: {{ message: "Ship?", default: {default} }} }}\n'
    '  act:\n    after: {{ human: success }}\n    exec: {{ command: ["touch", "{marker}"] }}\n'
)


def test_self_answering_gate_is_refused_before_any_effect(tmp_path: Path) -> None:
    """Spec 10 §policy: the human gate is a `nika:prompt` and "the pause is the consent"; a
    prompt whose `default: true` answers an unattended run is no pause, so the law is not met and
    `nika run` refuses the file before the gated exec (stdlib nika:prompt: non-interactive runs
    take `default:`)."""
    marker = tmp_path / "shipped"
    wf = tmp_path / "gate.nika.yaml"
    wf.write_text(GATED.format(default="true", marker=marker))
    out, err = io.StringIO(), io.StringIO()
    code = run_command(str(wf), output_format="json", trace_dir=str(tmp_path / "t"), out=out, err=err)
    assert code == 2, (out.getvalue(), err.getvalue())
    assert "NIKA-POLICY-001" in out.getvalue() + err.getvalue()
    assert not marker.exists(), "the gated exec ran without a human"


def test_defaulted_answer_is_not_consent_at_run(run, tmp_path: Path) -> None:
    """Spec 10 §policy ("the pause is the consent"): a gate the check accepts (`default: false`,
    a refusal) still answers an unattended run by itself; the engine must not take that answer as
    a human's consent and run the gated `exec:` that only waits for the gate to finish."""
    marker = tmp_path / "shipped"
    result = run(GATED.format(default="false", marker=marker))
    assert result.tasks["human"].status == "success"
    act = result.tasks["act"]
    assert act.status == "failure"
    assert act.error["code"] == "NIKA-POLICY-001"
    assert not marker.exists(), "the gated exec ran on a defaulted answer"


def test_human_answer_is_consent(tmp_path: Path) -> None:
    """The positive side of the same judge: a gate a human answered admits the gated task."""
    from runtime.guard.policy import judge_human_gate

    src = GATED.format(default="false", marker=tmp_path / "m")
    compiled = compile_text(src, str(tmp_path / "w.nika.yaml"), str(tmp_path))
    wf, graph = compiled.workflow, compiled.graph
    assert wf is not None and graph is not None
    act = wf.tasks["act"]
    judge_human_gate(wf, graph, act, {"human": "human"})  # no raise
    try:
        judge_human_gate(wf, graph, act, {"human": "default"})
    except Exception as exc:
        assert getattr(exc, "code", None) == "NIKA-POLICY-001"
    else:
        raise AssertionError("a defaulted answer admitted the gated task")


def test_no_determinable_provider_fails_closed(tmp_path: Path) -> None:
    """Spec 10 §policy: under a declared allowlist a provider that cannot be determined statically
    is a violation (fail-closed). A file that names no model anywhere leaves the provider to
    whatever the run supplies, so `nika run` refuses it before any call, even when `--model`
    names a provider a loopback server answers for."""
    wf = tmp_path / "nomodel.nika.yaml"
    wf.write_text(
        "nika: v1\nworkflow: { id: n }\n" + ALLOW_OLLAMA + 'tasks:\n  s:\n    infer: { prompt: "the secret plan" }\n'
    )
    with serve([openai("leaked")], repeat_last=True) as fake:
        out, err = io.StringIO(), io.StringIO()
        import os

        old = {k: os.environ.get(k) for k in _env(fake.url)}
        os.environ.update(_env(fake.url))
        try:
            code = run_command(
                str(wf), output_format="json", model="openai/gpt-test", trace_dir=str(tmp_path / "t"), out=out, err=err
            )
        finally:
            for k, v in old.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        assert fake.count == 0
    assert code == 2, (out.getvalue(), err.getvalue())
    assert "NIKA-POLICY-001" in out.getvalue() + err.getvalue()
