"""The extract modes of ``nika:fetch`` (stdlib extract-modes v0.1): a response body in, the mode's
value out, on libraries made for each job (imported when a mode first runs, never by ``nika check``).

Each mode is a function ``(page, args) -> value`` in a small module of this package; :data:`MODES`
maps the mode name to ``module:function``. Extraction runs in a worker thread so a large page
never stalls the run's other tasks. Every failure is NIKA-BUILTIN-FETCH-001.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from dataclasses import dataclass
from typing import Any

from runtime.errors import not_built

MODES: dict[str, str] = {
    "markdown": "content:markdown",
    "article": "content:article",
    "text": "content:text",
    "selector": "elements:selector",
    "links": "elements:links",
    "metadata": "metadata:metadata",
    "feed": "feed:feed",
    "sitemap": "sitemap:sitemap",
    "jq": "structured:jq_mode",
    "raw": "structured:raw",
}


@dataclass(frozen=True)
class Page:
    """A fetched response: the URL that answered (the base of relative links), body, content-type."""

    url: str
    body: bytes
    content_type: str = ""


def check_mode(mode: str) -> None:
    """Refuse a mode this build has no extractor for, before any request is spent."""
    if mode not in MODES:
        raise not_built(
            "extract-mode", f"`nika:fetch` extract mode `{mode}` is not available in this build of nika yet", mode=mode
        )


def extractor(mode: str) -> Any:
    check_mode(mode)
    module, _, func = MODES[mode].partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), func)


# The modes that read an HTML document, and the media types that are certainly not one.
HTML_MODES = frozenset({"markdown", "article", "text", "selector", "links", "metadata"})
_NOT_HTML = ("image/", "audio/", "video/", "font/", "application/pdf", "application/zip", "application/octet-stream")


def _refuse_binary(mode: str, page: Page) -> None:
    from runtime.net.client import fail

    media = page.content_type.split(";", 1)[0].strip().lower()
    if mode in HTML_MODES and media.startswith(_NOT_HTML):
        raise fail(
            f"`{page.url}` answered `{media}`, not an HTML page, so `mode: {mode}` cannot read it "
            "(binary media are out of the v0.1 extract modes)",
            content_type=media,
        )


async def run(mode: str, page: Page, args: dict[str, Any]) -> Any:
    fn = extractor(mode)
    _refuse_binary(mode, page)
    if inspect.iscoroutinefunction(fn):  # `jq`: the runtime's jq worker keeps the loop free itself
        return await fn(page, args)
    return await asyncio.to_thread(fn, page, args)
