"""Provider ids to adapters: every one of the 17 providers of stdlib/providers-v0.1.md.

The facts a workflow author relies on (kind, key variables, local default ports) are data in
``checker/contracts/providers.toml`` and are read from there. This module adds only which wire
each provider speaks and the path of its chat endpoint. ``NIKA_<ID>_BASE_URL`` replaces the whole
endpoint, verbatim (stdlib §The openai escape hatch: nothing is appended), and ``NIKA_<ID>_API_KEY``
comes before the provider's documented key variable.
"""

from __future__ import annotations

from typing import Any

from runtime.errors import TaskError
from runtime.providers.base import Provider

# The chat endpoint of each cloud API (the public endpoints of the vendors' documentation).
CLOUD_ENDPOINTS = {
    "openai": "https://api.openai.com/v1/chat/completions",
    "openrouter": "https://openrouter.ai/api/v1/chat/completions",
    "huggingface": "https://router.huggingface.co/v1/chat/completions",
    "nvidia": "https://integrate.api.nvidia.com/v1/chat/completions",
    "moonshot": "https://api.moonshot.ai/v1/chat/completions",
    "groq": "https://api.groq.com/openai/v1/chat/completions",
    "deepseek": "https://api.deepseek.com/v1/chat/completions",
    "xai": "https://api.x.ai/v1/chat/completions",
    "mistral": "https://api.mistral.ai/v1/chat/completions",
    "anthropic": "https://api.anthropic.com/v1/messages",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent",
}
# Which wire each non-mock provider speaks: the local servers are OpenAI-compatible, except that
# Ollama is spoken to on its native `/api/chat` (its `think` flag and options live there).
WIRES = {pid: "openai" for pid in CLOUD_ENDPOINTS} | {"anthropic": "anthropic", "gemini": "gemini", "ollama": "ollama"}
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
OLLAMA_NATIVE_PATH = "/api/chat"  # Ollama's native chat API under its daemon root (runtime.providers.wire_ollama)
OPENAI_COMPATIBLE_SUFFIX = "/chat/completions"
LOCAL_OPENAI_PATH = "/chat/completions"  # the other local servers' base URLs already end in /v1


def endpoint_for(pid: str, env: dict[str, str]) -> Any:
    from checker.contracts import tables as contracts
    from runtime.providers.wire import Endpoint

    info = contracts.providers().get(pid)
    if info is None:
        raise TaskError("NIKA-PROVIDER-002", f"`{pid}` is not one of the 17 model providers", details={"provider": pid})
    local = info.kind == "local"
    url = env.get(f"NIKA_{pid.upper()}_BASE_URL")
    if not url:
        if local:
            root = (info.base_url or "").rstrip("/")
            url = root + (OLLAMA_NATIVE_PATH if pid == "ollama" else LOCAL_OPENAI_PATH)
        else:
            url = CLOUD_ENDPOINTS[pid]
    key_vars = tuple(info.env_vars)
    key = next((env[v] for v in (f"NIKA_{pid.upper()}_API_KEY", *key_vars) if env.get(v)), None)
    return Endpoint(pid, url, key, key_vars, local, THINKING.get(pid))


def make_provider(prefix: str, services: Any) -> Provider:
    if prefix == "mock":
        from runtime.providers.mock import MockProvider

        return MockProvider(services.env)
    ep = endpoint_for(prefix, services.env)
    if ep.key:
        services.remember_secret(ep.key)
    from runtime.providers.wire_anthropic import AnthropicMessages
    from runtime.providers.wire_gemini import GeminiGenerate
    from runtime.providers.wire_ollama import OllamaChat
    from runtime.providers.wire_openai import OpenAIChat

    kind = wire_of(prefix, ep.url)
    cls = {"openai": OpenAIChat, "anthropic": AnthropicMessages, "gemini": GeminiGenerate, "ollama": OllamaChat}[kind]
    return cls(ep, services)


def wire_of(prefix: str, url: str) -> str:
    """The wire a provider speaks at ``url``: an Ollama endpoint configured as its OpenAI-compatible
    API (``…/chat/completions``) is spoken to as one; every other provider by :data:`WIRES`."""
    kind = WIRES.get(prefix, "openai")
    if kind == "ollama" and url.split("?")[0].rstrip("/").endswith(OPENAI_COMPATIBLE_SUFFIX):
        return "openai"
    return kind
