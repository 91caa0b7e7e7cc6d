"""``nika:fetch`` (stdlib builtins §Network builtins) on the run's one ``httpx`` client.

Every hop goes through the SSRF floor (:mod:`runtime.net.ssrf`): the host is resolved once and
the request connects to the judged address (the ``Host`` header and TLS SNI keep the name, so the
certificate is still verified against it). Redirects are followed by hand up to
:data:`MAX_REDIRECTS`, each hop re-judged by the permits (``extra["judge_url"]``) and the floor.

Extract modes built here: ``raw`` and ``jq``. The HTML modes need the extraction libraries and
fail with NIKA-IMPL-002 naming the mode until they are built (never a hand-written parser).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._support import arg
from runtime.errors import NOT_BUILT, TaskError
from runtime.net.ssrf import Allowance, judge_host, system_resolver

TOOL = "nika:fetch"
CODE = "NIKA-BUILTIN-FETCH-001"
MAX_REDIRECTS = 10
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
MAX_MULTIPART_BYTES = 32 * 1024 * 1024
BODY_METHODS = ("POST", "PUT", "PATCH")
DEFAULT_TIMEOUT_S = 30.0
_BUILT_MODES = ("raw", "jq")


def _fail(message: str, *, transient: bool = False, **details: Any) -> TaskError:
    return TaskError(CODE, message, transient=transient, details=details)


def _part_bytes(path: Any, shown: str) -> bytes:
    """The octets of a multipart file part; a missing or unreadable file fails as `nika:read` does."""
    try:
        return bytes(path.read_bytes())
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        raise TaskError(
            "NIKA-BUILTIN-READ-001", f"`multipart`: there is no file at {shown}", details={"path": shown}
        ) from None
    except OSError as e:
        raise TaskError(
            "NIKA-BUILTIN-READ-002", f"`multipart`: cannot read {shown}: {e.strerror or e}", details={"path": shown}
        ) from None


def _payload(args: dict[str, Any], method: str, headers: dict[str, str], ctx: BuiltinContext) -> dict[str, Any]:
    given = [k for k in ("body", "form", "multipart") if args.get(k) is not None]
    if len(given) > 1:
        raise _fail(f"give at most one of `body`, `form`, `multipart` (got {', '.join(given)})")
    if not given:
        return {}
    kind = given[0]
    if kind in ("form", "multipart"):
        if method not in BODY_METHODS:
            raise _fail(f"`{kind}` needs a body-bearing method (POST, PUT or PATCH), not {method}")
        if any(k.lower() == "content-type" for k in headers):
            raise _fail(f"`{kind}` sets the content-type itself; drop the `content-type` header")
    value = args[kind]
    if kind == "body":
        if isinstance(value, (dict, list)):
            if not any(k.lower() == "content-type" for k in headers):
                headers["content-type"] = "application/json"
            return {"content": json.dumps(value, ensure_ascii=False).encode()}
        if isinstance(value, bytes):
            return {"content": value}
        return {"content": str(value).encode() if not isinstance(value, str) else value.encode()}
    if kind == "form":
        fields = {}
        for k, v in value.items():
            if isinstance(v, (dict, list)) or v is None:
                raise _fail(f"`form.{k}` must be a string, number or boolean (reshape nested data with nika:jq)")
            fields[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
        return {"data": fields}
    data: dict[str, list[str]] = {}
    files: list[tuple[str, tuple[str, bytes, str]]] = []
    total = 0
    if len(value) > 64:
        raise _fail(f"`multipart` has {len(value)} parts; at most 64 are allowed")
    for part in value:
        name = part["name"]
        if "path" in part:
            path = ctx.resolve_read(part["path"])  # the permits.fs read boundary (NIKA-SEC-004 on escape)
            content = _part_bytes(path, part["path"])
            total += len(content)
            ctype = part.get("content_type") or "application/octet-stream"
            files.append((name, (part.get("filename") or path.name, content, ctype)))
        else:
            text = str(part.get("value", ""))
            total += len(text.encode())
            data.setdefault(name, []).append(text)
        if total > MAX_MULTIPART_BYTES:
            raise _fail("`multipart` parts exceed 32 MiB in total")
    return {"data": data, "files": files}


async def _request(
    ctx: BuiltinContext, method: str, url: str, headers: dict[str, str], payload: dict[str, Any]
) -> tuple[int, str, bytes, Any]:
    import httpx

    http = ctx.extra.get("http")
    owned = http is None
    if owned:
        http = httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=DEFAULT_TIMEOUT_S)
    allowance: Allowance = ctx.extra.get("ssrf_allow") or Allowance.from_env(ctx.extra.get("env"))
    resolve = ctx.extra.get("resolver") or system_resolver
    judge_url = ctx.extra.get("judge_url")
    try:
        for hop in range(MAX_REDIRECTS + 1):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise TaskError(
                    "NIKA-SEC-004",
                    f"`{url}` is not an http(s) URL with a host",
                    details={"plane": "net", "gate": url},
                )
            if hop and judge_url is not None:
                judge_url(url)  # the permits re-judge every redirect hop
            host = parts.hostname
            port = parts.port or (443 if parts.scheme == "https" else 80)
            addr = judge_host(host, port, allowance, resolve)
            shown = f"[{addr}]" if addr.version == 6 else str(addr)
            netloc = f"{shown}:{port}"
            pinned = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
            hdrs = {**headers, "host": parts.netloc.rsplit("@", 1)[-1]}
            extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
            try:
                req = http.build_request(method, pinned, headers=hdrs, extensions=extensions, **payload)
                resp = await http.send(req, stream=True)
            except httpx.TimeoutException as e:
                raise _fail(f"`{host}` did not answer in time ({type(e).__name__})", transient=True) from None
            except httpx.HTTPError as e:
                raise _fail(f"the request to `{host}` failed: {type(e).__name__}", transient=True) from None
            try:
                if resp.status_code in (301, 302, 303, 307, 308) and "location" in resp.headers:
                    url = urljoin(url, resp.headers["location"])
                    if resp.status_code == 303 or (resp.status_code in (301, 302) and method == "POST"):
                        method, payload = "GET", {}
                    continue
                body = bytearray()
                async for chunk in resp.aiter_bytes():
                    body.extend(chunk)
                    if len(body) > MAX_RESPONSE_BYTES:
                        raise _fail(
                            f"the response from `{host}` is larger than the {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB "
                            "response-size cap",
                            limit_bytes=MAX_RESPONSE_BYTES,
                        )
                return resp.status_code, url, bytes(body), resp.headers
            finally:
                await resp.aclose()
        raise _fail(f"more than {MAX_REDIRECTS} redirects (the engine's redirect cap)", max_redirects=MAX_REDIRECTS)
    finally:
        if owned:
            await http.aclose()


@builtin(TOOL)
async def fetch(args: dict[str, Any], ctx: BuiltinContext) -> Any:
    url = args["url"]
    method = str(arg(args, TOOL, "method") or "GET").upper()
    mode = arg(args, TOOL, "mode") or "markdown"
    if args.get("traverse") is not None:
        raise TaskError(NOT_BUILT, "`nika:fetch` with `traverse:` is not available in this build of nika yet")
    if mode not in _BUILT_MODES:
        raise TaskError(NOT_BUILT, f"`nika:fetch` extract mode `{mode}` is not available in this build of nika yet")
    headers = {str(k): str(v) for k, v in (args.get("headers") or {}).items()}
    payload = _payload(args, method, headers, ctx)
    status, final, body, _ = await _request(ctx, method, url, headers, payload)
    if not 200 <= status < 300:
        raise _fail(
            f"`{urlsplit(final).hostname}` answered HTTP {status}",
            transient=status >= 500 or status in (408, 429),
            status_code=status,
            url=final,
        )
    if mode == "jq":
        return _jq(str(args.get("jq") or "."), body)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise _fail("the response body is not UTF-8 text, so `mode: raw` cannot return it") from None


def _jq(program: str, body: bytes) -> Any:
    """``mode: jq``: the response as JSON through libjq; exactly one output (extract modes §jq)."""
    import jq

    try:
        doc = json.loads(body)
    except ValueError:
        raise _fail("the response is not JSON, so `mode: jq` cannot read it") from None
    try:
        results = jq.compile(program).input_value(doc).all()
    except ValueError as e:
        raise _fail(f"the jq expression `{program}` failed: {e}") from None
    if len(results) != 1:
        raise _fail(
            f"the jq expression `{program}` yielded {len(results)} values; it must yield exactly one "
            "(wrap a stream in `[ … ]`)",
            count=len(results),
        )
    return results[0]


# ── nika:notify ──────────────────────────────────────────────────────────────────────────────

NOTIFY = "nika:notify"
NOTIFY_UNCONFIGURED = "NIKA-BUILTIN-NOTIFY-001"
NOTIFY_FAILED = "NIKA-BUILTIN-NOTIFY-002"
_DISCORD_MARKUP = str.maketrans({c: "\\" + c for c in "\\*_~`|>#-[]()"})


def _slack_text(message: str) -> str:
    """Slack's control characters escaped, so `<!channel>`/`<@U1>` arrive as text (builtins §notify)."""
    return message.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _notify_payload(channel: str, message: str, severity: str, data: Any, has_data: bool) -> dict[str, Any]:
    if channel == "slack":
        return {"text": _slack_text(message), "mrkdwn": False}
    if channel == "discord":
        return {"content": message.translate(_DISCORD_MARKUP), "allowed_mentions": {"parse": []}}
    body: dict[str, Any] = {"message": message, "severity": severity}
    if has_data:
        body["data"] = data
    return body


@builtin(NOTIFY)
async def notify(args: dict[str, Any], ctx: BuiltinContext) -> Any:
    channel = str(args.get("channel") or "webhook")
    if channel in ("email", "sms"):
        raise TaskError(
            NOTIFY_UNCONFIGURED,
            f"the `{channel}` channel is not configured on this engine (this build has no `{channel}` "
            "configuration yet); use `channel: webhook`",
            details={"channel": channel},
        )
    target = args.get("target")
    if not isinstance(target, str) or not target:
        raise TaskError(
            NOTIFY_UNCONFIGURED, f"`channel: {channel}` needs a `target:` URL", details={"channel": channel}
        )
    raw = args.get("message")
    message = raw if isinstance(raw, str) else ("" if raw is None else json.dumps(raw, ensure_ascii=False))
    judge_url = ctx.extra.get("judge_url")
    if judge_url is not None:
        judge_url(target)  # permits.net.http judges the target like a fetch URL
    severity = str(arg(args, NOTIFY, "severity") or "info")
    payload = _notify_payload(channel, message, severity, args.get("data"), "data" in args)
    content = json.dumps(payload, ensure_ascii=False).encode()
    headers = {"content-type": "application/json"}
    try:
        status, _, _, _ = await _request(ctx, "POST", target, headers, {"content": content})
    except TaskError as e:
        if e.code != CODE:
            raise  # the SSRF floor and the permits stay NIKA-SEC-004
        raise TaskError(NOTIFY_FAILED, e.message, transient=e.transient, details={"channel": channel}) from None
    if not 200 <= status < 300:
        raise TaskError(
            NOTIFY_FAILED,
            f"the {channel} endpoint answered HTTP {status}",
            transient=status >= 500 or status in (408, 429),
            details={"channel": channel, "status_code": status},
        )
    return None
