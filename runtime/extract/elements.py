"""``selector`` (the raw HTML of every element a CSS selector matches, concatenated in document
order) and ``links`` (every ``<a href>``, absolute against the document's effective base)."""

from __future__ import annotations

from typing import Any

from runtime.extract import Page
from runtime.extract.document import absolute, base_url, parse
from runtime.net.client import MAX_RESPONSE_BYTES, fail

# Not addresses a reader could follow: script and inline-data pseudo-links are left out.
_NOT_LINKS = ("javascript:", "data:", "vbscript:")


def selector(page: Page, args: dict[str, Any]) -> str:
    from selectolax.lexbor import SelectolaxError

    query = str(args.get("selector") or "")
    tree = parse(page)
    try:
        found = tree.css(query)
    except (SelectolaxError, ValueError) as e:
        raise fail(f"`{query}` is not a CSS selector this engine can match: {e}", selector=query) from None
    parts: list[str] = []
    total = 0
    for node in found:  # nested matches repeat their inner HTML: bounded like a response
        html = node.html or ""
        total += len(html)
        if total > MAX_RESPONSE_BYTES:
            raise fail(
                f"the elements `{query}` matches add up to more than the 32 MiB response-size cap", selector=query
            )
        parts.append(html)
    return "".join(parts)


def links(page: Page, args: dict[str, Any]) -> list[str]:
    """Document order, each address once (a page links its menu many times)."""
    tree = parse(page)
    return hrefs(tree, base_url(tree, page.url))


def hrefs(tree: Any, base: str) -> list[str]:
    seen: dict[str, None] = {}
    for a in tree.css("a[href]"):
        href = (a.attributes.get("href") or "").strip()
        if not href or href.lower().startswith(_NOT_LINKS):
            continue
        url = absolute(base, href)
        if url:
            seen.setdefault(url, None)
    return list(seen)
