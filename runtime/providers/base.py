"""The provider interface: one model call in, one reply out.

Real providers (and the ``agent:`` loop) implement :class:`Provider` in their own issue; the
runtime never knows which one answers beyond this interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Request:
    """What ``infer:`` asks: the rendered prompt and parameters (``schema`` a JSON Schema)."""

    model: str
    prompt: str
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    schema: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    """The reply: a string, or the structured value when the request carried a schema."""

    value: Any
    tokens: int = 0
    cost_note: str | None = None


class Provider(ABC):
    """A model provider. ``complete`` raises :class:`~runtime.errors.TaskError` on failure
    (NIKA-PROVIDER-001 transient for network trouble, NIKA-INFER-* for the call itself)."""

    id: str = ""

    @abstractmethod
    async def complete(self, name: str, request: Request) -> Response: ...
