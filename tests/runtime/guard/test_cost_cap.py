"""Run cost: one price table (the certificate's), per-task and per-run `cost_usd` in the report and the
trace, and `nika run --max-cost-usd` checked before each model call: a loopback provider counts the
requests, and none is sent once the next call could pass the cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from durable_helpers import kinds, run
from fake_llm import openai, serve
from rt_helpers import run_yaml

from runtime.journal.read import read_run

KEY = "sk-test-0123456789abcdef"
PRICES = json.dumps({"openai/gpt-test": {"input": 1000, "output": 1000}})  # $ per million: 0.001 a token
CHAIN = """\
nika: v1
workflow: { id: spend }
model: openai/gpt-test
tasks:
  t1:
    infer: { prompt: "one", max_tokens: 10 }
  t2:
    with: { p: "${{ tasks.t1.output }}" }
    infer: { prompt: "two ${{ with.p }}", max_tokens: 10 }
  t3:
    with: { p: "${{ tasks.t2.output }}" }
    infer: { prompt: "three ${{ with.p }}", max_tokens: 10 }
  t4:
    with: { p: "${{ tasks.t3.output }}" }
    infer: { prompt: "four ${{ with.p }}", max_tokens: 10 }
"""


@pytest.fixture
def wf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "spend.nika.yaml"
    p.write_text(CHAIN)
    monkeypatch.setenv("NIKA_OPENAI_API_KEY", KEY)
    return p


def test_no_model_request_is_sent_once_the_next_could_pass_the_cap(wf, monkeypatch):
    monkeypatch.setenv("NIKA_PRICES", PRICES)
    with serve([openai("ok", tin=10, tout=5)], repeat_last=True) as fake:
        monkeypatch.setenv("NIKA_OPENAI_BASE_URL", fake.url + "/v1/chat/completions")
        code, rep, _ = run(wf, max_cost=0.04)
        sent = fake.count
    # each call costs 15 tokens = $0.015; before the third, spent $0.03 + its worst case > $0.04
    assert sent == 2 and code == 1
    err = rep["tasks"]["t3"]["error"]
    assert err["code"] == "NIKA-AGENT-002" and err["details"]["budget"] == "run.max_cost_usd"
    assert "was not sent" in err["message"] and rep["tasks"]["t4"]["status"] == "cancelled"
    assert rep["tasks"]["t1"]["cost_usd"] == pytest.approx(0.015) and rep["cost_usd"] == pytest.approx(0.03)
    frames = [f for f in kinds(rep["trace"], "verb_invoked") if f.get("phase") == "model_call"]
    assert frames[-1]["task"] == "t3" and frames[-1]["error_code"] == "NIKA-AGENT-002" and "cost_usd" not in frames[-1]
    frames = frames[:-1]
    assert [(f["task"], f["cost_usd"]) for f in frames] == [("t1", pytest.approx(0.015)), ("t2", pytest.approx(0.015))]
    assert frames[-1]["run_cost_usd"] == pytest.approx(0.03)
    view = read_run(Path(rep["trace"]))
    assert view.cost_usd == pytest.approx(0.03) and view.tasks["t2"].cost_usd == pytest.approx(0.015)


def test_without_a_cap_every_call_is_priced(wf, monkeypatch):
    monkeypatch.setenv("NIKA_PRICES", PRICES)
    with serve([openai("ok", tin=10, tout=5)], repeat_last=True) as fake:
        monkeypatch.setenv("NIKA_OPENAI_BASE_URL", fake.url + "/v1/chat/completions")
        code, rep, _ = run(wf)
        assert fake.count == 4
    assert code == 0 and rep["cost_usd"] == pytest.approx(0.06)
    bound = rep["cost_bound"]  # the certificate's static worst case, beside the actual
    assert bound["kind"] == "ceiling" and bound["usd"] > 0 and bound["headline"].startswith("≤ $")
    (done,) = [f for f in kinds(rep["trace"], "workflow_completed")]
    assert done["cost_usd"] == pytest.approx(0.06)


def test_a_model_the_table_cannot_price_is_refused_under_a_cap_and_unknown_without(wf, monkeypatch):
    monkeypatch.delenv("NIKA_PRICES", raising=False)
    with serve([openai("ok")], repeat_last=True) as fake:
        monkeypatch.setenv("NIKA_OPENAI_BASE_URL", fake.url + "/v1/chat/completions")
        code, rep, _ = run(wf, max_cost=0.04)
        assert fake.count == 0  # the cost cannot be bounded: nothing is sent
        assert code == 1 and "cannot be bounded" in rep["tasks"]["t1"]["error"]["message"]
        code, rep, err = run(wf, fmt="text")
        assert fake.count == 4 and code == 0
    assert "cost: unknown" in err and "ok t1 (" in err and "· cost unknown" in err  # never $0
    (done,) = kinds(err.split("trace: ")[-1].strip(), "workflow_completed")
    assert done["cost_usd"] is None


def test_the_mock_provider_is_free_under_any_cap(tmp_path):
    res = run_yaml(
        "nika: v1\nworkflow: { id: m }\nmodel: mock/echo\ntasks:\n  a:\n    infer: { prompt: hi }\n",
        tmp_path,
        max_cost_usd=0.0,
    )
    assert res.workflow_state == "success" and res.cost_usd == 0.0


def test_a_bad_cap_is_refused_before_the_run(wf):
    code, _, err = run(wf, max_cost=-1.0)
    assert code == 2 and "--max-cost-usd must be a non-negative number" in err


def test_an_agents_turns_are_checked_against_the_run_cap(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NIKA_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("NIKA_PRICES", PRICES)
    p = tmp_path / "agent.nika.yaml"
    p.write_text(
        "nika: v1\nworkflow: { id: loop }\nmodel: openai/gpt-test\npermits: { tools: ['nika:log'] }\ntasks:\n"
        "  loop:\n    agent:\n      prompt: go\n      tools: ['nika:log']\n      max_turns: 8\n"
    )
    turns = [openai(None, calls=[("nika_log", {"message": f"step {i}"})], tin=100, tout=50) for i in range(8)]
    with serve(turns) as fake:
        monkeypatch.setenv("NIKA_OPENAI_BASE_URL", fake.url + "/v1/chat/completions")
        code, rep, _ = run(p, max_cost=1.0)
        sent = fake.count
    err = rep["tasks"]["loop"]["error"]
    assert code == 1 and err["code"] == "NIKA-AGENT-002" and 1 <= sent < 8, err["message"]
    priced = [f for f in kinds(rep["trace"], "verb_invoked") if "cost_usd" in f]
    assert rep["cost_usd"] <= 1.0 and len(priced) == sent


def test_a_child_workflows_calls_count_against_the_callers_cap(wf, tmp_path, monkeypatch):
    monkeypatch.setenv("NIKA_PRICES", PRICES)
    parent = tmp_path / "parent.nika.yaml"
    parent.write_text(
        "nika: v1\nworkflow: { id: parent }\nmodel: openai/gpt-test\ntasks:\n"
        '  first:\n    infer: { prompt: "zero", max_tokens: 10 }\n'
        '  call:\n    after: { first: success }\n    invoke: { workflow: "./spend.nika.yaml" }\n'
    )
    with serve([openai("ok", tin=10, tout=5)], repeat_last=True) as fake:
        monkeypatch.setenv("NIKA_OPENAI_BASE_URL", fake.url + "/v1/chat/completions")
        code, rep, _ = run(parent, max_cost=0.04)
        assert fake.count == 2  # the parent's call and the child's first: the child's second would pass the cap
    assert code == 1 and rep["cost_usd"] == pytest.approx(0.03)
    assert rep["tasks"]["call"]["cost_usd"] == pytest.approx(0.015)


def test_the_project_setting_caps_the_run_and_the_flag_wins(wf, tmp_path, monkeypatch):
    monkeypatch.setenv("NIKA_PRICES", PRICES)
    (tmp_path / "nika.toml").write_text("max-cost-usd = 0.04\n")
    with serve([openai("ok", tin=10, tout=5)], repeat_last=True) as fake:
        monkeypatch.setenv("NIKA_OPENAI_BASE_URL", fake.url + "/v1/chat/completions")
        code, _, _ = run(wf)
        assert fake.count == 2 and code == 1
        code, _, _ = run(wf, max_cost=1.0)
        assert fake.count == 6 and code == 0
    (tmp_path / "nika.toml").write_text('max-cost-usd = "lots"\n')
    code, _, err = run(wf)
    assert code == 1 and "max-cost-usd" in err and "non-negative number" in err


ONE = (
    "nika: v1\nworkflow: {{ id: priced }}\nmodel: {model}\ntasks:\n  t:\n    infer: {{ prompt: hi, max_tokens: 10 }}\n"
)


def test_a_capped_run_prices_catalogued_models_without_nika_prices(tmp_path, monkeypatch):
    """`--max-cost-usd` reads the model catalog's list price (genai-prices, with its source and
    date): no NIKA_PRICES needed for a catalogued model; the call is priced, not refused."""
    from checker.contracts.catalog import lookup

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NIKA_PRICES", raising=False)
    monkeypatch.setenv("NIKA_OPENAI_API_KEY", KEY)
    (tmp_path / "p.nika.yaml").write_text(ONE.format(model="openai/gpt-4o"))
    row = lookup("openai/gpt-4o")
    assert row is not None and row.priced and row.price_source and row.price_date
    with serve([openai("ok", tin=1000, tout=100)]) as fake:
        monkeypatch.setenv("NIKA_OPENAI_BASE_URL", fake.url + "/v1/chat/completions")
        code, rep, _ = run(tmp_path / "p.nika.yaml", max_cost=0.5)
        sent = fake.count
    assert code == 0 and sent == 1, rep["tasks"]["t"]
    want = (1000 * row.input + 100 * row.output) / 1_000_000
    assert rep["tasks"]["t"]["cost_usd"] == pytest.approx(want) and rep["cost_usd"] == pytest.approx(want)


def test_a_capped_run_refuses_an_unpriced_model_saying_how_to_price_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NIKA_PRICES", raising=False)
    monkeypatch.setenv("NIKA_OPENAI_API_KEY", KEY)
    (tmp_path / "p.nika.yaml").write_text(ONE.format(model="openai/gpt-test"))
    with serve([openai("ok")]) as fake:
        monkeypatch.setenv("NIKA_OPENAI_BASE_URL", fake.url + "/v1/chat/completions")
        _, rep, _ = run(tmp_path / "p.nika.yaml", max_cost=0.5)
        sent = fake.count
    err = rep["tasks"]["t"]["error"]
    assert sent == 0 and err["code"] == "NIKA-AGENT-002"
    assert "model catalog" in err["message"] and "NIKA_PRICES" in err["message"] and "\n" not in err["message"]
