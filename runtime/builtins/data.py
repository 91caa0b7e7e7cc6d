"""Data builtins: ``nika:jq``, ``nika:json_diff``, ``nika:json_merge_patch``, ``nika:validate``,
``nika:convert``. Pure: no filesystem, no clock, no randomness; reads no ``ctx.extra`` key.

``nika:jq`` runs libjq (the ``jq`` package), the same jq the language uses for ``output:``
bindings; each distinct program is compiled once per process and cached, and evaluated in a
killable worker with a deadline (:mod:`runtime.tools.jq_processes`; a task ``timeout:`` stops it too).
"""

from __future__ import annotations

import copy
from typing import Any

from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._formats import (
    FormatError,
    dump_csv,
    dump_toml,
    dump_yaml,
    load_csv,
    load_toml,
    load_yaml,
)
from runtime.builtins._support import ARG_CODE, arg, describe, json_equal, need, non_json_at, pointer_escape
from runtime.errors import TaskError
from runtime.guard import limits
from runtime.tools.jq import compile_program, wrapped
from runtime.tools.jq_processes import JqTimeLimit
from runtime.tools.jq_processes import evaluate as in_worker

JQ, DIFF, MERGE, VALIDATE, CONVERT = (
    "nika:jq",
    "nika:json_diff",
    "nika:json_merge_patch",
    "nika:validate",
    "nika:convert",
)

# ── nika:jq ───────────────────────────────────────────────────────────────────────────────────

JQ_001 = "NIKA-BUILTIN-JQ-001"
# A program that does not compile. The checker reports literal programs under this code; one
# assembled at run time (from a `${{ … }}`) can only fail here, under the same code.
JQ_COMPILE = "NIKA-VAR-005"


# The one jq compiler (cached per program): no view of the process environment.
_program = compile_program


@builtin(JQ)
async def jq(args: dict[str, Any], ctx: BuiltinContext) -> Any:
    """The single value ``expression`` yields on ``input``; zero or several values fail."""
    expression = need(args, JQ, "expression", str)
    value = args.get("input")  # the stdlib leaves `input:` optional: a program without one reads null
    bad = non_json_at(value)
    if bad is not None:
        raise TaskError(JQ_001, f"`input:` of `{JQ}` is not a JSON value at `{bad or '/'}`")
    try:
        _program(expression)
    except ValueError as e:
        raise TaskError(JQ_COMPILE, f"the jq program does not compile: {_jq_message(e)}") from None
    try:
        results = await in_worker(wrapped(expression), value)
    except ValueError as e:
        raise TaskError(JQ_001, f"the jq program failed on its input: {_jq_message(e)}") from None
    except JqTimeLimit:
        raise TaskError(
            JQ_001,
            f"the jq program ran longer than {limits.JQ_TIME_LIMIT_S:g}s and was stopped",
            details={"time_limit_s": limits.JQ_TIME_LIMIT_S},
        ) from None
    if len(results) != 1:
        raise TaskError(
            JQ_001,
            f"the jq program yielded {len(results)} values where `{JQ}` returns exactly one;"
            " wrap it in `[ … ]` to collect several, or use `first(…)`",
            details={"count": len(results)},
        )
    return results[0]


def _jq_message(e: Exception) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else type(e).__name__


# ── nika:json_diff (RFC 6902) ─────────────────────────────────────────────────────────────────

DIFF_001 = "NIKA-BUILTIN-JSON_DIFF-001"


@builtin(DIFF)
async def json_diff(args: dict[str, Any], ctx: BuiltinContext) -> list[dict[str, Any]]:
    """An RFC 6902 patch that turns ``before`` into ``after`` (``[]`` when they are equal).

    Objects are compared key by key, arrays index by index (the common prefix is diffed, then
    the tail is removed from the end or appended), anything else is replaced whole.
    """
    for name in ("before", "after"):
        bad = non_json_at(args[name])
        if bad is not None:
            raise TaskError(DIFF_001, f"`{name}:` of `{DIFF}` is not a JSON value at `{bad or '/'}`")
    ops: list[dict[str, Any]] = []
    _diff(args["before"], args["after"], "", ops)
    return ops


def _diff(a: Any, b: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if json_equal(a, b):
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            sub = f"{path}/{pointer_escape(k)}"
            if k in b:
                _diff(a[k], b[k], sub, ops)
            else:
                ops.append({"op": "remove", "path": sub})
        for k in b:
            if k not in a:
                ops.append({"op": "add", "path": f"{path}/{pointer_escape(k)}", "value": copy.deepcopy(b[k])})
    elif isinstance(a, list) and isinstance(b, list):
        common = min(len(a), len(b))
        for i in range(common):
            _diff(a[i], b[i], f"{path}/{i}", ops)
        for i in range(len(a) - 1, common - 1, -1):
            ops.append({"op": "remove", "path": f"{path}/{i}"})
        for i in range(common, len(b)):
            ops.append({"op": "add", "path": f"{path}/{i}", "value": copy.deepcopy(b[i])})
    else:
        ops.append({"op": "replace", "path": path, "value": copy.deepcopy(b)})


# ── nika:json_merge_patch (RFC 7386 / 7396) ───────────────────────────────────────────────────

MERGE_001 = "NIKA-BUILTIN-JSON_MERGE_PATCH-001"


@builtin(MERGE)
async def json_merge_patch(args: dict[str, Any], ctx: BuiltinContext) -> dict[str, Any]:
    """``target`` with ``patch`` merged in: ``null`` removes a key, objects merge, the rest replaces."""
    for name in ("target", "patch"):
        value = args.get(name)
        if not isinstance(value, dict):
            raise TaskError(MERGE_001, f"`{name}:` of `{MERGE}` must be an object, but it is {describe(value)}")
        bad = non_json_at(value)
        if bad is not None:
            raise TaskError(MERGE_001, f"`{name}:` of `{MERGE}` is not a JSON value at `{bad}`")
    return _merge(args["target"], args["patch"])


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


# ── nika:validate (JSON Schema) ───────────────────────────────────────────────────────────────

VALIDATE_001, VALIDATE_002 = "NIKA-BUILTIN-VALIDATE-001", "NIKA-BUILTIN-VALIDATE-002"


@builtin(VALIDATE)
async def validate(args: dict[str, Any], ctx: BuiltinContext) -> dict[str, Any]:
    """``{valid, errors}``; invalid data is a report, never a failure.

    Each error is ``{path, message, keyword, schema_path}`` (both paths are JSON Pointers), in
    document order. The dialect is the one ``$schema`` names, draft 2020-12 otherwise; ``format``
    is an annotation only (as 2020-12 specifies), so a verdict never depends on which optional
    format checkers happen to be installed; ``$ref`` never leaves the schema (no network).
    """
    from jsonschema.exceptions import SchemaError

    from runtime.tools.schema_validator import SchemaEvalError, iter_errors

    schema = args.get("schema")
    if not isinstance(schema, (dict, bool)):
        raise TaskError(
            VALIDATE_001, f"`schema:` of `{VALIDATE}` must be an object or a boolean, not {describe(schema)}"
        )
    data = args["data"]
    if arg(args, VALIDATE, "format") == "yaml":
        if not isinstance(data, str):
            raise TaskError(VALIDATE_002, f"with `format: yaml`, `data:` must be YAML text, but it is {describe(data)}")
        try:
            data = load_yaml(data)
        except FormatError as e:
            raise TaskError(VALIDATE_002, f"`data:` does not parse as YAML: {e}") from None
    try:
        errors = sorted(iter_errors(schema, data), key=_error_order)
    except SchemaError as e:
        raise TaskError(VALIDATE_001, f"the schema is not valid JSON Schema: {e.message}") from None
    except SchemaEvalError as e:
        raise TaskError(VALIDATE_001, f"the schema has a {e}") from None
    return {"valid": not errors, "errors": [_error(e) for e in errors]}


def _error_order(e: Any) -> tuple[list[tuple[int, int, str]], str]:
    """Errors in document order: by instance path (array indices numerically), then keyword."""
    return [(0, p, "") if isinstance(p, int) else (1, 0, str(p)) for p in e.absolute_path], str(e.validator)


def _error(e: Any) -> dict[str, Any]:
    return {
        "path": "".join(f"/{pointer_escape(str(p))}" for p in e.absolute_path),
        "message": e.message,
        "keyword": e.validator,
        "schema_path": "".join(f"/{pointer_escape(str(p))}" for p in e.absolute_schema_path),
    }


# ── nika:convert ──────────────────────────────────────────────────────────────────────────────

CONVERT_001, CONVERT_002 = "NIKA-BUILTIN-CONVERT-001", "NIKA-BUILTIN-CONVERT-002"


@builtin(CONVERT)
async def convert(args: dict[str, Any], ctx: BuiltinContext) -> Any:
    """Read ``input`` as ``from:``, write it as ``to:``.

    ``json`` is the language's own value, so ``to: json`` returns structured data and
    ``from: json|yaml|toml`` accepts either text in that format or a value that is already
    structured. ``yaml``, ``toml`` and ``csv`` outputs are text. CSV cells are read as strings,
    never guessed into numbers; a value with no faithful form in the target (a TOML null, a CSV
    of scalars) fails with NIKA-BUILTIN-CONVERT-002 like an input that does not parse.
    """
    src, dst = need(args, CONVERT, "from", str), need(args, CONVERT, "to", str)
    if src == dst:
        raise TaskError(CONVERT_001, f"`from:` and `to:` are both `{src}`; a conversion needs two formats")
    guard = arg(args, CONVERT, "formula_guard")
    if not isinstance(guard, bool):
        raise TaskError(CONVERT_001, f"`formula_guard:` must be true or false, but it is {describe(guard)}")
    has_header = arg(args, CONVERT, "has_header")
    if not isinstance(has_header, bool):
        raise TaskError(ARG_CODE, f"`has_header:` must be true or false, but it is {describe(has_header)}")
    try:
        value = _parse(args["input"], src, has_header)
    except FormatError as e:
        raise TaskError(CONVERT_002, f"`input:` does not parse as {src}: {e}", details={"from": src}) from None
    try:
        return _write(value, dst, has_header, guard)
    except FormatError as e:
        raise TaskError(CONVERT_002, f"`input:` cannot be written as {dst}: {e}", details={"to": dst}) from None


def _parse(value: Any, fmt: str, has_header: bool) -> Any:
    import json

    if not isinstance(value, str):
        if fmt == "csv":
            raise FormatError(f"CSV input must be text, but it is {describe(value)}")
        bad = non_json_at(value)
        if bad is not None:
            raise FormatError(f"the value is not JSON at `{bad or '/'}`")
        return value
    if fmt == "json":
        try:
            return json.loads(value)
        except json.JSONDecodeError as e:
            raise FormatError(f"{e.msg} (line {e.lineno}, column {e.colno})") from None
    if fmt == "yaml":
        return load_yaml(value)
    if fmt == "toml":
        return load_toml(value)
    return load_csv(value, has_header)


def _write(value: Any, fmt: str, has_header: bool, guard: bool) -> Any:
    if fmt == "json":
        return value
    if fmt == "yaml":
        return dump_yaml(value)
    if fmt == "toml":
        return dump_toml(value)
    return dump_csv(value, has_header, guard)
