"""An HTML response as a parsed document (selectolax's Lexbor engine): decoded by its declared
charset, its effective base URL (WHATWG: a ``<base href>`` resolved against the fetch URL), and
the clean-up the content modes share (lazy-loaded images resolved to the real, largest source)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin

from runtime.extract import Page
from runtime.net.client import fail

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_HEADER_CHARSET = re.compile(r"charset\s*=\s*\"?([A-Za-z0-9_.:-]+)", re.IGNORECASE)
# Lexbor slows with the square of the nesting depth (seconds at 20,000 levels) and the Markdown
# converter stops descending past ~1,020; real pages nest a few dozen levels. Deeper is refused
# before parsing, so no mode ever returns a silently shortened page.
MAX_DEPTH = 1000
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(/?)>")
_VOID = ("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr")
_IMPLIED_END = ("p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot", "caption")
_NO_DEPTH = frozenset((*_VOID, *_IMPLIED_END, "rb", "rt", "rp", "colgroup"))
LAZY_SRC = ("data-src", "data-lazy-src", "data-original", "data-url")
LAZY_SRCSET = ("data-srcset", "data-lazy-srcset", "srcset")


def decode(page: Page) -> str:
    """The body as text: the header's charset, else a ``<meta charset>`` in the first 2 KiB, else
    UTF-8 when it decodes, else windows-1252 (the WHATWG fallback for undeclared legacy pages).
    Undecodable bytes become U+FFFD: a page is read, never refused, for one bad byte."""
    found = _HEADER_CHARSET.search(page.content_type or "")
    charset = found.group(1) if found else None
    if charset is None:
        sniff = _META_CHARSET.search(page.body[:2048])
        charset = sniff.group(1).decode("ascii", errors="replace") if sniff else None
    if charset is None:
        try:
            return page.body.decode("utf-8")
        except UnicodeDecodeError:
            charset = "windows-1252"
    try:
        return page.body.decode(charset, errors="replace")
    except LookupError:
        return page.body.decode("utf-8", errors="replace")


def nesting_depth(html: str, limit: int = MAX_DEPTH) -> int:
    """The deepest element nesting of ``html`` as open minus close tags (void and implied-end
    elements not counted), stopping as soon as it passes ``limit``."""
    depth = deepest = 0
    for m in _TAG.finditer(html):
        if m.group(2).lower() in _NO_DEPTH or m.group(3):
            continue
        depth = max(depth - 1, 0) if m.group(1) else depth + 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
    return deepest


def parse(page: Page) -> Any:
    from selectolax.lexbor import LexborHTMLParser

    html = decode(page)
    if nesting_depth(html) > MAX_DEPTH:
        raise fail(
            f"the page nests elements more than {MAX_DEPTH} deep, past what the extractor reads", limit=MAX_DEPTH
        )
    return LexborHTMLParser(html)


def base_url(tree: Any, url: str) -> str:
    base = tree.css_first("base[href]")
    href = (base.attributes.get("href") or "").strip() if base is not None else ""
    return urljoin(url, href) if href else url


def absolute(base: str, href: str | None) -> str | None:
    href = (href or "").strip()
    return urljoin(base, href) if href else None


def largest_candidate(srcset: str) -> str | None:
    """The URL of the largest candidate of a ``srcset`` (by ``w``, else ``x`` descriptor)."""
    best: tuple[float, str] | None = None
    for raw in srcset.split(","):
        bits = raw.strip().split()
        if not bits:
            continue
        size = 1.0
        if len(bits) > 1 and bits[1][-1:] in ("w", "x"):
            try:
                size = float(bits[1][:-1])
            except ValueError:
                size = 1.0
        if best is None or size > best[0]:
            best = (size, bits[0])
    return best[1] if best else None


def image_source(node: Any) -> str | None:
    """An ``<img>``'s real source: the largest ``srcset`` candidate, else a lazy ``data-src``,
    else ``src`` (a ``data:`` placeholder never wins over a real URL)."""
    attrs = node.attributes
    for key in LAZY_SRCSET:
        if attrs.get(key):
            found = largest_candidate(attrs[key] or "")
            if found:
                return found
    for key in LAZY_SRC:
        if attrs.get(key):
            return attrs[key]
    return attrs.get("src")


def resolve_images(tree: Any, base: str) -> None:
    """Rewrite every ``<img src>`` to its real source, absolute, so the converters see it."""
    for img in tree.css("img"):
        src = image_source(img)
        if src:
            img.attrs["src"] = urljoin(base, src)
        for key in (*LAZY_SRCSET, *LAZY_SRC):
            if key in img.attributes:
                del img.attrs[key]
    for pic in tree.css("picture source"):
        pic.decompose()
