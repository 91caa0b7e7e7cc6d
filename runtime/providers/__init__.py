"""Model providers behind one interface; this build ships only the deterministic ``mock``."""

from __future__ import annotations

from runtime.errors import NOT_BUILT, TaskError
from runtime.providers.base import Provider, Request, Response


def provider_for(model: str) -> tuple[Provider, str]:
    """The provider answering ``provider/name`` and the model name within it."""
    prefix, _, name = model.partition("/")
    if prefix == "mock":
        from runtime.providers.mock import MockProvider

        return MockProvider(), name
    raise TaskError(
        NOT_BUILT,
        f"the `{prefix}` provider is not available in this build of nika; use `mock/echo` to run the "
        "workflow's shape offline",
        details={"provider": prefix, "model": model},
    )


__all__ = ["Provider", "Request", "Response", "provider_for"]
