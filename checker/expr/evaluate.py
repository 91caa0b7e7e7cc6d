"""Run-time evaluation of ``cel-subset/0.1`` expressions and rendering of templates.

Semantics (spec 03 side constraints, spec 04 §Value rendering):

* Strong typing, no implicit conversion: comparing values of different types (``42 == "42"``)
  raises ``NIKA-VAR-006``. ``null`` is the one exception for ``==``/``!=``. ``int`` and
  ``double`` compare numerically. Equality of lists and maps is element-wise under the same rule.
* ``&&``, ``||`` and ``!`` take booleans only and ``&&``/``||`` short-circuit left to right; the
  condition of ``?:`` must be a boolean.
* An unresolvable path — unknown root, missing key, a field of ``null``, an index out of range —
  raises ``NIKA-VAR-001``; ``has(x)`` turns exactly that error into ``false``.
* ``in`` tests membership in a list (by the same equality) or key presence in a map.
* ``size`` counts code points of a string, bytes of a bytes value, items of a list or map.

Scopes are plain Python data as produced by a YAML/JSON loader: ``None``, ``bool``, ``int``,
``float``, ``str``, ``bytes``, lists/tuples and mappings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from checker.expr.lexer import ExprError
from checker.expr.nodes import (
    Binary,
    Call,
    Expr,
    Ident,
    Index,
    ListLit,
    Literal,
    Member,
    MethodCall,
    Ternary,
    Unary,
)
from checker.expr.template import Island, Template, parse_template

__all__ = [
    "BYTES_IN_STRING",
    "TYPE_ERROR",
    "UNRESOLVED",
    "EvalError",
    "evaluate",
    "evaluate_bool",
    "render_string",
    "render_template",
]

UNRESOLVED: Final = "NIKA-VAR-001"
TYPE_ERROR: Final = "NIKA-VAR-006"
BYTES_IN_STRING: Final = "NIKA-VAR-007"


class EvalError(Exception):
    """An evaluation failure, positioned on the node that failed (expression offsets, or value
    offsets once it comes out of :func:`render_template`)."""

    def __init__(self, message: str, start: int = 0, end: int = 0, code: str = TYPE_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.start = start
        self.end = end
        self.code = code

    def shifted(self, delta: int) -> EvalError:
        return EvalError(self.message, self.start + delta, self.end + delta, self.code)

    def __repr__(self) -> str:
        return f"EvalError({self.message!r}, {self.start}, {self.end}, code={self.code!r})"


# -- value kinds -------------------------------------------------------------------------------


def _kind(v: object) -> str:
    """The CEL-ish type name of a value, for type checks and messages."""
    if v is None:
        return "null"
    t = type(v)
    if t is bool:
        return "bool"
    if t is str:
        return "string"
    if t is int:
        return "int"
    if t is float:
        return "double"
    if t is list or t is tuple:
        return "list"
    if t is dict:
        return "map"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, str):
        return "string"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, bytes | bytearray | memoryview):
        return "bytes"
    if isinstance(v, Mapping):
        return "map"
    if isinstance(v, list | tuple):
        return "list"
    return t.__name__


def _family(kind: str) -> str:
    return "number" if kind in ("int", "double") else kind


_ORDERED: Final = frozenset({"number", "string", "bool", "bytes"})


def _describe(node: Expr) -> str:
    """Short source-like text for a reference chain, used in messages."""
    parts: list[str] = []
    current: Expr = node
    while True:
        if isinstance(current, Member):
            parts.append("." + current.name)
            current = current.obj
        elif isinstance(current, Index):
            idx = current.index
            parts.append(f"[{idx.value!r}]" if isinstance(idx, Literal) else "[…]")
            current = current.obj
        elif isinstance(current, Ident):
            parts.append(current.name)
            break
        else:
            parts.append("(…)")
            break
    return "".join(reversed(parts))


# -- comparisons -------------------------------------------------------------------------------


def _mismatch(a: object, b: object, node: Expr, op: str) -> EvalError:
    return EvalError(
        f"cannot apply `{op}` to {_kind(a)} and {_kind(b)} (values are never converted): compare "
        "values of the same type, e.g. quote the number or convert the value upstream",
        node.start,
        node.end,
    )


def _equal(a: object, b: object, node: Expr, op: str) -> bool:
    if a is None or b is None:
        return a is None and b is None
    ka, kb = _kind(a), _kind(b)
    fa = _family(ka)
    if fa != _family(kb):
        raise _mismatch(a, b, node, op)
    if fa == "list":
        assert isinstance(a, list | tuple) and isinstance(b, list | tuple)
        if len(a) != len(b):
            return False
        return all(_equal(x, y, node, op) for x, y in zip(a, b, strict=True))
    if fa == "map":
        assert isinstance(a, Mapping) and isinstance(b, Mapping)
        if len(a) != len(b) or any(k not in b for k in a):
            return False
        return all(_equal(a[k], b[k], node, op) for k in a)
    if fa not in _ORDERED:
        raise EvalError(f"values of type {ka} cannot be compared", node.start, node.end)
    return a == b


def _order(op: str, a: Any, b: Any, node: Expr) -> bool:
    fa, fb = _family(_kind(a)), _family(_kind(b))
    if fa != fb:
        raise _mismatch(a, b, node, op)
    if fa not in _ORDERED:
        raise EvalError(
            f"`{op}` orders numbers, strings, booleans or bytes, not {_kind(a)}: compare a field or `size(…)` instead",
            node.start,
            node.end,
        )
    if op == "<":
        return bool(a < b)
    if op == "<=":
        return bool(a <= b)
    if op == ">":
        return bool(a > b)
    return bool(a >= b)


def _member_of(needle: Any, haystack: Any, node: Binary) -> bool:
    kind = _kind(haystack)
    if kind == "list":
        return any(_equal(needle, item, node, "in") for item in haystack)
    if kind == "map":
        if _family(_kind(needle)) in ("list", "map") or needle is None:
            raise EvalError(
                f"a map key cannot be {_kind(needle)}: test a string key, e.g. `'name' in m`",
                node.start,
                node.end,
            )
        try:
            return needle in haystack
        except TypeError:
            raise EvalError(f"a map key cannot be {_kind(needle)}: test a string key", node.start, node.end) from None
    hint = " — for a substring test write `s.contains(x)`" if kind == "string" else ""
    raise EvalError(
        f"`in` needs a list or a map on its right, got {kind}{hint}",
        node.start,
        node.end,
    )


# -- evaluation --------------------------------------------------------------------------------

Scope = Mapping[str, Any]


def _eval_literal(node: Literal, scope: Scope) -> Any:
    return node.value


def _eval_ident(node: Ident, scope: Scope) -> Any:
    try:
        return scope[node.name]
    except KeyError:
        raise EvalError(
            f"`{node.name}` is not defined here: use a namespace such as `inputs.{node.name}` or "
            f"`with.{node.name}` (`item`/`index` exist only inside `for_each`)",
            node.start,
            node.end,
            UNRESOLVED,
        ) from None


def _step(obj: Any, key: Any, node: Member | Index) -> Any:
    """Select ``key`` in ``obj`` (a member or index step)."""
    if obj is None:
        where = _describe(node.obj)
        raise EvalError(
            f"`{where}` is null, so `{_describe(node)}` does not exist: guard it with "
            f"`has({_describe(node)})` or `{where} != null`",
            node.start,
            node.end,
            UNRESOLVED,
        )
    kind = _kind(obj)
    if kind == "map":
        if not isinstance(key, str | int | float | bool):
            raise EvalError(f"a map cannot be indexed by {_kind(key)}", node.start, node.end)
        try:
            return obj[key]
        except KeyError:
            where = _describe(node.obj)
            missing = f"field `{key}`" if isinstance(node, Member) else f"key {key!r}"
            raise EvalError(
                f"`{where}` has no {missing}: check the spelling, or test it first with `has({_describe(node)})`",
                node.start,
                node.end,
                UNRESOLVED,
            ) from None
    where = _describe(node.obj)
    if isinstance(node, Member):
        raise EvalError(
            f"`{where}` is a {kind}, so it has no field `{node.name}`: check the path",
            node.start,
            node.end,
            UNRESOLVED,
        )
    if kind == "list":
        if isinstance(key, bool) or not isinstance(key, int):
            raise EvalError(
                f"a list index must be an int, got {_kind(key)}: write e.g. `[0]`",
                node.start,
                node.end,
            )
        if not 0 <= key < len(obj):
            raise EvalError(
                f"index {key} is out of range for `{where}` ({len(obj)} items): check `size()` first",
                node.start,
                node.end,
                UNRESOLVED,
            )
        return obj[key]
    raise EvalError(f"a {kind} cannot be indexed: only lists and maps can", node.start, node.end)


def _eval_member(node: Member, scope: Scope) -> Any:
    return _step(_eval(node.obj, scope), node.name, node)


def _eval_index(node: Index, scope: Scope) -> Any:
    obj = _eval(node.obj, scope)
    return _step(obj, _eval(node.index, scope), node)


def _size(value: Any, node: Expr) -> int:
    kind = _kind(value)
    if kind in ("string", "bytes", "list", "map"):
        return len(value)
    raise EvalError(f"`size` needs a string, bytes, list or map, got {kind}", node.start, node.end)


def _eval_call(node: Call, scope: Scope) -> Any:
    arg = node.args[0]
    if node.name == "has":
        try:
            value = _eval(arg, scope)
        except EvalError as exc:
            if exc.code == UNRESOLVED:
                return False
            raise
        return value is not None
    if node.name == "size":
        return _size(_eval(arg, scope), node)
    raise EvalError(f"unknown function `{node.name}`", node.start, node.end)


def _eval_method(node: MethodCall, scope: Scope) -> Any:
    obj = _eval(node.obj, scope)
    if node.name == "size":
        return _size(obj, node)
    arg = _eval(node.args[0], scope)
    if not isinstance(obj, str) or not isinstance(arg, str):
        bad = obj if not isinstance(obj, str) else arg
        hint = " — for list membership write `x in list`" if _kind(obj) == "list" else ""
        raise EvalError(
            f"`.{node.name}()` works on strings only, got {_kind(bad)}{hint}",
            node.start,
            node.end,
        )
    if node.name == "contains":
        return arg in obj
    if node.name == "startsWith":
        return obj.startswith(arg)
    if node.name == "endsWith":
        return obj.endswith(arg)
    raise EvalError(f"unknown method `.{node.name}()`", node.start, node.end)


def _need_bool(value: Any, node: Expr, what: str) -> bool:
    if type(value) is not bool:
        raise EvalError(
            f"{what} must be a boolean, got {_kind(value)}: compare explicitly, e.g. `x != null` or `size(x) > 0`",
            node.start,
            node.end,
        )
    return value


def _eval_unary(node: Unary, scope: Scope) -> Any:
    return not _need_bool(_eval(node.operand, scope), node.operand, "the operand of `!`")


def _eval_binary(node: Binary, scope: Scope) -> Any:
    op = node.op
    if op == "&&":
        if not _need_bool(_eval(node.left, scope), node.left, "the left side of `&&`"):
            return False
        return _need_bool(_eval(node.right, scope), node.right, "the right side of `&&`")
    if op == "||":
        if _need_bool(_eval(node.left, scope), node.left, "the left side of `||`"):
            return True
        return _need_bool(_eval(node.right, scope), node.right, "the right side of `||`")
    left = _eval(node.left, scope)
    right = _eval(node.right, scope)
    if op == "==":
        return _equal(left, right, node, op)
    if op == "!=":
        return not _equal(left, right, node, op)
    if op == "in":
        return _member_of(left, right, node)
    return _order(op, left, right, node)


def _eval_ternary(node: Ternary, scope: Scope) -> Any:
    if _need_bool(_eval(node.cond, scope), node.cond, "the condition of `?:`"):
        return _eval(node.then, scope)
    return _eval(node.else_, scope)


def _eval_list(node: ListLit, scope: Scope) -> Any:
    return [_eval(item, scope) for item in node.items]


_DISPATCH: Final[dict[type, Callable[[Any, Scope], Any]]] = {
    Literal: _eval_literal,
    Ident: _eval_ident,
    Member: _eval_member,
    Index: _eval_index,
    Call: _eval_call,
    MethodCall: _eval_method,
    Unary: _eval_unary,
    Binary: _eval_binary,
    Ternary: _eval_ternary,
    ListLit: _eval_list,
}


def _eval(node: Expr, scope: Scope) -> Any:
    return _DISPATCH[type(node)](node, scope)


def evaluate(expr: Expr, scope: Mapping[str, Any]) -> Any:
    """Evaluate ``expr`` against ``scope`` (root name → value).

    Raises :class:`EvalError` with code ``NIKA-VAR-001`` (unresolvable path) or ``NIKA-VAR-006``
    (type error), positioned in expression offsets.
    """
    return _eval(expr, scope)


def evaluate_bool(expr: Expr, scope: Mapping[str, Any]) -> bool:
    """Evaluate a condition (``when:``); a non-boolean result is ``NIKA-VAR-006``."""
    value = _eval(expr, scope)
    if type(value) is not bool:
        raise EvalError(
            f"the condition evaluated to {_kind(value)}, not a boolean: compare explicitly, e.g. "
            "`x != null` or `size(x) > 0`",
            expr.start,
            expr.end,
        )
    return value


# -- rendering ---------------------------------------------------------------------------------


def _bytes_error(start: int, end: int) -> EvalError:
    return EvalError(
        "a bytes value cannot be placed inside a string: pass it whole (the value alone in the "
        "field) to a tool, or write it to a file and reference the path",
        start,
        end,
        BYTES_IN_STRING,
    )


def render_string(value: Any, start: int = 0, end: int = 0) -> str:
    """How ``value`` reads when substituted into a string position.

    Strings are inserted as is, ``null`` as ``null``, booleans as ``true``/``false``, numbers in
    their natural form, lists and maps as compact JSON with sorted keys. Bytes (even nested) are
    ``NIKA-VAR-007``; ``start``/``end`` position that error.
    """
    kind = _kind(value)
    if kind == "string":
        return str(value)
    if kind == "null":
        return "null"
    if kind == "bool":
        return "true" if value else "false"
    if kind == "int":
        return str(int(value))
    if kind == "double":
        return repr(float(value))
    if kind == "bytes":
        raise _bytes_error(start, end)
    if kind in ("list", "map"):
        import json

        def default(obj: Any) -> Any:
            if isinstance(obj, Mapping):
                return dict(obj)
            if isinstance(obj, bytes | bytearray | memoryview):
                raise _bytes_error(start, end)
            iso = getattr(obj, "isoformat", None)
            if callable(iso):
                return iso()
            raise EvalError(f"a {type(obj).__name__} value cannot be rendered as JSON", start, end)

        try:
            return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False, default=default)
        except (TypeError, ValueError) as exc:
            raise EvalError(f"this value cannot be rendered as JSON: {exc}", start, end) from None
    iso = getattr(value, "isoformat", None)
    if callable(iso):
        return str(iso())
    raise EvalError(f"a {kind} value cannot be placed inside a string", start, end)


def _eval_island(island: Island, scope: Scope) -> Any:
    assert island.expr is not None
    try:
        return _eval(island.expr, scope)
    except EvalError as exc:
        raise exc.shifted(island.expr_start) from None


def render_template(template: Template | str, scope: Mapping[str, Any]) -> Any:
    """Resolve every island of ``template`` (or of the string, parsed first).

    A value that is exactly one island (modulo surrounding whitespace) yields the island's value
    with its native type; anything else yields a string. Static errors in the template are raised
    as :class:`ExprError`; evaluation errors as :class:`EvalError` in value offsets.
    """
    if isinstance(template, str):
        template = parse_template(template)
    if template.errors:
        first = template.errors[0]
        raise ExprError(first.message, first.start, first.end, first.code)
    if template.is_single_island:
        return _eval_island(template.islands[0], scope)
    out: list[str] = []
    for part in template.parts:
        if isinstance(part, str):
            out.append(part)
        else:
            out.append(render_string(_eval_island(part, scope), part.start, part.end))
    return "".join(out)
