"""The compiled workflow: immutable, typed objects built once, free of YAML details.

Every field holds a span-carrying :mod:`checker.parse.values` value or a typed declaration, so a rule,
the language server or the runtime can point back at the exact source.
Strings holding ``${{ … }}`` islands are :class:`~checker.parse.values.TemplateValue` objects carrying
their parsed template, and the same objects are listed (with their position class) in
:attr:`CompiledWorkflow.sites`; nothing downstream re-parses an expression. Defaults the spec
fixes are resolved here (the effective model of each task, ``decode``, ``on_finally`` timeouts,
retry settings, the agent turn budget).

Field docstrings name the spec section that defines them (``01`` = spec/01-envelope.md, ``02`` =
spec/02-verbs.md, ``03`` = spec/03-dag.md, ``05`` = spec/05-errors.md, ``09`` = spec/09-types.md).
Model objects compare by identity (``eq=False``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.core.diagnostics import Diagnostic
from checker.core.records import field, record
from checker.core.source import SourceText, Span
from checker.core.vocab import PREDICATES, RESERVED_BINDINGS, STATUSES, TASK_FIELDS, OnErrorAction, Predicate, Where
from checker.grammar.table import DEFAULT_FINALLY_TIMEOUT_MS, DEFAULT_MAX_TURNS, VERBS
from checker.parse.values import NO_SPAN, MapValue, ScalarValue, TemplateValue, Value

if TYPE_CHECKING:
    from checker.expr import Island, Template
    from checker.expr.refs import Ref
    from checker.model.graph import Graph

__all__ = [
    "PREDICATES",
    "RESERVED_BINDINGS",
    "STATUSES",
    "TASK_FIELDS",
    "VERBS",
    "AfterEntry",
    "Agent",
    "Binding",
    "CompiledWorkflow",
    "Config",
    "Const",
    "Declassify",
    "Duration",
    "Egress",
    "Exec",
    "ExprSite",
    "FinallyStep",
    "Infer",
    "Input",
    "Invoke",
    "Named",
    "OnError",
    "Output",
    "Permits",
    "Policy",
    "Regate",
    "Retry",
    "RunSettings",
    "Secret",
    "Task",
    "TypeDecl",
    "Verb",
    "Workflow",
]


# -- declarations (01) -----------------------------------------------------------------------


@record(eq=False)
class Named:
    """What every name-keyed envelope entry shares: its name, its key and its whole value."""

    name: str
    key: ScalarValue
    value: Value


@record(eq=False)
class TypeDecl(Named):
    """A named type under ``types:`` (09); ``value`` is its TypeExpr."""


@record(eq=False)
class Input(Named):
    """An ``inputs:`` entry (01 §inputs): supplied per run."""

    type: Value | None = None
    required: bool = False
    default: Value | None = None
    description: str | None = None


@record(eq=False)
class Config(Named):
    """A ``config:`` entry (01 §config): supplied by the deployment."""

    type: Value | None = None
    default: Value | None = None
    description: str | None = None


@record(eq=False)
class Const(Named):
    """A ``const:`` entry (01 §const): a bare literal, or ``{type, value}`` (then ``type`` is set)."""

    type: Value | None = None
    literal: Value | None = None


@record(eq=False)
class Egress:
    """One ``egress:`` grant of a secret (01 §secrets)."""

    to: str | None
    host: str | None
    host_from_self: bool
    span: Span


@record(eq=False)
class Secret(Named):
    """A ``secrets:`` entry (01 §secrets): a store reference, never a value."""

    source: str | None = None
    store_key: str | None = None
    path: str | None = None
    egress: tuple[Egress, ...] = ()


@record(eq=False)
class Permits:
    """``permits:`` (01 §permits, 10): the authority the workflow asks for. Each list keeps the
    values as written (with spans); ``exec`` is ``True``/``False``, a program list or ``None``."""

    value: MapValue
    fs_read: tuple[ScalarValue, ...] = ()
    fs_write: tuple[ScalarValue, ...] = ()
    net_http: tuple[ScalarValue, ...] = ()
    exec: bool | tuple[ScalarValue, ...] | None = None
    tools: tuple[ScalarValue, ...] = ()
    env: tuple[ScalarValue, ...] = ()

    @property
    def span(self) -> Span:
        return self.value.span


@record(eq=False)
class RunSettings:
    """``run:`` (01 §run, NEP-0010): ``entropy`` is none | ambient | seeded (then ``seed``)."""

    value: MapValue
    entropy: str | None = None
    seed: int | None = None
    clock: str | None = None


@record(eq=False)
class Policy:
    """``policy:`` (01 §policy): organisation rules, judged at check time."""

    value: MapValue
    human_gate_before: tuple[ScalarValue, ...] = ()
    exec_after: tuple[ScalarValue, ...] = ()
    allow_providers: tuple[ScalarValue, ...] | None = None
    prefer_providers: tuple[ScalarValue, ...] = ()
    max_tasks: int | None = None
    optimize: str | None = None
    endorsement: str | None = None


# -- task blocks (03, 05) --------------------------------------------------------------------


@record(eq=False)
class Binding:
    """A ``with:`` binding (03 §with) or an ``output:`` jq binding (04 §output bindings)."""

    name: str
    key: ScalarValue
    value: Value


@record(eq=False)
class AfterEntry:
    """``after: {producer: predicate}`` — one control edge (03 §after). ``predicate`` is ``None``
    when the text is not a predicate (reported as NIKA-DAG-005)."""

    producer: str
    predicate: Predicate | None
    key: ScalarValue
    value: Value


@record(eq=False)
class Retry:
    """``retry:`` (05 §retry). Defaults are the spec's."""

    max_attempts: int
    backoff_ms: int = 1000
    backoff_strategy: str = "exponential"
    backoff_max_ms: int = 60000
    jitter: bool = True
    on_codes: tuple[str, ...] = ()
    span: Span = NO_SPAN


@record(eq=False)
class OnError:
    """``on_error:`` (05 §on_error): exactly one action, optionally narrowed by ``on_codes``."""

    action: OnErrorAction
    recover: Value | None
    on_codes: tuple[str, ...]
    span: Span


@record(eq=False)
class Duration:
    """A Go-style duration string (``"1h30m"``) already converted to milliseconds; ``value`` is
    ``None`` for a default the spec supplies (no source)."""

    ms: float
    value: ScalarValue | None = None

    @property
    def span(self) -> Span | None:
        return self.value.span if self.value is not None else None


@record(eq=False)
class Declassify:
    """One ``declassify:`` entry (NEP-0004): ``source`` is the ``from:`` value naming a binding
    (e.g. ``with.url``), ``because`` says why it may be trusted."""

    source: ScalarValue
    because: str
    span: Span


# -- verbs (02) ------------------------------------------------------------------------------


@record(eq=False)
class Infer:
    """``infer:`` — one model call (02 §infer). ``model`` is the task's own field;
    ``effective_model`` the model that will answer: the task's own, else the envelope's."""

    value: MapValue
    prompt: Value | None
    system: Value | None = None
    model: Value | None = None
    temperature: Value | None = None
    max_tokens: Value | None = None
    schema: Value | None = None
    thinking: Value | None = None
    vision: Value | None = None
    effective_model: Value | None = None

    kind = "infer"

    @property
    def span(self) -> Span:
        return self.value.span


@record(eq=False)
class Exec:
    """``exec:`` — one process, argv ``command:`` XOR ``shell:`` (02 §exec). ``capture`` and
    ``decode`` hold the effective modes (defaults resolved; ``decode`` is ``None`` under
    ``capture: structured``)."""

    value: MapValue
    command: tuple[Value, ...] | None
    shell: Value | None = None
    cwd: Value | None = None
    env: MapValue | None = None
    stdin: Value | None = None
    capture: str = "stdout"
    decode: str | None = "text"

    kind = "exec"

    @property
    def span(self) -> Span:
        return self.value.span


@record(eq=False)
class Invoke:
    """``invoke:`` — a builtin ``nika:*`` tool, an ``mcp:server/tool`` or a child workflow (02 §invoke)."""

    value: MapValue
    tool: str | None
    tool_value: ScalarValue | None
    args: MapValue | None
    workflow: Value | None = None

    kind = "invoke"

    @property
    def span(self) -> Span:
        return self.value.span


@record(eq=False)
class Agent:
    """``agent:`` — a bounded tool-calling loop (02 §agent). ``turn_budget`` is ``max_turns``
    resolved (10 by default; ``None`` while it is a run-time template); ``effective_model`` as for
    :class:`Infer`."""

    value: MapValue
    prompt: Value | None
    system: Value | None = None
    model: Value | None = None
    tools: tuple[ScalarValue, ...] = ()
    skills: tuple[ScalarValue, ...] = ()
    max_turns: Value | None = None
    max_tokens_total: Value | None = None
    temperature: Value | None = None
    schema: Value | None = None
    turn_budget: int | None = DEFAULT_MAX_TURNS
    effective_model: Value | None = None

    kind = "agent"

    @property
    def span(self) -> Span:
        return self.value.span


Verb = Infer | Exec | Invoke | Agent


@record(eq=False)
class FinallyStep:
    """One ``on_finally:`` mini-task (03 §on_finally); ``timeout`` defaults to 30s."""

    value: MapValue
    verb: Verb | None
    when: Value | None = None
    timeout: Duration = Duration(DEFAULT_FINALLY_TIMEOUT_MS)


@record(eq=False)
class Task:
    """One task: a map entry under ``tasks:``; the key is its identity (03)."""

    id: str
    key: ScalarValue
    value: MapValue
    verb: Verb | None
    with_: tuple[Binding, ...] = ()
    after: tuple[AfterEntry, ...] = ()
    when: Value | None = None
    for_each: Value | None = None
    max_parallel: int | None = None
    fail_fast: bool = True
    retry: Retry | None = None
    on_error: OnError | None = None
    timeout: Duration | None = None
    on_finally: tuple[FinallyStep, ...] = ()
    output: tuple[Binding, ...] = ()
    returns: Value | None = None
    inert: Value | None = None
    declassify: tuple[Declassify, ...] = ()

    @property
    def verb_kind(self) -> str | None:
        return self.verb.kind if self.verb is not None else None

    @property
    def span(self) -> Span:
        """From the task's key to the end of its body."""
        return self.key.span.cover(self.value.span)

    def binding(self, name: str) -> Binding | None:
        for b in self.with_:
            if b.name == name:
                return b
        return None

    @property
    def field_names(self) -> list[str]:
        return self.value.keys()


@record(eq=False)
class Output:
    """A workflow output (01 §outputs): a ``${{ }}`` string, or ``{value, type?, description?}``."""

    name: str
    key: ScalarValue
    value: Value | None
    type: Value | None = None


@record(eq=False)
class Workflow:
    """The envelope and its tasks (01)."""

    id: str | None
    value: MapValue
    description: str | None = None
    model: Value | None = None
    types: tuple[TypeDecl, ...] = ()
    inputs: tuple[Input, ...] = ()
    config: tuple[Config, ...] = ()
    const: tuple[Const, ...] = ()
    secrets: tuple[Secret, ...] = ()
    permits: Permits | None = None
    run: RunSettings | None = None
    policy: Policy | None = None
    tasks: dict[str, Task] = field(default_factory=dict)
    outputs: tuple[Output, ...] = ()

    def section_names(self, section: str) -> set[str]:
        return {n.name for n in getattr(self, section)}

    def type_expressions(self) -> list[tuple[str | None, Value]]:
        """Every position that holds a TypeExpr (09), with the task it belongs to (or None):
        named types, input/config `type:`, typed const `type:`, output `type:`, task `returns:`."""
        out: list[tuple[str | None, Value]] = [(None, n.value) for n in self.types]
        for section in (self.inputs, self.config):
            out.extend((None, n.type) for n in section if n.type is not None)
        out.extend((None, n.type) for n in self.const if n.type is not None)
        out.extend((None, o.type) for o in self.outputs if o.type is not None)
        out.extend((t.id, t.returns) for t in self.tasks.values() if t.returns is not None)
        return out


# -- expression sites ------------------------------------------------------------------------


@record(eq=False)
class ExprSite:
    """A template string of the model, with the position class that decides which roots are
    legal there (:class:`~checker.core.vocab.Where`). ``value`` is the very object the model field
    holds, so a field and its parsed template are one thing."""

    task: str | None
    where: Where
    value: TemplateValue
    in_for_each: bool = False
    binding: str | None = None  # the ``with:`` binding whose value holds it (``with:`` sites only)
    template: Template = field(init=False, repr=False)  # ``value.template``, read by every rule
    # :meth:`references`, computed on first use (several rules read every site's references)
    _refs: tuple[tuple[Island, Ref, Span], ...] | None = field(init=False, repr=False, default=None)

    def __post_init__(self) -> None:
        t = self.value.template
        assert t is not None
        object.__setattr__(self, "template", t)

    @property
    def span(self) -> Span:
        return self.value.span

    def span_of(self, start: int, end: int) -> Span:
        """Source span of ``[start, end)`` offsets inside the string value."""
        return self.value.sub_span(start, end)

    def references(self) -> tuple[tuple[Island, Ref, Span], ...]:
        """Every reference of every parsed island, with its source span (computed once)."""
        refs = self._refs
        if refs is None:
            from checker.expr import references

            sub_span = self.value.sub_span
            refs = tuple(
                (island, ref, sub_span(island.expr_start + ref.start, island.expr_start + ref.end))
                for island in self.template.islands
                if island.expr is not None
                for ref in references(island.expr)
            )
            object.__setattr__(self, "_refs", refs)
        return refs


@record
class Regate:
    """One place ``nika run`` judges again a value only the run knows, found by the check's own
    judge call (:func:`checker.contracts.argv.judge_argv` deferring a word,
    :func:`checker.contracts.effects.judge_env_value` on a value it cannot resolve): the file stays
    valid (spec 10 §permit parameterization) and the certificate lists it (``effects.dynamic``)."""

    task: str
    plane: str  # exec | env
    judge: str  # argv | env
    arg: str  # the field: ``command[1]``, ``env.CC``
    source: str  # the untrusted reference the value comes from: ``tasks.review.output``


@record(eq=False)
class CompiledWorkflow:
    """What ``compile`` returns: the model (when the text was a mapping), its expression sites,
    its graph (built once, ``None`` without a model) and every finding.

    ``root`` is the document's whole value tree (the model's fields are parts of it); editor
    features that work on the document's raw structure (outline, folding) read it.
    """

    source: SourceText
    root: Value | None
    workflow: Workflow | None
    sites: tuple[ExprSite, ...]
    diagnostics: tuple[Diagnostic, ...]
    graph: Graph | None = None
    regates: tuple[Regate, ...] = ()  # the deferred re-gates the rules found, in task order

    @property
    def clean(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)

