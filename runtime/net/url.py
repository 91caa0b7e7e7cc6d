"""The one URL parser of the network plane: every URL a request is about to reach (a ``nika:fetch``
``url:``, each redirect ``Location``, a crawled link, a ``nika:notify`` webhook target, an image
URL of ``infer.vision``) is read here, and what cannot be reached is a typed refusal, never an
engine error: not http(s) or no host is NIKA-SEC-004 (the permits' own answer); a malformed port,
a control character or an unreadable authority is NIKA-BUILTIN-FETCH-001 (not transient)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from runtime.errors import TaskError

FETCH = "NIKA-BUILTIN-FETCH-001"


@dataclass(frozen=True)
class Url:
    """An http(s) URL as the client sends it: ``netloc`` without its user info, the default port
    filled in, ``user``/``password`` percent-decoded (``None`` when absent)."""

    text: str
    scheme: str
    host: str
    port: int
    netloc: str
    path: str
    query: str
    user: str | None = None
    password: str | None = None


def malformed(url: str, why: str) -> TaskError:
    return TaskError(FETCH, f"`{_shown(url)}` is not a valid URL: {why}", details={"url": _shown(url)})


def not_http(url: str) -> TaskError:
    return TaskError(
        "NIKA-SEC-004",
        f"`{_shown(url)}` is not an http(s) URL with a host",
        details={"plane": "net", "gate": _shown(url)},
    )


def parse(url: object) -> Url:
    """``url`` read for a request, or the typed refusal of it."""
    if not isinstance(url, str) or not url:
        raise not_http(str(url))
    bad = next((c for c in url if ord(c) < 0x20 or ord(c) == 0x7F), None)
    if bad is not None:
        raise malformed(url, f"it contains the control character U+{ord(bad):04X}")
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        raise malformed(url, str(exc)) from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not host:
        raise not_http(url)
    try:
        port = parts.port
    except ValueError:
        raw = parts.netloc.rsplit("@", 1)[-1].rsplit("]", 1)[-1].partition(":")[2]
        raise malformed(url, f"the port `{raw}` is not a number from 0 to 65535") from None
    netloc = parts.netloc.rsplit("@", 1)[-1]
    user = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    return Url(
        url,
        scheme,
        host,
        port if port is not None else (443 if scheme == "https" else 80),
        netloc,
        parts.path or "/",
        parts.query,
        user,
        password,
    )


def join(base: str, location: str) -> str:
    """The absolute URL a redirect ``Location`` names (the next hop parses it)."""
    from urllib.parse import urljoin

    try:
        return urljoin(base, location)
    except ValueError as exc:
        raise malformed(location, f"the redirect `Location` cannot be read ({exc})") from None


def _shown(url: str) -> str:
    text = url if len(url) <= 200 else url[:199] + "…"
    return "".join(c if 0x20 <= ord(c) != 0x7F else f"\\x{ord(c):02x}" for c in text)
