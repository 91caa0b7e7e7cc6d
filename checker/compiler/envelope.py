"""The envelope (01): the version marker, ``workflow:``, envelope keys, ``model:`` and ``outputs:``;
and :func:`workflow`, which compiles a whole document."""

from __future__ import annotations

import re

from checker.compiler import declarations, tasks
from checker.compiler.builder import Builder, shown
from checker.core.diagnostics import Edit, Fix
from checker.core.source import Span
from checker.core.suggest import did_you_mean
from checker.core.vocab import Where
from checker.grammar import table as G
from checker.model.workflow import Output, Workflow
from checker.parse.values import Entry, MapValue, ScalarValue, Value, describe

WORKFLOW_ID_RE = re.compile(r"^[a-z][a-z0-9-]*\Z")


def workflow(b: Builder, root: Value) -> Workflow | None:
    """Compile the whole document rooted at ``root``."""
    if not isinstance(root, MapValue):
        b.err(
            "NIKA-PARSE-019",
            root.span,
            f"a workflow file must be a mapping of envelope fields, not {describe(root)}",
            "Start the file with `nika: v1`, `workflow: {id: …}` and `tasks:`.",
        )
        return None
    if not any(k in root for k in ("nika", "workflow", "tasks")):
        # Some other YAML document (a CI config, a compose file): one finding says so, instead
        # of three missing blocks and an unknown field per key.
        b.err(
            "NIKA-PARSE-002",
            Span(root.span.start, root.span.start),
            "this is not a Nika workflow: it has none of `nika:`, `workflow:` and `tasks:`",
            "Start the file with `nika: v1`, `workflow: {id: …}` and `tasks:`; "
            "if it is another kind of YAML, name it without the `.nika.yaml` suffix.",
        )
        return None
    envelope_keys(b, root)
    wid = nika_and_workflow(b, root)
    description = None
    wf_node = root.get("workflow")
    if isinstance(wf_node, MapValue) and isinstance(d := wf_node.get("description"), ScalarValue):
        description = d.value if isinstance(d.value, str) else None
    types = declarations.types(b, root)
    inputs = declarations.inputs(b, root)
    config = declarations.config(b, root)
    const = declarations.const(b, root)
    secrets = declarations.secrets(b, root)
    model = envelope_model(b, root)
    permits = declarations.permits(b, root.get("permits"))
    run = declarations.run(b, root.get("run"))
    policy = declarations.policy(b, root.get("policy"))
    task_map = tasks.tasks(b, root, model)
    outs = outputs(b, root.get("outputs"))
    return Workflow(
        id=wid,
        value=root,
        description=description,
        model=model,
        types=types,
        inputs=inputs,
        config=config,
        const=const,
        secrets=secrets,
        permits=permits,
        run=run,
        policy=policy,
        tasks=task_map,
        outputs=outs,
    )


def envelope_keys(b: Builder, root: MapValue) -> None:
    def special(k: str, e: Entry) -> bool:
        if k == "vars":
            b.err(
                "NIKA-VALUES-001",
                e.key.span,
                "the `vars:` block no longer exists",
                "Declare per-run values under `inputs:` (with a `type`), fixed values under `const:`.",
            )
            return True
        if k == "env":
            b.err(
                "NIKA-VALUES-002",
                e.key.span,
                "the `env:` block no longer exists",
                "Declare deployment settings under `config:` and credentials under `secrets:`.",
            )
            return True
        if k == "description":
            b.err(
                "NIKA-PARSE-021",
                e.key.span,
                "`description:` belongs inside `workflow:`, not at the top level",
                "Move it under `workflow:` as `description: …`.",
            )
            return True
        if k in ("yaml-language-server", "$schema") or k.startswith("yaml-language-server"):
            b.err(
                "NIKA-PARSE-005",
                e.key.span,
                "this line is an editor schema modeline that lost its `# ` comment prefix",
                "Restore it as `# yaml-language-server: $schema=…`, or delete the line.",
                fixes=(Fix("Comment the modeline out", (Edit(Span(e.key.span.start, e.key.span.start), "# "),)),),
            )
            return True
        if k in G.FOREIGN_ENVELOPE_KEYS and did_you_mean(k, G.ENVELOPE.names) is None:
            teach = G.FOREIGN_ENVELOPE_KEYS[k]
            b.err(
                "NIKA-PARSE-005", e.key.span, f"`{k}` is not a Nika envelope field", teach[0].upper() + teach[1:] + "."
            )
            return True
        return False

    b.closed(root, G.ENVELOPE, special=special)


def nika_and_workflow(b: Builder, root: MapValue) -> str | None:
    """The ``nika: v1`` marker and the ``workflow:`` block; the workflow id when it is valid."""
    _version_marker(b, root)
    head = Span(root.span.start, root.span.start)
    wf = root.entry("workflow")
    if wf is None:
        b.err(
            "NIKA-PARSE-002",
            head,
            "the `workflow:` block is missing",
            "Add `workflow:` with an `id:` such as `id: my-workflow`.",
        )
        return None
    v = wf.value
    if isinstance(v, ScalarValue) and v.value is not None:
        indent = " " * (b.src.line_col(wf.key.span.start).column + 1)
        b.err(
            "NIKA-PARSE-020",
            v.span,
            "`workflow:` is an object now, not a scalar",
            f"Write it as `workflow:` with `id: {v.raw}` nested under it.",
            fixes=(Fix("Nest the value under `id:`", (Edit(v.span, f"\n{indent}id: {v.raw}"),)),),
        )
        return None
    m = b.expect_mapping(v, "`workflow:`")
    if m is None:
        return None
    b.closed(m, G.WORKFLOW)
    idn = m.get("id")
    if idn is None:
        b.err("NIKA-PARSE-002", wf.key.span, "`workflow:` has no `id:`", "Add `id: my-workflow` under `workflow:`.")
        return None
    if not (isinstance(idn, ScalarValue) and isinstance(idn.value, str) and WORKFLOW_ID_RE.match(idn.value)):
        _not_kebab_case(b, idn)
        return None
    desc = m.get("description")
    if desc is not None and not (isinstance(desc, ScalarValue) and isinstance(desc.value, str)):
        b.err("NIKA-PARSE-019", desc.span, "`workflow.description` must be a string")
    return idn.value


def _version_marker(b: Builder, root: MapValue) -> None:
    """``nika: v1``, present and written exactly so."""
    head = Span(root.span.start, root.span.start)
    nika = root.entry("nika")
    if nika is None:
        b.err(
            "NIKA-PARSE-002",
            head,
            "the `nika:` version marker is missing",
            "Add `nika: v1` as the first line.",
            fixes=(Fix("Insert `nika: v1`", (Edit(head, "nika: v1\n"),)),),
        )
    elif not (isinstance(nika.value, ScalarValue) and nika.value.value == "v1"):
        b.err(
            "NIKA-PARSE-003",
            nika.value.span,
            f"unsupported version marker `{shown(nika.value)}`",
            "This grammar is `nika: v1`, written exactly so.",
            fixes=(Fix("Replace with `v1`", (Edit(nika.value.span, "v1"),)),),
        )


def _not_kebab_case(b: Builder, idn: Value) -> None:
    """NIKA-PARSE-004, with a kebab-case spelling of the id as a fix."""
    raw = shown(idn)
    suggestion = re.sub(r"[^a-z0-9-]+", "-", str(raw).lower()).strip("-")
    if suggestion and not suggestion[0].isalpha():
        suggestion = "w-" + suggestion
    fixes = (Fix(f"Rename to `{suggestion}`", (Edit(idn.span, suggestion),)),) if suggestion else ()
    b.err(
        "NIKA-PARSE-004",
        idn.span,
        f"workflow id `{raw}` is not kebab-case",
        "Use lowercase letters, digits and `-`, starting with a letter"
        + (f" (e.g. `{suggestion}`)." if suggestion else "."),
        fixes=fixes,
    )


def envelope_model(b: Builder, root: MapValue) -> Value | None:
    """The envelope's default ``model:``; a templated one is an expression site like any other."""
    node = root.get("model")
    if node is None:
        return None
    if not (isinstance(node, ScalarValue) and isinstance(node.value, str)):
        b.err("NIKA-PARSE-019", node.span, f"`model:` must be a `<provider>/<name>` string, not {describe(node)}")
        return None
    return b.value(node, Where.ENVELOPE)


def outputs(b: Builder, node: Value | None) -> tuple[Output, ...]:
    if node is None:
        return ()
    m = b.expect_mapping(node, "`outputs:`")
    if m is None:
        return ()
    out = []
    for k, e in m.items():
        v = e.value
        if isinstance(v, ScalarValue) and isinstance(v.value, str):
            out.append(Output(k, e.key, b.value(v, Where.OUTPUTS)))
        elif isinstance(v, MapValue):
            b.closed(v, G.OUTPUT, f"output `{k}`")
            val_node = v.get("value")
            if val_node is None:
                b.err(
                    "NIKA-PARSE-019",
                    e.key.span,
                    f"output `{k}` has no `value:`",
                    'Add `value: "${{ tasks.x.output }}"`.',
                )
            elif not (isinstance(val_node, ScalarValue) and isinstance(val_node.value, str)):
                b.err("NIKA-PARSE-019", val_node.span, f"output `{k}` value must be a `${{{{ }}}}` string")
            value = b.value(val_node, Where.OUTPUTS) if isinstance(val_node, ScalarValue) else None
            out.append(
                Output(k, e.key, value if isinstance(value, ScalarValue) and value.is_string else None, v.get("type"))
            )
        else:
            b.err(
                "NIKA-PARSE-019",
                v.span,
                f"output `{k}` must be a `${{{{ }}}}` string or `{{value, type}}`, not {describe(v)}",
            )
    return tuple(out)
