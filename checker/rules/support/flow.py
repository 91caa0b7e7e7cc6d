"""Value flow shared by the authority rules: where a value comes from, whether it is trusted,
which secrets it carries, and what it resolves to at check time.

Integrity (spec 10 §permit-parameterization taint, NEP-0004): literals, ``const.*`` and
``secrets.*`` are trusted; ``inputs.*``, ``config.*``, task results and anything derived from
them are untrusted; one untrusted operand taints the whole string. A task-level ``declassify:``
entry (``from: inputs.p`` / ``from: with.url``) trusts the references it names, in that task only.

Confidentiality (01 §egress): a value carries the secrets it reads, directly, through ``with:``
bindings, ``for_each`` items, or the output of an ``exec:``/``invoke:`` task that received them
(an ``infer:``/``agent:`` output does not re-leak its prompt).

Every fact carries its witness: the chain of source spans from the origin to the reference.
The work is linear in the number of references times the number of distinct secrets on one
value; :data:`MAX_STEPS` bounds it (the rules report when the bound is hit).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from checker.core.diagnostics import Label
from checker.core.records import field, record
from checker.core.source import Span
from checker.core.vocab import LOOP_ROOTS, OBSERVATION_FIELDS
from checker.expr.refs import Ref
from checker.model.workflow import Exec, Invoke, Task, Workflow
from checker.parse.values import MapValue, ScalarValue, TemplateValue, Value, templates
from checker.rules.support.context import RuleContext

if TYPE_CHECKING:
    from checker.contracts.argv import Word

#: the most reference visits one analysis makes before it stops and says so
MAX_STEPS = 200_000

Witness = tuple[Label, ...]

UNTRUSTED_ROOTS = ("inputs", "config")


def ref_text(ref: Ref) -> str:
    out = ref.root
    for step in ref.path:
        if step is None:
            break
        out += f".{step}" if isinstance(step, str) else f"[{step}]"
    return out


def template_refs(v: TemplateValue) -> Iterator[tuple[Ref, Span]]:
    from checker.expr import references

    t = v.template
    if t is None:
        return
    for island in t.islands:
        if island.expr is None:
            continue
        for ref in references(island.expr):
            yield ref, v.sub_span(island.expr_start + ref.start, island.expr_start + ref.end)


def value_refs(v: Value | None) -> Iterator[tuple[TemplateValue, Ref, Span]]:
    for t in templates(v):
        for ref, span in template_refs(t):
            yield t, ref, span


@record(frozen=False, slots=False)
class Budget:
    steps: int = 0
    exhausted: bool = False

    def spend(self, n: int = 1) -> bool:
        self.steps += n
        if self.steps > MAX_STEPS:
            self.exhausted = True
        return not self.exhausted


# -- integrity ----------------------------------------------------------------------------------


@record(slots=False)
class Trust:
    """The integrity of one value: untrusted when ``witness`` is non-empty (source first)."""

    witness: Witness = ()
    unresolvable: bool = False
    source: str = ""  # the untrusted reference it comes from (`inputs.topic`, `tasks.review.output`)

    @property
    def trusted(self) -> bool:
        return not self.witness


def _declassified(task: Task | None, ref: Ref) -> bool:
    if task is None:
        return False
    text = ref_text(ref)
    for d in task.declassify:
        name = d.source.value if isinstance(d.source.value, str) else None
        if name and (text == name or text.startswith(name + ".") or text.startswith(name + "[")):
            return True
    return False


def integrity(ctx: RuleContext, task: Task | None, v: Value | None) -> Trust:
    """Whether ``v`` (a field of ``task``) is trusted, with the first untrusted chain found."""
    return value_trust(ctx.workflow, task, v)


def value_trust(wf: Workflow, task: Task | None, v: Value | None, _depth: int = 0) -> Trust:
    """:func:`integrity` on the model alone: the runtime asks it about the same field before the
    effect (the label is a property of where the value comes from, not of what it resolved to)."""
    for _t, ref, span in value_refs(v):
        if _declassified(task, ref):
            continue
        name = ref.path[0] if ref.path and isinstance(ref.path[0], str) else None
        if ref.root in UNTRUSTED_ROOTS:
            decl = _declaration(wf, ref.root, name)
            origin = (Label(decl, f"`{ref_text(ref)}` is supplied from outside the file (untrusted)"),) if decl else ()
            return Trust((*origin, Label(span, f"`{ref_text(ref)}` flows in here")), source=ref_text(ref))
        if ref.root == "tasks":
            text = ref_text(ref)
            return Trust((Label(span, f"`{text}` is a task result (untrusted)"),), unresolvable=True, source=text)
        if ref.root in LOOP_ROOTS and task is not None and task.for_each is not None and _depth < 8:
            inner = value_trust(wf, task, task.for_each, _depth + 1)
            if not inner.trusted:
                return Trust((*inner.witness, Label(span, f"`{ref_text(ref)}` iterates over it")), True, inner.source)
        if ref.root == "with" and task is not None and name and _depth < 8:
            b = task.binding(name)
            if b is not None:
                inner = value_trust(wf, task, b.value, _depth + 1)
                if not inner.trusted:
                    carried = Label(span, f"`with.{name}` carries it here")
                    return Trust((*inner.witness, carried), inner.unresolvable, inner.source)
    return Trust()


@record
class _WorkflowOnly:
    """What :func:`integrity` reads of a rule context: the workflow."""

    workflow: Workflow


def trusted(wf: Workflow, task: Task | None, v: Value | None) -> bool:
    """:func:`integrity` for a caller without a rule context (the runtime re-judging an effect
    whose target the spec does not grant by a permit: ``nika:notify``'s email recipients)."""
    return integrity(_WorkflowOnly(wf), task, v).trusted  # type: ignore[arg-type]


def _declaration(wf: Workflow, root: str, name: str | None) -> Span | None:
    for n in getattr(wf, root, ()):
        if n.name == name:
            return n.key.span
    return None


def leading_text(v: Value | None) -> str:
    """The authored text a value starts with: all of a literal, the first literal part of a
    template (``"--message="`` for ``"--message=${{ inputs.m }}"``)."""
    if v is None:
        return ""
    if not isinstance(v, TemplateValue):
        return v.value if isinstance(v, ScalarValue) and isinstance(v.value, str) else ""
    t = v.template
    if t is None or not t.parts or not isinstance(t.parts[0], str):
        return ""
    return t.parts[0]


def known_prefix(ctx: RuleContext, v: Value | None) -> str:
    """:func:`prefix_with` the constants the check knows."""
    return prefix_with(v, _scope(ctx)["const"])


def prefix_with(v: Value | None, consts: Any) -> str:
    """:func:`leading_text` extended over leading islands that read a ``const``
    (``"${{ const.greeting }} ${{ with.r }}"`` starts with the greeting): what the value is sure
    to start with. The check passes the constants it knows, the run the run's."""
    if not isinstance(v, TemplateValue) or v.template is None:
        return leading_text(v)
    from checker.expr.refs import as_ref

    if not isinstance(consts, dict):
        consts = {}
    out: list[str] = []
    for part in v.template.parts:
        if isinstance(part, str):
            out.append(part)
            continue
        ref = as_ref(part.expr) if part.expr is not None else None
        if ref is None or ref.root != "const" or len(ref.path) != 1 or not isinstance(ref.path[0], str):
            break
        got = consts.get(ref.path[0])
        if not isinstance(got, str | int) or isinstance(got, bool):
            break
        out.append(str(got))
    return "".join(out)


def exec_words(
    wf: Workflow,
    task: Task | None,
    command: tuple[Value, ...],
    texts: list[str | None],
    prefixes: list[str] | None = None,
) -> list[Word]:
    """The argv judge's words for ``command`` (the model's elements) with ``texts`` (what each
    resolved to: at check what the check knows, ``None`` otherwise; at run the resolved text)
    and, at check, what each is sure to start with (:func:`known_prefix`)."""
    from checker.contracts.argv import Word

    out = []
    for i, (el, text) in enumerate(zip(command, texts, strict=True)):
        untrusted = isinstance(el, TemplateValue) and not value_trust(wf, task, el).trusted
        out.append(Word(text, untrusted, prefixes[i] if prefixes is not None else leading_text(el)))
    return out


# -- check-time resolution ----------------------------------------------------------------------


class Unresolvable(Exception):
    pass


def _literal(v: Value | None) -> Any:
    if v is None or any(True for _ in templates(v)):
        raise Unresolvable
    return v.to_python()


def _scope(ctx: RuleContext) -> dict[str, Any]:
    wf = ctx.workflow
    scope: dict[str, Any] = {"inputs": {}, "config": {}, "const": {}}
    for section in ("inputs", "config"):
        for n in getattr(wf, section):
            if n.default is not None:
                with contextlib.suppress(Unresolvable):
                    scope[section][n.name] = _literal(n.default)
    for c in wf.const:
        src = c.literal if c.literal is not None else (c.value if c.type is None else None)
        with contextlib.suppress(Unresolvable):
            scope["const"][c.name] = _literal(src)
    return scope


def resolve(ctx: RuleContext, task: Task | None, v: Value | None, _depth: int = 0) -> Any:
    """The value ``v`` takes at run time when the check can know it (literals, ``const``,
    declared defaults, ``with:`` bindings over those); raises :class:`Unresolvable` otherwise."""
    if v is None:
        raise Unresolvable
    if not isinstance(v, TemplateValue):
        if isinstance(v, ScalarValue):
            return v.value
        return _literal(v)
    if v.template is None or v.template.errors or _depth > 8:
        raise Unresolvable
    scope = dict(_scope(ctx))
    with_vals: dict[str, Any] = {}
    for ref, _span in template_refs(v):
        if ref.root in ("tasks", "secrets", "item", "index"):
            raise Unresolvable
        if ref.root == "with":
            name = ref.path[0] if ref.path and isinstance(ref.path[0], str) else None
            b = task.binding(name) if task is not None and name else None
            if b is None:
                raise Unresolvable
            with_vals[b.name] = resolve(ctx, task, b.value, _depth + 1)
    scope["with"] = with_vals
    quick = _substitute(v, scope)
    if quick is not None:
        return quick
    from checker.expr.evaluate import render_template

    try:
        return render_template(v.template, scope)
    except Exception as exc:  # any evaluation problem: not knowable here
        raise Unresolvable from exc


def _substitute(v: TemplateValue, scope: dict[str, Any]) -> str | None:
    """The common case without the evaluator: a string whose islands are plain reference chains
    to strings or integers. ``None`` when anything else is involved; :class:`Unresolvable` when a
    chain names a value the check cannot know."""
    from checker.expr.refs import as_ref

    t = v.template
    if t is None:
        return None
    out: list[str] = []
    for part in t.parts:
        if isinstance(part, str):
            out.append(part)
            continue
        ref = as_ref(part.expr) if part.expr is not None else None
        if ref is None or None in ref.path:
            return None
        cur: Any = scope.get(ref.root)
        for step in ref.path:
            if not isinstance(cur, dict) or not isinstance(step, str):
                return None
            if step not in cur:
                raise Unresolvable  # no value known at check time (no default)
            cur = cur[step]
        if isinstance(cur, bool) or not isinstance(cur, str | int):
            return None
        out.append(str(cur))
    return "".join(out)


def resolve_str(ctx: RuleContext, task: Task | None, v: Value | None) -> str | None:
    try:
        r = resolve(ctx, task, v)
    except Unresolvable:
        return None
    return r if isinstance(r, str) else None


# -- confidentiality ----------------------------------------------------------------------------


@record(frozen=False, slots=False)
class SecretFlow:
    """Which secrets each task's output and bindings carry, each with a witness."""

    ctx: RuleContext
    budget: Budget = field(default_factory=Budget)
    outputs: dict[str, dict[str, Witness]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        wf = self.ctx.workflow
        self.secret_spans = {s.name: s.key.span for s in wf.secrets}
        order = [t for wave in self.ctx.graph.waves for t in wave]
        for tid in order:
            task = wf.tasks.get(tid)
            if task is None or self.budget.exhausted:
                continue
            if isinstance(task.verb, Exec | Invoke):
                carried: dict[str, Witness] = {}
                for v in _verb_payload(task):
                    for name, w in self.carried(task, v).items():
                        carried.setdefault(name, (*w, Label(task.key.span, f"task `{tid}` receives it")))
                self.outputs[tid] = carried

    def carried(self, task: Task | None, v: Value | None, _depth: int = 0) -> dict[str, Witness]:
        """Secrets ``v`` carries, each with its witness (source first)."""
        out: dict[str, Witness] = {}
        if not self.secret_spans and not self.outputs:
            return out
        for _t, ref, span in value_refs(v):
            if not self.budget.spend():
                return out
            name = ref.path[0] if ref.path and isinstance(ref.path[0], str) else None
            if ref.root == "secrets" and name in self.secret_spans:
                out.setdefault(
                    name,
                    (Label(self.secret_spans[name], f"secret `{name}`"), Label(span, f"`secrets.{name}` read here")),
                )
            elif ref.root == "tasks" and name in self.outputs:
                fld = ref.path[1] if len(ref.path) > 1 else None
                if fld in OBSERVATION_FIELDS:
                    continue
                for s, w in self.outputs[name].items():
                    self.budget.spend()
                    out.setdefault(s, (*w, Label(span, f"`{ref_text(ref)}` carries it on")))
            elif ref.root == "with" and task is not None and name and _depth < 8:
                b = task.binding(name)
                if b is not None:
                    for s, w in self.carried(task, b.value, _depth + 1).items():
                        out.setdefault(s, (*w, Label(span, f"`with.{name}` carries it here")))
            elif ref.root in LOOP_ROOTS and task is not None and task.for_each is not None and _depth < 8:
                for s, w in self.carried(task, task.for_each, _depth + 1).items():
                    out.setdefault(s, (*w, Label(span, f"`{ref.root}` iterates over it")))
        return out


def _verb_payload(task: Task) -> Iterator[Value]:
    verb = task.verb
    if isinstance(verb, Exec):
        yield verb.value
    elif isinstance(verb, Invoke):
        if verb.args is not None:
            yield verb.args
    elif verb is not None:
        for f in ("prompt", "system"):
            x = getattr(verb, f, None)
            if x is not None:
                yield x


def arg_values(args: MapValue | None, steps: tuple[str, ...]) -> Iterator[Value]:
    """The values at a dotted ``args`` path (``[]`` steps into every list element)."""
    from checker.parse.values import ListValue

    if args is None:
        return
    cur: list[Value] = [args]
    for step in steps:
        many = step.endswith("[]")
        key = step[:-2] if many else step
        nxt: list[Value] = []
        for c in cur:
            if isinstance(c, MapValue):
                x = c.get(key)
                if x is None:
                    continue
                if many:
                    if isinstance(x, ListValue):
                        nxt.extend(x.items)
                else:
                    nxt.append(x)
        cur = nxt
    yield from cur
