"""Independence groups and their contribution cap (spec 11 §Evidence IR, anti-Goodhart).

An evidence item's ``quality.independence_group`` names the correlation group it belongs to; an
item with none is a group of its own (named by its key). A dimension that declares
``group_cap_bp: N`` never takes more than ``N`` (nor less than ``-N``) from any one group: the
group's summed term interval is clamped into ``[-N, N]``, so ten mirrors of one signal weigh no
more than one. Clamping is monotone, so the capped interval still bounds every completion of the
evidence. Unknown terms have no item and so no group: they keep their whole interval (a sound
over-approximation). Without ``group_cap_bp`` a dimension is the plain sum of its terms.
"""

from __future__ import annotations

from typing import Any

from checker.decide.errors import bundle_error


def validate_cap(body: dict[str, Any], where: str) -> None:
    if "group_cap_bp" in body:
        cap = body["group_cap_bp"]
        if type(cap) is not int or cap < 0:
            raise bundle_error("`group_cap_bp` must be a non-negative integer (basis points)", f"{where}/group_cap_bp")


def group_of(item: dict[str, Any]) -> str:
    """The correlation group of a resolved evidence item."""
    group = item.get("quality", {}).get("independence_group")
    return group if isinstance(group, str) and group else f"key:{item['key']}"


def capped(
    cap: int, contributions: list[dict[str, Any]], groups: dict[str, str]
) -> tuple[list[dict[str, Any]], int, int]:
    """Per-group raw and capped intervals, and the dimension's interval bounds under the cap.

    ``groups`` maps each known key to its group; the listing is sorted by group name.
    """
    raw: dict[str, dict[str, Any]] = {}
    lo_sum = hi_sum = 0
    for c in contributions:
        lo, hi = c["contribution"]["lo"], c["contribution"]["hi"]
        if not c["known"]:
            lo_sum, hi_sum = lo_sum + lo, hi_sum + hi
            continue
        g = raw.setdefault(groups[c["evidence"]], {"evidence": [], "lo": 0, "hi": 0})
        if c["evidence"] not in g["evidence"]:
            g["evidence"].append(c["evidence"])
        g["lo"], g["hi"] = g["lo"] + lo, g["hi"] + hi
    listing = []
    for name in sorted(raw):
        g = raw[name]
        lo, hi = min(max(g["lo"], -cap), cap), min(max(g["hi"], -cap), cap)
        lo_sum, hi_sum = lo_sum + lo, hi_sum + hi
        listing.append(
            {
                "group": name,
                "evidence": g["evidence"],
                "raw": {"lo": g["lo"], "hi": g["hi"]},
                "capped": {"lo": lo, "hi": hi},
            }
        )
    return listing, lo_sum, hi_sum
