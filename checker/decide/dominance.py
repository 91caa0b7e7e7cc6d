"""Robust dominance between dimensions (spec 11 §Decision IR) and its bundle laws.

``rules.dominance`` is an ordered list of rules ``{dimension: A, over: B, outcome: O}``. ``A``
dominates ``B`` only when ``inf(A) > sup(B)`` on the intervals the evidence leaves; when neither
interval lies wholly above the other the pair is *incomparable with the available evidence* and the
rule does not fire (never a false total order). The first rule whose ``A`` dominates its ``B``
decides ``O`` (``recommend`` still bows to ``governance.never_automatic``). The declared relation
must be a strict order: no rule of a dimension over itself, no pair twice, no cycle
(NIKA-DECIDE-001). When a bundle declares dominance, the receipt lists each comparison's result.
"""

from __future__ import annotations

from typing import Any

from checker.decide.errors import bundle_error

RULE_OUTCOMES = ("recommend", "defer", "human_required")
RULE_KEYS = {"dimension", "over", "outcome"}


def validate_dominance(raw: Any, dims: dict[str, Any]) -> None:
    """Raise NIKA-DECIDE-001 when ``rules.dominance`` is malformed or its relation has a cycle."""
    if not isinstance(raw, list):
        raise bundle_error("`dominance` must be a list of `{dimension, over, outcome}` rules", "/rules/dominance")
    edges: dict[str, set[str]] = {}
    for i, rule in enumerate(raw):
        where = f"/rules/dominance/{i}"
        if not isinstance(rule, dict):
            raise bundle_error("a dominance rule is an object `{dimension, over, outcome}`", where)
        extra = sorted(set(rule) - RULE_KEYS)
        if extra:
            raise bundle_error(f"`{extra[0]}` is not a field of a dominance rule", f"{where}/{extra[0]}")
        for field in ("dimension", "over"):
            if rule.get(field) not in dims:
                raise bundle_error(f"`{field}` names `{rule.get(field)}`, which is not a dimension", f"{where}/{field}")
        a, b = rule["dimension"], rule["over"]
        if a == b:
            raise bundle_error(f"`{a}` cannot dominate itself", where)
        if b in edges.get(a, set()):
            raise bundle_error(f"the pair `{a}` over `{b}` is declared twice", where)
        if rule.get("outcome") not in RULE_OUTCOMES:
            raise bundle_error(f"a dominance rule's `outcome` is one of {', '.join(RULE_OUTCOMES)}", f"{where}/outcome")
        edges.setdefault(a, set()).add(b)
        cycle = _path(edges, b, a)
        if cycle:
            raise bundle_error(f"dominance has a cycle: {' over '.join([a, *cycle])}", where)


def _path(edges: dict[str, set[str]], start: str, goal: str) -> list[str]:
    """A chain ``start … goal`` along ``edges`` (depth-first, bounded by the dimension count), or []."""
    stack, seen = [(start, [start])], {start}
    while stack:
        node, trail = stack.pop()
        if node == goal:
            return trail
        for nxt in sorted(edges.get(node, ())):
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*trail, nxt]))
    return []


def compare(a: dict[str, int], b: dict[str, int]) -> str:
    """``dominates`` when inf(a) > sup(b), ``dominated`` when inf(b) > sup(a), else ``incomparable``."""
    if a["lo"] > b["hi"]:
        return "dominates"
    if b["lo"] > a["hi"]:
        return "dominated"
    return "incomparable"


def dominance_results(rules: list[dict[str, Any]], dimensions: dict[str, Any]) -> list[dict[str, Any]]:
    """Each declared rule with the robust comparison of its two dimensions' intervals."""
    return [
        {
            "dimension": r["dimension"],
            "over": r["over"],
            "outcome": r["outcome"],
            "result": compare(dimensions[r["dimension"]]["interval"], dimensions[r["over"]]["interval"]),
        }
        for r in rules
    ]


def first_dominant(results: list[dict[str, Any]], dimensions: dict[str, Any]) -> tuple[str, str] | None:
    """The outcome of the first rule that fires, with the words that say why; None when none fires."""
    for r in results:
        if r["result"] == "dominates":
            a, b = dimensions[r["dimension"]]["interval"], dimensions[r["over"]]["interval"]
            return r["outcome"], (
                f"`{r['dimension']}` dominates `{r['over']}` robustly (inf {a['lo']} > sup {b['hi']} bp),"
                f" so the rule decides `{r['outcome']}`"
            )
    return None


def incomparable(results: list[dict[str, Any]]) -> list[str]:
    return [f"`{r['dimension']}` vs `{r['over']}`" for r in results if r["result"] == "incomparable"]
