"""The price table: USD per million tokens by ``provider/model``: a row of the runtime's
``NIKA_PRICES`` JSON first, else the model catalog's list price (``checker/contracts/models.toml``,
read from genai-prices with its source and date). A model neither prices is unpriced, never $0."""

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
    """USD per million tokens; ``*_tiers`` are ``(from_tokens, usd)`` rates that apply to a whole
    call whose input exceeds ``from_tokens`` (the providers' long-context prices)."""

    input_per_million: float
    output_per_million: float
    input_tiers: tuple[tuple[int, float], ...] = ()
    output_tiers: tuple[tuple[int, float], ...] = ()
    source: str | None = None  # where the price was read (a catalog row's source and date)

    @property
    def free(self) -> bool:
        return self.input_per_million == 0 and self.output_per_million == 0

    def usd(self, tokens_in: int, tokens_out: int) -> float:
        """What a call of these token counts costs (the one price formula: run meter, agent budgets)."""
        rate_in = _rate(self.input_per_million, self.input_tiers, tokens_in)
        rate_out = _rate(self.output_per_million, self.output_tiers, tokens_in)
        return (tokens_in * rate_in + tokens_out * rate_out) / 1_000_000


def _rate(base: float, tiers: tuple[tuple[int, float], ...], tokens_in: int) -> float:
    for start, usd in reversed(tiers):
        if tokens_in > start:
            return usd
    return base


class PriceTable(NamedTuple):
    """Prices by ``provider/model``; ``source`` names where they came from (``None``: no table),
    ``error`` says why (part of) a given table could not be used."""

    prices: Mapping[str, Price] = MappingProxyType({})
    source: str | None = None
    error: str | None = None
    catalog: bool = False  # models without a row here take the model catalog's list price

    def get(self, model: str) -> Price | None:
        got = self.prices.get(model)
        if got is None and self.catalog:
            return catalog_price(model)
        return got


def catalog_price(model: str) -> Price | None:
    """The catalog's list price of ``model`` (``None``: not catalogued, or catalogued unpriced)."""
    from checker.contracts.catalog import lookup

    row = lookup(model)
    if row is None or row.input is None or row.output is None:
        return None
    return Price(row.input, row.output, row.input_tiers, row.output_tiers, f"{row.price_source}, {row.price_date}")


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


CATALOG_SOURCE = "the model catalog"


def prices_from_env(environ: Mapping[str, str]) -> PriceTable:
    """The table in ``environ[NIKA_PRICES]`` over the model catalog's list prices."""
    table = parse_prices(environ.get(PRICES_ENV, ""))
    source = f"{table.source} over {CATALOG_SOURCE}" if table.source else CATALOG_SOURCE
    return table._replace(catalog=True, source=source)
