"""The type core of spec 09 as typed objects: parse, normalise, lower, and the three relations.

A TypeExpr written in the file (a :mod:`checker.parse.values` value, or plain data) becomes a
:class:`Type` once; named references are resolved against ``types:``. On types:

* :func:`normalize` gives the canonical form (flattened, deduplicated, ordered unions with
  subsumed members removed; unbounded refinements become their primitive);
* :func:`lower` projects a type to JSON Schema 2020-12 (what a provider's structured output
  receives);
* :func:`subtype` (``A ⊑ B``), :func:`consistent` (``A ~ B``) and :func:`assignable`
  (``A ⊑~ B``, what static judges consume: ``Unknown`` accepts at the leaves).

Malformed expressions are the type rule's business (NIKA-TYPE-001/002); here they become
``UNKNOWN`` so no judgement downstream refuses on a guess.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from checker.core.records import record

if TYPE_CHECKING:
    from checker.model.workflow import TypeDecl
    from checker.parse.values import Value

PRIMITIVES = ("null", "bool", "integer", "number", "string", "bytes", "uri", "path", "duration", "timestamp")
CONSTRUCTORS = ("array", "map", "object", "union", "enum", "integer", "number", "string")
STRING_NEWTYPES = frozenset({"uri", "path", "duration", "timestamp"})


class Type:
    """A normalised type; subclasses are frozen dataclasses compared structurally."""

    __slots__ = ()


@record
class Prim(Type):
    name: str


@record
class Num(Type):
    """A bounded ``integer``/``number`` (at least one bound)."""

    kind: str
    min: float | None = None
    max: float | None = None


@record
class Str(Type):
    """A refined string (at least one of pattern / bounds)."""

    pattern: str | None = None
    min_len: int | None = None
    max_len: int | None = None


@record
class Enum(Type):
    values: tuple[str, ...]


@record
class Arr(Type):
    item: Type


@record
class MapOf(Type):
    item: Type


@record
class Field:
    type: Type
    optional: bool = False


@record
class Obj(Type):
    fields: tuple[tuple[str, Field], ...]
    additional: bool = False

    def field(self, name: str) -> Field | None:
        for n, f in self.fields:
            if n == name:
                return f
        return None


@record
class Union(Type):
    members: tuple[Type, ...]


@record
class _Special(Type):
    name: str


UNKNOWN = _Special("unknown")
NEVER = _Special("never")

# -- parsing ---------------------------------------------------------------------------------


def parse(expr: Any, named: dict[str, Any] | None = None) -> Type:
    """The normalised type of a TypeExpr given as plain data (``Value.to_python()``)."""
    return normalize(_parse(expr, named or {}, ()))


def _parse(e: Any, named: dict[str, Any], seen: tuple[str, ...]) -> Type:
    if e is None or e == "null":
        return Prim("null")
    if isinstance(e, str):
        if e in PRIMITIVES:
            return Prim(e)
        if e in named and e not in seen:
            return _parse(named[e], named, (*seen, e))
        return UNKNOWN
    if not isinstance(e, dict) or not e:
        return UNKNOWN
    keys = set(e) - {"additional"}
    if len(keys) != 1:
        return UNKNOWN
    (ctor,) = keys
    v = e[ctor]
    if ctor == "array":
        return Arr(_parse(v, named, seen))
    if ctor == "map":
        return MapOf(_parse(v, named, seen))
    if ctor == "union" and isinstance(v, list):
        return Union(tuple(_parse(m, named, seen) for m in v))
    if ctor == "enum" and isinstance(v, list) and all(isinstance(x, str) for x in v):
        return Enum(tuple(sorted(set(v))))
    if ctor in ("integer", "number") and isinstance(v, dict):
        return Num(ctor, _number(v.get("min")), _number(v.get("max")))
    if ctor == "string" and isinstance(v, dict):
        p = v.get("pattern")
        return Str(p if isinstance(p, str) else None, _count(v.get("min_len")), _count(v.get("max_len")))
    if ctor == "object" and isinstance(v, dict):
        fields = []
        for name, ft in v.items():
            if isinstance(ft, dict) and set(ft) == {"optional"}:
                fields.append((str(name), Field(_parse(ft["optional"], named, seen), True)))
            else:
                fields.append((str(name), Field(_parse(ft, named, seen))))
        return Obj(tuple(sorted(fields)), e.get("additional") is True)
    return UNKNOWN


def named_types(decls: Iterable[TypeDecl]) -> dict[str, Any]:
    """The ``types:`` declarations of a workflow as the name table :func:`parse` resolves against."""
    return {d.name: d.value.to_python() for d in decls}


def declared(expr: Value, decls: Iterable[TypeDecl] = ()) -> Type:
    """The normalised type of a TypeExpr as the file writes it, its names resolved against the
    workflow's ``types:`` declarations."""
    return parse(expr.to_python(), named_types(decls))


def _number(x: Any) -> float | None:
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _count(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


# -- normalisation ---------------------------------------------------------------------------


def normalize(t: Type) -> Type:
    if isinstance(t, Num):
        return Prim(t.kind) if t.min is None and t.max is None else t
    if isinstance(t, Str):
        return Prim("string") if t.pattern is None and t.min_len is None and t.max_len is None else t
    if isinstance(t, Arr):
        return Arr(normalize(t.item))
    if isinstance(t, MapOf):
        return MapOf(normalize(t.item))
    if isinstance(t, Obj):
        return Obj(tuple((n, Field(normalize(f.type), f.optional)) for n, f in t.fields), t.additional)
    if isinstance(t, Union):
        flat: list[Type] = []
        for m in t.members:
            m = normalize(m)
            flat.extend(m.members if isinstance(m, Union) else (m,))
        if UNKNOWN in flat:
            return UNKNOWN
        unique: list[Type] = []
        for m in flat:
            if m not in unique:
                unique.append(m)
        kept = [m for m in unique if not any(o is not m and o != m and subtype(m, o) for o in unique)]
        kept.sort(key=_order)
        return kept[0] if len(kept) == 1 else Union(tuple(kept))
    return t


def _order(t: Type) -> str:
    return repr(t)


# -- lowering --------------------------------------------------------------------------------

_LOWER_PRIM: dict[str, dict[str, Any]] = {
    "null": {"type": "null"},
    "bool": {"type": "boolean"},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "string": {"type": "string"},
    "bytes": {"type": "string", "contentEncoding": "base64"},
    "uri": {"type": "string", "format": "uri"},
    "path": {"type": "string"},
    "duration": {
        "type": "string",
        "pattern": r"^[0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h)([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))*$",
    },
    "timestamp": {"type": "string", "format": "date-time"},
}


def lower(t: Type) -> dict[str, Any]:
    """The JSON Schema 2020-12 projection of ``t``."""
    if isinstance(t, Prim):
        return dict(_LOWER_PRIM[t.name])
    if isinstance(t, Num):
        out: dict[str, Any] = {"type": t.kind}
        if t.min is not None:
            out["minimum"] = t.min
        if t.max is not None:
            out["maximum"] = t.max
        return out
    if isinstance(t, Str):
        out = {"type": "string"}
        if t.pattern is not None:
            out["pattern"] = t.pattern
        if t.min_len is not None:
            out["minLength"] = t.min_len
        if t.max_len is not None:
            out["maxLength"] = t.max_len
        return out
    if isinstance(t, Enum):
        return {"type": "string", "enum": list(t.values)}
    if isinstance(t, Arr):
        return {"type": "array", "items": lower(t.item)}
    if isinstance(t, MapOf):
        return {"type": "object", "additionalProperties": lower(t.item)}
    if isinstance(t, Obj):
        out = {"type": "object", "properties": {n: lower(f.type) for n, f in t.fields}}
        required = [n for n, f in t.fields if not f.optional]
        if required:
            out["required"] = required
        if not t.additional:
            out["additionalProperties"] = False
        return out
    if isinstance(t, Union):
        return {"anyOf": [lower(m) for m in t.members]}
    return {}


# -- relations -------------------------------------------------------------------------------


def subtype(a: Type, b: Type) -> bool:
    """``a ⊑ b``: every value of ``a`` is a value of ``b`` (over known types)."""
    return _sub(a, b, gradual=False)


def assignable(a: Type, b: Type) -> bool:
    """``a ⊑~ b``: subtyping where an ``Unknown`` leaf on either side accepts."""
    return _sub(a, b, gradual=True)


def consistent(a: Type, b: Type) -> bool:
    """``a ~ b``: equal up to ``Unknown`` leaves (symmetric, not transitive)."""
    if a is UNKNOWN or b is UNKNOWN:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (Arr, MapOf)):
        return consistent(a.item, b.item)  # type: ignore[attr-defined]
    if isinstance(a, Obj):
        assert isinstance(b, Obj)
        # structural on the fields both declare; presence and openness are not part of `~`
        return all(consistent(fa.type, fb.type) for n, fa in a.fields if (fb := b.field(n)) is not None)
    if isinstance(a, Union):
        assert isinstance(b, Union)
        return len(a.members) == len(b.members) and all(
            consistent(x, y) for x, y in zip(a.members, b.members, strict=True)
        )
    return a == b


def _sub(a: Type, b: Type, *, gradual: bool) -> bool:
    if a == b:
        return True
    if a is UNKNOWN or b is UNKNOWN:
        return gradual
    if a is NEVER:
        return True
    if isinstance(a, Union):
        return all(_sub(m, b, gradual=gradual) for m in a.members)
    if isinstance(b, Union):
        return any(_sub(a, m, gradual=gradual) for m in b.members)
    if isinstance(b, Prim):
        return _sub_prim(a, b.name)
    if isinstance(b, Num):
        if isinstance(a, Num) and (a.kind == b.kind or (a.kind == "integer" and b.kind == "number")):
            return _within(a.min, a.max, b.min, b.max)
        return False
    if isinstance(b, Str):
        if isinstance(a, Str) and (b.pattern is None or a.pattern == b.pattern):
            return _within(a.min_len, a.max_len, b.min_len, b.max_len)
        return False
    if isinstance(b, Enum):
        return isinstance(a, Enum) and set(a.values) <= set(b.values)
    if isinstance(b, Arr):
        return isinstance(a, Arr) and _sub(a.item, b.item, gradual=gradual)
    if isinstance(b, MapOf):
        return isinstance(a, MapOf) and _sub(a.item, b.item, gradual=gradual)
    if isinstance(b, Obj):
        return isinstance(a, Obj) and _sub_obj(a, b, gradual=gradual)
    return False


def _sub_prim(a: Type, name: str) -> bool:
    if isinstance(a, Prim):
        if name == "number" and a.name == "integer":
            return True
        return name == "string" and a.name in STRING_NEWTYPES
    if isinstance(a, Num):
        return name == a.kind or (name == "number" and a.kind == "integer")
    if isinstance(a, (Str, Enum)):
        return name == "string"
    return False


def _within(lo: float | None, hi: float | None, blo: float | None, bhi: float | None) -> bool:
    """The range ``[lo, hi]`` nests inside ``[blo, bhi]`` (``None`` = unbounded)."""
    if blo is not None and (lo is None or lo < blo):
        return False
    return not (bhi is not None and (hi is None or hi > bhi))


def _sub_obj(a: Obj, b: Obj, *, gradual: bool) -> bool:
    names_a = {n for n, _ in a.fields}
    for name, fb in b.fields:
        fa = a.field(name)
        if fa is None:
            if fb.optional:
                continue
            return False
        if fa.optional and not fb.optional:
            return False
        if not _sub(fa.type, fb.type, gradual=gradual):
            return False
    if not b.additional and names_a - {n for n, _ in b.fields}:
        return False
    if a.additional:
        return b.additional and {n for n, _ in b.fields} <= names_a
    return True


# -- values ----------------------------------------------------------------------------------


def value_fits(value: Any, expr: Value, decls: Iterable[TypeDecl] = ()) -> bool | None:
    """Whether a concrete value fits a TypeExpr as the file writes it (see :func:`fits`).

    The one fit predicate: the checker judges `default:`/`value:` literals and child-workflow
    arguments with it, the runtime judges `--var` values, child-workflow arguments, the
    `returns:` of `exec:`/`invoke:` and typed workflow outputs."""
    return fits(value, declared(expr, decls))


def fits(value: Any, t: Type) -> bool | None:
    """Whether a concrete value inhabits ``t``; ``None`` when that cannot be told (an ``Unknown``
    part, a pattern Python cannot compile). Plain data, plus what run-time values hold besides:
    tuples are arrays, ``bytes`` are the octets of a ``bytes`` value."""
    if t is UNKNOWN:
        return None
    if t is NEVER:
        return False
    if isinstance(t, Prim):
        return _fits_prim(value, t.name)
    if isinstance(t, Num):
        if not _fits_prim(value, t.kind):
            return False
        return not ((t.min is not None and value < t.min) or (t.max is not None and value > t.max))
    if isinstance(t, Str):
        if not isinstance(value, str):
            return False
        if (t.min_len is not None and len(value) < t.min_len) or (t.max_len is not None and len(value) > t.max_len):
            return False
        return _pattern_fits(value, t.pattern) if t.pattern is not None else True
    if isinstance(t, Enum):
        return isinstance(value, str) and value in t.values
    if isinstance(t, (Arr, MapOf)):
        items = list(value) if isinstance(t, Arr) and isinstance(value, list | tuple) else None
        if isinstance(t, MapOf) and isinstance(value, dict):
            items = list(value.values())
        if items is None:
            return False
        return _all(fits(v, t.item) for v in items)
    if isinstance(t, Obj):
        if not isinstance(value, dict):
            return False
        results: list[bool | None] = []
        for name, f in t.fields:
            if name not in value:
                results.append(f.optional)
            else:
                results.append(fits(value[name], f.type))
        if not t.additional and set(value) - {n for n, _ in t.fields}:
            results.append(False)
        return _all(results)
    if isinstance(t, Union):
        found = [fits(value, m) for m in t.members]
        if True in found:
            return True
        return None if None in found else False
    return None


def _fits_prim(value: Any, name: str) -> bool:
    if name == "null":
        return value is None
    if name == "bool":
        return isinstance(value, bool)
    if name == "integer":
        # 09 lowers `integer` to JSON Schema's `{"type": "integer"}`, which a number with a zero
        # fractional part satisfies (`10.0`, as a JSON body may carry it): the fit agrees with its
        # own lowering ("one direction, one truth").
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "bytes":
        return isinstance(value, str | bytes | bytearray)  # base64 text at a boundary, or the octets
    return isinstance(value, str)  # string and the string newtypes


# Time one pattern may take on one value. The dialect is regular, but Python's backtracking
# engines are exponential on some patterns (`^(a+)+$`); past this budget the value is not judged
# (``None``: never a false refusal, never a hang).
PATTERN_BUDGET_S = 0.25


def _pattern_fits(value: str, pattern: str) -> bool | None:
    import regex  # `re` with a time limit (the `regex` package reads `re` patterns alike)

    try:
        return regex.search(python_regex(pattern), value, timeout=PATTERN_BUDGET_S) is not None
    except (regex.error, TimeoutError):
        return None


def python_regex(pattern: str) -> str:
    """``pattern`` spelled so Python's ``re`` reads it exactly as it does today, without warning.

    Inside a character class, a ``[`` right after the opening one and a doubled ``--``, ``&&``,
    ``~~`` or ``||`` are plain characters (in the portable dialect and in Python today), but
    Python warns on stderr (FutureWarning) that it may read them as nested sets or set
    operations one day. Those characters are escaped, at exactly the places Python warns about,
    so the meaning stays and a check's output stays clean.
    """
    if "[" not in pattern:
        return pattern
    out: list[str] = []
    n = len(pattern)

    def token(i: int) -> str:  # one character, or an escape and the character it escapes
        return pattern[i : i + 2] if pattern[i] == "\\" else pattern[i]

    i = 0
    while i < n:
        t = token(i)
        i += len(t)
        if t != "[":
            out.append(t)
            continue
        out.append("[")
        nested = pattern[i : i + 1] == "["  # Python: "possible nested set"
        if not nested and pattern[i : i + 1] == "^":
            out.append("^")
            i += 1
        items = 0
        while i < n:
            t = token(i)
            i += len(t)
            if t == "]" and items:
                out.append(t)
                break
            if nested and not items:
                t = "\\["
            elif items and t in ("-", "&", "~", "|") and pattern[i : i + 1] == t:  # "possible set operation"
                t = "\\" + t
            out.append(t)
            items += 1
            if pattern[i : i + 1] == "-" and i + 1 < n:  # a range: its end is read with it
                end = token(i + 1)
                i += 1 + len(end)
                out.append("-" + ("\\-" if end == "-" else end))
                if end == "]":
                    break
    return "".join(out)


def _all(results: Any) -> bool | None:
    out: bool | None = True
    for r in results:
        if r is False:
            return False
        if r is None:
            out = None
    return out
