"""The pieces of a request that differ by wire beyond plain text: image parts (``infer.vision``)
and the reasoning parameters (``infer.thinking``), and reading the reasoning usage back.

Images travel inline (base64) on every wire: the engine read them under the permits, and a
provider never fetches a URL on the workflow's behalf. Which providers take ``thinking:`` and in
which parameter is :data:`runtime.providers.registry.THINKING`; the budget is drawn from
``max_tokens`` (the verb refuses a budget that does not fit under it before any call).
"""

from __future__ import annotations

from typing import Any

from runtime.errors import TaskError
from runtime.guard import limits
from runtime.providers.base import Message, Request

# OpenAI's reasoning models take an effort level, not a budget: the budget picks the level.
EFFORT_LEVELS = ((2048, "low"), (8192, "medium"))
EFFORT_DEFAULT = "medium"
EFFORT_TOP = "high"
ANTHROPIC_MIN_BUDGET = 1024  # the smallest budget the Messages API accepts


def _refused(message: str, **details: object) -> TaskError:
    """A request the provider is known to refuse, refused here before it is sent."""
    return TaskError("NIKA-INFER-001", message, details={"provider": "anthropic", **details})


# -- image parts -------------------------------------------------------------------------------


def openai_user(m: Message) -> dict[str, Any]:
    """A user turn: plain text, or text then one ``image_url`` part (a data URL) per image."""
    if not m.images:
        return {"role": "user", "content": m.content}
    parts: list[dict[str, Any]] = [{"type": "text", "text": m.content}]
    parts += [{"type": "image_url", "image_url": {"url": f"data:{i.media_type};base64,{i.data}"}} for i in m.images]
    return {"role": "user", "content": parts}


def anthropic_user(m: Message) -> dict[str, Any]:
    """A user turn: plain text, or the images (base64 sources) then the text, as Anthropic advises."""
    if not m.images:
        return {"role": "user", "content": m.content}
    blocks: list[dict[str, Any]] = [
        {"type": "image", "source": {"type": "base64", "media_type": i.media_type, "data": i.data}} for i in m.images
    ]
    blocks.append({"type": "text", "text": m.content})
    return {"role": "user", "content": blocks}


def gemini_user(m: Message) -> dict[str, Any]:
    """A user turn: the text part, then one ``inlineData`` part per image."""
    parts: list[dict[str, Any]] = [{"text": m.content}]
    parts += [{"inlineData": {"mimeType": i.media_type, "data": i.data}} for i in m.images]
    return {"role": "user", "parts": parts}


# -- reasoning parameters ----------------------------------------------------------------------


def effort_for(budget: int | None) -> str:
    if budget is None:
        return EFFORT_DEFAULT
    return next((level for top, level in EFFORT_LEVELS if budget <= top), EFFORT_TOP)


def openai_thinking(style: str | None, body: dict[str, Any], request: Request) -> None:
    """``reasoning_effort`` (OpenAI) or ``reasoning`` (OpenRouter's unified parameter, which
    takes the budget itself). A reasoning model's output bound is ``max_completion_tokens``
    (reasoning and answer together), so ``max_tokens`` moves there."""
    t = request.thinking
    if t is None or style is None:
        return
    if not t.enabled:
        if style == "openrouter":
            body["reasoning"] = {"enabled": False}
        return
    if style == "openrouter":
        body["reasoning"] = {"max_tokens": t.budget_tokens} if t.budget_tokens is not None else {"enabled": True}
        return
    body["reasoning_effort"] = effort_for(t.budget_tokens)
    if "max_tokens" in body:
        body["max_completion_tokens"] = body.pop("max_tokens")


def anthropic_thinking(body: dict[str, Any], request: Request) -> None:
    """Extended thinking: ``thinking: {type: enabled, budget_tokens}``, where ``max_tokens``
    (answer and reasoning together) must exceed the budget: without an explicit ``max_tokens``
    the answer keeps the default output bound on top of the budget."""
    t = request.thinking
    if t is None or not t.enabled:
        return
    budget = t.budget_tokens or limits.DEFAULT_THINKING_BUDGET
    if budget < ANTHROPIC_MIN_BUDGET:
        raise _refused(
            f"`anthropic` extended thinking takes `budget_tokens` of at least {ANTHROPIC_MIN_BUDGET}; "
            f"`{budget}` would be refused by the API",
            budget_tokens=budget,
        )
    if request.temperature is not None:
        raise _refused(
            "`anthropic` extended thinking runs at the model's own temperature: remove `temperature:` "
            "from this task, or turn `thinking:` off",
            temperature=request.temperature,
        )
    body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    if request.max_tokens is None:
        body["max_tokens"] = budget + limits.DEFAULT_MAX_OUTPUT_TOKENS


def gemini_thinking(gen: dict[str, Any], request: Request) -> None:
    """``generationConfig.thinkingConfig.thinkingBudget`` (``0`` turns reasoning off)."""
    t = request.thinking
    if t is None:
        return
    if not t.enabled:
        gen["thinkingConfig"] = {"thinkingBudget": 0}
    elif t.budget_tokens is not None:
        gen["thinkingConfig"] = {"thinkingBudget": t.budget_tokens}
    else:
        gen["thinkingConfig"] = {"thinkingBudget": -1}  # the model's own dynamic budget


def openai_reasoning_tokens(usage: dict[str, Any]) -> int | None:
    details = usage.get("completion_tokens_details")
    n = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return int(n) if isinstance(n, int) else None
