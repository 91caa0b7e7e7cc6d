"""The certificate (the checker/views/certificate package): plan, cost ceiling, termination, effects and risk,
computed from the compiled workflow with an explicit price table."""

from __future__ import annotations

import pytest

from checker.engine.pipeline import compile_text
from checker.views.certificate import (
    GRADES,
    Certificate,
    PriceTable,
    certify,
    format_usd,
    parse_prices,
    task_summary,
)
from nika.output.certificate_text import certificate_lines

# $0.15 in / $0.60 out per million tokens
PRICES = parse_prices('{"openai/gpt-x": {"input": 0.15, "output": 0.6}, "anthropic/big": {"input": 3, "output": 15}}')


def cert_of(body: str, prices: PriceTable | None = PRICES, head: str = "") -> Certificate:
    text = f"nika: v1\nworkflow:\n  id: demo\nmodel: openai/gpt-x\n{head}tasks:\n{body}"
    cert = certify(compile_text(text, "demo.nika.yaml"), prices)
    assert cert is not None
    return cert


def spend(cert: Certificate, task: str) -> dict[str, object]:
    [row] = [s.to_json() for s in cert.cost.spends if s.task == task and s.part is None]
    return row


# -- cost ---------------------------------------------------------------------------------------


def test_a_priced_infer_is_max_tokens_times_the_output_price() -> None:
    cert = cert_of('  a:\n    infer: { prompt: "hi", max_tokens: 1000 }\n')
    assert spend(cert, "a")["status"] == "ceiling"
    assert spend(cert, "a")["usd"] == pytest.approx(0.0006)
    total = cert.to_json()["cost"]["total"]
    assert total["kind"] == "ceiling" and total["usd"] == pytest.approx(0.0006)
    assert cert.cost.headline() == "≤ $0.0006"


def test_an_unpriced_model_is_unknown_never_zero() -> None:
    cert = cert_of('  a:\n    infer: { prompt: "hi", max_tokens: 10, model: "mistral/unlisted" }\n')
    row = spend(cert, "a")
    assert row["status"] == "unpriced" and row["usd"] is None
    assert "no price" in str(row["reason"])
    cost = cert.to_json()["cost"]
    assert cost["total"] == {"kind": "unknown", "usd": None}
    assert cost["unpriced"] == ["a"]
    assert cost["pricing"]["models"] == [
        {"model": "mistral/unlisted", "input_per_million": None, "output_per_million": None, "source": None}
    ]
    assert "$0" not in cert.cost.headline()


def test_without_a_price_table_every_cloud_model_is_unpriced() -> None:
    cert = cert_of('  a:\n    infer: { prompt: "hi", max_tokens: 10 }\n', prices=None)
    assert spend(cert, "a")["status"] == "unpriced"
    assert cert.cost.kind == "unknown" and cert.to_json()["cost"]["pricing"]["source"] is None


def test_a_local_model_is_unpriced_not_free() -> None:
    cert = cert_of('  a:\n    infer: { prompt: "hi", max_tokens: 10, model: "ollama/qwen3:4b" }\n')
    row = spend(cert, "a")
    assert row["status"] == "unpriced" and "local hardware" in str(row["reason"])


def test_the_mock_provider_is_free() -> None:
    cert = cert_of('  a:\n    infer: { prompt: "hi", model: "mock/echo" }\n')
    assert spend(cert, "a")["status"] == "ceiling" and spend(cert, "a")["usd"] == 0.0
    assert cert.cost.kind == "ceiling"
    assert cert.risk.grade == "low"  # free calls need no cap


def test_a_priced_task_without_max_tokens_makes_the_total_a_floor() -> None:
    cert = cert_of('  a:\n    infer: { prompt: "hi", max_tokens: 1000 }\n  b:\n    infer: { prompt: "more" }\n')
    assert spend(cert, "b")["status"] == "unbounded" and spend(cert, "b")["reason"] == "no `max_tokens`"
    total = cert.to_json()["cost"]["total"]
    assert total["kind"] == "floor" and total["usd"] == pytest.approx(0.0006)
    assert cert.cost.headline().startswith("at least $0.0006")
    assert cert.risk.grade == "unbounded"


def test_for_each_over_a_literal_list_multiplies() -> None:
    cert = cert_of('  a:\n    for_each: [x, y, z]\n    infer: { prompt: "${{ item }}", max_tokens: 1000 }\n')
    row = spend(cert, "a")
    assert row["items"] == 3 and row["usd"] == pytest.approx(0.0018)
    assert cert.resources.model_calls == 3


def test_for_each_over_a_const_list_and_retries_multiply() -> None:
    cert = cert_of(
        "  a:\n    for_each: ${{ const.langs }}\n    retry: { max_attempts: 2 }\n"
        '    infer: { prompt: "${{ item }}", max_tokens: "${{ const.cap }}" }\n',
        head="const:\n  langs: [fr, de]\n  cap: 1000\n",
    )
    row = spend(cert, "a")
    assert (row["items"], row["attempts"], row["max_tokens"]) == (2, 2, 1000)
    assert row["usd"] == pytest.approx(0.0024)
    loops = {(lp.kind, lp.bound) for lp in cert.termination.loops}
    assert loops == {("for_each", 2), ("retry", 2)}
    assert cert.termination.verdict == "bounded"


def test_for_each_over_a_run_time_list_is_unbounded() -> None:
    cert = cert_of(
        "  a:\n    for_each: ${{ inputs.items }}\n"  # a per-run value, even with a default
        '    infer: { prompt: "${{ item }}", max_tokens: 100 }\n',
        head="inputs:\n  items: {type: {array: string}, default: [a, b]}\n",
    )
    row = spend(cert, "a")
    assert row["status"] == "unbounded" and row["items"] is None
    assert cert.cost.kind == "floor"
    assert cert.termination.verdict == "run-time"
    assert cert.resources.task_runs is None and cert.resources.model_calls is None
    assert cert.risk.grade == "unbounded"


def test_an_agent_is_its_token_budget_at_the_higher_price_and_its_turns() -> None:
    cert = cert_of(
        '  a:\n    retry: { max_attempts: 2 }\n    agent:\n      prompt: "go"\n      model: anthropic/big\n'
        "      max_turns: 4\n      max_tokens_total: 10000\n"
    )
    row = spend(cert, "a")
    assert (row["kind"], row["max_turns"], row["max_tokens"]) == ("agent", 4, 10000)
    assert row["usd"] == pytest.approx(10000 * 15 / 1e6 * 2)  # output price, the higher one, × attempts
    assert cert.resources.model_calls == 8
    assert ("agent", 4) in {(lp.kind, lp.bound) for lp in cert.termination.loops}
    assert "at most 4 turns" in cert.termination.statement


def test_an_agent_without_a_token_budget_is_unbounded() -> None:
    cert = cert_of('  a:\n    agent: { prompt: "go" }\n')
    row = spend(cert, "a")
    assert row["status"] == "unbounded" and row["reason"] == "no `max_tokens_total`"
    assert row["max_turns"] == 10  # the default turn budget still ends the loop
    assert cert.risk.grade == "unbounded"
    assert any("max_tokens_total" in r for r in cert.risk.reasons)


def test_cleanup_steps_count_once_and_paid_tools_are_unpriced() -> None:
    cert = cert_of(
        "  a:\n    for_each: [1, 2]\n"
        '    invoke: { tool: "nika:image_generate", args: { prompt: "cat", output_dir: "./img", provider: openai } }\n'
        '    on_finally:\n      - infer: { prompt: "done", max_tokens: 1000 }\n',
        head='permits:\n  tools: ["nika:image_generate"]\n  fs: { write: ["./img/**"] }\n',
    )
    rows = {(s.task, s.part): s for s in cert.cost.spends}
    assert rows[("a", None)].status == "unpriced" and rows[("a", None)].kind == "tool"
    step = rows[("a", "on_finally[0]")]
    assert step.items == 1 and step.usd == pytest.approx(0.0006)


def test_no_model_call_costs_nothing() -> None:
    cert = cert_of('  a:\n    exec: { command: ["true"] }\n', head='permits: { exec: ["true"] }\n')
    assert cert.to_json()["cost"]["total"] == {"kind": "none", "usd": 0.0}


# -- plan and termination -----------------------------------------------------------------------


def test_plan_waves_width_and_critical_path() -> None:
    cert = cert_of(
        '  a:\n    exec: { command: ["true"] }\n'
        '  b:\n    exec: { command: ["true"] }\n'
        '  c:\n    after: { a: success }\n    exec: { command: ["true"] }\n'
        '  d:\n    after: { c: success, b: success }\n    exec: { command: ["true"] }\n',
        head='permits: { exec: ["true"] }\n',
    )
    plan = cert.to_json()["plan"]
    assert plan["waves"] == [["a", "b"], ["c"], ["d"]]
    assert plan["width"] == 2 and plan["critical_path"] == ["a", "c", "d"] and plan["tasks"] == 4
    assert cert.termination.untimed == ("a", "b", "c", "d")  # processes without `timeout:`


def test_a_cycle_is_no_run() -> None:
    cert = cert_of(
        '  a:\n    after: { b: success }\n    exec: { command: ["true"] }\n'
        '  b:\n    after: { a: success }\n    exec: { command: ["true"] }\n',
        head='permits: { exec: ["true"] }\n',
    )
    term = cert.to_json()["termination"]
    assert term["verdict"] == "cyclic" and term["acyclic"] is False
    assert set(term["cycle"]) == {"a", "b"}
    assert cert.plan.unscheduled == ("a", "b") and cert.plan.waves == ()
    assert cert.risk.grade == "unbounded"


# -- effects and risk ---------------------------------------------------------------------------


def test_effects_needed_granted_and_escapes() -> None:
    cert = cert_of(
        '  get:\n    invoke: { tool: "nika:fetch", args: { url: "https://api.example.com/x" } }\n'
        '  put:\n    invoke: { tool: "nika:write", args: { path: "./out/r.txt", content: "x" } }\n',
        head='permits:\n  tools: ["nika:fetch"]\n  net: { http: ["api.example.com"] }\n',
    )
    fx = cert.to_json()["effects"]
    assert fx["boundary_declared"] is True
    assert fx["needed"] == {
        "fs": {"write": ["out/r.txt"]},
        "net": {"http": ["api.example.com"]},
        "tools": ["nika:fetch", "nika:write"],
    }
    assert fx["granted"]["net"] == {"http": ["api.example.com"]} and fx["granted"]["tools"] == ["nika:fetch"]
    assert fx["escapes"] == 2  # `nika:write` is not granted, nor is any fs.write
    assert cert.risk.grade == "high"


def test_run_time_targets_are_listed_as_dynamic() -> None:
    cert = cert_of(
        '  get:\n    invoke: { tool: "nika:fetch", args: { url: "${{ inputs.url }}" } }\n',
        head='inputs:\n  url: {type: string}\npermits:\n  tools: ["nika:fetch"]\n  net: { http: ["*"] }\n',
    )
    fx = cert.to_json()["effects"]
    assert fx["needed"]["net"] == {"http": []}
    assert fx["dynamic"] == [
        {"task": "get", "plane": "net", "arg": "args.url", "judge": "permits", "source": "inputs.url"}
    ]


# the deferred re-gates: what the check's own argv and env judge calls leave to the run
_REGATE_HEAD = "inputs:\n  extra: {{type: string{default}}}\npermits:\n  exec: [\"sqlite3\", \"make\"]\n"
_REGATE_BODY = (
    "  fetch:\n    infer: { prompt: \"a query\", max_tokens: 10 }\n"
    "  q:\n    with: { sql: \"${{ tasks.fetch.output }}\" }\n"
    "    exec: { command: [\"sqlite3\", \"db.sqlite\", \"${{ with.sql }}\"] }\n"
    "  build:\n    exec: { command: [\"make\"], env: { CC: \"${{ inputs.extra }}\", OK: \"${{ inputs.extra }}\" } }\n"
)


def test_deferred_argv_and_env_re_gates_are_listed_not_reported() -> None:
    head = _REGATE_HEAD.format(default="")
    text = f"nika: v1\nworkflow:\n  id: demo\nmodel: openai/gpt-x\n{head}tasks:\n{_REGATE_BODY}"
    compiled = compile_text(text, "demo.nika.yaml")
    assert compiled.diagnostics == ()  # a deferred re-gate is no finding (spec 10: the file stays valid)
    cert = certify(compiled, PRICES)
    assert cert is not None
    assert cert.to_json()["effects"]["dynamic"] == [
        {"task": "q", "plane": "exec", "arg": "command[2]", "judge": "argv", "source": "tasks.fetch.output"},
        # `OK` is no locator: the env judge has nothing to re-judge there
        {"task": "build", "plane": "env", "arg": "env.CC", "judge": "env", "source": "inputs.extra"},
    ]
    # the same judge calls: exactly the re-gates the authority rules deferred, in task order
    assert [(d.task, d.arg) for d in cert.effects.dynamic] == [(r.task, r.arg) for r in compiled.regates]
    lines = certificate_lines(cert, "demo.nika.yaml")
    effects = next(i for i, line in enumerate(lines) if line.lstrip().startswith("effects"))
    assert "(+2 values judged only at run time)" in lines[effects]
    assert lines[effects + 1].strip() == "q  command[2] ← tasks.fetch.output  argv judge"
    assert lines[effects + 2].strip() == "build  env.CC ← inputs.extra  env judge"


def test_a_value_the_check_resolves_is_judged_there_not_listed() -> None:
    head = _REGATE_HEAD.format(default=', default: "/tmp/x/cc"')
    compiled = compile_text(f"nika: v1\nworkflow:\n  id: demo\n{head}tasks:\n{_REGATE_BODY}", "demo.nika.yaml")
    assert [d.code for d in compiled.diagnostics if d.is_error] == ["NIKA-AUTH-008"]  # env.CC, refused now
    cert = certify(compiled, PRICES)
    assert cert is not None and [d.arg for d in cert.effects.dynamic] == ["command[2]"]


def test_no_argv_re_gate_where_the_argv_judge_has_nothing_to_vouch_for() -> None:
    """Under `exec: true` any program may run: the argv judge is not asked, so nothing is listed
    for its words (the run does not ask it either)."""
    head = _REGATE_HEAD.format(default="").replace('[\"sqlite3\", \"make\"]', "true")
    cert = certify(compile_text(f"nika: v1\nworkflow:\n  id: demo\n{head}tasks:\n{_REGATE_BODY}", "d.nika.yaml"))
    assert cert is not None and [d.judge for d in cert.effects.dynamic] == ["env"]


def test_reads_and_model_calls_are_low_risk() -> None:
    cert = cert_of(
        '  read:\n    invoke: { tool: "nika:read", args: { path: "./a.txt" } }\n'
        '  sum:\n    with: { t: "${{ tasks.read.output }}" }\n    infer: { prompt: "${{ with.t }}", max_tokens: 10 }\n',
        head='permits:\n  tools: ["nika:read"]\n  fs: { read: ["./**"] }\n',
    )
    assert cert.risk.grade == "low" and cert.effects.escapes == 0


def test_an_effect_after_a_human_gate_is_supervised() -> None:
    cert = cert_of(
        '  ask:\n    invoke: { tool: "nika:prompt", args: { message: "ship?" } }\n'
        '  ship:\n    after: { ask: success }\n    timeout: "1m"\n    exec: { command: ["deploy"] }\n',
        head='permits:\n  tools: ["nika:prompt"]\n  exec: ["deploy"]\n',
    )
    assert cert.risk.grade == "supervised" and cert.risk.grade in GRADES, cert.risk.reasons
    assert "after a human gate" in cert.risk.reasons[0]


def test_no_workflow_no_certificate() -> None:
    assert certify(compile_text("nika: v1\ntasks: [\n", "broken.nika.yaml")) is None


# -- prices and words ---------------------------------------------------------------------------


def test_price_table_errors_leave_models_unpriced() -> None:
    bad = parse_prices("{not json")
    assert bad.prices == {} and bad.error is not None and "not valid JSON" in bad.error
    partial = parse_prices('{"a/b": {"input": 1}, "c/d": {"input": 1, "output": 2}}')
    assert set(partial.prices) == {"c/d"} and partial.error is not None and "`a/b`" in partial.error
    assert parse_prices("").source is None


@pytest.mark.parametrize(
    ("usd", "up", "text"),
    [
        (0.0, True, "$0"),
        (0.004, True, "$0.0040"),
        (0.00024, True, "$0.00024"),
        (0.01234, True, "$0.0124"),
        (0.01234, False, "$0.0123"),
        (1234.561, True, "$1,234.57"),
    ],
)
def test_format_usd(usd: float, up: bool, text: str) -> None:
    assert format_usd(usd, up=up) == text


def test_task_summary_is_the_code_lens_text() -> None:
    cert = cert_of(
        '  a:\n    infer: { prompt: "hi", max_tokens: 1000 }\n'
        '  b:\n    with: { x: "${{ tasks.a.output }}" }\n'
        '    infer: { prompt: "${{ with.x }}", model: "mistral/unlisted" }\n'
        '  c:\n    with: { x: "${{ tasks.a.output }}" }\n'
        '    invoke: { tool: "nika:jq", args: { input: "${{ with.x }}", expression: "." } }\n'
    )
    assert task_summary(cert, "a") == "≤ $0.0006 · wave 1 of 2"
    assert task_summary(cert, "b").startswith("cost unknown (no price for `mistral/unlisted`)")
    assert task_summary(cert, "c") == "no model cost · wave 2 of 2"
