"""One HTTP exchange through the network plane's judges, shared by ``nika:fetch``, its crawl,
``nika:notify``'s webhooks and the images of ``infer.vision``.

Every hop is a new request, judged before it is sent, in this order: the URL is read by the one
parser (:mod:`runtime.net.url`); ``permits.net.http`` judges it (``extra["judge_url"]``, for every
hop after the first, and the first too with ``judge_first``); the SSRF floor
(:mod:`runtime.net.ssrf`) resolves the host once and the request connects to the judged address
(the ``Host`` header and TLS SNI keep the name); the egress judge (:mod:`runtime.net.egress`)
decides every secret the request carries, for the effect's sink at this host (the effect's
:class:`~runtime.net.egress.Carrier`: ``extra["egress"]``, else the one the executor set).
Redirects are followed by hand up to :data:`MAX_REDIRECTS`.

The body is read raw and decoded by the one bounded decoder (:mod:`runtime.net.decode`) under a
cap named in the error. Without a task ``timeout:`` the whole exchange, every hop and the body,
runs under the engine's network deadline (:func:`deadline_s`: :data:`DEFAULT_DEADLINE_S`, or
``NIKA_FETCH_DEADLINE_S``); a task ``timeout:`` governs instead (stdlib §nika:fetch: honour the
task-level timeout).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from checker.contracts.effects import canonical_host
from runtime.errors import TaskError
from runtime.net import egress
from runtime.net import url as urls
from runtime.net.decode import ACCEPT_ENCODING, BodyRefused, decoded
from runtime.net.ssrf import Allowance, judge_host, system_resolver

CODE = "NIKA-BUILTIN-FETCH-001"
MAX_REDIRECTS = 10
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
DEFAULT_TIMEOUT_S = 30.0  # each read and the connect of one hop
# The total deadline of one exchange (every hop and the body) when the task declares no `timeout:`.
DEFAULT_DEADLINE_S = 120.0
DEADLINE_ENV = "NIKA_FETCH_DEADLINE_S"
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


@dataclass(frozen=True)
class Response:
    """What a request answered: the final status, the URL that answered it, the body and headers."""

    status: int
    url: str
    body: bytes
    headers: Any


@cache
def _tls() -> Any:
    """One verifying TLS context for the clients made here (building one reads the CA bundle)."""
    import httpx

    return httpx.create_ssl_context()


def fail(message: str, *, transient: bool = False, **details: Any) -> TaskError:
    return TaskError(CODE, message, transient=transient, details=details)


def deadline_s(env: Mapping[str, str] | None) -> float | None:
    """The engine's total deadline for one network exchange of a task without ``timeout:``
    (``None`` when the task has one: its deadline governs)."""
    from runtime.guard.limits import EFFECT_DEADLINE

    if EFFECT_DEADLINE.get() is not None:
        return None
    raw = (env or {}).get(DEADLINE_ENV, "").strip()
    if not raw:
        return DEFAULT_DEADLINE_S
    try:
        value = float(raw)
    except ValueError:
        raise fail(f"{DEADLINE_ENV} is not a number of seconds: {raw!r}") from None
    if not value > 0:
        raise fail(f"{DEADLINE_ENV} must be a positive number of seconds, not {raw!r}")
    return value


def check_headers(headers: Mapping[str, str]) -> None:
    """A header name must be an RFC 9110 token and a value free of control characters (CR, LF,
    NUL…; a tab is allowed): a typed refusal, before anything is sent."""
    for k, v in headers.items():
        if not k or any(c not in _TOKEN for c in k):
            raise fail(f"the header name `{urls._shown(k)}` is not a valid HTTP field name")
        bad = next((c for c in v if (ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F), None)
        if bad is not None:
            raise fail(f"the header `{k}` contains the control character U+{ord(bad):04X}", header=k)


async def request(
    extra: dict[str, Any],
    method: str,
    url: str,
    headers: dict[str, str],
    payload: dict[str, Any],
    *,
    max_bytes: int = MAX_RESPONSE_BYTES,
    judge_first: bool = False,
    truncate: bool = False,
) -> Response:
    """``method url`` on the run's client (``extra["http"]``), hop by hop through the judges.

    ``judge_first``: the permits judge the first URL here too (a URL the dispatch did not see,
    such as a crawled link); the later hops are always judged. ``truncate``: a body past
    ``max_bytes`` is cut there instead of failing (robots.txt, RFC 9309 §2.5)."""
    limit = deadline_s(extra.get("env"))
    where = [urls._shown(url)]
    try:
        async with asyncio.timeout(limit) if limit is not None else contextlib.nullcontext():
            return await _exchange(extra, method, url, headers, payload, max_bytes, judge_first, truncate, where)
    except TimeoutError:
        if limit is None:
            raise
        raise fail(
            f"`{where[0]}` did not finish within the engine's network deadline of {limit:g} s "
            f"({DEADLINE_ENV}; a task `timeout:` sets its own)",
            transient=True,
            deadline_s=limit,
        ) from None


async def _exchange(
    extra: dict[str, Any],
    method: str,
    url: str,
    headers: dict[str, str],
    payload: dict[str, Any],
    max_bytes: int,
    judge_first: bool,
    truncate: bool,
    where: list[str],
) -> Response:
    import httpx

    http = extra.get("http")
    owned = http is None
    if owned:
        http = httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=DEFAULT_TIMEOUT_S, verify=_tls())
    allowance: Allowance = extra.get("ssrf_allow") or Allowance.from_env(extra.get("env"))
    resolve = extra.get("resolver") or system_resolver
    judge_url = extra.get("judge_url")
    carrier: egress.Carrier = extra.get("egress") or egress.current("nika:fetch")
    check_headers(headers)
    first: urls.Url | None = None
    try:
        for hop in range(MAX_REDIRECTS + 1):
            u = urls.parse(url)
            where[0] = u.host
            if (hop or judge_first) and judge_url is not None:
                judge_url(url)  # the permits re-judge every redirect hop
            first = first or u
            addr = judge_host(u.host, u.port, allowance, resolve)
            shown = f"[{addr}]" if addr.version == 6 else str(addr)
            pinned = f"{u.scheme}://{shown}:{u.port}{u.path}" + (f"?{u.query}" if u.query else "")
            hdrs = _hop_headers(headers, u)
            extensions = {"sni_hostname": u.host} if u.scheme == "https" else {}
            try:
                req = http.build_request(method, pinned, headers=hdrs, extensions=extensions, **payload)
                body = req.read() if payload else b""
            except httpx.HTTPError as e:
                raise fail(f"the request to `{u.host}` cannot be built: {type(e).__name__}") from None
            carried = egress.carried(carrier.held, url, hdrs, body)
            host, origin = canonical_host(u.host), canonical_host(first.host)
            carrier.decide(egress.Hop(carrier.sink, u.scheme, host, hop, origin, first.scheme, carried))
            resp = await _send(http, req, u.host)
            try:
                if resp.status_code in (301, 302, 303, 307, 308) and "location" in resp.headers:
                    url = urls.join(url, resp.headers["location"])
                    if resp.status_code == 303 or (resp.status_code in (301, 302) and method == "POST"):
                        method, payload = "GET", {}
                    continue
                data = await _read(resp, u.host, max_bytes, truncate)
                return Response(resp.status_code, url, data, resp.headers)
            finally:
                await resp.aclose()
        raise fail(f"more than {MAX_REDIRECTS} redirects (the engine's redirect cap)", max_redirects=MAX_REDIRECTS)
    finally:
        if owned:
            await http.aclose()


async def _send(http: Any, req: Any, host: str) -> Any:
    """One hop sent (its body streamed later); a transport failure as the typed failure it is."""
    import httpx

    try:
        return await http.send(req, stream=True)
    except httpx.TimeoutException as e:
        raise fail(f"`{host}` did not answer in time ({type(e).__name__})", transient=True) from None
    except httpx.RemoteProtocolError as e:
        if "location header" in str(e).lower():  # httpx reads a redirect's target as it answers
            raise fail(f"`{host}` redirected to a malformed `Location`: {e}") from None
        raise fail(f"the request to `{host}` failed: {type(e).__name__}", transient=True) from None
    except httpx.HTTPError as e:
        raise fail(f"the request to `{host}` failed: {type(e).__name__}", transient=True) from None


def _hop_headers(headers: dict[str, str], u: urls.Url) -> dict[str, str]:
    """The headers of one hop: the workflow's, the ``Host`` of this URL, the codings the bounded
    decoder reads, and ``Basic`` credentials from the URL's user info (RFC 7617) unless the
    workflow sets ``Authorization`` itself."""
    lower = {k.lower() for k in headers}
    hdrs = {**headers, "host": u.netloc}
    if "accept-encoding" not in lower:
        hdrs["accept-encoding"] = ACCEPT_ENCODING
    if u.user is not None and "authorization" not in lower:
        pair = f"{u.user}:{u.password or ''}".encode()
        hdrs["authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    return hdrs


async def _read(resp: Any, host: str, max_bytes: int, truncate: bool) -> bytes:
    import httpx

    body = bytearray()
    try:
        async for piece in decoded(resp, max_bytes):
            body += piece
    except BodyRefused as e:
        if e.limit is None:
            raise fail(f"the response from `{host}` is refused: {e.why}") from None
        if truncate:
            return bytes(body[:max_bytes])
        raise fail(
            f"the response from `{host}` is larger than the {_size(max_bytes)} response-size cap",
            limit_bytes=max_bytes,
        ) from None
    except httpx.TimeoutException as e:
        raise fail(f"`{host}` stopped sending before the body ended ({type(e).__name__})", transient=True) from None
    except httpx.HTTPError as e:
        raise fail(f"reading the response from `{host}` failed: {type(e).__name__}", transient=True) from None
    return bytes(body)


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 else f"{n // 1024} KiB"
