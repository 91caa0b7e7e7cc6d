"""A JSON Schema (draft 2020-12) of the ``nika: v1`` workflow format, generated from our data.

Editors that validate YAML against a JSON Schema (yaml-language-server and every client built on
it) get completion, hover text and structural errors from it before the checker ever runs. The
schema is *generated*, never written by hand, from the facts the checker itself uses:

* the grammar table of :mod:`checker.grammar.table`: each field's kind, closed values, range, default and one-line doc;
* the 28 builtins of :mod:`checker.contracts.tables` with the contract of their arguments (types, enums,
  defaults, ranges, patterns, nested fields) and the rules among arguments that depend only on
  which arguments are present;
* the model provider ids, the ``after:`` predicates, the ``exec`` capture/decode modes, the
  TypeExpr grammar, the NIKA code pattern of ``on_codes`` and the Go-duration pattern.

What a schema cannot say (references, the graph, permits, rules that depend on a value) stays
with ``nika check``. The schema errs on the side of accepting: wherever the checker leaves a
``${{ … }}`` value alone because it is only known at run time, the schema accepts one too.
"""

from __future__ import annotations

from typing import Any

from checker.compiler import TASK_ID_RE, WORKFLOW_ID_RE
from checker.contracts import tables as C
from checker.contracts.args_schema import each_required, ecma_pattern, json_schema
from checker.core.codes import CODE_RE
from checker.core.durations import duration_pattern
from checker.core.vocab import PREDICATES, RESERVED_BINDINGS
from checker.grammar import table as G
from checker.grammar.table import Block, Field, Kind
from checker.rules.tools import MCP_RE
from checker.rules.types import CONSTRUCTORS, PRIMITIVES

DIALECT = "https://json-schema.org/draft/2020-12/schema"

PASCAL_NAME = r"^[A-Z][A-Za-z0-9]*$"

Schema = dict[str, Any]


def _ref(name: str) -> Schema:
    return {"$ref": f"#/$defs/{name}"}


def _described(schema: Schema, description: str | None) -> Schema:
    if description:
        return {"description": description, **schema}
    return schema


def _field(f: Field) -> Schema:
    """The schema of one grammar field, generated from its kind, values, range and default."""
    k = f.kind
    out: Schema
    if k in (Kind.STRING, Kind.TEXT):
        out = {"type": "string"}
        if k is Kind.TEXT:
            out["pattern"] = r"\S"
    elif k is Kind.BOOL:
        out = {"type": "boolean"}
    elif k is Kind.TRUE:
        out = {"const": True}
    elif k in (Kind.INT, Kind.NUMBER):
        out = {"type": "integer" if k is Kind.INT else "number"}
        if f.minimum is not None:
            out["minimum"] = f.minimum
        if f.maximum is not None:
            out["maximum"] = f.maximum
    elif k is Kind.ENUM:
        out = {"enum": list(f.values)}
    elif k is Kind.DURATION:
        out = _ref("duration")
    elif k is Kind.STRINGS:
        out = _string_list()
    elif k is Kind.MAPPING:
        out = {"type": "object"}
    elif k is Kind.LIST:
        out = {"type": "array"}
    elif k is Kind.SCHEMA:
        out = {"type": ["object", "boolean"]}
    elif k is Kind.TYPE:
        out = _ref("typeExpr")
    elif k is Kind.MODEL:
        return _ref("model")
    else:
        out = {}
    if f.template and out:
        out = _or_template(out)
    if f.has_default:
        out = {**out, "default": f.default}
    return out


def _closed(block: Block, shapes: dict[str, Schema] | None = None, **extra: Any) -> Schema:
    """An object whose keys are exactly the block's fields: each field's schema generated from the
    grammar (a field that holds a block, by the grammar's nesting table; or given in ``shapes``),
    its doc as ``description``, the block's required fields and the pairs of fields that exclude
    each other."""
    shapes = shapes or {}
    props = {f.name: _described(shapes[f.name] if f.name in shapes else _value(block, f), f.doc) for f in block.fields}
    out: Schema = {"type": "object", "properties": props, "additionalProperties": False}
    if block.required and "required" not in extra:
        out["required"] = list(block.required)
    if block.one_of and "oneOf" not in extra:
        extra = {"oneOf": each_required(block.one_of), **extra}
    pairs = sorted({tuple(sorted((f.name, x))) for f in block.fields for x in f.excludes})
    if pairs and "oneOf" not in extra:
        out["not"] = {"anyOf": [{"required": list(p)} for p in pairs]}
    return {**out, **extra}


def _value(block: Block, f: Field) -> Schema:
    """The schema of field ``f`` of ``block``: the block it holds, when the nesting table says it
    holds one, otherwise the field's own kind."""
    held = G.nest(block, f.name)
    if held is None:
        return _field(f)
    child = _closed(held.child)
    if held.holds is G.Holds.ITEMS:
        return {"type": "array", "items": child}
    if held.holds is G.Holds.EACH:
        return {"type": ["object", "null"], "additionalProperties": child}
    return child


def _or_template(schema: Schema) -> Schema:
    """``schema``, or a ``${{ … }}`` string resolved at run time."""
    return {"anyOf": [schema, _ref("template")]}


def _string_list(description: str | None = None) -> Schema:
    return _described({"type": "array", "items": {"type": "string"}}, description)


# -- builtin argument contracts --------------------------------------------------------------


def _args_def_name(tool_id: str) -> str:
    return "args-" + tool_id.split(":", 1)[1].replace("/", "-")


def _tool_args(c: C.ToolContract) -> Schema:
    shape = json_schema(c, template=_ref("template"))
    return {"type": shape.pop("type"), "description": f"Arguments of `{c.id}`.", **shape}


def _builtin_ids() -> Schema:
    return {
        "description": "A builtin tool of the closed `nika:` set.",
        "anyOf": [{"const": c.id, "description": c.summary} for c in C.contracts()],
    }


def _args_dispatch() -> list[Schema]:
    """``invoke:`` bodies: each builtin's ``args:`` must follow that builtin's contract."""
    out = []
    for c in C.contracts():
        then: Schema = {"properties": {"args": _ref(_args_def_name(c.id))}}
        if c.required_args():
            then["required"] = ["args"]
        out.append({"if": {"properties": {"tool": {"const": c.id}}, "required": ["tool"]}, "then": then})
    return out


# -- the TypeExpr grammar --------------------------------------------------------------------


def _type_defs() -> dict[str, Schema]:
    bounds: dict[str, Schema] = {
        "integer": {"min": {"type": "integer"}, "max": {"type": "integer"}},
        "number": {"min": {"type": "number"}, "max": {"type": "number"}},
        "string": {
            "pattern": {"type": "string", "maxLength": 512},
            "min_len": {"type": "integer", "minimum": 0},
            "max_len": {"type": "integer", "minimum": 0},
        },
    }
    shapes: dict[str, Schema] = {
        "array": _ref("typeExpr"),
        "map": _ref("typeExpr"),
        "object": {"type": "object", "additionalProperties": _ref("fieldTypeExpr")},
        "union": {"type": "array", "items": _ref("typeExpr"), "minItems": 2},
        "enum": {"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True},
    }
    shapes |= {k: {"type": "object", "properties": v, "additionalProperties": False} for k, v in bounds.items()}
    ctors = []
    for name in CONSTRUCTORS:
        props: Schema = {name: shapes[name]}
        if name == "object":
            props["additional"] = {"type": "boolean", "description": "Allow fields that are not listed."}
        ctors.append({"type": "object", "required": [name], "properties": props, "additionalProperties": False})
    return {
        "typeExpr": {
            "description": "A type: a primitive, a name declared under `types:`, or one constructor mapping.",
            "anyOf": [
                {"enum": list(PRIMITIVES)},
                {"type": "null", "description": "An unquoted `null` reads as the null type."},
                {"type": "string", "pattern": PASCAL_NAME},
                *ctors,
            ],
        },
        "fieldTypeExpr": {
            "description": "The type of an object field; `{optional: T}` marks a field that may be absent.",
            "anyOf": [
                _ref("typeExpr"),
                {
                    "type": "object",
                    "required": ["optional"],
                    "properties": {"optional": _ref("typeExpr")},
                    "additionalProperties": False,
                },
            ],
        },
    }


# -- envelope, tasks and verbs ---------------------------------------------------------------


def _model() -> Schema:
    prefixes = "|".join(sorted(C.providers()))
    return {
        "description": "`<provider>/<name>`, e.g. `mock/echo`.",
        "anyOf": [{"type": "string", "pattern": f"^(?:{prefixes})/.+$"}, _ref("template")],
    }


def _verb_defs() -> dict[str, Schema]:
    infer = _closed(
        G.INFER,
        {
            "thinking": {"type": "object", "properties": {f.name: _field(f) for f in G.THINKING.fields}},
            "vision": {
                "type": "array",
                "items": {"type": "object", "properties": {f.name: _field(f) for f in G.VISION_ITEM.fields}},
            },
        },
    )
    exec_ = _closed(
        G.EXEC,
        {
            "command": {"type": "array", "minItems": 1, "items": {"type": ["string", "number"]}},
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        # `decode:` has no meaning once the capture is already structured
        allOf=[
            {
                "if": {"properties": {"capture": {"const": "structured"}}, "required": ["capture"]},
                "then": {"not": {"required": ["decode"]}},
            }
        ],
    )
    agent_only = [c.id for c in C.contracts() if c.agent_only]
    invoke = _closed(
        G.INVOKE,
        {
            "tool": {
                "anyOf": [_ref("builtinTool"), {"type": "string", "pattern": MCP_RE.pattern.replace("\\Z", "$")}],
                "not": {"enum": agent_only},
            },
            "args": {"type": ["object", "null"]},
        },
        allOf=_args_dispatch(),
    )
    agent = _closed(G.AGENT)
    return {"infer": infer, "exec": exec_, "invoke": invoke, "agent": agent}


def _task_defs() -> dict[str, Schema]:
    codes = {"type": "array", "items": _ref("code")}
    retry = _closed(G.RETRY, {"on_codes": codes})
    on_error = _closed(
        G.ON_ERROR,
        {"on_codes": {**codes, "minItems": 1}},
    )
    verb_refs = {v: _ref(v) for v in G.VERBS}
    finally_step = _closed(G.FINALLY_STEP, verb_refs)
    reserved = {"not": {"enum": sorted(RESERVED_BINDINGS)}}
    task = _closed(
        G.TASK,
        {
            "with": {"type": "object", "propertyNames": reserved},
            "after": {"type": "object", "additionalProperties": {"enum": list(PREDICATES)}},
            "retry": _ref("retry"),
            "on_error": _ref("onError"),
            "on_finally": {"type": "array", "items": _ref("finallyStep")},
            "output": {"type": "object", "propertyNames": reserved, "additionalProperties": {"type": "string"}},
            **verb_refs,
        },
    )
    return {"task": task, "retry": retry, "onError": on_error, "finallyStep": finally_step}


def _secret() -> Schema:
    """A secret: a file secret names a ``path``, the other sources a ``key``."""
    return _closed(
        G.SECRET,
        **{
            "if": {"properties": {"source": {"const": "file"}}},
            "then": {"required": ["path"], "not": {"required": ["key"]}},
            "else": {"required": ["key"], "not": {"required": ["path"]}},
        },
    )


def _permits() -> Schema:
    return _closed(G.PERMITS, {"exec": {"anyOf": [{"type": "boolean"}, _string_list()]}})


def _run() -> Schema:
    """``run:``: an entropy mode or ``{seeded: N}``, and a clock that fits it."""
    return _closed(
        G.RUN,
        {"entropy": {"anyOf": [{"enum": list(G.ENTROPY_MODES)}, _closed(G.SEEDED)]}},
        # the legal pairs: ambient entropy on the system clock, deterministic entropy on a virtual one
        allOf=[
            {
                "if": {"properties": {"entropy": {"const": "ambient"}}, "required": ["entropy"]},
                "then": {"not": {"properties": {"clock": {"const": "virtual"}}, "required": ["clock"]}},
            },
            {
                "if": {"properties": {"clock": {"const": "system"}}, "required": ["clock"]},
                "then": {"not": {"properties": {"entropy": {"not": {"const": "ambient"}}}, "required": ["entropy"]}},
            },
        ],
    )


def _declarations() -> dict[str, Schema]:
    """``inputs``, ``config``, ``const`` and ``secrets``: mappings of names to declarations."""

    def each(entry: Schema) -> Schema:
        return {"type": ["object", "null"], "additionalProperties": entry}

    return {
        "inputs": each(_closed(G.INPUT, {"default": {}})),
        "config": each(_closed(G.CONFIG, {"default": {}})),
        # a mapping with both `type` and `value` is a typed constant; anything else is the value
        "const": each(
            {"if": {"type": "object", "required": ["type", "value"]}, "then": _closed(G.TYPED_CONST, {"value": {}})}
        ),
        "secrets": each(_secret()),
    }


def _envelope() -> dict[str, Schema]:
    """The schema of each envelope field."""
    return {
        "nika": {"const": "v1"},
        "workflow": _closed(
            G.WORKFLOW,
            {"id": {"type": "string", "pattern": ecma_pattern(WORKFLOW_ID_RE.pattern)}},
        ),
        "model": _ref("model"),
        "types": {
            "type": ["object", "null"],
            "propertyNames": {"pattern": PASCAL_NAME},
            "additionalProperties": _ref("typeExpr"),
        },
        **_declarations(),
        "permits": _permits(),
        "run": _run(),
        "policy": _closed(G.POLICY),
        "tasks": {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"pattern": ecma_pattern(TASK_ID_RE.pattern)},
            "additionalProperties": _ref("task"),
        },
        "outputs": {
            "type": "object",
            "additionalProperties": {"anyOf": [{"type": "string"}, _closed(G.OUTPUT)]},
        },
    }


def workflow_json_schema() -> dict[str, Any]:
    """The JSON Schema of a ``nika: v1`` workflow file (a fresh dict on every call)."""
    defs: dict[str, Schema] = {
        "template": {
            "type": "string",
            "pattern": r"\$\{\{",
            "description": "A `${{ … }}` expression, evaluated at run time.",
        },
        "duration": {
            "type": "string",
            "pattern": duration_pattern(),
            "description": 'A quoted Go duration such as "30s" or "1h30m": largest unit first, at most 24h.',
        },
        "code": {
            "type": "string",
            "pattern": CODE_RE.pattern,
            "description": "A NIKA error code such as `NIKA-TIMEOUT-001`.",
        },
        "model": _model(),
        "builtinTool": _builtin_ids(),
        **_type_defs(),
        **_verb_defs(),
        **_task_defs(),
    }
    for c in C.contracts():
        defs[_args_def_name(c.id)] = _tool_args(c)
    envelope = _envelope()
    props = {f.name: _described(envelope[f.name], f.doc) for f in G.ENVELOPE.fields}
    return {
        "$schema": DIALECT,
        "title": "Nika workflow (nika: v1)",
        "description": "A Nika workflow file. Generated by `nika schema` from the checker's own field and tool data.",
        "type": "object",
        "required": ["nika", "workflow", "tasks"],
        "properties": props,
        "additionalProperties": False,
        "$defs": defs,
    }
