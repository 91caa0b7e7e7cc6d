"""Task blocks (03, 05): ``with``, ``after``, ``retry``, ``on_error``, ``on_finally``, ``output``
and ``declassify``."""

from __future__ import annotations

from checker.compiler import verbs
from checker.compiler.builder import Builder, is_template_text, shown
from checker.core.codes import CODE_RE
from checker.core.diagnostics import Edit, Fix
from checker.core.suggest import did_you_mean
from checker.core.vocab import PREDICATES, RESERVED_BINDINGS, OnErrorAction, Predicate, Where
from checker.grammar import table as G
from checker.grammar.table import DEFAULT_FINALLY_TIMEOUT_MS
from checker.model.workflow import AfterEntry, Binding, Declassify, Duration, FinallyStep, OnError, Retry
from checker.parse.values import ListValue, MapValue, ScalarValue, Value, describe

_PREDICATE_ALIASES = {
    "succeeded": "success",
    "successful": "success",
    "completed": "terminal",
    "complete": "terminal",
    "done": "terminal",
    "finished": "terminal",
    "always": "terminal",
    "passed": "success",
    "ok": "success",
    "failed": "failure",
    "error": "failure",
    "errored": "failure",
    "skip": "skipped",
}


def predicate_guess(text: str) -> str | None:
    """The predicate a mistyped or foreign spelling (``completed``, ``failed``) most likely means."""
    return _PREDICATE_ALIASES.get(text.lower()) or did_you_mean(text, PREDICATES)


def with_block(b: Builder, node: Value | None, tid: str, in_fe: bool) -> tuple[Binding, ...]:
    m = b.expect_mapping(node, "`with:`", task=tid)
    if m is None:
        return ()
    out = []
    for k, e in m.items():
        if k in RESERVED_BINDINGS:
            b.err(
                "NIKA-PARSE-013",
                e.key.span,
                f"`{k}` is a reserved name and cannot be a `with:` binding",
                f"Rename it, e.g. `{k}_value`.",
                task=tid,
            )
        out.append(Binding(k, e.key, b.value(e.value, Where.WITH, tid, in_fe, binding=k)))
    return tuple(out)


def after_block(b: Builder, node: Value | None, tid: str) -> tuple[AfterEntry, ...]:
    if node is None:
        return ()
    if isinstance(node, ListValue):
        b.err(
            "NIKA-PARSE-019",
            node.span,
            "`after:` is a map of `producer: predicate`, not a list",
            "Write it as `after: {build: success}`.",
            task=tid,
        )
        return ()
    m = b.expect_mapping(node, "`after:`", task=tid)
    if m is None:
        return ()
    out = []
    for k, e in m.items():
        v = e.value
        text = v.value if isinstance(v, ScalarValue) and isinstance(v.value, str) else None
        pred: Predicate | None = Predicate(text) if text in PREDICATES else None
        if pred is None:
            guess = predicate_guess(str(shown(v)))
            fixes = (Fix(f"Replace with `{guess}`", (Edit(v.span, guess),)),) if guess else ()
            b.err(
                "NIKA-DAG-005",
                v.span,
                f"`{shown(v)}` is not an `after:` predicate",
                (f"Did you mean `{guess}`? " if guess else "") + "Use one of success, failure, skipped or terminal.",
                task=tid,
                fixes=fixes,
            )
        out.append(AfterEntry(k, pred, e.key, v))
    return tuple(out)


def retry(b: Builder, node: Value | None, tid: str) -> Retry | None:
    if node is None:
        return None
    if not isinstance(node, MapValue):
        b.err(
            "NIKA-PARSE-011",
            node.span,
            f"`retry:` must be a mapping, not {describe(node)}",
            "Write `retry: {max_attempts: 3}`.",
            task=tid,
        )
        return None
    before = len(b.diags)
    b.closed(node, G.RETRY, task=tid)
    if "max_attempts" not in node:
        b.err(
            "NIKA-PARSE-011",
            node.span,
            "`retry:` needs `max_attempts:`",
            "Add `max_attempts: 3` (the first try counts).",
            task=tid,
        )
    b.check_fields(G.RETRY, node, tid, skip=("on_codes",))
    codes = code_list(b, node.get("on_codes"), "NIKA-PARSE-011", "retry.on_codes", tid, allow_empty=True)
    if len(b.diags) > before or codes is None:
        return None

    def get(name: str) -> object:
        v = node.get(name)
        return v.value if isinstance(v, ScalarValue) else G.RETRY[name].default

    return Retry(
        get("max_attempts"),  # type: ignore[arg-type]
        get("backoff_ms"),  # type: ignore[arg-type]
        get("backoff_strategy"),  # type: ignore[arg-type]
        get("backoff_max_ms"),  # type: ignore[arg-type]
        get("jitter"),  # type: ignore[arg-type]
        codes,
        node.span,
    )


def code_list(
    b: Builder, node: Value | None, code: str, what: str, tid: str, allow_empty: bool
) -> tuple[str, ...] | None:
    if node is None:
        return ()
    if not isinstance(node, ListValue):
        b.err(code, node.span, f"`{what}` must be a list of NIKA codes", task=tid)
        return None
    if not node.items and not allow_empty:
        b.err(code, node.span, f"`{what}` must list at least one code", "Remove the field or name a code.", task=tid)
        return None
    out = []
    ok = True
    for item in node.items:
        v = item.value if isinstance(item, ScalarValue) else None
        if not (isinstance(v, str) and CODE_RE.match(v)):
            b.err(
                code,
                item.span,
                f"`{shown(item)}` is not a NIKA error code",
                "Codes look like `NIKA-TIMEOUT-001` or `NIKA-BUILTIN-FETCH-001`.",
                task=tid,
            )
            ok = False
        else:
            out.append(v)
    return tuple(out) if ok else None


def on_error(b: Builder, node: Value | None, tid: str, in_fe: bool = False) -> OnError | None:
    if node is None:
        return None
    if not isinstance(node, MapValue):
        b.err(
            "NIKA-PARSE-012",
            node.span,
            f"`on_error:` must be a mapping, not {describe(node)}",
            "Write e.g. `on_error: {skip: true}`.",
            task=tid,
        )
        return None
    bad = False
    for e in node.entries:
        k = e.key_text
        if k is not None and k not in G.ON_ERROR:
            if k in ("fallback", "value", "default"):
                help = "Use `recover: <value>`; the legacy spellings are gone."
            else:
                guess = did_you_mean(k, G.ON_ERROR.names)
                help = f"Did you mean `{guess}`?" if guess else f"Allowed: {', '.join(G.ON_ERROR.names)}."
            b.err("NIKA-PARSE-012", e.key.span, f"unknown field `{k}` in `on_error:`", help, task=tid)
            bad = True
    actions = [k for k in G.ON_ERROR_ACTIONS if k in node]
    if len(actions) > 1:
        second = node.entry(actions[1])
        assert second is not None
        b.err(
            "NIKA-PARSE-012",
            second.key.span,
            f"`on_error:` declares {' and '.join(f'`{a}`' for a in actions)}; they exclude each other",
            "Keep exactly one action.",
            task=tid,
        )
        return None
    if not actions:
        if not bad:
            b.err(
                "NIKA-PARSE-012",
                node.span,
                "`on_error:` declares no action",
                "Add one of `recover: <value>`, `skip: true` or `fail_workflow: true`.",
                task=tid,
            )
        return None
    action = actions[0]
    if action in ("skip", "fail_workflow"):
        v = node.get(action)
        if not (isinstance(v, ScalarValue) and v.value is True):
            assert v is not None
            b.err("NIKA-PARSE-012", v.span, f"`{action}:` must be `true`", task=tid)
            bad = True
    codes = code_list(b, node.get("on_codes"), "NIKA-PARSE-012", "on_error.on_codes", tid, allow_empty=False)
    if codes is None or bad:
        return None
    rn = node.get("recover")
    recover = b.value(rn, Where.RECOVER, tid, in_fe) if rn is not None else None
    return OnError(OnErrorAction(action), recover, codes, node.span)


def when(b: Builder, when: Value | None, tid: str, where: Where, in_fe: bool = False) -> Value | None:
    """A `when:` guard: a `${{ … }}` boolean expression or the literal true/false."""
    if when is None:
        return None
    if isinstance(when, ScalarValue) and isinstance(when.value, (bool, str)):
        if isinstance(when.value, str) and not is_template_text(when):
            b.err(
                "NIKA-VAR-005",
                when.span,
                "`when:` must be a `${{ … }}` boolean expression or the literal true/false",
                'Wrap the condition: `when: "${{ … }}"`.',
                task=tid,
            )
        return b.value(when, where, tid, in_fe)
    b.err(
        "NIKA-PARSE-019",
        when.span,
        f"`when:` must be a boolean or a `${{{{ }}}}` string, not {describe(when)}",
        task=tid,
    )
    return None


def on_finally(b: Builder, node: Value | None, tid: str, envelope_model: Value | None) -> tuple[FinallyStep, ...]:
    if node is None:
        return ()
    if not isinstance(node, ListValue):
        b.err("NIKA-PARSE-019", node.span, "`on_finally:` must be a list of cleanup steps", task=tid)
        return ()
    out = []
    for item in node.items:
        m = b.expect_mapping(item, "an `on_finally:` step", task=tid)
        if m is None:
            continue
        b.closed(m, G.FINALLY_STEP, task=tid)
        present = [k for k in G.VERBS if k in m]
        if len(present) != 1:
            b.err(
                "NIKA-PARSE-008" if not present else "NIKA-PARSE-009",
                m.span,
                "an `on_finally:` step needs exactly one verb",
                "Give it one of `infer:`, `exec:`, `invoke:` or `agent:`.",
                task=tid,
            )
        verb = None
        if present:
            ve = m.entry(present[0])
            assert ve is not None
            verb = verbs.verb(b, present[0], ve, tid, Where.FINALLY, False, envelope_model)
        guard = when(b, m.get("when"), tid, Where.FINALLY)
        timeout = b.duration(m.get("timeout"), tid)
        out.append(FinallyStep(m, verb, guard, timeout or Duration(DEFAULT_FINALLY_TIMEOUT_MS)))
    return tuple(out)


def output_block(b: Builder, node: Value | None, tid: str) -> tuple[Binding, ...]:
    m = b.expect_mapping(node, "`output:`", task=tid)
    if m is None:
        return ()
    out = []
    for k, e in m.items():
        if k in RESERVED_BINDINGS:
            b.err(
                "NIKA-PARSE-013",
                e.key.span,
                f"`{k}` is a reserved name and cannot be an `output:` binding",
                f"Rename it, e.g. `{k}_value`; `tasks.{tid}.{k}` already means the task's own {k}.",
                task=tid,
            )
        v = e.value
        if not (isinstance(v, ScalarValue) and isinstance(v.value, str)):
            b.err("NIKA-PARSE-019", v.span, f"output binding `{k}` must be a jq string, not {describe(v)}", task=tid)
            value = v
        else:
            value = b.value(v, Where.OUTPUT, tid)
        out.append(Binding(k, e.key, value))
    return tuple(out)


def declassify(b: Builder, node: Value | None, tid: str) -> tuple[Declassify, ...]:
    if node is None:
        return ()
    if not isinstance(node, ListValue):
        b.err(
            "NIKA-PARSE-019",
            node.span,
            f"`declassify:` must be a list of `{{from, to: trusted, because}}` entries, not {describe(node)}",
            task=tid,
        )
        return ()
    out = []
    for item in node.items:
        m = b.expect_mapping(item, "a `declassify:` entry", task=tid)
        if m is None:
            continue
        b.closed(m, G.DECLASSIFY, task=tid)
        missing = [f for f in G.DECLASSIFY.required if f not in m]
        if missing:
            b.err(
                "NIKA-PARSE-019",
                m.span,
                f"a `declassify:` entry needs {', '.join(f'`{f}:`' for f in missing)}",
                'Write `{from: with.url, to: trusted, because: "…"}`.',
                task=tid,
            )
        if not b.check_fields(G.DECLASSIFY, m, tid) or missing:
            continue
        src, because = m.get("from"), m.get("because")
        assert isinstance(src, ScalarValue) and isinstance(because, ScalarValue)
        out.append(Declassify(src, because.value, m.span))
    return tuple(out)
