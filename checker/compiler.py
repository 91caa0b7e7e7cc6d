"""Node tree -> compiled model, in one pass, with the structural NIKA-PARSE findings.

The compiler knows the shape of the v1 grammar (closed field sets in :mod:`checker.fields`):
envelope, tasks, verb bodies, retry/on_error blocks, durations. It reports what is malformed
and still builds as much of the model as it can, so later rules (graph, references, tools)
judge everything that is judgeable. Every ``${{ … }}`` string it meets is parsed once here and
recorded as an :class:`~checker.model.ExprSite`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from checker import fields as F
from checker.codes import CODE_RE, report
from checker.diagnostics import Diagnostic, Edit, Fix, Label
from checker.expr import has_island, parse_template
from checker.model import (
    PREDICATES,
    RESERVED_BINDINGS,
    VERBS,
    AfterEntry,
    Agent,
    Binding,
    Duration,
    Exec,
    ExprSite,
    FinallyStep,
    Infer,
    Invoke,
    Named,
    OnError,
    Output,
    Retry,
    Task,
    Verb,
    Workflow,
)
from checker.nodes import Entry, Mapping, Node, Scalar, Sequence, describe
from checker.source import SourceText, Span

WORKFLOW_ID_RE = re.compile(r"^[a-z][a-z0-9-]*\Z")
TASK_ID_RE = re.compile(r"^[a-z][a-z0-9_]*\Z")
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_MS = {"h": 3_600_000.0, "m": 60_000.0, "s": 1000.0, "ms": 1.0, "us": 1e-3, "µs": 1e-3, "ns": 1e-6}
UNIT_RANK = {"h": 0, "m": 1, "s": 2, "ms": 3, "us": 4, "µs": 4, "ns": 5}
MAX_TIMEOUT_MS = 24 * 3_600_000.0


def parse_duration(text: str) -> tuple[float | None, str | None]:
    """Parse a Go-style duration; returns (milliseconds, None) or (None, reason)."""
    pos = 0
    total = 0.0
    last_rank = -1
    if not text:
        return None, "it is empty"
    while pos < len(text):
        m = _DURATION_PART.match(text, pos)
        if m is None:
            bad = text[pos:]
            if re.match(r"[0-9.]+[dwy]", bad):
                return None, 'days, weeks and years are not duration units (use h, e.g. "48h")'
            return None, f"`{bad}` is not `<number><unit>` with a unit among h, m, s, ms, us, ns"
        unit = m.group(2)
        rank = UNIT_RANK[unit]
        if rank <= last_rank:
            return None, 'units must go from largest to smallest without repeating (e.g. "1h30m")'
        last_rank = rank
        total += float(m.group(1)) * _UNIT_MS[unit]
        pos = m.end()
    if total <= 0:
        return None, "a timeout must be positive"
    if total > MAX_TIMEOUT_MS:
        return None, "it exceeds the 24h maximum"
    return total, None


class Compiler:
    """Builds a :class:`Workflow` from a root mapping, collecting findings and expression sites."""

    def __init__(self, src: SourceText, duplicates: tuple[tuple[Scalar, Scalar], ...] = ()) -> None:
        self.src = src
        self.diags: list[Diagnostic] = []
        self.sites: list[ExprSite] = []
        self.duplicates = duplicates
        self._task_keys: set[int] = set()

    def duplicate_keys(self) -> None:
        """The grammar-level twin of NIKA-YAML-004: no silent last-wins (NIKA-PARSE-017).

        Duplicate task ids already got the precise NIKA-PARSE-007 in :meth:`tasks`.
        """
        for key, first in self.duplicates:
            if id(key) in self._task_keys:
                continue
            self.err(
                "NIKA-PARSE-017",
                key.span,
                f"`{key.value}` appears twice in the same mapping",
                "Keep a single entry; merge the two values by hand.",
                related=(Label(first.span, f"`{key.value}` first written here"),),
            )

    # -- reporting helpers ------------------------------------------------------------------
    def err(self, code: str, span: Span, message: str, help: str | None = None, **kw: object) -> None:
        self.diags.append(report(code, span, message, help, **kw))  # type: ignore[arg-type]

    def closed(
        self,
        node: Mapping,
        allowed: dict[str, str],
        what: str,
        *,
        task: str | None = None,
        special: Callable[[str, Entry], bool] | None = None,
    ) -> None:
        """Refuse keys outside a closed field set (NIKA-PARSE-005) with a did-you-mean."""
        for e in node.entries:
            k = e.key_text
            if k is None or k in allowed or k == "<<":
                continue
            if special is not None and special(k, e):
                continue
            guess = F.did_you_mean(k, allowed)
            fixes: tuple[Fix, ...] = ()
            if guess:
                help = f"Did you mean `{guess}`?"
                fixes = (Fix(f"Rename `{k}` to `{guess}`", (Edit(e.key.span, guess),)),)
            else:
                help = f"Allowed here: {', '.join(allowed)}."
            self.err("NIKA-PARSE-005", e.key.span, f"unknown field `{k}` in {what}", help, fixes=fixes, task=task)

    def expect_mapping(
        self, node: Node | None, what: str, code: str = "NIKA-PARSE-019", task: str | None = None
    ) -> Mapping | None:
        if node is None:
            return None
        if isinstance(node, Mapping):
            return node
        self.err(code, node.span, f"{what} must be a mapping, not {describe(node)}", task=task)
        return None

    def site(self, node: Node | None, where: str, task: str | None, in_for_each: bool = False) -> None:
        """Record every ``${{ }}`` string inside ``node`` (recursively) as an expression site."""
        if node is None:
            return
        stack = [node]
        while stack:
            n = stack.pop()
            if isinstance(n, Scalar):
                if n.style is not None and isinstance(n.value, str) and has_island(n.value):
                    self.sites.append(ExprSite(task, where, n, parse_template(n.value), in_for_each))
            elif isinstance(n, Mapping):
                stack.extend(e.value for e in reversed(n.entries))
            elif isinstance(n, Sequence):
                stack.extend(reversed(n.items))

    # -- envelope ---------------------------------------------------------------------------
    def workflow(self, root: Node) -> Workflow | None:
        if not isinstance(root, Mapping):
            self.err(
                "NIKA-PARSE-019",
                root.span,
                f"a workflow file must be a mapping of envelope fields, not {describe(root)}",
                "Start the file with `nika: v1`, `workflow: {id: …}` and `tasks:`.",
            )
            return None
        self.envelope_keys(root)
        wid = self.nika_and_workflow(root)
        description = None
        wf_node = root.get("workflow")
        if isinstance(wf_node, Mapping) and isinstance(wf_node.get("description"), Scalar):
            d = wf_node.get("description")
            assert isinstance(d, Scalar)
            description = d.value if isinstance(d.value, str) else None
        types = self.named_section(root, "types", self.type_entry)
        inputs = self.named_section(root, "inputs", self.input_entry)
        config = self.named_section(root, "config", self.config_entry)
        const = self.named_section(root, "const", self.const_entry)
        secrets = self.named_section(root, "secrets", self.secret_entry)
        model = root.get("model")
        if model is not None and not (isinstance(model, Scalar) and isinstance(model.value, str)):
            self.err(
                "NIKA-PARSE-019", model.span, f"`model:` must be a `<provider>/<name>` string, not {describe(model)}"
            )
        permits = root.get("permits")
        self.permits(permits)
        run = root.get("run")
        self.run_block(run)
        policy = root.get("policy")
        self.policy(policy)
        tasks = self.tasks(root)
        outputs = self.outputs(root.get("outputs"))
        return Workflow(
            id=wid,
            root=root,
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
            tasks=tasks,
            outputs=outputs,
        )

    def envelope_keys(self, root: Mapping) -> None:
        def special(k: str, e: Entry) -> bool:
            if k == "vars":
                self.err(
                    "NIKA-VALUES-001",
                    e.key.span,
                    "the `vars:` block no longer exists",
                    "Declare per-run values under `inputs:` (with a `type`), fixed values under `const:`.",
                )
                return True
            if k == "env":
                self.err(
                    "NIKA-VALUES-002",
                    e.key.span,
                    "the `env:` block no longer exists",
                    "Declare deployment settings under `config:` and credentials under `secrets:`.",
                )
                return True
            if k == "description":
                self.err(
                    "NIKA-PARSE-021",
                    e.key.span,
                    "`description:` belongs inside `workflow:`, not at the top level",
                    "Move it under `workflow:` as `description: …`.",
                )
                return True
            if k in ("yaml-language-server", "$schema") or k.startswith("yaml-language-server"):
                self.err(
                    "NIKA-PARSE-005",
                    e.key.span,
                    "this line is an editor schema modeline that lost its `# ` comment prefix",
                    "Restore it as `# yaml-language-server: $schema=…`, or delete the line.",
                    fixes=(Fix("Comment the modeline out", (Edit(Span(e.key.span.start, e.key.span.start), "# "),)),),
                )
                return True
            if k in F.FOREIGN_ENVELOPE_KEYS and F.did_you_mean(k, F.ENVELOPE) is None:
                self.err(
                    "NIKA-PARSE-005",
                    e.key.span,
                    f"`{k}` is not a Nika envelope field",
                    F.FOREIGN_ENVELOPE_KEYS[k][0].upper() + F.FOREIGN_ENVELOPE_KEYS[k][1:] + ".",
                )
                return True
            return False

        self.closed(root, F.ENVELOPE, "the workflow envelope", special=special)

    def nika_and_workflow(self, root: Mapping) -> str | None:
        head = Span(root.span.start, root.span.start)
        nika = root.entry("nika")
        if nika is None:
            self.err(
                "NIKA-PARSE-002",
                head,
                "the `nika:` version marker is missing",
                "Add `nika: v1` as the first line.",
                fixes=(Fix("Insert `nika: v1`", (Edit(head, "nika: v1\n"),)),),
            )
        elif not (isinstance(nika.value, Scalar) and nika.value.value == "v1"):
            shown = nika.value.raw if isinstance(nika.value, Scalar) else describe(nika.value)
            self.err(
                "NIKA-PARSE-003",
                nika.value.span,
                f"unsupported version marker `{shown}`",
                "This grammar is `nika: v1`, written exactly so.",
                fixes=(Fix("Replace with `v1`", (Edit(nika.value.span, "v1"),)),),
            )
        wf = root.entry("workflow")
        if wf is None:
            self.err(
                "NIKA-PARSE-002",
                head,
                "the `workflow:` block is missing",
                "Add `workflow:` with an `id:` such as `id: my-workflow`.",
            )
            return None
        v = wf.value
        if isinstance(v, Scalar) and v.value is not None:
            indent = " " * (self.src.line_col(wf.key.span.start).column + 1)
            self.err(
                "NIKA-PARSE-020",
                v.span,
                "`workflow:` is an object now, not a scalar",
                f"Write it as `workflow:` with `id: {v.raw}` nested under it.",
                fixes=(Fix("Nest the value under `id:`", (Edit(v.span, f"\n{indent}id: {v.raw}"),)),),
            )
            return None
        m = self.expect_mapping(v, "`workflow:`")
        if m is None:
            return None
        self.closed(m, F.WORKFLOW, "`workflow:`")
        idn = m.get("id")
        if idn is None:
            self.err(
                "NIKA-PARSE-002", wf.key.span, "`workflow:` has no `id:`", "Add `id: my-workflow` under `workflow:`."
            )
            return None
        if not (isinstance(idn, Scalar) and isinstance(idn.value, str) and WORKFLOW_ID_RE.match(idn.value)):
            raw = idn.raw if isinstance(idn, Scalar) else describe(idn)
            suggestion = re.sub(r"[^a-z0-9-]+", "-", str(raw).lower()).strip("-")
            if suggestion and not suggestion[0].isalpha():
                suggestion = "w-" + suggestion
            fixes = (Fix(f"Rename to `{suggestion}`", (Edit(idn.span, suggestion),)),) if suggestion else ()
            self.err(
                "NIKA-PARSE-004",
                idn.span,
                f"workflow id `{raw}` is not kebab-case",
                "Use lowercase letters, digits and `-`, starting with a letter"
                + (f" (e.g. `{suggestion}`)." if suggestion else "."),
                fixes=fixes,
            )
            return None
        desc = m.get("description")
        if desc is not None and not (isinstance(desc, Scalar) and isinstance(desc.value, str)):
            self.err("NIKA-PARSE-019", desc.span, "`workflow.description` must be a string")
        return idn.value

    def named_section(self, root: Mapping, name: str, check: Callable[[str, Entry], None]) -> tuple[Named, ...]:
        node = root.get(name)
        if node is None:
            return ()
        if isinstance(node, Scalar) and node.value is None:
            return ()
        m = self.expect_mapping(node, f"`{name}:`")
        if m is None:
            return ()
        out = []
        for k, e in m.items():
            assert isinstance(e.key, Scalar)
            check(k, e)
            out.append(Named(k, e.key, e.value))
        return tuple(out)

    def type_entry(self, name: str, e: Entry) -> None:
        if not re.match(r"^[A-Z][A-Za-z0-9]*\Z", name):
            self.err(
                "NIKA-TYPE-001",
                e.key.span,
                f"type name `{name}` is not PascalCase",
                "Name types like `Article` or `SearchResult`: an uppercase letter, then letters and digits.",
            )

    def _io_entry(self, name: str, e: Entry, allowed: dict[str, str], section: str) -> None:
        m = self.expect_mapping(e.value, f"`{section}.{name}`")
        if m is None:
            return
        self.closed(m, allowed, f"`{section}.{name}`")
        if "type" not in m:
            self.err(
                "NIKA-PARSE-019",
                e.key.span,
                f"`{section}.{name}` has no `type:`",
                "Declare its type, e.g. `type: string`.",
            )
        req = m.get("required")
        if req is not None and not (isinstance(req, Scalar) and isinstance(req.value, bool)):
            self.err("NIKA-PARSE-019", req.span, "`required:` must be true or false")

    def input_entry(self, name: str, e: Entry) -> None:
        self._io_entry(name, e, F.INPUT, "inputs")

    def config_entry(self, name: str, e: Entry) -> None:
        self._io_entry(name, e, F.CONFIG, "config")

    def const_entry(self, name: str, e: Entry) -> None:
        v = e.value
        if isinstance(v, Mapping) and "type" in v and "value" in v:
            self.closed(v, F.TYPED_CONST, f"`const.{name}`")

    def secret_entry(self, name: str, e: Entry) -> None:
        v = e.value
        if not isinstance(v, Mapping):
            self.err(
                "NIKA-PARSE-014",
                v.span,
                f"secret `{name}` is an inline value, not a store reference",
                "Point at a store instead, e.g. `{source: env, key: MY_TOKEN}`; never write secret values in the file.",
            )
            return
        self.closed(v, F.SECRET, f"`secrets.{name}`")
        src = v.get("source")
        if src is None:
            self.err(
                "NIKA-PARSE-014",
                e.key.span,
                f"secret `{name}` has no `source:`",
                "Add `source: vault`, `source: env` or `source: file`.",
            )
            return
        sv = src.value if isinstance(src, Scalar) else None
        if sv not in F.SECRET_SOURCES:
            self.err(
                "NIKA-PARSE-014",
                src.span,
                f"unknown secret source `{getattr(src, 'raw', describe(src))}`",
                "Use one of vault, env or file.",
            )
            return
        if sv == "file":
            if "path" not in v:
                self.err(
                    "NIKA-PARSE-014", src.span, f"secret `{name}` reads a file but has no `path:`", "Add `path: …`."
                )
            if "key" in v:
                self.err(
                    "NIKA-PARSE-014",
                    v.entry("key").key.span,
                    "`key:` does not apply to `source: file`",
                    "Remove `key:`; use `path:`.",
                )  # type: ignore[union-attr]
        else:
            if "key" not in v:
                self.err(
                    "NIKA-PARSE-014",
                    src.span,
                    f"secret `{name}` has no `key:`",
                    f"Add the {sv} key, e.g. `key: API_TOKEN`.",
                )
            if "path" in v:
                self.err(
                    "NIKA-PARSE-014",
                    v.entry("path").key.span,
                    "`path:` only applies to `source: file`",
                    "Remove `path:`; use `key:`.",
                )  # type: ignore[union-attr]
        eg = v.get("egress")
        if eg is not None:
            if not isinstance(eg, Sequence):
                self.err("NIKA-PARSE-019", eg.span, "`egress:` must be a list of `{to: …}` entries")
            else:
                for item in eg.items:
                    im = self.expect_mapping(item, "an `egress:` entry")
                    if im is None:
                        continue
                    self.closed(im, F.EGRESS, "an `egress:` entry")
                    if "to" not in im:
                        self.err(
                            "NIKA-PARSE-019",
                            im.span,
                            "an `egress:` entry needs `to:`",
                            "Name the sink, e.g. `to: exec`.",
                        )
                    if "host" in im and "host_from_self" in im:
                        self.err(
                            "NIKA-PARSE-019",
                            im.span,
                            "`host:` and `host_from_self:` exclude each other",
                            "Keep one of them.",
                        )

    def permits(self, node: Node | None) -> None:
        if node is None:
            return
        m = self.expect_mapping(node, "`permits:`")
        if m is None:
            return
        self.closed(m, F.PERMITS, "`permits:`")
        for key, sub in (("fs", F.PERMITS_FS), ("net", F.PERMITS_NET)):
            sm = self.expect_mapping(m.get(key), f"`permits.{key}`")
            if sm is None:
                continue
            self.closed(sm, sub, f"`permits.{key}`")
            for k, e in sm.items():
                self.string_list(e.value, f"`permits.{key}.{k}`")
        ex = m.get("exec")
        if ex is not None and not (isinstance(ex, Scalar) and isinstance(ex.value, bool)):
            self.string_list(ex, "`permits.exec`", also="true, false or ")
        for key in ("tools", "env"):
            if key in m:
                self.string_list(m.get(key), f"`permits.{key}`")

    def string_list(self, node: Node | None, what: str, also: str = "") -> None:
        if node is None:
            return
        if not isinstance(node, Sequence):
            self.err("NIKA-PARSE-019", node.span, f"{what} must be {also}a list of strings, not {describe(node)}")
            return
        for item in node.items:
            if not (isinstance(item, Scalar) and isinstance(item.value, str)):
                self.err("NIKA-PARSE-019", item.span, f"{what} entries must be strings, not {describe(item)}")

    def run_block(self, node: Node | None) -> None:
        if node is None:
            return
        m = self.expect_mapping(node, "`run:`")
        if m is None:
            return
        self.closed(m, F.RUN, "`run:`")
        ent = m.get("entropy")
        entropy = None
        if ent is not None:
            if isinstance(ent, Scalar) and ent.value in F.ENTROPY_MODES:
                entropy = ent.value
            elif isinstance(ent, Mapping) and "seeded" in ent:
                entropy = "seeded"
                seed = ent.get("seeded")
                self.closed(ent, {"seeded": "Seed (a non-negative integer)."}, "`run.entropy`")
                if not (
                    isinstance(seed, Scalar)
                    and isinstance(seed.value, int)
                    and not isinstance(seed.value, bool)
                    and seed.value >= 0
                ):
                    self.err("NIKA-PARSE-019", (seed or ent).span, "`seeded:` must be a non-negative integer")
            else:
                self.err("NIKA-PARSE-019", ent.span, "`entropy:` must be none, ambient or `{seeded: N}`")
        clk = m.get("clock")
        clock = None
        if clk is not None:
            if isinstance(clk, Scalar) and clk.value in F.CLOCK_MODES:
                clock = clk.value
            else:
                self.err("NIKA-PARSE-019", clk.span, "`clock:` must be system or virtual")
        if entropy == "ambient" and clock == "virtual":
            self.err(
                "NIKA-PARSE-026",
                m.span,
                "`entropy: ambient` contradicts `clock: virtual`",
                "Pair `clock: virtual` with `entropy: none` or `seeded`, or drop `clock: virtual`.",
            )
        if entropy in ("none", "seeded") and clock == "system":
            self.err(
                "NIKA-PARSE-027",
                m.span,
                f"`entropy: {entropy}` cannot ride `clock: system`",
                "Use `clock: virtual` with a deterministic entropy setting.",
            )

    def policy(self, node: Node | None) -> None:
        if node is None:
            return
        m = self.expect_mapping(node, "`policy:`")
        if m is None:
            return
        self.closed(m, F.POLICY, "`policy:`")
        for fam, sub in F.POLICY_SUB.items():
            sm = self.expect_mapping(m.get(fam), f"`policy.{fam}`")
            if sm is not None:
                self.closed(sm, sub, f"`policy.{fam}`")

    # -- tasks ------------------------------------------------------------------------------
    def tasks(self, root: Mapping) -> dict[str, Task]:
        entry = root.entry("tasks")
        if entry is None:
            self.err(
                "NIKA-PARSE-002",
                Span(root.span.start, root.span.start),
                "the `tasks:` map is missing",
                "Add `tasks:` with at least one task keyed by its id.",
            )
            return {}
        node = entry.value
        if isinstance(node, Sequence):
            if not node.items:
                self.err(
                    "NIKA-PARSE-002",
                    node.span,
                    "`tasks:` is empty",
                    "Declare at least one task as a map entry: `tasks:` then `my_task:` with a verb.",
                )
            else:
                self.err(
                    "NIKA-PARSE-022",
                    node.span,
                    "`tasks:` is a list; it must be a map keyed by task id",
                    "Turn each `- id: name` item into a `name:` key and drop the `id:` field.",
                )
            return {}
        if (isinstance(node, Scalar) and node.value is None) or (isinstance(node, Mapping) and not node.entries):
            self.err(
                "NIKA-PARSE-002",
                entry.key.span,
                "`tasks:` is empty",
                "Declare at least one task keyed by its id.",
            )
            return {}
        m = self.expect_mapping(node, "`tasks:`")
        if m is None:
            return {}
        seen: dict[str, Entry] = {}
        out: dict[str, Task] = {}
        self._task_keys.update(id(e.key) for e in m.entries)
        for e in m.entries:
            tid = e.key_text
            if tid is None:
                continue
            if tid in seen:
                self.err(
                    "NIKA-PARSE-007",
                    e.key.span,
                    f"task `{tid}` is declared twice",
                    "Rename one of the two tasks; a task id must be unique.",
                    related=(Label(seen[tid].key.span, f"`{tid}` first declared here"),),
                )
                continue
            seen[tid] = e
            if not TASK_ID_RE.match(tid):
                fixed = re.sub(r"[^a-z0-9_]+", "_", tid.lower()).strip("_")
                if fixed and not fixed[0].isalpha():
                    fixed = "t_" + fixed
                self.err(
                    "NIKA-PARSE-006",
                    e.key.span,
                    f"task id `{tid}` is not snake_case",
                    "Use lowercase letters, digits and `_`, starting with a letter"
                    + (f" (e.g. `{fixed}`)." if fixed else "."),
                )
            assert isinstance(e.key, Scalar)
            t = self.task(tid, e)
            if t is not None:
                out[tid] = t
        return out

    def task(self, tid: str, e: Entry) -> Task | None:
        node = e.value
        if not isinstance(node, Mapping):
            self.err(
                "NIKA-PARSE-019",
                node.span,
                f"task `{tid}` must be a mapping with one verb, not {describe(node)}",
                "Give it exactly one of `infer:`, `exec:`, `invoke:` or `agent:`.",
                task=tid,
            )
            return None

        def special(k: str, ke: Entry) -> bool:
            if k == "id":
                self.err(
                    "NIKA-PARSE-023",
                    ke.key.span,
                    "a task has no `id:` field; its key under `tasks:` is its identity",
                    "Delete this line.",
                    task=tid,
                    fixes=(Fix("Remove the `id:` field", (Edit(self._line_span(ke), ""),)),),
                )
                return True
            if k == "depends_on":
                self.err(
                    "NIKA-PARSE-024",
                    ke.key.span,
                    "`depends_on:` no longer exists",
                    "Pass data with `with: {x: ${{ tasks.a.output }}}` (the reference is the edge) "
                    "or order tasks with `after: {a: success}`.",
                    task=tid,
                )
                return True
            if k in F.FOREIGN_TASK_KEYS and F.did_you_mean(k, F.TASK) is None:
                self.err(
                    "NIKA-PARSE-005",
                    ke.key.span,
                    f"`{k}` is not a Nika task field",
                    F.FOREIGN_TASK_KEYS[k][0].upper() + F.FOREIGN_TASK_KEYS[k][1:] + ".",
                    task=tid,
                )
                return True
            return False

        self.closed(node, F.TASK, f"task `{tid}`", task=tid, special=special)
        present = [k for k in VERBS if k in node]
        verb: Verb | None = None
        if not present:
            self.err(
                "NIKA-PARSE-008",
                e.key.span,
                f"task `{tid}` declares no verb",
                "Add exactly one of `infer:`, `exec:`, `invoke:` or `agent:`.",
                task=tid,
            )
        elif len(present) > 1:
            second = node.entry(present[1])
            assert second is not None
            self.err(
                "NIKA-PARSE-009",
                second.key.span,
                f"task `{tid}` declares {len(present)} verbs ({', '.join(present)})",
                "Keep one verb per task; split the work into separate tasks linked by `with:` or `after:`.",
                task=tid,
                related=tuple(Label(node.entry(k).key.span, f"`{k}` declared here") for k in present[:1]),  # type: ignore[union-attr]
            )
        if present:
            verb = self.verb(present[0], node.entry(present[0]), tid, in_fe="for_each" in node)  # type: ignore[arg-type]
        in_fe = "for_each" in node
        with_ = self.with_block(node.get("with"), tid, in_fe)
        after = self.after_block(node.get("after"), tid)
        when = node.get("when")
        if when is not None:
            if isinstance(when, Scalar) and isinstance(when.value, (bool, str)):
                if isinstance(when.value, str) and not has_island(when.value):
                    self.err(
                        "NIKA-VAR-005",
                        when.span,
                        "`when:` must be a `${{ … }}` boolean expression or the literal true/false",
                        'Wrap the condition: `when: "${{ … }}"`.',
                        task=tid,
                    )
                self.site(when, "when", tid, in_fe)
            else:
                self.err(
                    "NIKA-PARSE-019",
                    when.span,
                    f"`when:` must be a boolean or a `${{{{ }}}}` string, not {describe(when)}",
                    task=tid,
                )
        for_each = node.get("for_each")
        if for_each is not None:
            if isinstance(for_each, Sequence) or (isinstance(for_each, Scalar) and isinstance(for_each.value, str)):
                self.site(for_each, "for_each", tid)
            else:
                self.err(
                    "NIKA-PARSE-019",
                    for_each.span,
                    f"`for_each:` must be a list or a `${{{{ }}}}` expression, not {describe(for_each)}",
                    task=tid,
                )
        max_parallel = self.positive_int(node.get("max_parallel"), "`max_parallel:`", tid)
        fail_fast = True
        ff = node.get("fail_fast")
        if ff is not None:
            if isinstance(ff, Scalar) and isinstance(ff.value, bool):
                fail_fast = ff.value
            else:
                self.err("NIKA-PARSE-019", ff.span, "`fail_fast:` must be true or false", task=tid)
        retry = self.retry(node.get("retry"), tid)
        on_error = self.on_error(node.get("on_error"), tid, in_fe)
        timeout = self.timeout(node.get("timeout"), tid)
        finally_steps = self.on_finally(node.get("on_finally"), tid)
        output = self.output_block(node.get("output"), tid)
        inert = node.get("inert")
        if inert is not None and not (
            isinstance(inert, Scalar) and isinstance(inert.value, str) and inert.value.strip()
        ):
            self.err(
                "NIKA-PARSE-019",
                inert.span,
                "`inert:` must be a non-empty reason",
                'Say why the fetched content is treated as data, e.g. `inert: "pickled model archived, never loaded"`.',
                task=tid,
            )
        return Task(
            id=tid,
            key=e.key,  # type: ignore[arg-type]
            node=node,
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
            on_finally=finally_steps,
            output=output,
            returns=node.get("returns"),
            inert=inert,
            declassify=node.get("declassify"),
        )

    def _line_span(self, e: Entry) -> Span:
        src = self.src
        first = src.line_index(e.key.span.start)
        last = src.line_index(max(e.value.span.end - 1, e.value.span.start))
        start = src.line_starts[first]
        end = src.line_starts[last + 1] if last + 1 < len(src.line_starts) else len(src.text)
        return Span(start, end)

    def positive_int(self, node: Node | None, what: str, tid: str) -> int | None:
        if node is None:
            return None
        if (
            isinstance(node, Scalar)
            and isinstance(node.value, int)
            and not isinstance(node.value, bool)
            and node.value >= 1
        ):
            return node.value
        self.err("NIKA-PARSE-019", node.span, f"{what} must be an integer ≥ 1, not {describe(node)}", task=tid)
        return None

    def with_block(self, node: Node | None, tid: str, in_fe: bool) -> tuple[Binding, ...]:
        m = self.expect_mapping(node, "`with:`", task=tid)
        if m is None:
            return ()
        out = []
        for k, e in m.items():
            if k in RESERVED_BINDINGS:
                self.err(
                    "NIKA-PARSE-013",
                    e.key.span,
                    f"`{k}` is a reserved name and cannot be a `with:` binding",
                    f"Rename it, e.g. `{k}_value`.",
                    task=tid,
                )
            assert isinstance(e.key, Scalar)
            out.append(Binding(k, e.key, e.value))
            self.site(e.value, "with", tid, in_fe)
        return tuple(out)

    def after_block(self, node: Node | None, tid: str) -> tuple[AfterEntry, ...]:
        if node is None:
            return ()
        if isinstance(node, Sequence):
            self.err(
                "NIKA-PARSE-019",
                node.span,
                "`after:` is a map of `producer: predicate`, not a list",
                "Write it as `after: {build: success}`.",
                task=tid,
            )
            return ()
        m = self.expect_mapping(node, "`after:`", task=tid)
        if m is None:
            return ()
        out = []
        for k, e in m.items():
            v = e.value
            pred = v.value if isinstance(v, Scalar) and isinstance(v.value, str) else None
            if pred not in PREDICATES:
                shown = v.raw if isinstance(v, Scalar) else describe(v)
                guess = _predicate_guess(str(shown))
                fixes = (Fix(f"Replace with `{guess}`", (Edit(v.span, guess),)),) if guess else ()
                self.err(
                    "NIKA-DAG-005",
                    v.span,
                    f"`{shown}` is not an `after:` predicate",
                    (f"Did you mean `{guess}`? " if guess else "")
                    + "Use one of success, failure, skipped or terminal.",
                    task=tid,
                    fixes=fixes,
                )
                pred = None
            assert isinstance(e.key, Scalar)
            out.append(AfterEntry(k, pred or "", e.key, v))
        return tuple(out)

    def retry(self, node: Node | None, tid: str) -> Retry | None:
        if node is None:
            return None
        if not isinstance(node, Mapping):
            self.err(
                "NIKA-PARSE-011",
                node.span,
                f"`retry:` must be a mapping, not {describe(node)}",
                "Write `retry: {max_attempts: 3}`.",
                task=tid,
            )
            return None
        bad = False
        for e in node.entries:
            k = e.key_text
            if k is not None and k not in F.RETRY:
                guess = F.did_you_mean(k, F.RETRY)
                self.err(
                    "NIKA-PARSE-011",
                    e.key.span,
                    f"unknown field `{k}` in `retry:`",
                    f"Did you mean `{guess}`?" if guess else f"Allowed: {', '.join(F.RETRY)}.",
                    task=tid,
                )
                bad = True

        def int_field(name: str, minimum: int, default: int) -> int:
            nonlocal bad
            v = node.get(name)
            if v is None:
                return default
            if (
                isinstance(v, Scalar)
                and isinstance(v.value, int)
                and not isinstance(v.value, bool)
                and v.value >= minimum
            ):
                return v.value
            self.err("NIKA-PARSE-011", v.span, f"`retry.{name}` must be an integer ≥ {minimum}", task=tid)
            bad = True
            return default

        if "max_attempts" not in node:
            self.err(
                "NIKA-PARSE-011",
                node.span,
                "`retry:` needs `max_attempts:`",
                "Add `max_attempts: 3` (the first try counts).",
                task=tid,
            )
            bad = True
        attempts = int_field("max_attempts", 1, 1)
        backoff = int_field("backoff_ms", 0, 1000)
        backoff_max = int_field("backoff_max_ms", 0, 60000)
        strategy = "exponential"
        s = node.get("backoff_strategy")
        if s is not None:
            if isinstance(s, Scalar) and s.value in F.BACKOFF_STRATEGIES:
                strategy = s.value
            else:
                self.err("NIKA-PARSE-011", s.span, "`backoff_strategy:` must be fixed, linear or exponential", task=tid)
                bad = True
        jitter = True
        j = node.get("jitter")
        if j is not None:
            if isinstance(j, Scalar) and isinstance(j.value, bool):
                jitter = j.value
            else:
                self.err("NIKA-PARSE-011", j.span, "`jitter:` must be true or false", task=tid)
                bad = True
        codes = self.code_list(node.get("on_codes"), "NIKA-PARSE-011", "retry.on_codes", tid, allow_empty=True)
        if codes is None:
            bad = True
        if bad:
            return None
        return Retry(attempts, backoff, strategy, backoff_max, jitter, codes or (), node)

    def code_list(self, node: Node | None, code: str, what: str, tid: str, allow_empty: bool) -> tuple[str, ...] | None:
        if node is None:
            return ()
        if not isinstance(node, Sequence):
            self.err(code, node.span, f"`{what}` must be a list of NIKA codes", task=tid)
            return None
        if not node.items and not allow_empty:
            self.err(
                code, node.span, f"`{what}` must list at least one code", "Remove the field or name a code.", task=tid
            )
            return None
        out = []
        ok = True
        for item in node.items:
            v = item.value if isinstance(item, Scalar) else None
            if not (isinstance(v, str) and CODE_RE.match(v)):
                self.err(
                    code,
                    item.span,
                    f"`{getattr(item, 'raw', describe(item))}` is not a NIKA error code",
                    "Codes look like `NIKA-TIMEOUT-001` or `NIKA-BUILTIN-FETCH-001`.",
                    task=tid,
                )
                ok = False
            else:
                out.append(v)
        return tuple(out) if ok else None

    def on_error(self, node: Node | None, tid: str, in_fe: bool = False) -> OnError | None:
        if node is None:
            return None
        if not isinstance(node, Mapping):
            self.err(
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
            if k is not None and k not in F.ON_ERROR:
                if k in ("fallback", "value", "default"):
                    help = "Use `recover: <value>`; the legacy spellings are gone."
                else:
                    guess = F.did_you_mean(k, F.ON_ERROR)
                    help = f"Did you mean `{guess}`?" if guess else f"Allowed: {', '.join(F.ON_ERROR)}."
                self.err("NIKA-PARSE-012", e.key.span, f"unknown field `{k}` in `on_error:`", help, task=tid)
                bad = True
        actions = [k for k in ("recover", "skip", "fail_workflow") if k in node]
        if len(actions) > 1:
            self.err(
                "NIKA-PARSE-012",
                node.entry(actions[1]).key.span,  # type: ignore[union-attr]
                f"`on_error:` declares {' and '.join(f'`{a}`' for a in actions)}; they exclude each other",
                "Keep exactly one action.",
                task=tid,
            )
            return None
        if not actions:
            if not bad:
                self.err(
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
            if not (isinstance(v, Scalar) and v.value is True):
                self.err("NIKA-PARSE-012", v.span, f"`{action}:` must be `true`", task=tid)  # type: ignore[union-attr]
                bad = True
        codes = self.code_list(node.get("on_codes"), "NIKA-PARSE-012", "on_error.on_codes", tid, allow_empty=False)
        if codes is None or bad:
            return None
        recover = node.get("recover")
        if recover is not None:
            self.site(recover, "recover", tid, in_fe)
        return OnError(action, recover, codes, node)

    def timeout(self, node: Node | None, tid: str | None, what: str = "timeout") -> Duration | None:
        if node is None:
            return None
        if not (isinstance(node, Scalar) and isinstance(node.value, str)):
            shown = node.raw if isinstance(node, Scalar) else describe(node)
            self.err(
                "NIKA-PARSE-010",
                node.span,
                f"`{what}:` must be a quoted duration string, not `{shown}`",
                'Write it with a unit, e.g. `timeout: "30s"`.',
                task=tid,
            )
            return None
        ms, why = parse_duration(node.value)
        if ms is None:
            self.err(
                "NIKA-PARSE-010",
                node.span,
                f"`{node.value}` is not a valid duration: {why}",
                'Use a positive Go duration up to 24h, e.g. "45s", "5m" or "1h30m".',
                task=tid,
            )
            return None
        return Duration(ms, node)

    def on_finally(self, node: Node | None, tid: str) -> tuple[FinallyStep, ...]:
        if node is None:
            return ()
        if not isinstance(node, Sequence):
            self.err("NIKA-PARSE-019", node.span, "`on_finally:` must be a list of cleanup steps", task=tid)
            return ()
        out = []
        for item in node.items:
            m = self.expect_mapping(item, "an `on_finally:` step", task=tid)
            if m is None:
                continue
            self.closed(m, F.FINALLY_STEP, "an `on_finally:` step", task=tid)
            present = [k for k in VERBS if k in m]
            if len(present) != 1:
                self.err(
                    "NIKA-PARSE-008" if not present else "NIKA-PARSE-009",
                    m.span,
                    "an `on_finally:` step needs exactly one verb",
                    "Give it one of `infer:`, `exec:`, `invoke:` or `agent:`.",
                    task=tid,
                )
            verb = self.verb(present[0], m.entry(present[0]), tid, where="finally") if present else None  # type: ignore[arg-type]
            when = m.get("when")
            if when is not None:
                self.site(when, "finally", tid)
            out.append(FinallyStep(m, verb, when, self.timeout(m.get("timeout"), tid)))
        return tuple(out)

    def output_block(self, node: Node | None, tid: str) -> tuple[Binding, ...]:
        m = self.expect_mapping(node, "`output:`", task=tid)
        if m is None:
            return ()
        out = []
        for k, e in m.items():
            if k in RESERVED_BINDINGS:
                self.err(
                    "NIKA-PARSE-013",
                    e.key.span,
                    f"`{k}` is a reserved name and cannot be an `output:` binding",
                    f"Rename it, e.g. `{k}_value`; `tasks.{tid}.{k}` already means the task's own {k}.",
                    task=tid,
                )
            v = e.value
            if not (isinstance(v, Scalar) and isinstance(v.value, str)):
                self.err(
                    "NIKA-PARSE-019", v.span, f"output binding `{k}` must be a jq string, not {describe(v)}", task=tid
                )
            else:
                self.site(v, "output", tid)
            assert isinstance(e.key, Scalar)
            out.append(Binding(k, e.key, v))
        return tuple(out)

    # -- verbs ------------------------------------------------------------------------------
    def verb(self, kind: str, e: Entry, tid: str, where: str = "body", in_fe: bool = False) -> Verb | None:
        node = e.value
        if not isinstance(node, Mapping):
            self.err(
                "NIKA-PARSE-019",
                node.span,
                f"`{kind}:` must be a mapping of its fields, not {describe(node)}",
                _verb_example(kind),
                task=tid,
            )
            return None
        self.closed(node, F.VERB_FIELDS[kind], f"`{kind}:`", task=tid)
        self.site(node, where, tid, in_fe)
        if kind == "infer":
            return self.infer(node, e, tid)
        if kind == "exec":
            return self.exec(node, e, tid)
        if kind == "invoke":
            return self.invoke(node, e, tid)
        return self.agent(node, e, tid)

    def required(self, node: Mapping, field: str, e: Entry, tid: str, example: str) -> Node | None:
        v = node.get(field)
        if v is None:
            self.err(
                "NIKA-PARSE-018",
                e.key.span,
                f"`{e.key_text}:` is missing its required `{field}:`",
                example,
                task=tid,
            )
        return v

    def string_field(self, node: Mapping, field: str, tid: str) -> Node | None:
        v = node.get(field)
        if v is not None and not (isinstance(v, Scalar) and isinstance(v.value, str)):
            self.err("NIKA-PARSE-019", v.span, f"`{field}:` must be a string, not {describe(v)}", task=tid)
        return v

    def infer(self, node: Mapping, e: Entry, tid: str) -> Infer:
        prompt = self.required(node, "prompt", e, tid, 'Add `prompt: "…"` with the text to send to the model.')
        if prompt is not None:
            self.string_field(node, "prompt", tid)
        self.string_field(node, "system", tid)
        self.string_field(node, "model", tid)
        self.schema_field(node, tid)
        return Infer(
            node,
            prompt,
            node.get("system"),
            node.get("model"),
            node.get("temperature"),
            node.get("max_tokens"),
            node.get("schema"),
            node.get("thinking"),
            node.get("vision"),
        )

    def schema_field(self, node: Mapping, tid: str) -> None:
        s = node.get("schema")
        if s is not None and not isinstance(s, Mapping):
            self.err("NIKA-PARSE-019", s.span, f"`schema:` must be a JSON Schema object, not {describe(s)}", task=tid)

    def exec(self, node: Mapping, e: Entry, tid: str) -> Exec:
        cmd = node.get("command")
        shell = node.get("shell")
        command: tuple[Node, ...] | None = None
        if cmd is None and shell is None:
            self.err(
                "NIKA-PARSE-018",
                e.key.span,
                "`exec:` needs `command:` (an argument list) or `shell:` (a command line)",
                'Add e.g. `command: ["echo", "hi"]`.',
                task=tid,
            )
        if cmd is not None and shell is not None:
            self.err(
                "NIKA-PARSE-019",
                node.entry("shell").key.span,  # type: ignore[union-attr]
                "`exec:` declares both `command:` and `shell:`",
                "Keep one: `command:` runs an argument list without a shell, `shell:` runs a line through /bin/sh.",
                task=tid,
            )
        if cmd is not None:
            if isinstance(cmd, Scalar):
                ce = node.entry("command")
                assert ce is not None
                self.err(
                    "NIKA-PARSE-019",
                    cmd.span,
                    "`command:` is a string; it must be an argument list",
                    'Split it into a list (`command: ["echo", "hello"]`), or use `shell:` for a shell line.',
                    task=tid,
                    fixes=(
                        Fix(
                            "Run the string through the shell (`shell:`)",
                            (Edit(ce.key.span, "shell"),),
                            "unsafe",
                        ),
                    )
                    if isinstance(cmd.value, str) and cmd.value.strip() and shell is None
                    else (),
                )
            elif isinstance(cmd, Sequence):
                if not cmd.items:
                    self.err(
                        "NIKA-PARSE-019",
                        cmd.span,
                        "`command:` is an empty list",
                        "Name at least the program to run.",
                        task=tid,
                    )
                for item in cmd.items:
                    # Numbers are tolerated (they stringify); null, booleans and collections are not.
                    if not (
                        isinstance(item, Scalar)
                        and isinstance(item.value, (int, float, str))
                        and not isinstance(item.value, bool)
                    ):
                        self.err(
                            "NIKA-PARSE-019",
                            item.span,
                            f"`command:` items must be strings, not {describe(item)}",
                            "Quote the item.",
                            task=tid,
                        )
                command = cmd.items
            else:
                self.err(
                    "NIKA-PARSE-019", cmd.span, f"`command:` must be a list of strings, not {describe(cmd)}", task=tid
                )
        if shell is not None and not (
            isinstance(shell, Scalar) and isinstance(shell.value, str) and shell.value.strip()
        ):
            self.err("NIKA-PARSE-019", shell.span, "`shell:` must be a non-empty command line string", task=tid)
        self.string_field(node, "cwd", tid)
        self.string_field(node, "stdin", tid)
        env = node.get("env")
        if env is not None:
            em = self.expect_mapping(env, "`exec.env`", task=tid)
            if em is not None:
                for k, ee in em.items():
                    if not (isinstance(ee.value, Scalar) and isinstance(ee.value.value, str)):
                        self.err(
                            "NIKA-PARSE-019",
                            ee.value.span,
                            f"environment variable `{k}` must be a string, not {describe(ee.value)}",
                            "Quote the value.",
                            task=tid,
                        )
        capture = self.enum_field(node, "capture", F.CAPTURE_MODES, tid) or "stdout"
        decode = self.enum_field(node, "decode", F.DECODE_MODES, tid)
        if decode is not None and capture == "structured":
            self.err(
                "NIKA-PARSE-025",
                node.entry("decode").key.span,  # type: ignore[union-attr]
                "`decode:` does not apply with `capture: structured`",
                "Remove `decode:`; the structured capture is already an object (type it with `returns:`).",
                task=tid,
            )
        return Exec(node, command, shell, node.get("cwd"), env, node.get("stdin"), capture, decode)

    def enum_field(self, node: Mapping, field: str, allowed: tuple[str, ...], tid: str) -> str | None:
        v = node.get(field)
        if v is None:
            return None
        if isinstance(v, Scalar) and v.value in allowed:
            return str(v.value)
        shown = v.raw if isinstance(v, Scalar) else describe(v)
        guess = F.did_you_mean(str(shown), allowed)
        self.err(
            "NIKA-PARSE-019",
            v.span,
            f"`{shown}` is not a valid `{field}:`",
            (f"Did you mean `{guess}`? " if guess else "") + f"Use one of {', '.join(allowed)}.",
            task=tid,
        )
        return None

    def invoke(self, node: Mapping, e: Entry, tid: str) -> Invoke:
        tool_node = node.get("tool")
        wf = node.get("workflow")
        args = node.get("args")
        tool: str | None = None
        if tool_node is None and wf is None:
            self.err(
                "NIKA-PARSE-018",
                e.key.span,
                "`invoke:` needs `tool:` (or `workflow:` for a child workflow)",
                'Add e.g. `tool: "nika:read"` with its `args:`.',
                task=tid,
            )
        elif tool_node is not None and wf is not None:
            self.err(
                "NIKA-PARSE-019",
                node.entry("workflow").key.span,  # type: ignore[union-attr]
                "`invoke:` declares both `tool:` and `workflow:`",
                "Keep one target per task.",
                task=tid,
            )
        if tool_node is not None:
            if isinstance(tool_node, Scalar) and isinstance(tool_node.value, str):
                tool = tool_node.value
            else:
                self.err(
                    "NIKA-PARSE-019", tool_node.span, f"`tool:` must be a string, not {describe(tool_node)}", task=tid
                )
        if args is not None and not isinstance(args, Mapping) and not (isinstance(args, Scalar) and args.value is None):
            self.err(
                "NIKA-PARSE-019",
                args.span,
                f"`args:` must be a mapping of argument names to values, not {describe(args)}",
                "Write e.g. `args: {path: ./notes.md}`.",
                task=tid,
            )
        if wf is not None and not (isinstance(wf, Scalar) and isinstance(wf.value, str)):
            self.err("NIKA-PARSE-019", wf.span, f"`workflow:` must be a path string, not {describe(wf)}", task=tid)
        return Invoke(node, tool, tool_node, args, wf)

    def agent(self, node: Mapping, e: Entry, tid: str) -> Agent:
        prompt = self.required(node, "prompt", e, tid, 'Add `prompt: "…"` describing the job.')
        if prompt is not None:
            self.string_field(node, "prompt", tid)
        self.string_field(node, "system", tid)
        self.string_field(node, "model", tid)
        self.schema_field(node, tid)
        tools: list[Scalar] = []
        skills: list[Scalar] = []
        for name, bucket in (("tools", tools), ("skills", skills)):
            v = node.get(name)
            if v is None:
                continue
            if not isinstance(v, Sequence):
                self.err("NIKA-PARSE-019", v.span, f"`{name}:` must be a list of strings, not {describe(v)}", task=tid)
                continue
            for item in v.items:
                if isinstance(item, Scalar) and isinstance(item.value, str):
                    bucket.append(item)
                else:
                    self.err("NIKA-PARSE-019", item.span, f"`{name}:` entries must be strings", task=tid)
        return Agent(
            node,
            prompt,
            node.get("system"),
            node.get("model"),
            tuple(tools),
            tuple(skills),
            node.get("max_turns"),
            node.get("max_tokens_total"),
            node.get("temperature"),
            node.get("schema"),
        )

    # -- outputs ----------------------------------------------------------------------------
    def outputs(self, node: Node | None) -> tuple[Output, ...]:
        if node is None:
            return ()
        m = self.expect_mapping(node, "`outputs:`")
        if m is None:
            return ()
        out = []
        for k, e in m.items():
            v = e.value
            assert isinstance(e.key, Scalar)
            if isinstance(v, Scalar) and isinstance(v.value, str):
                self.site(v, "outputs", None)
                out.append(Output(k, e.key, v))
            elif isinstance(v, Mapping):
                self.closed(v, F.OUTPUT, f"output `{k}`")
                val = v.get("value")
                if val is None:
                    self.err(
                        "NIKA-PARSE-019",
                        e.key.span,
                        f"output `{k}` has no `value:`",
                        'Add `value: "${{ tasks.x.output }}"`.',
                    )
                elif not (isinstance(val, Scalar) and isinstance(val.value, str)):
                    self.err("NIKA-PARSE-019", val.span, f"output `{k}` value must be a `${{{{ }}}}` string")
                else:
                    self.site(val, "outputs", None)
                out.append(Output(k, e.key, val, v.get("type")))
            else:
                self.err(
                    "NIKA-PARSE-019",
                    v.span,
                    f"output `{k}` must be a `${{{{ }}}}` string or `{{value, type}}`, not {describe(v)}",
                )
        return tuple(out)


def _predicate_guess(text: str) -> str | None:
    aliases = {
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
    if text.lower() in aliases:
        return aliases[text.lower()]
    return F.did_you_mean(text, PREDICATES)


def _verb_example(kind: str) -> str:
    return {
        "infer": 'Write e.g. `infer: {prompt: "Summarize …"}`.',
        "exec": 'Write e.g. `exec: {command: ["echo", "hi"]}`.',
        "invoke": 'Write e.g. `invoke: {tool: "nika:read", args: {path: ./notes.md}}`.',
        "agent": 'Write e.g. `agent: {prompt: "…", tools: ["nika:read"]}`.',
    }[kind]
