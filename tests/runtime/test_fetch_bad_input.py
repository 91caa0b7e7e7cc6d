"""Hostile and broken responses end as typed results within bounds (issue: bad input): a gzip
bomb, a 10 MB or binary robots.txt, garbage where HTML, a feed or a sitemap was expected."""

from __future__ import annotations

import contextlib
import functools
import gzip
import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from runtime import builtins
from runtime.errors import TaskError
from tests.runtime.builtins_harness import make_ctx

GARBAGE = random.Random(7).randbytes(1024) + b"<div><p>unclosed <b>tags <table><tr><td>cell" + b"\xff\xfe" * 100
BIG_ROBOTS = b"User-agent: *\nDisallow: /blocked\n" + b"# filler line of comments\n" * 400_000  # ~10 MB
HOME = b'<html><body><a href="/blocked">b</a><a href="/open">o</a></body></html>'
PAGE = b"<html><body><p>fine</p></body></html>"


@functools.cache
def _bomb() -> bytes:
    return gzip.compress(b"\0" * (33 * 1024 * 1024), compresslevel=6)  # ~33 KiB on the wire, 33 MiB inflated


class _Handler(BaseHTTPRequestHandler):
    robots = BIG_ROBOTS

    def log_message(self, *a: Any) -> None:
        pass

    def do_GET(self) -> None:
        headers = {"content-type": "text/html"}
        if self.path == "/bomb":
            body, headers = _bomb(), {"content-type": "text/html", "content-encoding": "gzip"}
        elif self.path == "/garbage":
            body = GARBAGE
        elif self.path.endswith("/robots.txt"):
            body = self.server.robots  # type: ignore[attr-defined]
            headers = {"content-type": "text/plain"}
        elif self.path == "/":
            body = HOME
        else:
            body = PAGE
        self.send_response(200)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client stopped at its cap
            self.wfile.write(body)


def _serve(robots: bytes) -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.robots = robots  # type: ignore[attr-defined]
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    yield from _serve(BIG_ROBOTS)


@pytest.fixture(scope="module")
def binary_robots() -> Iterator[str]:
    yield from _serve(b"\x89PNG\r\n\x1a\n\0\0\0 Disallow: /")


async def _fetch(tmp_path: Path, args: dict[str, Any]) -> Any:
    ctx, _ = make_ctx(tmp_path, env={"NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1"})
    return await builtins.call("nika:fetch", args, ctx)


async def test_gzip_bomb_stops_at_the_response_cap(base: str, tmp_path: Path) -> None:
    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, {"url": f"{base}/bomb", "mode": "raw"})
    assert e.value.code == "NIKA-BUILTIN-FETCH-001" and "32 MiB" in e.value.message


@pytest.mark.parametrize("mode", ["markdown", "article", "text", "links", "metadata"])
async def test_garbage_html_is_read_not_crashed_on(base: str, tmp_path: Path, mode: str) -> None:
    got = await _fetch(tmp_path, {"url": f"{base}/garbage", "mode": mode})
    if mode in ("markdown", "text"):
        assert "cell" in got and "unclosed" in got
    elif mode == "article":
        assert "unclosed" in got
    elif mode == "links":
        assert got == []
    else:
        assert got == {"og": {}, "twitter": {}}


@pytest.mark.parametrize("mode", ["feed", "sitemap", "jq"])
async def test_garbage_is_no_feed_sitemap_or_json(base: str, tmp_path: Path, mode: str) -> None:
    args = {"url": f"{base}/garbage", "mode": mode} | ({"jq": "."} if mode == "jq" else {})
    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, args)
    assert e.value.code == "NIKA-BUILTIN-FETCH-001"


async def test_a_10mb_robots_txt_is_read_up_to_its_first_512_kib(base: str, tmp_path: Path) -> None:
    """RFC 9309 §2.5: the parser reads at least 500 KiB and may stop there; the rules it read apply."""
    out = await _fetch(tmp_path, {"url": f"{base}/", "traverse": {"max_pages": 5}})
    assert [p["url"] for p in out["pages"]] == [f"{base}/", f"{base}/open"]


async def test_a_binary_robots_txt_allows_all(binary_robots: str, tmp_path: Path) -> None:
    out = await _fetch(tmp_path, {"url": f"{binary_robots}/", "traverse": {"max_pages": 5}})
    assert [p["url"] for p in out["pages"]] == [f"{binary_robots}{p}" for p in ("/", "/blocked", "/open")]


@pytest.mark.parametrize("mode", ["markdown", "article", "text", "links", "metadata", "selector"])
def test_deep_nesting_is_refused_before_parsing_and_shallower_is_read_whole(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The parsers slow with the square of the depth and the converter stops descending past ~1,020
    levels: 50,000 levels fail before any parser sees them (FETCH-001 naming the limit); 900
    levels are read whole."""
    from selectolax import lexbor

    from runtime.extract import Page, extractor

    def page(n: int) -> Page:
        return Page("https://d.example/", b"<html><body>" + b"<div>" * n + b"deep" + b"</div>" * n, "text/html")

    parsed: list[int] = []
    real = lexbor.LexborHTMLParser

    def spy(html: str, *args: Any, **kwargs: Any) -> Any:
        parsed.append(len(html))
        return real(html, *args, **kwargs)

    monkeypatch.setattr(lexbor, "LexborHTMLParser", spy)
    with pytest.raises(TaskError) as e:
        extractor(mode)(page(50_000), {"selector": "div"})
    assert e.value.code == "NIKA-BUILTIN-FETCH-001" and "1000 deep" in e.value.message
    assert parsed == []  # refused by the depth scan, before the parser (whose cost grows with depth²)
    if mode in ("markdown", "text"):
        assert extractor(mode)(page(900), {}) == "deep"
