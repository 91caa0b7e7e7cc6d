"""The kernel: a checked snapshot under a valid bundle → the Decision Receipt (spec 11 §Outcomes, §Receipt).

Evidence is checked against the schema (NIKA-DECIDE-002), then each dimension is the sum of its
terms, each term ``transform(value) × weight_bp // 10000``. A key with no usable item (absent, or
expired) is Unknown: its term contributes the interval of the transform's whole output range, never
an invented zero. When a key has several items, the last one in the snapshot's order is scored (a
later observation supersedes an earlier one); two ``authoritative`` items that disagree are a
Conflict, listed with its witness whatever is scored.

The receipt is byte-equal to the reference evaluator's on the same input (spec 11 §The second
evaluator, G18), so its lists are in a canonical order and its provenance strings are fixed:

* ``snapshot.digests``: every item's digest, sorted; ``snapshot.missing``: the required keys with no
  usable item, sorted.
* ``conflicts``: one entry per key in conflict, by key: ``{key, class, required, witness}``, where
  ``class`` is ``unresolved`` (v1 bundles declare no rule that resolves a contradiction, and a
  contradiction nothing resolves is unresolved: §Four-valued logic) and ``witness`` holds each
  disagreeing authoritative item as ``{source, value, digest}``, by source (then value and digest).
* ``determination_provenance``: the commitments that decided, in the order they applied. The
  outcome is decided in this order, each with its string:

  1. a Conflict on a required key: ``human_required``, "conflict on a required key forces
     human_required (Belnap · spec 11)" (§Four-valued logic: it "forces the human_required outcome");
  2. required evidence missing: ``defer``, "missing required evidence ['k', …] — abstention is a
     safety property" (the sorted keys as a Python list; §Outcomes: defer is "not enough evidence
     yet");
  3. a declared dominance rule that fires (this kernel's ``rules.dominance``): its own outcome;
  4. the thresholds in declared order: the first whose dimension's lower bound reaches it decides
     ``recommend``, "dimension D dominates the threshold (inf LO >= BAR bp) — robust, not
     point-estimated"; one whose interval straddles it (LO < BAR <= HI) decides ``defer``,
     "dimension D straddles the threshold ([LO, HI] vs BAR bp) — incomparable with the available
     evidence, never a false order" (§Interval propagation: incomparable, "never a false total
     order"); a threshold the upper bound misses is passed over;
  5. none of them: ``defer``, "no threshold admitted — defer".

  Then governance: an outcome ``governance.never_automatic`` lists becomes ``human_required``,
  "governance.never_automatic lists O — human_required" (§Outcomes: it "can never ride" automatically).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from checker.decide import transforms as tf
from checker.decide.canonical import NotCanonical, canonical_json
from checker.decide.dominance import dominance_results, first_dominant, incomparable
from checker.decide.errors import snapshot_error
from checker.decide.groups import capped, group_of
from checker.decide.laws import CONFIDENTIALITY, INTEGRITY, ttl_ms

MAX_ITEMS = 10000
RECEIPT_FORMAT = 1
COMPLETENESS = ("complete", "paginated_partial", "source_down", "permission_denied")


def check_snapshot(bundle: dict[str, Any], snapshot: Any) -> list[dict[str, Any]]:
    """The snapshot's evidence items, each fitting ``bundle``'s evidence schema (else NIKA-DECIDE-002)."""
    if not isinstance(snapshot, dict):
        raise snapshot_error("an evidence snapshot is an object `{t, evidence: [...]}`")
    try:
        canonical_json(snapshot)
    except NotCanonical as e:
        raise snapshot_error(f"{e}; evidence values are integers, booleans or strings") from None
    if not isinstance(snapshot.get("t"), str):
        raise snapshot_error("the snapshot's `t` must be a timestamp string", "/t")
    items = snapshot.get("evidence")
    if not isinstance(items, list):
        raise snapshot_error("the snapshot's `evidence` must be a list of items", "/evidence")
    if len(items) > MAX_ITEMS:
        raise snapshot_error(
            f"the snapshot holds {len(items)} items; the kernel takes at most {MAX_ITEMS}", "/evidence"
        )
    schema = bundle["evidence_schema"]
    for i, item in enumerate(items):
        where = f"/evidence/{i}"
        if not isinstance(item, dict):
            raise snapshot_error("an evidence item is an object", where)
        key = item.get("key")
        if not isinstance(key, str):
            raise snapshot_error(f"an item's `key` is the name of a declared key, not {_kind(key)}", f"{where}/key")
        if key not in schema:
            raise snapshot_error(f"`{key}` is not a key the bundle's evidence schema declares", f"{where}/key")
        decl = schema[key]
        if "value" not in item:
            raise snapshot_error(f"the item for `{key}` has no `value`", where)
        if not _fits(decl["type"], item["value"]):
            raise snapshot_error(f"`{key}` must be {decl['type']}, not {item['value']!r}", f"{where}/value")
        sources = decl.get("sources")
        if not isinstance(item.get("source"), str) or (sources is not None and item["source"] not in sources):
            raise snapshot_error(f"`{item.get('source')}` is not an authorized source of `{key}`", f"{where}/source")
        integrity = item.get("integrity", "untrusted")
        if integrity not in INTEGRITY:
            raise snapshot_error(f"`integrity` is one of {', '.join(INTEGRITY)}", f"{where}/integrity")
        floor = decl.get("integrity", "untrusted")
        if INTEGRITY.index(integrity) < INTEGRITY.index(floor):
            raise snapshot_error(
                f"`{key}` arrives at integrity `{integrity}`, below the declared floor `{floor}`", f"{where}/integrity"
            )
        if "confidentiality" in item and item["confidentiality"] not in CONFIDENTIALITY:
            raise snapshot_error(
                f"`confidentiality` is one of {', '.join(CONFIDENTIALITY)}", f"{where}/confidentiality"
            )
        quality = item.get("quality", {})
        if not isinstance(quality, dict):
            raise snapshot_error("`quality` is an object", f"{where}/quality")
        if "completeness" in quality and quality["completeness"] not in COMPLETENESS:
            raise snapshot_error(f"`completeness` is one of {', '.join(COMPLETENESS)}", f"{where}/quality/completeness")
        if "digest" in item and not isinstance(item["digest"], str):
            raise snapshot_error("an item's `digest` is a string", f"{where}/digest")
    return items


def _kind(value: Any) -> str:
    return {list: "a list", dict: "a map", bool: "a boolean", int: "a number", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _fits(kind: str, value: Any) -> bool:
    if kind == "integer":
        return type(value) is int
    if kind == "bool":
        return isinstance(value, bool)
    return isinstance(value, str)


def decide(bundle: dict[str, Any], snapshot: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    """The receipt for the checked ``items`` of ``snapshot`` under the valid ``bundle``."""
    schema = bundle["evidence_schema"]
    known, groups, conflicts = _resolve(schema, items, snapshot["t"])
    missing = sorted(k for k, d in schema.items() if d.get("required") and k not in known)
    dimensions: dict[str, Any] = {}
    for dim, body in bundle["rules"]["dimensions"].items():
        contributions, lo_sum, hi_sum = [], 0, 0
        for term in body["terms"]:
            spec, weight = bundle["transforms"][term["transform"]], term["weight_bp"]
            key = term["evidence"]
            if key in known:
                out = tf.apply(spec, int(known[key]))
                if out is None:
                    raise snapshot_error(
                        f"`{key}` = {known[key]!r} is outside the range [{spec['min']}, {spec['max']}]"
                        f" of `{term['transform']}`"
                    )
                lo = hi = tf.weighted(out, weight)
            else:
                a, b = tf.output_range(spec)
                wa, wb = tf.weighted(a, weight), tf.weighted(b, weight)
                lo, hi = min(wa, wb), max(wa, wb)
            lo_sum, hi_sum = lo_sum + lo, hi_sum + hi
            contributions.append(
                {
                    "evidence": key,
                    "transform": term["transform"],
                    "weight_bp": weight,
                    "known": key in known,
                    "contribution": {"lo": lo, "hi": hi},
                }
            )
        dimensions[dim] = {"contributions": contributions, "interval": {"lo": lo_sum, "hi": hi_sum}}
        if "group_cap_bp" in body:
            listing, lo_sum, hi_sum = capped(body["group_cap_bp"], contributions, groups)
            dimensions[dim].update(groups=listing, interval={"lo": lo_sum, "hi": hi_sum})
    dominance = dominance_results(bundle["rules"].get("dominance", []), dimensions)
    outcome, provenance = _outcome(bundle, dimensions, dominance, conflicts, missing)
    snap: dict[str, Any] = {
        "t": snapshot["t"],
        "digests": sorted(item["digest"] for item in items if item.get("digest")),
        "missing": missing,
    }
    if "cursors" in snapshot:
        snap["cursors"] = snapshot["cursors"]
    manifest = bundle["manifest"]
    return {
        "decision_receipt_format": RECEIPT_FORMAT,
        "bundle": {"id": manifest["id"], "version": manifest["version"], "digest": manifest.get("digest")},
        "snapshot": snap,
        "dimensions": dimensions,
        "outcome": outcome,
        "conflicts": conflicts,
        "determination_provenance": provenance,
    } | ({"dominance": dominance} if "dominance" in bundle["rules"] else {})


def _expired(decl: dict[str, Any], item: dict[str, Any], t: str) -> bool:
    """Stale evidence is Unknown: marked ``expired``, or observed longer than ``ttl`` before ``t``."""
    if item.get("quality", {}).get("freshness") == "expired":
        return True
    if "ttl" not in decl:
        return False
    limit = ttl_ms(decl["ttl"])
    observed, now = _instant(item.get("observed_at"), "observed_at"), _instant(t, "t")
    age = now - observed
    return limit is not None and (age.days * 86_400_000 + age.seconds * 1000 + age.microseconds // 1000) > limit


def _instant(text: Any, what: str) -> datetime:
    try:
        when = datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise snapshot_error(f"`{what}` must be an RFC 3339 timestamp with a zone when the key has a `ttl`")
    return when


def _resolve(
    schema: dict[str, Any], items: list[dict[str, Any]], t: str
) -> tuple[dict[str, Any], dict[str, str], list[dict[str, Any]]]:
    """One scored value per key (the last usable item, with its independence group), and the
    Conflicts: authoritative items of one key that disagree."""
    by_key: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        if _expired(schema[item["key"]], item, t):
            continue
        by_key.setdefault(item["key"], []).append(item)
    known: dict[str, Any] = {}
    groups: dict[str, str] = {}
    conflicts: list[dict[str, Any]] = []
    for key in sorted(by_key):
        group = by_key[key]
        known[key], groups[key] = group[-1]["value"], group_of(group[-1])
        sure = [i for i in group if i.get("integrity") == "authoritative"]
        if len({canonical_json(i["value"]) for i in sure}) > 1:
            conflicts.append(
                {
                    "key": key,
                    "class": "unresolved",
                    "required": bool(schema[key].get("required")),
                    "witness": sorted(
                        ({"source": i["source"], "value": i["value"], "digest": i.get("digest")} for i in sure),
                        key=lambda w: (w["source"], canonical_json(w["value"]), str(w["digest"])),
                    ),
                }
            )
    return known, groups, conflicts


def _outcome(
    bundle: dict[str, Any],
    dimensions: dict[str, Any],
    dominance: list[dict[str, Any]],
    conflicts: list[dict[str, Any]],
    missing: list[str],
) -> tuple[str, list[str]]:
    """The outcome and the commitments that decided it, in the order of the module docstring."""
    outcome, why = _decided(bundle, dimensions, dominance, conflicts, missing)
    if outcome in bundle["governance"].get("never_automatic", []):
        why.append(f"governance.never_automatic lists {outcome} — human_required")
        outcome = "human_required"
    return outcome, why


def _decided(
    bundle: dict[str, Any],
    dimensions: dict[str, Any],
    dominance: list[dict[str, Any]],
    conflicts: list[dict[str, Any]],
    missing: list[str],
) -> tuple[str, list[str]]:
    if any(c["required"] for c in conflicts):
        return "human_required", ["conflict on a required key forces human_required (Belnap · spec 11)"]
    if missing:
        return "defer", [f"missing required evidence {missing!r} — abstention is a safety property"]
    fired = first_dominant(dominance, dimensions)
    if fired is not None:
        return fired[0], [fired[1]]
    for t in bundle["rules"].get("thresholds", []):
        dim, bar = t["dimension"], t["recommend_gte_bp"]
        lo, hi = dimensions[dim]["interval"]["lo"], dimensions[dim]["interval"]["hi"]
        if lo >= bar:
            return "recommend", [
                f"dimension {dim} dominates the threshold (inf {lo} >= {bar} bp) — robust, not point-estimated"
            ]
        if hi >= bar:
            return "defer", [
                f"dimension {dim} straddles the threshold ([{lo}, {hi}] vs {bar} bp) — incomparable with the "
                "available evidence, never a false order"
            ]
    unsure = incomparable(dominance)
    if unsure:
        return "defer", [f"{unsure[0]} is incomparable with the available evidence, so no dominance rule fires: defer"]
    return "defer", ["no threshold admitted — defer"]
