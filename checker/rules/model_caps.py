"""A task that asks a catalogued model for what the catalog says it lacks (``catalog/capability``):
images to a text-only model, ``thinking:`` to a model without reasoning settings, ``schema:`` or
``returns:`` to one without structured output, ``tools:`` to one without tool calls, a
``temperature:`` to one that takes none. A warning, never a refusal: catalogs age, and a model
the catalog does not know is never judged. The catalog (``checker/contracts/models.toml``) is read
only when a verb with a literal model asks for one of these, and then only that model's row.
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import lint
from checker.core.diagnostics import Diagnostic
from checker.core.source import Span
from checker.model.workflow import Agent, Infer
from checker.parse.values import ScalarValue, TemplateValue, Value
from checker.rules.support.context import RuleContext

RULE = "catalog/capability"


def _asks(task_returns: Value | None, verb: Infer | Agent) -> list[tuple[str, Span]]:
    """What the verb asks of its model, by the catalog's capability key, with where it asks."""
    asks: list[tuple[str, Span]] = []
    if isinstance(verb, Infer):
        if verb.vision is not None:
            asks.append(("vision", verb.vision.span))
        if verb.thinking is not None:
            asks.append(("reasoning", verb.thinking.span))
    elif verb.tools:
        asks.append(("tools", verb.tools[0].span))
    schema = verb.schema if verb.schema is not None else task_returns
    if schema is not None:
        asks.append(("json_mode", schema.span))
    if verb.temperature is not None:
        asks.append(("temperature", verb.temperature.span))
    return asks


def check_model_capabilities(ctx: RuleContext) -> Iterator[Diagnostic]:
    for tid, verb in ctx.verbs():
        if not isinstance(verb, Infer | Agent):
            continue
        model = verb.effective_model
        if not isinstance(model, ScalarValue) or isinstance(model, TemplateValue):
            continue  # a computed model is known only when the task runs
        if not isinstance(model.value, str) or "/" not in model.value:
            continue
        asks = _asks(ctx.workflow.tasks[tid].returns, verb)
        if not asks:
            continue
        from checker.contracts.catalog import CAPABILITIES, lookup

        row = lookup(model.value)
        if row is None:
            continue  # not catalogued: never judged
        for cap, span in asks:
            if row.lacks(cap):
                yield lint(
                    RULE,
                    span,
                    f"the model catalog says `{model.value}` does not take {CAPABILITIES[cap]} "
                    f"({row.caps_source or 'the catalog'})",
                    "Use a model that takes it (`nika catalog` lists them), or drop the field; if the catalog "
                    "is out of date, refresh it with `python scripts/model_catalog.py`.",
                    task=tid,
                )
