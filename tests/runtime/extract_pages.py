"""Test pages for the extract modes, written for these tests (no third-party content): a blog
article with the usual furniture, a product page with structured data, RSS/Atom/JSON feeds,
sitemaps and a small site for the crawl."""

from __future__ import annotations

import gzip
import json

ARTICLE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Tide pools of Brittany | Shore Notes</title>
<meta name="description" content="A field guide to the tide pools near Roscoff.">
<style>body{color:#333} .hero{background:rgb(10, 20, 30)}</style>
<script>window.trackers = ["ads"];</script></head>
<body>
<header class="site-header"><nav><a href="/">Home</a> <a href="/about">About</a></nav></header>
<main><article>
<h1>Tide pools of Brittany</h1>
<p class="byline">By Anne Le Goff</p>
<p>At low tide the granite shelves near <a href="/places/roscoff">Roscoff</a> hold hundreds of small pools.
Each one is a small world with anemones, crabs and snails that wait for the sea to return twice a day.</p>
<h2>What to look for</h2>
<ul><li>Beadlet anemones</li><li>Shore crabs</li><li>Common limpets</li></ul>
<p>Turn stones gently and put them back the way you found them. The underside is home to creatures
that dry out in minutes when they are left in the sun, so every stone goes back the same way up.</p>
<pre><code>tide_window = low_water + 2h</code></pre>
<img data-src="/img/pool.jpg" src="data:image/gif;base64,R0lGOD" alt="A pool">
<img srcset="/img/crab-320.jpg 320w, /img/crab-1280.jpg 1280w, /img/crab-640.jpg 640w"
     src="/img/crab-320.jpg" alt="Crab">
<p>The best months are April and September, when the spring tides uncover the lowest shelves.</p>
</article>
<aside class="related"><h3>Related posts</h3><a href="/posts/other">Dune walks</a></aside>
<div class="ad-banner">BUY SHELLS NOW</div>
<section id="comments"><h3>Comments</h3><p>Great post! Visit my shop for cheap shells.</p></section>
</main>
<footer><p>Copyright 2026 Shore Notes</p></footer>
</body></html>"""

PRODUCT = """<!doctype html><html lang="fr"><head>
<base href="https://shop.example/catalogue/">
<meta property="og:title" content="Seau de plage">
<meta property="og:image" content="/img/seau.jpg">
<meta property="og:url" content="seau">
<meta name="twitter:card" content="summary_large_image">
<meta name="twitter:image" content="img/tw.jpg">
<meta name="author" content="Atelier Marée">
<meta property="article:published_time" content="2026-06-01T10:00:00Z">
<link rel="canonical" href="/catalogue/seau">
<link rel="icon" href="/favicon.ico">
<link rel="alternate" hreflang="en" href="https://shop.example/en/bucket">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Seau"}</script>
<script type="application/ld+json">{ this is not json </script>
</head><body>
<div class="product" itemscope itemtype="https://schema.org/Product">
  <h1 itemprop="name">Seau de plage</h1>
  <img itemprop="image" src="img/seau-small.jpg" alt="">
  <div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
    <meta itemprop="price" content="19.99"><span itemprop="priceCurrency">EUR</span>
  </div>
</div>
<div class="product"><h2>Pelle</h2><p>Une pelle solide.</p></div>
<a href="seau">Seau</a> <a href="/catalogue/seau">Seau again</a> <a href="https://other.example/x#top">Autre</a>
<a href="javascript:void(0)">ignore</a> <a href="mailto:contact@shop.example">Contact</a>
</body></html>"""

RSS = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"
     xmlns:media="http://search.yahoo.com/mrss/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
<channel><title>Shore Notes</title><link>https://shore.example/</link>
<description>Notes from the shore</description><lastBuildDate>Fri, 22 May 2026 10:00:00 GMT</lastBuildDate>
<item><title>Low tide</title><link>https://shore.example/low</link><guid>tag:shore.example,2026:1</guid>
<author>anne@shore.example (Anne)</author><description>Short blurb</description>
<content:encoded><![CDATA[<p>Full <b>body</b> of the post.<script>alert(1)</script></p>]]></content:encoded>
<pubDate>Thu, 21 May 2026 08:00:00 GMT</pubDate><category>tides</category><category>brittany</category>
<enclosure url="https://shore.example/ep1.mp3" type="audio/mpeg" length="12345"/>
<itunes:duration>30:00</itunes:duration>
</item>
<item><title>No extras</title><link>https://shore.example/two</link></item>
</channel></rss>"""

ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom Shore</title><link href="https://atom.example/"/>
<updated>2026-05-22T10:00:00Z</updated><id>urn:atom-shore</id>
<entry><title>First</title><id>urn:e1</id><link href="https://atom.example/1"/>
<updated>2026-05-20T09:00:00Z</updated><summary>Sum</summary><content type="html">&lt;p&gt;Whole&lt;/p&gt;</content>
<author><name>Yann</name></author></entry></feed>"""

JSON_FEED = json.dumps(
    {
        "version": "https://jsonfeed.org/version/1.1",
        "title": "JSON Shore",
        "home_page_url": "https://json.example/",
        "items": [
            {
                "id": 1,
                "url": "https://json.example/1",
                "title": "One",
                "summary": "s",
                "content_html": "<p>hi</p>",
                "date_published": "2026-05-22T10:00:00Z",
                "tags": ["a"],
                "authors": [{"name": "Zoé"}],
                "attachments": [
                    {
                        "url": "https://json.example/a.mp3",
                        "mime_type": "audio/mpeg",
                        "size_in_bytes": 5,
                        "duration_in_seconds": 7,
                    }
                ],
            }
        ],
    }
).encode()

SITEMAP = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>https://shore.example/</loc><lastmod>2026-05-20</lastmod></url>
<url><loc> https://shore.example/about </loc></url>
</urlset>"""

SITEMAP_INDEX = b"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>https://shore.example/sitemap-posts.xml</loc><lastmod>2026-05-01</lastmod></sitemap>
</sitemapindex>"""

XXE_SITEMAP = b"""<?xml version="1.0"?><!DOCTYPE u [<!ENTITY x SYSTEM "file:///etc/hostname">]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://a.example/&x;</loc></url></urlset>"""

GZIP_SITEMAP = gzip.compress(SITEMAP)


def site_page(title: str, links: list[str], color: str = "#0a0b0c") -> bytes:
    anchors = " ".join(f'<a href="{h}">{h}</a>' for h in links)
    return (
        f'<html><head><title>{title}</title><meta name="description" content="About {title}">'
        f"<style>h1{{color:{color}}}</style></head><body><h1>{title}</h1><p>Text of {title}.</p>"
        f'<img src="/img/{title}.png">{anchors}</body></html>'
    ).encode()
