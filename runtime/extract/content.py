"""The content modes: ``markdown`` (the page as cleaned Markdown), ``article`` (the main content
only) and ``text`` (the whole page as plain text with its line breaks).

``markdown`` and ``text`` convert with ``html-to-markdown`` (a Rust HTML→Markdown converter, the
same family as the reference engine's); ``article`` runs Trafilatura, whose own cascade
(its rules, then readability and jusText fallbacks) picks the main content. Lazy-loaded images are
resolved first (:func:`runtime.extract.document.resolve_images`) so every mode sees the real URL.
"""

from __future__ import annotations

import re
from typing import Any

from runtime.extract import Page
from runtime.extract.document import base_url, parse, resolve_images

# Never content: code, styling, embedded frames and forms.
_INERT = "script, style, noscript, template, iframe, object, embed, svg, canvas"
# Page furniture `markdown` drops (extract modes §markdown): navigation, footers and ads.
_FURNITURE = (
    "nav, footer, form, aside, [role=navigation], [role=contentinfo], [role=complementary], "
    "[class~=ad], [class~=ads], [class~=advert], [class~=advertisement], [class~=sponsored], "
    "[class^='ad-'], [class*=' ad-'], [class*='-ad '], [id^='ad-'], [id^='ad_'], [id~=ad], "
    "[class~=promo], ins.adsbygoogle, [aria-label=advertisement], [class~=cookie-banner], "
    "[id*=cookie-consent], [class*=cookie-consent], [class*=consent-banner]"
)
# Inline markup Markdown has no syntax for and whose loss changes the meaning (2<sup>n</sup> is
# not 2n): kept as inline HTML, which Markdown allows (Trafilatura's `article` output does the same).
_KEEP_INLINE = ["sup", "sub"]
# A continuation line of a paragraph that kept the page source's indentation (Trafilatura keeps
# the whitespace around inline links): not a list item, table row, quote or code line.
_INDENTED_CONTINUATION = re.compile(r"^[ \t]+(?![-*+] |\d+[.)] |[|>])(?=\S)")


def _prepared(page: Page, drop: str) -> tuple[Any, str]:
    tree = parse(page)
    base = base_url(tree, page.url)
    for node in tree.css(drop):
        node.decompose()
    resolve_images(tree, base)
    return tree, base


def _convert(html: str, base: str, output: str) -> str:
    import html_to_markdown as h2m

    options = h2m.ConversionOptions(
        output_format=output,
        extract_metadata=False,
        base_url=base,
        preprocessing=h2m.PreprocessingOptions(enabled=False),
        heading_style="atx",
        code_block_style="backticks",
        preserve_tags=_KEEP_INLINE,
    )
    return str(h2m.convert(html, options).content).strip()


def markdown(page: Page, args: dict[str, Any]) -> str:
    tree, base = _prepared(page, f"{_INERT}, {_FURNITURE}")
    return _convert(tree.html or "", base, "markdown")


def text(page: Page, args: dict[str, Any]) -> str:
    tree, base = _prepared(page, _INERT)
    return _convert(tree.html or "", base, "plain")


def article(page: Page, args: dict[str, Any]) -> str:
    import trafilatura

    tree, base = _prepared(page, _INERT)
    html = tree.html or ""
    found = trafilatura.extract(
        html,
        url=base,
        output_format="markdown",
        include_links=True,
        include_images=True,
        include_formatting=True,
        include_tables=True,
        include_comments=False,
        with_metadata=False,
    )
    if found and found.strip():
        return _tidy(found.strip())
    # Too little for the cascade to call an article (a short or script-built page): the page's
    # own main container, else its body, cleaned as `markdown` would.
    main = tree.css_first("main, article, [role=main]") or tree.body
    for node in main.css(_FURNITURE) if main is not None else []:
        node.decompose()
    return _convert(main.html if main is not None else "", base, "markdown")


def _tidy(md: str) -> str:
    """Paragraph continuation lines without the page source's indentation (code fences untouched)."""
    out: list[str] = []
    fenced = False
    for line in md.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and out and out[-1].strip():
            line = _INDENTED_CONTINUATION.sub("", line)
        out.append(line)
    return "\n".join(out)
