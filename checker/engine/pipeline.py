"""The checking pipeline: bytes -> YAML profile -> compiled model -> rules -> sorted findings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.compiler import compile_tree
from checker.core.codes import report
from checker.core.diagnostics import Diagnostic
from checker.core.display import clip
from checker.core.records import replace
from checker.core.source import SourceText, Span
from checker.model.workflow import CompiledWorkflow, ExprSite, Regate, Workflow
from checker.parse.nodes import decode_source, parse_yaml
from checker.parse.values import Value

if TYPE_CHECKING:
    from checker.core.buffers import Buffers
    from checker.core.memo import RuleMemo


def compile_source(
    src: SourceText,
    base_dir: str | None = None,
    *,
    roots: tuple[str, ...] | None = None,
    buffers: Buffers | None = None,
) -> CompiledWorkflow:
    """Parse, compile and judge one document. Pure: reads nothing but ``src``.

    (Rules that follow the workflow to files it names — skills, child workflows — resolve
    them against ``base_dir``; with ``roots``, only files inside those folders are read:
    :func:`checker.core.paths.resolve_inside`, the language server's workspace rule; with
    ``buffers``, a child open in the editor is read from its unsaved text:
    :mod:`checker.core.buffers`.) Never
    raises: an exception inside a rule, or in the parse and compile steps, becomes a
    NIKA-IMPL-001 error finding beside whatever was found.
    """
    try:
        return _compile(src, base_dir, roots, buffers)
    except Exception as exc:  # a bug before the rules ran: nothing else can be reported
        return CompiledWorkflow(src, None, None, (), (_internal("the parse and compile steps", exc),))


def _compile(
    src: SourceText, base_dir: str | None, roots: tuple[str, ...] | None, buffers: Buffers | None
) -> CompiledWorkflow:
    parsed = parse_yaml(src)
    diags: list[Diagnostic] = list(parsed.diagnostics)
    if parsed.root is None:
        if not parsed.fatal:
            diags.append(
                report(
                    "NIKA-PARSE-002",
                    Span(0, 0),
                    "the file holds no workflow",
                    "Start it with `nika: v1`, a `workflow: {id: …}` block and a `tasks:` map.",
                )
            )
        return CompiledWorkflow(src, None, None, (), _finish(diags))
    compiled = compile_tree(src, parsed.root, parsed.duplicates)
    return judge(src, parsed.root, compiled, diags, base_dir, roots, buffers=buffers)


def judge(
    src: SourceText,
    root: Value,
    compiled: tuple[Workflow | None, list[Diagnostic], tuple[ExprSite, ...]],
    diags: list[Diagnostic],
    base_dir: str | None,
    roots: tuple[str, ...] | None = None,
    memo: RuleMemo | None = None,
    buffers: Buffers | None = None,
) -> CompiledWorkflow:
    """The graph and every rule over a compiled tree; ``diags`` holds the findings so far.

    ``memo`` (the language server's, one per open document) keeps what the rules found about
    each unchanged task for the next version (:mod:`checker.core.memo`)."""
    wf, structural, sites = compiled
    diags.extend(structural)
    graph = None
    regates: tuple[Regate, ...] = ()
    if wf is not None:
        from checker.model.graph import build_graph
        from checker.rules import RULES, RuleContext

        if memo is not None:
            memo.start()
        graph = build_graph(wf, sites, memo)
        ctx = RuleContext(src, wf, sites, graph, base_dir, roots, memo, buffers)
        for rule in RULES:
            try:
                diags.extend(rule(ctx))
            except Exception as exc:  # a bug in one rule must not hide the others' findings
                diags.append(_internal(f"rule `{getattr(rule, '__qualname__', rule)}`", exc))
        regates = tuple(ctx.regates)
    return CompiledWorkflow(src, root, wf, sites, _finish(diags), graph, regates)


def compile_text(text: str, path: str = "<stdin>", base_dir: str | None = None) -> CompiledWorkflow:
    return compile_source(SourceText(text, path), base_dir)


def compile_bytes(data: bytes, path: str = "<stdin>", base_dir: str | None = None) -> CompiledWorkflow:
    src, decode_diags = decode_source(data, path)
    if decode_diags:
        return CompiledWorkflow(src, None, None, (), _finish(decode_diags))
    return compile_source(src, base_dir)


def _internal(where: str, exc: Exception) -> Diagnostic:
    """NIKA-IMPL-001 for an exception inside the checker: an error, the traceback kept for ``--debug``."""
    import traceback

    try:
        detail = clip(str(exc), 200)
    except Exception:  # an exception whose own str() fails
        detail = "(no message)"
    d = report(
        "NIKA-IMPL-001",
        Span(0, 0),
        f"internal error in {where} ({type(exc).__name__}: {detail}); this file was not fully checked",
        "This is a bug in nika: please report it with the workflow (`nika check --debug` shows the traceback).",
    )
    return replace(d, trace="".join(traceback.format_exception(exc)))


def _finish(diags: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    seen: set[tuple[object, ...]] = set()
    out = []
    for d in sorted(diags, key=Diagnostic.sort_key):
        key = (d.code, d.rule, d.span, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return tuple(out)
