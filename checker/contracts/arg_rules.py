"""The cross-argument rule kinds of ``builtins.toml`` (``exactly_one_of``, ``requires``, ``member_of``, …),
one judge each, applied by :mod:`checker.contracts.args_check` to a :class:`~checker.contracts.arg_scope.Scope`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from checker.contracts.arg_scope import Ctx, Scope, is_dynamic, key_span, same, value_span
from checker.contracts.model import Rule
from checker.contracts.text import fmt, when_text
from checker.core.diagnostics import Label
from checker.parse.values import ListValue, MapValue, ScalarValue


def _names(names: Iterable[str]) -> str:
    lst = [f"`{n}`" for n in names]
    return lst[0] if len(lst) == 1 else ", ".join(lst[:-1]) + " and " + lst[-1]


def _either(names: Iterable[str]) -> str:
    lst = [f"`{n}`" for n in names]
    return lst[0] if len(lst) == 1 else ", ".join(lst[:-1]) + " or " + lst[-1]


def apply_rule(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    handler = _RULES.get(rule.kind)
    if handler is not None:
        handler(rule, scope, ctx)


def _rule_exactly_one(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    if _require_any(rule, scope, ctx, f"one of {_either(rule.args)}"):
        _allow_one(
            rule,
            scope,
            ctx,
            lambda first, other: f"takes only one of {_either(rule.args)}, but `{first}` and `{other}` are both set",
        )


def _rule_at_most_one(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    _allow_one(
        rule, scope, ctx, lambda first, _: f"takes at most one of {_either(rule.args)}; `{first}` is already set"
    )


def _rule_at_least_one(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    _require_any(rule, scope, ctx, _either(rule.args))


def _require_any(rule: Rule, scope: Scope, ctx: Ctx, what: str) -> bool:
    """One of ``rule.args`` must be given (``what`` names them); whether one is."""
    if any(scope.present(a) for a in rule.args):
        return True
    ctx.add(rule.code, scope.anchor, f"{scope.owner} needs {what}, and none is given", rule.help or f"Add {what}.")
    return False


def _allow_one(rule: Rule, scope: Scope, ctx: Ctx, conflict: Callable[[str, str], str]) -> None:
    """At most one of ``rule.args``: each one after the first is reported, ``conflict(first, other)``."""
    present = [a for a in rule.args if scope.present(a)]
    for other in present[1:]:
        first = present[0]
        ctx.add(
            rule.code,
            key_span(scope, other),
            f"{scope.owner} {conflict(first, other)}",
            rule.help or f"Keep `{first}` or `{other}`, not both.",
            (Label(key_span(scope, first), f"`{first}` is set here"),),
        )


def _rule_requires(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    arg = rule.arg or ""
    if not scope.present(arg):
        return
    if rule.value:
        state, value, _ = scope.literal(arg)
        if state != "literal" or not any(same(value, v) for v in rule.value):
            return
    own = f"`{arg}: {fmt(scope.literal(arg)[1])}`" if rule.value else f"`{arg}`"
    if rule.with_:
        missing = [w for w in rule.with_ if not scope.present(w)]
        if missing:
            ctx.add(
                rule.code,
                key_span(scope, arg),
                f"{own} of {scope.owner} only applies together with {_names(rule.with_)}, "
                f"which {'is' if len(missing) == 1 else 'are'} not set",
                rule.help or f"Add {_names(missing)} or remove `{arg}`.",
            )
        return
    if scope.holds(rule.when) is False:
        ctx.add(
            rule.code,
            key_span(scope, arg),
            f"{own} of {scope.owner} needs {when_text(rule.when)}, but {scope.describe_when(rule.when)}",
            rule.help or f"Set {when_text(rule.when)} or remove `{arg}`.",
            scope.when_labels(rule.when),
        )


def _rule_required_when(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    if scope.holds(rule.when) is not True:
        return
    if any(scope.present(a) for a in rule.args):
        return
    keys = [k for k, _ in rule.when if scope.present(k)]
    span = value_span(scope, keys[0]) if keys else scope.anchor
    ctx.add(
        rule.code,
        span,
        f"{when_text(rule.when)} of {scope.owner} needs {_either(rule.args)}, and none is given",
        rule.help or f"Add {_either(rule.args)}.",
    )


def _rule_forbidden_when(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    arg = rule.arg or ""
    if not scope.present(arg) or scope.holds(rule.when) is not True:
        return
    ctx.add(
        rule.code,
        key_span(scope, arg),
        f"`{arg}` of {scope.owner} is not allowed when {scope.describe_when(rule.when)}",
        rule.help or f"Remove `{arg}`.",
        scope.when_labels(rule.when),
    )


def _rule_excludes(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    arg = rule.arg or ""
    if not scope.present(arg):
        return
    for other in rule.args:
        if scope.present(other):
            ctx.add(
                rule.code,
                key_span(scope, other),
                f"`{other}` cannot be combined with `{arg}` in {scope.owner}",
                rule.help or f"Remove `{other}` or `{arg}`.",
                (Label(key_span(scope, arg), f"`{arg}` is set here"),),
            )


def _rule_distinct(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    if len(rule.args) != 2:
        return
    a, b = rule.args
    sa, va, _ = scope.literal(a)
    sb, vb, _ = scope.literal(b)
    if sa == "literal" and sb == "literal" and same(va, vb):
        ctx.add(
            rule.code,
            value_span(scope, b),
            f"`{a}` and `{b}` of {scope.owner} are both `{fmt(va)}`",
            rule.help or f"Make `{b}` differ from `{a}`.",
            (Label(value_span(scope, a), f"`{a}` is set here"),),
        )


def _rule_member_of(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    arg, of = rule.arg or "", rule.of or ""
    if rule.when and scope.holds(rule.when) is not True:
        return
    state, value, written = scope.literal(arg)
    if state != "literal" or written is None:
        return
    pool = scope.entry(of)
    if pool is None or not isinstance(pool.value, ListValue):
        return
    items = pool.value.items
    if any(not isinstance(i, ScalarValue) or is_dynamic(i) for i in items):
        return
    if not any(same(value, i.value) for i in items if isinstance(i, ScalarValue)):
        ctx.add(
            rule.code,
            written.span,
            f"`{arg}: {fmt(value)}` of {scope.owner} is not one of its `{of}`",
            rule.help or f"Make `{arg}` one of the `{of}` values.",
            (Label(pool.value.span, f"the `{of}` are listed here"),),
        )


def _rule_excludes_key(rule: Rule, scope: Scope, ctx: Ctx) -> None:
    arg, target, key = rule.arg or "", rule.target or "", (rule.key or "").lower()
    if not scope.present(arg):
        return
    t = scope.entry(target)
    if t is None or not isinstance(t.value, MapValue):
        return
    for e in t.value.entries:
        k = e.key_text
        if k is not None and k.strip().lower() == key:
            ctx.add(
                rule.code,
                e.key.span,
                f"the `{k}` header conflicts with `{arg}` in {scope.owner}, which sets it itself",
                rule.help or f"Remove the `{k}` header.",
                (Label(key_span(scope, arg), f"`{arg}` is set here"),),
            )


def rule_last(rule: Rule, value: ListValue, path: str, ctx: Ctx) -> None:
    items = value.items
    for i, item in enumerate(items[:-1]):
        if isinstance(item, MapValue) and len(item.entries) == 1:
            name = item.entries[0].key_text
            if name in rule.keys:
                ctx.add(
                    rule.code,
                    item.entries[0].key.span,
                    f"`{name}` is item {i + 1} of {len(items)} in `{path}` of `{ctx.tool.id}`, but it must come last",
                    rule.help or f"Move `{name}` to the end of `{path}`.",
                )


_RULES = {
    "exactly_one_of": _rule_exactly_one,
    "at_most_one_of": _rule_at_most_one,
    "at_least_one_of": _rule_at_least_one,
    "requires": _rule_requires,
    "required_when": _rule_required_when,
    "forbidden_when": _rule_forbidden_when,
    "excludes": _rule_excludes,
    "distinct": _rule_distinct,
    "member_of": _rule_member_of,
    "excludes_key": _rule_excludes_key,
}
