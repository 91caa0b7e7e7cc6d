"""``infer:`` — one model call through the provider interface (02 §infer)."""

from __future__ import annotations

import time
from typing import Any

from checker.expr import render_string
from runtime.errors import TaskError
from runtime.policy import judge_provider
from runtime.providers import Request
from runtime.values import materialise

SCHEMA_CODE = "NIKA-INFER-002"


async def run_infer(run: Any, tid: str, verb: Any, scope: dict[str, Any]) -> Any:
    model = run.options.model or materialise(verb.effective_model, scope, "`model:`")
    if not isinstance(model, str) or "/" not in model:
        raise TaskError(
            "NIKA-PROVIDER-002",
            "the task has no model: set `model: provider/name` on the workflow or the task, or pass `--model`",
        )
    judge_provider(run.wf, tid, model)
    prompt = materialise(verb.prompt, scope, "`prompt:`")
    if not isinstance(prompt, str):
        prompt = render_string(prompt)
    system = materialise(verb.system, scope, "`system:`") if verb.system is not None else None
    if verb.schema is not None:
        schema = materialise(verb.schema, scope, "`schema:`")
    else:
        from runtime.returns import returns_schema

        schema = returns_schema(run, tid)  # `returns:` is the same contract, written as a Nika type
    temperature = materialise(verb.temperature, scope, "`temperature:`") if verb.temperature is not None else None
    max_tokens = materialise(verb.max_tokens, scope, "`max_tokens:`") if verb.max_tokens is not None else None
    provider, name = run.services.provider_for(model)
    request = Request(model, prompt, system, temperature, max_tokens, schema if isinstance(schema, dict) else None)
    t0 = time.monotonic()
    fields: list[tuple[str, Any]] = [
        ("task", tid),
        ("phase", "model_call"),
        ("provider", provider.id or model.partition("/")[0]),
        ("model", model),
    ]
    try:
        response = await provider.complete(name, request)
    except TaskError as err:
        run.emit("verb_invoked", [*fields, ("duration_ms", _since(t0)), ("error_code", err.code)])
        raise
    run.emit(
        "verb_invoked",
        [
            *fields,
            ("duration_ms", _since(t0)),
            ("tokens_in", response.tokens_in),
            ("tokens_out", response.tokens_out),
            ("finish_reason", response.finish_reason),
        ],
    )
    if request.schema is not None:
        validate_output(response.value, request.schema)
    return response.value


def _since(t0: float) -> float:
    return round((time.monotonic() - t0) * 1000, 3)


def validate_output(value: Any, schema: dict[str, Any]) -> None:
    """INFER-002 when a structured reply does not satisfy its ``schema:``."""
    import jsonschema

    from runtime.json_schema import SchemaEvalError, first_error

    try:
        exc = first_error(schema, value)
    except jsonschema.SchemaError as e:  # the checker validates schemas; a template may still render one
        raise TaskError(SCHEMA_CODE, f"`schema:` is not a valid JSON Schema: {e.message}") from None
    except SchemaEvalError as e:
        raise TaskError(SCHEMA_CODE, f"`schema:` has a {e}") from None
    if exc is not None:
        where = "/".join(str(p) for p in exc.absolute_path) or "the reply"
        raise TaskError(
            SCHEMA_CODE,
            f"the model's reply does not match `schema:` at {where}: {exc.message}",
            details={"path": list(exc.absolute_path)},
        )
