"""The checking pipeline: bytes -> YAML profile -> compiled model -> rules -> sorted findings."""

from __future__ import annotations

from checker.codes import report
from checker.compiler import compile_tree
from checker.diagnostics import Diagnostic, Severity
from checker.model import CompiledWorkflow
from checker.source import SourceText, Span
from checker.yaml_nodes import decode_source, parse_yaml


def compile_source(src: SourceText, base_dir: str | None = None) -> CompiledWorkflow:
    """Parse, compile and judge one document. Pure: reads nothing but ``src``.

    (Rules that follow the workflow to files it names — skills, child workflows — resolve
    them against ``base_dir``.)
    """
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
    wf, structural, sites = compile_tree(src, parsed.root, parsed.duplicates)
    diags.extend(structural)
    graph = None
    if wf is not None:
        from checker.graph import build_graph
        from checker.rules import RULES, RuleContext

        graph = build_graph(wf, sites)
        ctx = RuleContext(src, wf, sites, graph, base_dir)
        for rule in RULES:
            try:
                diags.extend(rule(ctx))
            except Exception as exc:  # a bug in one rule must not hide the others' findings
                diags.append(_internal(rule, exc))
    return CompiledWorkflow(src, parsed.root, wf, sites, _finish(diags), graph)


def compile_text(text: str, path: str = "<stdin>", base_dir: str | None = None) -> CompiledWorkflow:
    return compile_source(SourceText(text, path), base_dir)


def compile_bytes(data: bytes, path: str = "<stdin>", base_dir: str | None = None) -> CompiledWorkflow:
    src, decode_diags = decode_source(data, path)
    if decode_diags:
        return CompiledWorkflow(src, None, None, (), _finish(decode_diags))
    return compile_source(src, base_dir)


def _internal(rule: object, exc: Exception) -> Diagnostic:
    name = getattr(rule, "__qualname__", repr(rule))
    return Diagnostic(
        code=None,
        namespace="NIKA-IMPL",
        category="internal_error",
        severity=Severity.WARNING,
        message=f"internal error in rule `{name}`: {type(exc).__name__}: {exc}",
        span=Span(0, 0),
        help="This is a bug in nika; please report it with the workflow that triggered it.",
        rule="internal-error",
    )


def _finish(diags: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    seen: set[tuple[object, ...]] = set()
    out = []
    for d in sorted(diags, key=Diagnostic.sort_key):
        key = (d.code, d.rule, d.span, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return tuple(out)
