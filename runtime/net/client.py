"""One HTTP exchange through the SSRF floor, shared by ``nika:fetch``, its crawl and ``nika:notify``.

Every hop goes through :mod:`runtime.net.ssrf`: the host is resolved once and the request connects
to the judged address (the ``Host`` header and TLS SNI keep the name, so the certificate is still
verified against it). Redirects are followed by hand up to :data:`MAX_REDIRECTS`, each hop
re-judged by the permits (``extra["judge_url"]``) and the floor. The body is read up to a cap
named in the error.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from runtime.errors import TaskError
from runtime.net.ssrf import Allowance, judge_host, system_resolver

CODE = "NIKA-BUILTIN-FETCH-001"
MAX_REDIRECTS = 10
MAX_RESPONSE_BYTES = 32 * 1024 * 1024
DEFAULT_TIMEOUT_S = 30.0


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


def _not_http(url: str) -> TaskError:
    return TaskError(
        "NIKA-SEC-004", f"`{url}` is not an http(s) URL with a host", details={"plane": "net", "gate": url}
    )


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
    """``method url`` on the run's client (``extra["http"]``), hop by hop through the floor.

    ``judge_first``: the permits judge the first URL here too (a URL the dispatch did not see,
    such as a crawled link); the later hops are always judged. ``truncate``: a body past
    ``max_bytes`` is cut there instead of failing (robots.txt, RFC 9309 §2.5)."""
    import httpx

    http = extra.get("http")
    owned = http is None
    if owned:
        http = httpx.AsyncClient(follow_redirects=False, trust_env=False, timeout=DEFAULT_TIMEOUT_S, verify=_tls())
    allowance: Allowance = extra.get("ssrf_allow") or Allowance.from_env(extra.get("env"))
    resolve = extra.get("resolver") or system_resolver
    judge_url = extra.get("judge_url")
    try:
        for hop in range(MAX_REDIRECTS + 1):
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise _not_http(url)
            if (hop or judge_first) and judge_url is not None:
                judge_url(url)  # the permits re-judge every redirect hop
            host = parts.hostname
            port = parts.port or (443 if parts.scheme == "https" else 80)
            addr = judge_host(host, port, allowance, resolve)
            shown = f"[{addr}]" if addr.version == 6 else str(addr)
            pinned = urlunsplit((parts.scheme, f"{shown}:{port}", parts.path or "/", parts.query, ""))
            hdrs = {**headers, "host": parts.netloc.rsplit("@", 1)[-1]}
            extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
            try:
                req = http.build_request(method, pinned, headers=hdrs, extensions=extensions, **payload)
                resp = await http.send(req, stream=True)
            except httpx.TimeoutException as e:
                raise fail(f"`{host}` did not answer in time ({type(e).__name__})", transient=True) from None
            except httpx.HTTPError as e:
                raise fail(f"the request to `{host}` failed: {type(e).__name__}", transient=True) from None
            try:
                if resp.status_code in (301, 302, 303, 307, 308) and "location" in resp.headers:
                    url = urljoin(url, resp.headers["location"])
                    if resp.status_code == 303 or (resp.status_code in (301, 302) and method == "POST"):
                        method, payload = "GET", {}
                    continue
                body = await _read(resp, host, max_bytes, truncate)
                return Response(resp.status_code, url, body, resp.headers)
            finally:
                await resp.aclose()
        raise fail(f"more than {MAX_REDIRECTS} redirects (the engine's redirect cap)", max_redirects=MAX_REDIRECTS)
    finally:
        if owned:
            await http.aclose()


async def _read(resp: Any, host: str, max_bytes: int, truncate: bool) -> bytes:
    import httpx

    body = bytearray()
    try:
        async for chunk in resp.aiter_bytes():
            body.extend(chunk)
            if len(body) > max_bytes:
                if truncate:
                    return bytes(body[:max_bytes])
                raise fail(
                    f"the response from `{host}` is larger than the {_size(max_bytes)} response-size cap",
                    limit_bytes=max_bytes,
                )
    except httpx.TimeoutException as e:
        raise fail(f"`{host}` stopped sending before the body ended ({type(e).__name__})", transient=True) from None
    except httpx.HTTPError as e:
        raise fail(f"reading the response from `{host}` failed: {type(e).__name__}", transient=True) from None
    return bytes(body)


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 else f"{n // 1024} KiB"
