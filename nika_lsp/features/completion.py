"""``textDocument/completion``: what may be written at the cursor.

The cursor context comes from the current text (:func:`nika_lsp.features.cursor.analyze`,
which needs no parse), the facts from the newest snapshot that produced a workflow. A request
never compiles the document when a snapshot is already cached, so it stays cheap on large
workflows; only the very first request of a document (before its first check) pays for one.

Offered, by context:

* keys of the enclosing block (envelope, ``workflow``, task, each verb body, ``retry``,
  ``on_error``, ``on_finally`` steps, ``permits``, ``run``, ``policy``, declarations), minus
  the keys already written and minus the alternatives of a key already chosen (one verb,
  ``command`` xor ``shell``, one ``on_error`` action);
* builtin ids after ``tool:`` (with an ``args:`` skeleton), argument names inside ``args:``
  and the enumerated values of an argument;
* task ids as ``after:`` keys (only those that cannot close a cycle) and the four predicates
  as ``after:`` values;
* ``<provider>/`` (and a provider's known model names) after ``model:``;
* NIKA codes in ``on_codes`` lists and builtin ids in an agent's ``tools`` list;
* inside ``${{``: the roots in scope at that position and their members (declared names,
  cycle-free task ids, task fields and declared ``output:`` bindings, this task's bindings).
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from checker.contracts import tables as C
from checker.core.codes import registry
from checker.core.vocab import (
    LOOP_ROOTS,
    PREDICATE_MEANING,
    PREDICATES,
    ROOTS,
    TASK_RECORD,
    VALUE_ROOTS,
    in_scope,
)
from checker.engine.pipeline import compile_text
from checker.grammar import table as G
from checker.model.graph import edge_kind
from checker.model.workflow import Task
from nika_lsp.convert import offset_of, position
from nika_lsp.features.cursor import (
    EXCLUSIVE,
    Context,
    Frame,
    analyze,
    args_owner,
    child_keys,
    fields_for,
    scan_flow,
    shape,
    task_frame,
    tool_near,
    where_of,
)
from nika_lsp.features.model_view import ModelView, view_of

if TYPE_CHECKING:
    from nika_lsp.documents import DocumentText, Snapshot
    from nika_lsp.host import Host

TRIGGER_CHARACTERS = [".", "/", ":", "[", " "]

ROOT_DOCS: dict[str, str] = {
    "inputs": G.ENVELOPE["inputs"].doc,
    "config": G.ENVELOPE["config"].doc,
    "const": G.ENVELOPE["const"].doc,
    "secrets": G.ENVELOPE["secrets"].doc,
    "with": "This task's `with:` bindings.",
    "tasks": "Another task's record: `tasks.<id>.output`, `.status`, `.error`, … (creates an edge).",
    "item": "The current element of the `for_each` array.",
    "index": "The 0-based position of `item` in the `for_each` array.",
}

TASK_FIELD_DOCS: dict[str, str] = {f.name: f.doc for f in TASK_RECORD}  # the one task-record table


# ---------------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------------


def register(server: Host) -> None:
    """Attach the completion handler (and its trigger characters) to ``server``."""

    threading.Thread(target=_warm, name="nika-completion-warmup", daemon=True).start()

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS))
    async def on_completion(ls: Host, params: lsp.CompletionParams) -> lsp.CompletionList | None:
        doc = ls.docs.text(params.text_document.uri)
        if doc is None:
            return None
        snippets = snippet_support(ls)
        encoding = ls.encoding

        def run() -> lsp.CompletionList | None:
            return completion_at(ls, doc, params.position, encoding, snippets)

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(ls.thread_pool, lambda: ls.safely("completion", run, None))


def snippet_support(ls: Host) -> bool:
    td = ls.client_capabilities.text_document
    item = td.completion.completion_item if td and td.completion else None
    return bool(item and item.snippet_support)


def model_for(ls: Host, uri: str, line_no: int) -> ModelView | None:
    """The facts to complete with: the newest snapshot that produced a workflow.

    Nothing is compiled here when the document has been analysed: the very first request
    before the first check computes the document's snapshot (the one every feature then
    shares), and a document that never produced a model is completed against a repair of its
    newest snapshot, kept on that snapshot.
    """
    good = ls.docs.last_good(uri)
    if good is not None:
        return view_of(good)
    snap = ls.docs.peek(uri) or ls.snapshot(uri)
    if snap is None:
        return None
    good = ls.docs.last_good(uri)
    if good is not None:
        return view_of(good)
    return snap.derived(("repaired", line_no), lambda: repaired(snap, line_no))


def repaired(snap: Snapshot, line_no: int) -> ModelView | None:
    """A model of a document that never compiled: its text without the line under edit
    (or, failing that, only the lines above it)."""
    lines = snap.lines
    for candidate in ([*lines[:line_no], "", *lines[line_no + 1 :]], lines[:line_no]):
        compiled = compile_text("\n".join(candidate), snap.uri)
        if compiled.workflow is not None:
            return ModelView(compiled)
    return None


def completion_at(
    ls: Host, doc: DocumentText, pos: lsp.Position, encoding: str, snippets: bool
) -> lsp.CompletionList | None:
    """Answer one completion request on the client's current text (runs in a worker thread)."""
    src = doc.source
    offset = offset_of(src, pos, encoding)
    line_no = src.line_index(offset)
    line_start = src.line_starts[line_no]
    model = model_for(ls, doc.uri, line_no)

    def make_range(start: int, end: int) -> lsp.Range:
        return lsp.Range(
            start=position(src, line_start + start, encoding), end=position(src, line_start + end, encoding)
        )

    items = complete(doc.lines, line_no, offset - line_start, model, snippets, make_range)
    return lsp.CompletionList(is_incomplete=False, items=items)


# ---------------------------------------------------------------------------------------------
# The pure part: context -> items
# ---------------------------------------------------------------------------------------------

RangeFn = Callable[[int, int], lsp.Range]


@dataclass(frozen=True, slots=True)
class _Req:
    lines: Sequence[str]
    ctx: Context
    model: ModelView | None
    snippets: bool
    rng: RangeFn
    ranges: dict[tuple[int, int], lsp.Range] = field(default_factory=dict)

    def range(self, start: int, end: int) -> lsp.Range:
        """The protocol range of columns ``[start, end)`` of the cursor line (memoized)."""
        hit = self.ranges.get((start, end))
        if hit is None:
            hit = self.ranges[(start, end)] = self.rng(start, end)
        return hit

    @property
    def line(self) -> str:
        return self.lines[self.ctx.line].rstrip("\r") if self.ctx.line < len(self.lines) else ""

    def task(self) -> Task | None:
        tid = self.ctx.task_id
        return self.model.tasks.get(tid) if self.model is not None and tid else None

    def item(
        self,
        label: str,
        kind: lsp.CompletionItemKind,
        *,
        insert: str | None = None,
        detail: str | None = None,
        doc: str | None = None,
        snippet: bool = False,
        order: int = 0,
        start: int | None = None,
    ) -> lsp.CompletionItem:
        """One item replacing the text between the partial's start and the cursor."""
        ctx = self.ctx
        lo = ctx.start if start is None else start
        return lsp.CompletionItem(
            label=label,
            kind=kind,
            detail=detail,
            documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=doc) if doc else None,
            sort_text=f"{order:04d}",
            text_edit=lsp.TextEdit(range=self.range(lo, ctx.col), new_text=label if insert is None else insert),
            insert_text_format=lsp.InsertTextFormat.Snippet if snippet else lsp.InsertTextFormat.PlainText,
        )


def complete(
    lines: Sequence[str],
    line_no: int,
    col: int,
    model: ModelView | None,
    snippets: bool,
    rng: RangeFn,
) -> list[lsp.CompletionItem]:
    """Every completion item at column ``col`` (code points) of line ``line_no``."""
    if not 0 <= line_no < len(lines):
        return []
    ctx = analyze(lines, line_no, col)
    req = _Req(lines, ctx, model, snippets, rng)
    if ctx.kind == "expr":
        return _expr_items(req)
    if ctx.kind == "key":
        return _key_items(req, ctx.path)
    if ctx.kind == "value":
        return _value_items(req)
    if ctx.kind == "item" and ctx.key is not None:
        inner = (*ctx.path, ctx.key)
        if fields_for(inner) is not None or args_owner(inner):
            return _key_items(req, inner)
        return _list_items(req)
    return []


def _value_prefix(req: _Req) -> str:
    """A space when the value starts right after the colon (``tool:|``)."""
    ctx = req.ctx
    before = req.line[: ctx.start]
    return " " if before.endswith(":") and not ctx.quote else ""


def _closing(req: _Req) -> str:
    q = req.ctx.quote
    return q if q and not req.line[req.ctx.col :].startswith(q) else ""


# -- keys -------------------------------------------------------------------------------------


def _key_items(req: _Req, path: tuple[str, ...]) -> list[lsp.CompletionItem]:
    ctx = req.ctx
    present = set(ctx.present)
    suffix = req.line[ctx.col :]
    colon = "" if suffix.lstrip(" ").startswith(":") else ": "
    if len(path) == 3 and path[0] == "tasks" and path[2] == "after":
        out = []
        for i, tid in enumerate(_producers(req, path[1])):
            if tid not in present:
                out.append(
                    req.item(
                        tid,
                        lsp.CompletionItemKind.Reference,
                        insert=tid + colon,
                        detail=_task_detail(req.model, tid, "control edge"),
                        order=i,
                    )
                )
        return out
    if args_owner(path):
        return _arg_items(req, present, colon)
    if len(path) >= 3 and args_owner(path[:-1]):
        spec = _arg_spec(req, path[-1])
        if spec is None:
            return []
        return [
            req.item(
                f.name, lsp.CompletionItemKind.Field, insert=f.name + colon, detail=f.type_label, doc=f.doc, order=i
            )
            for i, f in enumerate(spec.fields)
            if f.name not in present
        ]
    table = fields_for(path)
    if table is None:
        return []
    block, what = table
    banned = set(present)
    for group in EXCLUSIVE:
        if group & present:
            banned |= group
    return [
        req.item(f.name, lsp.CompletionItemKind.Property, insert=f.name + colon, detail=what, doc=f.doc, order=i)
        for i, f in enumerate(block.fields)
        if f.name not in banned
    ]


def _tool_of(req: _Req) -> str | None:
    tool = tool_near(req.lines, req.ctx)
    if tool is None:
        task = req.task()
        verb = task.verb if task is not None else None
        tool = getattr(verb, "tool", None)
    return tool


def _arg_spec(req: _Req, name: str) -> C.ArgSpec | None:
    tool = _tool_of(req)
    c = C.contract(tool) if tool else None
    return c.arg(name) if c is not None else None


def _arg_items(req: _Req, present: set[str], colon: str) -> list[lsp.CompletionItem]:
    tool = _tool_of(req)
    c = C.contract(tool) if tool else None
    if c is None:
        return []
    out = []
    for i, a in enumerate(x for x in c.args if not x.reserved):
        if a.name in present:
            continue
        detail = a.type_label.replace("\\", "") + (" · required" if a.required else "")
        out.append(
            req.item(
                a.name,
                lsp.CompletionItemKind.Field,
                insert=a.name + colon,
                detail=detail,
                doc=a.markdown(c.id),
                order=i if a.required else 100 + i,
            )
        )
    return out


# -- values -----------------------------------------------------------------------------------


def _literal(value: object) -> str:
    """A contract value written as YAML would show it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "null" if value is None else str(value)


def _kind_at(path: tuple[str, ...], key: str) -> G.Kind | None:
    """What field ``key`` of the grammar block at ``path`` holds (``None``: no such field)."""
    table = fields_for(path)
    f = table[0].get(key) if table is not None else None
    return f.kind if f is not None else None


def _value_items(req: _Req) -> list[lsp.CompletionItem]:
    ctx = req.ctx
    key, path = ctx.key or "", ctx.path
    pre, close = _value_prefix(req), _closing(req)
    if key == "tool" and path and path[-1] == "invoke":
        return _tool_items(req, pre, close)
    if _kind_at(path, key) is G.Kind.MODEL:
        return _model_items(req, pre, close)
    if len(path) == 3 and path[0] == "tasks" and path[2] == "after":
        return [
            req.item(
                p,
                lsp.CompletionItemKind.EnumMember,
                insert=pre + p + close,
                doc=f"Run after {PREDICATE_MEANING[p]}.",
                order=i,
            )
            for i, p in enumerate(PREDICATES)
        ]
    if args_owner(path):
        spec = _arg_spec(req, key)
        if spec is None:
            return []
        literals = [_literal(v) for v in spec.values] or (["true", "false"] if spec.types == ("boolean",) else [])
        return [
            req.item(v, lsp.CompletionItemKind.EnumMember, insert=pre + v + close, order=i)
            for i, v in enumerate(literals)
        ]
    table = fields_for(path)
    f = table[0].get(key) if table is not None else None
    values = G.choices(f) if f is not None else ()
    return [
        req.item(v, lsp.CompletionItemKind.EnumMember, insert=pre + v + close, order=i) for i, v in enumerate(values)
    ]


def _tool_items(req: _Req, pre: str, close: str) -> list[lsp.CompletionItem]:
    ctx = req.ctx
    # the `args:` skeleton goes below `tool:` in block style, when the block has no `args:` yet
    block = not ctx.flow_values and "{" not in req.line
    sh = shape(req.line)
    if block and sh is not None and ctx.frames:
        invoke = ctx.frames[-1]
        block = invoke.key == "invoke" and "args" not in child_keys(req.lines, invoke, skip=ctx.line)
    indent = " " * (sh.key_col if sh is not None else 0)
    out = []
    for i, tid in enumerate(C.tool_ids()):
        c = C.contract(tid)
        if c is None:
            continue
        text = pre + tid + close
        snippet = False
        if block:
            skeleton = c.snippet("  ")
            if not req.snippets:
                skeleton = plain_snippet(skeleton)
            text += "".join("\n" + indent + part for part in skeleton.split("\n"))
            snippet = req.snippets
        out.append(
            req.item(
                tid,
                lsp.CompletionItemKind.Function,
                insert=text,
                detail=c.summary,
                doc=c.markdown(),
                snippet=snippet,
                order=i,
            )
        )
    return out


_PLACEHOLDER_CHOICE = re.compile(r"\$\{\d+\|((?:[^|\\]|\\.)*?)(?:,(?:[^|\\]|\\.)*)*\|\}")
_PLACEHOLDER = re.compile(r"\$\{\d+(?::([^}]*))?\}|\$\d+")


def plain_snippet(snippet: str) -> str:
    """The text a snippet inserts with every placeholder left empty (its first choice, if any)."""
    text = _PLACEHOLDER_CHOICE.sub(lambda m: m.group(1), snippet)
    text = _PLACEHOLDER.sub(lambda m: m.group(1) or "", text)
    return re.sub(r"\\([$}\\,|])", r"\1", text)


def _model_items(req: _Req, pre: str, close: str) -> list[lsp.CompletionItem]:
    partial = req.ctx.partial
    provs = C.providers()
    if "/" in partial:
        prefix = partial.split("/", 1)[0]
        prov = provs.get(prefix)
        names = list(C.mock_models()) if prefix == "mock" else list(prov.models) if prov else []
        return [
            req.item(f"{prefix}/{n}", lsp.CompletionItemKind.Value, insert=pre + f"{prefix}/{n}" + close, order=i)
            for i, n in enumerate(names)
        ]
    out = [
        req.item(
            f"{p.id}/",
            lsp.CompletionItemKind.Module,
            insert=pre + f"{p.id}/",
            detail=f"{p.kind} provider",
            doc=p.summary,
            order=i,
        )
        for i, p in enumerate(provs.values())
    ]
    echo = C.mock_models().get("echo", "")
    out.append(
        req.item("mock/echo", lsp.CompletionItemKind.Value, insert=pre + "mock/echo" + close, doc=echo, order=99)
    )
    return out


def _list_items(req: _Req) -> list[lsp.CompletionItem]:
    ctx = req.ctx
    key, path = ctx.key, ctx.path
    pre, close = _value_prefix(req), _closing(req)
    if key == "on_codes" and _kind_at(path, key) is not None:  # a field of `retry:` and `on_error:`
        return [
            req.item(code, lsp.CompletionItemKind.Constant, insert=pre + code + close, detail=info.title, order=i)
            for i, (code, info) in enumerate(sorted(registry().items()))
            if info.phase != "check"
        ]
    if key == "tools" and path and path[-1] == "agent":
        out = []
        for i, tid in enumerate(C.tool_ids()):
            c = C.contract(tid)
            detail = c.summary if c is not None else None
            out.append(req.item(tid, lsp.CompletionItemKind.Function, insert=pre + tid + close, detail=detail, order=i))
        return out
    return []


# -- expressions ------------------------------------------------------------------------------


def _chain(expr: str) -> tuple[list[str], str] | None:
    """The reference chain ending at the cursor: ``(parents, partial)``; ``None`` inside a
    string literal or after something that is not a plain member chain."""
    quote = None
    i = 0
    while i < len(expr):
        ch = expr[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        i += 1
    if quote:
        return None
    j = len(expr)
    while j > 0 and (expr[j - 1].isalnum() or expr[j - 1] in "_."):
        j -= 1
    chain = expr[j:]
    if chain[:1] in (".",) or chain[:1].isdigit() or (j > 0 and expr[j - 1] in "])'\""):
        return None
    parts = chain.split(".")
    return parts[:-1], parts[-1]


def _with_names(req: _Req) -> list[str]:
    """This task's binding names: those written now, then those of the last good model."""
    names: list[str] = []
    tf = task_frame(req.ctx.frames)
    if tf is not None:
        kids = child_keys(req.lines, tf)
        line = kids.get("with")
        if line is not None:
            text = req.lines[line].rstrip("\r")
            brace = text.find("{")
            if brace != -1:
                st = scan_flow(text[brace:], brace, top_key=None, full="")
                names += [k for k in st.keys if k not in names]
            else:
                sh = shape(text)
                if sh is not None:
                    names += list(child_keys(req.lines, Frame("with", sh.key_col, line)))
    task = req.task()
    if task is not None:
        names += [b.name for b in task.with_ if b.name not in names]
    return names


def _in_for_each(req: _Req) -> bool:
    tf = task_frame(req.ctx.frames)
    if tf is not None and "for_each" in child_keys(req.lines, tf):
        return True
    task = req.task()
    return task is not None and task.for_each is not None


def _producers(req: _Req, current: str | None) -> list[str]:
    model = req.model
    if model is None:
        return []
    return model.safe_producers(current)


def _task_detail(model: ModelView | None, tid: str, role: str | None = None) -> str:
    """One line about a task (its verb and tool); kept short, task lists can be long."""
    task = model.tasks.get(tid) if model is not None else None
    parts = [role] if role else []
    if task is not None:
        tool = getattr(task.verb, "tool", None)
        parts.append(f"{task.verb_kind or 'no verb'} {tool}" if tool else task.verb_kind or "no verb")
        if task.output:
            parts.append("bindings: " + ", ".join(b.name for b in task.output))
    return " · ".join(parts) or "task"


def _expr_items(req: _Req) -> list[lsp.CompletionItem]:
    ctx = req.ctx
    split = _chain(ctx.expr)
    if split is None:
        return []
    parents, partial = split
    where = where_of(ctx.full_path)
    if where == "output":
        return []  # a jq binding cannot hold `${{ }}`
    start = ctx.expr_start + len(ctx.expr) - len(partial)
    tid = ctx.task_id
    model = req.model

    def mk(label: str, kind: lsp.CompletionItemKind, detail: str | None, doc: str | None, order: int):
        return req.item(label, kind, detail=detail, doc=doc, order=order, start=start)

    if not parents:
        # the roots the scope table admits here; `with` needs a task, the loop locals a for_each one
        roots = [r for r in ROOTS if in_scope(r, where)]
        if tid is None:
            roots = [r for r in roots if r != "with" and r not in LOOP_ROOTS]
        elif any(r in LOOP_ROOTS for r in roots) and not _in_for_each(req):
            roots = [r for r in roots if r not in LOOP_ROOTS]
        return [mk(r, lsp.CompletionItemKind.Module, None, ROOT_DOCS[r], i) for i, r in enumerate(roots)]
    root = parents[0]
    if root in VALUE_ROOTS and len(parents) == 1:
        if model is None or not in_scope(root, where):
            return []
        out = []
        for i, n in enumerate(model.declared(root)):
            detail, doc = _declared_brief(model, root, n.value)
            out.append(mk(n.name, lsp.CompletionItemKind.Variable, detail, doc, i))
        return out
    if root == "with" and len(parents) == 1:
        if not in_scope("with", where) or tid is None:
            return []
        task = req.task()
        out = []
        own = ctx.key if where == "with" and len(ctx.path) == 3 else None  # the binding being written
        for i, name in enumerate(n for n in _with_names(req) if n != own):
            b = task.binding(name) if task is not None else None
            doc = f"`{model.source_of(b.value)}`" if b is not None and model is not None else None
            out.append(mk(name, lsp.CompletionItemKind.Variable, "binding", doc, i))
        return out
    if root == "tasks" and in_scope("tasks", where):
        if len(parents) == 1:
            if where == "finally":
                ids = [tid] if tid else []
            else:
                ids = _producers(req, tid if where in ("with", "recover") else None)
            return [mk(t, lsp.CompletionItemKind.Reference, _task_detail(model, t), None, i) for i, t in enumerate(ids)]
        if len(parents) == 2:
            producer = model.tasks.get(parents[1]) if model is not None else None
            out = [
                mk(f, lsp.CompletionItemKind.Field, f"{edge_kind(f)} edge", TASK_FIELD_DOCS[f], i)
                for i, f in enumerate(TASK_FIELD_DOCS)
            ]
            if producer is not None:
                for i, b in enumerate(producer.output):
                    jq = model.source_of(b.value) if model is not None else ""
                    out.append(
                        mk(b.name, lsp.CompletionItemKind.Field, "output binding · value edge", f"`{jq}`", 50 + i)
                    )
            return out
    return []


def _declared_brief(model: ModelView, root: str, node: object) -> tuple[str | None, str | None]:
    """A one-word type and a short description of a declaration."""
    from checker.parse.values import MapValue, ScalarValue

    if isinstance(node, MapValue):
        t = node.get("type")
        src = node.get("source")
        desc = node.get("description")
        detail = model.source_of(t) if t is not None else (f"secret · {model.source_of(src)}" if src else None)
        doc = str(desc.value) if isinstance(desc, ScalarValue) and isinstance(desc.value, str) else None
        return detail, doc
    if isinstance(node, ScalarValue):
        return ("constant" if root == "const" else None), f"`{node.raw}`"
    return None, None


@cache
def _warm() -> None:
    """Load the contract and code tables once (the first completion would otherwise pay)."""
    C.contracts()
    C.providers()
    registry()
