"""The extract modes on saved pages (tests/data/extract/: pages written for these tests in the
shape real sites have — a news article with a consent banner, navigation, share tools, ad slots,
an inline related box, a newsletter form, a most-read list and comments; a documentation page
with a sidebar, a code block and a table; a publisher's RSS feed, a release Atom feed and a news
sitemap), served over loopback and fetched through nika:fetch. Each test asserts what the mode
keeps and what it drops, not only the output type."""

from __future__ import annotations

import re
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from rt_helpers import serving

from runtime import builtins
from tests.runtime.builtins_harness import make_ctx

DATA = Path(__file__).resolve().parents[1] / "data" / "extract"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".rss": "application/rss+xml",
    ".atom": "application/atom+xml",
    ".xml": "application/xml",
}
BODY_SENTENCES = (
    "The plan was carried by\n412 votes to 167",
    "The mill was built in 1764",
    "will again drive the wheel for roughly four hours on each ebb.",
    "The first phase, costed at €1.8 million",
    "the wheel could\nturn again in the spring of 2028.",
)
CHROME = (  # page furniture: navigation, consent banner, ads, footer
    "We use cookies",
    "Accept all",
    "Front page",
    "Holiday cottages by the sea",
    "Cheap flights to the islands",
    "All rights reserved",
    "Privacy policy",
    "Survey finds the millpond silted",
)


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *a: Any) -> None:
        pass

    def do_GET(self) -> None:
        path = DATA / self.path.lstrip("/")
        if self.path.count("/") != 1 or not path.is_file():
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        body = path.read_bytes()
        self.send_response(200)
        self.send_header("content-type", TYPES[path.suffix])
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with serving(_Handler) as port:
        yield f"http://127.0.0.1:{port}"


async def fetch(tmp_path: Path, url: str, mode: str, **args: Any) -> Any:
    ctx, _ = make_ctx(tmp_path, env={"NIKA_FETCH_ALLOW_PRIVATE": "127.0.0.1"})
    return await builtins.call("nika:fetch", {"url": url, "mode": mode, **args}, ctx)


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


async def test_markdown_of_a_news_page(base: str, tmp_path: Path) -> None:
    md = await fetch(tmp_path, f"{base}/news-article.html", "markdown")
    assert "# Harbour town votes to restore its tidal mill" in md.splitlines()
    assert "## A working mill, not a museum" in md and "## Objections over cost and access" in md
    for sentence in BODY_SENTENCES:
        assert flat(sentence) in flat(md), sentence
    assert "> We are not rebuilding a postcard." in md
    assert "- Dredging to begin in September, outside the oyster spawning season" in md
    assert f"[half of the first phase]({base}/local/2026/02/heritage-grant-rules)" in md
    # the lead image at its largest srcset candidate, with its caption
    assert f"![The stone tidal mill at dawn, its sluice gates closed]({base}/media/2026/03/mill-at-dawn-1200.jpg)" in md
    assert "closed since 1962" in md
    for gone in (*CHROME, "dataLayer", "site.4f2a", "track)"):
        assert gone not in md, gone
    assert md.index("# Harbour town") < md.index("The mill was built") < md.index("## Objections")


async def test_article_of_a_news_page_is_the_story_only(base: str, tmp_path: Path) -> None:
    md = await fetch(tmp_path, f"{base}/news-article.html", "article")
    for sentence in BODY_SENTENCES:
        assert flat(sentence) in flat(md), sentence
    assert "“A mill that does not turn is only a ruin with a roof,” said Yannick Le Bris" in flat(md)
    assert "We are not rebuilding a postcard." in md
    assert "## A working mill, not a museum" in md
    assert f"[half of the first phase]({base}/local/2026/02/heritage-grant-rules)" in md
    # beyond the furniture `markdown` drops: share tools, related box, newsletter, most read, comments
    for gone in (*CHROME, "Copy link", "Read more", "Sign up to our free", "Most read", "seabird42", "Comments (3)"):
        assert gone not in md, gone
    assert not re.search(r"\n[ \t]+\S", md.split("```")[0]), "continuation lines keep the source's indentation"


async def test_text_of_a_news_page_keeps_everything_readable(base: str, tmp_path: Path) -> None:
    text = await fetch(tmp_path, f"{base}/news-article.html", "text")
    lines = [line.strip() for line in text.splitlines()]
    assert "Harbour town votes to restore its tidal mill" in lines
    assert "© 2026 The Estuary Courier Ltd. All rights reserved." in lines  # headers and footers kept
    assert "Breaking: Ferry timetable changes from Monday" in lines
    for sentence in BODY_SENTENCES:
        assert flat(sentence) in flat(text), sentence
    for markup in ("<", "](", "**", "# ", "dataLayer"):
        assert markup not in text, markup


async def test_selector_links_and_metadata_of_a_news_page(base: str, tmp_path: Path) -> None:
    url = f"{base}/news-article.html"
    got = await fetch(tmp_path, url, "selector", selector="article .byline time, figure figcaption .credit")
    assert got == (
        '<time datetime="2026-03-14T07:30:00+01:00" itemprop="datePublished">14 March 2026, 07:30</time>'
        '<span class="credit">Photo: Erwan Guillou</span>'
    )
    links = await fetch(tmp_path, url, "links")
    assert len(links) == len(set(links)) and links.count(f"{base}/") == 1  # the logo, Front page and Home: once
    assert links[:3] == [f"{url}#main", f"{base}/subscribe", f"{base}/login"]  # document order
    assert f"{base}/local/2026/02/heritage-grant-rules" in links and "mailto:?subject=Tidal%20mill" in links
    assert "https://ads.adnetwork.example/click?id=991" in links and not any("javascript:" in x for x in links)
    meta = await fetch(tmp_path, url, "metadata")
    assert meta["title"] == "Harbour town votes to restore its tidal mill | The Estuary Courier"
    assert meta["lang"] == "en-GB" and meta["author"] == "Maëlle Tanguy"
    assert meta["published_time"] == "2026-03-14T07:30:00+01:00"
    assert meta["og"]["image"] == f"{base}/media/2026/03/mill-at-dawn-1200.jpg"  # made absolute
    assert meta["og"]["site_name"] == "The Estuary Courier" and meta["twitter"]["site"] == "@estuarycourier"
    assert meta["canonical"] == "https://courier.example/local/2026/03/tidal-mill-vote"
    assert meta["alternates"] == [
        {"href": "https://courier.example/fr/local/2026/03/vote-moulin-a-maree", "hreflang": "fr"}
    ]
    (ld,) = meta["jsonld"]
    assert ld["@type"] == "NewsArticle" and ld["dateModified"] == "2026-03-14T12:05:00+01:00"
    (item,) = meta["microdata"]
    assert item["properties"]["headline"] == ["Harbour town votes to restore its tidal mill"]
    assert item["properties"]["author"] == [f"{base}/authors/maelle-tanguy"]


async def test_markdown_and_article_of_a_documentation_page(base: str, tmp_path: Path) -> None:
    url = f"{base}/docs-page.html"
    md = await fetch(tmp_path, url, "markdown")
    assert md.splitlines()[2] == "# Configuring retries"  # after the breadcrumbs line
    assert '```\n[jobs.nightly.retry]\nmax_attempts = 3\nbackoff = "exponential"\nbase_delay = "2s"\n```' in md
    assert "| `exponential` | base_delay × 2<sup>n−1</sup> |" in md  # a superscript keeps its meaning
    assert "1. network timeouts and refused connections;" in md
    for gone in ("Search docs", "Quick start", "Command line", "« Previous", "Built with", "DOCUMENTATION_OPTIONS"):
        assert gone not in md, gone
    art = await fetch(tmp_path, url, "article")
    assert art.startswith("# Configuring retries")
    assert "Tidekeeper retries a job that fails with a *transient* error. A job that fails with any other\nerror" in art
    assert "2 <sup>n−1</sup>" in art and "max_attempts = 3" in art and "Edit on Git" not in art


async def test_a_publishers_rss_feed(base: str, tmp_path: Path) -> None:
    feed = await fetch(tmp_path, f"{base}/local-news.rss", "feed")
    assert feed["title"] == "The Estuary Courier — Local" and feed["link"] == "https://courier.example/local/"
    assert feed["updated"] == "2026-03-14T11:05:00Z"
    mill, ferry, bakery = feed["items"]
    assert mill["author"] == "Maëlle Tanguy" and mill["categories"] == ["Heritage", "Kerlouan"]  # dc:creator, CDATA
    assert mill["id"] == "https://courier.example/?p=48211"
    assert mill["content"].startswith("<p>Residents of Kerlouan voted on Thursday evening")
    assert 'src="https://courier.example/media/2026/03/mill-at-dawn-640.jpg"' in mill["content"]
    for unsafe in ("<script", "onerror", "<iframe", "track("):
        assert unsafe not in mill["content"], unsafe
    assert mill["media"] == [
        {"url": "https://courier.example/media/2026/03/mill-at-dawn-1200.jpg", "type": "image/jpeg"}
    ]
    assert ferry["published"] == "2026-03-13T16:45:00Z"  # +0100 normalised to UTC
    assert "content" not in ferry and "media" not in ferry
    assert bakery["title"] == "Rue du Port bakery wins regional award & a trip to Paris" and "author" not in bakery


async def test_a_release_atom_feed(base: str, tmp_path: Path) -> None:
    feed = await fetch(tmp_path, f"{base}/releases.atom", "feed")
    assert feed["link"] == "https://tidekeeper.example/releases/"  # rel=alternate, not rel=self
    assert feed["description"] == "New versions of the Tidekeeper job runner"
    new, old = feed["items"]
    assert new["link"] == "https://tidekeeper.example/releases/2.4.0/"
    assert new["published"] == "2026-02-27T16:00:00Z" and new["author"] == "Soizic Kerbrat"
    assert new["categories"] == ["release", "retries"]
    assert new["content"] == (
        "<p>This release adds <strong>linear</strong> backoff and the <code>max_delay</code> setting.</p>"
        "<ul><li>Scheduling of pipelines with thousands of jobs is about three times faster.</li></ul>"
    )
    assert new["media"] == [
        {"url": "https://tidekeeper.example/dl/tidekeeper-2.4.0.tar.gz", "type": "application/gzip", "size": 482113}
    ]
    assert old["published"] == "2026-01-09T10:00:00Z"  # only <updated>: it stands in
    assert old["summary"] == "A bug-fix release: a worker that lost its lease no longer <em>double-runs</em> a job."


async def test_a_news_sitemap_with_extensions(base: str, tmp_path: Path) -> None:
    got = await fetch(tmp_path, f"{base}/sitemap.xml", "sitemap")
    assert got == [
        {"loc": "https://courier.example/", "lastmod": "2026-03-14T11:05:00+00:00"},
        {"loc": "https://courier.example/local/2026/03/tidal-mill-vote", "lastmod": "2026-03-14T12:05:00+01:00"},
        {"loc": "https://courier.example/search?topic=heritage&page=2"},  # &amp; decoded
        {"loc": "https://courier.example/culture/2025/06/last-miller-interview", "lastmod": "2025-06-02"},
    ]
