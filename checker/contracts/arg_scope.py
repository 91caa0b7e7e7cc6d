"""What the argument checker and its rules share: the findings being gathered (:class:`Ctx`) and the
mapping being judged against a set of field contracts (:class:`Scope`), with how its literal values
read (a ``${{ … }}`` template is only known at run time, so it reads as unknown).
"""

from __future__ import annotations

import math
from typing import Any

from checker.contracts.model import ArgSpec, ToolContract
from checker.contracts.text import fmt
from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Fix, Label
from checker.core.records import record
from checker.core.source import Span
from checker.expr.template import has_island
from checker.parse.values import Entry, ListValue, MapValue, ScalarValue, Value


def is_dynamic(value: Value | None) -> bool:
    """True for a string holding a ``${{ … }}`` template: its value is only known at run time."""
    return isinstance(value, ScalarValue) and isinstance(value.value, str) and has_island(value.value)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    return bool(a == b)


def matches_type(t: str, value: Value) -> bool:
    """Whether the literal ``value`` is of the contract type ``t``."""
    if t == "any":
        return True
    if isinstance(value, MapValue):
        return t == "object"
    if isinstance(value, ListValue):
        return t == "array"
    if not isinstance(value, ScalarValue):
        return False
    v = value.value
    if t in ("string", "enum", "duration"):
        return isinstance(v, str)
    if t == "integer":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "number":
        # an int is finite however long it is (math.isfinite would overflow converting it)
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and math.isfinite(v))
    if t == "boolean":
        return isinstance(v, bool)
    if t == "null":
        return v is None
    return False


@record(frozen=False)
class Ctx:
    tool: ToolContract
    task: str | None
    out: list[Diagnostic]

    def add(
        self,
        code: str,
        span: Span,
        message: str,
        help: str | None,
        related: tuple[Label, ...] = (),
        fixes: tuple[Fix, ...] = (),
    ) -> None:
        self.out.append(report(code, span, message, help, related=related, fixes=fixes, task=self.task))


@record
class Scope:
    """One mapping being judged against a set of field contracts."""

    specs: tuple[ArgSpec, ...]
    mapping: MapValue | None
    anchor: Span
    path: str  # "" for the top level, "traverse", "multipart[0]", …
    owner: str  # how to name the container in messages: "`nika:fetch`", "`traverse`", …

    def spec(self, name: str) -> ArgSpec | None:
        for s in self.specs:
            if s.name == name:
                return s
        return None

    def entry(self, name: str) -> Entry | None:
        return self.mapping.entry(name) if self.mapping is not None else None

    def present(self, name: str) -> bool:
        return self.entry(name) is not None

    def dotted(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def literal(self, name: str) -> tuple[str, Any, Value | None]:
        """``("absent"|"default"|"dynamic"|"literal"|"complex", value, written value)`` of a field."""
        e = self.entry(name)
        if e is None:
            s = self.spec(name)
            if s is not None and s.has_default:
                return "default", s.default, None
            return "absent", None, None
        v = e.value
        if is_dynamic(v):
            return "dynamic", None, v
        if isinstance(v, ScalarValue):
            return "literal", v.value, v
        return "complex", None, v

    def holds(self, when: tuple[tuple[str, tuple[Any, ...]], ...]) -> bool | None:
        """Whether every ``key ∈ values`` condition holds: True, False, or None when unknown."""
        result: bool | None = True
        for key, vals in when:
            state, value, _ = self.literal(key)
            if state in ("dynamic", "complex"):
                result = None
                continue
            if state == "absent" or not any(same(value, v) for v in vals):
                return False
        return result

    def describe_value(self, key: str) -> str:
        state, value, _ = self.literal(key)
        if state == "absent":
            return f"`{key}` is not set"
        if state == "default":
            return f"`{key}` is `{fmt(value)}` (the default)"
        return f"`{key}` is `{fmt(value)}`"

    def describe_when(self, when: tuple[tuple[str, tuple[Any, ...]], ...]) -> str:
        """What the keys of a condition are set to, for a message."""
        return " and ".join(self.describe_value(k) for k, _ in when)

    def when_labels(self, when: tuple[tuple[str, tuple[Any, ...]], ...]) -> tuple[Label, ...]:
        """A label on each key of a condition that is given."""
        return tuple(Label(value_span(self, k), f"`{k}` is set here") for k, _ in when if self.present(k))


def key_span(scope: Scope, name: str) -> Span:
    e = scope.entry(name)
    return e.key.span if e is not None else scope.anchor


def value_span(scope: Scope, name: str) -> Span:
    e = scope.entry(name)
    return e.value.span if e is not None else scope.anchor
