"""nika:fetch against a real HTTP server on loopback, and the SSRF floor (stdlib builtins §Network
builtins; 10-authority §net)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import serving

from runtime import builtins
from runtime.errors import TaskError
from runtime.net.ssrf import Allowance, judge_host, literal_address, why_refused
from tests.runtime.builtins_harness import make_ctx
from tests.runtime.rt_helpers import run_yaml, statuses

SEEN: list[dict[str, Any]] = []


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *a: Any) -> None:
        pass

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        SEEN.append(
            {
                "path": self.path,
                "method": self.command,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body,
            }
        )
        port = self.server.server_address[1]
        routes: dict[str, tuple[int, dict[str, str], bytes]] = {
            "/json": (200, {"content-type": "application/json"}, b'{"users":[{"email":"a@x"},{"email":"b@x"}]}'),
            "/text": (200, {"content-type": "text/plain"}, "héllo".encode()),
            "/latin1": (200, {"content-type": "text/plain"}, "h\xe9llo".encode("latin-1")),
            "/missing": (404, {}, b"no"),
            "/busy": (503, {}, b"later"),
            "/slowdown": (429, {}, b"later"),
            "/hop": (302, {"location": "/text"}, b""),
            "/loop": (302, {"location": "/loop"}, b""),
            "/to-ip": (302, {"location": f"http://127.0.0.1:{port}/text"}, b""),
            "/to-file": (302, {"location": "file:///etc/passwd"}, b""),
            "/to-meta": (302, {"location": "http://169.254.169.254/latest/meta-data/"}, b""),
            "/echo": (200, {"content-type": "text/plain"}, body),
            "/hook": (204, {}, b""),
        }
        if self.path == "/slow":
            time.sleep(1.5)
        if self.path == "/huge":
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.end_headers()
            chunk = b"x" * 65536
            try:
                for _ in range(33 * 16):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        status, headers, payload = routes.get(self.path, (404, {}, b""))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = _answer


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    with serving(_Handler, block_on_close=False) as port:
        yield port


def _ctx(tmp_path: Path, allow: str = "127.0.0.1", **extra: Any):
    ctx, _ = make_ctx(tmp_path, env={"NIKA_FETCH_ALLOW_PRIVATE": allow}, **extra)
    return ctx


async def _fetch(tmp_path: Path, args: dict[str, Any], **kw: Any) -> Any:
    return await builtins.call("nika:fetch", args, _ctx(tmp_path, **kw))


async def test_raw_returns_utf8_text(server: int, tmp_path: Path) -> None:
    """extract modes §raw: the body as UTF-8 text."""
    assert await _fetch(tmp_path, {"url": f"http://127.0.0.1:{server}/text", "mode": "raw"}) == "héllo"


async def test_raw_refuses_non_utf8(server: int, tmp_path: Path) -> None:
    """extract modes §raw: a non-UTF-8 body is NIKA-BUILTIN-FETCH-001."""
    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, {"url": f"http://127.0.0.1:{server}/latin1", "mode": "raw"})
    assert e.value.code == "NIKA-BUILTIN-FETCH-001"


async def test_jq_mode_exactly_one(server: int, tmp_path: Path) -> None:
    """extract modes §jq: one output is the result; several outputs are FETCH-001."""
    url = f"http://127.0.0.1:{server}/json"
    assert await _fetch(tmp_path, {"url": url, "mode": "jq", "jq": "[.users[].email]"}) == ["a@x", "b@x"]
    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, {"url": url, "mode": "jq", "jq": ".users[].email"})
    assert e.value.code == "NIKA-BUILTIN-FETCH-001" and e.value.details["count"] == 2


@pytest.mark.parametrize(
    ("path", "status", "transient"), [("/missing", 404, False), ("/busy", 503, True), ("/slowdown", 429, True)]
)
async def test_non_2xx_is_failure(server: int, tmp_path: Path, path: str, status: int, transient: bool) -> None:
    """builtins §Non-2xx is failure: FETCH-001 with details.status_code; 5xx/408/429 transient."""
    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, {"url": f"http://127.0.0.1:{server}{path}", "mode": "raw"})
    assert e.value.code == "NIKA-BUILTIN-FETCH-001"
    assert e.value.details["status_code"] == status and e.value.transient is transient


async def test_redirect_followed_and_final_status_decides(server: int, tmp_path: Path) -> None:
    """builtins §Non-2xx: redirects are followed; the final status decides."""
    assert await _fetch(tmp_path, {"url": f"http://127.0.0.1:{server}/hop", "mode": "raw"}) == "héllo"


async def test_redirect_loop_hits_the_named_cap(server: int, tmp_path: Path) -> None:
    """builtins §Non-2xx: redirects follow up to an engine cap (named in the error)."""
    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, {"url": f"http://127.0.0.1:{server}/loop", "mode": "raw"})
    assert e.value.code == "NIKA-BUILTIN-FETCH-001" and "redirect cap" in e.value.message


@pytest.mark.parametrize("path", ["/to-file", "/to-meta"])
async def test_redirect_hop_is_rejudged(server: int, tmp_path: Path, path: str) -> None:
    """builtins §Security: every redirect hop rides the SSRF floor (file:// and metadata refused)."""
    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, {"url": f"http://127.0.0.1:{server}{path}", "mode": "raw"}, allow="127.0.0.0/8")
    assert e.value.code == "NIKA-SEC-004"


async def test_redirect_hop_judged_by_permits(server: int, tmp_path: Path) -> None:
    """10-authority §net: the permits judge every hop, not only the first URL."""
    judged: list[str] = []

    def judge(url: str) -> None:
        judged.append(url)
        raise TaskError("NIKA-SEC-004", "not granted")

    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, {"url": f"http://127.0.0.1:{server}/hop", "mode": "raw"}, judge_url=judge)
    assert e.value.code == "NIKA-SEC-004" and judged == [f"http://127.0.0.1:{server}/text"]


async def test_loopback_refused_without_allowance(server: int, tmp_path: Path) -> None:
    """builtins §Security: private and loopback addresses are refused unless configured."""
    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, {"url": f"http://127.0.0.1:{server}/text", "mode": "raw"}, allow="")
    assert e.value.code == "NIKA-SEC-004" and "NIKA_FETCH_ALLOW_PRIVATE" in e.value.message
    assert not any(s["path"] == "/never" for s in SEEN)


async def test_host_allowance_does_not_lift_a_redirect_to_another_name(server: int, tmp_path: Path) -> None:
    """An allowance by host name lifts that name only: a redirect to the bare IP is judged anew."""
    resolver = lambda host, port: ["127.0.0.1"]  # noqa: E731
    with pytest.raises(TaskError) as e:
        await _fetch(
            tmp_path, {"url": f"http://site.test:{server}/to-ip", "mode": "raw"}, allow="site.test", resolver=resolver
        )
    assert e.value.code == "NIKA-SEC-004"


async def test_dns_rebinding_connects_to_the_judged_address(server: int, tmp_path: Path) -> None:
    """builtins §Security: the host is resolved once and the request goes to the judged address; a
    second answer (a rebinding resolver) is never asked for. The Host header keeps the name."""
    answers = [["127.0.0.1"], ["10.255.255.1"]]
    calls: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        calls.append(host)
        return answers[len(calls) - 1]

    got = await _fetch(
        tmp_path,
        {"url": f"http://site.test:{server}/echo", "method": "POST", "body": "x", "mode": "raw"},
        allow="127.0.0.1",
        resolver=resolver,
    )
    assert got == "x" and calls == ["site.test"]
    assert SEEN[-1]["headers"]["host"] == f"site.test:{server}"


async def test_name_with_any_private_record_is_refused(tmp_path: Path) -> None:
    """Every address a name resolves to is judged: one public and one private record is refused."""
    with pytest.raises(TaskError) as e:
        judge_host("mixed.test", 80, Allowance(), lambda h, p: ["8.8.8.8", "127.0.0.1"])
    assert e.value.code == "NIKA-SEC-004"


@pytest.mark.parametrize(
    "spelling",
    [
        "127.0.0.1",
        "2130706433",
        "0177.0.0.1",
        "0x7f.0.0.1",
        "0x7f000001",
        "127.1",
        "[::1]",
        "::ffff:127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "100.64.0.1",
        "169.254.1.1",
        "fe80::1",
        "fc00::1",
        "224.0.0.1",
        "ff02::1",
        "0.0.0.0",
        "169.254.169.254",
        "0xa9.0xfe.0xa9.0xfe",
        "2852039166",
        "::ffff:169.254.169.254",
    ],
)
def test_every_spelling_of_a_refused_address(spelling: str) -> None:
    """10-authority §net / builtins §Security: loopback, private, CGNAT, link-local, multicast and
    metadata addresses are refused in every IPv4/IPv6 spelling (decimal, octal, hex, mapped)."""
    addr = literal_address(spelling)
    assert addr is not None and why_refused(addr) is not None
    with pytest.raises(TaskError):
        judge_host(spelling.strip("[]"), 80, Allowance(), lambda h, p: [])


def test_public_address_passes_and_names_are_not_literals() -> None:
    assert why_refused(literal_address("8.8.8.8")) is None  # type: ignore[arg-type]
    assert literal_address("example.com") is None and literal_address("1e100.net") is None


def test_metadata_needs_an_explicit_listing() -> None:
    """The cloud-metadata addresses stay refused unless listed explicitly by address."""
    with pytest.raises(TaskError):
        judge_host("169.254.169.254", 80, Allowance.parse("169.254.0.0/16"), lambda h, p: [])
    assert (
        str(judge_host("169.254.169.254", 80, Allowance.parse("169.254.169.254"), lambda h, p: [])) == "169.254.169.254"
    )
    assert str(judge_host("10.0.0.7", 80, Allowance.parse("127.0.0.1, 10.0.0.0/8"), lambda h, p: [])) == "10.0.0.7"


async def test_response_size_cap_named(server: int, tmp_path: Path) -> None:
    """builtins §Security: a body past the response-size cap fails naming the cap."""
    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, {"url": f"http://127.0.0.1:{server}/huge", "mode": "raw"})
    assert e.value.code == "NIKA-BUILTIN-FETCH-001" and "32 MiB" in e.value.message


async def test_body_object_sent_as_json(server: int, tmp_path: Path) -> None:
    """builtins §nika:fetch: an object body is sent as JSON."""
    got = await _fetch(
        tmp_path, {"url": f"http://127.0.0.1:{server}/echo", "method": "POST", "body": {"a": 1}, "mode": "raw"}
    )
    assert json.loads(got) == {"a": 1} and SEEN[-1]["headers"]["content-type"] == "application/json"


async def test_form_and_multipart(server: int, tmp_path: Path) -> None:
    """builtins §nika:fetch: form is url-encoded scalars; multipart file parts read through permits.fs."""
    url = f"http://127.0.0.1:{server}/echo"
    got = await _fetch(
        tmp_path, {"url": url, "method": "POST", "form": {"q": "a b", "n": 2, "ok": True}, "mode": "raw"}
    )
    assert got == "q=a+b&n=2&ok=true"
    (tmp_path / "up.txt").write_text("file-content")
    got = await _fetch(
        tmp_path,
        {
            "url": url,
            "method": "POST",
            "mode": "raw",
            "multipart": [{"name": "t", "value": "tv"}, {"name": "f", "path": "up.txt"}],
        },
    )
    assert "file-content" in got and 'name="t"' in got and 'filename="up.txt"' in got


async def test_multipart_missing_file_is_a_read_failure_not_an_internal_error(server: int, tmp_path: Path) -> None:
    """Found by the registry-phase fuzz: a multipart part naming a missing file escaped the runtime
    as FileNotFoundError (NIKA-IMPL-001); it fails the task like `nika:read` of a missing file."""
    with pytest.raises(TaskError) as e:
        await _fetch(
            tmp_path,
            {
                "url": f"http://127.0.0.1:{server}/echo",
                "method": "POST",
                "mode": "raw",
                "multipart": [{"name": "f", "path": "missing.png"}],
            },
        )
    assert e.value.code == "NIKA-BUILTIN-READ-001" and "missing.png" in e.value.message


async def test_multipart_path_outside_grant(server: int, tmp_path: Path) -> None:
    """builtins §nika:fetch: every multipart path rides the permits.fs read boundary (SEC-004)."""
    with pytest.raises(TaskError) as e:
        await _fetch(
            tmp_path,
            {
                "url": f"http://127.0.0.1:{server}/echo",
                "method": "POST",
                "mode": "raw",
                "multipart": [{"name": "f", "path": "/etc/hostname"}],
            },
        )
    assert e.value.code == "NIKA-SEC-004"


@pytest.mark.parametrize(
    "args",
    [
        {"method": "POST", "body": "x", "form": {"a": "b"}},
        {"method": "GET", "form": {"a": "b"}},
        {"method": "POST", "form": {"a": "b"}, "headers": {"Content-Type": "text/plain"}},
    ],
)
async def test_payload_exclusivity(server: int, tmp_path: Path, args: dict[str, Any]) -> None:
    """builtins §Payload exclusivity: one payload; form/multipart need a body method and own content-type."""
    with pytest.raises(TaskError):
        await _fetch(tmp_path, {"url": f"http://127.0.0.1:{server}/echo", "mode": "raw", **args})


def test_unbuilt_mode_says_so() -> None:
    """A mode this build has no extractor for fails with NIKA-IMPL-002 naming it, never a fake result."""
    from runtime import extract

    with pytest.raises(TaskError) as e:
        extract.check_mode("llm-txt")
    assert e.value.code == "NIKA-IMPL-002" and "llm-txt" in e.value.message
    for mode in ("markdown", "article", "text", "selector", "jq", "metadata", "links", "feed", "sitemap", "raw"):
        extract.check_mode(mode)


_WF = """
nika: v1
workflow:
  id: fetch-run
permits:
  tools: ["nika:fetch"]
  net:
    http: [{grant}]
tasks:
  get:
    invoke:
      tool: "nika:fetch"
      args: {{ url: "http://127.0.0.1:{port}{path}", mode: raw }}
    timeout: "{timeout}"
outputs:
  body: ${{{{ tasks.get.output }}}}
"""


def _run(tmp_path: Path, port: int, path: str, grant: str = '"127.0.0.1"', timeout: str = "10s"):
    text = _WF.format(grant=grant, port=port, path=path, timeout=timeout)
    return run_yaml(text, tmp_path, engine_env={"NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1"})


def test_nika_run_fetches_a_granted_host(server: int, tmp_path: Path) -> None:
    """nika run: the dispatch judges permits.net.http, then the builtin fetches (check ≡ run)."""
    result = _run(tmp_path, server, "/text")
    assert statuses(result) == {"get": "success"} and result.tasks["get"].output == "héllo"


def test_nika_run_refuses_an_ungranted_redirect_hop(server: int, tmp_path: Path) -> None:
    """10-authority §net: a redirect to a host outside permits.net.http is refused at the hop."""
    result = _run(tmp_path, server, "/to-meta", grant='"127.0.0.1"')
    rec = result.tasks["get"]
    assert rec.status == "failure" and rec.error["code"] == "NIKA-SEC-004"


def test_task_timeout_bounds_the_request(server: int, tmp_path: Path) -> None:
    """builtins §Security: the task timeout bounds the whole request (the server answers `/slow`
    after 1.5 s: a request not cut would succeed)."""
    result = _run(tmp_path, server, "/slow", timeout="200ms")
    rec = result.tasks["get"]
    assert rec.status == "failure" and rec.error["code"] == "NIKA-TIMEOUT-001", rec.error


async def _notify(tmp_path: Path, args: dict[str, Any], **kw: Any) -> Any:
    return await builtins.call("nika:notify", args, _ctx(tmp_path, **kw))


async def test_webhook_payload(server: int, tmp_path: Path) -> None:
    """builtins §nika:notify: the webhook payload is {message, severity, data?}; null on delivery."""
    url = f"http://127.0.0.1:{server}/hook"
    assert (
        await _notify(tmp_path, {"channel": "webhook", "target": url, "message": 'a "b"\nc', "severity": "warn"})
        is None
    )
    assert json.loads(SEEN[-1]["body"]) == {"message": 'a "b"\nc', "severity": "warn"}
    await _notify(tmp_path, {"channel": "webhook", "target": url, "message": "m", "data": {"run": 1}})
    assert json.loads(SEEN[-1]["body"]) == {"message": "m", "severity": "info", "data": {"run": 1}}


async def test_slack_and_discord_neutralise_mentions(server: int, tmp_path: Path) -> None:
    """builtins §notify Injection defense: slack/discord send the message as text, not mentions/markup."""
    url = f"http://127.0.0.1:{server}/hook"
    await _notify(tmp_path, {"channel": "slack", "target": url, "message": "<!channel> *hi* <@U1>"})
    assert json.loads(SEEN[-1]["body"])["text"] == "&lt;!channel&gt; *hi* &lt;@U1&gt;"
    await _notify(tmp_path, {"channel": "discord", "target": url, "message": "@everyone *hi*"})
    sent = json.loads(SEEN[-1]["body"])
    assert sent["allowed_mentions"] == {"parse": []} and sent["content"] == "@everyone \\*hi\\*"


async def test_notify_failures(server: int, tmp_path: Path) -> None:
    """builtins §notify: delivery failure is NOTIFY-002 (5xx transient); sms/email unconfigured NOTIFY-001;
    the target rides the SSRF floor (SEC-004)."""
    with pytest.raises(TaskError) as e:
        await _notify(tmp_path, {"channel": "webhook", "target": f"http://127.0.0.1:{server}/busy", "message": "m"})
    assert e.value.code == "NIKA-BUILTIN-NOTIFY-002" and e.value.transient
    with pytest.raises(TaskError) as e:
        await _notify(tmp_path, {"channel": "sms", "target": "+1555", "message": "m"})
    assert e.value.code == "NIKA-BUILTIN-NOTIFY-001"
    with pytest.raises(TaskError) as e:
        await _notify(
            tmp_path, {"channel": "webhook", "target": f"http://127.0.0.1:{server}/hook", "message": "m"}, allow=""
        )
    assert e.value.code == "NIKA-SEC-004"


async def test_jq_mode_has_no_view_of_the_environment(
    server: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mode: jq` is the runtime's one jq: `$ENV`/`env` are `{}` there too (spec 01, zero env passthrough)."""
    monkeypatch.setenv("NIKA_TEST_FETCH_CANARY", "canary-do-not-leak")
    url = f"http://127.0.0.1:{server}/json"
    got = await _fetch(tmp_path, {"url": url, "mode": "jq", "jq": "[$ENV, env, (.users | length)]"})
    assert got == [{}, {}, 2]
