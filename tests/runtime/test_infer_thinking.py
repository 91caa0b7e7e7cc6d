"""``infer.thinking`` against the loopback fake provider: each adapter's reasoning parameter as
sent, the budget drawn from ``max_tokens``, the reasoning tokens read back, and the refusals (a
provider whose adapter sends none, a budget that leaves no answer), each before any call."""

from __future__ import annotations

import pytest
from fake_llm import Reply, anthropic, gemini, openai, serve

from checker.engine.pipeline import compile_text
from runtime.engine.inputs import unsupported_run_block

KEY = "thinking-key-0123456789"
ENV = {
    "openai": lambda u: {"NIKA_OPENAI_BASE_URL": u + "/v1/chat/completions", "OPENAI_API_KEY": KEY},
    "openrouter": lambda u: {"NIKA_OPENROUTER_BASE_URL": u + "/api/v1/chat", "OPENROUTER_API_KEY": KEY},
    "anthropic": lambda u: {"NIKA_ANTHROPIC_BASE_URL": u + "/v1/messages", "ANTHROPIC_API_KEY": KEY},
    "gemini": lambda u: {"NIKA_GEMINI_BASE_URL": u + "/m/{model}", "GOOGLE_API_KEY": KEY},
    "groq": lambda u: {"NIKA_GROQ_BASE_URL": u + "/v1/chat", "GROQ_API_KEY": KEY},
}


def thinking_wf(model: str, thinking: str, max_tokens: int | None = 8000) -> str:
    bound = f"      max_tokens: {max_tokens}\n" if max_tokens is not None else ""
    return (
        f"nika: v1\nworkflow: {{ id: th }}\ntasks:\n  t:\n    infer:\n      model: {model}\n"
        f'      prompt: "Prove it"\n{bound}      thinking: {thinking}\n'
    )


def model_call(result):
    return next(e for e in result.events if e["type"] == "verb.invoked" and e.get("phase") == "model_call")


def test_anthropic_sends_extended_thinking_and_keeps_only_the_answer(run):
    reply = anthropic("QED", tin=9, tout=700)
    reply.body["content"].insert(0, {"type": "thinking", "thinking": "step by step…", "signature": "sig"})
    with serve([reply]) as fake:
        result = run(
            thinking_wf("anthropic/claude", "{ enabled: true, budget_tokens: 4000 }"),
            engine_env=ENV["anthropic"](fake.url),
        )
    assert result.tasks["t"].output == "QED", result.tasks["t"].error
    body = fake.seen[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert body["max_tokens"] == 8000  # the answer and the reasoning share it
    assert model_call(result)["tokens_out"] == 700


def test_anthropic_without_max_tokens_keeps_room_for_the_answer(run):
    with serve([anthropic("ok")]) as fake:
        run(thinking_wf("anthropic/claude", "{ budget_tokens: 2000 }", None), engine_env=ENV["anthropic"](fake.url))
    body = fake.seen[0].body
    assert body["thinking"]["budget_tokens"] == 2000 and body["max_tokens"] > 2000


def test_gemini_sends_the_thinking_budget_and_counts_the_thoughts(run):
    reply = gemini("QED", tin=5, tout=20)
    reply.body["usageMetadata"]["thoughtsTokenCount"] = 300
    reply.body["candidates"][0]["content"]["parts"].insert(0, {"text": "hmm", "thought": True})
    with serve([reply]) as fake:
        result = run(
            thinking_wf("gemini/g", "{ enabled: true, budget_tokens: 1500 }"), engine_env=ENV["gemini"](fake.url)
        )
    assert result.tasks["t"].output == "QED", result.tasks["t"].error
    gen = fake.seen[0].body["generationConfig"]
    assert gen["thinkingConfig"] == {"thinkingBudget": 1500} and gen["maxOutputTokens"] == 8000
    call = model_call(result)
    assert (call["tokens_out"], call["thinking_tokens"]) == (320, 300)  # thoughts are billed as output


def test_gemini_thinking_disabled_sends_a_zero_budget(run):
    with serve([gemini("ok")]) as fake:
        run(thinking_wf("gemini/g", "{ enabled: false }"), engine_env=ENV["gemini"](fake.url))
    assert fake.seen[0].body["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}


@pytest.mark.parametrize(("budget", "effort"), [(1000, "low"), (4000, "medium"), (20000, "high")])
def test_openai_picks_the_reasoning_effort_from_the_budget(run, budget, effort):
    reply = openai("QED", tin=4, tout=900)
    reply.body["usage"]["completion_tokens_details"] = {"reasoning_tokens": 850}
    with serve([reply]) as fake:
        result = run(
            thinking_wf("openai/o4", f"{{ budget_tokens: {budget} }}", 30000), engine_env=ENV["openai"](fake.url)
        )
    body = fake.seen[0].body
    assert body["reasoning_effort"] == effort
    assert body["max_completion_tokens"] == 30000 and "max_tokens" not in body
    assert model_call(result)["thinking_tokens"] == 850


def test_openrouter_sends_the_budget_in_its_reasoning_parameter(run):
    with serve([openai("ok")]) as fake:
        run(thinking_wf("openrouter/deepseek/r1", "{ budget_tokens: 3000 }"), engine_env=ENV["openrouter"](fake.url))
    body = fake.seen[0].body
    assert body["reasoning"] == {"max_tokens": 3000} and body["max_tokens"] == 8000


def test_a_provider_without_a_reasoning_parameter_is_refused_before_the_call(run):
    with serve([openai("never")]) as fake:
        result = run(thinking_wf("groq/llama", "{ budget_tokens: 1000 }"), engine_env=ENV["groq"](fake.url))
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-IMPL-002" and "`groq`" in err["message"] and "infer.thinking" in err["message"]
    assert err["details"] == {"feature": "thinking", "provider": "groq", "field": "thinking"}
    assert fake.count == 0


def test_admission_refuses_thinking_on_a_literal_provider_without_it(tmp_path):
    def block(model: str) -> str | None:
        compiled = compile_text(thinking_wf(model, "{ budget_tokens: 1000 }"), "wf.nika.yaml", str(tmp_path))
        return unsupported_run_block(compiled.workflow)

    assert block("anthropic/c") is None and block("mock/echo") is None and block("gemini/g") is None
    why = block("deepseek/deepseek-reasoner")
    assert why is not None and "`t`'s `infer.thinking:` on `deepseek`" in why
    compiled = compile_text(thinking_wf("groq/l", "{ budget_tokens: 1000 }"), "wf.nika.yaml", str(tmp_path))
    assert unsupported_run_block(compiled.workflow, "anthropic/c") is None  # `--model` replaces the model
    assert "on `xai`" in (unsupported_run_block(compiled.workflow, "xai/grok") or "")


def test_a_budget_that_leaves_no_answer_is_refused_before_the_call(run):
    with serve([anthropic("never")]) as fake:
        result = run(thinking_wf("anthropic/c", "{ budget_tokens: 4000 }", 2000), engine_env=ENV["anthropic"](fake.url))
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-INFER-001" and "max_tokens: 2000" in err["message"]
    assert fake.count == 0


def test_mock_accepts_thinking_and_echoes(run):
    result = run(thinking_wf("mock/echo", "{ enabled: true, budget_tokens: 100 }"))
    assert result.tasks["t"].output == "Prove it"


def test_an_unreported_reasoning_count_stays_absent(run):
    with serve([Reply(body=openai("ok").body)]) as fake:
        result = run(thinking_wf("openai/o4", "{ enabled: true }"), engine_env=ENV["openai"](fake.url))
    assert fake.seen[0].body["reasoning_effort"] == "medium"
    assert "thinking_tokens" not in model_call(result)


@pytest.mark.parametrize(
    ("thinking", "extra", "said"),
    [("{ budget_tokens: 500 }", "", "at least 1024"), ("{ budget_tokens: 2000 }", "temperature: 0.2", "temperature")],
)
def test_anthropic_requests_the_api_refuses_are_refused_before_sending(run, thinking, extra, said):
    src = thinking_wf("anthropic/c", thinking) + (f"      {extra}\n" if extra else "")
    with serve([anthropic("never")]) as fake:
        result = run(src, engine_env=ENV["anthropic"](fake.url))
    err = result.tasks["t"].error
    assert err["code"] == "NIKA-INFER-001" and said in err["message"]
    assert fake.count == 0
