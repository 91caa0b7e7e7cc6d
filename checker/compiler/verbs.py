"""Verb bodies (02): ``infer``, ``exec``, ``invoke`` and ``agent``."""

from __future__ import annotations

import json

from checker.compiler.builder import Builder
from checker.core.argv import plain_words
from checker.core.diagnostics import Edit, Fix
from checker.core.vocab import Where
from checker.grammar import table as G
from checker.model.workflow import Agent, Exec, Infer, Invoke, Verb
from checker.parse.values import Entry, ListValue, MapValue, ScalarValue, TemplateValue, Value, describe

_EXAMPLES = {
    "infer": 'Write e.g. `infer: {prompt: "Summarize …"}`.',
    "exec": 'Write e.g. `exec: {command: ["echo", "hi"]}`.',
    "invoke": 'Write e.g. `invoke: {tool: "nika:read", args: {path: ./notes.md}}`.',
    "agent": 'Write e.g. `agent: {prompt: "…", tools: ["nika:read"]}`.',
}


def verb(
    b: Builder, kind: str, e: Entry, tid: str, where: Where, in_fe: bool, envelope_model: Value | None
) -> Verb | None:
    """Compile one verb body; every template string in it is a site of position ``where``."""
    node = e.value
    if not isinstance(node, MapValue):
        b.err(
            "NIKA-PARSE-019",
            node.span,
            f"`{kind}:` must be a mapping of its fields, not {describe(node)}",
            _EXAMPLES[kind],
            task=tid,
        )
        return None
    block = G.VERB_BLOCKS[kind]
    b.closed(node, block, task=tid)
    value = b.value(node, where, tid, in_fe)
    assert isinstance(value, MapValue)
    if kind == "infer":
        return infer(b, node, value, e, tid, envelope_model)
    if kind == "exec":
        return exec_(b, node, value, e, tid)
    if kind == "invoke":
        return invoke(b, node, value, e, tid)
    return agent(b, node, value, e, tid, envelope_model)


def _required(b: Builder, node: MapValue, field: str, e: Entry, tid: str, example: str) -> bool:
    if field in node:
        return True
    b.err("NIKA-PARSE-018", e.key.span, f"`{e.key_text}:` is missing its required `{field}:`", example, task=tid)
    return False


def _nested(b: Builder, v: Value | None, block: G.Block, tid: str) -> None:
    """Type-check the known fields of an open nested mapping (``thinking:``)."""
    if isinstance(v, MapValue):
        b.check_fields(block, v, tid)


def infer(b: Builder, node: MapValue, value: MapValue, e: Entry, tid: str, envelope_model: Value | None) -> Infer:
    _required(b, node, "prompt", e, tid, 'Add `prompt: "…"` with the text to send to the model.')
    b.check_fields(G.INFER, node, tid)
    _nested(b, node.get("thinking"), G.THINKING, tid)
    vision = node.get("vision")
    if isinstance(vision, ListValue):
        for item in vision.items:
            im = b.expect_mapping(item, "a `vision:` entry", task=tid)
            if im is not None:
                b.check_fields(G.VISION_ITEM, im, tid)
    own = value.get("model")
    return Infer(
        value,
        value.get("prompt"),
        value.get("system"),
        own,
        value.get("temperature"),
        value.get("max_tokens"),
        value.get("schema"),
        value.get("thinking"),
        value.get("vision"),
        own if own is not None else envelope_model,
    )


def exec_(b: Builder, node: MapValue, value: MapValue, e: Entry, tid: str) -> Exec:
    """``exec:``: one of ``command:``/``shell:``, each well formed, string ``env:`` values, a decode that applies."""
    shell = node.get("shell")
    b.exactly_one(
        node,
        e,
        G.EXEC.one_of,
        (
            "`exec:` needs `command:` (an argument list) or `shell:` (a command line)",
            'Add e.g. `command: ["echo", "hi"]`.',
        ),
        (
            "`exec:` declares both `command:` and `shell:`",
            "Keep one: `command:` runs an argument list without a shell, `shell:` runs a line through /bin/sh.",
        ),
        tid,
    )
    command = _exec_command(b, node, value, tid)
    if shell is not None and not (
        isinstance(shell, ScalarValue) and isinstance(shell.value, str) and shell.value.strip()
    ):
        b.err("NIKA-PARSE-019", shell.span, "`shell:` must be a non-empty command line string", task=tid)
    b.check_fields(G.EXEC, node, tid, skip=("command", "shell", "env"))
    _exec_env(b, node, tid)
    capture, decode = _exec_capture(b, node, value, tid)
    envv = value.get("env")
    return Exec(
        value,
        command,
        value.get("shell"),
        value.get("cwd"),
        envv if isinstance(envv, MapValue) else None,
        value.get("stdin"),
        capture,
        decode,
    )


def _exec_command(b: Builder, node: MapValue, value: MapValue, tid: str) -> tuple[Value, ...] | None:
    """The argument list of ``command:`` (None when absent or not a list), its shape judged."""
    cmd = node.get("command")
    shell = node.get("shell")
    if cmd is None:
        return None
    if isinstance(cmd, ScalarValue):
        ce = node.entry("command")
        assert ce is not None
        runnable = isinstance(cmd.value, str) and cmd.value.strip() and shell is None
        words = plain_words(cmd.value) if runnable else None
        fixes: tuple[Fix, ...] = ()
        if words:
            argv = "[" + ", ".join(json.dumps(w) for w in words) + "]"
            fixes = (Fix(f"Split it into the argument list `{argv}`", (Edit(cmd.span, argv),)),)
        elif runnable:
            # a shell line: `shell:` runs it, and needs `permits.exec: true` (a program list allows argv only)
            fixes = (
                Fix(
                    "Run the string through the shell (`shell:`, which needs `permits.exec: true`)",
                    (Edit(ce.key.span, "shell"),),
                    "unsafe",
                ),
            )
        b.err(
            "NIKA-PARSE-019",
            cmd.span,
            "`command:` is a string; it must be an argument list",
            f"Split it into a list (`command: {argv}`)."
            if words
            else 'Split it into a list (`command: ["echo", "hello"]`), or use `shell:` for a shell line '
            "(it needs `permits.exec: true`).",
            task=tid,
            fixes=fixes,
        )
        return None
    if isinstance(cmd, ListValue):
        if not cmd.items:
            b.err(
                "NIKA-PARSE-019",
                cmd.span,
                "`command:` is an empty list",
                "Name at least the program to run.",
                task=tid,
            )
        for item in cmd.items:
            # Every item is a string (the schema's `items: {type: string}`; 02: "semantics never fork
            # on a YAML type"): a number is quoted by its fix, never stringified behind the author's back.
            if not (isinstance(item, ScalarValue) and isinstance(item.value, str)):
                quotable = isinstance(item, ScalarValue) and item.value is not None and not isinstance(item.value, bool)
                b.err(
                    "NIKA-PARSE-019",
                    item.span,
                    f"`command:` items must be strings, not {describe(item)}",
                    "Quote the item.",
                    task=tid,
                    fixes=(Fix(f"Quote it: `{json.dumps(item.raw)}`", (Edit(item.span, json.dumps(item.raw)),)),)
                    if quotable and isinstance(item, ScalarValue)
                    else (),
                )
        cv = value.get("command")
        assert isinstance(cv, ListValue)
        return cv.items
    b.err("NIKA-PARSE-019", cmd.span, f"`command:` must be a list of strings, not {describe(cmd)}", task=tid)
    return None


def _exec_env(b: Builder, node: MapValue, tid: str) -> None:
    """``exec.env``: a mapping of string values."""
    env = node.get("env")
    if env is not None and (em := b.expect_mapping(env, "`exec.env`", task=tid)) is not None:
        for k, ee in em.items():
            if not (isinstance(ee.value, ScalarValue) and isinstance(ee.value.value, str)):
                b.err(
                    "NIKA-PARSE-019",
                    ee.value.span,
                    f"environment variable `{k}` must be a string, not {describe(ee.value)}",
                    "Quote the value.",
                    task=tid,
                )


def _exec_capture(b: Builder, node: MapValue, value: MapValue, tid: str) -> tuple[str, str | None]:
    """The effective ``capture:`` and ``decode:`` (no decode with a structured capture)."""
    capture = _enum(value, G.EXEC["capture"])
    decode_v = value.get("decode")
    decode: str | None = _enum(value, G.EXEC["decode"])
    if decode_v is not None and capture == "structured":
        de = node.entry("decode")
        assert de is not None
        b.err(
            "NIKA-PARSE-025",
            de.key.span,
            "`decode:` does not apply with `capture: structured`",
            "Remove `decode:`; the structured capture is already an object (type it with `returns:`).",
            task=tid,
        )
    if capture == "structured":
        decode = None
    return capture, decode


def _enum(value: MapValue, f: G.Field) -> str:
    """The effective value of a closed-set field: as written when valid, else its default."""
    v = value.get(f.name)
    if isinstance(v, ScalarValue) and v.value in f.values:
        return str(v.value)
    return str(f.default)


def invoke(b: Builder, node: MapValue, value: MapValue, e: Entry, tid: str) -> Invoke:
    tool_node = node.get("tool")
    wf = node.get("workflow")
    args = node.get("args")
    tool: str | None = None
    b.exactly_one(
        node,
        e,
        G.INVOKE.one_of,
        (
            "`invoke:` needs `tool:` (or `workflow:` for a child workflow)",
            'Add e.g. `tool: "nika:read"` with its `args:`.',
        ),
        ("`invoke:` declares both `tool:` and `workflow:`", "Keep one target per task."),
        tid,
    )
    if tool_node is not None:
        if isinstance(tool_node, ScalarValue) and isinstance(tool_node.value, str):
            tool = tool_node.value
        else:
            b.err("NIKA-PARSE-019", tool_node.span, f"`tool:` must be a string, not {describe(tool_node)}", task=tid)
    if (
        args is not None
        and not isinstance(args, MapValue)
        and not (isinstance(args, ScalarValue) and args.value is None)
    ):
        b.err(
            "NIKA-PARSE-019",
            args.span,
            f"`args:` must be a mapping of argument names to values, not {describe(args)}",
            "Write e.g. `args: {path: ./notes.md}`.",
            task=tid,
        )
    if wf is not None and not (isinstance(wf, ScalarValue) and isinstance(wf.value, str)):
        b.err("NIKA-PARSE-019", wf.span, f"`workflow:` must be a path string, not {describe(wf)}", task=tid)
    tv = value.get("tool")
    av = value.get("args")
    return Invoke(
        value,
        tool,
        tv if isinstance(tv, ScalarValue) else None,
        av if isinstance(av, MapValue) else None,
        value.get("workflow"),
    )


def agent(b: Builder, node: MapValue, value: MapValue, e: Entry, tid: str, envelope_model: Value | None) -> Agent:
    _required(b, node, "prompt", e, tid, 'Add `prompt: "…"` describing the job.')
    b.check_fields(G.AGENT, node, tid)
    lists: dict[str, tuple[ScalarValue, ...]] = {}
    for name in ("tools", "skills"):
        lv = value.get(name)
        items = lv.items if isinstance(lv, ListValue) else ()
        lists[name] = tuple(i for i in items if isinstance(i, ScalarValue) and isinstance(i.value, str))
    own = value.get("model")
    turns = value.get("max_turns")
    budget: int | None
    if turns is None:
        budget = G.DEFAULT_MAX_TURNS
    elif isinstance(turns, ScalarValue) and not isinstance(turns, TemplateValue) and isinstance(turns.value, int):
        budget = turns.value
    else:
        budget = None
    return Agent(
        value,
        value.get("prompt"),
        value.get("system"),
        own,
        lists["tools"],
        lists["skills"],
        turns,
        value.get("max_tokens_total"),
        value.get("temperature"),
        value.get("schema"),
        budget,
        own if own is not None else envelope_model,
    )
