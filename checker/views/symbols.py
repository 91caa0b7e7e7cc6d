"""The symbol index of one compiled workflow: where every name is declared and where it is used.

Navigation (go to definition, find references, rename) needs one answer per name: its home
and every place that mentions it, each as an exact :class:`~checker.core.source.Span` that covers
the name and nothing else. This module builds that answer from a :class:`CompiledWorkflow`
and knows nothing of the language server protocol.

Indexed names (the *kind* of a symbol in brackets):

* task ids [``task``]: the key under ``tasks:``; used by ``after:`` keys and by every
  ``tasks.<id>`` in ``${{ }}`` (``with:``, ``on_error.recover``, ``outputs:``, …);
* ``with:`` bindings [``with``, scoped to their task]: the key; used by ``with.<name>`` in that
  task's own expressions;
* ``output:`` jq bindings [``output``, scoped to their task]: the key; used by
  ``tasks.<id>.<name>``;
* ``inputs`` / ``config`` / ``const`` / ``secrets`` entries [the section name]: the key; used by
  ``inputs.<name>`` and so on;
* named types [``type``]: the key under ``types:``; used by type names in ``returns:``, in the
  ``type:`` of inputs, config, typed consts and outputs, and inside other types.

The ``from:`` of a ``declassify:`` entry (a dotted path such as ``inputs.p``) counts as a use
too. The index also lists the file paths a workflow names (agent ``skills:`` and
``invoke: {workflow: …}``) so an editor can open them.

A use is recorded only when its position maps exactly onto the source and the text there is
the name itself; otherwise (for example inside a double-quoted string with escapes) it is
counted in :attr:`Symbol.unmapped`, so a rename can refuse instead of leaving a stale name.
A document that did not compile to a workflow gives an empty index.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final, Literal

from checker.core.records import field, record
from checker.core.source import Span
from checker.core.vocab import VALUE_ROOTS
from checker.expr import Expr, Ident, Index, Member, walk
from checker.expr import Literal as ExprLiteral
from checker.model.workflow import RESERVED_BINDINGS, Agent, CompiledWorkflow, ExprSite, Invoke, Verb, Workflow
from checker.parse.values import ListValue, MapValue, ScalarValue, Value, is_template

__all__ = [
    "VALUE_SECTIONS",
    "FileLink",
    "Symbol",
    "SymbolIndex",
    "SymbolKind",
    "build_index",
    "describe_kind",
    "rename_blocker",
    "rename_problem",
]

SymbolKind = Literal["task", "with", "output", "inputs", "config", "const", "secrets", "type"]

#: envelope sections whose entries are read as ``<section>.<name>`` in expressions
VALUE_SECTIONS: Final = VALUE_ROOTS

_KIND_NOUN: Final[dict[str, tuple[str, str]]] = {
    "task": ("a", "task"),
    "with": ("a", "`with:` binding"),
    "output": ("an", "`output:` binding"),
    "inputs": ("an", "input"),
    "config": ("a", "config value"),
    "const": ("a", "constant"),
    "secrets": ("a", "secret"),
    "type": ("a", "type"),
}

_TASK_ID: Final = re.compile(r"[a-z][a-z0-9_]*\Z")
_VALUE_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TYPE_NAME: Final = re.compile(r"[A-Z][A-Za-z0-9]*\Z")
_DOTTED_STEP: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: words the expression lexer never reads as an identifier
_EXPR_KEYWORDS: Final = frozenset({"true", "false", "null", "in"})


def describe_kind(kind: str) -> str:
    """A short noun for a symbol kind, for messages (``"task"``, ``"`with:` binding"``, …)."""
    return _KIND_NOUN.get(kind, ("a", kind))[1]


def _a(kind: str) -> str:
    article, noun = _KIND_NOUN.get(kind, ("a", kind))
    return f"{article} {noun}"


@record
class Symbol:
    """One declared name with its home and every use.

    ``scope`` is the task id for ``with`` and ``output`` bindings and ``None`` otherwise.
    ``definition`` covers just the name in the declaring key (the whole key node when that key
    cannot be mapped exactly, which also counts in ``unmapped``). ``uses`` are in source order.
    ``unmapped`` counts occurrences whose exact position could not be computed.
    """

    kind: SymbolKind
    name: str
    scope: str | None
    definition: Span
    uses: tuple[Span, ...] = ()
    unmapped: int = 0

    def all_spans(self) -> tuple[Span, ...]:
        """The definition followed by every use."""
        return (self.definition, *self.uses)

    @property
    def key(self) -> tuple[str, str | None, str]:
        return (self.kind, self.scope, self.name)


@record
class FileLink:
    """A file the workflow names: an agent skill or a child workflow, as written (unresolved)."""

    kind: Literal["skill", "workflow"]
    path: str
    span: Span


@record
class SymbolIndex:
    """Every symbol of one document, and the file paths it names."""

    symbols: tuple[Symbol, ...] = ()
    links: tuple[FileLink, ...] = ()
    _by_key: dict[tuple[str, str | None, str], Symbol] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for sym in self.symbols:
            self._by_key.setdefault(sym.key, sym)

    def symbol_at(self, offset: int) -> Symbol | None:
        """The symbol whose definition or use covers ``offset``.

        A span covers the offsets inside it; the offset just past its end counts too (a cursor
        right after a name), but only when no span holds the offset strictly inside.
        """
        touching: Symbol | None = None
        for sym in self.symbols:
            for span in sym.all_spans():
                if span.start <= offset < span.end:
                    return sym
                if touching is None and offset == span.end:
                    touching = sym
        return touching

    def lookup(self, kind: str, name: str, scope: str | None = None) -> Symbol | None:
        """The symbol of ``kind`` called ``name`` (in ``scope`` for task-scoped kinds)."""
        return self._by_key.get((kind, scope, name))

    def names(self, kind: str, scope: str | None = None) -> set[str]:
        """Every declared name of ``kind`` (in ``scope`` for task-scoped kinds)."""
        return {s.name for s in self.symbols if s.kind == kind and s.scope == scope}

    def link_at(self, offset: int) -> FileLink | None:
        """The file path written at ``offset``, if any."""
        for link in self.links:
            if link.span.contains(offset):
                return link
        return None


def rename_blocker(symbol: Symbol) -> str | None:
    """Why ``symbol`` cannot be renamed whatever the new name, or ``None``."""
    if symbol.unmapped:
        return (
            f"cannot rename {describe_kind(symbol.kind)} `{symbol.name}`: {symbol.unmapped} of its occurrences sit "
            "in text whose characters cannot be mapped back to the file (for example a double-quoted string with "
            "escapes); rewrite that string without escapes first"
        )
    return None


def rename_problem(index: SymbolIndex, symbol: Symbol, new_name: str) -> str | None:
    """Why ``symbol`` cannot be renamed to ``new_name``, or ``None`` when the rename is safe."""
    blocker = rename_blocker(symbol)
    if blocker is not None:
        return blocker
    noun = describe_kind(symbol.kind)
    if symbol.kind == "task":
        if not _TASK_ID.match(new_name):
            return f"`{new_name}` is not a valid task id: use lowercase letters, digits and `_`, starting with a letter"
    elif symbol.kind == "type":
        if not _TYPE_NAME.match(new_name):
            return f"`{new_name}` is not a valid type name: use PascalCase (an uppercase letter, then letters, digits)"
    elif not _VALUE_NAME.match(new_name):
        return f"`{new_name}` is not a valid {noun} name: use letters, digits and `_`, not starting with a digit"
    if new_name in _EXPR_KEYWORDS:
        return f"`{new_name}` is a keyword of the expression language and cannot name {_a(symbol.kind)}"
    if symbol.kind in ("with", "output") and new_name in RESERVED_BINDINGS:
        return f"`{new_name}` is reserved (every task already has `{new_name}`) and cannot name {_a(symbol.kind)}"
    if new_name != symbol.name and index.lookup(symbol.kind, new_name, symbol.scope) is not None:
        where = f" in task `{symbol.scope}`" if symbol.scope else ""
        return f"{_a(symbol.kind)} named `{new_name}` already exists{where}"
    return None


def build_index(compiled: CompiledWorkflow) -> SymbolIndex:
    """Index every definition and use of ``compiled``; an empty index when there is no workflow."""
    wf = compiled.workflow
    if wf is None:
        return SymbolIndex()
    builder = _Builder(compiled.source.text)
    builder.definitions(wf)
    builder.after_uses(wf)
    for site in compiled.sites:
        builder.site_uses(site)
    builder.type_uses(wf)
    builder.declassify_uses(wf)
    builder.file_links(wf)
    return builder.finish()


# -- building ------------------------------------------------------------------------------


@record(frozen=False)
class _Draft:
    kind: SymbolKind
    name: str
    scope: str | None
    definition: Span
    uses: list[Span] = field(default_factory=list)
    unmapped: int = 0


_Key = tuple[str, str | None, str]


class _Builder:
    def __init__(self, text: str) -> None:
        self.text = text
        self.drafts: dict[_Key, _Draft] = {}
        self.links: list[FileLink] = []

    # -- exact positions -----------------------------------------------------------------
    def exact(self, scalar: ScalarValue, start: int, end: int, name: str) -> Span | None:
        """Source span of ``raw[start:end]`` when it maps exactly and reads ``name`` there."""
        offsets = scalar.offsets
        if offsets is None or start < 0 or end > len(offsets) or end <= start:
            return None
        span = scalar.sub_span(start, end)
        if self.text[span.start : span.end] != name:
            return None
        return span

    def key_span(self, key: ScalarValue, name: str) -> Span | None:
        return self.exact(key, 0, len(key.raw), name) if key.raw == name else None

    # -- definitions -----------------------------------------------------------------------
    def define(self, kind: SymbolKind, name: str, scope: str | None, key: ScalarValue) -> None:
        k = (kind, scope, name)
        if k in self.drafts:
            return  # a duplicate key: the first declaration is the one that counts
        span = self.key_span(key, name)
        draft = _Draft(kind, name, scope, span or key.span)
        if span is None:
            draft.unmapped += 1
        self.drafts[k] = draft

    def definitions(self, wf: Workflow) -> None:
        for named in wf.types:
            self.define("type", named.name, None, named.key)
        for section in VALUE_SECTIONS:
            for named in getattr(wf, section):
                self.define(section, named.name, None, named.key)  # type: ignore[arg-type]
        tasks = wf.value.get("tasks")
        if isinstance(tasks, MapValue):
            # from the map itself, so a task whose body is broken still has a home
            for tid, entry in tasks.items():
                self.define("task", tid, None, entry.key)
        for task in wf.tasks.values():
            for binding in task.with_:
                self.define("with", binding.name, task.id, binding.key)
            for binding in task.output:
                self.define("output", binding.name, task.id, binding.key)

    # -- uses ------------------------------------------------------------------------------
    def use(self, kind: str, name: str, scope: str | None, span: Span | None) -> None:
        draft = self.drafts.get((kind, scope, name))
        if draft is None:
            return  # not declared: nothing to navigate to (the checker reports it)
        if span is None:
            draft.unmapped += 1
        else:
            draft.uses.append(span)

    def after_uses(self, wf: Workflow) -> None:
        for task in wf.tasks.values():
            for entry in task.after:
                self.use("task", entry.producer, None, self.key_span(entry.key, entry.producer))

    def path_use(self, task: str | None, root: str, path: tuple[str | int, ...], span: Span | None) -> None:
        """Record the use named by the last step of ``root.path`` (the step ``span`` covers)."""
        if root == "tasks":
            if len(path) == 1 and isinstance(path[0], str):
                self.use("task", path[0], None, span)
            elif len(path) == 2 and isinstance(path[0], str) and isinstance(path[1], str):
                self.use("output", path[1], path[0], span)
        elif root == "with":
            if len(path) == 1 and isinstance(path[0], str) and task is not None:
                self.use("with", path[0], task, span)
        elif root in VALUE_SECTIONS and len(path) == 1 and isinstance(path[0], str):
            self.use(root, path[0], None, span)

    def site_uses(self, site: ExprSite) -> None:
        for island in site.template.islands:
            if island.expr is None:
                continue
            for root, path, start, end in _steps(island.expr):
                name = path[-1]
                assert isinstance(name, str)
                a, b = island.expr_start + start, island.expr_start + end
                span = self.exact(site.value, a, b, name)
                self.path_use(site.task, root, path, span)

    def type_uses(self, wf: Workflow) -> None:
        if not any(d.kind == "type" for d in self.drafts.values()):
            return
        for _task, root in wf.type_expressions():
            for scalar in _type_names(root):
                name = scalar.value
                self.use("type", name, None, self.key_span(scalar, name))

    def declassify_uses(self, wf: Workflow) -> None:
        for task in wf.tasks.values():
            for item in task.declassify:
                src = item.source
                if not isinstance(src.value, str):
                    continue
                steps = _dotted(src.value)
                if steps is None:
                    continue
                root = steps[0][0]
                path = tuple(s for s, _ in steps[1:])
                for i, (name, start) in enumerate(steps[1:], start=1):
                    span = self.exact(src, start, start + len(name), name)
                    self.path_use(task.id, root, path[:i], span)

    def file_links(self, wf: Workflow) -> None:
        for task in wf.tasks.values():
            verbs: list[Verb | None] = [task.verb, *(step.verb for step in task.on_finally)]
            for verb in verbs:
                if isinstance(verb, Agent):
                    for skill in verb.skills:
                        self.link("skill", skill)
                elif isinstance(verb, Invoke) and isinstance(verb.workflow, ScalarValue):
                    self.link("workflow", verb.workflow)

    def link(self, kind: Literal["skill", "workflow"], node: ScalarValue) -> None:
        path = node.value
        if not isinstance(path, str) or not path.strip() or is_template(node) or path.startswith("registry:"):
            return
        self.links.append(FileLink(kind, path, node.span))

    def finish(self) -> SymbolIndex:
        symbols = tuple(
            Symbol(d.kind, d.name, d.scope, d.definition, tuple(sorted(set(d.uses), key=_span_order)), d.unmapped)
            for d in self.drafts.values()
        )
        return SymbolIndex(symbols, tuple(self.links))


def _span_order(span: Span) -> tuple[int, int]:
    return (span.start, span.end)


def _prefix(node: Expr) -> tuple[str, list[str | int]] | None:
    """``(root, static steps)`` of a reference chain, or ``None`` when it is not one or a
    step is computed (``x[with.i]``)."""
    steps: list[str | int] = []
    current: Expr = node
    while isinstance(current, Member | Index):
        if isinstance(current, Member):
            steps.append(current.name)
        else:
            value = current.index.value if isinstance(current.index, ExprLiteral) else None
            if not isinstance(value, str | int) or isinstance(value, bool):
                return None
            steps.append(value)
        current = current.obj
    if not isinstance(current, Ident):
        return None
    steps.reverse()
    return current.name, steps


def _steps(expr: Expr) -> Iterator[tuple[str, tuple[str | int, ...], int, int]]:
    """Every named step of every reference chain in ``expr``: the chain's root, its static
    path up to and including the step, and the step name's ``[start, end)`` in expression
    offsets.

    A member name is the last token of its node (:class:`checker.expr.nodes.Member`); a string
    index ``['name']`` is the literal without its quotes.
    """
    for node in walk(expr):
        if isinstance(node, Member):
            name = node.name
            start, end = node.end - len(name), node.end
        elif isinstance(node, Index) and isinstance(node.index, ExprLiteral) and isinstance(node.index.value, str):
            name = node.index.value
            start, end = node.index.start + 1, node.index.end - 1
        else:
            continue
        prefix = _prefix(node.obj)
        if prefix is None:
            continue
        root, steps = prefix
        yield root, (*steps, name), start, end


def _type_names(node: Value) -> Iterator[ScalarValue]:
    """Every scalar of a type expression that sits in a type position (not enum values,
    bounds or field names)."""
    stack: list[Value] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ScalarValue):
            if isinstance(current.value, str):
                yield current
        elif isinstance(current, MapValue):
            for ctor, entry in current.items():
                value = entry.value
                if ctor in ("array", "map", "optional"):
                    stack.append(value)
                elif ctor == "object" and isinstance(value, MapValue):
                    stack.extend(e.value for e in value.entries)
                elif ctor == "union" and isinstance(value, ListValue):
                    stack.extend(value.items)


def _dotted(text: str) -> list[tuple[str, int]] | None:
    """Split ``a.b.c`` into ``[(step, offset), …]``; ``None`` unless it is exactly that shape."""
    out: list[tuple[str, int]] = []
    pos = 0
    while True:
        m = _DOTTED_STEP.match(text, pos)
        if m is None:
            return None
        out.append((m.group(), m.start()))
        pos = m.end()
        if pos == len(text):
            return out
        if text[pos] != ".":
            return None
        pos += 1
