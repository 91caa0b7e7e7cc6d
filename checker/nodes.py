"""The span-carrying YAML node tree every later stage reads.

Nodes are never mutated after the builder creates them. They are plain slotted classes rather
than frozen dataclasses only because construction speed matters here (a frozen dataclass pays
an ``object.__setattr__`` per field, and a large workflow has tens of thousands of nodes).

Built from the YAML event stream by :mod:`checker.yaml_nodes`. Scalars are already resolved
with the YAML 1.2 core schema (``value``); ``style`` keeps how they were written so rules can
tell ``"true"`` from ``true``. Mappings keep their entries in source order, duplicates included
(the profile reports them; lookups see the first occurrence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from checker.source import Span
from checker.values import KeyedEntries, OffsetMapped


@dataclass(slots=True, eq=False)
class Node:
    """Any YAML node."""

    span: Span
    tag: str | None
    anchor: str | None

    kind = "node"

    def to_python(self) -> Any:
        raise NotImplementedError


@dataclass(slots=True, eq=False)
class Scalar(OffsetMapped, Node):
    """A scalar: ``value`` is the resolved Python value (str, int, float, bool or None)."""

    value: Any
    raw: str
    style: str  # "" plain, "'" single, '"' double, "|" literal, ">" folded
    # Code-point offsets in the source for each character of ``raw`` when they can be mapped
    # exactly (plain, quoted without escapes, block scalars); ``None`` otherwise.
    offsets: tuple[int, ...] | None = None

    kind = "scalar"

    def to_python(self) -> Any:
        return self.value


@dataclass(slots=True, eq=False)
class Entry:
    """One ``key: value`` pair of a mapping."""

    key: Node
    value: Node

    @property
    def key_text(self) -> str | None:
        k = self.key
        if isinstance(k, Scalar) and isinstance(k.value, str):
            return k.value
        return None

    @property
    def span(self) -> Span:
        return self.key.span.cover(self.value.span)


@dataclass(slots=True, eq=False)
class Mapping(KeyedEntries, Node):
    entries: tuple[Entry, ...] = ()
    flow: bool = False
    _index: dict[str, Entry] = field(default_factory=dict, repr=False)

    kind = "mapping"

    def __post_init__(self) -> None:
        self._build_index()

    if TYPE_CHECKING:  # the shared lookups, typed for this tree (no extra call at run time)

        def get(self, key: str) -> Node | None: ...

        def entry(self, key: str) -> Entry | None: ...

    def to_python(self) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for e in self.entries:
            k = e.key.to_python() if isinstance(e.key, Scalar) else repr(e.key)
            try:
                if k not in out:
                    out[k] = e.value.to_python()
            except TypeError:
                out[repr(k)] = e.value.to_python()
        return out


@dataclass(slots=True, eq=False)
class Sequence(Node):
    items: tuple[Node, ...] = ()
    flow: bool = False

    kind = "sequence"

    def to_python(self) -> list[Any]:
        return [i.to_python() for i in self.items]


def describe(node: Node | None) -> str:
    """A short noun for error messages: 'a mapping', 'the string "x"', 'a number'."""
    if node is None:
        return "nothing"
    if isinstance(node, Mapping):
        return "a mapping"
    if isinstance(node, Sequence):
        return "a list"
    if isinstance(node, Scalar):
        v = node.value
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "a boolean"
        if isinstance(v, (int, float)):
            return "a number"
        return "a string"
    return "a node"
