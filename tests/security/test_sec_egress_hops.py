"""A secret's egress is judged at every hop (spec 01 §egress: `host:` is the destination of the
sanction; a redirect is a new request).

The judge is :mod:`runtime.net.egress`, asked by the fetch client before each hop is sent. A loopback
server answers for several host names (the test resolver maps them to 127.0.0.1 and records the
`Host` each request names), so a redirect can move a request from the sanctioned host to another one
that `permits.net.http` would admit. Each test fails on the engine before the per-hop judge (the
secret was sent to whatever host a redirect named) and passes with it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import pytest
from builtins_harness import make_ctx
from rt_helpers import serving

from runtime import builtins
from runtime.errors import TaskError
from runtime.net import egress
from runtime.net.ssrf import Allowance

TOKEN = "tok-51c9e0b2-north"  # the secret; never a value the reproductions used


class _Hosts(BaseHTTPRequestHandler):
    """Answers for every name; `/go?to=URL&code=N` redirects, anything else echoes 200."""

    seen: ClassVar[list[dict[str, Any]]] = []

    def log_message(self, *a: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        _Hosts.seen.append(
            {
                "host": self.headers.get("host", ""),
                "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
            }
        )
        if self.path.startswith("/go"):
            from urllib.parse import parse_qs, urlsplit

            q = parse_qs(urlsplit(self.path).query)
            self.send_response(int(q.get("code", ["302"])[0]))
            self.send_header("location", q["to"][0])
            self.send_header("content-length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    do_GET = do_POST = do_PUT = _answer


@pytest.fixture
def port() -> Iterator[int]:
    _Hosts.seen = []
    with serving(_Hosts, block_on_close=False) as p:
        yield p


def _ctx(tmp_path: Path, rules: tuple[egress.Rule, ...], sink: str = "nika:fetch"):
    held = (egress.Held("north_token", TOKEN, rules),)
    ctx, _ = make_ctx(
        tmp_path,
        env={},
        ssrf_allow=Allowance.parse("127.0.0.0/8"),
        resolver=lambda host, p: ["127.0.0.1"],
        egress=egress.Carrier(sink, held),
    )
    return ctx


def _sent_to(host: str) -> list[dict[str, Any]]:
    return [s for s in _Hosts.seen if s["host"].split(":")[0] == host]


PINNED = (egress.Rule("nika:fetch", "ledger.north.test"),)


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
async def test_a_header_secret_never_follows_a_redirect_to_another_host(tmp_path: Path, port: int, code: int) -> None:
    url = f"http://ledger.north.test:{port}/go?code={code}&to=http://drop.south.test:{port}/x"
    args = {"url": url, "mode": "raw", "headers": {"X-Ledger-Key": TOKEN}}
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:fetch", args, _ctx(tmp_path, PINNED))
    assert e.value.code == "NIKA-SEC-004" and e.value.details["plane"] == "egress"
    assert "ledger.north.test" in e.value.message and "drop.south.test" in e.value.message
    assert TOKEN not in e.value.message
    assert _sent_to("drop.south.test") == []


async def test_a_body_secret_never_follows_a_307_to_another_host(tmp_path: Path, port: int) -> None:
    url = f"http://ledger.north.test:{port}/go?code=307&to=http://drop.south.test:{port}/x"
    args = {"url": url, "mode": "raw", "method": "POST", "body": {"note": "rotate", "key": TOKEN}}
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:fetch", args, _ctx(tmp_path, PINNED))
    assert e.value.details["host"] == "drop.south.test" and e.value.details["from_host"] == "ledger.north.test"
    assert _sent_to("drop.south.test") == []


async def test_basic_credentials_from_user_info_are_judged_and_never_follow(tmp_path: Path, port: int) -> None:
    """The engine builds `Authorization: Basic` from a URL's user info (that carries the secret, in
    base64): sent to the sanctioned host, refused for any other, and never re-sent on a redirect
    (the credentials belong to the URL that names them)."""
    ctx = _ctx(tmp_path, PINNED)
    url = f"http://svc:{TOKEN}@ledger.north.test:{port}/go?to=http://drop.south.test:{port}/x"
    assert await builtins.call("nika:fetch", {"url": url, "mode": "raw"}, ctx) == "ok"
    first = _sent_to("ledger.north.test")[0]["headers"]
    assert base64.b64decode(first["authorization"].split()[1]).decode() == f"svc:{TOKEN}"
    assert "authorization" not in _sent_to("drop.south.test")[0]["headers"]
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:fetch", {"url": f"http://svc:{TOKEN}@drop.south.test:{port}/x"}, ctx)
    assert e.value.code == "NIKA-SEC-004" and "header `authorization`" in e.value.message
    assert len(_sent_to("drop.south.test")) == 1


async def test_a_sanction_without_host_does_not_cover_a_redirect(tmp_path: Path, port: int) -> None:
    """`{ to }` alone sanctions the request the workflow wrote, not a host a server redirects to."""
    url = f"http://ledger.north.test:{port}/go?to=http://drop.south.test:{port}/x"
    args = {"url": url, "mode": "raw", "headers": {"authorization": f"Token {TOKEN}"}}
    with pytest.raises(TaskError):
        await builtins.call("nika:fetch", args, _ctx(tmp_path, (egress.Rule("nika:fetch"),)))
    assert _sent_to("drop.south.test") == []


async def test_a_redirect_that_carries_nothing_is_followed(tmp_path: Path, port: int) -> None:
    url = f"http://ledger.north.test:{port}/go?to=http://drop.south.test:{port}/x"
    out = await builtins.call("nika:fetch", {"url": url, "mode": "raw"}, _ctx(tmp_path, PINNED))
    assert out == "ok" and len(_sent_to("drop.south.test")) == 1


async def test_same_host_hops_and_hosts_the_author_pinned_are_followed(tmp_path: Path, port: int) -> None:
    both = (*PINNED, egress.Rule("nika:fetch", "mirror.north.test"))
    for to in (f"http://ledger.north.test:{port}/x", f"http://mirror.north.test:{port}/x"):
        url = f"http://ledger.north.test:{port}/go?to={to}"
        args = {"url": url, "mode": "raw", "headers": {"X-Ledger-Key": TOKEN}}
        assert await builtins.call("nika:fetch", args, _ctx(tmp_path, both)) == "ok"
    assert _sent_to("mirror.north.test")[0]["headers"]["x-ledger-key"] == TOKEN


async def test_the_first_request_is_judged_too(tmp_path: Path, port: int) -> None:
    """A computed destination (the checker defers it): the host is judged on the concrete URL."""
    args = {"url": f"http://drop.south.test:{port}/x", "mode": "raw", "headers": {"X-Ledger-Key": TOKEN}}
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:fetch", args, _ctx(tmp_path, PINNED))
    assert e.value.code == "NIKA-SEC-004" and "drop.south.test" in e.value.message
    assert _Hosts.seen == []


async def test_a_notify_webhook_rides_the_same_judge(tmp_path: Path, port: int) -> None:
    hook = f"http://hooks.north.test:{port}/go?code=308&to=http://drop.south.test:{port}/x"
    ctx = _ctx(tmp_path, (egress.Rule("nika:notify", "hooks.north.test"),), sink="nika:notify")
    with pytest.raises(TaskError) as e:
        await builtins.call("nika:notify", {"target": hook, "message": f"key {TOKEN}"}, ctx)
    assert e.value.code == "NIKA-SEC-004" and _sent_to("drop.south.test") == []


def test_https_to_http_is_never_followed_with_a_secret() -> None:
    held = egress.Held("north_token", TOKEN, (egress.Rule("nika:fetch", "ledger.north.test"),))
    carried = egress.carried([held], "http://ledger.north.test/x", {"authorization": f"Bearer {TOKEN}"}, b"")
    hop = egress.Hop("nika:fetch", "http", "ledger.north.test", 1, "ledger.north.test", "https", carried)
    found = egress.refusal(hop)
    assert found is not None and "in clear" in found[1]


def test_a_provider_request_is_judged_by_the_same_function() -> None:
    """A prompt carrying a secret sanctioned for `nika:fetch` only does not go to a model provider."""
    held = egress.Held("north_token", TOKEN, PINNED)
    body = json.dumps({"messages": [{"role": "user", "content": f"use {TOKEN}"}]})
    carried = egress.carried([held], "https://api.model.test/v1/chat", {}, body)
    hop = egress.Hop("infer", "https", "api.model.test", 0, "api.model.test", "https", carried)
    with pytest.raises(TaskError) as e:
        egress.enforce(hop)
    assert "`infer`" in e.value.message
