"""The one Go-duration parser (``"1h30m"``, ``"500ms"``) shared by task timeouts, ``on_finally``
step timeouts and the duration arguments of builtins.

The grammar is the same everywhere: ``<number><unit>`` parts, units from largest to smallest
without repeats, no days or weeks. What differs per use is the range, so callers pass it.
"""

from __future__ import annotations

import re

_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_MS = {"h": 3_600_000.0, "m": 60_000.0, "s": 1000.0, "ms": 1.0, "us": 1e-3, "µs": 1e-3, "ns": 1e-6}
UNIT_RANK = {"h": 0, "m": 1, "s": 2, "ms": 3, "us": 4, "µs": 4, "ns": 5}
MAX_TIMEOUT_MS = 24 * 3_600_000.0
UNITS_TEXT = "h, m, s, ms, us, ns"


def parse_duration(
    text: str, *, positive: bool = True, max_ms: float | None = MAX_TIMEOUT_MS
) -> tuple[float | None, str | None]:
    """Parse a Go-style duration; ``(milliseconds, None)`` or ``(None, reason)``.

    ``positive`` refuses zero; ``max_ms`` caps the total (task timeouts stop at 24h).
    """
    if not text:
        return None, "it is empty"
    pos = 0
    total = 0.0
    last_rank = -1
    while pos < len(text):
        m = _PART.match(text, pos)
        if m is None:
            bad = text[pos:]
            if re.match(r"[0-9.]+[dwy]", bad):
                return None, 'days, weeks and years are not duration units (use h, e.g. "48h")'
            return None, f"`{bad}` is not `<number><unit>` with a unit among {UNITS_TEXT}"
        rank = UNIT_RANK[m.group(2)]
        if rank <= last_rank:
            return None, 'units must go from largest to smallest without repeating (e.g. "1h30m")'
        last_rank = rank
        total += float(m.group(1)) * _UNIT_MS[m.group(2)]
        pos = m.end()
    if positive and total <= 0:
        return None, "it must be positive"
    if max_ms is not None and total > max_ms:
        return None, f"it exceeds the {_hours(max_ms)} maximum"
    return total, None


def duration_pattern() -> str:
    """The grammar as an anchored ECMA-262 pattern (for the JSON Schema export)."""
    ranks: dict[int, list[str]] = {}
    for unit, rank in UNIT_RANK.items():
        ranks.setdefault(rank, []).append(unit)
    number = r"[0-9]+(?:\.[0-9]+)?"
    parts = "".join(f"(?:{number}(?:{'|'.join(ranks[r])}))?" for r in sorted(ranks))
    return f"^(?=.)(?:{parts})$"


def _hours(ms: float) -> str:
    return f"{ms / 3_600_000:g}h"
