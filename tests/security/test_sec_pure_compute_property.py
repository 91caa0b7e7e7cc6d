"""Property: a workflow with zero authority reads no environment variable, no file, no URL.

Spec 01 §permits: a workflow granted no fs, net, exec or env is limited to pure compute. Hypothesis
builds workflows of pure builtins (`nika:jq`, `nika:validate`, `nika:convert`) and `output:`
bindings from hostile fragments (`$ENV`, `env`, `input_filename`, `$__loc__`, remote and file
`$ref`s, YAML aliases) and checks that the run report, the journal and a loopback server saw
nothing outside the grant: no canary value, no request, no new file.
"""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path
from typing import ClassVar

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rt_helpers import run_yaml

CANARY_NAME, CANARY = "NIKA_PROP_CANARY", "prop-canary-5be1d0c4"

JQ = st.sampled_from(
    [
        "$ENV",
        "env",
        f"$ENV.{CANARY_NAME}",
        f"env.{CANARY_NAME}",
        "[env[]]",
        "$ENV | tostring",
        "input_filename",
        "$__loc__",
        "[$ENV | to_entries[] | .value]",
        "env | keys",
        "get_search_list",
    ]
)


def _refs(url: str, marker: Path) -> st.SearchStrategy[str]:
    return st.sampled_from([url, marker.as_uri(), "file:///etc/passwd", f"{url}#/defs/x"])


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Counter.hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b'{"type": "string"}')

    def log_message(self, *a: object) -> None:
        pass


def _serve() -> tuple[http.server.ThreadingHTTPServer, str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counter)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}/s.json"


def _workflow(programs: list[str], ref: str, alias_text: str) -> str:
    tasks = []
    for i, prog in enumerate(programs):
        p = json.dumps(prog)
        tasks.append(f'  j{i}:\n    invoke:\n      tool: "nika:jq"\n')
        tasks.append(f"      args: {{ input: null, expression: {p} }}\n    output: {{ b: {p} }}\n")
    r, a = json.dumps(ref), json.dumps(alias_text)
    tasks.append(
        f'  v:\n    invoke:\n      tool: "nika:validate"\n      args: {{ data: 1, schema: {{ $ref: {r} }} }}\n'
    )
    tasks.append(f'  c:\n    invoke:\n      tool: "nika:convert"\n      args: {{ input: {a}, from: yaml, to: json }}\n')
    return (
        "nika: v1\nworkflow: { id: prop }\n"
        'permits: { tools: ["nika:jq", "nika:validate", "nika:convert"] }\n'
        "tasks:\n" + "".join(tasks)
    )


def test_zero_authority_workflows_touch_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(CANARY_NAME, CANARY)
    marker = tmp_path / "marker.json"
    marker.write_text('{"type": "string"}')
    httpd, url = _serve()
    _Counter.hits = []
    try:

        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        @given(
            st.lists(JQ, min_size=1, max_size=3),
            _refs(url, marker),
            st.sampled_from(["a: &a [1,2]\nb: *a\n", "x: 1\n", "&a [*a]"]),
        )
        def case(programs: list[str], ref: str, alias_text: str) -> None:
            work = tmp_path / "w"
            work.mkdir(exist_ok=True)
            before = {p for p in work.rglob("*") if "traces" not in p.parts}
            result = run_yaml(_workflow(programs, ref, alias_text), work)
            seen = json.dumps(result.report(), default=str)
            journal = "".join(p.read_text() for p in (work / "traces").rglob("*.ndjson"))
            assert CANARY not in seen and CANARY not in journal
            assert CANARY_NAME not in seen.replace(f"env.{CANARY_NAME}", "").replace(f"$ENV.{CANARY_NAME}", "")
            assert _Counter.hits == []
            after = {p for p in work.rglob("*") if "traces" not in p.parts}
            assert after - before <= {work / "wf.nika.yaml"}
            assert result.tasks["v"].status == "failure"

        case()
    finally:
        httpd.shutdown()
        httpd.server_close()
