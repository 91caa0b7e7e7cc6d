"""Benchmark the extract modes of `nika:fetch`: extraction time per page for each mode (no network:
the response bodies are the test pages of tests/runtime/extract_pages.py, the saved pages of
tests/data/extract/ and a generated long article), median over the runs and then over the pages
of each mode.

Run from the project root:

    python benchmarks/fetch_extract.py            # 31 runs per page
    python benchmarks/fetch_extract.py --runs 101

`--compare` also times the alternative considered for the content modes (Trafilatura's own
Markdown output for `markdown`, its `html2txt` for `text`), beside the library each mode uses.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from runtime.extract import Page, extractor  # noqa: E402
from tests.runtime import extract_pages as P  # noqa: E402

URL = "https://bench.example/post"
SAVED = ROOT / "tests" / "data" / "extract"


def _long_article(paragraphs: int = 300) -> bytes:
    body = "".join(
        f"<h2>Section {i}</h2><p>Paragraph {i} of a long article, with <a href='/l{i}'>a link</a> and "
        f"<em>emphasis</em>, repeated to make a page of realistic size. {'Filler words. ' * 20}</p>"
        + (f"<ul><li>item {i}a</li><li>item {i}b</li></ul>" if i % 5 == 0 else "")
        for i in range(paragraphs)
    )
    nav = "".join(f"<a href='/n{i}'>nav {i}</a>" for i in range(60))
    return (
        f"<html><head><title>Long</title></head><body><nav>{nav}</nav><main><article><h1>Long</h1>{body}"
        f"</article></main><footer>{nav}</footer></body></html>"
    ).encode()


HTML = {
    "article": P.ARTICLE.encode(),
    "product": P.PRODUCT.encode(),
    "news": (SAVED / "news-article.html").read_bytes(),
    "docs": (SAVED / "docs-page.html").read_bytes(),
    "long": _long_article(),
}
PAGES: dict[str, dict[str, bytes]] = {
    "markdown": HTML,
    "article": HTML,
    "text": HTML,
    "selector": HTML,
    "links": HTML,
    "metadata": HTML,
    "feed": {
        "rss": P.RSS,
        "atom": P.ATOM,
        "json": P.JSON_FEED,
        "rss-news": (SAVED / "local-news.rss").read_bytes(),
        "atom-releases": (SAVED / "releases.atom").read_bytes(),
    },
    "sitemap": {
        "urlset": P.SITEMAP,
        "index": P.SITEMAP_INDEX,
        "gzip": P.GZIP_SITEMAP,
        "news": (SAVED / "sitemap.xml").read_bytes(),
    },
}
ARGS = {"selector": {"selector": "h1, h2, p"}}


def _median_ms(fn: Callable[[], Any], runs: int) -> float:
    fn()  # warm: imports and first-use caches
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def _alternatives() -> dict[str, Callable[[bytes], Any]]:
    import trafilatura

    return {
        "markdown": lambda b: trafilatura.extract(b.decode(), output_format="markdown", include_links=True),
        "text": lambda b: trafilatura.html2txt(b.decode()),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=31)
    ap.add_argument("--compare", action="store_true")
    opts = ap.parse_args()
    alt = _alternatives() if opts.compare else {}
    print(f"{'mode':<10} {'median ms/page':>14}   per page (ms)")
    for mode, pages in PAGES.items():
        fn = extractor(mode)
        args = ARGS.get(mode, {})
        per = {
            name: _median_ms(lambda b=body, f=fn, a=args: f(Page(URL, b, "text/html"), a), opts.runs)
            for name, body in pages.items()
        }
        shown = "  ".join(f"{k} {v:.2f}" for k, v in per.items())
        print(f"{mode:<10} {statistics.median(per.values()):>14.2f}   {shown}")
        if mode in alt:
            other = alt[mode]
            per_alt = {name: _median_ms(lambda b=body, f=other: f(b), opts.runs) for name, body in pages.items()}
            shown = "  ".join(f"{k} {v:.2f}" for k, v in per_alt.items())
            print(f"{'  (alt)':<10} {statistics.median(per_alt.values()):>14.2f}   {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
