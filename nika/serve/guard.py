"""The checks every request passes (SECURITY.md, "nika serve"): the bearer token, the dashboard's
session cookie and CSRF token, webhook signatures, and bounded bodies. Plain data in, a verdict out."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

TOKEN_ENV = "NIKA_SERVE_TOKEN"
SESSION_COOKIE = "nika_serve_session"


class TooLarge(Exception):
    """The request body is over the bound."""


class BadBody(Exception):
    """The request body is not what the endpoint takes (one line says why)."""


def token_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "nika" / "serve-token"


def load_token(environ: dict[str, str] | None = None) -> tuple[str, str]:
    """The bearer token and where it came from: ``NIKA_SERVE_TOKEN`` when set, else the token stored
    in the user's configuration folder (generated on first start, written 0600 in a 0700 folder)."""
    env = os.environ if environ is None else environ
    if env.get(TOKEN_ENV):
        return env[TOKEN_ENV], TOKEN_ENV
    path = token_file()
    try:
        if path.is_file():
            if path.stat().st_mode & 0o077:
                os.chmod(path, 0o600)  # never readable by another user
            text = path.read_text(encoding="utf-8").strip()
            if len(text) >= 32:
                return text, str(path)
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    os.chmod(path, 0o600)
    return token, str(path)


def bearer_ok(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header carries the token (compared in constant time)."""
    if not header or not token:
        return False
    scheme, _, value = header.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode())


def session_value(token: str) -> str:
    """The dashboard's session cookie: derived from the token, never the token itself."""
    return hmac.new(token.encode(), b"nika-serve-session", hashlib.sha256).hexdigest()


def session_ok(cookie: str | None, token: str) -> bool:
    return bool(cookie) and bool(token) and hmac.compare_digest(str(cookie).encode(), session_value(token).encode())


def csrf_value(token: str) -> str:
    """The CSRF token every dashboard form carries in a hidden field (bound to the session)."""
    return hmac.new(token.encode(), b"nika-serve-csrf", hashlib.sha256).hexdigest()


def csrf_ok(field: str | None, token: str) -> bool:
    return bool(field) and hmac.compare_digest(str(field).encode(), csrf_value(token).encode())


def same_origin(origin: str | None, host: str | None) -> bool:
    """Whether a browser's ``Origin`` names this server (a missing Origin is judged by the CSRF token alone)."""
    if not origin:
        return True
    if origin == "null" or not host:
        return False
    _, _, rest = origin.partition("://")
    return rest.rstrip("/") == host


def signature_ok(body: bytes, header: str | None, secret: str) -> bool:
    """A webhook's ``X-Hub-Signature-256: sha256=HEX`` over the exact body bytes (GitHub's scheme)."""
    if not header or not secret or not header.startswith("sha256="):
        return False
    want = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(header[len("sha256=") :].strip().encode(), want.encode())


async def read_body(request: Any, limit: int) -> bytes:
    """The body, read in chunks and cut off at ``limit`` bytes (a lying or missing Content-Length included)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise TooLarge
    got = bytearray()
    async for chunk in request.stream():
        got += chunk
        if len(got) > limit:
            raise TooLarge
    return bytes(got)


def json_object(body: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise BadBody(f"the body is not JSON ({type(exc).__name__})") from None
    if not isinstance(doc, dict):
        raise BadBody("the body must be a JSON object")
    return doc
