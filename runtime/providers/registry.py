"""Provider ids to adapters: every one of the 17 providers of stdlib/providers-v0.1.md.

The facts (kind, key variables, default endpoints) are data in ``checker/contracts/providers.toml``;
this module only says which wire each provider speaks and where its cloud API lives.
"""

from __future__ import annotations

from typing import Any

from runtime.errors import NOT_BUILT, TaskError
from runtime.providers.base import Provider


def make_provider(prefix: str, services: Any) -> Provider:
    if prefix == "mock":
        from runtime.providers.mock import MockProvider

        return MockProvider(services.env)
    from checker import contracts

    if prefix in contracts.providers():
        raise TaskError(
            NOT_BUILT,
            f"the `{prefix}` provider is not available in this build of nika yet",
            details={"provider": prefix},
        )
    raise TaskError(
        "NIKA-PROVIDER-002",
        f"`{prefix}` is not a model provider this build knows",
        details={"provider": prefix},
    )
