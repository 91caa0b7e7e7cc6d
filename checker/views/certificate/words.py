"""How the certificate writes amounts of money and lists of tasks."""

from __future__ import annotations

import math


def format_usd(usd: float, *, up: bool = True) -> str:
    """``$0.0040``: at least two significant digits below a dollar, cents above; rounded up
    (``up``, for a ceiling) or down (for a floor), never to a false ``$0``."""
    if usd <= 0:
        return "$0"
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    exact = Decimal(repr(round(usd, 12)))
    decimals = 2 if usd >= 1 else max(4, 1 - math.floor(math.log10(usd)))
    shown = exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_CEILING if up else ROUND_FLOOR)
    if usd >= 1:
        return f"${shown:,}"
    text = f"{shown:f}"
    while len(text.partition(".")[2]) > 4 and text.endswith("0"):
        text = text[:-1]
    return f"${text}"


def name_list(ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(f"`{t}`" for t in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")
