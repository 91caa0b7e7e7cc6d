"""`nika run --events ndjson[:PATH|-]`: every event as one JSON line as it happens, valid against
docs/events.schema.json, equal to the journal; a bad option refuses before the run; a failing sink
never changes the run."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

from nika.commands.run import run_command
from runtime.journal.read import read_run
from runtime.journal.write import KINDS
from runtime.telemetry.event_sinks import Fanout, NdjsonSink

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "docs" / "events.schema.json").read_text())
SECRET = "sk-test-0123456789abcdef"

WF = """\
nika: v1
workflow: { id: stream }
model: mock/echo
permits: { exec: ["echo"], tools: ["nika:log"] }
secrets:
  api: { source: env, key: NIKA_TEST_API_KEY, egress: [{ to: "exec" }, { to: "outputs" }] }
tasks:
  ask:
    infer: { prompt: "hello", max_tokens: 10 }
  shout:
    with: { said: "${{ tasks.ask.output }}" }
    exec: { command: ["echo", "${{ with.said }} key=${{ secrets.api }}"] }
  never:
    when: "${{ with.said == 'nope' }}"
    with: { said: "${{ tasks.ask.output }}" }
    invoke: { tool: "nika:log", args: { message: "${{ with.said }}" } }
outputs:
  said: "${{ tasks.shout.output }}"
"""


@pytest.fixture
def wf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NIKA_TEST_API_KEY", SECRET)
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "stream.nika.yaml"
    p.write_text(WF)
    return p


def run(wf: Path, events: str, fmt: str = "text") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_command(str(wf), output_format=fmt, trace_dir="traces", events=events, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_the_stream_to_a_file_is_the_journal_as_schema_valid_lines(wf, tmp_path):
    code, out, _ = run(wf, "ndjson:events.ndjson", fmt="json")
    assert code == 0
    text = (tmp_path / "events.ndjson").read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for event in lines:
        validator.validate(event)
    report = json.loads(out)
    assert lines == report["events"] == read_run(Path(report["trace"])).events
    types = [e["type"] for e in lines]
    assert types[0] == "workflow.started" and types[-1] == "workflow.completed"
    assert {"task.started", "verb.invoked", "permit.checked", "task.completed", "task.skipped"} <= set(types)
    call = next(e for e in lines if e["type"] == "verb.invoked")
    assert (call["task"], call["provider"], call["tokens_in"], call["tokens_out"]) == ("ask", "mock", 1, 1)
    assert json.loads(lines[-1]["outputs"]) == {"said": "hello key=«redacted»"}
    assert SECRET not in text  # the run's redactor ran before the stream


def test_the_stream_on_stdout_holds_only_event_lines(wf):
    code, out, err = run(wf, "ndjson")
    assert code == 0 and out.endswith("\n")
    assert all(json.loads(line)["type"] for line in out.splitlines())  # no outputs block mixed in
    assert "ok shout" in err and "workflow success" in err  # people still get the progress view
    assert run(wf, "ndjson:-")[1].count("\n") == out.count("\n")


def test_each_line_is_flushed_as_it_happens(tmp_path):
    path = tmp_path / "live.ndjson"
    sink = NdjsonSink.open(str(path))
    seen: list[int] = []

    def probe(event: dict) -> None:  # a reader following the file sees every event already written
        seen.append(len(path.read_text().splitlines()))

    fan = Fanout([("stream", sink), ("probe", probe)])
    for i in range(3):
        fan({"type": "task.started", "task": f"t{i}", "at": i})
    assert seen == [1, 2, 3]
    assert fan.close() == []


@pytest.mark.parametrize(
    ("events", "fmt", "says"),
    [
        ("xml", "text", "the one event format is ndjson"),
        ("ndjson:", "text", "give a path after `ndjson:`"),
        ("ndjson:-", "json", "both write to standard output"),
        ("ndjson:no/such/dir/x.ndjson", "text", "cannot write no/such/dir/x.ndjson"),
    ],
)
def test_a_bad_events_option_refuses_before_the_run(wf, tmp_path, events, fmt, says):
    code, _, err = run(wf, events, fmt)
    assert code == 1 and says in err and err.count("\n") == 1
    assert not (tmp_path / "traces").exists()  # nothing ran


def test_a_failing_sink_is_dropped_and_reported_never_changing_the_run(wf, monkeypatch):
    def broken(self, event):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(NdjsonSink, "__call__", broken)
    code, out, err = run(wf, "ndjson:events.ndjson")
    assert code == 0 and json.loads(out)["said"].startswith("hello")
    assert "nika run: note: the event stream stopped: OSError" in err and err.count("event stream stopped") == 1


def test_the_schema_names_exactly_the_journal_kinds():
    assert set(SCHEMA["properties"]["type"]["enum"]) == {k.replace("_", ".", 1) for k in KINDS}
