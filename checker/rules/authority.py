"""The capability boundary: ``required ⊆ permitted`` (spec 10, 01 §permits, NEP-0003..0009).

* NIKA-AUTH-006 — no ``permits:`` block and the body needs authority (the fix pastes the block);
* NIKA-AUTH-007 — an interpolation inside a permit bound;
* NIKA-AUTH-009 — an ``env:`` grant of a name on the dangerous floor (a dead grant);
* NIKA-AUTH-010 — a ``*.`` wildcard in ``net.http``;
* NIKA-SEC-005 — the SSRF floor: a ``net.http`` entry or a literal URL no grant can admit;
* NIKA-SEC-004 — a static escape (a plane not granted; a literal path, host, program or tool
  outside its grant; a tool excluded by a ``!`` rule; a shell string under a program list);
* NIKA-AUTH-008 — an untrusted value resolvable at check escapes the grant (``declassify:`` is
  the one door);
* NIKA-SEC-008 — a ``nika:fetch`` of a code-bearing artifact without the ``inert:`` door;
* NIKA-AUTH-008 too for an untrusted argv word in a re-entry class (:mod:`checker.contracts.argv`)
  and an untrusted value in a locator environment name (:func:`effects.judge_env_value`);
* no finding for an untrusted argv word or env value the check cannot resolve: the run re-gates
  it (spec 10: the file stays valid); the deferred re-gate is recorded on the context
  (:class:`~checker.model.workflow.Regate`) and the certificate lists it in ``effects.dynamic``,
  beside the computed paths and URLs the permits judge at run time;
* ``authority/002`` (warning) — a write grant covering a configuration file a granted
  program reads (the workflow could write the command the program runs).

What each call needs comes from the one effect table (:mod:`checker.contracts.effects`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from checker.contracts import effects
from checker.contracts.effects import Boundary, Denial, boundary_of
from checker.core.argv import plain_words
from checker.core.codes import lint, report
from checker.core.diagnostics import Diagnostic, Edit, Fix, Label
from checker.core.globs import glob_base, match_path
from checker.core.records import record
from checker.core.source import Span
from checker.model.workflow import Agent, Exec, Infer, Invoke, Regate, Task
from checker.parse.values import ListValue, MapValue, ScalarValue, TemplateValue, Value, templates
from checker.rules.support.context import RuleContext, task_verbs
from checker.rules.support.flow import (
    Unresolvable,
    arg_values,
    exec_words,
    integrity,
    known_prefix,
    resolve,
    resolve_str,
)
from checker.rules.tools import grammar_problem

_PLANE_VERBS = {
    "fs.read": "reads files",
    "fs.write": "writes files",
    "net": "reaches the network",
    "exec": "runs a process",
    "tools": "invokes a tool",
    "env": "passes environment variables",
}


@record
class NeedSite:
    """One grant a task needs, where it shows in the source, and the value naming its target."""

    task: Task
    plane: str
    span: Span
    value: Value | None = None  # the argument value (literal or template) naming the target
    tool: str | None = None
    kind: str = ""  # path | glob | dir | url | program | tool | shell
    arg: str = ""
    # an agent's whitelist: the tool may be called, its target is the model's choice at run time
    dynamic: bool = False


def needs_of(task: Task) -> Iterator[NeedSite]:
    """Every grant ``task`` needs, read off the effect table."""
    for verb in task_verbs(task):
        if isinstance(verb, Exec):
            key = verb.value.span
            if verb.command is not None and verb.command:
                program = verb.command[0]
                # a program is judged by its text; anything else in argv[0] is already a PARSE finding
                shown = program if isinstance(program, ScalarValue) and isinstance(program.value, str) else None
                yield NeedSite(task, "exec", program.span, shown, kind="program", arg="command[0]")
            elif verb.shell is not None:
                yield NeedSite(task, "exec", verb.shell.span, None, kind="shell", arg="shell")
            else:
                yield NeedSite(task, "exec", key)
        elif isinstance(verb, Invoke):
            if verb.tool is None or verb.tool_value is None or isinstance(verb.tool_value, TemplateValue):
                continue
            if grammar_problem(verb.tool) is not None:
                continue  # a malformed id is NIKA-PARSE-019's business
            eff = effects.tool_effects(verb.tool)
            if not eff.known and not verb.tool.startswith("mcp:"):
                continue  # an unknown builtin is NIKA-INVOKE-001's business
            if eff.needs_tools_grant:
                yield NeedSite(task, "tools", verb.tool_value.span, verb.tool_value, verb.tool, "tool")
            for plane in eff.needs:
                if plane != "tools":
                    yield NeedSite(task, plane, verb.tool_value.span, None, verb.tool)
            for t in eff.targets:
                if not _applies(t, verb):
                    continue
                for v in arg_values(verb.args, t.steps):
                    if isinstance(v, ScalarValue) and isinstance(v.value, str):
                        yield NeedSite(task, t.plane, v.span, v, verb.tool, t.kind, f"args.{t.arg}")
        elif isinstance(verb, Infer):
            yield from _vision_needs(task, verb)
        elif isinstance(verb, Agent):
            for entry in verb.tools:
                name = entry.value
                if not isinstance(name, str) or isinstance(entry, TemplateValue) or "*" in name:
                    continue
                eff = effects.tool_effects(name)
                if not eff.known:
                    continue
                if eff.needs_tools_grant:
                    yield NeedSite(task, "tools", entry.span, entry, name, "tool")
                for plane in eff.needs:
                    if plane != "tools":
                        yield NeedSite(task, plane, entry.span, None, name, dynamic=True)


def _vision_needs(task: Task, verb: Infer) -> Iterator[NeedSite]:
    """An ``infer.vision`` image is read by the engine: a ``file`` under ``fs.read``, a ``url``
    under ``net`` (the runtime judges the same values, resolved, before the call)."""
    if not isinstance(verb.vision, ListValue):
        return
    for i, item in enumerate(verb.vision.items):
        if not isinstance(item, MapValue):
            continue
        source = item.get("source")
        is_url = source.value == "url" if isinstance(source, ScalarValue) else source is None and "url" in item
        key = "url" if is_url else "path"
        v = item.get(key)
        if isinstance(v, ScalarValue) and isinstance(v.value, str):
            plane, kind = ("net", "url") if is_url else ("fs.read", "path")
            yield NeedSite(task, plane, v.span, v, None, kind, f"vision[{i}].{key}")


def all_needs(ctx: RuleContext) -> list[NeedSite]:
    """:func:`needs_of` every task, in task order; listed once per analysis (several rules read
    it), and with the language server's memo an unchanged task's needs are not read again (a
    pure function of the task: the effect table is static)."""
    got: list[NeedSite] | None = ctx.__dict__.get("_all_needs")
    if got is not None:
        return got
    tasks = ctx.workflow.tasks.values()
    if ctx.memo is None:
        got = [n for task in tasks for n in needs_of(task)]
    else:
        prev, cur = ctx.memo.tables("authority.needs")
        got = []
        for task in tasks:
            hit = prev.get(id(task))
            if hit is None or hit[0] is not task:
                hit = (task, (), tuple(needs_of(task)))
            cur[id(task)] = hit
            got.extend(hit[2])
    ctx.__dict__["_all_needs"] = got
    return got


def _applies(t: effects.Target, verb: Invoke) -> bool:
    lookup = {}
    for k, _allowed in t.when:
        v = verb.args.get(k) if verb.args is not None else None
        lookup[k] = v.value if isinstance(v, ScalarValue) and not isinstance(v, TemplateValue) else None
    return effects.target_applies(t, lookup)


# -- the bounds --------------------------------------------------------------------------------


def check_bounds(ctx: RuleContext) -> Iterator[Diagnostic]:
    """AUTH-007, AUTH-009, AUTH-010 and the SSRF floor on ``net.http`` entries (SEC-005)."""
    p = ctx.workflow.permits
    if p is None:
        return
    for t in templates(p.value):
        yield report(
            "NIKA-AUTH-007",
            t.span,
            f"a permit bound is computed (`{t.raw}`): a bound must be written out",
            "Write the literal path, host, program, tool or variable name this grant allows.",
        )
    for entry in p.net_http:
        if isinstance(entry, TemplateValue):
            continue
        host = entry.value.strip()
        if "*" in host and host != "*":
            yield report(
                "NIKA-AUTH-010",
                entry.span,
                f"`{host}` grants every host under a suffix: `net.http` takes exact host names",
                "List each host the workflow calls (or the bare `*` if any host is really meant).",
            )
            continue
        if host == "*" or effects.is_exact_loopback(host):
            continue
        why = effects.floor_reason(host)
        if why is not None:
            yield report(
                "NIKA-SEC-005",
                entry.span,
                f"`{host}` is {why}, which the SSRF floor always blocks: this grant can never take effect",
                "Remove the entry; only an exact loopback name (`localhost`, `127.0.0.1`, `::1`) can be granted.",
            )
    for entry in p.env:
        if isinstance(entry, TemplateValue):
            continue
        if effects.dangerous_env(entry.value):
            yield report(
                "NIKA-AUTH-009",
                entry.span,
                f"`{entry.value}` is on the dangerous-variable floor: the engine always strips it, so this grant "
                "can never take effect",
                "Remove the entry; pass what the program needs through a safer variable or the task's `env:` map.",
            )


def check_grant_spelling(ctx: RuleContext) -> Iterator[Diagnostic]:
    """``permits/001``: a ``net.http`` entry written as a URL. Hosts are matched by name (01
    §permits), so ``https://api.example.com/v1`` admits nothing: an inert grant, not a refusal
    (the spec has no code for it; the task it was meant for is refused by NIKA-SEC-004). The fix
    writes the host; it covers every path on that host (a grant has no path), which the finding
    says when the URL had one."""
    p = ctx.workflow.permits
    if p is None:
        return
    for entry in p.net_http:
        if isinstance(entry, TemplateValue) or not isinstance(entry.value, str) or "://" not in entry.value:
            continue
        host = effects.url_host(entry.value.strip())
        path = effects.url_path(entry.value.strip())
        wider = path not in ("", "/")
        fixes: tuple[Fix, ...] = ()
        if host:
            fixes = (
                Fix(f"Grant the host `{host}`", (Edit(entry.span, json.dumps(host)),), "unsafe" if wider else "safe"),
            )
        yield lint(
            "permits/001",
            entry.span,
            f"`{entry.value}` in `permits.net.http` is a URL; the grant matches host names, so it admits nothing",
            (f"Write the host `{host}`" if host else "Write the host name alone")
            + (f"; the grant then covers every path on `{host}`, not only `{path}`." if wider and host else "."),
            fixes=fixes,
        )


# -- the fit -----------------------------------------------------------------------------------


def check_fit(ctx: RuleContext) -> Iterator[Diagnostic]:
    """AUTH-006 (absent block), SEC-004 (static escape) and AUTH-008 (untrusted escape)."""
    wf = ctx.workflow
    needs = all_needs(ctx)
    if wf.permits is None:
        if _statically_seen(needs):
            yield _absent(ctx, needs)  # the pasted block covers every need, dynamic ones too
        return
    bound = boundary_of(wf.permits)
    denied_planes: set[tuple[str, str]] = set()
    for n in needs:
        if (n.task.id, n.plane) in denied_planes:
            continue
        if n.dynamic:
            continue  # judged at the effect, on the path or URL the model chose (01 §permits, 2.)
        if n.plane != "tools" and not bound.grants(n.plane):
            denied_planes.add((n.task.id, n.plane))
            yield _escape(n, bound.check(n.plane))
            continue
        if n.kind == "shell" and isinstance(bound.exec, tuple):
            yield report(
                "NIKA-SEC-004",
                n.span,
                "a `shell:` string runs under a program allowlist, which can only vouch for an argv `command:`",
                "Use `command: [program, args…]` with a listed program, or grant `exec: true`.",
                task=n.task.id,
            )
            continue
        if n.plane == "tools":
            d = bound.check("tools", n.tool)
            if d is not None:  # a present block grants only the tools it lists, pure ones too (01 §permits)
                yield _escape(n, d)
            continue
        if n.value is None:
            continue
        if n.kind == "glob":
            yield from _judge_glob(bound, n)
            continue
        yield from _judge_value(ctx, bound, n)
    yield from _exec_values(ctx, bound)
    yield from _negated_pure(ctx, bound)


_TARGET_KINDS = frozenset({"path", "glob", "dir", "url", "program"})
# the builtins whose URL the run's permits judge as a whole before any request (runtime check_url)
_URL_TOOLS = frozenset({"nika:fetch", "nika:notify"})
_UNKNOWN = object()


def _statically_seen(needs: list[NeedSite]) -> list[NeedSite]:
    """The needs a static judge can actually see under an absent block (NEP-0003 law 1).

    A call whose every target (path, URL, program) is computed at run time is left to the
    run-time boundary (law 3: the dynamic cases); its tool and plane needs go with it.
    """
    calls: dict[tuple[str, str | None], list[NeedSite]] = {}
    for n in needs:
        calls.setdefault((n.task.id, n.tool), []).append(n)
    out: list[NeedSite] = []
    for group in calls.values():
        targets = [n for n in group if n.kind in _TARGET_KINDS]
        if targets and all(isinstance(n.value, TemplateValue) for n in targets):
            continue
        out.extend(group)
    return out


def _negated_pure(ctx: RuleContext, bound: Boundary) -> Iterator[Diagnostic]:
    """A present ``permits:`` block grants only the tools ``permits.tools`` lists — pure
    builtins too (01 §permits: an omitted category is default-deny; only an absent block lets
    pure builtins run, NEP-0003 law 4). Effectful tools are judged as needs; this is the rest."""
    for task in ctx.workflow.tasks.values():
        for verb in task_verbs(task):
            sites: list[tuple[str, Value]] = []
            if isinstance(verb, Invoke) and verb.tool and verb.tool_value is not None:
                if not isinstance(verb.tool_value, TemplateValue):
                    sites.append((verb.tool, verb.tool_value))
            elif isinstance(verb, Agent):
                for entry in verb.tools:
                    name = entry.value
                    if isinstance(name, str) and not isinstance(entry, TemplateValue) and "*" not in name:
                        sites.append((name, entry))
            for tool, value in sites:
                if not effects.tool_effects(tool).pure:
                    continue
                d = bound.check("tools", tool)
                if d is not None:
                    yield _escape(NeedSite(task, "tools", value.span, value, tool, "tool"), d)


def _target(n: NeedSite, raw: str) -> str | None:
    """The plane's target in a resolved argument: the host of a URL, else the value."""
    if n.kind == "url":
        return effects.url_host(raw)
    return raw


def _judge_glob(bound: Boundary, n: NeedSite) -> Iterator[Diagnostic]:
    """A literal glob reads its base folder (or, without a wildcard, the path itself): judged as
    the run judges it (``nika:glob`` resolves the same base; stdlib §nika:glob: the walk is gated
    on the directory it walks, so `**/*.md` walks the working directory itself)."""
    v = n.value
    if v is None or isinstance(v, TemplateValue) or not isinstance(v.value, str) or not v.value:
        return
    base, _rest = glob_base(v.value)
    d = bound.check(n.plane, base or ".")
    if d is not None:
        yield _escape(n, d)


def _not_a_url(n: NeedSite, value: object, resolved: bool) -> Diagnostic | None:
    """A URL the run's permits could never judge (not an http(s) URL with a readable host and
    port, or not text at all): the run refuses it with NIKA-SEC-004 before any request, on every
    run, so the check refuses it too (the static half of the code)."""
    if isinstance(value, str):
        if value.lower().startswith(("http://", "https://")) and effects.url_host(value):
            return None
        why = f"`{value}` is not an http(s) URL with a host (and a port from 0 to 65535)"
    else:
        why = f"the URL is {_kind_of(value)}, not text"
    via = " (its expression's value is known at check)" if resolved else ""
    return report(
        "NIKA-SEC-004",
        n.span,
        f"task `{n.task.id}`: `{n.tool}` needs a URL the permits can judge, but {why}{via}",
        "Give an absolute `https://host/path` URL (a port, if any, is a number after the host).",
        task=n.task.id,
    )


def _kind_of(value: object) -> str:
    from checker.core.display import kind_of

    return kind_of(value)


def _judge_value(ctx: RuleContext, bound: Boundary, n: NeedSite) -> Iterator[Diagnostic]:
    v = n.value
    assert v is not None
    if n.kind == "url" and n.tool in _URL_TOOLS:
        static = not isinstance(v, TemplateValue)
        if static:
            value: object = v.value
        else:
            try:
                value = resolve(ctx, n.task, v)
            except Unresolvable:
                value = _UNKNOWN
        if value is not _UNKNOWN and (bad := _not_a_url(n, value, not static)) is not None:
            yield bad
            return
    if not isinstance(v, TemplateValue):
        target = _target(n, v.value)
        d = bound.check(n.plane, target, directory=n.kind == "dir") if target is not None else None
        if d is not None:
            yield _escape(n, d)
        return
    trust = integrity(ctx, n.task, v)
    if trust.unresolvable:
        return
    raw = resolve_str(ctx, n.task, v)
    if raw is None:
        # deferred: the runtime re-gates the resolved value (NIKA-SEC-004); the certificate lists
        # it among the targets only the run knows (`effects.dynamic`)
        return
    target = _target(n, raw)
    if target is None:
        return
    d = bound.check(n.plane, target, directory=n.kind == "dir")
    if d is None:
        return
    if trust.trusted:
        yield _escape(n, d, resolved=raw)
        return
    yield _untrusted(n, d, raw, trust.witness)


def _exec_values(ctx: RuleContext, bound: Boundary) -> Iterator[Diagnostic]:
    """The argv judge (under a program list) and the env judge on every ``exec:`` task: an
    untrusted value the check resolves is refused (AUTH-008); one it cannot is deferred to the
    run, which judges it again before the effect: no finding, a :class:`Regate` on the context
    (the certificate's ``effects.dynamic``)."""
    from checker.contracts.argv import judge_argv

    for task in ctx.workflow.tasks.values():
        for verb in task_verbs(task):
            if not isinstance(verb, Exec):
                continue
            if isinstance(bound.exec, tuple) and verb.command:
                texts = [_known_text(ctx, task, el) for el in verb.command]
                prefixes = [known_prefix(ctx, el) for el in verb.command]
                words = exec_words(ctx.workflow, task, verb.command, texts, prefixes)
                for f in judge_argv(words, bound.exec):
                    el = verb.command[f.index]
                    arg = f"command[{f.index}]"
                    if f.deferred:
                        source = integrity(ctx, task, el).source
                        ctx.regates.append(Regate(task.id, "exec", "argv", arg, source))
                        continue
                    n = NeedSite(task, "exec", el.span, el, kind="argv", arg=arg)
                    d = Denial("exec", f.text, f.text, f.reason)
                    yield _untrusted(n, d, f.text or "", integrity(ctx, task, el).witness)
            if verb.env is None:
                continue
            for name, entry in verb.env.items():
                v = entry.value
                if not isinstance(v, TemplateValue):
                    continue
                trust = integrity(ctx, task, v)
                why = effects.judge_env_value(name, untrusted=not trust.trusted)
                if why is None:
                    continue
                raw = resolve_str(ctx, task, v)
                if raw is None:
                    ctx.regates.append(Regate(task.id, "env", "env", f"env.{name}", trust.source))
                    continue
                n = NeedSite(task, "env", v.span, v, kind="env", arg=f"env.{name}")
                yield _untrusted(n, Denial("env", raw, None, why), raw, trust.witness)


def _known_text(ctx: RuleContext, task: Task, el: Value) -> str | None:
    if isinstance(el, TemplateValue):
        return resolve_str(ctx, task, el)
    if isinstance(el, ScalarValue) and el.value is not None and not isinstance(el.value, bool):
        return str(el.value)
    return None


def check_config_writes(ctx: RuleContext) -> Iterator[Diagnostic]:
    """``authority/002``: a ``permits.fs.write`` glob covering a configuration file that
    a granted program reads (``.git/config`` under ``exec: [git]``): the workflow could write the
    command the program then runs, so the pair is code execution."""
    p = ctx.workflow.permits
    if p is None or not p.fs_write:
        return
    bound = boundary_of(p)
    if bound.exec is False or bound.exec == ():
        return
    programs = list(bound.exec) if isinstance(bound.exec, tuple) else _programs_run(ctx)
    for entry in p.fs_write:
        if isinstance(entry, TemplateValue) or not isinstance(entry.value, str):
            continue
        hits = [
            (prog, cfg)
            for prog in dict.fromkeys(programs)
            for cfg in effects.config_files(prog)
            if match_path(entry.value, cfg) or match_path(entry.value, "./" + cfg)
        ]
        if not hits:
            continue
        prog, cfg = hits[0]
        more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
        yield lint(
            "authority/002",
            entry.span,
            f"`{entry.value}` lets the workflow write `{cfg}`, which `{prog}` reads and which can name a command "
            f"it runs{more}: together the two grants are code execution",
            f"Narrow the write grant to the files the workflow produces (e.g. `./out/**`), away from `{cfg}`.",
        )


def _programs_run(ctx: RuleContext) -> list[str]:
    out = []
    for task in ctx.workflow.tasks.values():
        for verb in task_verbs(task):
            if isinstance(verb, Exec) and verb.command:
                first = verb.command[0]
                if (
                    isinstance(first, ScalarValue)
                    and not isinstance(first, TemplateValue)
                    and isinstance(first.value, str)
                ):
                    out.append(first.value)
    return out


def _escape(n: NeedSite, d: Denial | None, resolved: str | None = None) -> Diagnostic:
    what = n.tool or ("`exec:`" if n.plane == "exec" else "this task")
    what = f"`{what}`" if n.tool else what
    if d is None:
        d = Denial(n.plane, None, None, "not granted")
    shown = f" (resolves to `{resolved}`)" if resolved is not None else ""
    msg = f"task `{n.task.id}`: {what} {_PLANE_VERBS.get(n.plane, 'needs authority')}{shown}, but {d.reason}"
    return report("NIKA-SEC-004", n.span, msg, _grant_help(n, d), task=n.task.id, fixes=_unwrap_shell(n))


def _unwrap_shell(n: NeedSite) -> tuple[Fix, ...]:
    """``command: ["sh", "-c", "<words>"]`` whose line has no shell syntax: the argv it runs, as a
    fix (so the grant it needs is that program, not a shell that runs anything)."""
    verb = n.task.verb
    if n.plane != "exec" or not isinstance(verb, Exec) or not verb.command or len(verb.command) != 3:
        return ()
    prog, flag, line = verb.command
    if not all(isinstance(v, ScalarValue) and not isinstance(v, TemplateValue) for v in verb.command):
        return ()
    if not (isinstance(prog.value, str) and effects.runs_any_code(prog.value) == "any shell line"):
        return ()
    words = plain_words(line.value) if flag.value == "-c" and isinstance(line.value, str) else None
    node = verb.value.get("command")
    if not words or node is None:
        return ()
    argv = "[" + ", ".join(json.dumps(w) for w in words) + "]"
    return (Fix(f"Run `{words[0]}` directly: `command: {argv}`", (Edit(node.span, argv),), "unsafe"),)


def _grant_help(n: NeedSite, d: Denial) -> str:
    if d.rule is not None:
        return f"Drop the `!{d.rule.pattern}` rule, or do without `{n.tool}`."
    if n.plane in ("fs.read", "fs.write"):
        key = "read" if n.plane == "fs.read" else "write"
        if d.canonical is None:
            return f"Add a glob covering the paths it needs to `permits.fs.{key}`."
        return f"Add a glob covering `{d.canonical}` to `permits.fs.{key}`, or use a path inside the grant."
    if n.plane == "net":
        return f"Add `{d.canonical}` to `permits.net.http`." if d.canonical else "Add the host to `permits.net.http`."
    if n.plane == "exec":
        if not d.canonical:
            return "Grant `exec:` (a program list or `true`)."
        wide = effects.runs_any_code(d.canonical)
        if wide is None:
            return f"Add `{d.canonical}` to `permits.exec`."
        return (
            f"Adding `{d.canonical}` to `permits.exec` allows {wide}, not just this one: the list then bounds "
            f"nothing. Prefer running the program itself in `command:` and granting that program."
        )
    if n.plane == "tools":
        return f'Add `"{n.tool}"` to `permits.tools`.'
    return "Grant it in `permits:`."


def _untrusted(n: NeedSite, d: Denial, raw: str, witness: tuple[Label, ...]) -> Diagnostic:
    canon = f", canonically `{d.canonical}`" if d.canonical is not None and d.canonical != raw else ""
    msg = (
        f"task `{n.task.id}`: an untrusted value reaches `{n.arg}` and resolves to `{raw}`{canon}, which escapes "
        f"the grant ({d.reason})"
    )
    return report(
        "NIKA-AUTH-008",
        n.span,
        msg,
        "Constrain the value to the grant, or, if its source is reviewed, declassify it on the task (`declassify:`).",
        related=witness,
        task=n.task.id,
    )


# -- absent permits -----------------------------------------------------------------------------


def _absent(ctx: RuleContext, needs: list[NeedSite]) -> Diagnostic:
    first = needs[0]
    tasks: list[str] = []
    related = []
    for n in needs:
        if n.task.id not in tasks:
            tasks.append(n.task.id)
            related.append(Label(n.span, f"task `{n.task.id}` {_PLANE_VERBS[n.plane]}"))
    block = inferred_block(ctx, needs)
    fixes: tuple[Fix, ...] = ()
    tasks_entry = ctx.workflow.value.entry("tasks")
    if tasks_entry is not None:
        text = ctx.source.text
        at = text.rfind("\n", 0, tasks_entry.key.span.start) + 1
        fixes = (Fix("Declare the `permits:` block this workflow needs", (Edit(Span(at, at), block),), "unsafe"),)
    names = ", ".join(f"`{t}`" for t in tasks[:3]) + (f" and {len(tasks) - 3} more" if len(tasks) > 3 else "")
    return report(
        "NIKA-AUTH-006",
        first.span,
        f"the workflow declares no `permits:` block, so it may touch nothing, yet {names} "
        f"need{'s' if len(tasks) == 1 else ''} authority",
        f"Declare what the body needs, e.g. `{inferred_block(ctx, needs, one_line=True)}` (review each grant).",
        related=related[1:],
        fixes=fixes,
        task=first.task.id,
    )


def grant_of(n: NeedSite) -> tuple[str | bool | None, str | None]:
    """The ``permits:`` entry one need calls for under its plane, and a note for the author:
    ``True`` is ``exec: true`` (a shell line, a computed program); ``None`` grants nothing (a
    target only the run knows that has no safe widest form, a floor host, an agent's pick).

    The one effect walk: :func:`inferred_block` folds these into the workflow's boundary, the
    projection (:mod:`checker.views.projection`) lists them per task."""
    if n.plane == "tools":
        return n.tool or None, None
    if n.plane == "exec" and n.kind in ("shell", ""):
        return True, None
    if n.value is None:
        return None, None
    if isinstance(n.value, TemplateValue):
        wide = _widest(n)
        note = f"`{n.task.id}` {n.arg} is computed at run time: narrow the {n.plane} grant to what it may be"
        return (True if n.plane == "exec" else wide), note
    raw = n.value.value
    target = _target(n, raw)
    if n.plane == "net" and target is None:
        return None, None
    if n.plane == "net" and target is not None and effects.floor_reason(target) is not None:
        return None, f"net: `{target}` is blocked by the SSRF floor and is not granted here"
    item = target if target is not None else raw
    if n.kind == "dir":
        item = item.rstrip("/") + "/**"
    return item, None


def inferred_block(ctx: RuleContext, needs: list[NeedSite], *, one_line: bool = False) -> str:
    """The ``permits:`` block the needs call for, as YAML text (never a loopback or floor host;
    targets the check cannot know are left as comments)."""
    planes: dict[str, list[str]] = {p: [] for p in effects.PLANES}
    notes: list[str] = []
    exec_any = False
    for n in needs:
        item, note = grant_of(n)
        if note is not None:
            notes.append(note)
        if item is True:
            exec_any = True
        elif isinstance(item, str) and item not in planes[n.plane]:
            planes[n.plane].append(item)

    def flow(xs: list[str]) -> str:
        return "[" + ", ".join(_q(x) for x in xs) + "]"

    entries: list[str] = []
    fs = [(k, planes[f"fs.{k}"]) for k in ("read", "write") if planes[f"fs.{k}"]]
    if fs:
        entries.append("fs: { " + ", ".join(f"{k}: {flow(v)}" for k, v in fs) + " }")
    if planes["net"]:
        entries.append(f"net: {{ http: {flow(planes['net'])} }}")
    if exec_any:
        entries.append("exec: true")
    elif planes["exec"]:
        entries.append(f"exec: {flow(planes['exec'])}")
    if planes["tools"]:
        entries.append(f"tools: {flow(planes['tools'])}")
    if one_line:
        return "permits: { " + ", ".join(entries) + " }" if entries else "permits: {}"
    lines = ["permits:", *(f"  {e}" for e in entries), *(f"  # {note}" for note in notes)]
    if not entries:
        lines[0] = "permits: {}"
    return "\n".join(lines) + "\n"


def _widest(n: NeedSite) -> str | None:
    """The grant a computed target needs at most: the directory its literal prefix names (``**``
    when it has none), the bare ``*`` for a computed host; ``None`` for a program (``exec: true``)."""
    v = n.value
    assert isinstance(v, TemplateValue)
    if n.plane == "net":
        return "*"
    if n.plane in ("fs.read", "fs.write"):
        t = v.template
        first = t.parts[0] if t is not None and t.parts and isinstance(t.parts[0], str) else ""
        prefix = first.rsplit("/", 1)[0] if "/" in first else ""
        canon = effects.canonical_path(prefix) if prefix else "."
        return "**" if canon == "." else canon + "/**"
    return None


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# -- literal URLs: the SSRF floor and data-as-code ----------------------------------------------


def check_urls(ctx: RuleContext) -> Iterator[Diagnostic]:
    """SEC-005 on a literal (or const-resolved) URL the floor refuses; SEC-008 on a code-bearing
    ``nika:fetch`` without ``inert:``."""
    p = ctx.workflow.permits
    declassified = (
        {effects.canonical_host(e.value) for e in p.net_http if effects.is_exact_loopback(e.value)} if p else set()
    )
    for n in all_needs(ctx):
        if n.kind != "url" or n.value is None:
            continue
        v = n.value
        if isinstance(v, TemplateValue):
            trust = integrity(ctx, n.task, v)
            if trust.unresolvable:
                continue
            raw = resolve_str(ctx, n.task, v)
        else:
            trust = None
            raw = v.value
        if raw is None:
            continue
        host = effects.url_host(raw)
        if host is not None and (trust is None or trust.trusted) and host not in declassified:
            why = effects.floor_reason(host)
            if why is not None:
                yield report(
                    "NIKA-SEC-005",
                    n.span,
                    f"task `{n.task.id}`: `{host}` is {why}; the SSRF floor refuses it whatever the grants",
                    "Call a public host; for a local service, grant its exact loopback name in `permits.net.http`.",
                    task=n.task.id,
                )
        if n.tool == "nika:fetch" and n.arg == "args.url" and n.task.inert is None:
            cb = effects.code_bearing(raw)
            if cb is not None:
                cls, ext = cb
                yield report(
                    "NIKA-SEC-008",
                    n.span,
                    f"task `{n.task.id}` fetches a `{ext}` file, a {cls.replace('-', ' ')} artifact that runs code "
                    "when it is loaded",
                    "If the file is only stored, never loaded, say why in `inert:`; if it is run, model that step as "
                    "an `exec:` under a program grant.",
                    task=n.task.id,
                )
