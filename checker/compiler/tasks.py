"""``tasks:`` and each task (03): identity, the one verb, and the task-level fields."""

from __future__ import annotations

import re

from checker.compiler import blocks, verbs
from checker.compiler.builder import Builder
from checker.core.diagnostics import Diagnostic, Edit, Fix, Label
from checker.core.source import Span
from checker.core.suggest import did_you_mean
from checker.core.vocab import Where
from checker.grammar import table as G
from checker.model.workflow import ExprSite, Task, Verb
from checker.parse.values import Entry, ListValue, MapValue, ScalarValue, Value, describe

TASK_ID_RE = re.compile(r"^[a-z][a-z0-9_]*\Z")


def tasks(b: Builder, root: MapValue, envelope_model: Value | None) -> dict[str, Task]:
    """The ``tasks:`` map compiled, task by task, in declaration order (ids judged on the way)."""
    node = _tasks_map(b, root)
    if node is None:
        return {}
    m = b.expect_mapping(node, "`tasks:`")
    if m is None:
        return {}
    seen: dict[str, Entry] = {}
    out: dict[str, Task] = {}
    b.task_keys.update(id(e.key) for e in m.entries)
    if b.task_memo is not None:
        b.task_memo.for_envelope(envelope_model)
    dedented = _dedented_bodies(b, m)
    for e in m.entries:
        tid = e.key_text
        if tid is None or id(e) in dedented:
            continue
        if tid in seen:
            b.err(
                "NIKA-PARSE-007",
                e.key.span,
                f"task `{tid}` is declared twice",
                "Rename one of the two tasks; a task id must be unique.",
                related=(Label(seen[tid].key.span, f"`{tid}` first declared here"),),
            )
            continue
        seen[tid] = e
        if not TASK_ID_RE.match(tid):
            _not_snake_case(b, tid, e)
        t = task(b, tid, e, envelope_model) if b.task_memo is None else b.task_memo.task(b, tid, e, envelope_model)
        if t is not None:
            out[tid] = t
    return out


def _dedented_bodies(b: Builder, m: MapValue) -> set[int]:
    """A task whose body was written at the level of the task ids (``build:`` with nothing under
    it, then ``exec: …`` beside it): one finding on the task, with the indentation as its fix, and
    the ids of the entries that make it (the task and its body: none is compiled as a task, so the
    one mistake gets one finding)."""
    out: set[int] = set()
    entries = m.entries
    i = 0
    while i < len(entries):
        e = entries[i]
        body = []
        j = i + 1
        while j < len(entries) and entries[j].key_text in G.TASK:
            body.append(entries[j])
            j += 1
        empty = isinstance(e.value, ScalarValue) and e.value.value is None
        if not (empty and e.key_text is not None and e.key_text not in G.TASK and body):
            i += 1
            continue
        names = ", ".join(f"`{x.key_text}:`" for x in body)
        b.err(
            "NIKA-PARSE-019",
            e.key.span,
            f"task `{e.key_text}` has no body, and {names} beside it {'is' if len(body) == 1 else 'are'} written"
            " at the level of the task ids",
            f"Indent the body under `{e.key_text}:`.",
            task=e.key_text,
            fixes=_indent_fix(b, e, body),
        )
        out.update(id(x) for x in (e, *body))
        i = j
    return out


def _indent_fix(b: Builder, task: Entry, body: list[Entry]) -> tuple[Fix, ...]:
    """Two spaces more on every line of the body (the lines from its first key to its last value)."""
    text = b.src.text
    key_col = task.key.span.start - (text.rfind("\n", 0, task.key.span.start) + 1)
    first = body[0].key.span.start
    first_col = first - (text.rfind("\n", 0, first) + 1)
    if first_col != key_col or text[first - first_col : first].strip():
        return ()  # not a block-style body at the task's own column: no safe edit to propose
    edits = []
    pos = first - first_col
    end = body[-1].value.span.end
    while pos <= end:
        edits.append(Edit(Span(pos, pos), "  "))
        nl = text.find("\n", pos)
        if nl < 0:
            break
        pos = nl + 1
    return (Fix(f"Indent the body under `{task.key_text}:`", tuple(edits)),)


def _tasks_map(b: Builder, root: MapValue) -> Value | None:
    """The value of ``tasks:`` when it holds tasks; None (with its finding) when it is missing,
    empty or a list."""
    entry = root.entry("tasks")
    if entry is None:
        b.err(
            "NIKA-PARSE-002",
            Span(root.span.start, root.span.start),
            "the `tasks:` map is missing",
            "Add `tasks:` with at least one task keyed by its id.",
        )
        return None
    node = entry.value
    if isinstance(node, ListValue):
        if not node.items:
            b.err(
                "NIKA-PARSE-002",
                node.span,
                "`tasks:` is empty",
                "Declare at least one task as a map entry: `tasks:` then `my_task:` with a verb.",
            )
        else:
            b.err(
                "NIKA-PARSE-022",
                node.span,
                "`tasks:` is a list; it must be a map keyed by task id",
                "Turn each `- id: name` item into a `name:` key and drop the `id:` field.",
            )
        return None
    if (isinstance(node, ScalarValue) and node.value is None) or (isinstance(node, MapValue) and not node.entries):
        b.err("NIKA-PARSE-002", entry.key.span, "`tasks:` is empty", "Declare at least one task keyed by its id.")
        return None
    return node


def _not_snake_case(b: Builder, tid: str, e: Entry) -> None:
    """NIKA-PARSE-006, with a snake_case spelling of the id to suggest."""
    fixed = re.sub(r"[^a-z0-9_]+", "_", tid.lower()).strip("_")
    if fixed and not fixed[0].isalpha():
        fixed = "t_" + fixed
    b.err(
        "NIKA-PARSE-006",
        e.key.span,
        f"task id `{tid}` is not snake_case",
        "Use lowercase letters, digits and `_`, starting with a letter" + (f" (e.g. `{fixed}`)." if fixed else "."),
    )


class TaskMemo:
    """What compiling each task gave (its model, findings and expression sites), kept across
    versions of one document by the language server's incremental analysis.

    A task's entry is the very object the YAML layer built from its source slice, reused while
    that slice is unchanged, so the entry's identity keys the memo. Compiling a task reads
    nothing outside its entry but the envelope's default ``model:`` value, which the incremental
    analysis keeps as one object while its text is unchanged; the memo is emptied when that
    object changes (see :meth:`for_envelope`).
    """

    def __init__(self) -> None:
        self._done: dict[int, tuple[Entry, Task | None, tuple[Diagnostic, ...], tuple[ExprSite, ...]]] = {}
        self._model: Value | None = None
        self._used: set[int] = set()

    def for_envelope(self, envelope_model: Value | None) -> None:
        """Start one compilation of the document whose envelope default model is ``envelope_model``
        (the very object: a compiled task may hold it, so another one voids the memo)."""
        if envelope_model is not self._model:
            self._done.clear()
            self._model = envelope_model
        self._used = set()

    def task(self, b: Builder, tid: str, e: Entry, envelope_model: Value | None) -> Task | None:
        """:func:`task` of ``e``, its findings and sites given to ``b``: remembered, or computed
        now and remembered."""
        self._used.add(id(e))
        hit = self._done.get(id(e))
        if hit is not None and hit[0] is e:
            b.diags.extend(hit[2])
            b.sites.extend(hit[3])
            return hit[1]
        n_diags, n_sites = len(b.diags), len(b.sites)
        t = task(b, tid, e, envelope_model)
        self._done[id(e)] = (e, t, tuple(b.diags[n_diags:]), tuple(b.sites[n_sites:]))
        return t

    def prune(self) -> None:
        """Forget the tasks the last compilation did not meet (deleted or edited since)."""
        self._done = {k: v for k, v in self._done.items() if k in self._used}


def _special(b: Builder, tid: str):  # type: ignore[no-untyped-def]
    def special(k: str, ke: Entry) -> bool:
        if k == "id":
            b.err(
                "NIKA-PARSE-023",
                ke.key.span,
                "a task has no `id:` field; its key under `tasks:` is its identity",
                "Delete this line.",
                task=tid,
                fixes=(Fix("Remove the `id:` field", (Edit(b.line_span(ke), ""),)),),
            )
            return True
        if k == "depends_on":
            return True  # NIKA-PARSE-024, reported with its migration by checker.rules.migrations
        if k in G.FOREIGN_TASK_KEYS and did_you_mean(k, G.TASK.names) is None:
            teach = G.FOREIGN_TASK_KEYS[k]
            b.err(
                "NIKA-PARSE-005",
                ke.key.span,
                f"`{k}` is not a Nika task field",
                teach[0].upper() + teach[1:] + ".",
                task=tid,
            )
            return True
        return False

    return special


def task(b: Builder, tid: str, e: Entry, envelope_model: Value | None) -> Task | None:
    node = e.value
    if not isinstance(node, MapValue):
        b.err(
            "NIKA-PARSE-019",
            node.span,
            f"task `{tid}` must be a mapping with one verb, not {describe(node)}",
            "Give it exactly one of `infer:`, `exec:`, `invoke:` or `agent:`.",
            task=tid,
        )
        return None
    b.closed(node, G.TASK, f"task `{tid}`", task=tid, special=_special(b, tid))
    in_fe = "for_each" in node
    verb = _task_verb(b, tid, e, node, envelope_model)
    with_ = blocks.with_block(b, node.get("with"), tid, in_fe)
    after = blocks.after_block(b, node.get("after"), tid)
    when = blocks.when(b, node.get("when"), tid, Where.WHEN, in_fe)
    for_each = _for_each(b, node.get("for_each"), tid)
    max_parallel = None
    if b.check_field(G.TASK, node, "max_parallel", tid) and isinstance(mp := node.get("max_parallel"), ScalarValue):
        max_parallel = mp.value
    fail_fast = True
    if b.check_field(G.TASK, node, "fail_fast", tid) and isinstance(ff := node.get("fail_fast"), ScalarValue):
        fail_fast = ff.value
    retry = blocks.retry(b, node.get("retry"), tid)
    on_error = blocks.on_error(b, node.get("on_error"), tid, in_fe)
    timeout = b.duration(node.get("timeout"), tid)
    on_finally = blocks.on_finally(b, node.get("on_finally"), tid, envelope_model)
    output = blocks.output_block(b, node.get("output"), tid)
    inert = _inert(b, node.get("inert"), tid)
    declassify = blocks.declassify(b, node.get("declassify"), tid)
    return Task(
        id=tid,
        key=e.key,
        value=node,
        verb=verb,
        with_=with_,
        after=after,
        when=when,
        for_each=for_each,
        max_parallel=max_parallel,
        fail_fast=fail_fast,
        retry=retry,
        on_error=on_error,
        timeout=timeout,
        on_finally=on_finally,
        output=output,
        returns=node.get("returns"),
        inert=inert,
        declassify=declassify,
    )


def _task_verb(b: Builder, tid: str, e: Entry, node: MapValue, envelope_model: Value | None) -> Verb | None:
    """The task's one verb (NIKA-PARSE-008 when it has none, -009 when it has several: the first is built)."""
    present = [k for k in G.VERBS if k in node]
    verb: Verb | None = None
    if not present:
        help = "Add exactly one of `infer:`, `exec:`, `invoke:` or `agent:`."
        if tid in G.TASK:  # `exec:` (or `with:`…) at the level of the task ids: a dedented body
            help = (
                f"`{tid}` is a task field, not a task id: it is probably part of the task above, "
                "written one indentation level too shallow; indent it under that task."
            )
        b.err("NIKA-PARSE-008", e.key.span, f"task `{tid}` declares no verb", help, task=tid)
    elif len(present) > 1:
        second = node.entry(present[1])
        first = node.entry(present[0])
        assert second is not None and first is not None
        b.err(
            "NIKA-PARSE-009",
            second.key.span,
            f"task `{tid}` declares {len(present)} verbs ({', '.join(present)})",
            "Keep one verb per task; split the work into separate tasks linked by `with:` or `after:`.",
            task=tid,
            related=(Label(first.key.span, f"`{present[0]}` declared here"),),
        )
    if present:
        ve = node.entry(present[0])
        assert ve is not None
        verb = verbs.verb(b, present[0], ve, tid, Where.BODY, "for_each" in node, envelope_model)
    return verb


def _inert(b: Builder, inert: Value | None, tid: str) -> Value | None:
    """``inert:``, a non-empty reason why fetched content is treated as data."""
    if inert is not None and not (
        isinstance(inert, ScalarValue) and isinstance(inert.value, str) and inert.value.strip()
    ):
        b.err(
            "NIKA-PARSE-019",
            inert.span,
            "`inert:` must be a non-empty reason",
            'Say why the fetched content is treated as data, e.g. `inert: "pickled model archived, never loaded"`.',
            task=tid,
        )
    return inert


def _for_each(b: Builder, node: Value | None, tid: str) -> Value | None:
    if node is None:
        return None
    if isinstance(node, ListValue) or (isinstance(node, ScalarValue) and isinstance(node.value, str)):
        return b.value(node, Where.FOR_EACH, tid)
    b.err(
        "NIKA-PARSE-019",
        node.span,
        f"`for_each:` must be a list or a `${{{{ }}}}` expression, not {describe(node)}",
        task=tid,
    )
    return None
