"""``textDocument/hover``: a Markdown card for whatever sits under the cursor.

Covered:

* keys: envelope fields (on ``workflow:``, the workflow's certificate follows, see
  :mod:`nika_lsp.features.certificate`), task fields, verb body fields and the ``retry``/``on_error``/
  ``on_finally``/``permits``/``run``/``policy``/declaration fields (docs from
  :mod:`checker.grammar.table`), a builtin's argument keys inside ``args:`` (type, required,
  default, doc), task ids (under ``tasks:`` and as ``after:`` keys), declared names under
  ``inputs:``/``config:``/``const:``/``secrets:`` and ``with:`` binding names;
* values: a builtin id after ``tool:`` or in an agent's ``tools`` (the contract card), a
  ``model:`` (the provider), an ``after:`` predicate;
* any ``NIKA-…`` code on a line (``on_codes`` lists, comments): title, category, phase and
  the registry's teaching text;
* references inside ``${{ }}``: ``tasks.X.<field>`` (the producer, its verb, its declared
  ``returns:``/``schema:``, its ``output:`` bindings and the role of the edge this read
  creates), ``inputs``/``config``/``const``/``secrets`` entries (type, default, description),
  ``with.x`` (the bound expression), ``item``/``index``.

Hover over a diagnostic's range is the client's business: nothing here repeats findings.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from checker.contracts import tables as C
from checker.core.codes import lookup
from checker.core.source import SourceText
from checker.core.vocab import LOOP_ROOTS, PREDICATE_MEANING, VALUE_ROOTS, in_scope
from checker.expr import parse_template, references
from checker.model.graph import edge_kind, pass_set
from checker.model.workflow import RESERVED_BINDINGS, STATUSES, Task
from checker.parse.values import ListValue, MapValue, ScalarValue, TemplateValue, Value
from nika_lsp.convert import client_lines, offset_of, position
from nika_lsp.features.cursor import (
    CODE_TOKEN,
    Context,
    analyze,
    args_owner,
    fields_for,
    tool_near,
    where_of,
)
from nika_lsp.features.model_view import ModelView, view_of

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot
    from nika_lsp.host import Host

_TOKEN_STOP = frozenset(" \t{}[],\"'#")
_CHAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")

ROLE_TEXT: dict[str, str] = {
    "value": "reads the producer's result",
    "terminal-observation": "observes how the producer ended",
    "failure-observation": "observes the producer's failure",
}


@dataclass(frozen=True, slots=True)
class Card:
    """A hover answer: Markdown plus the columns ``[start, end)`` it describes on the line."""

    markdown: str
    start: int
    end: int
    topic: str | None = None  # "workflow": the envelope's `workflow:` key (the certificate joins the card)


def register(server: Host) -> None:
    """Attach the hover handler to ``server``."""

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: Host, params: lsp.HoverParams) -> lsp.Hover | None:
        uri = params.text_document.uri
        if not ls.docs.known(uri):
            return None
        encoding = ls.encoding

        def run() -> lsp.Hover | None:
            snap = ls.snapshot(uri)
            if snap is None:
                return None
            good = snap if snap.compiled.workflow is not None else ls.docs.last_good(uri)
            return hover_at(snap, params.position, encoding, view_of(good) if good is not None else None)

        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(ls.thread_pool, lambda: ls.safely("hover", run, None))


def hover_at(snap: Snapshot, pos: lsp.Position, encoding: str, model: ModelView | None) -> lsp.Hover | None:
    """The hover for one protocol position of ``snap``'s text."""
    src = snap.source
    offset = offset_of(src, pos, encoding)
    line_no = src.line_index(offset)
    start = src.line_starts[line_no]
    card = card_at(snap.lines, line_no, offset - start, model)
    if card is None:
        return None
    markdown = card.markdown
    if card.topic == "workflow":
        from nika_lsp.features.certificate import certificate_markdown, certificate_of

        markdown += "\n\n---\n\n" + certificate_markdown(certificate_of(snap))
    rng = lsp.Range(start=position(src, start + card.start, encoding), end=position(src, start + card.end, encoding))
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown), range=rng)


# ---------------------------------------------------------------------------------------------
# The pure part
# ---------------------------------------------------------------------------------------------


def card_at(lines: Sequence[str], line_no: int, col: int, model: ModelView | None) -> Card | None:
    """The card for column ``col`` (code points) of line ``line_no``, if anything is known there."""
    if not 0 <= line_no < len(lines):
        return None
    line = lines[line_no].rstrip("\r")
    for m in CODE_TOKEN.finditer(line):
        if m.start() <= col < m.end():
            return _code_card(m.group(0), m.start(), m.end())
    tpl = parse_template(line) if "${{" in line else None
    if tpl is not None:
        for island in tpl.islands:
            if island.start <= col < island.end:
                return _expr_card(lines, line_no, col, island, model)
    span = _token(line, col)
    if span is None:
        return None
    lo, hi = span
    word = line[lo:hi]
    is_key = word.endswith(":") or line[hi:].lstrip(" ").startswith(":")
    word = word.rstrip(":")
    hi = lo + len(word)
    if not word:
        return None
    ctx = analyze(lines, line_no, lo)
    text: str | None = None
    if is_key and ctx.kind in ("key", "item"):
        path = ctx.path if ctx.kind == "key" else (*ctx.path, ctx.key or "")
        text = _key_card(lines, ctx, path, word, model)
        if text and path == () and word == "workflow":
            return Card(text, lo, hi, topic="workflow")
    elif ctx.kind in ("value", "item"):
        text = _value_card(ctx, word)
    return Card(text, lo, hi) if text else None


def _token(line: str, col: int) -> tuple[int, int] | None:
    if col >= len(line) or line[col] in _TOKEN_STOP:
        if col > 0 and col <= len(line) and line[col - 1] not in _TOKEN_STOP:
            col -= 1
        else:
            return None
    lo = col
    while lo > 0 and line[lo - 1] not in _TOKEN_STOP:
        lo -= 1
    hi = col
    while hi < len(line) and line[hi] not in _TOKEN_STOP:
        hi += 1
    # `- item`: the dash is a marker, not part of the word
    while lo < hi and line[lo] == "-" and (lo + 1 == hi or line[lo + 1] == " "):
        lo += 1
    return (lo, hi) if lo < hi else None


# -- NIKA codes --------------------------------------------------------------------------------


def _code_card(code: str, lo: int, hi: int) -> Card | None:
    try:
        info = lookup(code)
    except KeyError:
        return None
    phase = {
        "check": "refused by `nika check`",
        "run": "raised at run time",
        "both": "at check and run time",
        "editor": "reported by the editor only",
    }
    text = (
        f"**{info.code}** — {info.title}\n\n"
        f"*{info.category} · {phase.get(info.phase, info.phase)} · {info.severity.value}*\n\n{info.teaching}"
    )
    return Card(text, lo, hi)


# -- keys --------------------------------------------------------------------------------------


def _key_card(
    lines: Sequence[str], ctx: Context, path: tuple[str, ...], key: str, model: ModelView | None
) -> str | None:
    if path == ("tasks",):
        return task_card(model, key) if model is not None else None
    if len(path) == 3 and path[0] == "tasks" and path[2] == "after":
        card = task_card(model, key) if model is not None else None
        head = f"**after** `{key}` — a control edge `{key} → {path[1]}`"
        return f"{head}\n\n---\n\n{card}" if card else head
    if len(path) == 3 and path[0] == "tasks" and path[2] == "with" and model is not None:
        task = model.tasks.get(path[1])
        b = task.binding(key) if task is not None else None
        if b is not None:
            return _binding_card(model, task, b.name, b.value)
    if len(path) == 1 and path[0] in VALUE_ROOTS and model is not None:
        return declared_card(model, path[0], key)
    if args_owner(path):
        tool = _tool(lines, ctx, model)
        c = C.contract(tool) if tool else None
        a = c.arg(key) if c is not None else None
        return a.markdown(c.id) if a is not None and c is not None else None
    if len(path) >= 3 and args_owner(path[:-1]):
        tool = _tool(lines, ctx, model)
        c = C.contract(tool) if tool else None
        a = c.arg(path[-1]) if c is not None else None
        f = a.get_field(key) if a is not None else None
        return f.markdown(f"{c.id} · {a.name}") if f is not None and c is not None and a is not None else None
    table = fields_for(path)
    if table is None:
        return None
    block, what = table
    f = block.get(key)
    return f"**{key}** · {what}\n\n{f.doc}" if f is not None else None


def _tool(lines: Sequence[str], ctx: Context, model: ModelView | None) -> str | None:
    tool = tool_near(lines, ctx)
    if tool is None and model is not None and ctx.task_id:
        task = model.tasks.get(ctx.task_id)
        tool = getattr(task.verb, "tool", None) if task is not None else None
    return tool


# -- values ------------------------------------------------------------------------------------


def _value_card(ctx: Context, word: str) -> str | None:
    key, path = ctx.key, ctx.path
    if (key == "tool" and path and path[-1] == "invoke") or (key == "tools" and path and path[-1] == "agent"):
        c = C.contract(word)
        if c is not None:
            return c.markdown()
        retired = C.retired_tools().get(word)
        return f"`{word}` is not a builtin: {retired}" if retired else None
    if key == "model":
        prov = C.provider_of(word)
        if prov is None:
            return None
        extra = ""
        if prov.id == "mock":
            extra = C.mock_models().get(word.split("/", 1)[1], "")
        env = ", ".join(f"`{v}`" for v in prov.env_vars)
        text = f"**{prov.id}** · {prov.kind} provider\n\n{prov.summary}"
        if extra:
            text += f"\n\n`{word}`: {extra}"
        if env:
            text += f"\n\nKey read from {env} (engine configuration)."
        return text
    if len(path) == 3 and path[0] == "tasks" and path[2] == "after" and word in PREDICATE_MEANING:
        return f"**{word}** — `{path[1]}` runs once `{key}` has settled and {PREDICATE_MEANING[word]}."
    return None


# -- expressions -------------------------------------------------------------------------------


def _expr_card(lines: Sequence[str], line_no: int, col: int, island, model: ModelView | None) -> Card | None:  # type: ignore[no-untyped-def]
    chain: tuple[str, list[str | int | None], int, int] | None = None
    if island.expr is not None:
        for ref in references(island.expr):
            lo, hi = island.expr_start + ref.start, island.expr_start + ref.end
            if lo <= col <= hi:
                chain = (ref.root, list(ref.path), lo, hi)
                break
    if chain is None:
        for m in _CHAIN.finditer(island.text):
            lo, hi = island.expr_start + m.start(), island.expr_start + m.end()
            if lo <= col <= hi:
                root, *rest = m.group(0).split(".")
                chain = (root, list(rest), lo, hi)
                break
    if chain is None or model is None:
        return None
    root, path, lo, hi = chain
    outer = analyze(lines, line_no, island.start)
    where = where_of(outer.full_path)
    tid = outer.task_id
    text = ref_card(model, root, path, where, tid)
    return Card(text, lo, hi) if text else None


def ref_card(model: ModelView, root: str, path: list[str | int | None], where: str, tid: str | None) -> str | None:
    """The card of one reference ``root.path…`` read at position class ``where`` of task ``tid``."""
    name = path[0] if path and isinstance(path[0], str) else None
    if root in VALUE_ROOTS and name:
        return declared_card(model, root, name)
    if root == "with" and name and tid:
        task = model.tasks.get(tid)
        b = task.binding(name) if task is not None else None
        return _binding_card(model, task, name, b.value) if b is not None and task is not None else None
    if root in LOOP_ROOTS and tid:
        task = model.tasks.get(tid)
        src = model.source_of(task.for_each) if task is not None and task.for_each is not None else None
        what = "the current element" if root == "item" else "the 0-based position of `item`"
        return f"**{root}** — {what} of this task's `for_each`" + (f"\n\n`for_each: {src}`" if src else "")
    if root == "tasks" and name:
        fld = path[1] if len(path) > 1 and isinstance(path[1], str) else None
        return tasks_ref_card(model, name, fld, where, tid)
    return None


def tasks_ref_card(model: ModelView, producer: str, fld: str | None, where: str, tid: str | None) -> str:
    """``tasks.<producer>.<fld>``: the producer, what the field is and the edge the read creates."""
    ref = f"tasks.{producer}" + (f".{fld}" if fld else "")
    task = model.tasks.get(producer)
    if task is None:
        return f"**{ref}** — no task `{producer}` is declared under `tasks:`."
    kind = edge_kind(fld)
    out = [f"**{ref}**"]
    binding = next((b for b in task.output if b.name == fld), None)
    if fld == "output" or binding is not None:
        what = f"the `output:` binding `{fld}` (`{model.source_of(binding.value)}`)" if binding else "the task's result"
        out.append(f"Reads {what} of `{producer}`.")
    elif fld in RESERVED_BINDINGS:
        out.append(f"Reads `{fld}` of `{producer}`.")
    # the edge this read creates
    states = pass_set(kind)
    passes = " or ".join(f"`{st}`" for st in STATUSES if st in states)
    if where == "with" and tid:
        out.append(
            f"Edge: **{kind}** `{producer} → {tid}` — {ROLE_TEXT[kind]}; "
            f"`{tid}` waits for `{producer}` and runs when it ends {passes}."
        )
    elif where == "recover":
        out.append(f"Edge role: **{kind}**, as a recovery read (not a scheduling edge; read only on failure).")
    elif where == "outputs":
        out.append(f"Edge role: **{kind}** — a workflow output, read once the run has settled.")
    elif where == "finally":
        out.append(f"Edge role: **{kind}** — the cleanup step observes its own task.")
    elif not in_scope("tasks", where):
        out.append(f"Edge role: **{kind}** — but `tasks.*` cannot be read here: bind it in `with:` first.")
    else:
        out.append(f"Edge role: **{kind}** ({ROLE_TEXT[kind]}).")
    out.append("---")
    out.append(task_card(model, producer))
    return "\n\n".join(out)


def task_card(model: ModelView, tid: str) -> str:
    """What a task is: verb, tool or model, declared output type, bindings and neighbours."""
    task = model.tasks.get(tid)
    if task is None:
        return f"Task `{tid}` (not in the last analysis)."
    verb = task.verb
    head = f"**Task `{tid}`** · `{task.verb_kind}`" if verb is not None else f"**Task `{tid}`** · no verb"
    tool = getattr(verb, "tool", None)
    vmodel = getattr(verb, "model", None)
    if tool:
        head += f" `{tool}`"
    elif isinstance(vmodel, ScalarValue):
        head += f" · `{vmodel.value}`"
    out = [head]
    out.append(_output_type(model, task))
    if task.output:
        out.append("Output bindings: " + ", ".join(f"`{b.name}` = `{model.source_of(b.value)}`" for b in task.output))
    if task.for_each is not None:
        out.append(f"Fans out over `{model.source_of(task.for_each)}`.")
    g = model.graph
    if g is not None:
        ups = sorted({e.producer for e in g.incoming(tid)})
        downs = sorted({e.consumer for e in g.outgoing(tid)})
        if ups:
            out.append("Waits for: " + ", ".join(f"`{u}`" for u in ups))
        if downs:
            out.append("Read by: " + ", ".join(f"`{d}`" for d in downs))
    return "\n\n".join(out)


def _output_type(model: ModelView, task: Task) -> str:
    if task.returns is not None:
        return f"Returns: `{model.source_of(task.returns, 200)}` (declared `returns:`)"
    schema = getattr(task.verb, "schema", None)
    if schema is not None:
        return f"Output schema (`schema:`):\n\n```yaml\n{_block(model, schema)}\n```"
    return "Output type: not declared (`Unknown`)."


def _block(model: ModelView, node: Value) -> str:
    lines = list(client_lines(SourceText(model.source_of(node, 600))))
    if len(lines) > 1:  # re-indent a block mapping to column 0
        pad = min((len(x) - len(x.lstrip(" ")) for x in lines[1:] if x.strip()), default=0)
        lines = [lines[0]] + [x[pad:] for x in lines[1:]]
    return "\n".join(lines)


def _binding_card(model: ModelView, task: Task, name: str, value: Value) -> str:
    expr = model.source_of(value)
    out = [f"**with.{name}** — binding of task `{task.id}`", f"`{name}: {expr}`"]
    if isinstance(value, TemplateValue):
        tpl = parse_template(value.value)
        for island in tpl.islands:
            if island.expr is None:
                continue
            for ref in references(island.expr):
                if ref.root == "tasks" and ref.path and isinstance(ref.path[0], str):
                    fld = ref.path[1] if len(ref.path) > 1 and isinstance(ref.path[1], str) else None
                    out.append(f"Creates a **{edge_kind(fld)}** edge `{ref.path[0]} → {task.id}`.")
    return "\n\n".join(out)


def declared_card(model: ModelView, root: str, name: str) -> str | None:
    """``inputs.x`` / ``config.x`` / ``const.x`` / ``secrets.x``: type, default and description."""
    n = model.named(root, name)
    if n is None:
        return f"**{root}.{name}** — not declared under `{root}:`."
    node = n.value
    out = [f"**{root}.{name}**"]
    facts: list[str] = []
    if isinstance(node, MapValue):
        for key, label in (("type", "type"), ("required", "required"), ("default", "default"), ("value", "value")):
            v = node.get(key)
            if v is not None and root != "secrets":
                facts.append(f"{label}: `{_inline(model, v)}`")
        if root == "secrets":
            for key in ("source", "key", "path"):
                v = node.get(key)
                if v is not None:
                    facts.append(f"{key}: `{_inline(model, v)}`")
            facts.append("value masked; never written in the file")
        desc = node.get("description")
        if facts:
            out.append(" · ".join(facts))
        if isinstance(desc, ScalarValue) and isinstance(desc.value, str):
            out.append(desc.value)
    elif isinstance(node, ScalarValue):
        out.append(f"value: `{node.raw}`")
    elif isinstance(node, ListValue):
        out.append(f"value: `{_inline(model, node)}`")
    return "\n\n".join(out)


def _inline(model: ModelView, node: Value) -> str:
    return " ".join(model.source_of(node, 160).split())
