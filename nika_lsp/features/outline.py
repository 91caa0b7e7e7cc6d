"""Structure of a workflow for the editor: outline, folding and plan hints.

* ``textDocument/documentSymbol`` — the envelope sections, each with its entries; tasks sit
  under ``tasks`` with their verb as detail (``infer · mock/echo``, ``invoke · nika:fetch``) and
  their ``with:``/``output:`` bindings as children. Clients without hierarchical support get the
  same symbols flattened, each naming its container.
* ``textDocument/foldingRange`` — every mapping or sequence value written over several lines,
  and every multi-line scalar (block scalars included).
* ``textDocument/inlayHint`` — at the end of each task's key line: the wave the task runs in and
  the edges it waits on (``wave 2 ← fetch (value), build (after: success)``). Waves are counted
  from 1 here, for people. The setting ``nika.inlayHints`` (default on, see
  :mod:`nika_lsp.settings`) turns them off.

Expression colouring (semantic tokens) is :mod:`nika_lsp.features.tokens`.

Everything is read from the document's snapshot; nothing here parses or compiles again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from checker.core.source import SourceText
from checker.model.graph import Edge
from checker.model.workflow import Exec, Invoke, Task, Workflow
from checker.parse.values import Entry, ListValue, MapValue, ScalarValue, Value
from checker.views.plan import extent, node_text, scalar_text, task_model
from nika_lsp.convert import offset_of, position, span_to_range

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot
    from nika_lsp.host import Host

# -- document symbols ------------------------------------------------------------------------

_SECTION_KIND: dict[str, lsp.SymbolKind] = {
    "nika": lsp.SymbolKind.Constant,
    "workflow": lsp.SymbolKind.Module,
    "model": lsp.SymbolKind.Property,
    "types": lsp.SymbolKind.Namespace,
    "inputs": lsp.SymbolKind.Namespace,
    "config": lsp.SymbolKind.Namespace,
    "const": lsp.SymbolKind.Namespace,
    "secrets": lsp.SymbolKind.Namespace,
    "permits": lsp.SymbolKind.Object,
    "run": lsp.SymbolKind.Object,
    "policy": lsp.SymbolKind.Object,
    "tasks": lsp.SymbolKind.Namespace,
    "outputs": lsp.SymbolKind.Namespace,
}
_ENTRY_KIND: dict[str, lsp.SymbolKind] = {
    "types": lsp.SymbolKind.Class,
    "inputs": lsp.SymbolKind.Variable,
    "config": lsp.SymbolKind.Variable,
    "const": lsp.SymbolKind.Constant,
    "secrets": lsp.SymbolKind.Key,
    "permits": lsp.SymbolKind.Property,
    "run": lsp.SymbolKind.Property,
    "policy": lsp.SymbolKind.Property,
    "tasks": lsp.SymbolKind.Function,
    "outputs": lsp.SymbolKind.Field,
}
_DETAIL_WIDTH = 60


def _short(text: str | None) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())
    return text if len(text) <= _DETAIL_WIDTH else text[: _DETAIL_WIDTH - 1] + "…"


def _type_text(node: Value | None) -> str | None:
    """A TypeExpr in a few characters: ``string``, ``{array: …}``."""
    if isinstance(node, MapValue):
        keys = [k for k, _ in node.items() if k != "additional"]
        return "{" + keys[0] + ": …}" if keys else "{}"
    return scalar_text(node)


def verb_detail(wf: Workflow, task: Task) -> str | None:
    """What a task does, in one line: its verb and what the verb targets."""
    verb = task.verb
    if verb is None:
        return None
    parts = [verb.kind]
    target: str | None
    if isinstance(verb, Invoke):
        target = verb.tool or scalar_text(verb.workflow)
    elif isinstance(verb, Exec):
        first = verb.command[0] if verb.command else None
        target = scalar_text(first) if first is not None else ("shell" if verb.shell is not None else None)
    else:
        target = task_model(wf, task)
    if target:
        parts.append(target)
    if task.for_each is not None:
        parts.append("for_each")
    return " · ".join(parts)


def _entry_detail(section: str, value: Value, wf: Workflow | None, name: str) -> str | None:
    if section == "tasks":
        task = wf.tasks.get(name) if wf is not None else None
        return verb_detail(wf, task) if wf is not None and task is not None else None
    if section in ("inputs", "config") and isinstance(value, MapValue):
        return _type_text(value.get("type"))
    if section == "types":
        return _type_text(value)
    if section == "const" and isinstance(value, MapValue) and "type" in value and "value" in value:
        return _type_text(value.get("type"))
    if section == "secrets" and isinstance(value, MapValue):
        return scalar_text(value.get("source"))
    if section == "outputs" and isinstance(value, MapValue):
        return _short(node_text(value.get("value")))
    return _short(node_text(value))


def _section_detail(name: str, value: Value) -> str | None:
    if name == "workflow" and isinstance(value, MapValue):
        return scalar_text(value.get("id"))
    if name == "tasks" and isinstance(value, MapValue):
        n = len(value.entries)
        return f"{n} task" + ("" if n == 1 else "s")
    if isinstance(value, ScalarValue):
        return _short(scalar_text(value))
    return None


class _Symbols:
    """Builds :class:`lsp.DocumentSymbol` trees from the value tree of one snapshot."""

    def __init__(self, snap: Snapshot, encoding: str) -> None:
        self.src = snap.source
        self.encoding = encoding
        self.wf = snap.compiled.workflow

    def symbol(
        self, name: str, kind: lsp.SymbolKind, entry: Entry, detail: str | None, children: list[lsp.DocumentSymbol]
    ) -> lsp.DocumentSymbol:
        whole = extent(self.src, entry.value)
        key = entry.key.span
        span = key.cover(whole) if whole.end > whole.start else key
        return lsp.DocumentSymbol(
            name=name or '""',
            kind=kind,
            range=span_to_range(self.src, span, self.encoding),
            selection_range=span_to_range(self.src, key, self.encoding),
            detail=detail,
            children=children or None,
        )

    def document(self, root: Value | None) -> list[lsp.DocumentSymbol]:
        if not isinstance(root, MapValue):
            return []
        out = []
        for e in root.entries:
            name = e.key_text
            if name is None:
                continue
            kind = _SECTION_KIND.get(name, lsp.SymbolKind.Property)
            children = self.section_entries(name, e.value) if name in _ENTRY_KIND else []
            out.append(self.symbol(name, kind, e, _section_detail(name, e.value), children))
        return out

    def section_entries(self, section: str, value: Value) -> list[lsp.DocumentSymbol]:
        if not isinstance(value, MapValue):
            return []
        kind = _ENTRY_KIND[section]
        out = []
        for e in value.entries:
            name = e.key_text
            if name is None:
                continue
            children = self.task_children(e.value) if section == "tasks" else []
            out.append(self.symbol(name, kind, e, _entry_detail(section, e.value, self.wf, name), children))
        return out

    def task_children(self, body: Value) -> list[lsp.DocumentSymbol]:
        """A task's ``with:`` and ``output:`` bindings, the names other places refer to."""
        if not isinstance(body, MapValue):
            return []
        out = []
        for block, kind in (("with", lsp.SymbolKind.Variable), ("output", lsp.SymbolKind.Property)):
            m = body.get(block)
            if not isinstance(m, MapValue):
                continue
            for e in m.entries:
                if e.key_text is not None:
                    out.append(self.symbol(e.key_text, kind, e, block, []))
        return out


def _flatten(symbols: list[lsp.DocumentSymbol], uri: str, container: str | None = None) -> list[lsp.SymbolInformation]:
    out: list[lsp.SymbolInformation] = []
    for s in symbols:
        out.append(
            lsp.SymbolInformation(
                name=s.name,
                kind=s.kind,
                location=lsp.Location(uri=uri, range=s.selection_range),
                container_name=container,
            )
        )
        if s.children:
            out.extend(_flatten(list(s.children), uri, s.name))
    return out


def document_symbols(snap: Snapshot, encoding: str) -> list[lsp.DocumentSymbol]:
    """The outline of the document, as a tree."""
    wf = snap.compiled.workflow
    return _Symbols(snap, encoding).document(wf.value if wf is not None else None)


def symbol_information(snap: Snapshot, encoding: str) -> list[lsp.SymbolInformation]:
    """The outline flattened, for clients without hierarchical symbol support."""
    return _flatten(document_symbols(snap, encoding), snap.uri)


# -- folding ---------------------------------------------------------------------------------


def _foldable(node: Value) -> bool:
    return isinstance(node, (MapValue, ListValue)) or (isinstance(node, ScalarValue) and isinstance(node.value, str))


def folding_ranges(snap: Snapshot, limit: int | None = None) -> list[lsp.FoldingRange]:
    """Line ranges of every multi-line collection value and multi-line scalar."""
    src = snap.source
    seen: set[tuple[int, int]] = set()

    def add(start_offset: int, node: Value) -> None:
        if not _foldable(node):
            return
        span = extent(src, node)
        if span.end <= span.start:
            return
        first = src.line_index(start_offset)
        last = src.line_index(span.end - 1)
        if last > first:
            seen.add((first, last))

    wf = snap.compiled.workflow
    stack: list[Value] = [wf.value] if wf is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, MapValue):
            for e in node.entries:
                add(e.key.span.start, e.value)
                stack.append(e.value)
        elif isinstance(node, ListValue):
            for item in node.items:
                add(item.span.start, item)
                stack.append(item)
    ranges = [lsp.FoldingRange(start_line=a, end_line=b) for a, b in sorted(seen)]
    return ranges[:limit] if limit else ranges


# -- inlay hints -----------------------------------------------------------------------------


def _edge_note(e: Edge) -> str:
    return f"after: {e.label}" if e.kind == "control" else e.kind


def inlay_hints(snap: Snapshot, encoding: str, first_line: int, last_line: int) -> list[lsp.InlayHint]:
    """For each task whose key line is in ``[first_line, last_line]``: its wave and its inputs."""
    wf = snap.compiled.workflow
    graph = snap.compiled.graph
    if wf is None or graph is None or not wf.tasks:
        return []
    src = snap.source
    waves = graph.waves
    out = []
    for task in wf.tasks.values():
        line = src.line_index(task.key.span.start)
        if not first_line <= line <= last_line:
            continue
        wave = graph.wave_of(task.id)
        if wave is None:
            parts: list[lsp.InlayHintLabelPart] = [
                lsp.InlayHintLabelPart(value="no wave", tooltip="This task is on a dependency cycle, so it never runs.")
            ]
        else:
            parts = [
                lsp.InlayHintLabelPart(
                    value=f"wave {wave + 1}",
                    tooltip=f"Runs in wave {wave + 1} of {len(waves)}, once every task it waits on has settled.",
                )
            ]
        notes: list[tuple[str, str]] = []
        for e in graph.incoming(task.id):
            note = (e.producer, _edge_note(e))
            if note not in notes:
                notes.append(note)
        for i, (producer, note) in enumerate(notes):
            parts.append(lsp.InlayHintLabelPart(value=" ← " if i == 0 else ", "))
            target = wf.tasks[producer].key.span
            parts.append(
                lsp.InlayHintLabelPart(
                    value=producer, location=lsp.Location(uri=snap.uri, range=span_to_range(src, target, encoding))
                )
            )
            parts.append(lsp.InlayHintLabelPart(value=f" ({note})"))
        out.append(
            lsp.InlayHint(
                position=position(src, src.line_end(line), encoding),
                label=_merge(parts),
                padding_left=True,
            )
        )
    return out


def _merge(parts: list[lsp.InlayHintLabelPart]) -> list[lsp.InlayHintLabelPart]:
    """Join neighbouring plain parts, so the label has as few pieces as it needs."""
    out: list[lsp.InlayHintLabelPart] = []
    for p in parts:
        prev = out[-1] if out else None
        if prev is not None and p.location is None and p.tooltip is None and prev.location is None:
            out[-1] = lsp.InlayHintLabelPart(value=prev.value + p.value, tooltip=prev.tooltip)
        else:
            out.append(p)
    return out


# -- registration ----------------------------------------------------------------------------


def _hierarchical(ls: Host) -> bool:
    td = ls.client_capabilities.text_document
    ds = td.document_symbol if td else None
    return bool(ds and ds.hierarchical_document_symbol_support)


def register(server: Host) -> None:
    """Attach outline, folding and inlay hint handlers."""

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(
        ls: Host, params: lsp.DocumentSymbolParams
    ) -> list[lsp.DocumentSymbol] | list[lsp.SymbolInformation] | None:
        snap = await ls.snapshot_async(params.text_document.uri)
        if snap is None:
            return None
        if _hierarchical(ls):
            return ls.safely("documentSymbol", lambda: document_symbols(snap, ls.encoding), [])
        return ls.safely("documentSymbol", lambda: symbol_information(snap, ls.encoding), [])

    @server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
    async def folding_range(ls: Host, params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange] | None:
        snap = await ls.snapshot_async(params.text_document.uri)
        if snap is None:
            return None
        td = ls.client_capabilities.text_document
        limit = td.folding_range.range_limit if td and td.folding_range else None
        return ls.safely("foldingRange", lambda: folding_ranges(snap, limit), [])

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
    async def inlay_hint(ls: Host, params: lsp.InlayHintParams) -> list[lsp.InlayHint] | None:
        if not ls.settings.inlay_hints:
            return []
        snap = await ls.snapshot_async(params.text_document.uri)
        if snap is None:
            return None
        src: SourceText = snap.source
        first = src.line_index(offset_of(src, params.range.start, ls.encoding))
        last = src.line_index(offset_of(src, params.range.end, ls.encoding))
        return ls.safely("inlayHint", lambda: inlay_hints(snap, ls.encoding, first, last), [])
