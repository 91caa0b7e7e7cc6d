"""What an expression operand may be at run time, as the static typing of expressions sees it.

A static type is a :class:`checker.model.typesys.Type` (``UNKNOWN`` when nothing is known), or a
:class:`Known` value (a literal, a constant, a literal binding): the operand is exactly that value
on every run. :func:`witnesses` turns a type into run-time values, one for each kind of value the
type admits (``string | null`` gives ``""`` and ``None``); the expression rule evaluates an
operation on every combination with the runtime's own evaluator, and an operation that fails on
all of them, for a reason no other value of the same kinds could avoid, fails on every run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from checker.model import typesys
from checker.model.typesys import UNKNOWN, Type
from checker.parse.values import ListValue, MapValue, ScalarValue, TemplateValue, Value

NULL = typesys.Prim("null")
BOOL = typesys.Prim("bool")
INTEGER = typesys.Prim("integer")
STRING = typesys.Prim("string")
MAX_MEMBERS = 16  # a union wider than this is treated as unknown (no combinatorial blow-up)


class Known(Type):
    """An operand whose value is the same on every run."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Known({self.value!r})"


def union(types: Iterable[Type]) -> Type:
    """The union of ``types`` (flattened; ``UNKNOWN`` absorbs everything)."""
    flat: list[Type] = []
    for t in types:
        if t is UNKNOWN:
            return UNKNOWN
        flat.extend(t.members if isinstance(t, typesys.Union) else (t,))
    if not flat:
        return typesys.NEVER
    if len(flat) > MAX_MEMBERS:
        return UNKNOWN
    return flat[0] if len(flat) == 1 else typesys.Union(tuple(flat))


def nullable(t: Type) -> Type:
    return union((t, NULL))


def members(t: Type) -> tuple[Type, ...]:
    return t.members if isinstance(t, typesys.Union) else (t,)


def known_value(v: Value) -> Known | None:
    """The run-time value of a model value written without ``${{ }}`` (``None`` if it holds one)."""
    if isinstance(v, TemplateValue):
        return None
    if isinstance(v, ScalarValue):
        return Known(v.value)
    if isinstance(v, ListValue):
        items = [known_value(i) for i in v.items]
        return None if any(i is None for i in items) else Known([i.value for i in items])  # type: ignore[union-attr]
    if isinstance(v, MapValue):
        out: dict[Any, Any] = {}
        for e in v.entries:
            k = known_value(e.value)
            if k is None:
                return None
            out.setdefault(e.key.value, k.value)
        return Known(out)
    return None


# -- witnesses ---------------------------------------------------------------------------------

# One value of each run-time kind: what an operand of unknown type may be.
_ANY: tuple[Any, ...] = (True, 0, 0.5, "", b"", [], {}, None)


class Witness:
    """One run-time value standing for a member of a type. ``exact`` when it *is* the value
    (a :class:`Known`), ``keys`` when the keys of a map are exactly these (a closed object): only
    then can a missing key or an index out of range be told at check."""

    __slots__ = ("exact", "keys", "value")

    def __init__(self, value: Any, exact: bool = False, keys: bool = False) -> None:
        self.value = value
        self.exact = exact
        self.keys = keys or exact


def witnesses(t: Type, keyed: bool = False) -> list[Witness]:
    """Values covering every kind ``t`` admits (``null`` last, so messages name the real type).

    ``keyed``: the operand is read by a member or index step, so a closed object is given its
    declared fields (anything else gets an empty collection, which compares without error)."""
    out: list[Witness] = []
    for m in members(t):
        out.extend(_of(m, keyed))
    out.sort(key=lambda w: w.value is None)
    return out


def _of(t: Type, keyed: bool) -> list[Witness]:
    if isinstance(t, Known):
        return [Witness(t.value, exact=True)]
    if isinstance(t, typesys.Prim):
        return [Witness(v) for v in _PRIM[t.name]]
    if isinstance(t, typesys.Num):
        return [Witness(v) for v in ((0,) if t.kind == "integer" else (0, 0.5))]
    if isinstance(t, typesys.Enum):
        return [Witness(t.values[0])]
    if isinstance(t, typesys.Str):
        return [Witness("")]
    if isinstance(t, typesys.Arr):
        return [Witness([])]
    if isinstance(t, typesys.MapOf):
        return [Witness({})]
    if isinstance(t, typesys.Obj):
        if keyed and not t.additional:
            return [Witness({n: None for n, _ in t.fields}, keys=True)]
        return [Witness({})]
    if t is typesys.NEVER:
        return []
    return [Witness(v) for v in _ANY]


_PRIM: dict[str, tuple[Any, ...]] = {
    "null": (None,),
    "bool": (True,),
    "integer": (0,),
    "number": (0, 0.5),
    "bytes": ("", b""),  # base64 text at a boundary, or the octets
    **{n: ("",) for n in ("string", *typesys.STRING_NEWTYPES)},
}


def field_type(t: Type, name: Any) -> Type:
    """The type of ``name`` read in a value of type ``t`` (the members that have it)."""
    found: list[Type] = []
    for m in members(t):
        if isinstance(m, Known):
            if isinstance(m.value, dict) and name in m.value:
                found.append(Known(m.value[name]))
        elif isinstance(m, typesys.Obj):
            f = m.field(name) if isinstance(name, str) else None
            if f is not None:
                found.append(f.type)
            elif m.additional:
                return UNKNOWN
        elif isinstance(m, typesys.MapOf):
            found.append(m.item)
        elif m is UNKNOWN:
            return UNKNOWN
    return union(found) if found else UNKNOWN


def item_type(t: Type, index: Any = None) -> Type:
    """The type of an item of a list of type ``t`` (at ``index`` when it is known)."""
    found: list[Type] = []
    for m in members(t):
        if isinstance(m, Known) and isinstance(m.value, list | tuple):
            if isinstance(index, int) and not isinstance(index, bool):
                if 0 <= index < len(m.value):
                    found.append(Known(m.value[index]))
            elif len(m.value) <= MAX_MEMBERS:
                found.extend(Known(v) for v in m.value)
            else:
                return UNKNOWN
        elif isinstance(m, typesys.Arr):
            found.append(m.item)
        elif m is UNKNOWN:
            return UNKNOWN
    return union(found) if found else UNKNOWN


def describe(t: Type) -> str:
    """A short text for a static type, as a help line names it."""
    if isinstance(t, Known):
        import json

        try:
            return f"always `{json.dumps(t.value, ensure_ascii=False)[:40]}`"
        except (TypeError, ValueError):
            return "a constant"
    if isinstance(t, typesys.Union):
        return " | ".join(describe(m) for m in t.members)
    if isinstance(t, typesys.Prim):
        return t.name
    if isinstance(t, typesys.Num):
        return t.kind
    if isinstance(t, typesys.Str):
        return "string"
    if isinstance(t, typesys.Enum):
        return "one of " + ", ".join(t.values[:4]) + (", …" if len(t.values) > 4 else "")
    if isinstance(t, typesys.Arr):
        return f"an array of {describe(t.item)}"
    if isinstance(t, typesys.MapOf):
        return f"a map of {describe(t.item)}"
    if isinstance(t, typesys.Obj):
        names = ", ".join(n for n, _ in t.fields[:6]) + (", …" if len(t.fields) > 6 else "")
        return f"an object {{{names}}}" + (" (open)" if t.additional else "")
    return "unknown"
