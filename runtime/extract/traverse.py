"""``nika:fetch`` with ``traverse:``: a bounded same-origin breadth-first crawl (stdlib builtins
§traverse semantics).

From ``url``, each page is fetched (GET, through the SSRF floor; every page after the first
judged by the permits like any other URL), digested into the fixed page digest, and its
same-origin links (fragment stripped, each once) queued until ``max_pages`` requests are spent.
robots.txt is honoured by default with RFC 9309 group semantics (``protego``): a missing or
unreadable file allows all, a disallowed root fails loudly, disallowed descendants are skipped.
A failing descendant becomes ``{url, status}`` or ``{url, error}`` and the crawl goes on.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

from runtime.errors import TaskError
from runtime.extract import Page
from runtime.extract.document import base_url, image_source, parse
from runtime.extract.elements import hrefs
from runtime.net.client import fail, request

AGENT = "nika"
ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309 §2.5: a parser must read at least 500 KiB
LIMITS = {"headings": 16, "links": 30, "images": 24, "colors": 20, "text": 4000}
ASSET_LIMITS = {"images": 40, "colors": 30}
_COLOR = re.compile(r"#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3,4})\b|(?:rgb|hsl)a?\([^()]{1,60}\)")


def _origin(url: str) -> tuple[str, str, int | None]:
    p = urlsplit(url)
    return p.scheme, (p.hostname or "").lower(), p.port or (443 if p.scheme == "https" else 80)


async def crawl(extra: dict[str, Any], url: str, spec: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    root = urldefrag(url)[0]
    max_pages = int(spec["max_pages"])
    robots = await _robots(extra, root, headers) if spec.get("respect_robots", True) is not False else None
    if robots is not None and not robots.can_fetch(root, AGENT):
        raise fail(f"robots.txt of `{urlsplit(root).netloc}` disallows the crawl's root `{root}`", url=root)
    origin = _origin(root)
    queue: deque[str] = deque([root])
    seen = {root}
    pages: list[dict[str, Any]] = []
    while queue and len(pages) < max_pages:
        page_url = queue.popleft()
        entry, links = await _visit(extra, page_url, headers, first=not pages)
        pages.append(entry)
        for link in links:
            link = urldefrag(link)[0]
            if link in seen or _origin(link) != origin:
                continue
            seen.add(link)
            if robots is None or robots.can_fetch(link, AGENT):
                queue.append(link)
    return {"url": root, "page_count": len(pages), "pages": pages, "assets": _assets(pages)}


async def _robots(extra: dict[str, Any], root: str, headers: dict[str, str]) -> Any:
    from protego import Protego

    p = urlsplit(root)
    try:
        where = f"{p.scheme}://{p.netloc}/robots.txt"
        resp = await request(
            extra, "GET", where, headers, {}, max_bytes=ROBOTS_MAX_BYTES, judge_first=True, truncate=True
        )
        if not 200 <= resp.status < 300:
            return None
        if b"\0" in resp.body:
            return None  # binary: unreadable
        return Protego.parse(resp.body.decode("utf-8", errors="replace"))
    except (TaskError, UnicodeDecodeError, ValueError):
        return None  # missing, unparseable or unreachable: allow all (§traverse)


Digest = tuple[dict[str, Any], list[str]]


async def _visit(extra: dict[str, Any], url: str, headers: dict[str, str], *, first: bool) -> Digest:
    try:
        resp = await request(extra, "GET", url, headers, {}, judge_first=not first)
    except TaskError as e:
        if first:
            raise
        return {"url": url, "error": f"{e.code}: {e.message}"}, []
    if not 200 <= resp.status < 300:
        if first:
            raise fail(
                f"the crawl's root `{url}` answered HTTP {resp.status}",
                transient=resp.status >= 500 or resp.status in (408, 429),
                status_code=resp.status,
                url=url,
            )
        return {"url": url, "status": resp.status}, []
    return _digest(url, resp.status, Page(resp.url, resp.body, str(resp.headers.get("content-type") or "")))


def _digest(url: str, status: int, page: Page) -> Digest:
    from runtime.extract.content import text

    ctype = page.content_type.lower()
    entry: dict[str, Any] = {"url": url, "status": status, "title": "", "description": ""}
    entry.update({"headings": [], "links": [], "images": [], "colors": [], "text": ""})
    if ctype and "html" not in ctype:
        if ctype.startswith("text/"):
            entry["text"] = page.body.decode("utf-8", errors="replace")[: LIMITS["text"]]
        return entry, []
    tree = parse(page)
    base = base_url(tree, page.url)
    title = tree.css_first("title")
    entry["title"] = " ".join(title.text().split()) if title is not None else ""
    desc = tree.css_first('meta[name="description" i][content], meta[property="og:description"][content]')
    entry["description"] = (desc.attributes.get("content") or "").strip() if desc is not None else ""
    heads = [" ".join(h.text().split()) for h in tree.css("h1, h2, h3, h4, h5, h6")]
    entry["headings"] = [h for h in heads if h][: LIMITS["headings"]]
    links = hrefs(tree, base)
    entry["links"] = links[: LIMITS["links"]]
    images = [image_source(i) for i in tree.css("img")]
    entry["images"] = _unique(_abs_all(base, images))[: LIMITS["images"]]
    entry["colors"] = _colors(tree)[: LIMITS["colors"]]
    entry["text"] = text(page, {})[: LIMITS["text"]]
    return entry, links


def _abs_all(base: str, urls: list[str | None]) -> list[str]:
    return [urljoin(base, u) for u in urls if u and not u.startswith("data:")]


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _colors(tree: Any) -> list[str]:
    found: list[str] = []
    theme = tree.css_first('meta[name="theme-color" i][content]')
    if theme is not None:
        found.append((theme.attributes.get("content") or "").strip().lower())
    sources = [s.text(deep=True) for s in tree.css("style")]
    sources += [n.attributes.get("style") or "" for n in tree.css("[style]")]
    for src in sources:
        found.extend(m.group(0).lower().replace(" ", "") for m in _COLOR.finditer(src))
    return _unique([c for c in found if c])


def _assets(pages: list[dict[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for key, cap in ASSET_LIMITS.items():
        out[key] = _unique([v for p in pages for v in p.get(key, [])])[:cap]
    return out
