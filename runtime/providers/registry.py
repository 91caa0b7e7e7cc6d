"""Provider ids to adapters: every provider of the provider table (stdlib/providers-v0.1.md).

The facts of each provider (kind, key variables, the wire it speaks, its default chat endpoint)
are data in ``checker/contracts/providers.toml`` and are read from there. This module adds only
which adapter class speaks each wire. ``NIKA_<ID>_BASE_URL`` replaces the whole
endpoint, verbatim (stdlib §The openai escape hatch: nothing is appended), and ``NIKA_<ID>_API_KEY``
comes before the provider's documented key variable.
"""

from __future__ import annotations

from typing import Any

from runtime.errors import TaskError
from runtime.providers.base import Provider

# Which providers take `infer.thinking:` and in which parameter (runtime/providers/wire_parts.py):
# Anthropic's extended thinking and Gemini's thinking budget take the budget itself, OpenRouter's
# unified `reasoning` too; OpenAI's reasoning models take an effort level the budget picks. The
# mock accepts it and ignores it. Any other provider refuses `thinking:` before any call.
THINKING = {
    "anthropic": "anthropic",
    "gemini": "gemini",
    "openrouter": "openrouter",
    "openai": "effort",
    "ollama": "ollama",
    "mock": "mock",
}
# The adapter that speaks each wire (the `wire` column of providers.toml names one per provider):
# a provider on a known wire is one row of the table; a new wire is one module and one line here.
ADAPTERS = {
    "openai": ("runtime.providers.wire_openai", "OpenAIChat"),
    "anthropic": ("runtime.providers.wire_anthropic", "AnthropicMessages"),
    "gemini": ("runtime.providers.wire_gemini", "GeminiGenerate"),
    "ollama": ("runtime.providers.wire_ollama", "OllamaChat"),
    "mock": ("runtime.providers.mock", "MockProvider"),
}
OPENAI_COMPATIBLE_SUFFIX = "/chat/completions"


def endpoint_for(pid: str, env: dict[str, str]) -> Any:
    from checker.contracts import tables as contracts
    from runtime.providers.wire import Endpoint

    info = contracts.providers().get(pid)
    if info is None:
        known = len(contracts.providers())
        raise TaskError(
            "NIKA-PROVIDER-002", f"`{pid}` is not one of the {known} model providers", details={"provider": pid}
        )
    local = info.kind == "local"
    url = env.get(f"NIKA_{pid.upper()}_BASE_URL") or info.endpoint or ""
    key_vars = tuple(info.env_vars)
    key = next((env[v] for v in (f"NIKA_{pid.upper()}_API_KEY", *key_vars) if env.get(v)), None)
    return Endpoint(pid, url, key, key_vars, local, THINKING.get(pid))


def make_provider(prefix: str, services: Any) -> Provider:
    """The adapter of ``prefix``'s wire (the provider table's ``wire`` column), built for this run."""
    from checker.contracts import tables as contracts

    info = contracts.providers().get(prefix)
    wire = info.wire if info is not None else ""
    if wire == "mock":
        return adapter(wire)(services.env)
    ep = endpoint_for(prefix, services.env)  # an unknown prefix is refused here (NIKA-PROVIDER-002)
    if ep.key:
        services.remember_secret(ep.key)
    return adapter(wire_of(wire, ep.url))(ep, services)


def wire_of(wire: str, url: str) -> str:
    """The wire spoken at ``url``: an Ollama endpoint configured as its OpenAI-compatible API
    (``…/chat/completions``) is spoken to as one; every other provider on its table's ``wire``."""
    if wire == "ollama" and url.split("?")[0].rstrip("/").endswith(OPENAI_COMPATIBLE_SUFFIX):
        return "openai"
    return wire


def adapter(wire: str) -> Any:
    """The adapter class that speaks ``wire``."""
    from importlib import import_module

    module, name = ADAPTERS[wire]
    return getattr(import_module(module), name)
