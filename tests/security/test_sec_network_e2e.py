"""The network planes end to end: one workflow through `nika run` (the CLI's run command, the JSON
report, the journal) against two loopback servers, 127.0.0.1 and 127.0.0.2, both granted by
`permits.net.http`, and `nika check` clean on it.

* `hop`: a fetch carrying a secret sanctioned for 127.0.0.1 is redirected to 127.0.0.2: refused at
  the hop (NIKA-SEC-004, both hosts named, the refusal journaled); 127.0.0.2 never hears of it;
* `bomb`: a body encoded twice: refused, not inflated;
* `drip`: a server dripping a byte at a time meets the engine's network deadline (made small here);
* `mail`: an email to a recipient an input chose, with no grant: refused before the relay is asked;
* the secret is in none of the report, the journal or the event stream.
"""

from __future__ import annotations

import gzip
import io
import json
import time
import zlib
from collections.abc import Iterator
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from checker.project.admission import admit
from nika.commands.run import run_command
from runtime.engine.inputs import compile_file

KEY = "rk-e2e-93b4d1a7"


class _Far(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def log_message(self, *a: Any) -> None:
        pass

    def do_GET(self) -> None:
        _Far.hits.append(self.path)
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()


class _Near(BaseHTTPRequestHandler):
    far = ""

    def log_message(self, *a: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/go":
            self.send_response(307)
            self.send_header("location", f"{_Near.far}/landed")
            self.send_header("content-length", "0")
            self.end_headers()
        elif self.path == "/stacked":
            body = _stacked()
            self.send_response(200)
            self.send_header("content-encoding", "deflate, gzip")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/drip":
            self.send_response(200)
            self.send_header("content-length", "150")
            self.end_headers()
            try:
                for _ in range(150):
                    self.wfile.write(b".")
                    self.wfile.flush()
                    time.sleep(0.02)
            except (BrokenPipeError, ConnectionResetError):
                pass


@cache
def _stacked() -> bytes:
    """Deflate inside gzip: 40 MiB in a few hundred bytes (made before the run, not while it waits)."""
    return gzip.compress(zlib.compress(b"\0" * (40 * 1024 * 1024), 9))


def _serve(host: str, handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    import threading

    srv = ThreadingHTTPServer((host, 0), handler)
    srv.daemon_threads = True
    srv.block_on_close = False
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return srv


@pytest.fixture
def servers() -> Iterator[tuple[int, int]]:
    try:
        far = _serve("127.0.0.2", _Far)
    except OSError:
        pytest.skip("this machine does not route 127.0.0.2 to loopback")
    near = _serve("127.0.0.1", _Near)
    _stacked()
    _Far.hits = []
    _Near.far = f"http://127.0.0.2:{far.server_address[1]}"
    yield near.server_address[1], far.server_address[1]
    for s in (near, far):
        s.shutdown()
        s.server_close()


_WF = """\
nika: v1
workflow: {{ id: planes }}
inputs:
  to: {{ type: string, default: "chair@far.example" }}
permits:
  net: {{ http: ["127.0.0.1", "127.0.0.2"] }}
  tools: ["nika:fetch", "nika:notify"]
secrets:
  relay_key:
    source: env
    key: NIKA_E2E_RELAY_KEY
    egress: [{{ to: "nika:fetch", host: "127.0.0.1" }}]
tasks:
  hop:
    timeout: "60s"  # a task `timeout:` governs: only `drip` runs under the engine's (small) deadline
    invoke:
      tool: "nika:fetch"
      args: {{ url: "http://127.0.0.1:{p}/go", mode: raw, headers: {{ X-Relay-Key: "${{{{ secrets.relay_key }}}}" }} }}
  bomb:
    timeout: "60s"
    invoke: {{ tool: "nika:fetch", args: {{ url: "http://127.0.0.1:{p}/stacked", mode: raw }} }}
  drip:
    invoke: {{ tool: "nika:fetch", args: {{ url: "http://127.0.0.1:{p}/drip", mode: raw }} }}
  mail:
    timeout: "60s"
    invoke: {{ tool: "nika:notify", args: {{ channel: email, target: "${{{{ inputs.to }}}}", message: "done" }} }}
"""


def test_one_workflow_meets_every_network_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, servers: tuple[int, int]
) -> None:
    near, _far = servers
    wf = tmp_path / "planes.nika.yaml"
    wf.write_text(_WF.format(p=near))
    compiled, why = compile_file(str(wf))
    assert compiled is not None and not admit(compiled, str(wf)).errors, why  # `nika check` is clean on it
    for k, v in {
        "NIKA_E2E_RELAY_KEY": KEY,
        "NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1,127.0.0.2",
        "NIKA_FETCH_DEADLINE_S": "0.3",
        "NIKA_SMTP_HOST": "127.0.0.1",
        "NIKA_SMTP_PORT": "9",  # nothing listens: a refusal must come before any connection
        "NIKA_SMTP_FROM": "runs@build.example",
    }.items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(tmp_path)
    out, err, events = io.StringIO(), io.StringIO(), tmp_path / "events.ndjson"
    code = run_command(
        str(wf), output_format="json", trace_dir=str(tmp_path / "t"), events=f"ndjson:{events}", out=out, err=err
    )
    report = json.loads(out.getvalue())
    tasks = report["tasks"]
    assert code != 0

    hop = tasks["hop"]["error"]
    assert hop["code"] == "NIKA-SEC-004" and hop["details"]["plane"] == "egress"
    assert "127.0.0.1" in hop["message"] and "127.0.0.2" in hop["message"]
    assert _Far.hits == []

    assert tasks["bomb"]["error"]["code"] == "NIKA-BUILTIN-FETCH-001"
    assert "encoded 2 times" in tasks["bomb"]["error"]["message"]
    assert tasks["drip"]["error"]["details"]["deadline_s"] == 0.3
    mail = tasks["mail"]["error"]
    assert mail["code"] == "NIKA-SEC-004" and mail["details"]["plane"] == "mail"

    journal = "".join(p.read_text() for p in (tmp_path / "t").rglob("*.ndjson"))
    frames = [json.loads(line) for line in journal.splitlines()]
    egress = [
        {f["key"]: f["value"] for f in fr["fields"]}
        for fr in frames
        if fr["kind"] == "permit_checked" and any(f["value"] == "egress" for f in fr["fields"])
    ]
    assert [e["decision"] for e in egress] == ["allow", "deny"]  # the first hop sent, the redirect refused
    for where in (out.getvalue(), err.getvalue(), journal, events.read_text()):
        assert KEY not in where
