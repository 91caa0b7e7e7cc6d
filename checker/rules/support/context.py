"""What every rule receives: the compiled model, its expression sites and its graph."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property

from checker.core.buffers import Buffers
from checker.core.memo import RuleMemo
from checker.core.records import field, record
from checker.core.source import SourceText, Span
from checker.expr import Island
from checker.expr.refs import Ref
from checker.model.graph import Graph
from checker.model.workflow import ExprSite, Regate, Task, Verb, Workflow


def task_verbs(task: Task) -> Iterator[Verb]:
    """A task's verb, then the verbs of its ``on_finally:`` steps."""
    if task.verb is not None:
        yield task.verb
    for step in task.on_finally:
        if step.verb is not None:
            yield step.verb


@record(slots=False)
class RuleContext:
    source: SourceText
    workflow: Workflow
    sites: tuple[ExprSite, ...]
    graph: Graph
    base_dir: str | None = None  # the working directory relative paths resolve from (02)
    roots: tuple[str, ...] | None = None  # the only folders files may be read from (language server)
    memo: RuleMemo | None = None  # results kept across versions of the document (language server)
    buffers: Buffers | None = None  # open editors' unsaved texts of other files (language server)
    # what the authority rules leave to the run's judges (the certificate's ``effects.dynamic``)
    regates: list[Regate] = field(default_factory=list, compare=False, repr=False)

    def locate(self, path: str, *, beside: bool = True) -> str | None:
        """The file a path the workflow names points to (:func:`checker.core.paths.resolve_inside`;
        ``beside``: also beside the workflow file): ``None`` when it lies outside :attr:`roots`,
        and is then neither read nor looked at."""
        from checker.core.paths import resolve_inside

        return resolve_inside(path, self.base_dir, self.source.path if beside else None, self.roots)

    def refs(self, where: tuple[str, ...] | None = None) -> Iterator[tuple[ExprSite, Island, Ref, Span]]:
        """Every reference of every parsed island, with the source span of the reference."""
        for site in self.sites:
            if where is None or site.where in where:
                for island, ref, span in site.references():
                    yield site, island, ref, span

    def verbs(self) -> Iterator[tuple[str, Verb]]:
        """Every verb of the workflow with its task's id (:func:`task_verbs` of each task)."""
        return iter(self._verbs)

    @cached_property
    def _verbs(self) -> tuple[tuple[str, Verb], ...]:  # listed once: a score of rules walk them
        return tuple((task.id, verb) for task in self.workflow.tasks.values() for verb in task_verbs(task))
