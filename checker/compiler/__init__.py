"""Node tree → compiled model, in one pass, with the structural NIKA-PARSE findings.

The compiler knows the shape of the v1 grammar from :mod:`checker.grammar` and turns every node
it keeps into a typed :mod:`checker.values` value. It reports what is malformed and still builds
as much of the model as it can, so later rules (graph, references, tools) judge everything that
is judgeable. Every ``${{ … }}`` string it meets is parsed once here and recorded as an
:class:`~checker.model.ExprSite`.

One module per part of the grammar: :mod:`.envelope` (the document, version marker, outputs),
:mod:`.declarations` (types, inputs, config, const, secrets, permits, run, policy),
:mod:`.tasks`, :mod:`.blocks` (with, after, retry, on_error, on_finally, output, declassify) and
:mod:`.verbs`, all around one :class:`~.builder.Builder` that reports.
"""

from __future__ import annotations

from checker.compiler.builder import Builder
from checker.compiler.envelope import WORKFLOW_ID_RE
from checker.compiler.tasks import TASK_ID_RE
from checker.diagnostics import Diagnostic
from checker.model import ExprSite, Workflow
from checker.nodes import Node, Scalar
from checker.source import SourceText
from checker.values import Value


def compile_tree(
    src: SourceText, root: Node, duplicates: tuple[tuple[Scalar, Scalar], ...] = ()
) -> tuple[Workflow | None, list[Diagnostic], tuple[ExprSite, ...]]:
    """The model of the document rooted at ``root``, the structural findings and every site."""
    from checker.compiler.envelope import workflow

    b = Builder(src, duplicates)
    wf = workflow(b, root)
    b.duplicate_keys()
    return wf, b.diags, tuple(b.sites)


def to_value(node: Node) -> Value:
    """The model value of a node tree outside any document (no sites, no findings): for tools
    and tests that hold a YAML fragment."""
    return Builder(SourceText("", "<fragment>")).value(node)


__all__ = ["TASK_ID_RE", "WORKFLOW_ID_RE", "Builder", "compile_tree", "to_value"]
