"""Value tree → compiled model, in one pass, with the structural NIKA-PARSE findings.

The compiler knows the shape of the v1 grammar from :mod:`checker.grammar.table` and types the value
tree the YAML layer built (copying nothing: a model field is the tree's own value). It reports
what is malformed and still builds as much of the model as it can, so later rules (graph,
references, tools) judge everything that is judgeable. Every ``${{ … }}`` string it meets is
recorded once as an :class:`~checker.model.workflow.ExprSite` with its position class.

One module per part of the grammar: :mod:`.envelope` (the document, version marker, outputs),
:mod:`.declarations` (types, inputs, config, const, secrets, permits, run, policy),
:mod:`.tasks`, :mod:`.blocks` (with, after, retry, on_error, on_finally, output, declassify) and
:mod:`.verbs`, all around one :class:`~.builder.Builder` that reports.
"""

from __future__ import annotations

from checker.compiler.builder import Builder
from checker.compiler.envelope import WORKFLOW_ID_RE
from checker.compiler.tasks import TASK_ID_RE, TaskMemo
from checker.core.diagnostics import Diagnostic
from checker.core.source import SourceText
from checker.model.workflow import ExprSite, Workflow
from checker.parse.values import ScalarValue, Value


def compile_tree(
    src: SourceText,
    root: Value,
    duplicates: tuple[tuple[ScalarValue, ScalarValue], ...] = (),
    memo: TaskMemo | None = None,
) -> tuple[Workflow | None, list[Diagnostic], tuple[ExprSite, ...]]:
    """The model of the document rooted at ``root``, the structural findings and every site
    (each task's taken from ``memo`` when it compiled that very entry before)."""
    from checker.compiler.envelope import workflow

    b = Builder(src, duplicates)
    b.task_memo = memo
    wf = workflow(b, root)
    b.duplicate_keys()
    return wf, b.diags, tuple(b.sites)


__all__ = ["TASK_ID_RE", "WORKFLOW_ID_RE", "Builder", "TaskMemo", "compile_tree"]
