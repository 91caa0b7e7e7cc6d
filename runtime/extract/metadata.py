"""``metadata``: the document head and its embedded structured data as one object (extract modes
§metadata). ``og``/``twitter`` are always objects; every other key only when the page has it;
``title``/``description`` fall back to their OpenGraph/Twitter spellings; URL values absolute."""

from __future__ import annotations

import json
from typing import Any

from runtime.extract import Page
from runtime.extract.document import absolute, base_url, parse
from runtime.extract.microdata import items

_URL_KEYS = {"og": ("image", "url", "image:url", "image:secure_url", "video", "audio"), "twitter": ("image",)}
_AUTHOR = ("author", "article:author", "dc.creator")
_PUBLISHED = ("article:published_time", "datePublished", "dc.date", "date", "pubdate")


def metadata(page: Page, args: dict[str, Any]) -> dict[str, Any]:
    tree = parse(page)
    base = base_url(tree, page.url)
    og, twitter, named = _meta_tags(tree, base)
    out: dict[str, Any] = {}
    title = tree.css_first("title")
    _put(
        out,
        "title",
        " ".join(title.text().split()) if title is not None else None,
        og.get("title"),
        twitter.get("title"),
    )
    _put(out, "description", named.get("description"), og.get("description"), twitter.get("description"))
    out["og"], out["twitter"] = og, twitter
    _put(out, "canonical", _link(tree, base, "canonical"))
    html = tree.css_first("html")
    _put(out, "lang", (html.attributes.get("lang") or "").strip() if html is not None else None)
    jsonld = _jsonld(tree)
    ld = next((x for x in jsonld if isinstance(x, dict)), {})
    _put(out, "author", *(named.get(k) for k in _AUTHOR), _ld_author(ld.get("author")))
    _put(out, "published_time", *(named.get(k) for k in _PUBLISHED), _ld_text(ld.get("datePublished")))
    _put(out, "favicon", _link(tree, base, "icon") or _link(tree, base, "shortcut icon"))
    alternates = [
        {"href": absolute(base, a.attributes.get("href")), "hreflang": a.attributes.get("hreflang")}
        for a in tree.css('link[rel~="alternate"][hreflang][href]')
    ]
    if alternates:
        out["alternates"] = alternates
    if jsonld:
        out["jsonld"] = jsonld
    micro = items(tree, base)
    if micro:
        out["microdata"] = micro
    return out


def _put(out: dict[str, Any], key: str, *candidates: str | None) -> None:
    for c in candidates:
        if c is not None and str(c).strip():
            out[key] = str(c).strip()
            return


def _meta_tags(tree: Any, base: str) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    og: dict[str, str] = {}
    twitter: dict[str, str] = {}
    named: dict[str, str] = {}
    for m in tree.css("meta[content]"):
        attrs = m.attributes
        key = (attrs.get("property") or attrs.get("name") or attrs.get("itemprop") or "").strip()
        content = attrs.get("content") or ""
        if not key:
            continue
        low = key.lower()
        for prefix, bucket in (("og:", og), ("twitter:", twitter)):
            if low.startswith(prefix):
                sub = low[len(prefix) :]
                if sub in _URL_KEYS[prefix[:-1]]:
                    content = absolute(base, content) or content
                bucket.setdefault(sub, content)
                break
        else:
            named.setdefault(key if key == "datePublished" else low, content)
    return og, twitter, named


def _ld_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _ld_author(value: Any) -> str | None:
    """A JSON-LD ``author``: a name, a Person object, or a list of either (the first)."""
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("name")
    return _ld_text(value)


def _link(tree: Any, base: str, rel: str) -> str | None:
    node = tree.css_first(f'link[rel="{rel}" i][href]')
    if node is None and " " not in rel:
        node = tree.css_first(f'link[rel~="{rel}" i][href]')
    return absolute(base, node.attributes.get("href")) if node is not None else None


def _jsonld(tree: Any) -> list[Any]:
    """Every parseable ``application/ld+json`` block (an array block spreads); a broken block is skipped."""
    found: list[Any] = []
    for script in tree.css('script[type="application/ld+json" i]'):
        try:
            value = json.loads(script.text(deep=True) or "")
        except ValueError:
            continue
        found.extend(value if isinstance(value, list) else [value])
    return found
