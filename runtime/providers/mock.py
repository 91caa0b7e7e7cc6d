"""``mock``: the deterministic test provider (stdlib/providers-v0.1.md §mock).

``mock/echo`` (and its long-form alias ``mock/mock-deterministic``) replies with the prompt
exactly as rendered. With a ``schema:`` it replies with the schema's typed zero value: ``""`` for
strings, ``0`` for numbers, ``false`` for booleans, ``[]`` for arrays, objects recursed over their
required properties. No network, no entropy: the same input gives the same output everywhere.
The configured-response models read fixtures from engine configuration this build does not have.
"""

from __future__ import annotations

from typing import Any

from runtime.errors import NOT_BUILT, TaskError
from runtime.providers.base import Provider, Request, Response

ECHO_MODELS = ("echo", "mock-deterministic")


def zero_value(schema: Any, depth: int = 0) -> Any:
    """The deterministic zero value a schema describes."""
    if not isinstance(schema, dict) or depth > 32:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    for key in ("oneOf", "anyOf", "allOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return zero_value(schema[key][0], depth + 1)
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), t[0] if t else None)
    if t == "string":
        return ""
    if t in ("number", "integer"):
        return 0
    if t == "boolean":
        return False
    if t == "array":
        return []
    if t == "null":
        return None
    if t == "object" or "properties" in schema:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        return {k: zero_value(props.get(k, {}), depth + 1) for k in required}
    return None


class MockProvider(Provider):
    id = "mock"

    async def complete(self, name: str, request: Request) -> Response:
        if name not in ECHO_MODELS:
            raise TaskError(
                NOT_BUILT,
                f"`mock/{name}` needs a configured fixture, which this build of nika cannot load; use `mock/echo`",
                details={"provider": "mock", "model": name},
            )
        if request.schema is not None:
            return Response(zero_value(request.schema), tokens=0, cost_note="mock_provider")
        return Response(request.prompt, tokens=len(request.prompt.split()), cost_note="mock_provider")
