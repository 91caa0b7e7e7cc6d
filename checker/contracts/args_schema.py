"""The JSON Schema (draft 2020-12) of a builtin's arguments, written once from its contract.

:func:`json_schema` turns a :class:`~checker.contracts.model.ToolContract` into the schema of its
``args:``: each argument's type union with its closed values, default, range, length, pattern and
nested fields, required and closed sets, and the rules among arguments that depend only on which
are present (``exactly_one_of`` → ``oneOf``, ``requires … with`` → ``dependentRequired``, …).
What a schema cannot say (rules on values) stays with :func:`~checker.contracts.args_check.check_tool_args`.

A workflow may write any argument as a ``${{ … }}`` template, known only at run time: the workflow
schema (``nika schema``) passes the schema of a template as ``template`` and every argument accepts
one beside its own type. A model calling a tool sends concrete values, so the agent passes none.
"""

from __future__ import annotations

from typing import Any

from checker.contracts.load import contract
from checker.contracts.model import ArgSpec, Rule, ToolContract
from checker.core.durations import duration_pattern

Schema = dict[str, Any]


def json_schema(tool: ToolContract | str, *, template: Schema | None = None) -> Schema:
    """The schema of ``tool``'s ``args:`` (a contract or a builtin id; ``{"type": "object"}`` for an
    id that is not a builtin). With ``template``, each argument also accepts that schema."""
    c = contract(tool) if isinstance(tool, str) else tool
    out: Schema = {"type": "object"}
    if c is not None:
        _fields_into(out, c.args, template, open_=c.open_args, rules=c.rules)
    return out


def ecma_pattern(pattern: str) -> str:
    """A Python ``re`` pattern (``\\Z``/implicit full match) as an anchored ECMA-262 pattern."""
    body = pattern.removeprefix("^").removesuffix("\\Z").removesuffix("$")
    return f"^(?:{body})$"


def each_required(names: tuple[str, ...] | list[str]) -> list[Schema]:
    """One ``{"required": [name]}`` per name (the alternatives of a one-of/any-of)."""
    return [{"required": [n]} for n in names]


def _arg_alternative(t: str, spec: ArgSpec, template: Schema | None) -> Schema:
    """The schema of one member of an argument's type union."""
    values = list(spec.values)
    if t == "any":
        return {}
    if t == "enum":
        return {"enum": values} if values else {"type": "string"}
    if t == "null":
        return {"type": "null"}
    if t == "duration":
        out: Schema = {"type": "string", "pattern": duration_pattern()}
    elif t == "string":
        out = {"type": "string"}
        if spec.pattern is not None:
            out["pattern"] = ecma_pattern(spec.pattern)
        if spec.min_length is not None:
            out["minLength"] = spec.min_length
        if spec.max_length is not None:
            out["maxLength"] = spec.max_length
        if spec.template and template is not None:
            return template
    elif t in ("integer", "number"):
        out = {"type": t}
        if spec.min is not None:
            out["minimum"] = spec.min
        if spec.max is not None:
            out["maximum"] = spec.max
    elif t == "boolean":
        out = {"type": "boolean"}
    elif t == "array":
        out = {"type": "array"}
        if spec.items is not None:
            out["items"] = _arg_schema(spec.items, template)
        if spec.min_items is not None:
            out["minItems"] = spec.min_items
        if spec.max_items is not None:
            out["maxItems"] = spec.max_items
        return out
    else:  # object
        return _object_schema(spec, template)
    if values:
        out["enum"] = [v for v in values if _fits(t, v)] or values
    return out


def _fits(t: str, v: Any) -> bool:
    if t == "boolean":
        return isinstance(v, bool)
    if t in ("integer", "number"):
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    return isinstance(v, str)


def _object_schema(spec: ArgSpec, template: Schema | None) -> Schema:
    out: Schema = {"type": "object"}
    if spec.single_key:
        out |= {"minProperties": 1, "maxProperties": 1}
        out["properties"] = {f.name: _arg_schema(f, template) for f in spec.fields}
        out["additionalProperties"] = False
        return out
    if spec.fields:
        _fields_into(out, spec.fields, template, open_=spec.open, rules=spec.rules)
    if spec.entries is not None:
        out["additionalProperties"] = _arg_schema(spec.entries, template)
    return out


def _fields_into(
    out: Schema, specs: tuple[ArgSpec, ...], template: Schema | None, *, open_: bool, rules: tuple[Rule, ...]
) -> None:
    """Properties, required names, closedness and presence rules of a set of fields."""
    props: Schema = {}
    for s in specs:
        props[s.name] = False if s.reserved else _arg_schema(s, template)
    out["properties"] = props
    required = [s.name for s in specs if s.required]
    if required:
        out["required"] = required
    if not open_:
        out["additionalProperties"] = False
    constraints = [c for r in rules if (c := _presence_rule(r)) is not None]
    if constraints:
        out["allOf"] = constraints


def _presence_rule(rule: Rule) -> Schema | None:
    """A rule that depends only on which arguments are present, as a schema; else ``None``."""
    names = list(rule.args)
    if rule.kind == "exactly_one_of":
        return {"oneOf": each_required(names)}
    if rule.kind == "at_least_one_of":
        return {"anyOf": each_required(names)}
    if rule.kind == "at_most_one_of":
        pairs = [{"required": [a, b]} for i, a in enumerate(names) for b in names[i + 1 :]]
        return {"not": {"anyOf": pairs}}
    if rule.kind == "requires" and rule.with_ and not rule.value and rule.arg:
        return {"dependentRequired": {rule.arg: list(rule.with_)}}
    if rule.kind == "excludes" and rule.arg:
        return {"if": {"required": [rule.arg]}, "then": {"not": {"anyOf": each_required(names)}}}
    return None


def _arg_schema(spec: ArgSpec, template: Schema | None) -> Schema:
    """One argument: its type union, or a ``${{ … }}`` template (judged at run time). Without a
    template, a single type stands alone rather than as a one-member ``anyOf``."""
    alternatives = [_arg_alternative(t, spec, template) for t in spec.types]
    if any(a == {} for a in alternatives):
        out: Schema = {}
    elif template is None and len(alternatives) == 1:
        out = dict(alternatives[0])
    else:
        if template is not None and template not in alternatives:
            alternatives.append(template)
        out = {"anyOf": alternatives}
    if spec.doc:
        out["description"] = spec.doc
    if spec.has_default:
        out["default"] = spec.default
    return out
