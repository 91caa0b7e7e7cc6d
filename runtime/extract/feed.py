"""``feed``: RSS, Atom (``feedparser``, which also sanitises the entries' HTML) or JSON Feed
(mapped from its JSON) into one normalised shape (extract modes §feed). A field the source lacks is
left out, never null; dates are RFC 3339 UTC."""

from __future__ import annotations

import json
import time
from typing import Any

from runtime.extract import Page
from runtime.net.client import fail


def feed(page: Page, args: dict[str, Any]) -> dict[str, Any]:
    head = page.body.lstrip()[:1]
    if head in (b"{", b"["):
        return _json_feed(page.body)
    return _xml_feed(page.body)


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v not in (None, "", [], {})}


def _when(parsed: Any, fallback: Any = None) -> str | None:
    if parsed:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", parsed)
    return fallback or None


def _xml_feed(body: bytes) -> dict[str, Any]:
    import feedparser

    d = feedparser.parse(body, sanitize_html=True, resolve_relative_uris=True)
    if not d.get("version") and not d.entries:
        why = f": {d.bozo_exception}" if d.get("bozo") else ""
        raise fail(f"the response is not an RSS, Atom or JSON feed{why}")
    f = d.feed
    out = _clean(
        {
            "title": f.get("title"),
            "description": f.get("subtitle") or f.get("description"),
            "link": f.get("link"),
            "updated": _when(f.get("updated_parsed"), f.get("updated")),
        }
    )
    out["items"] = [_xml_item(e) for e in d.entries]
    return out


def _xml_item(e: Any) -> dict[str, Any]:
    content = e.get("content") or []
    summary = e.get("summary")
    full = content[0].get("value") if content else None
    return _clean(
        {
            "id": e.get("id"),
            "title": e.get("title"),
            "link": e.get("link"),
            "author": e.get("author"),
            "summary": summary,
            "content": full,
            "published": _when(e.get("published_parsed") or e.get("updated_parsed"), e.get("published")),
            "categories": [t.get("term") for t in e.get("tags") or [] if t.get("term")],
            "media": _media(e),
        }
    )


def _media(e: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    duration = _seconds(e.get("itunes_duration"))
    for enc in e.get("enclosures") or []:
        url = enc.get("href") or enc.get("url")
        if url and url not in seen:
            seen.add(url)
            found.append(_one_media(url, enc.get("type"), enc.get("length"), duration))
    for m in e.get("media_content") or []:
        url = m.get("url")
        if url and url not in seen:
            seen.add(url)
            found.append(_one_media(url, m.get("type"), m.get("filesize"), _seconds(m.get("duration"))))
    return found


def _one_media(url: str, kind: Any, size: Any, duration: int | None) -> dict[str, Any]:
    return _clean({"url": url, "type": kind, "size": _int(size), "duration_secs": duration})


def _int(v: Any) -> int | None:
    try:
        return int(str(v).strip()) if v not in (None, "") else None
    except ValueError:
        return None


def _seconds(v: Any) -> int | None:
    """``1800``, ``30:00`` or ``0:30:00`` as seconds (iTunes and MediaRSS spellings)."""
    if v in (None, ""):
        return None
    total = 0
    try:
        for part in str(v).strip().split(":"):
            total = total * 60 + int(float(part))
    except ValueError:
        return None
    return total


def _json_feed(body: bytes) -> dict[str, Any]:
    try:
        doc = json.loads(body)
    except ValueError:
        raise fail("the response is not an RSS, Atom or JSON feed (its JSON does not parse)") from None
    if not isinstance(doc, dict) or not str(doc.get("version", "")).startswith("https://jsonfeed.org/version/"):
        raise fail("the response is JSON but not a JSON Feed (no jsonfeed.org `version`)")
    out = _clean({"title": doc.get("title"), "description": doc.get("description"), "link": doc.get("home_page_url")})
    out["items"] = [_json_item(i) for i in doc.get("items") or [] if isinstance(i, dict)]
    return out


def _json_item(i: dict[str, Any]) -> dict[str, Any]:
    authors = i.get("authors") or ([i["author"]] if isinstance(i.get("author"), dict) else [])
    author = next((a.get("name") for a in authors if isinstance(a, dict) and a.get("name")), None)
    return _clean(
        {
            "id": None if i.get("id") is None else str(i["id"]),
            "title": i.get("title"),
            "link": i.get("url"),
            "author": author,
            "summary": i.get("summary"),
            "content": i.get("content_html") or i.get("content_text"),
            "published": i.get("date_published") or i.get("date_modified"),
            "categories": [str(t) for t in i.get("tags") or []],
            "media": [
                _one_media(a["url"], a.get("mime_type"), a.get("size_in_bytes"), _int(a.get("duration_in_seconds")))
                for a in i.get("attachments") or []
                if isinstance(a, dict) and a.get("url")
            ],
        }
    )
