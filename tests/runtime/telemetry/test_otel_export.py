"""OpenTelemetry export: the span tree of a run (SDK in-memory exporter), the OTLP/HTTP wire (a
loopback receiver), and an endpoint that is down or silent never slowing or failing the run."""

from __future__ import annotations

import asyncio
import io
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import opentelemetry.sdk  # noqa: F401 - the test extra installs [otel]: missing, this module fails to load
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from checker.engine.pipeline import compile_text
from nika.commands.run import run_command
from runtime.engine.inputs import bind_inputs
from runtime.engine.options import Options
from runtime.engine.run import Run
from runtime.telemetry.otel_sink import OtelConfigError, OtelSink, otel_endpoint
from runtime.verbs import VERBS

SECRET = "sk-test-0123456789abcdef"
WF = """\
nika: v1
workflow: { id: traced }
model: mock/echo
permits: { exec: ["echo"], tools: ["nika:assert"] }
secrets:
  api: { source: env, key: NIKA_TEST_API_KEY, egress: [{ to: "exec" }, { to: "nika:assert" }] }
tasks:
  ask:
    infer: { prompt: "hello", max_tokens: 10 }
  shout:
    with: { said: "${{ tasks.ask.output }}" }
    exec: { command: ["echo", "${{ with.said }} ${{ secrets.api }}"] }
  check:
    with: { said: "${{ tasks.shout.output }}" }
    retry: { max_attempts: 2, backoff_ms: 1, on_codes: ["NIKA-BUILTIN-ASSERT-001"] }
    invoke:
      tool: "nika:assert"
      args: { condition: "${{ with.said == 'bye' }}", message: "${{ with.said }}" }
  after:
    with: { ok: "${{ tasks.check.output }}" }
    exec: { command: ["echo", "${{ with.ok }}"] }
"""


def run_with(sink: OtelSink, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("NIKA_TEST_API_KEY", SECRET)
    compiled = compile_text(WF, str(tmp_path / "wf.nika.yaml"), str(tmp_path))
    assert not [d for d in compiled.diagnostics if d.is_error], [d.message for d in compiled.diagnostics]
    assert compiled.workflow is not None
    opts = Options(trace_dir=tmp_path / "traces", on_event=sink)
    result = asyncio.run(
        Run(compiled, bind_inputs(compiled.workflow, {}), opts, verbs=VERBS, workdir=tmp_path).execute()
    )
    assert sink.close() is None
    return result.workflow_state


@pytest.fixture
def spans(tmp_path, monkeypatch):
    exporter = InMemorySpanExporter()
    state = run_with(OtelSink(exporter, flush_timeout_s=2), tmp_path, monkeypatch)
    assert state == "failure"
    return {s.name: s for s in exporter.get_finished_spans()}, exporter.get_finished_spans()


def test_one_trace_per_run_a_span_per_task_and_attempt(spans):
    by_name, all_spans = spans
    assert len({s.context.trace_id for s in all_spans}) == 1
    root = by_name["nika run traced"]
    assert root.parent is None and root.status.status_code == StatusCode.ERROR
    for tid in ("ask", "shout", "check", "after"):
        assert by_name[f"task {tid}"].parent.span_id == root.context.span_id
    check = by_name["task check"]
    attempts = sorted(
        (s for s in all_spans if s.parent and s.parent.span_id == check.context.span_id), key=lambda s: s.start_time
    )
    assert [s.attributes["nika.attempt"] for s in attempts] == [1, 2]
    assert all(s.attributes["gen_ai.tool.name"] == "nika:assert" for s in attempts)
    assert all(s.status.status_code == StatusCode.ERROR for s in attempts)
    assert attempts[0].end_time <= attempts[1].start_time  # the retry follows the failed attempt
    assert check.status.status_code == StatusCode.ERROR
    assert check.status.description.startswith("NIKA-BUILTIN-ASSERT-001: ")
    assert check.attributes["error.type"] == "NIKA-BUILTIN-ASSERT-001"
    assert by_name["task ask"].status.status_code == StatusCode.OK
    after = by_name["task after"]  # never started: a point span, cancelled, status unset
    assert after.attributes["nika.task.status"] == "cancelled" and after.status.status_code == StatusCode.UNSET


def test_a_model_call_is_a_genai_child_span_of_its_attempt(spans):
    by_name, all_spans = spans
    chat = by_name["chat echo"]
    attempt = next(s for s in all_spans if s.context.span_id == chat.parent.span_id)
    assert attempt.parent.span_id == by_name["task ask"].context.span_id
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.provider.name"] == "mock"
    assert chat.attributes["gen_ai.request.model"] == "echo"
    assert (chat.attributes["gen_ai.usage.input_tokens"], chat.attributes["gen_ai.usage.output_tokens"]) == (1, 1)
    assert attempt.start_time <= chat.start_time <= chat.end_time <= attempt.end_time


def test_secrets_are_masked_in_every_span(spans):
    _, all_spans = spans
    texts = []
    for s in all_spans:
        texts += [s.name, s.status.description or "", *map(str, s.attributes.values())]
        texts += [str(v) for e in s.events for v in e.attributes.values()]
    blob = "\n".join(texts)
    assert "«redacted»" in blob  # the failure message carried the secret: masked, not dropped
    assert SECRET not in blob


def test_agent_tool_calls_and_builtin_events_map_without_the_sdk_guessing():
    exporter = InMemorySpanExporter()
    sink = OtelSink(exporter, flush_timeout_s=1)
    t = 1_000_000_000
    for ev in [
        {"type": "workflow.started", "task": None, "workflow": "w", "at": t},
        {"type": "task.started", "task": "a", "note": "agent", "at": t + 10},
        {"type": "tool.invoked", "task": "a", "phase": "agent", "tool": "nika:read", "status": "success",
         "duration_ms": 0.5, "turn": 1, "at": t + 2_000_000},
        {"type": "tool.invoked", "task": "a", "event": "log", "message": "hi", "at": t + 3_000_000},
        {"type": "task.completed", "task": "a", "note": "agent", "at": t + 4_000_000},
        {"type": "workflow.completed", "task": None, "workflow": "w", "state": "success", "at": t + 5_000_000},
    ]:  # fmt: skip
        sink(ev)
    assert sink.close() is None
    by_name = {s.name: s for s in exporter.get_finished_spans()}
    tool = by_name["execute_tool nika:read"]
    assert (
        tool.attributes["gen_ai.operation.name"] == "execute_tool"
        and tool.attributes["gen_ai.tool.name"] == "nika:read"
    )
    assert (tool.start_time, tool.end_time) == (t + 1_500_000, t + 2_000_000)
    assert [e.name for e in by_name["attempt 1"].events] == ["nika.log"]
    assert by_name["nika run w"].status.status_code == StatusCode.OK


def test_export_is_off_by_default_and_on_by_the_standard_variables():
    assert otel_endpoint({}) is None
    assert otel_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318/"}) == "http://h:4318/v1/traces"
    assert otel_endpoint({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h/x"}) == "http://h/x"
    assert otel_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_SDK_DISABLED": "true"}) is None
    assert otel_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_TRACES_EXPORTER": "none"}) is None
    with pytest.raises(OtelConfigError, match="grpc"):
        otel_endpoint({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})


# -- the wire -----------------------------------------------------------------------------------


class _Receiver(BaseHTTPRequestHandler):
    bodies: ClassVar[list[tuple[str, str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).bodies.append((self.path, self.headers.get("Content-Type", ""), body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _cli_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, endpoint: str, timeout: str
) -> tuple[int, str, list[float]]:
    """The exit code, standard error, and the bound each closing sink waited within (seconds)."""
    from runtime.telemetry import otel_sink

    monkeypatch.setenv("NIKA_TEST_API_KEY", SECRET)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", timeout)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wf.nika.yaml").write_text(WF)
    bounds: list[float] = []
    close = otel_sink.OtelSink.close

    def recorded(self: otel_sink.OtelSink) -> str | None:
        bounds.append(self.flush_timeout_s)
        return close(self)

    monkeypatch.setattr(otel_sink.OtelSink, "close", recorded)
    err = io.StringIO()
    code = run_command("wf.nika.yaml", trace_dir="traces", out=io.StringIO(), err=err)
    return code, err.getvalue(), bounds


def test_spans_reach_a_loopback_otlp_http_receiver(tmp_path, monkeypatch):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    _Receiver.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        code, err, _ = _cli_run(tmp_path, monkeypatch, f"http://127.0.0.1:{server.server_port}", "2")
    finally:
        server.shutdown()
        server.server_close()
    assert code == 1 and "telemetry" not in err  # the workflow's own failure; export went through
    assert _Receiver.bodies and {(p, c) for p, c, _ in _Receiver.bodies} == {("/v1/traces", "application/x-protobuf")}
    names = set()
    for _, _, body in _Receiver.bodies:
        req = ExportTraceServiceRequest.FromString(body)
        for rs in req.resource_spans:
            assert {a.key: a.value.string_value for a in rs.resource.attributes}["service.name"] == "nika"
            names |= {s.name for ss in rs.scope_spans for s in ss.spans}
            assert SECRET.encode() not in body
    assert {"nika run traced", "task ask", "chat echo", "task check"} <= names


def test_a_down_endpoint_never_slows_or_fails_the_run(tmp_path, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on: connection refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, err, bounds = _cli_run(tmp_path, monkeypatch, f"http://127.0.0.1:{port}", "0.3")
    assert code == 1 and "ok shout" in err  # the same outcome as without telemetry
    assert bounds == [0.3]  # what the run waits for the exporter (measured: benchmarks/bounds.py)
    assert err.count("telemetry:") == 1 and "the run is unaffected" in err


def test_a_silent_endpoint_costs_at_most_the_bound(tmp_path, monkeypatch):
    silent = socket.socket()  # accepts connections (the backlog) and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        code, err, bounds = _cli_run(tmp_path, monkeypatch, f"http://127.0.0.1:{silent.getsockname()[1]}", "0.3")
    finally:
        silent.close()
    assert code == 1 and "workflow failure" in err
    assert bounds == [0.3]  # the 0.3 s bound on the export and the wait after the run, not the SDK's 10 s
    assert "telemetry:" in err


def test_neither_check_nor_a_run_without_otel_variables_loads_the_sdk(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "wf.nika.yaml").write_text(WF)
    code = (
        "import sys, io, contextlib\n"
        "from nika.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    main(['check', 'wf.nika.yaml'])\n"
        "    checked = [m for m in sys.modules if m.startswith('opentelemetry')]\n"
        "    main(['run', 'wf.nika.yaml', '--trace-dir', 't'])\n"
        "print(checked, [m for m in sys.modules if m.startswith('opentelemetry')])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env |= {"PYTHONPATH": str(Path(__file__).resolve().parents[3]), "NIKA_TEST_API_KEY": SECRET}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.stdout.strip() == "[] []", proc.stdout + proc.stderr


def test_doctor_says_whether_export_is_on_and_where():
    from nika.commands.doctor import OK, WARN, diagnose

    def line(env):
        return next(x for x in diagnose(Path("/nonexistent"), env) if x.topic == "otel")

    assert line({}).status == OK and line({}).message.startswith("export off")
    on = line({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_TIMEOUT": "3"})
    assert on.status == OK and on.message == "export on: OTLP/HTTP to http://127.0.0.1:4318/v1/traces (bound 3 s)"
    grpc = line({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
    assert grpc.status == WARN and "grpc" in grpc.message
