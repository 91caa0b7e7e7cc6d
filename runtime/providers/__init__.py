"""Model providers behind one interface (:mod:`runtime.providers.base`).

A run reaches them through :meth:`runtime.engine.services.Services.provider_for`, which builds each
provider once per run on one HTTP client; :mod:`runtime.providers.registry` maps each provider's
``wire`` (a column of the provider table) to its adapter: the three wires and the mock.
"""

from __future__ import annotations

from runtime.providers.base import Message, Provider, Request, Response, ToolCall, ToolSpec

__all__ = ["Message", "Provider", "Request", "Response", "ToolCall", "ToolSpec"]
