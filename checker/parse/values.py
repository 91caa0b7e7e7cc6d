"""Typed, span-carrying values: what the compiled model holds instead of YAML nodes.

The YAML layer (:mod:`checker.parse.nodes`) builds this tree once, straight from the parser's
events, and the compiler types it without copying it. A value knows its source span and
nothing about YAML (the profile already judged tags, anchors and merge keys; a mapping keeps
duplicate entries in source order, lookups see the first), and a string holding ``${{ … }}``
islands is a :class:`TemplateValue` that carries its parsed template, so neither a rule, the
language server nor the runtime ever parses an expression again.

A runtime that builds values from data it computed (no source) uses :func:`from_python`, whose
spans are empty.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from checker.core.records import field, record
from checker.core.source import Span

if TYPE_CHECKING:
    from checker.expr import Template

NO_SPAN = Span(0, 0)


@record(eq=False)
class Value:
    """Any value of the model."""

    span: Span

    def to_python(self) -> Any:
        raise NotImplementedError


@record(eq=False)
class ScalarValue(Value):
    """A scalar: ``value`` is the resolved Python value (str, int, float, bool or None).

    ``raw`` is the text as written, ``style`` how it was quoted (``""`` plain, ``'``, ``"``,
    ``|``, ``>``) so a rule can tell ``"true"`` from ``true``; ``offsets`` maps each character of
    ``raw`` to its source offset where that is exact (``None`` otherwise), counted in the frame
    of ``span`` (add ``span.base``; :meth:`offset_at` does).
    """

    value: Any
    raw: str = ""
    style: str = ""
    offsets: range | tuple[int, ...] | None = None

    def to_python(self) -> Any:
        return self.value

    @property
    def is_string(self) -> bool:
        return isinstance(self.value, str)

    def offset_at(self, index: int) -> int:
        """Source offset of character ``index`` of ``raw`` (clamped, best effort)."""
        offs = self.offsets
        if offs:
            if index < len(offs):
                return offs[max(index, 0)] + self.span.base
            return offs[-1] + 1 + self.span.base
        return self.span.start

    def sub_span(self, start: int, end: int) -> Span:
        """The source span of ``raw[start:end]``; the whole scalar when it cannot be mapped."""
        if not self.offsets:
            return self.span
        s = self.offset_at(start)
        e = self.offset_at(end - 1) + 1 if end > start else s
        return self.span.sibling(s, max(e, s))


@record(eq=False)
class Literal(ScalarValue):
    """A scalar known at check time: a number, a boolean, null or a string without islands."""


@record(eq=False)
class TemplateValue(ScalarValue):
    """A string with ``${{ … }}`` islands, resolved at run time; ``template`` is its parse."""

    template: Template | None = None

    @property
    def is_single_island(self) -> bool:
        """True when the string is exactly one island (its value keeps the island's type)."""
        t = self.template
        return t is not None and t.is_single_island


@record(eq=False)
class Entry:
    """One ``key: value`` pair of a :class:`MapValue` (``key`` keeps the key's span)."""

    key: ScalarValue
    value: Value

    @property
    def name(self) -> str | None:
        k = self.key.value
        return k if isinstance(k, str) else None

    @property
    def key_text(self) -> str | None:
        return self.name

    @property
    def span(self) -> Span:
        return self.key.span.cover(self.value.span)


@record(eq=False)
class MapValue(Value):
    """A mapping: entries in source order, duplicates included (the YAML layer reported them);
    lookups by string key see the first entry of a key."""

    entries: tuple[Entry, ...] = ()
    flow: bool = False
    _index: dict[str, Entry] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        index = self._index
        for e in self.entries:  # inline: this runs once per mapping of the document
            k = e.key.value
            if k.__class__ is str and k not in index:
                index[k] = e

    def get(self, key: str) -> Value | None:
        e = self._index.get(key)
        return e.value if e else None

    def entry(self, key: str) -> Entry | None:
        return self._index.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def keys(self) -> list[str]:
        return list(self._index)

    def items(self) -> Iterator[tuple[str, Entry]]:
        """Unique string keys with their entry, in source order."""
        return iter(self._index.items())

    def to_python(self) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for e in self.entries:
            k = e.key.value
            try:
                if k not in out:
                    out[k] = e.value.to_python()
            except TypeError:
                out[repr(k)] = e.value.to_python()
        return out


@record(eq=False)
class ListValue(Value):
    """A sequence."""

    items: tuple[Value, ...] = ()
    flow: bool = False

    def to_python(self) -> list[Any]:
        return [i.to_python() for i in self.items]


def is_string(v: Value | None) -> bool:
    """A literal string or a template (both are strings once rendered)."""
    return isinstance(v, ScalarValue) and isinstance(v.value, str)


def is_template(v: Value | None) -> bool:
    return isinstance(v, TemplateValue)


def describe(v: Value | None) -> str:
    """A short noun for messages: 'a mapping', 'a list', 'a string', 'a number', 'null'."""
    if v is None:
        return "nothing"
    if isinstance(v, MapValue):
        return "a mapping"
    if isinstance(v, ListValue):
        return "a list"
    if isinstance(v, ScalarValue):
        x = v.value
        if x is None:
            return "null"
        if isinstance(x, bool):
            return "a boolean"
        if isinstance(x, (int, float)):
            return "a number"
        return "a string"
    return "a value"


def walk(v: Value) -> Iterator[Value]:
    """``v`` and every value nested in it, depth first in source order."""
    stack = [v]
    while stack:
        cur = stack.pop()
        yield cur
        if isinstance(cur, MapValue):
            stack.extend(e.value for e in reversed(cur.entries))
        elif isinstance(cur, ListValue):
            stack.extend(reversed(cur.items))


def templates(v: Value | None) -> Iterator[TemplateValue]:
    """Every template string inside ``v``."""
    if v is None:
        return
    for x in walk(v):
        if isinstance(x, TemplateValue):
            yield x


def from_python(data: Any) -> Value:
    """A span-less value tree for data computed at run time (no islands are recognised)."""
    if isinstance(data, dict):
        return MapValue(NO_SPAN, tuple(Entry(Literal(NO_SPAN, k, str(k)), from_python(v)) for k, v in data.items()))
    if isinstance(data, (list, tuple)):
        return ListValue(NO_SPAN, tuple(from_python(x) for x in data))
    return Literal(NO_SPAN, data, data if isinstance(data, str) else "")
