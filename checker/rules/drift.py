"""Declared but unused (NIKA-DRIFT-001, a hint that never fails the check; spec 05): an
``inputs``/``config``/``const``/``secrets`` name no expression reads, and a ``permits:`` entry no
task needs — a ``net.http`` host, an ``exec`` program, a ``tools`` entry.

The used set is only trusted where it is decidable. A consumer the check cannot see through
poisons its category, which then stays silent rather than risk a false alarm (deleting an entry a
hint called unused must never break a run): a dynamic read (``inputs[k]``, the whole ``inputs``
object, an expression that does not parse) hides the names of its root; a computed URL, a
secret-derived target or an agent that may call a network tool hides the hosts; a ``shell:``
line, a computed program or an exec-capable agent hides the programs; an agent whitelist (a
glob dispatches dynamically) hides the tool entries. ``fs`` paths are not judged here: a glob
walk or a multipart file part reads what no literal names.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from checker.contracts.effects import Boundary, url_host
from checker.core.codes import report
from checker.core.diagnostics import Diagnostic
from checker.core.globs import parse_tool_rules, tool_verdict
from checker.core.vocab import VALUE_ROOTS
from checker.model.workflow import Agent, Invoke, Named
from checker.parse.values import ScalarValue, TemplateValue
from checker.rules.authority import needs_of
from checker.rules.support.context import RuleContext, task_verbs

CODE = "NIKA-DRIFT-001"


def check_unused_declarations(ctx: RuleContext) -> Iterator[Diagnostic]:
    yield from _unused_names(ctx)
    p = ctx.workflow.permits
    if p is None:
        return
    hosts, programs, tools = _used_targets(ctx)
    if hosts is not None:
        for entry in p.net_http:
            # a URL written as a grant has its own finding (permits/001): one mistake, one finding
            if (
                isinstance(entry.value, str)
                and "://" not in entry.value
                and not any(_host_fits(entry.value, h) for h in hosts)
            ):
                yield _hint(entry, f"`permits.net.http` grants `{entry.value}`, and no task reaches it")
    if isinstance(p.exec, tuple) and programs is not None:
        for entry in p.exec:
            if isinstance(entry.value, str) and entry.value not in programs:
                yield _hint(entry, f"`permits.exec` grants `{entry.value}`, and no task runs it")
    if tools is not None:
        for entry in p.tools:
            text = entry.value
            if not isinstance(text, str) or text.startswith("!"):
                continue  # an exclusion narrows; it grants nothing that could be unused
            rules = parse_tool_rules([text])
            if not any(tool_verdict(rules, t) is not None for t in tools):
                yield _hint(entry, f"`permits.tools` grants `{text}`, and no task invokes a tool it covers")


def _hint(entry: ScalarValue, message: str) -> Diagnostic:
    return report(CODE, entry.span, message, "Remove the entry, or add the task that was meant to use it.")


def _unused_names(ctx: RuleContext) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    declared: dict[str, Iterable[Named]] = {
        "inputs": wf.inputs,
        "config": wf.config,
        "const": wf.const,
        "secrets": wf.secrets,
    }
    if any(site.template.errors for site in ctx.sites):
        return  # an expression that does not parse may read anything
    used: dict[str, set[str]] = {root: set() for root in VALUE_ROOTS}
    poisoned: set[str] = set()
    for _site, _island, ref, _span in ctx.refs():
        if ref.root not in used:
            continue
        first = ref.path[0] if ref.path else None
        if isinstance(first, str):
            used[ref.root].add(first)
        else:
            poisoned.add(ref.root)  # `inputs[k]` or the whole object: any name may be read
    for root in VALUE_ROOTS:
        if root in poisoned:
            continue
        for decl in declared[root]:
            if decl.name not in used[root]:
                yield report(
                    CODE,
                    decl.key.span,
                    f"`{root}.{decl.name}` is declared, and no expression reads it",
                    f"Remove it, or read it where it was meant to be used (`${{{{ {root}.{decl.name} }}}}`).",
                )


def _used_targets(ctx: RuleContext) -> tuple[set[str] | None, set[str] | None, set[str] | None]:
    """The literal hosts, programs and tools the tasks need; ``None`` for a poisoned category."""
    hosts: set[str] | None = set()
    programs: set[str] | None = set()
    tools: set[str] | None = set()
    for task in ctx.workflow.tasks.values():
        for verb in task_verbs(task):
            if isinstance(verb, Agent):
                tools = None  # a whitelist dispatches dynamically
            elif isinstance(verb, Invoke) and verb.workflow is None and tools is not None:
                literal = _literal(verb.tool_value)
                if literal is None:
                    tools = None  # a computed tool id
                else:
                    tools.add(literal)
        needs = list(needs_of(task))
        targeted = {n.tool for n in needs if n.plane == "net" and n.kind == "url"}
        for need in needs:
            if need.plane == "net":
                if need.kind != "url" and not need.dynamic and need.tool in targeted:
                    continue  # the tool's generic need; its URL argument is judged below
                host = _literal_host(need)
                if host is None:
                    hosts = None
                elif hosts is not None:
                    hosts.add(host)
            elif need.plane == "exec":
                literal = _literal(need.value) if need.kind == "program" and not need.dynamic else None
                if literal is None:
                    programs = None
                elif programs is not None:
                    programs.add(literal)
    return hosts, programs, tools


def _literal(v: object) -> str | None:
    if isinstance(v, ScalarValue) and not isinstance(v, TemplateValue) and isinstance(v.value, str):
        return v.value
    return None


def _literal_host(need: object) -> str | None:
    from checker.rules.authority import NeedSite

    assert isinstance(need, NeedSite)
    if need.dynamic or need.kind != "url":
        return None
    text = _literal(need.value)
    return url_host(text) if text is not None else None


def _host_fits(entry: str, host: str) -> bool:
    """Whether the one ``net.http`` entry covers ``host`` (the judge, on that entry alone)."""
    return Boundary(True, net_http=(entry,)).check("net", host) is None
