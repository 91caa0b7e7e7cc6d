"""Composition (14): ``invoke: {workflow: …}`` calls — NIKA-COMP-001 (the target is not static),
-003 (the call graph loops back) and -004 (the typed call does not compose).

A child is compiled by the same compiler (structure and model only: its own rules are its own
check's business) from the file the parent names, resolved from the working directory (02: like
every other relative path; :func:`checker.core.paths.resolve_named`, the runtime's resolver too).
Only files the workflow names are read; reads are bounded, and the call graph is explored up to
:data:`MAX_WORKFLOWS` files. A child that does not exist is NIKA-COMP-001 (spec 14 law 1: the
callee is resolvable before the run), the code `nika run` refuses it with; one that exists but
cannot be read or compiled is left to the run.

In the language server a child open in the editor is read from its unsaved buffer
(``RuleContext.buffers``, :mod:`checker.core.buffers`): a finding that comes from such a buffer
says so, since ``nika run`` reads the file on disk.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from checker.core.buffers import Buffers, unsaved_note
from checker.core.codes import report
from checker.core.diagnostics import Diagnostic
from checker.core.paths import resolve_inside
from checker.core.records import record
from checker.core.suggest import did_you_mean
from checker.model import typesys
from checker.model.workflow import Invoke, Task, Workflow
from checker.parse.values import MapValue, ScalarValue, TemplateValue, Value, templates
from checker.rules.support.context import RuleContext, task_verbs
from checker.rules.support.workspace import outside_workspace

REGISTRY_RE = re.compile(r"^registry:[a-z0-9][a-z0-9_.-]*/[a-z0-9][a-z0-9_.-]*@[^\s@/]+\Z")
MAX_WORKFLOWS = 64


@record(frozen=False, slots=False)
class _Child:
    path: str
    workflow: Workflow | None
    unsaved: bool = False  # compiled from an editor's unsaved buffer, not from the disk


class _Loader:
    """Children by absolute path, each compiled once per check (from an open editor buffer when
    the language server has one for the path)."""

    def __init__(self, buffers: Buffers | None = None) -> None:
        self.cache: dict[str, _Child | None] = {}
        self.buffers = buffers

    def load(self, path: str) -> _Child | None:
        if path in self.cache:
            return self.cache[path]
        child = _compile_child(path, self.unsaved(path)) if len(self.cache) < MAX_WORKFLOWS else None
        self.cache[path] = child
        return child

    def unsaved(self, path: str) -> str | None:
        """The editor's unsaved text of ``path``, if it has one."""
        return self.buffers.text(path) if self.buffers is not None else None


def _compile_child(path: str, unsaved: str | None = None) -> _Child | None:
    from checker.compiler.standalone import model_of_bytes
    from checker.parse.referenced import read_referenced

    if unsaved is not None:
        readable, wf = model_of_bytes(unsaved.encode("utf-8", "surrogatepass"), path)
        return _Child(path, wf, unsaved=True) if readable else None
    try:
        data = read_referenced(path)
    except OSError:
        return None
    readable, wf = model_of_bytes(data, path)
    return _Child(path, wf) if readable else None


def _noted(diags: Iterator[Diagnostic], note: str) -> Iterator[Diagnostic]:
    from checker.core.records import replace

    for d in diags:
        yield replace(d, message=d.message + note) if note else d


def _calls(wf: Workflow) -> Iterator[tuple[Task, Invoke]]:
    for task in wf.tasks.values():
        for verb in task_verbs(task):
            if isinstance(verb, Invoke) and verb.workflow is not None:
                yield task, verb


def _static_target(v: Value) -> str | None:
    """The literal path of a `workflow:` value, or ``None`` when it is not a local path."""
    if isinstance(v, TemplateValue) or not isinstance(v, ScalarValue) or not isinstance(v.value, str):
        return None
    if v.value.startswith("registry:") or not v.value.strip():
        return None
    return v.value


def check_composition(ctx: RuleContext) -> Iterator[Diagnostic]:
    wf = ctx.workflow
    calls = list(_calls(wf))
    if not calls:
        return
    loader = _Loader(ctx.buffers)
    base = ctx.base_dir
    own = os.path.realpath(ctx.source.path) if os.path.isfile(ctx.source.path) else None
    for task, call in calls:
        target = call.workflow
        assert target is not None
        problem = _target_problem(target)
        if problem is not None:
            yield report("NIKA-COMP-001", target.span, problem[0], problem[1], task=task.id)
            continue
        rel = _static_target(target)
        if rel is None or base is None:
            continue  # a pinned registry reference, or no directory to resolve against
        found = ctx.locate(rel)
        if found is None:
            yield outside_workspace(target.span, rel, "child workflow", task.id)
            continue
        path = found
        if not os.path.lexists(path):
            # (an editor buffer of a file never saved does not make it exist for `nika run`)
            opened = " (it is open in the editor, unsaved: `nika run` reads the disk)" if loader.unsaved(path) else ""
            yield report(
                "NIKA-COMP-001",
                target.span,
                f"the child workflow `{rel}` does not exist (relative paths resolve from the working directory)"
                + opened,
                "Fix the path, or run from the folder the path is relative to.",
                task=task.id,
            )
            continue
        if own is not None:
            loop = _loop_back(path, own, loader, base, ctx.roots)
            if loop is not None:
                chain = " → ".join(os.path.basename(p) for p in [own, *loop])
                buffered = [p for p in loop[:-1] if (c := loader.cache.get(p)) is not None and c.unsaved]
                note = unsaved_note(os.path.basename(buffered[0])) if buffered else ""
                yield report(
                    "NIKA-COMP-003",
                    target.span,
                    f"calling `{rel}` leads back to this workflow ({chain}){note}",
                    "Break the loop: move the shared work into a child that calls neither side.",
                    task=task.id,
                )
                continue
        child = loader.load(path)
        if child is None or child.workflow is None:
            continue
        note = unsaved_note(rel) if child.unsaved else ""
        yield from _noted(_contained(ctx, task, target, rel, child.workflow), note)
        yield from _noted(_typed_call(ctx, task, call, rel, child.workflow), note)


def _target_problem(target: Value) -> tuple[str, str] | None:
    if isinstance(target, TemplateValue):
        return (
            "the called workflow is computed at run time",
            "Name the child file literally; choose between children with one task each and `when:`.",
        )
    if not isinstance(target, ScalarValue) or not isinstance(target.value, str):
        return None  # the compiler already refused the shape
    text = target.value
    if "\0" in text:
        return "the workflow path holds a NUL character, which no file name can", "Remove the NUL character."
    if text.startswith("registry:") and not REGISTRY_RE.match(text):
        if "@" not in text:
            return (
                f"`{text}` is not pinned to a version",
                f"Pin it, e.g. `{text}@1.0.0`: an unpinned reference resolves to different bodies over time.",
            )
        return f"`{text}` is not a registry reference", "Write `registry:<owner>/<name>@<version>`."
    return None


def _loop_back(start: str, own: str, loader: _Loader, work_dir: str, roots: tuple[str, ...] | None) -> list[str] | None:
    """The chain of files from ``start`` back to ``own`` through static calls, if there is one
    (files outside ``roots`` are not followed)."""
    if start == own:
        return [start]
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen = {start}
    while stack:
        path, trail = stack.pop()
        child = loader.load(path)
        if child is None or child.workflow is None:
            continue
        for _task, call in _calls(child.workflow):
            rel = _static_target(call.workflow) if call.workflow is not None else None
            if rel is None:
                continue
            nxt = resolve_inside(rel, work_dir, path, roots)
            if nxt is None:
                continue
            if nxt == own:
                return [*trail, nxt]
            if nxt not in seen and len(seen) < MAX_WORKFLOWS:
                seen.add(nxt)
                stack.append((nxt, [*trail, nxt]))
    return None


def _contained(ctx: RuleContext, task: Task, target: Value, rel: str, child: Workflow) -> Iterator[Diagnostic]:
    """Laws 3/4 and NEP-0003 law 6: every effect the child's body needs fits inside the child's
    own boundary and the parent's (the effective authority is their intersection; an absent
    block on either side is the zero wall, and grants never flow down)."""
    from checker.contracts.effects import boundary_of
    from checker.rules.authority import needs_of

    sides = (("this workflow", boundary_of(ctx.workflow.permits)), (f"`{rel}` itself", boundary_of(child.permits)))
    for child_task in child.tasks.values():
        for n in needs_of(child_task):
            for who, bound in sides:
                if not _denied(bound, n):
                    continue
                what = f"`{n.tool}`" if n.tool else "`exec:`" if n.plane == "exec" else "its body"
                why = "declares no `permits:` block" if not bound.declared else "does not grant it"
                yield report(
                    "NIKA-COMP-002",
                    target.span,
                    f"`{rel}` exceeds its authority: its task `{child_task.id}` uses {what} ({n.plane}), "
                    f"and {who} {why}",
                    "Grant it on purpose in both `permits:` blocks (the child's own and this one), "
                    "or narrow what the child does.",
                    task=task.id,
                )
                return


def _denied(bound: object, n: object) -> bool:
    """Whether the need ``n`` escapes ``bound`` as far as the check can tell."""
    from checker.contracts import effects
    from checker.contracts.effects import Boundary
    from checker.rules.authority import NeedSite

    assert isinstance(bound, Boundary) and isinstance(n, NeedSite)
    if n.plane == "tools":
        d = bound.check("tools", n.tool)
        pure = n.tool is not None and effects.tool_effects(n.tool).pure
        return d is not None and not (pure and d.rule is None)
    if not bound.declared or not bound.grants(n.plane):
        return True
    if isinstance(n.value, ScalarValue) and not isinstance(n.value, TemplateValue):
        raw = n.value.value
        value = effects.url_host(raw) if n.kind == "url" else raw
        return value is not None and bound.check(n.plane, value, directory=n.kind == "dir") is not None
    return False  # a target the child computes at run time is re-gated there (NIKA-SEC-004)


def _typed_call(ctx: RuleContext, task: Task, call: Invoke, rel: str, child: Workflow) -> Iterator[Diagnostic]:
    """Law 2: the parent's `args:` fit the child's `inputs:`; the child's outputs fit `returns:`."""
    named_child = typesys.named_types(child.types)
    inputs = {i.name: i for i in child.inputs}
    args = call.args
    anchor = call.value.entry("args")
    anchor_span = anchor.key.span if anchor is not None else call.workflow.span  # type: ignore[union-attr]
    given: dict[str, tuple[ScalarValue, Value]] = {}
    if isinstance(args, MapValue):
        for name, e in args.items():
            given[name] = (e.key, e.value)
    for name, (key, value) in given.items():
        inp = inputs.get(name)
        if inp is None:
            guess = did_you_mean(name, list(inputs))
            yield report(
                "NIKA-COMP-004",
                key.span,
                f"`{name}` is not an input of `{rel}`",
                f"Did you mean `{guess}`?" if guess else _declared(inputs, rel),
                task=task.id,
            )
            continue
        if inp.type is None or any(True for _ in templates(value)):
            continue
        want = typesys.parse(inp.type.to_python(), named_child)
        if typesys.fits(value.to_python(), want) is False:
            yield report(
                "NIKA-COMP-004",
                value.span,
                f"`{name}` does not fit the input `{name}` of `{rel}`, which takes `{_type_text(inp.type)}`",
                f"Pass a value of type `{_type_text(inp.type)}`.",
                task=task.id,
            )
    for name, inp in inputs.items():
        if inp.required and inp.default is None and name not in given:
            yield report(
                "NIKA-COMP-004",
                anchor_span,
                f"`{rel}` requires the input `{name}`, and the call does not pass it",
                f"Add `{name}: …` under `args:`.",
                task=task.id,
            )
    if task.returns is not None and task.verb is call:
        yield from _returns_fit(ctx, task, rel, child, named_child)


def _returns_fit(
    ctx: RuleContext, task: Task, rel: str, child: Workflow, named_child: dict[str, object]
) -> Iterator[Diagnostic]:
    assert task.returns is not None
    fields = []
    for out in child.outputs:
        t = typesys.parse(out.type.to_python(), named_child) if out.type is not None else typesys.UNKNOWN
        fields.append((out.name, typesys.Field(t)))
    produced = typesys.normalize(typesys.Obj(tuple(sorted(fields))))
    wanted = typesys.declared(task.returns, ctx.workflow.types)
    if not typesys.assignable(produced, wanted):
        yield report(
            "NIKA-COMP-004",
            task.returns.span,
            f"the outputs of `{rel}` do not fit this task's `returns:` "
            f"(the child returns `{_describe_outputs(child)}`)",
            "Make `returns:` describe the child's `outputs:` (names and types), or change the child.",
            task=task.id,
        )


def _declared(inputs: dict[str, object], rel: str) -> str:
    if not inputs:
        return f"`{rel}` declares no `inputs:`; remove the argument."
    return f"`{rel}` takes {', '.join(f'`{n}`' for n in inputs)}."


def _type_text(v: Value) -> str:
    import json

    data = v.to_python()
    text = data if isinstance(data, str) else json.dumps(data, separators=(", ", ": "))
    return text if len(text) <= 80 else text[:79] + "…"


def _describe_outputs(child: Workflow) -> str:
    parts = [f"{o.name}: {_type_text(o.type) if o.type is not None else 'untyped'}" for o in child.outputs]
    return "{" + ", ".join(parts) + "}"
