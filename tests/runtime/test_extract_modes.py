"""The extract modes of nika:fetch and its crawl, end to end against a real HTTP server on loopback
(stdlib extract-modes v0.1; builtins §nika:fetch `traverse` semantics)."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import serving

from runtime import builtins
from runtime.errors import TaskError
from tests.runtime import extract_pages as P
from tests.runtime.builtins_harness import make_ctx

HTML = {"content-type": "text/html; charset=utf-8"}
XML = {"content-type": "application/xml"}
ROUTES: dict[str, tuple[int, dict[str, str], bytes]] = {
    "/article": (200, HTML, P.ARTICLE.encode()),
    "/product": (200, HTML, P.PRODUCT.encode()),
    "/latin1": (200, {"content-type": "text/html; charset=iso-8859-1"}, "<p>Crêpe café</p>".encode("latin-1")),
    "/cp1252": (200, {"content-type": "text/html"}, "<p>naïve – café</p>".encode("cp1252")),
    "/image": (200, {"content-type": "image/png"}, b"\x89PNG\r\n\x1a\n"),
    "/tiny": (200, HTML, b"<html><body><main><p>Only <b>this</b>.</p></main><footer>f</footer></body></html>"),
    "/rss": (200, {"content-type": "application/rss+xml"}, P.RSS),
    "/atom": (200, {"content-type": "application/atom+xml"}, P.ATOM),
    "/jsonfeed": (200, {"content-type": "application/feed+json"}, P.JSON_FEED),
    "/sitemap.xml": (200, XML, P.SITEMAP),
    "/sitemap-index.xml": (200, XML, P.SITEMAP_INDEX),
    "/sitemap.xml.gz": (200, {"content-type": "application/gzip"}, P.GZIP_SITEMAP),
    "/xxe.xml": (200, XML, P.XXE_SITEMAP),
    "/broken.xml": (200, XML, b"<urlset><url><loc>x</loc></urlset"),
    "/notfeed": (200, HTML, b"<html><body>just a page</body></html>"),
    # a small site for the crawl: robots.txt disallows /private, /gone answers 404
    "/site/": (200, HTML, P.site_page("home", ["/site/a", "/site/b#frag", "/private/x", "https://else.example/"])),
    "/site/a": (200, HTML, P.site_page("a", ["/site/", "/site/gone", "/site/c"], "rgb(1, 2, 3)")),
    "/site/b": (200, HTML, P.site_page("b", ["/site/a"])),
    "/site/c": (200, {"content-type": "text/plain"}, b"plain words"),
    "/private/x": (200, HTML, P.site_page("secret", [])),
    "/robots.txt": (200, {"content-type": "text/plain"}, b"User-agent: *\nDisallow: /private\nDisallow: /nocrawl\n"),
    "/nocrawl": (200, HTML, P.site_page("no", [])),
}
SEEN: list[str] = []


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *a: Any) -> None:
        pass

    def do_GET(self) -> None:
        SEEN.append(self.path)
        status, headers, body = ROUTES.get(self.path, (404, {}, b"missing"))
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serving(_Handler) as port:
        yield f"http://127.0.0.1:{port}"


async def _fetch(tmp_path: Path, args: dict[str, Any], **extra: Any) -> Any:
    ctx, _ = make_ctx(tmp_path, env={"NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1"}, **extra)
    return await builtins.call("nika:fetch", args, ctx)


async def _fails(tmp_path: Path, args: dict[str, Any]) -> TaskError:
    with pytest.raises(TaskError) as e:
        await _fetch(tmp_path, args)
    return e.value


async def test_markdown_is_the_default_and_drops_furniture(base: str, tmp_path: Path) -> None:
    """§markdown: headings, lists, code, links and images kept; scripts, nav, footer and ads gone;
    lazy images resolve to the real URL and the largest srcset candidate."""
    md = await _fetch(tmp_path, {"url": f"{base}/article"})
    assert md.startswith("# Tide pools of Brittany")
    assert "## What to look for" in md and "- Shore crabs" in md
    assert "```\ntide_window = low_water + 2h\n```" in md
    assert f"[Roscoff]({base}/places/roscoff)" in md
    assert f"![A pool]({base}/img/pool.jpg)" in md and f"![Crab]({base}/img/crab-1280.jpg)" in md
    for gone in ("window.trackers", "Home", "BUY SHELLS", "Copyright 2026", "Dune walks", "data:image"):
        assert gone not in md, gone


async def test_article_keeps_the_body_only(base: str, tmp_path: Path) -> None:
    """§article: the main body without navigation, sidebars, ads or comments, as Markdown."""
    md = await _fetch(tmp_path, {"url": f"{base}/article", "mode": "article"})
    assert "granite shelves" in md and "April and September" in md and "- Beadlet anemones" in md
    for gone in ("Home", "BUY SHELLS", "Copyright", "Dune walks", "cheap shells"):
        assert gone not in md, gone


async def test_article_of_a_page_too_small_for_the_cascade(base: str, tmp_path: Path) -> None:
    """A page too short to score as an article still yields its main container, never nothing."""
    assert await _fetch(tmp_path, {"url": f"{base}/tiny", "mode": "article"}) == "Only **this**."


async def test_text_keeps_every_line_without_markup(base: str, tmp_path: Path) -> None:
    """§text: tags stripped, line breaks kept, headers and footers preserved, no Markdown syntax."""
    text = await _fetch(tmp_path, {"url": f"{base}/article", "mode": "text"})
    lines = text.splitlines()
    assert "Tide pools of Brittany" in lines and "Copyright 2026 Shore Notes" in lines and "Home About" in lines
    assert "#" not in text and "](" not in text and "<p>" not in text and "window.trackers" not in text


async def test_declared_charset_is_honoured(base: str, tmp_path: Path) -> None:
    assert await _fetch(tmp_path, {"url": f"{base}/latin1", "mode": "text"}) == "Crêpe café"
    assert await _fetch(tmp_path, {"url": f"{base}/cp1252", "mode": "text"}) == "naïve – café"  # undeclared legacy


async def test_an_image_is_not_read_as_html(base: str, tmp_path: Path) -> None:
    err = await _fails(tmp_path, {"url": f"{base}/image", "mode": "markdown"})
    assert err.code == "NIKA-BUILTIN-FETCH-001" and "image/png" in err.message


async def test_selector_concatenates_the_matches(base: str, tmp_path: Path) -> None:
    """§selector: the raw HTML of every match, in document order, concatenated."""
    got = await _fetch(tmp_path, {"url": f"{base}/product", "mode": "selector", "selector": "div.product h2, h1"})
    assert got == '<h1 itemprop="name">Seau de plage</h1><h2>Pelle</h2>'
    assert await _fetch(tmp_path, {"url": f"{base}/product", "mode": "selector", "selector": "table"}) == ""
    err = await _fails(tmp_path, {"url": f"{base}/product", "mode": "selector", "selector": "div[["})
    assert err.code == "NIKA-BUILTIN-FETCH-001" and "div[[" in err.message


async def test_links_resolve_against_the_base_element(base: str, tmp_path: Path) -> None:
    """§links: every <a href>, absolute against <base href>; each once; script pseudo-links left out."""
    got = await _fetch(tmp_path, {"url": f"{base}/product", "mode": "links"})
    assert got == [
        "https://shop.example/catalogue/seau",
        "https://other.example/x#top",
        "mailto:contact@shop.example",
    ]


async def test_metadata_shape(base: str, tmp_path: Path) -> None:
    """§metadata: og/twitter always objects, URL values absolute, fallbacks, absent keys omitted,
    JSON-LD parsed (a broken block skipped), microdata as the W3C item model."""
    meta = await _fetch(tmp_path, {"url": f"{base}/product", "mode": "metadata"})
    assert meta["title"] == "Seau de plage"  # no <title>: falls back to og:title
    assert "description" not in meta
    assert meta["og"] == {
        "title": "Seau de plage",
        "image": "https://shop.example/img/seau.jpg",
        "url": "https://shop.example/catalogue/seau",
    }
    assert meta["twitter"] == {"card": "summary_large_image", "image": "https://shop.example/catalogue/img/tw.jpg"}
    assert meta["canonical"] == "https://shop.example/catalogue/seau" and meta["lang"] == "fr"
    assert meta["author"] == "Atelier Marée" and meta["published_time"] == "2026-06-01T10:00:00Z"
    assert meta["favicon"] == "https://shop.example/favicon.ico"
    assert meta["alternates"] == [{"href": "https://shop.example/en/bucket", "hreflang": "en"}]
    assert meta["jsonld"] == [{"@context": "https://schema.org", "@type": "Product", "name": "Seau"}]
    assert meta["microdata"] == [
        {
            "type": ["https://schema.org/Product"],
            "properties": {
                "name": ["Seau de plage"],
                "image": ["https://shop.example/catalogue/img/seau-small.jpg"],
                "offers": [
                    {"type": ["https://schema.org/Offer"], "properties": {"price": ["19.99"], "priceCurrency": ["EUR"]}}
                ],
            },
        }
    ]


async def test_metadata_of_a_bare_page(base: str, tmp_path: Path) -> None:
    meta = await _fetch(tmp_path, {"url": f"{base}/tiny", "mode": "metadata"})
    assert meta == {"og": {}, "twitter": {}}


async def test_rss_feed(base: str, tmp_path: Path) -> None:
    """§feed: the normalised shape; content is the full body (sanitised), media from enclosures;
    absent fields omitted."""
    feed = await _fetch(tmp_path, {"url": f"{base}/rss", "mode": "feed"})
    assert {k: feed[k] for k in ("title", "description", "link", "updated")} == {
        "title": "Shore Notes",
        "description": "Notes from the shore",
        "link": "https://shore.example/",
        "updated": "2026-05-22T10:00:00Z",
    }
    first, second = feed["items"]
    assert first == {
        "id": "tag:shore.example,2026:1",
        "title": "Low tide",
        "link": "https://shore.example/low",
        "author": "anne@shore.example (Anne)",
        "summary": "Short blurb",
        "content": "<p>Full <b>body</b> of the post.</p>",
        "published": "2026-05-21T08:00:00Z",
        "categories": ["tides", "brittany"],
        "media": [{"url": "https://shore.example/ep1.mp3", "type": "audio/mpeg", "size": 12345, "duration_secs": 1800}],
    }
    assert second == {"title": "No extras", "link": "https://shore.example/two"}


async def test_atom_and_json_feeds(base: str, tmp_path: Path) -> None:
    atom = await _fetch(tmp_path, {"url": f"{base}/atom", "mode": "feed"})
    assert atom["title"] == "Atom Shore" and atom["updated"] == "2026-05-22T10:00:00Z"
    assert atom["items"][0] | {} == {
        "id": "urn:e1",
        "title": "First",
        "link": "https://atom.example/1",
        "author": "Yann",
        "summary": "Sum",
        "content": "<p>Whole</p>",
        "published": "2026-05-20T09:00:00Z",
    }
    jf = await _fetch(tmp_path, {"url": f"{base}/jsonfeed", "mode": "feed"})
    assert jf["title"] == "JSON Shore" and jf["link"] == "https://json.example/"
    assert jf["items"] == [
        {
            "id": "1",
            "link": "https://json.example/1",
            "title": "One",
            "author": "Zoé",
            "summary": "s",
            "content": "<p>hi</p>",
            "published": "2026-05-22T10:00:00Z",
            "categories": ["a"],
            "media": [{"url": "https://json.example/a.mp3", "type": "audio/mpeg", "size": 5, "duration_secs": 7}],
        }
    ]


async def test_not_a_feed(base: str, tmp_path: Path) -> None:
    err = await _fails(tmp_path, {"url": f"{base}/notfeed", "mode": "feed"})
    assert err.code == "NIKA-BUILTIN-FETCH-001" and "not an RSS, Atom or JSON feed" in err.message


async def test_sitemap_urlset_index_and_gzip(base: str, tmp_path: Path) -> None:
    """§sitemap: [{loc, lastmod?}] from a urlset, a sitemap index (its child sitemaps) or a gzip file."""
    expected = [{"loc": "https://shore.example/", "lastmod": "2026-05-20"}, {"loc": "https://shore.example/about"}]
    assert await _fetch(tmp_path, {"url": f"{base}/sitemap.xml", "mode": "sitemap"}) == expected
    assert await _fetch(tmp_path, {"url": f"{base}/sitemap.xml.gz", "mode": "sitemap"}) == expected
    assert await _fetch(tmp_path, {"url": f"{base}/sitemap-index.xml", "mode": "sitemap"}) == [
        {"loc": "https://shore.example/sitemap-posts.xml", "lastmod": "2026-05-01"}
    ]


@pytest.mark.parametrize(("path", "why"), [("/broken.xml", "does not parse"), ("/article", "not a sitemap")])
async def test_malformed_sitemap(base: str, tmp_path: Path, path: str, why: str) -> None:
    err = await _fails(tmp_path, {"url": f"{base}{path}", "mode": "sitemap"})
    assert err.code == "NIKA-BUILTIN-FETCH-001" and why in err.message


async def test_sitemap_never_expands_external_entities(base: str, tmp_path: Path) -> None:
    got = await _fetch(tmp_path, {"url": f"{base}/xxe.xml", "mode": "sitemap"})
    host = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else "\0"
    assert len(got) == 1 and host not in got[0]["loc"]


# ── traverse ─────────────────────────────────────────────────────────────────────────────────


async def test_crawl_same_origin_bfs_with_robots(base: str, tmp_path: Path) -> None:
    """§traverse: same-origin BFS, fragments stripped, robots.txt honoured (disallowed skipped),
    a failing descendant recorded, the fixed page digest and crawl shapes."""
    SEEN.clear()
    out = await _fetch(tmp_path, {"url": f"{base}/site/", "traverse": {"max_pages": 10}})
    urls = [p["url"] for p in out["pages"]]
    assert urls == [f"{base}/site/", f"{base}/site/a", f"{base}/site/b", f"{base}/site/gone", f"{base}/site/c"]
    assert out["url"] == f"{base}/site/" and out["page_count"] == 5
    assert "/private/x" not in SEEN and SEEN[0] == "/robots.txt"
    home = out["pages"][0]
    assert set(home) == {"url", "status", "title", "description", "headings", "links", "images", "colors", "text"}
    assert home["title"] == "home" and home["description"] == "About home" and home["headings"] == ["home"]
    assert home["images"] == [f"{base}/img/home.png"] and home["colors"] == ["#0a0b0c"]
    assert "Text of home." in home["text"] and "https://else.example/" in home["links"]
    assert out["pages"][3] == {"url": f"{base}/site/gone", "status": 404}
    assert out["pages"][4]["text"] == "plain words"
    assert out["assets"]["colors"] == ["#0a0b0c", "rgb(1,2,3)"]
    assert out["assets"]["images"][:2] == [f"{base}/img/home.png", f"{base}/img/a.png"]


async def test_crawl_stops_at_max_pages_and_can_skip_robots(base: str, tmp_path: Path) -> None:
    SEEN.clear()
    out = await _fetch(tmp_path, {"url": f"{base}/site/", "traverse": {"max_pages": 2, "respect_robots": False}})
    assert out["page_count"] == 2 and "/robots.txt" not in SEEN and len(SEEN) == 2


async def test_crawl_disallowed_root_is_loud(base: str, tmp_path: Path) -> None:
    err = await _fails(tmp_path, {"url": f"{base}/nocrawl", "traverse": {"max_pages": 3}})
    assert err.code == "NIKA-BUILTIN-FETCH-001" and "robots.txt" in err.message


async def test_crawl_rejudges_every_descendant(base: str, tmp_path: Path) -> None:
    """Each crawled link is an untrusted URL: the permits judge it; a refusal is recorded, not fatal."""
    judged: list[str] = []

    def judge(url: str) -> None:
        judged.append(url)
        if url.endswith("/site/b"):
            raise TaskError("NIKA-SEC-004", "not granted")

    out = await _fetch(tmp_path, {"url": f"{base}/site/", "traverse": {"max_pages": 3}}, judge_url=judge)
    assert f"{base}/site/a" in judged and f"{base}/robots.txt" in judged
    assert out["pages"][2] == {"url": f"{base}/site/b", "error": "NIKA-SEC-004: not granted"}


async def test_metadata_author_and_date_fall_back_to_json_ld(tmp_path: Path) -> None:
    """Pages that carry author and date only in their JSON-LD still fill those keys."""
    from runtime.extract import Page, extractor

    html = (
        b'<html><head><script type="application/ld+json">{"@type":"NewsArticle","datePublished":"2026-05-01",'
        b'"author":[{"@type":"Person","name":"Maiwenn"}]}</script></head><body></body></html>'
    )
    meta = extractor("metadata")(Page("https://n.example/a", html, "text/html"), {})
    assert meta["author"] == "Maiwenn" and meta["published_time"] == "2026-05-01"


def test_article_keeps_the_posts_of_a_discussion_page() -> None:
    """§article: on forum pages the posts and replies are the content, kept rather than pruned."""
    from runtime.extract import Page, extractor

    posts = "".join(
        f'<div class="post"><div class="author">user{i}</div><div class="post-body"><p>Reply {i}: the pools near '
        f"the lighthouse at Roscoff were full of anemones and crabs when I walked there this spring.</p></div></div>"
        for i in range(5)
    )
    html = f"<html><body><nav><a href='/'>Forums</a></nav><main><h1>Best tide pools?</h1>{posts}</main></body></html>"
    out = extractor("article")(Page("https://forum.example/t/1", html.encode(), "text/html"), {})
    assert all(f"Reply {i}:" in out for i in range(5)) and "Forums" not in out
