"""The configured-response mock models read their fixtures from engine configuration:
``mock/mock-error`` fails as configured (so ``retry:`` and ``on_error:`` can be tested),
``mock/mock-json`` answers the configured JSON, which the task's contract then validates,
``mock/mock-streaming`` streams the configured reply as ``infer.chunk`` events."""

from __future__ import annotations

import json

WF = 'nika: v1\nworkflow: {{ id: m }}\ntasks:\n  t:\n{extra}    infer: {{ model: "mock/{model}", prompt: "p"{more} }}\n'
SCHEMA = ", schema: { type: object, required: [n], properties: { n: { type: integer } } }"


def wf(model: str, extra: str = "", more: str = "") -> str:
    return WF.format(model=model, extra=extra, more=more)


def test_mock_error_fails_with_the_configured_error(run):
    fixture = {"code": "NIKA-PROVIDER-001", "message": "the fake outage", "transient": True, "retry_after_ms": 5}
    result = run(wf("mock-error"), engine_env={"NIKA_MOCK_ERROR": json.dumps(fixture)})
    err = result.tasks["t"].error
    assert (err["code"], err["message"], err["transient"]) == ("NIKA-PROVIDER-001", "the fake outage", True)
    assert err["details"]["retry_after_ms"] == 5


def test_mock_error_drives_retry_and_on_error(run, tmp_path):
    path = tmp_path / "err.json"
    path.write_text(json.dumps({"message": "refused", "transient": True}))
    extra = "    retry: { max_attempts: 2, backoff_ms: 1 }\n    on_error: { recover: fallback }\n"
    result = run(wf("mock-error", extra), engine_env={"NIKA_MOCK_ERROR": str(path)})
    assert result.tasks["t"].output == "fallback"
    assert len([e for e in result.events if e["type"] == "task.retrying"]) == 1


def test_mock_json_answers_the_fixture_and_the_contract_judges_it(run):
    good = run(wf("mock-json", more=SCHEMA), engine_env={"NIKA_MOCK_JSON": '{"n": 7}'})
    assert good.tasks["t"].output == {"n": 7}
    bad = run(wf("mock-json", more=SCHEMA), engine_env={"NIKA_MOCK_JSON": '{"n": "seven"}'})
    assert bad.tasks["t"].error["code"] == "NIKA-INFER-002"
    text = run(wf("mock-json"), engine_env={"NIKA_MOCK_JSON": "[1, 2]"})
    assert text.tasks["t"].output == "[1, 2]"  # without a contract the output is the JSON text


def test_an_unconfigured_or_broken_fixture_names_its_variable(run, tmp_path):
    for model, env in (
        ("mock-json", {}),
        ("mock-error", {"NIKA_MOCK_ERROR": "{not json"}),
        ("mock-json", {"NIKA_MOCK_JSON": str(tmp_path / "absent.json")}),
        ("mock-error", {"NIKA_MOCK_ERROR": '{"code": "oops", "message": "m"}'}),
    ):
        err = run(wf(model), engine_env=env).tasks["t"].error
        var = "NIKA_MOCK_JSON" if model == "mock-json" else "NIKA_MOCK_ERROR"
        assert err["code"] == "NIKA-PROVIDER-001" and var in err["message"], (model, env, err)


def test_mock_streaming_streams_the_fixture_as_chunk_events(run):
    pieces = ["The answer is forty-two, ", "said the fixture ", "at some length, ", "so that ", "the coalesced "]
    pieces += ["pieces make more than one frame of ", "the event stream."]
    fixture = {"chunks": pieces, "thinking": ["let me think"], "tokens_in": 3, "tokens_out": 11}
    seen: list[dict] = []
    result = run(wf("mock-streaming"), engine_env={"NIKA_MOCK_STREAMING": json.dumps(fixture)}, on_event=seen.append)
    assert result.tasks["t"].output == "".join(pieces)
    chunks = [e for e in seen if e["type"] == "infer.chunk"]
    assert "".join(e["delta"] for e in chunks if e["channel"] == "text") == "".join(pieces)
    assert [e["delta"] for e in chunks if e["channel"] == "thinking"] == ["let me think"]
    assert [e["seq"] for e in chunks] == list(range(1, len(chunks) + 1))
    assert 2 <= len([e for e in chunks if e["channel"] == "text"]) < len(pieces)  # coalesced, still several
    assert {(e["task"], e["model"]) for e in chunks} == {("t", "mock/mock-streaming")}
    call = next(e for e in seen if e["type"] == "verb.invoked" and e.get("phase") == "model_call")
    assert (call["tokens_in"], call["tokens_out"]) == (3, 11)
    # without a listener: the same reply, no chunk frames
    quiet = run(wf("mock-streaming"), engine_env={"NIKA_MOCK_STREAMING": json.dumps(fixture)})
    assert quiet.tasks["t"].output == "".join(pieces)
    assert not [e for e in quiet.events if e["type"] == "infer.chunk"]


def test_mock_streaming_string_fixture_and_contract(run):
    words = run(wf("mock-streaming"), engine_env={"NIKA_MOCK_STREAMING": '"two  words "'})
    assert words.tasks["t"].output == "two  words "
    good = run(wf("mock-streaming", more=SCHEMA), engine_env={"NIKA_MOCK_STREAMING": '["{\\"n\\"", ": 4}"]'})
    assert good.tasks["t"].output == {"n": 4}
    bad = run(wf("mock-streaming", more=SCHEMA), engine_env={"NIKA_MOCK_STREAMING": '"not json"'})
    assert bad.tasks["t"].error["code"] == "NIKA-INFER-002"
    for broken in ('{"chunks": 5}', '{"chunks": ["a"], "tokens_out": -1}'):
        err = run(wf("mock-streaming"), engine_env={"NIKA_MOCK_STREAMING": broken}).tasks["t"].error
        assert err["code"] == "NIKA-PROVIDER-001" and "NIKA_MOCK_STREAMING" in err["message"], broken
