"""The compiled workflow: immutable, typed objects built once from the node tree.

Every object keeps the node it came from, so a rule, the language server or the runtime can
point back at the exact source. Field docstrings name the spec section that defines them
(``01`` = spec/01-envelope.md, ``02`` = spec/02-verbs.md, ``03`` = spec/03-dag.md, …).
String values that hold ``${{ … }}`` islands are parsed once, at compile time, into
:class:`ExprSite` entries; nothing downstream re-parses an expression. Model objects compare by
identity (``eq=False``): nothing needs structural equality, and it keeps class creation cheap
on the ``nika check`` start-up path.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from checker.diagnostics import Diagnostic
from checker.nodes import Mapping, Node, Scalar
from checker.source import SourceText, Span

if TYPE_CHECKING:
    from checker.expr import Island, Template
    from checker.expr.refs import Ref

VERBS = ("infer", "exec", "invoke", "agent")
RESERVED_BINDINGS = frozenset({"output", "status", "error", "started_at", "ended_at", "duration_ms"})
TASK_FIELDS = frozenset({"output", "status", "error", "started_at", "ended_at", "duration_ms"})
PREDICATES = ("success", "failure", "skipped", "terminal")
STATUSES = ("success", "failure", "skipped", "cancelled")


@dataclass(frozen=True, slots=True, eq=False)
class Named:
    """One entry of a name-keyed envelope section (inputs, config, const, secrets, types)."""

    name: str
    key: Scalar
    node: Node


@dataclass(frozen=True, slots=True, eq=False)
class Binding:
    """A ``with:`` binding (03 §with) or an ``output:`` jq binding (04 §output bindings)."""

    name: str
    key: Scalar
    value: Node


@dataclass(frozen=True, slots=True, eq=False)
class AfterEntry:
    """``after: {producer: predicate}`` — one control edge (03 §after)."""

    producer: str
    predicate: str
    key: Scalar
    value: Node


@dataclass(frozen=True, slots=True, eq=False)
class Retry:
    """``retry:`` (05 §retry). Defaults are the spec's."""

    max_attempts: int
    backoff_ms: int = 1000
    backoff_strategy: str = "exponential"
    backoff_max_ms: int = 60000
    jitter: bool = True
    on_codes: tuple[str, ...] = ()
    node: Node | None = None


@dataclass(frozen=True, slots=True, eq=False)
class OnError:
    """``on_error:`` (05 §on_error): exactly one action, optionally narrowed by ``on_codes``."""

    action: str  # "recover" | "skip" | "fail_workflow"
    recover: Node | None
    on_codes: tuple[str, ...]
    node: Node


@dataclass(frozen=True, slots=True, eq=False)
class Duration:
    """A Go-style duration string (``"1h30m"``) already converted to milliseconds."""

    ms: float
    node: Node


@dataclass(frozen=True, slots=True, eq=False)
class Infer:
    """``infer:`` — one model call (02 §infer)."""

    node: Mapping
    prompt: Node | None
    system: Node | None = None
    model: Node | None = None
    temperature: Node | None = None
    max_tokens: Node | None = None
    schema: Node | None = None
    thinking: Node | None = None
    vision: Node | None = None

    kind = "infer"


@dataclass(frozen=True, slots=True, eq=False)
class Exec:
    """``exec:`` — one process, argv ``command:`` XOR ``shell:`` (02 §exec)."""

    node: Mapping
    command: tuple[Node, ...] | None
    shell: Node | None = None
    cwd: Node | None = None
    env: Node | None = None
    stdin: Node | None = None
    capture: str = "stdout"
    decode: str | None = None

    kind = "exec"


@dataclass(frozen=True, slots=True, eq=False)
class Invoke:
    """``invoke:`` — a builtin ``nika:*`` tool, an ``mcp:server/tool`` or a child workflow (02 §invoke)."""

    node: Mapping
    tool: str | None
    tool_node: Node | None
    args: Node | None
    workflow: Node | None = None

    kind = "invoke"


@dataclass(frozen=True, slots=True, eq=False)
class Agent:
    """``agent:`` — a bounded tool-calling loop (02 §agent)."""

    node: Mapping
    prompt: Node | None
    system: Node | None = None
    model: Node | None = None
    tools: tuple[Scalar, ...] = ()
    skills: tuple[Scalar, ...] = ()
    max_turns: Node | None = None
    max_tokens_total: Node | None = None
    temperature: Node | None = None
    schema: Node | None = None

    kind = "agent"


Verb = Infer | Exec | Invoke | Agent


@dataclass(frozen=True, slots=True, eq=False)
class FinallyStep:
    """One ``on_finally:`` mini-task (03 §on_finally)."""

    node: Mapping
    verb: Verb | None
    when: Node | None = None
    timeout: Duration | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Task:
    """One task: a map entry under ``tasks:``; the key is its identity (03)."""

    id: str
    key: Scalar
    node: Mapping
    verb: Verb | None
    with_: tuple[Binding, ...] = ()
    after: tuple[AfterEntry, ...] = ()
    when: Node | None = None
    for_each: Node | None = None
    max_parallel: int | None = None
    fail_fast: bool = True
    retry: Retry | None = None
    on_error: OnError | None = None
    timeout: Duration | None = None
    on_finally: tuple[FinallyStep, ...] = ()
    output: tuple[Binding, ...] = ()
    returns: Node | None = None
    inert: Node | None = None
    declassify: Node | None = None

    @property
    def verb_kind(self) -> str | None:
        return self.verb.kind if self.verb is not None else None

    def binding(self, name: str) -> Binding | None:
        for b in self.with_:
            if b.name == name:
                return b
        return None


@dataclass(frozen=True, slots=True, eq=False)
class Output:
    """A workflow output (01 §outputs): a ``${{ }}`` string, or ``{value, type?, description?}``."""

    name: str
    key: Scalar
    value: Node | None
    type: Node | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Workflow:
    """The envelope and its tasks (01)."""

    id: str | None
    root: Mapping
    description: str | None = None
    model: Node | None = None
    types: tuple[Named, ...] = ()
    inputs: tuple[Named, ...] = ()
    config: tuple[Named, ...] = ()
    const: tuple[Named, ...] = ()
    secrets: tuple[Named, ...] = ()
    permits: Node | None = None
    run: Node | None = None
    policy: Node | None = None
    tasks: dict[str, Task] = field(default_factory=dict)
    outputs: tuple[Output, ...] = ()

    def section_names(self, section: str) -> set[str]:
        return {n.name for n in getattr(self, section)}

    def type_expressions(self) -> list[tuple[str | None, Node]]:
        """Every position that holds a TypeExpr (09), with the task it belongs to (or None):
        named types, input/config `type:`, typed const `type:`, output `type:`, task `returns:`."""
        out: list[tuple[str | None, Node]] = [(None, n.node) for n in self.types]
        for section in (self.inputs, self.config):
            for n in section:
                t = n.node.get("type") if isinstance(n.node, Mapping) else None
                if t is not None:
                    out.append((None, t))
        for n in self.const:
            if isinstance(n.node, Mapping) and "type" in n.node and "value" in n.node:
                out.append((None, n.node.get("type")))  # type: ignore[arg-type]
        out.extend((None, o.type) for o in self.outputs if o.type is not None)
        out.extend((t.id, t.returns) for t in self.tasks.values() if t.returns is not None)
        return out


@dataclass(frozen=True, slots=True, eq=False)
class ExprSite:
    """A string value holding ``${{ … }}`` islands, parsed once.

    ``where`` is the position class that decides which roots are legal: ``with``, ``when``,
    ``for_each``, ``body`` (a verb field), ``recover``, ``finally``, ``outputs``, ``output``
    (a jq binding, where islands are refused) or ``envelope``.
    """

    task: str | None
    where: str
    node: Scalar
    template: Template
    in_for_each: bool = False

    def span_of(self, start: int, end: int) -> Span:
        """Source span of ``[start, end)`` offsets inside the scalar's value."""
        return self.node.sub_span(start, end)

    def references(self) -> Iterator[tuple[Island, Ref, Span]]:
        """Every reference of every parsed island, with its source span."""
        from checker.expr import references

        for island in self.template.islands:
            if island.expr is None:
                continue
            for ref in references(island.expr):
                yield island, ref, self.span_of(island.expr_start + ref.start, island.expr_start + ref.end)


@dataclass(frozen=True, slots=True, eq=False)
class CompiledWorkflow:
    """What ``compile`` returns: the model (when the text was a mapping) and every finding."""

    source: SourceText
    root: Node | None
    workflow: Workflow | None
    sites: tuple[ExprSite, ...]
    diagnostics: tuple[Diagnostic, ...]

    @property
    def clean(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)
