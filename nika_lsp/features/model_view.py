"""What a compiled snapshot offers the hover and completion features: :class:`ModelView`, the
declared names, the tasks, the graph and what lies downstream of a task, computed once per snapshot
(where the cursor is, from the raw text, is :mod:`nika_lsp.features.cursor`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.core.vocab import VALUE_ROOTS
from checker.model.graph import Graph
from checker.model.workflow import CompiledWorkflow, Named, Task, Workflow
from checker.parse.values import ScalarValue, Value

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot


class ModelView:
    """Facts of one compiled snapshot, computed lazily and kept for the snapshot's life."""

    def __init__(self, compiled: CompiledWorkflow) -> None:
        self.compiled = compiled
        self.workflow: Workflow | None = compiled.workflow
        self._down: dict[str, frozenset[str]] = {}

    @property
    def graph(self) -> Graph | None:
        return self.compiled.graph

    @property
    def tasks(self) -> dict[str, Task]:
        return self.workflow.tasks if self.workflow is not None else {}

    def declared(self, root: str) -> tuple[Named, ...]:
        wf = self.workflow
        return getattr(wf, root, ()) if wf is not None and root in VALUE_ROOTS else ()

    def named(self, root: str, name: str) -> Named | None:
        return next((n for n in self.declared(root) if n.name == name), None)

    def downstream(self, task: str) -> frozenset[str]:
        """Every task that transitively waits for ``task`` (a read of them would close a cycle)."""
        hit = self._down.get(task)
        if hit is not None:
            return hit
        g = self.graph
        out = frozenset(g.downstream(task)) if g is not None else frozenset()
        self._down[task] = out
        return out

    def safe_producers(self, task: str | None) -> list[str]:
        """Tasks that ``task`` may read or wait for without creating a cycle, in file order."""
        if task is None:
            return list(self.tasks)
        banned = self.downstream(task) | {task}
        return [t for t in self.tasks if t not in banned]

    def source_of(self, node: Value | None, limit: int = 400) -> str:
        """The source text of ``node``, shortened for a hover card."""
        if node is None:
            return ""
        if isinstance(node, ScalarValue) and node.style in ("", "'", '"'):
            return str(node.raw if node.raw is not None else node.value)
        text = self.compiled.source.slice(node.span)
        return text if len(text) <= limit else text[: limit - 1] + "…"


def view_of(snap: Snapshot) -> ModelView:
    """The :class:`ModelView` of a snapshot, built once and kept on the snapshot."""
    return snap.derived(ModelView, lambda: ModelView(snap.compiled))
