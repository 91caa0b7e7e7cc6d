"""Output formats of ``nika check``: pure functions that turn a CheckRun into text."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from checker.project.report import CheckRun
    from checker.views.certificate import PriceTable

FORMATS = ("full", "concise", "json", "sarif", "github")
# `nika graph` formats (rendered by nika.output.graph_formats, imported only by that command)
GRAPH_FORMATS = ("mermaid", "dot", "json")

__all__ = ["FORMATS", "GRAPH_FORMATS", "render"]


def render(
    run: CheckRun, fmt: str, *, color: bool = False, certificate: bool = False, prices: PriceTable | None = None
) -> str:
    """Render ``run`` in format ``fmt`` (one of ``FORMATS``).

    Only the module of the chosen format is imported, so the CLI pays for nothing else.
    ``color`` adds ANSI styling and only affects the text formats. ``certificate`` adds each
    file's certificate to the text formats (``json`` always carries it); ``prices`` is the price
    table the certificate's cost reads (none: every model is unpriced).
    """
    if fmt == "full":
        from nika.output.text import render_full

        return render_full(run, color=color, certificate=certificate, prices=prices)
    if fmt == "concise":
        from nika.output.text import render_concise

        return render_concise(run, color=color, certificate=certificate, prices=prices)
    if fmt == "json":
        from nika.output.json_report import render as render_json

        return render_json(run, prices=prices)
    if fmt == "sarif":
        from nika.output.sarif import render as render_sarif

        return render_sarif(run)
    if fmt == "github":
        from nika.output.github import render as render_github

        return render_github(run)
    raise ValueError(f"unknown output format {fmt!r}; expected one of: {', '.join(FORMATS)}")
