"""``sitemap``: a sitemap.xml ``<urlset>`` or a ``<sitemapindex>`` as ``[{loc, lastmod?}]`` (extract
modes §sitemap). An index lists its child sitemaps (each one more fetch, never made implicitly:
a crawl's requests stay countable). Parsed by lxml with entities and the network off; a gzip body
is inflated under the response-size cap."""

from __future__ import annotations

import zlib
from typing import Any

from runtime.extract import Page
from runtime.net.client import MAX_RESPONSE_BYTES, fail


def sitemap(page: Page, args: dict[str, Any]) -> list[dict[str, str]]:
    from lxml import etree

    body = _inflate(page.body) if page.body[:2] == b"\x1f\x8b" else page.body
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=False)
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as e:
        raise fail(f"the response is not a sitemap: its XML does not parse ({e})") from None
    kind = etree.QName(root).localname
    if kind not in ("urlset", "sitemapindex"):
        raise fail(f"the response is not a sitemap: its root element is `<{kind}>`, not `<urlset>` or `<sitemapindex>`")
    child = "url" if kind == "urlset" else "sitemap"
    out: list[dict[str, str]] = []
    for entry in root:
        if not isinstance(entry.tag, str) or etree.QName(entry).localname != child:
            continue
        fields = {etree.QName(f).localname: (f.text or "").strip() for f in entry if isinstance(f.tag, str)}
        if fields.get("loc"):
            item = {"loc": fields["loc"]}
            if fields.get("lastmod"):
                item["lastmod"] = fields["lastmod"]
            out.append(item)
    return out


def _inflate(data: bytes) -> bytes:
    d = zlib.decompressobj(wbits=31)
    try:
        out = d.decompress(data, MAX_RESPONSE_BYTES + 1)
    except zlib.error as e:
        raise fail(f"the gzip sitemap does not inflate: {e}") from None
    if len(out) > MAX_RESPONSE_BYTES:
        raise fail(
            f"the gzip sitemap inflates past the {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB response-size cap",
            limit_bytes=MAX_RESPONSE_BYTES,
        )
    return out
