"""An HTML response as a parsed document (selectolax's Lexbor engine): decoded by its declared
charset, its effective base URL (WHATWG: a ``<base href>`` resolved against the fetch URL), and
the clean-up the content modes share (lazy-loaded images resolved to the real, largest source)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urljoin

from runtime.extract import Page

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_HEADER_CHARSET = re.compile(r"charset\s*=\s*\"?([A-Za-z0-9_.:-]+)", re.IGNORECASE)
LAZY_SRC = ("data-src", "data-lazy-src", "data-original", "data-url")
LAZY_SRCSET = ("data-srcset", "data-lazy-srcset", "srcset")


def decode(page: Page) -> str:
    """The body as text: the header's charset, else a ``<meta charset>`` in the first 2 KiB, else
    UTF-8; undecodable bytes become U+FFFD (a page is read, never refused, for one bad byte)."""
    found = _HEADER_CHARSET.search(page.content_type or "")
    charset = found.group(1) if found else None
    if charset is None:
        sniff = _META_CHARSET.search(page.body[:2048])
        charset = sniff.group(1).decode("ascii") if sniff else "utf-8"
    try:
        return page.body.decode(charset, errors="replace")
    except LookupError:
        return page.body.decode("utf-8", errors="replace")


def parse(page: Page) -> Any:
    from selectolax.lexbor import LexborHTMLParser

    return LexborHTMLParser(decode(page))


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
