"""A user JSON Schema never reaches outside itself: `$ref` to http/https/file is not fetched.

Spec 10 §net: a builtin that reaches a URL is a `net` effect under the SSRF floor; spec 01 §permits:
`permits: {}` grants zero fs and zero net. Evaluating a schema is pure compute, so every evaluation
(`nika:validate`, `infer.schema`, `agent.schema`, MCP input schemas) uses a registry with no retriever.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from runtime.agent import schema_problem
from runtime.errors import TaskError
from runtime.tools.mcp_client import _arg_problem
from runtime.verbs.infer import validate_output


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """A loopback HTTP server that serves a schema and counts every request it receives."""
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/s.json", hits
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_nika_validate_never_fetches_a_remote_ref(run, server, tmp_path: Path) -> None:
    """`nika:validate` under `permits: {}`: an http `$ref` is a typed failure and the server sees no request."""
    url, hits = server
    marker = tmp_path / "exists.json"
    marker.write_text('{"type": "string"}')
    result = run(
        f"""\
        nika: v1
        workflow: {{ id: refs }}
        permits: {{ tools: ["nika:validate"] }}
        tasks:
          net:
            invoke:
              tool: "nika:validate"
              args: {{ data: 3, schema: {{ $ref: "{url}" }} }}
          file:
            invoke:
              tool: "nika:validate"
              args: {{ data: 3, schema: {{ $ref: "{marker.as_uri()}" }} }}
        """
    )
    assert hits == []
    for tid in ("net", "file"):
        assert result.tasks[tid].status == "failure"
        assert result.tasks[tid].error["code"] == "NIKA-BUILTIN-VALIDATE-001"


def test_infer_schema_never_fetches_a_remote_ref(server) -> None:
    """`infer.schema` with a remote `$ref` fails typed (INFER-002) without a request."""
    url, hits = server
    with pytest.raises(TaskError) as e:
        validate_output(3, {"$ref": url})
    assert e.value.code == "NIKA-INFER-002"
    assert "never fetched" in e.value.message
    assert hits == []


def test_agent_and_mcp_schemas_never_fetch_a_remote_ref(server, tmp_path: Path) -> None:
    """`agent.schema` and an MCP tool's input schema resolve `$ref` only inside themselves."""
    url, hits = server
    marker = tmp_path / "m.json"
    marker.write_text('{"type": "string"}')
    for ref in (url, marker.as_uri()):
        assert "never fetched" in (schema_problem(3, {"$ref": ref}) or "")
        assert "never fetched" in (_arg_problem({"a": 1}, {"$ref": ref}) or "")
    assert hits == []


def test_local_refs_still_resolve() -> None:
    """Never refuse what the spec allows: a `$ref` into the schema's own `$defs` still works."""
    schema = {"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s"}
    assert schema_problem("x", schema) is None
    assert schema_problem(3, schema) is not None
