"""What every rule receives: the compiled model, its expression sites and its graph."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from checker.expr import Island
from checker.expr.refs import Ref
from checker.graph import Graph
from checker.model import ExprSite, Workflow
from checker.source import SourceText, Span


@dataclass(frozen=True)
class RuleContext:
    source: SourceText
    workflow: Workflow
    sites: tuple[ExprSite, ...]
    graph: Graph
    base_dir: str | None = None

    def refs(self, where: tuple[str, ...] | None = None) -> Iterator[tuple[ExprSite, Island, Ref, Span]]:
        """Every reference of every parsed island, with the source span of the reference."""
        for site in self.sites:
            if where is None or site.where in where:
                for island, ref, span in site.references():
                    yield site, island, ref, span
