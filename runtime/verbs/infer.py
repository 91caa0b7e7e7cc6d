"""``infer:`` — one model call through the provider interface (02 §infer)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from checker.expr import render_string
from runtime.errors import TaskError
from runtime.guard.policy import judge_provider
from runtime.providers import Request
from runtime.values import materialise

if TYPE_CHECKING:
    from checker.model.workflow import Infer
    from runtime.engine.context import VerbContext

SCHEMA_CODE = "NIKA-INFER-002"


async def run_infer(ctx: VerbContext, verb: Infer) -> Any:
    """Evaluate the call, judge the model against ``policy:``, and hand the call to the executor."""
    from runtime.engine.executor import ModelEffect

    tid = ctx.task_id
    model = ctx.settings.model or materialise(verb.effective_model, ctx.scope, "`model:`")
    if not isinstance(model, str) or "/" not in model:
        raise TaskError(
            "NIKA-PROVIDER-002",
            "the task has no model: set `model: provider/name` on the workflow or the task, or pass `--model`",
        )
    judge_provider(ctx.workflow, tid, model)
    request, provider = await _request(ctx, verb, model)
    fields: list[tuple[str, Any]] = [
        ("task", tid),
        ("phase", "model_call"),
        ("provider", provider.id or model.partition("/")[0]),
        ("model", model),
    ]
    result = await ctx.perform(ModelEffect(tid, model, request))
    if result.error is not None:
        ctx.emit("verb_invoked", [*fields, ("duration_ms", result.duration_ms), ("error_code", result.error["code"])])
        result.value()
    ctx.emit(
        "verb_invoked",
        [
            *fields,
            ("duration_ms", result.duration_ms),
            ("tokens_in", result.tokens_in),
            ("tokens_out", result.tokens_out),
            ("finish_reason", result.finish_reason),
            *([("thinking_tokens", result.thinking_tokens)] if result.thinking_tokens is not None else []),
            *([("images", len(request.images))] if request.images else []),
        ],
    )
    if request.schema is not None:
        validate_output(result.output, request.schema)
    return result.output


async def _request(ctx: VerbContext, verb: Infer, model: str) -> tuple[Request, Any]:
    """The call's fields evaluated (a ``schema:``, or the ``returns:`` type lowered to one), the
    provider that answers it, its ``thinking:`` judged for that provider, its images judged and
    read, in the driver."""
    from runtime.verbs.infer_extras import load_images, thinking_of

    scope = ctx.scope
    prompt = materialise(verb.prompt, scope, "`prompt:`")
    if not isinstance(prompt, str):
        prompt = render_string(prompt)
    system = materialise(verb.system, scope, "`system:`") if verb.system is not None else None
    if verb.schema is not None:
        schema = materialise(verb.schema, scope, "`schema:`")
    else:
        from runtime.tools.returns_schema import returns_schema

        schema = returns_schema(ctx.workflow, ctx.task_id)  # `returns:` is the same contract, written as a Nika type
    temperature = materialise(verb.temperature, scope, "`temperature:`") if verb.temperature is not None else None
    max_tokens = materialise(verb.max_tokens, scope, "`max_tokens:`") if verb.max_tokens is not None else None
    provider, _name = ctx.services.provider_for(model)
    thinking = thinking_of(ctx, verb, model.partition("/")[0], max_tokens)
    images = await load_images(ctx, verb)
    request = Request(
        model,
        prompt,
        system,
        temperature,
        max_tokens,
        schema if isinstance(schema, dict) else None,
        images=images,
        thinking=thinking,
    )
    return request, provider


def validate_output(value: Any, schema: dict[str, Any]) -> None:
    """INFER-002 when a structured reply does not satisfy its ``schema:`` (or the schema itself is
    broken: the checker validates schemas, but a template may still render one)."""
    from runtime.tools.schema_validator import problem

    found = problem(schema, value, subject="`schema:`", top="the reply")
    if found is None:
        return
    if found.in_schema:
        raise TaskError(SCHEMA_CODE, found.text)
    raise TaskError(
        SCHEMA_CODE, f"the model's reply does not match `schema:` {found.text}", details={"path": list(found.path)}
    )
