"""The price table: USD per million tokens by ``provider/model``, read from the runtime's
``NIKA_PRICES`` JSON (the spec ships no table, so a model without a row is unpriced, never $0)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

PRICES_ENV = "NIKA_PRICES"
#: the test provider: it answers without calling any model, so its calls are provably free
FREE_PROVIDERS = frozenset({"mock"})


class Price(NamedTuple):
    """USD per million tokens."""

    input_per_million: float
    output_per_million: float

    @property
    def free(self) -> bool:
        return self.input_per_million == 0 and self.output_per_million == 0

    def usd(self, tokens_in: int, tokens_out: int) -> float:
        """What a call of these token counts costs (the one price formula: run meter, agent budgets)."""
        return (tokens_in * self.input_per_million + tokens_out * self.output_per_million) / 1_000_000


class PriceTable(NamedTuple):
    """Prices by ``provider/model``; ``source`` names where they came from (``None``: no table),
    ``error`` says why (part of) a given table could not be used."""

    prices: Mapping[str, Price] = MappingProxyType({})
    source: str | None = None
    error: str | None = None

    def get(self, model: str) -> Price | None:
        return self.prices.get(model)


def _usd(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    f = float(v)
    return f if math.isfinite(f) and f >= 0 else None


def parse_prices(text: str, source: str = PRICES_ENV) -> PriceTable:
    """A price table from its JSON text (the runtime's ``NIKA_PRICES`` format). A row without
    both prices as non-negative numbers is left out (that model stays unpriced) and named in
    ``error``; text that is not a JSON object yields an empty table with ``error`` set."""
    if not text.strip():
        return PriceTable()
    try:
        data = json.loads(text)
    except ValueError:
        return PriceTable({}, source, f"{source} is not valid JSON; every model is unpriced")
    if not isinstance(data, dict):
        return PriceTable({}, source, f"{source} is not a JSON object; every model is unpriced")
    prices: dict[str, Price] = {}
    bad: list[str] = []
    for model, row in data.items():
        inp = _usd(row.get("input")) if isinstance(row, dict) else None
        out = _usd(row.get("output")) if isinstance(row, dict) else None
        if inp is None or out is None:
            bad.append(str(model))
            continue
        prices[str(model)] = Price(inp, out)
    error = None
    if bad:
        shown = ", ".join(f"`{m}`" for m in bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        error = f"{source}: {shown} lack numeric `input` and `output` prices, so stay unpriced"
    return PriceTable(prices, source, error)


def prices_from_env(environ: Mapping[str, str]) -> PriceTable:
    """The table in ``environ[NIKA_PRICES]`` (an empty table when unset)."""
    return parse_prices(environ.get(PRICES_ENV, ""))
