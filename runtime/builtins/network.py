"""``nika:fetch`` (stdlib builtins §Network builtins) on the run's one ``httpx`` client.

The request rides :func:`runtime.net.client.request` (the SSRF floor on every hop, redirects
re-judged, the response-size cap); the body is then shaped by the extract mode
(:mod:`runtime.extract`), or the site is crawled (:mod:`runtime.extract.traverse`).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._support import arg
from runtime.errors import TaskError
from runtime.net.client import fail, request

TOOL = "nika:fetch"
MAX_MULTIPART_BYTES = 32 * 1024 * 1024
BODY_METHODS = ("POST", "PUT", "PATCH")


def _part_bytes(path: Any, shown: str) -> bytes:
    """The octets of a multipart file part; a missing or unreadable file fails as `nika:read` does."""
    from runtime.builtins._support import read_regular

    try:  # the one bounded reader: a FIFO or a device under the grant is refused, never waited on
        return read_regular(path)
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
        raise fail(f"give at most one of `body`, `form`, `multipart` (got {', '.join(given)})")
    if not given:
        return {}
    kind = given[0]
    if kind in ("form", "multipart"):
        if method not in BODY_METHODS:
            raise fail(f"`{kind}` needs a body-bearing method (POST, PUT or PATCH), not {method}")
        if any(k.lower() == "content-type" for k in headers):
            raise fail(f"`{kind}` sets the content-type itself; drop the `content-type` header")
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
                raise fail(f"`form.{k}` must be a string, number or boolean (reshape nested data with nika:jq)")
            fields[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
        return {"data": fields}
    data: dict[str, list[str]] = {}
    files: list[tuple[str, tuple[str, bytes, str]]] = []
    total = 0
    if len(value) > 64:
        raise fail(f"`multipart` has {len(value)} parts; at most 64 are allowed")
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
            raise fail("`multipart` parts exceed 32 MiB in total")
    return {"data": data, "files": files}


@builtin(TOOL)
async def fetch(args: dict[str, Any], ctx: BuiltinContext) -> Any:
    from runtime import extract

    url = args["url"]
    if args.get("traverse") is not None:
        from runtime.extract.traverse import crawl

        return await crawl(ctx.extra, url, args["traverse"], _headers(args))
    method = str(arg(args, TOOL, "method") or "GET").upper()
    mode = str(arg(args, TOOL, "mode") or "markdown")
    extract.check_mode(mode)
    headers = _headers(args)
    payload = _payload(args, method, headers, ctx)
    resp = await request(ctx.extra, method, url, headers, payload)
    if not 200 <= resp.status < 300:
        raise fail(
            f"`{urlsplit(resp.url).hostname}` answered HTTP {resp.status}",
            transient=resp.status >= 500 or resp.status in (408, 429),
            status_code=resp.status,
            url=resp.url,
        )
    page = extract.Page(resp.url, resp.body, str(resp.headers.get("content-type") or ""))
    return await extract.run(mode, page, args)


def _headers(args: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (args.get("headers") or {}).items()}
