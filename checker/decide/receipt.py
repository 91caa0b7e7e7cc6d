"""The kernel: a checked snapshot under a valid bundle → the Decision Receipt (spec 11 §Outcomes, §Receipt).

Evidence is checked against the schema (NIKA-DECIDE-002), then each dimension is the sum of its
terms, each term ``transform(value) × weight_bp // 10000``. A key with no usable value (absent,
expired, or in conflict) is Unknown: its term contributes the interval of the transform's whole
output range, never an invented zero. The outcome, in order of precedence: a Conflict between two
authoritative sources on a required key → ``human_required``; a missing required key → ``defer``;
a threshold whose dimension's lower bound reaches it (robust, ``inf ≥ threshold``) → ``recommend``,
turned into ``human_required`` when governance never lets ``recommend`` be automatic; otherwise
``defer``. ``determination_provenance`` records which of those decided.
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
    missing = [
        k for k, d in schema.items() if d.get("required") and k not in known and k not in {c["key"] for c in conflicts}
    ]
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
        "digests": [item["digest"] for item in items if "digest" in item],
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
    """One value per key (with its independence group): the most trusted item wins; authoritative
    disagreement is a Conflict."""
    by_key: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        if _expired(schema[item["key"]], item, t):
            continue
        by_key.setdefault(item["key"], []).append(item)
    known: dict[str, Any] = {}
    groups: dict[str, str] = {}
    conflicts: list[dict[str, Any]] = []
    for key, group in by_key.items():
        top = max(INTEGRITY.index(i.get("integrity", "untrusted")) for i in group)
        best = [i for i in group if INTEGRITY.index(i.get("integrity", "untrusted")) == top]
        values = {canonical_json(i["value"]) for i in best}
        if len(values) > 1 and INTEGRITY[top] == "authoritative":
            conflicts.append(
                {
                    "key": key,
                    "class": "source",
                    "required": bool(schema[key].get("required")),
                    "witnesses": [
                        {"value": i["value"], "source": i["source"], "digest": i.get("digest")} for i in best
                    ],
                }
            )
            continue
        known[key], groups[key] = best[0]["value"], group_of(best[0])
    return known, groups, conflicts


def _outcome(
    bundle: dict[str, Any],
    dimensions: dict[str, Any],
    dominance: list[dict[str, Any]],
    conflicts: list[dict[str, Any]],
    missing: list[str],
) -> tuple[str, list[str]]:
    never = bundle["governance"].get("never_automatic", [])
    required_conflicts = [c["key"] for c in conflicts if c["required"]]
    if required_conflicts:
        return "human_required", [
            f"authoritative sources disagree on required evidence {required_conflicts}: a person decides"
        ]
    if missing:
        return "defer", [f"required evidence {missing} is missing, so the kernel abstains until it arrives"]
    fired = first_dominant(dominance, dimensions)
    if fired is not None:
        outcome, why = fired
        if outcome == "recommend" and "recommend" in never:
            return "human_required", [why, "governance never lets `recommend` be automatic: a person decides"]
        return outcome, [why]
    for t in bundle["rules"].get("thresholds", []):
        interval, bar = dimensions[t["dimension"]]["interval"], t["recommend_gte_bp"]
        if interval["lo"] >= bar:
            why = [f"`{t['dimension']}` clears its threshold on its lower bound ({interval['lo']} >= {bar} bp)"]
            if "recommend" in never:
                return "human_required", [*why, "governance never lets `recommend` be automatic: a person decides"]
            return "recommend", why
    straddles = [
        t["dimension"]
        for t in bundle["rules"].get("thresholds", [])
        if dimensions[t["dimension"]]["interval"]["hi"] >= t["recommend_gte_bp"]
    ]
    unsure = incomparable(dominance)
    if straddles:
        return "defer", [f"`{straddles[0]}` is incomparable with its threshold on the available evidence: defer"]
    if unsure:
        return "defer", [f"{unsure[0]} is incomparable with the available evidence, so no dominance rule fires: defer"]
    return "defer", ["no threshold is reached: defer"]
