"""examples/research-digest.nika.yaml end to end under `nika run`: fetch (metadata + article) from a
loopback server, summarise with mock/echo, notify a loopback webhook with the digest."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import serving

from nika.commands.run import run_command
from tests.runtime.extract_pages import ARTICLE

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "research-digest.nika.yaml"
POSTS: list[bytes] = []


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *a: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8") -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(200, ARTICLE.encode()) if self.path == "/post" else self._send(404, b"")

    def do_POST(self) -> None:
        POSTS.append(self.rfile.read(int(self.headers.get("content-length") or 0)))
        self._send(204, b"")


@pytest.fixture
def site() -> Iterator[str]:
    with serving(_Handler) as port:
        yield f"http://127.0.0.1:{port}"


def test_research_digest_runs_end_to_end(site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NIKA_FETCH_ALLOW_PRIVATE", "127.0.0.1")
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = run_command(
        str(EXAMPLE),
        var_pairs=[f"url={site}/post", f"hook={site}/hook"],
        trace_dir=str(tmp_path / "traces"),
        out=out,
        err=err,
    )
    assert code == 0, err.getvalue()
    result = json.loads(out.getvalue())
    assert result["title"] == "Tide pools of Brittany | Shore Notes"
    assert "granite shelves" in result["summary"] and "BUY SHELLS" not in result["summary"]
    sent = json.loads(POSTS[-1])
    assert sent["message"] == "New digest: Tide pools of Brittany | Shore Notes" and sent["severity"] == "info"
    assert sent["data"]["url"] == f"{site}/post" and "granite shelves" in sent["data"]["summary"]


def test_research_digest_refuses_an_ungranted_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The URL comes from an input: the run judges it against permits.net.http before any request."""
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    code = run_command(
        str(EXAMPLE),
        output_format="json",
        var_pairs=["url=https://elsewhere.test/post", "hook=https://hooks.example.com/x"],
        trace_dir=str(tmp_path / "traces"),
        out=out,
        err=err,
    )
    report = json.loads(out.getvalue())
    assert code == 1 and report["tasks"]["article"]["error"]["code"] == "NIKA-SEC-004"
    assert report["tasks"]["notify"]["status"] == "cancelled"
