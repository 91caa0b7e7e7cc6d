"""Every response is bounded in size and every exchange in time, whatever the wire holds; a URL
the engine cannot reach is a typed refusal, never an engine error.

* Decoding (one bounded decoder, runtime/net/decode.py): a body encoded more than once is refused
  before anything is inflated; a single coding is inflated in small steps under the cap, so memory
  stays near the cap however far the body would expand.
* The network deadline (runtime/net/client.py `deadline_s`): a task without `timeout:` gets the
  engine's total deadline for the whole exchange (configured small here: `NIKA_FETCH_DEADLINE_S`),
  so a server that drips a byte at a time cannot hold a task; asserted on the typed error.
* The one URL parser (runtime/net/url.py): a malformed port or redirect `Location` is
  NIKA-BUILTIN-FETCH-001 (a notify target NIKA-BUILTIN-NOTIFY-001), never NIKA-IMPL-001.
"""

from __future__ import annotations

import contextlib
import gzip
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from functools import cache
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from builtins_harness import make_ctx
from rt_helpers import serving

from runtime import builtins
from runtime.errors import TaskError
from runtime.net import client

MiB = 1024 * 1024


@cache
def _zeros_gz(n: int) -> bytes:
    return gzip.compress(b"\0" * n, compresslevel=9, mtime=0)


class _Wire(BaseHTTPRequestHandler):
    def log_message(self, *a: Any) -> None:
        pass

    def do_GET(self) -> None:
        port = self.server.server_address[1]
        if self.path == "/stacked":  # deflate inside gzip: two layers, a few hundred bytes on the wire
            self._send(200, {"content-encoding": "deflate, gzip"}, gzip.compress(zlib.compress(b"\0" * (48 * MiB), 9)))
        elif self.path == "/inflates":  # one layer that inflates a thousand times
            self._send(200, {"content-encoding": "gzip"}, _zeros_gz(48 * MiB))
        elif self.path == "/fits":
            self._send(200, {"content-encoding": "gzip", "content-type": "text/plain"}, gzip.compress(b"fits"))
        elif self.path == "/unasked":
            self._send(200, {"content-encoding": "compress"}, b"\x1f\x9d\x90")
        elif self.path == "/drip":  # headers at once, then one byte every 20 ms for ~4 s
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", "200")
            self.end_headers()
            try:
                for _ in range(200):
                    self.wfile.write(b".")
                    self.wfile.flush()
                    time.sleep(0.02)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif self.path == "/bad-location":
            self._send(302, {"location": f"http://[::1:{port}/x"}, b"")
        else:
            self._send(404, {}, b"")

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with serving(_Wire, block_on_close=False) as p:
        yield p


def _ctx(tmp_path: Path, **env: str):
    return make_ctx(tmp_path, env={"NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1", **env})[0]


async def _fails(tmp_path: Path, url: str, **env: str) -> TaskError:
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:fetch", {"url": url, "mode": "raw"}, _ctx(tmp_path, **env))
    return e.value


async def test_a_body_encoded_twice_is_refused_before_it_is_inflated(tmp_path: Path, port: int) -> None:
    e = await _fails(tmp_path, f"http://127.0.0.1:{port}/stacked")
    assert e.code == "NIKA-BUILTIN-FETCH-001" and "encoded 2 times" in e.message and not e.transient


async def test_one_coding_inflates_in_steps_under_the_cap(tmp_path: Path, port: int) -> None:
    """A 48 MiB body behind a 48 KiB gzip is cut at a 1 MiB cap with memory near the cap (the
    decoder inflating one wire chunk whole held tens of MiB at once)."""
    extra = {"env": {"NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1"}}
    _zeros_gz(48 * MiB)  # the server's body, made before memory is traced
    await client.request(extra, "GET", f"http://127.0.0.1:{port}/fits", {}, {})  # every module loaded
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with pytest.raises(TaskError) as e:
            await client.request(extra, "GET", f"http://127.0.0.1:{port}/inflates", {}, {}, max_bytes=MiB)
        grew = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert e.value.details["limit_bytes"] == MiB
    assert grew < 4 * MiB, grew


async def test_a_coding_fitting_the_cap_and_an_unasked_one(tmp_path: Path, port: int) -> None:
    out = await builtins.call("nika:fetch", {"url": f"http://127.0.0.1:{port}/fits", "mode": "raw"}, _ctx(tmp_path))
    assert out == "fits"
    e = await _fails(tmp_path, f"http://127.0.0.1:{port}/unasked")
    assert e.code == "NIKA-BUILTIN-FETCH-001" and "`compress`" in e.message


async def test_a_dripping_server_meets_the_network_deadline(tmp_path: Path, port: int) -> None:
    e = await _fails(tmp_path, f"http://127.0.0.1:{port}/drip", NIKA_FETCH_DEADLINE_S="0.25")
    assert e.code == "NIKA-BUILTIN-FETCH-001" and e.transient
    assert e.details["deadline_s"] == 0.25 and "NIKA_FETCH_DEADLINE_S" in e.message


async def test_a_bad_deadline_setting_is_a_typed_refusal(tmp_path: Path, port: int) -> None:
    e = await _fails(tmp_path, f"http://127.0.0.1:{port}/fits", NIKA_FETCH_DEADLINE_S="soon")
    assert e.code == "NIKA-BUILTIN-FETCH-001" and "NIKA_FETCH_DEADLINE_S" in e.message


def test_the_documented_default_is_at_most_two_minutes() -> None:
    assert client.DEFAULT_DEADLINE_S <= 120 and client.deadline_s({}) == client.DEFAULT_DEADLINE_S


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:80x/", "http://127.0.0.1:99999/", "https://[::1/x", "http://a\x00b/"]
)
async def test_a_malformed_url_is_a_typed_fetch_refusal(tmp_path: Path, url: str) -> None:
    e = await _fails(tmp_path, url)
    assert e.code == "NIKA-BUILTIN-FETCH-001" and not e.transient


async def test_a_malformed_redirect_location_is_a_typed_fetch_refusal(tmp_path: Path, port: int) -> None:
    e = await _fails(tmp_path, f"http://127.0.0.1:{port}/bad-location")
    assert e.code == "NIKA-BUILTIN-FETCH-001" and "Location" in e.message


@pytest.mark.parametrize("target", ["http://127.0.0.1:7x7/hook", "http://hooks.example:-1/x"])
async def test_a_malformed_notify_target_is_a_typed_notify_refusal(tmp_path: Path, target: str) -> None:
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:notify", {"target": target, "message": "m"}, _ctx(tmp_path))
    assert e.value.code == "NIKA-BUILTIN-NOTIFY-001"


async def test_a_control_character_in_a_header_is_a_typed_refusal(tmp_path: Path, port: int) -> None:
    args = {"url": f"http://127.0.0.1:{port}/fits", "mode": "raw", "headers": {"x-trace": "a\u000bb"}}
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:fetch", args, _ctx(tmp_path))
    assert e.value.code == "NIKA-BUILTIN-FETCH-001" and "U+000B" in e.value.message
