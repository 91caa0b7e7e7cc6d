"""What the wire adapters and budgets read of the model catalog (:mod:`checker.contracts.catalog`):
a model's output limit, the field its output cap travels in, and whether it takes a temperature.
A model the catalog does not know gets the defaults (``max_tokens``, a temperature is sent,
``limits.DEFAULT_MAX_OUTPUT_TOKENS``): nothing is decided for every model at once."""

from __future__ import annotations

from checker.contracts.catalog import MAX_TOKENS, ModelRow, lookup
from runtime.guard import limits


def row(model: str) -> ModelRow | None:
    return lookup(model)


def output_ceiling(model: str) -> int:
    """The most output tokens a call of ``model`` may ask for: its catalogued output limit, else
    ``limits.DEFAULT_MAX_OUTPUT_TOKENS`` (heuristic, conservative)."""
    r = lookup(model)
    return r.max_output if r is not None and r.max_output else limits.DEFAULT_MAX_OUTPUT_TOKENS


def output_param(model: str) -> str:
    """``max_completion_tokens`` where the catalog says the model's API takes it (OpenAI's own),
    else ``max_tokens`` (every OpenAI-compatible server, local ones included, takes that)."""
    r = lookup(model)
    return r.output_param if r is not None else MAX_TOKENS


def takes_temperature(model: str) -> bool:
    """False only where the catalog says the model takes no ``temperature`` (reasoning models
    that fix their own, newer Anthropic models); the wire then leaves it out."""
    r = lookup(model)
    return not (r is not None and r.temperature is False)
