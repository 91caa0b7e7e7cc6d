"""A decision bundle of our own (shaped like spec 11's example) and snapshot builders, shared by
the kernel tests and the runtime tests."""

from __future__ import annotations

# Our own bundle, shaped like spec 11's example (not a copy of the golden file).
BUNDLE: dict = {
    "decision_bundle_format": 1,
    "manifest": {
        "id": "deploy-gate",
        "version": "0.2.0",
        "owner": "ops",
        "license": "Apache-2.0",
        "valid_until": "2030-01-01T00:00:00Z",
    },
    "evidence_schema": {
        "open_incidents": {"type": "integer", "required": True, "sources": ["pager"], "integrity": "verified"},
        "is_friday": {"type": "bool", "required": False, "sources": ["clock"], "integrity": "observed"},
        "test_pass_bp": {"type": "integer", "required": True, "sources": ["ci"], "integrity": "authoritative"},
        "author": {"type": "string", "required": False, "identity": True, "sources": ["git"]},
    },
    "transforms": {
        "incidents": {"kind": "clamp", "min": 0, "max": 5},
        "friday": {"kind": "bucket", "min": 0, "max": 1, "edges": [1], "values": [0, 4000]},
        "pass_rate": {"kind": "linear", "min": 0, "max": 10000, "scale_bp": 10000, "offset": 0},
    },
    "rules": {
        "dimensions": {
            "readiness": {
                "terms": [
                    {
                        "evidence": "test_pass_bp",
                        "transform": "pass_rate",
                        "weight_bp": 8000,
                        "monotonicity": "increases",
                    }
                ]
            },
            "risk": {
                "terms": [
                    {
                        "evidence": "open_incidents",
                        "transform": "incidents",
                        "weight_bp": 20000,
                        "monotonicity": "increases",
                    },
                    {"evidence": "is_friday", "transform": "friday", "weight_bp": 10000, "monotonicity": "increases"},
                ]
            },
        },
        "thresholds": [{"dimension": "readiness", "recommend_gte_bp": 7000}],
    },
    "governance": {
        "never_automatic": [],
        "override": {"append_only": True, "reason_required": True},
        "human_required_triggers": ["conflict_on_required"],
    },
    "fixtures": [
        {
            "name": "green",
            "class": "positive",
            "evidence": {"open_incidents": 0, "test_pass_bp": 9900},
            "expect": "recommend",
        },
        {
            "name": "red",
            "class": "negative",
            "evidence": {"open_incidents": 0, "test_pass_bp": 1000},
            "expect": "defer",
        },
        {"name": "no-tests", "class": "ambiguous", "evidence": {"open_incidents": 1}},
        {"name": "split", "class": "contradictory", "evidence": {"open_incidents": 4, "test_pass_bp": 5000}},
        {"name": "calmer", "class": "negative", "evidence": {"open_incidents": 1, "test_pass_bp": 5000}},
        {
            "name": "who",
            "class": "adversarial",
            "evidence": {"open_incidents": 0, "test_pass_bp": 9900, "author": "eve"},
        },
    ],
}


def item(key, value, *, source, integrity="verified", digest=None):
    return {"key": key, "value": value, "source": source, "digest": digest or f"{key}-{value}", "integrity": integrity}


def snap(*items, t="2026-01-01T00:00:00Z"):
    return {"t": t, "evidence": list(items)}
