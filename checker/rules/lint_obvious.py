"""The ``one-obvious-way/*`` lint family (03 §one obvious way, 04 §binding rules, 09 §one obvious way).

Each rule spots a legal but discouraged spelling of an intent the language spells one canonical
way, and says which. Warnings only; every rule is a pure function of the compiled model and
reports in task order. (``/001`` is retired; ``/008`` is not defined by the spec.)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from checker.core.codes import lint
from checker.core.diagnostics import Diagnostic, Edit, Fix, Label
from checker.core.vocab import ALL_STATES, EdgeRole, OnErrorAction, Predicate, Where
from checker.model.graph import Edge, pass_set
from checker.model.workflow import Agent, Exec, Infer, Invoke, Task
from checker.parse.values import ListValue, MapValue, ScalarValue, TemplateValue, Value, templates
from checker.rules.support.commands import commands_of
from checker.rules.support.context import RuleContext

# -- /010 · an `after:` entry beside a value edge that does not tighten the gate ---------------


def check_redundant_after(ctx: RuleContext) -> Iterator[Diagnostic]:
    tasks = ctx.workflow.tasks
    for task in tasks.values():
        if not task.after:
            continue
        data: dict[str, list[Edge]] = {}
        for e in ctx.graph.incoming(task.id):
            if e.kind not in (EdgeRole.CONTROL, EdgeRole.RECOVERY) and e.producer in tasks:
                data.setdefault(e.producer, []).append(e)
        for a in task.after:
            edges = data.get(a.producer)
            if not edges or a.predicate is None or a.producer == task.id:
                continue
            if not any(e.kind == EdgeRole.VALUE for e in edges):
                continue  # observing `.status` beside `after: terminal` is the idiomatic pairing (03)
            gate = set(ALL_STATES)
            for e in edges:
                gate &= e.passes
            if not gate or not gate <= pass_set(EdgeRole.CONTROL, a.predicate):
                continue
            binding = next((e.binding for e in edges if e.binding), None)
            via = f"`with.{binding}`" if binding else "a `with:` binding"
            yield lint(
                "one-obvious-way/010",
                a.key.span,
                f"`after: {{{a.producer}: {a.predicate}}}` adds nothing: {via} already waits for `{a.producer}`",
                "Remove the entry (the value edge is the dependency), or write `success` to also exclude a "
                "skipped producer.",
                task=task.id,
                fixes=_remove_after_fix(ctx, task, a.producer),
            )


def _remove_after_fix(ctx: RuleContext, task: Task, producer: str) -> tuple[Fix, ...]:
    from checker.rules.support.fixes import remove_map_entry

    after = task.value.get("after")
    if not isinstance(after, MapValue):
        return ()
    entry = after.entry(producer)
    if entry is None:
        return ()
    if len(after.entries) == 1:
        outer = task.value.entry("after")
        edit = remove_map_entry(ctx.source.text, task.value, outer) if outer else None
    else:
        edit = remove_map_entry(ctx.source.text, after, entry)
    if edit is None:
        return ()
    return (Fix(f"Remove `after: {{{producer}: …}}`", (edit,)),)


# -- /002 · a skippable producer whose dependents never decide about the skip -------------------


def check_unacknowledged_skip(ctx: RuleContext) -> Iterator[Diagnostic]:
    """A producer that may settle ``skipped`` (``on_error: {skip: true}``) leaves each dependent a
    decision about the skip path (05 §on_error: "downstream sees status = skipped"). A dependent
    decides it with an ``after:`` entry for the producer that settles the skipped state (``success``
    or ``failure``: a skip cancels it; ``skipped``: it runs on the skip), an observation of the
    producer's ``.status``/``.error``, or a ``when:`` guard on every binding it reads from the
    producer (the ``null`` a skip leaves). A ``with:`` read alone has decided nothing: the body
    receives ``null`` (a fan-out over it fails with NIKA-VAR-006, 03 §for_each); nor has
    ``after: {x: terminal}``, which admits every state. The rule fires on the producer when a
    dependent has not decided."""
    tasks = ctx.workflow.tasks
    for task in tasks.values():
        oe = task.on_error
        if oe is None or oe.action is not OnErrorAction.SKIP:
            continue
        undecided = [d for d in _dependents(ctx, task.id) if not _decides_skip(ctx, tasks[d], task.id)]
        if not undecided:
            continue
        names = ", ".join(f"`{d}`" for d in undecided)
        yield lint(
            "one-obvious-way/002",
            oe.span,
            f"`{task.id}` may settle `skipped`, and {names} {'does' if len(undecided) == 1 else 'do'} not decide "
            "what a skip means",
            f"Give each dependent `after: {{{task.id}: success}}` (a skip cancels it), or guard the `null` a "
            f"skip passes with `when:` (`${{{{ with.<name> != null }}}}`).",
            task=task.id,
            related=tuple(Label(tasks[d].key.span, f"`{d}` reads `{task.id}` here") for d in undecided),
        )


def _dependents(ctx: RuleContext, producer: str) -> list[str]:
    """The tasks scheduled after ``producer`` by an edge from it (a recovery read schedules nothing)."""
    out: list[str] = []
    for e in ctx.graph.outgoing(producer):
        if e.kind != EdgeRole.RECOVERY and e.consumer not in (producer, *out) and e.consumer in ctx.workflow.tasks:
            out.append(e.consumer)
    return out


def _decides_skip(ctx: RuleContext, consumer: Task, producer: str) -> bool:
    edges = [e for e in ctx.graph.incoming(consumer.id) if e.producer == producer]
    if any(e.kind in _OBSERVING or (e.kind == EdgeRole.CONTROL and e.label in _SETTLING) for e in edges):
        return True
    reads = [e for e in edges if e.kind == EdgeRole.VALUE]
    guarded = _with_names(ctx, consumer.id, Where.WHEN) if reads else set()
    return bool(reads) and all(e.binding is not None and e.binding in guarded for e in reads)


# A read of the producer's `.status`/`.error` (the dependent looks at the state itself), and the
# `after:` predicates whose pass-set takes a side on `skipped` (`terminal` admits every state).
_OBSERVING = frozenset({EdgeRole.TERMINAL_OBSERVATION, EdgeRole.FAILURE_OBSERVATION})
_SETTLING = frozenset({Predicate.SUCCESS, Predicate.FAILURE, Predicate.SKIPPED})


def _with_names(ctx: RuleContext, task: str, where: Where) -> set[str]:
    out = set()
    for site in ctx.sites:
        if site.task == task and site.where == where:
            for _island, ref, _span in site.references():
                if ref.root == "with" and ref.path and isinstance(ref.path[0], str):
                    out.add(ref.path[0])
    return out


# -- /003 · a failure branch that repeats the failing task: a hand-made retry ------------------


def _body(task: Task) -> tuple[str | None, Any, Any] | None:
    if task.verb is None:
        return None
    return task.verb_kind, task.verb.value.to_python(), {b.name: b.value.to_python() for b in task.with_}


def check_failure_retry(ctx: RuleContext) -> Iterator[Diagnostic]:
    tasks = ctx.workflow.tasks
    for task in tasks.values():
        failing = [a for a in task.after if a.predicate is Predicate.FAILURE and a.producer in tasks]
        mine = _body(task) if failing else None
        if mine is None:
            continue
        for a in failing:
            other = tasks[a.producer]
            if other is not task and _body(other) == mine:
                yield lint(
                    "one-obvious-way/003",
                    a.key.span,
                    f"`{task.id}` repeats `{a.producer}` when it fails: a retry written as a second task",
                    f"Delete `{task.id}` and give `{a.producer}` a `retry:` block (attempts, backoff, codes).",
                    task=task.id,
                    related=(Label(other.key.span, f"`{a.producer}` runs the same body"),),
                )
                break


# -- /004 · a failure branch that only supplies a value -----------------------------------------

_VALUE_PROGRAMS = frozenset({"echo", "printf"})


def _mere_value(task: Task) -> str | None:
    """How the task produces a constant-like value (``echo``, a literal ``nika:jq``), or None."""
    verb = task.verb
    if isinstance(verb, Exec):
        cmds = commands_of(verb)
        if cmds and all(c.head in _VALUE_PROGRAMS and not c.redirects for c in cmds):
            return f"`{cmds[0].head}`"
        return None
    if isinstance(verb, Invoke) and verb.tool == "nika:jq" and verb.args is not None:
        literal = next(templates(verb.args), None) is None
        return "a `nika:jq` call over literal values" if literal else None
    return None


def check_fallback_task(ctx: RuleContext) -> Iterator[Diagnostic]:
    tasks = ctx.workflow.tasks
    for task in tasks.values():
        failing = [a for a in task.after if a.predicate is Predicate.FAILURE and a.producer in tasks]
        if not failing:
            continue
        how = _mere_value(task)
        if how is None:
            continue
        a = failing[0]
        yield lint(
            "one-obvious-way/004",
            a.key.span,
            f"`{task.id}` only supplies a fallback value ({how}) when `{a.producer}` fails",
            f"Put the value in `on_error: {{ recover: … }}` on `{a.producer}` and delete `{task.id}`; keep "
            "failure-path tasks for real work.",
            task=task.id,
        )


# -- /005 · cleanup smuggled into the graph ------------------------------------------------------


def check_graph_cleanup(ctx: RuleContext) -> Iterator[Diagnostic]:
    tasks = ctx.workflow.tasks
    g = ctx.graph
    for task in tasks.values():
        after = task.after
        if len(after) < 2 or any(a.predicate is not Predicate.TERMINAL for a in after):
            continue
        if any(e.kind != EdgeRole.CONTROL for e in g.incoming(task.id)):
            continue  # a report task that observes outcomes through `with:`
        others = set(tasks) - {task.id}
        if others != g.upstream(task.id):
            continue
        entry = task.value.entry("after")
        yield lint(
            "one-obvious-way/005",
            entry.key.span if entry else task.key.span,
            f"`{task.id}` waits with `terminal` on every other task: a cleanup placed in the task graph",
            "Move per-task cleanup to `on_finally:` on the task that needs it; keep at most one terminal "
            "report task, which reads the outcomes it reports.",
            task=task.id,
        )


# -- /006 · a timing trick inside a for_each body ----------------------------------------------

_TIMERS = frozenset({"timeout", "gtimeout"})


def check_iteration_timer(ctx: RuleContext) -> Iterator[Diagnostic]:
    for task in ctx.workflow.tasks.values():
        if task.for_each is None or not isinstance(task.verb, Exec):
            continue
        cmd = next((c for c in commands_of(task.verb) if c.head in _TIMERS), None)
        if cmd is None:
            continue
        yield lint(
            "one-obvious-way/006",
            cmd.span,
            f"each iteration of `{task.id}` is wrapped in `{cmd.head}`",
            "Drop the wrapper and set `timeout:` on the task: on a `for_each` it bounds each iteration.",
            task=task.id,
        )


# -- /007 · manual sharding into sequential tasks ----------------------------------------------

_DIGITS = re.compile(r"[0-9]+")
MIN_SHARDS = 3


def _skeleton(v: Value) -> Any:
    """The body with every number blanked: shards of one job share it."""
    if isinstance(v, MapValue):
        return tuple((e.key.value, _skeleton(e.value)) for e in v.entries)
    if isinstance(v, ListValue):
        return ("[", *(_skeleton(i) for i in v.items))
    if isinstance(v, TemplateValue):
        return ("$", v.raw)
    if isinstance(v, ScalarValue):
        x = v.value
        if isinstance(x, str):
            return ("s", _DIGITS.sub("#", x))
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return ("n",)
        return ("v", repr(x))
    return ("?",)


def _shard_key(task: Task) -> Any:
    if task.verb is None or task.for_each is not None or task.with_:
        return None
    return (task.verb_kind, _skeleton(task.verb.value))


def check_manual_sharding(ctx: RuleContext) -> Iterator[Diagnostic]:
    tasks = ctx.workflow.tasks
    g = ctx.graph
    keys: dict[str, Any] = {}

    def key(tid: str) -> Any:  # computed only for tasks on a candidate link
        if tid not in keys:
            keys[tid] = _shard_key(tasks[tid])
        return keys[tid]

    nxt: dict[str, list[str]] = {}
    has_prev: set[str] = set()
    for tid, task in tasks.items():
        inc = g.incoming(tid)
        if len(inc) != 1:
            continue
        e = inc[0]
        prev = e.producer
        if e.kind != EdgeRole.CONTROL or e.label != Predicate.SUCCESS or prev not in tasks or prev == tid:
            continue
        if key(tid) is None or key(prev) != key(tid) or _body(tasks[prev]) == _body(task):
            continue
        nxt.setdefault(prev, []).append(tid)
        has_prev.add(tid)
    for tid in tasks:
        if tid in has_prev or len(nxt.get(tid, ())) != 1:
            continue
        chain = [tid]
        seen = {tid}
        while len(nxt.get(chain[-1], ())) == 1 and nxt[chain[-1]][0] not in seen:
            chain.append(nxt[chain[-1]][0])
            seen.add(chain[-1])
        if len(chain) < MIN_SHARDS:
            continue
        first = tasks[tid]
        yield lint(
            "one-obvious-way/007",
            first.key.span,
            f"{len(chain)} tasks ({', '.join(f'`{c}`' for c in chain)}) run the same body one after another "
            "on different slices",
            "Fold them into one task with `for_each:` over the slices and `max_parallel:` to cap concurrency.",
            task=tid,
            related=tuple(Label(tasks[c].key.span, "the same body, next slice") for c in chain[1:]),
        )


# -- /009 · an output binding whose jq ends in a bare iterator ---------------------------------

_TRAILING_ITERATOR = re.compile(r"\[\s*\]\s*\??\s*$")


def check_stream_binding(ctx: RuleContext) -> Iterator[Diagnostic]:
    for task in ctx.workflow.tasks.values():
        for b in task.output:
            v = b.value
            if isinstance(v, TemplateValue) or not isinstance(v, ScalarValue) or not isinstance(v.value, str):
                continue
            program = v.value.strip()
            if not _TRAILING_ITERATOR.search(program):
                continue
            fixes: tuple[Fix, ...] = ()
            if v.style in ('"', "'", "") and "\n" not in v.value:
                import json

                quoted = json.dumps(f"[{program}]", ensure_ascii=False)
                fixes = (Fix("Collect the values into an array", (Edit(v.span, quoted),), "unsafe"),)
            yield lint(
                "one-obvious-way/009",
                v.span,
                f"output binding `{b.name}` ends in `[]`: it emits one value per element, not one value",
                f"Wrap it as `[{program}]` to collect an array, or index the one element you want (`[0]`).",
                task=task.id,
                fixes=fixes,
            )


# -- /011 · a raw `schema:` where `returns:` would say the same ---------------------------------

_ANNOTATIONS = frozenset({"$schema"})
_PRIMITIVES = frozenset({"null", "boolean", "integer", "number", "string"})
_STRING_FORMATS = frozenset({"uri", "date-time"})


def fits_type_grammar(schema: Any, depth: int = 0) -> bool:
    """Whether a JSON Schema is the lowering of some v1 type (09 §lowering), so `returns:` fits."""
    if depth > 32 or not isinstance(schema, dict):
        return False
    keys = set(schema) - _ANNOTATIONS
    if "anyOf" in schema:
        members = schema["anyOf"]
        return (
            keys == {"anyOf"}
            and isinstance(members, list)
            and len(members) >= 2
            and all(fits_type_grammar(m, depth + 1) for m in members)
        )
    t = schema.get("type")
    if isinstance(t, list):
        if len(t) < 2 or len(set(map(str, t))) != len(t) or not all(x in _PRIMITIVES for x in t):
            return False
        return keys == {"type"}
    if "enum" in schema and t in (None, "string"):
        e = schema["enum"]
        ok = isinstance(e, list) and e and all(isinstance(x, str) for x in e) and len(set(e)) == len(e)
        return bool(ok) and keys <= {"type", "enum"}
    if t in ("integer", "number"):
        bounds = [schema.get(k) for k in ("minimum", "maximum") if k in schema]
        return keys <= {"type", "minimum", "maximum"} and all(
            isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds
        )
    if t == "string":
        return _fits_string(schema, keys)
    if t in ("null", "boolean"):
        return keys == {"type"}
    if t == "array":
        return keys == {"type", "items"} and fits_type_grammar(schema["items"], depth + 1)
    if t == "object":
        return _fits_object(schema, keys, depth)
    return False


def _fits_string(schema: dict[str, Any], keys: set[str]) -> bool:
    from checker.rules.types import regex_dialect_problem

    if keys <= {"type", "format"}:
        return "format" not in keys or schema["format"] in _STRING_FORMATS
    if keys == {"type", "contentEncoding"}:
        return schema["contentEncoding"] == "base64"
    if not keys <= {"type", "pattern", "minLength", "maxLength"}:
        return False
    pattern = schema.get("pattern")
    if pattern is not None and (not isinstance(pattern, str) or regex_dialect_problem(pattern)):
        return False
    for k in ("minLength", "maxLength"):
        n = schema.get(k)
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 0):
            return False
    return True


def _fits_object(schema: dict[str, Any], keys: set[str], depth: int) -> bool:
    props = schema.get("properties")
    extra = schema.get("additionalProperties", True)
    if props is None:  # a map: homogeneous values
        return keys == {"type", "additionalProperties"} and fits_type_grammar(extra, depth + 1)
    if not keys <= {"type", "properties", "required", "additionalProperties"} or not isinstance(props, dict):
        return False
    if extra not in (True, False):
        return False
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) and r in props for r in required):
        return False
    return bool(props) and all(fits_type_grammar(p, depth + 1) for p in props.values())


def check_raw_schema(ctx: RuleContext) -> Iterator[Diagnostic]:
    for task in ctx.workflow.tasks.values():
        verb = task.verb
        if not isinstance(verb, (Infer, Agent)) or task.returns is not None:
            continue
        schema = verb.schema
        if not isinstance(schema, MapValue) or next(templates(schema), None) is not None:
            continue
        if not fits_type_grammar(schema.to_python()):
            continue
        entry = verb.value.entry("schema")
        yield lint(
            "one-obvious-way/011",
            entry.key.span if entry else schema.span,
            f"the `schema:` of `{task.id}` fits the type grammar: `returns:` can say the same",
            "Write the contract as `returns:` (a Nika type, checked at every read) and delete `schema:`; keep "
            "`schema:` for shapes the type grammar cannot express.",
            task=task.id,
        )


# -- /012 · one inline `returns:` object written on several tasks ------------------------------


def _has_object(v: Value) -> bool:
    if isinstance(v, MapValue):
        return "object" in v or any(_has_object(e.value) for e in v.entries)
    if isinstance(v, ListValue):
        return any(_has_object(i) for i in v.items)
    return False


def _canonical(x: object) -> object:
    """A hashable form of a plain value in which mapping order does not matter."""
    if isinstance(x, dict):
        return ("{", tuple(sorted(((repr(k), _canonical(v)) for k, v in x.items()), key=lambda kv: kv[0])))
    if isinstance(x, list):
        return ("[", tuple(_canonical(i) for i in x))
    return (type(x).__name__, repr(x))


def check_repeated_returns(ctx: RuleContext) -> Iterator[Diagnostic]:
    first: dict[object, Task] = {}
    for task in ctx.workflow.tasks.values():
        r = task.returns
        if not isinstance(r, MapValue) or not _has_object(r):
            continue
        key = _canonical(r.to_python())
        seen = first.setdefault(key, task)
        if seen is task:
            continue
        yield lint(
            "one-obvious-way/012",
            r.span,
            f"`{task.id}` repeats the inline `returns:` type of `{seen.id}`",
            "Declare the type once under `types:` (a PascalCase name) and write that name in each `returns:`.",
            task=task.id,
            related=(Label(seen.returns.span if seen.returns else seen.key.span, "first written here"),),
        )


RULES = (
    check_unacknowledged_skip,
    check_failure_retry,
    check_fallback_task,
    check_graph_cleanup,
    check_iteration_timer,
    check_manual_sharding,
    check_stream_binding,
    check_redundant_after,
    check_raw_schema,
    check_repeated_returns,
)

__all__ = ["RULES", "fits_type_grammar"]
