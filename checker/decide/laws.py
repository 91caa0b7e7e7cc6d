"""The laws a Decision Bundle must satisfy on its own before it may decide anything (NIKA-DECIDE-001).

Shape (``decision_bundle_format: 1`` and the six regions), fixed-point integers everywhere (a float
is refused, teaching basis points), transforms that are total on their range, rules that read only
declared evidence and never an ``identity: true`` key, a closed governance vocabulary, and the
manifest digest when one is given (spec 11). The laws on the shipped fixtures run the kernel, so
they live above it, in :mod:`checker.decide.fixtures`; ``validate_bundle`` joins both.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from checker.decide.canonical import NotCanonical, blake3_hex, canonical_json
from checker.decide.dominance import validate_dominance
from checker.decide.errors import bundle_error
from checker.decide.groups import validate_cap

REGIONS = ("manifest", "evidence_schema", "transforms", "rules", "governance", "fixtures")
# What spec 11's bundle table says the manifest carries; the `digest` is optional (the reference
# receipt reads `"digest": null` when there is none) and checked when given.
MANIFEST_FIELDS = ("id", "version", "owner", "license", "valid_until")
OUTCOMES = ("recommend", "defer", "human_required", "opted_out", "overridden")
INTEGRITY = ("untrusted", "observed", "verified", "authoritative")
CONFIDENTIALITY = ("public", "internal", "confidential", "secret")
TYPES = ("integer", "bool", "string")
FIXTURE_CLASSES = ("positive", "negative", "ambiguous", "contradictory", "adversarial")
MONOTONICITY = ("increases", "decreases", "none")
TRIGGERS = ("conflict_on_required",)
MAX_FIXTURES = 1000


def validate_shape(bundle: Any) -> None:
    """Raise NIKA-DECIDE-001 naming the first law ``bundle`` breaks on its own (every law but the
    fixtures', which need the kernel: :mod:`checker.decide.fixtures`); return None when they hold."""
    if not isinstance(bundle, dict):
        raise bundle_error("a decision bundle is one JSON object")
    try:
        canonical_json(bundle)
    except NotCanonical as e:
        raise bundle_error(f"{e}; write weights and thresholds as integer basis points (8735 = 87.35%)") from None
    if bundle.get("decision_bundle_format") != 1 or type(bundle.get("decision_bundle_format")) is not int:
        raise bundle_error("`decision_bundle_format` must be 1", "/decision_bundle_format")
    for region in REGIONS:
        if region not in bundle:
            raise bundle_error(f"the bundle has no `{region}` region", f"/{region}")
    _manifest(bundle)
    schema = _schema(bundle["evidence_schema"])
    transforms = _transforms(bundle["transforms"])
    _rules(bundle["rules"], schema, transforms)
    _governance(bundle["governance"])
    if "explanations" in bundle and not isinstance(bundle["explanations"], dict):
        raise bundle_error("`explanations` must be an object of reason-code templates", "/explanations")


def object_at(value: Any, where: str) -> dict[str, Any]:
    """``value`` when it is an object, else NIKA-DECIDE-001 at ``where``."""
    if not isinstance(value, dict):
        raise bundle_error("must be an object", where)
    return value


def _int(value: Any, where: str) -> int:
    if type(value) is not int:
        raise bundle_error(f"must be an integer (fixed point), not {_kind(value)}", where)
    return value


def _kind(value: Any) -> str:
    return {bool: "a boolean", float: "a float", str: "a string", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _manifest(bundle: dict[str, Any]) -> None:
    m = object_at(bundle["manifest"], "/manifest")
    for key in MANIFEST_FIELDS:
        if not isinstance(m.get(key), str) or not m[key]:
            raise bundle_error(f"`manifest.{key}` must be a non-empty string", f"/manifest/{key}")
    digest = m.get("digest")
    if digest is None:
        return
    if not isinstance(digest, str):
        raise bundle_error("`manifest.digest` must be a string", "/manifest/digest")
    expected = manifest_digest(bundle)
    if digest.removeprefix("blake3:").lower() != expected:
        raise bundle_error(
            f"`manifest.digest` does not match the bundle (blake3 of its canonical JSON is {expected})",
            "/manifest/digest",
        )


def manifest_digest(bundle: dict[str, Any]) -> str:
    """blake3 over the canonical JSON of everything but the manifest."""
    return blake3_hex({k: v for k, v in bundle.items() if k != "manifest"})


def _schema(raw: Any) -> dict[str, dict[str, Any]]:
    schema = object_at(raw, "/evidence_schema")
    for key, decl in schema.items():
        where = f"/evidence_schema/{key}"
        decl = object_at(decl, where)
        if decl.get("type") not in TYPES:
            raise bundle_error(f"`type` must be one of {', '.join(TYPES)}", f"{where}/type")
        for flag in ("required", "identity"):
            if flag in decl and not isinstance(decl[flag], bool):
                raise bundle_error(f"`{flag}` must be a boolean", f"{where}/{flag}")
        sources = decl.get("sources")
        if sources is not None and (not isinstance(sources, list) or not all(isinstance(s, str) for s in sources)):
            raise bundle_error("`sources` must be a list of source names", f"{where}/sources")
        if "ttl" in decl and ttl_ms(decl["ttl"]) is None:
            raise bundle_error('`ttl` must be a duration such as "24h" or "90m"', f"{where}/ttl")
        if "integrity" in decl and decl["integrity"] not in INTEGRITY:
            raise bundle_error(f"`integrity` must be one of {', '.join(INTEGRITY)}", f"{where}/integrity")
    return schema


def ttl_ms(value: Any) -> int | None:
    """A ``ttl`` in whole milliseconds (integer parts only, so no float survives), or None."""
    from checker.core.durations import parse_duration

    if not isinstance(value, str) or not all(c.isdigit() or c in "hms" for c in value):
        return None
    ms, _ = parse_duration(value, max_ms=None)
    return None if ms is None else int(ms)


def _transforms(raw: Any) -> dict[str, dict[str, Any]]:
    transforms = object_at(raw, "/transforms")
    for name, spec in transforms.items():
        where = f"/transforms/{name}"
        spec = object_at(spec, where)
        kind = spec.get("kind")
        lo, hi = _int(spec.get("min"), f"{where}/min"), _int(spec.get("max"), f"{where}/max")
        if lo > hi:
            raise bundle_error("`min` is above `max`: the transform has an empty range", where)
        if kind == "linear":
            _int(spec.get("scale_bp"), f"{where}/scale_bp")
            _int(spec.get("offset"), f"{where}/offset")
        elif kind == "bucket":
            edges, values = spec.get("edges"), spec.get("values")
            if not isinstance(edges, list) or not isinstance(values, list):
                raise bundle_error("a bucket needs `edges` and `values` lists", where)
            for i, e in enumerate(edges):
                _int(e, f"{where}/edges/{i}")
            for i, v in enumerate(values):
                _int(v, f"{where}/values/{i}")
            if any(a >= b for a, b in pairwise(edges)):
                raise bundle_error("bucket `edges` must be strictly increasing", f"{where}/edges")
            if any(e <= lo or e > hi for e in edges):
                raise bundle_error("every bucket edge must lie inside (min, max]", f"{where}/edges")
            if len(values) != len(edges) + 1:
                raise bundle_error("a bucket has one more value than edges, or it is not total", f"{where}/values")
        elif kind != "clamp":
            raise bundle_error("`kind` must be clamp, linear or bucket", f"{where}/kind")
    return transforms


def _rules(raw: Any, schema: dict[str, Any], transforms: dict[str, Any]) -> None:
    rules = object_at(raw, "/rules")
    unknown = sorted(set(rules) - {"dimensions", "thresholds", "dominance"})
    if unknown:
        raise bundle_error(f"`rules.{unknown[0]}` is not supported by this build of the kernel", f"/rules/{unknown[0]}")
    dims = object_at(rules.get("dimensions"), "/rules/dimensions")
    if not dims:
        raise bundle_error("the rules declare no dimension", "/rules/dimensions")
    for dim, body in dims.items():
        terms = object_at(body, f"/rules/dimensions/{dim}").get("terms")
        validate_cap(body, f"/rules/dimensions/{dim}")
        if not isinstance(terms, list) or not terms:
            raise bundle_error("a dimension needs a non-empty `terms` list", f"/rules/dimensions/{dim}/terms")
        for i, term in enumerate(terms):
            where = f"/rules/dimensions/{dim}/terms/{i}"
            term = object_at(term, where)
            key = term.get("evidence")
            if key not in schema:
                raise bundle_error(
                    f"the term reads `{key}`, which the evidence schema does not declare", f"{where}/evidence"
                )
            if schema[key].get("identity"):
                raise bundle_error(
                    f"`{key}` is an identity key and must not feed the dimension `{dim}`", f"{where}/evidence"
                )
            if schema[key]["type"] == "string":
                raise bundle_error(
                    f"`{key}` is a string; a transform takes integer or boolean evidence", f"{where}/evidence"
                )
            if term.get("transform") not in transforms:
                raise bundle_error(
                    f"the term uses the transform `{term.get('transform')}`, which is not declared",
                    f"{where}/transform",
                )
            _int(term.get("weight_bp"), f"{where}/weight_bp")
            if term.get("monotonicity", "none") not in MONOTONICITY:
                raise bundle_error("`monotonicity` must be increases, decreases or none", f"{where}/monotonicity")
    thresholds = rules.get("thresholds", [])
    if not isinstance(thresholds, list):
        raise bundle_error("`thresholds` must be a list", "/rules/thresholds")
    for i, t in enumerate(thresholds):
        where = f"/rules/thresholds/{i}"
        t = object_at(t, where)
        if t.get("dimension") not in dims:
            raise bundle_error(
                f"the threshold names `{t.get('dimension')}`, which is not a dimension", f"{where}/dimension"
            )
        extra = sorted(set(t) - {"dimension", "recommend_gte_bp"})
        if extra:
            raise bundle_error(f"`{extra[0]}` is not a threshold this build of the kernel knows", f"{where}/{extra[0]}")
        _int(t.get("recommend_gte_bp"), f"{where}/recommend_gte_bp")
    if "dominance" in rules:
        validate_dominance(rules["dominance"], dims)


def _governance(raw: Any) -> None:
    gov = object_at(raw, "/governance")
    never = gov.get("never_automatic", [])
    if not isinstance(never, list) or any(o not in OUTCOMES for o in never):
        raise bundle_error(
            f"`never_automatic` lists outcomes among {', '.join(OUTCOMES)}", "/governance/never_automatic"
        )
    triggers = gov.get("human_required_triggers", [])
    if not isinstance(triggers, list) or any(t not in TRIGGERS for t in triggers):
        raise bundle_error(
            f"`human_required_triggers` may list {', '.join(TRIGGERS)}", "/governance/human_required_triggers"
        )
    override = gov.get("override")
    if override is not None:
        override = object_at(override, "/governance/override")
        if override.get("append_only") is False or override.get("reason_required") is False:
            raise bundle_error("an override is append-only with a mandatory reason", "/governance/override")
