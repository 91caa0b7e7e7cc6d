"""The argument checker: an ``invoke: {tool: "nika:…", args: …}`` judged on the model's values against the
tool's contract (shape, unknown and missing arguments, literal types, values and ranges, then the rules).
"""

from __future__ import annotations

import re

from checker.contracts.arg_rules import apply_rule, rule_last
from checker.contracts.arg_scope import Ctx, Scope, is_dynamic, matches_type, same
from checker.contracts.load import contract
from checker.contracts.model import ARG_CODE, SHAPE_CODE, ArgSpec, Rule
from checker.contracts.text import expected, fmt, num, range_text
from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Edit, Fix
from checker.core.durations import parse_duration
from checker.core.source import Span
from checker.core.suggest import did_you_mean
from checker.expr.template import has_island
from checker.parse.values import Entry, ListValue, MapValue, ScalarValue, Value, describe


def check_tool_args(
    tool_id: str,
    args: Value | None,
    *,
    task: str | None,
    anchor: Span,
) -> list[Diagnostic]:
    """Judge the ``args:`` of an ``invoke:`` against the tool's contract.

    ``args`` is the value of ``args:`` (``None`` when the key is absent). ``anchor`` is
    where findings that have no value of their own are placed (a missing argument, a rule that
    needs something added): the ``args:`` key when present, else the ``tool:`` value. Tools
    that are not builtins only get the shape check.
    """
    out: list[Diagnostic] = []
    c = contract(tool_id)
    if args is not None and not isinstance(args, MapValue):
        out.append(
            report(
                SHAPE_CODE,
                args.span,
                f"`args` of `{tool_id}` must be a mapping of argument names to values, but it is {describe(args)}",
                "Write each argument as a `name: value` pair under `args:`.",
                task=task,
            )
        )
        return out
    if c is None:
        return out
    ctx = Ctx(c, task, out)
    scope = Scope(c.args, args, anchor, "", f"`{tool_id}`")
    _check_mapping(scope, c.open_args, c.rules, ctx, top=True)
    return out


def _check_mapping(scope: Scope, open_: bool, rules: tuple[Rule, ...], ctx: Ctx, *, top: bool) -> None:
    # Names an unknown key was probably meant to be: the rename fixes them too, so they are
    # neither reported missing nor fed to the rules (one mistake, one finding).
    renamed: set[str] = set()
    m = scope.mapping
    for e in m.entries if m is not None else ():
        _check_entry(scope, e, open_, ctx, renamed, top=top)
    tool = ctx.tool.id
    for spec in scope.specs:
        if spec.required and spec.name not in renamed and not scope.present(spec.name):
            what = f"`{tool}` is missing its required argument" if top else f"{scope.owner} is missing"
            target = "under `args:`" if top else f"to `{scope.path}`"
            ctx.add(
                ARG_CODE,
                scope.anchor,
                f"{what} `{spec.name}`",
                f"Add `{spec.name}:` {target}.",
            )
    for rule in rules:
        if renamed and renamed & _rule_names(rule):
            continue
        apply_rule(rule, scope, ctx)


def _check_entry(scope: Scope, e: Entry, open_: bool, ctx: Ctx, renamed: set[str], *, top: bool) -> None:
    """One ``name: value`` of the mapping: its key must name a field, its value fit that field."""
    name = e.key_text
    if name is None:
        ctx.add(
            ARG_CODE,
            e.key.span,
            f"{scope.owner} argument names must be strings, not {describe(e.key)}",
            "Quote the key or rename it to one of the documented arguments.",
        )
        return
    if scope.mapping is not None and scope.mapping.entry(name) is not e:
        return  # a duplicate key: the YAML profile reports it
    spec = scope.spec(name)
    if spec is None:
        if not open_:
            _unknown_key(scope, e, name, ctx, renamed, top=top)
        return
    if spec.reserved:
        ctx.add(
            ARG_CODE,
            e.key.span,
            f"`{scope.dotted(name)}` is reserved in `{ctx.tool.id}` and cannot be used yet",
            "Remove it.",
        )
        return
    _check_value(spec, e.value, scope.dotted(name), e.key.span, ctx)


def _unknown_key(scope: Scope, e: Entry, name: str, ctx: Ctx, renamed: set[str], *, top: bool) -> None:
    """A key no field is named: renamed to the field it was probably meant to be when that is free."""
    known = [s.name for s in scope.specs if not s.reserved]
    aliases = {al: s.name for s in scope.specs for al in s.aliases}
    hit = aliases.get(name) or did_you_mean(name, known)
    where = f"{scope.owner} has no argument" if top else f"{scope.owner} has no field"
    listing = ", ".join(f"`{k}`" for k in known) or "nothing"
    if hit and not scope.present(hit):
        renamed.add(hit)
        safety = "safe" if name in aliases or name.lower() == hit.lower() else "maybe-incorrect"
        fix = Fix(f"Rename `{name}` to `{hit}`", (Edit(e.key.span, hit),), safety)
        ctx.add(ARG_CODE, e.key.span, f"{where} `{name}`", f"Rename it to `{hit}`.", fixes=(fix,))
    elif hit:
        ctx.add(ARG_CODE, e.key.span, f"{where} `{name}`", f"Remove it; `{hit}` is already set.")
    else:
        ctx.add(ARG_CODE, e.key.span, f"{where} `{name}`", f"Remove it; {scope.owner} accepts {listing}.")


def _rule_names(rule: Rule) -> set[str]:
    names = set(rule.args) | set(rule.with_) | {k for k, _ in rule.when}
    return names | {x for x in (rule.arg, rule.of, rule.target) if x}


def _check_value(spec: ArgSpec, value: Value, path: str, key_span: Span, ctx: Ctx) -> None:
    if is_dynamic(value):
        return
    tool = ctx.tool.id
    code = spec.code
    if not spec.nullable and isinstance(value, ScalarValue) and value.value is None:
        ctx.add(
            code,
            value.span,
            f"`{path}` of `{tool}` is null, and `{tool}` needs a value there",
            f"Give `{path}` a value; null is not accepted.",
        )
        return
    if not any(matches_type(t, value) for t in spec.types):
        ctx.add(
            code,
            value.span,
            f"`{path}` of `{tool}` must be {expected(spec.types)}, not {describe(value)}",
            f"Give `{path}` {expected(spec.types)}.",
        )
        return
    if isinstance(value, ScalarValue):
        _check_scalar(spec, value, path, ctx)
    elif isinstance(value, ListValue):
        _check_sequence(spec, value, path, ctx)
    elif isinstance(value, MapValue):
        _check_object(spec, value, path, key_span, ctx)


def _check_scalar(spec: ArgSpec, value: ScalarValue, path: str, ctx: Ctx) -> None:
    tool = ctx.tool.id
    v = value.value
    code = spec.code
    if spec.values and not any(same(v, x) for x in spec.values):
        choices = [str(x) for x in spec.values]
        hit = did_you_mean(v, choices) if isinstance(v, str) else None
        listing = ", ".join(f"`{fmt(x)}`" for x in spec.values)
        fixes = (Fix(f"Replace with `{hit}`", (Edit(value.span, hit),), "maybe-incorrect"),) if hit else ()
        ctx.add(
            code,
            value.span,
            f"`{fmt(v)}` is not an accepted value of `{path}` in `{tool}`",
            f"Use `{hit}`." if hit else f"Use one of {listing}.",
            fixes=fixes,
        )
        return
    if isinstance(v, str):
        _check_string(spec, value, v, path, ctx)
        return
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        lo, hi = spec.min, spec.max
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            ctx.add(
                code,
                value.span,
                f"`{path}: {num(v)}` is out of range for `{tool}` ({range_text(spec)})",
                f"Pick a value in {range_text(spec)}.",
            )


def _check_string(spec: ArgSpec, value: ScalarValue, v: str, path: str, ctx: Ctx) -> None:
    """A literal string: an expression where one is needed, a duration, the pattern, the length."""
    tool = ctx.tool.id
    code = spec.code
    if spec.template and not has_island(v):
        ctx.add(
            code,
            value.span,
            f"`{path}` of `{tool}` is a plain string, not an expression",
            f'Write it as an expression, e.g. `{path}: "${{{{ tasks.x.output.ok }}}}"`.',
        )
        return
    if "duration" in spec.types and not spec.values and parse_duration(v, positive=False, max_ms=None)[0] is None:
        ctx.add(
            code,
            value.span,
            f"`{v}` is not a duration (`{path}` of `{tool}`): {parse_duration(v, positive=False, max_ms=None)[1]}",
            "Write a Go duration such as `500ms`, `30s`, `5m` or `1h30m`.",
        )
        return
    if spec.pattern is not None and not re.fullmatch(spec.pattern, v):
        ctx.add(
            code,
            value.span,
            f"`{v}` does not have the form `{path}` of `{tool}` needs (`{spec.pattern}`)",
            f"Change `{path}` so it matches `{spec.pattern}`.",
        )
        return
    n = len(v)
    if spec.min_length is not None and n < spec.min_length:
        ctx.add(
            code,
            value.span,
            f"`{path}` of `{tool}` is too short ({n} characters, at least {spec.min_length})",
            f"Give `{path}` at least {spec.min_length} character(s).",
        )
    elif spec.max_length is not None and n > spec.max_length:
        ctx.add(
            code,
            value.span,
            f"`{path}` of `{tool}` is too long ({n} characters, at most {spec.max_length})",
            f"Shorten `{path}`, or split the work across several tasks with `for_each:`.",
        )


def _check_sequence(spec: ArgSpec, value: ListValue, path: str, ctx: Ctx) -> None:
    tool = ctx.tool.id
    n = len(value.items)
    if spec.min_items is not None and n < spec.min_items:
        ctx.add(
            spec.code,
            value.span,
            f"`{path}` of `{tool}` has {n} item(s), at least {spec.min_items} needed",
            f"Add items to `{path}`.",
        )
    elif spec.max_items is not None and n > spec.max_items:
        ctx.add(
            spec.code,
            value.span,
            f"`{path}` of `{tool}` has {n} items, at most {spec.max_items} allowed",
            f"Trim `{path}` to {spec.max_items} items, or split the work.",
        )
    if spec.items is not None:
        for i, item in enumerate(value.items):
            _check_value(spec.items, item, f"{path}[{i}]", item.span, ctx)
    for rule in spec.rules:
        if rule.kind == "last":
            rule_last(rule, value, path, ctx)


def _check_object(spec: ArgSpec, value: MapValue, path: str, key_span: Span, ctx: Ctx) -> None:
    if spec.single_key:
        _check_op_map(spec, value, path, ctx)
        return
    if spec.fields or spec.rules:
        scope = Scope(spec.fields, value, key_span, path, f"`{path}` of `{ctx.tool.id}`")
        _check_mapping(scope, spec.open or not spec.fields, spec.rules, ctx, top=False)
    if spec.entries is not None:
        for name, e in value.items():
            _check_value(spec.entries, e.value, f"{path}.{name}", e.key.span, ctx)


def _check_op_map(spec: ArgSpec, value: MapValue, path: str, ctx: Ctx) -> None:
    """A one-key map naming an operation (``- grain: {intensity: 32}``)."""
    tool = ctx.tool.id
    names = [f.name for f in spec.fields]
    if len(value.entries) != 1:
        ctx.add(
            spec.code,
            value.span,
            f"`{path}` of `{tool}` must name exactly one operation, found {len(value.entries)}",
            "Split it so each list item is a single `op: {…}` mapping.",
        )
        return
    e = value.entries[0]
    name = e.key_text
    op = spec.get_field(name) if name is not None else None
    if op is None:
        hit = did_you_mean(name, names) if name is not None else None
        ctx.add(
            spec.code,
            e.key.span,
            f"`{name}` is not an operation of `{tool}`",
            f"Rename it to `{hit}`." if hit else "Use one of " + ", ".join(f"`{n}`" for n in names) + ".",
        )
        return
    _check_value(op, e.value, f"{path}.{name}", e.key.span, ctx)
