"""Spec 11 §Decision IR robust dominance (inf(A) > sup(B), else incomparable; an acyclic declared
relation) and §Evidence IR independence groups (a per-group contribution cap: mirrors of one
signal never outvote an independent one)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.decide import BUNDLE_CODE, DecideError, evaluate, validate_bundle
from checker.decide.canonical import canonical_json
from checker.decide.dominance import compare

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decide_fixtures import BUNDLE, item, snap

RISK_OVER_READINESS = {"dimension": "risk", "over": "readiness", "outcome": "human_required"}


def with_dominance(*rules: dict) -> dict:
    b = copy.deepcopy(BUNDLE)
    b["rules"]["dominance"] = list(rules)
    return b


def facts(incidents: int, passed: int, friday: bool | None = None) -> dict:
    items = [
        item("open_incidents", incidents, source="pager"),
        item("test_pass_bp", passed, source="ci", integrity="authoritative"),
    ]
    if friday is not None:
        items.append(item("is_friday", friday, source="clock"))
    return snap(*items)


@pytest.mark.parametrize(
    "a, b, result",
    [
        ({"lo": 5, "hi": 9}, {"lo": 0, "hi": 4}, "dominates"),
        ({"lo": 5, "hi": 9}, {"lo": 0, "hi": 5}, "incomparable"),  # touching bounds are not strictly above
        ({"lo": 0, "hi": 4}, {"lo": 5, "hi": 9}, "dominated"),
        ({"lo": 0, "hi": 10}, {"lo": 3, "hi": 4}, "incomparable"),
    ],
)
def test_robust_comparison_is_inf_over_sup(a, b, result):
    assert compare(a, b) == result


def test_a_dominance_rule_fires_only_on_robust_dominance():
    """risk = [10, 10] vs readiness = [0, 0]: inf(risk) > sup(readiness), so the rule decides."""
    r = evaluate(with_dominance(RISK_OVER_READINESS), facts(5, 0, friday=False))
    assert r["outcome"] == "human_required"
    assert r["dominance"] == [{**RISK_OVER_READINESS, "result": "dominates"}]
    assert "dominates `readiness` robustly" in r["determination_provenance"][0]


def test_an_unknown_makes_the_pair_incomparable_and_the_kernel_defers():
    """is_friday unknown: risk = [0, 4000] against readiness = [8, 8]; no false total order."""
    r = evaluate(with_dominance(RISK_OVER_READINESS), facts(0, 10))
    assert r["dimensions"]["risk"]["interval"] == {"lo": 0, "hi": 4000}
    assert r["dominance"][0]["result"] == "incomparable"
    assert r["outcome"] == "defer" and "incomparable" in r["determination_provenance"][0]


def test_the_dominated_direction_does_not_fire_and_thresholds_still_decide():
    r = evaluate(with_dominance(RISK_OVER_READINESS), facts(0, 9900, friday=False))
    assert r["dominance"][0]["result"] == "dominated"
    assert r["outcome"] == "recommend"


def test_a_recommending_rule_still_bows_to_never_automatic():
    b = with_dominance({"dimension": "readiness", "over": "risk", "outcome": "recommend"})
    b["rules"]["thresholds"] = []
    for fx in b["fixtures"]:
        fx.pop("expect", None)
    assert evaluate(b, facts(0, 9900, friday=False))["outcome"] == "recommend"
    b["governance"]["never_automatic"] = ["recommend"]
    assert evaluate(b, facts(0, 9900, friday=False))["outcome"] == "human_required"


def test_a_bundle_without_dominance_has_no_dominance_field():
    """The receipt shape of a bundle that declares none is unchanged (the spec goldens)."""
    assert "dominance" not in evaluate(BUNDLE, facts(0, 9900))


@pytest.mark.parametrize(
    "rules, words",
    [
        ([RISK_OVER_READINESS, {**RISK_OVER_READINESS, "dimension": "readiness", "over": "risk"}], "cycle"),
        ([{**RISK_OVER_READINESS, "over": "risk"}], "itself"),
        ([RISK_OVER_READINESS, RISK_OVER_READINESS], "twice"),
        ([{**RISK_OVER_READINESS, "over": "speed"}], "not a dimension"),
        ([{**RISK_OVER_READINESS, "outcome": "overridden"}], "outcome"),
        ([{**RISK_OVER_READINESS, "weight": 3}], "not a field"),
        ({"risk": "readiness"}, "must be a list"),
    ],
)
def test_malformed_or_cyclic_dominance_is_decide_001(rules, words):
    b = copy.deepcopy(BUNDLE)
    b["rules"]["dominance"] = rules
    with pytest.raises(DecideError) as e:
        validate_bundle(b)
    assert e.value.code == BUNDLE_CODE and words in str(e.value), str(e.value)


def test_a_longer_cycle_is_named_in_full():
    b = copy.deepcopy(BUNDLE)
    b["rules"]["dimensions"]["speed"] = copy.deepcopy(b["rules"]["dimensions"]["readiness"])
    b["rules"]["dominance"] = [
        {"dimension": "risk", "over": "readiness", "outcome": "defer"},
        {"dimension": "readiness", "over": "speed", "outcome": "defer"},
        {"dimension": "speed", "over": "risk", "outcome": "defer"},
    ]
    with pytest.raises(DecideError) as e:
        validate_bundle(b)
    assert "speed over risk over readiness over speed" in str(e.value)


# ---- independence groups -------------------------------------------------------------------

KEYS = [f"m{i}" for i in range(10)] + ["solo"]
SIGNAL = {"kind": "clamp", "min": 0, "max": 10000}


def mirror_bundle(cap: int | None) -> dict:
    dim: dict = {
        "terms": [{"evidence": k, "transform": "sig", "weight_bp": 10000, "monotonicity": "increases"} for k in KEYS]
    }
    if cap is not None:
        dim["group_cap_bp"] = cap
    return {
        "decision_bundle_format": 1,
        "manifest": {
            "id": "mirrors",
            "version": "1.0.0",
            "owner": "ops",
            "license": "MIT",
            "valid_until": "2030-01-01",
        },
        "evidence_schema": {k: {"type": "integer", "sources": ["bot"]} for k in KEYS},
        "transforms": {"sig": SIGNAL},
        "rules": {"dimensions": {"signal": dim}, "thresholds": [{"dimension": "signal", "recommend_gte_bp": 9000}]},
        "governance": {},
        "fixtures": [
            {
                "name": "echo",
                "class": "contradictory",
                "evidence": dict.fromkeys(KEYS[:10], 1000),
                "independence_groups": dict.fromkeys(KEYS[:10], "echo"),
            },
        ],
    }


def mirrors(value: int, solo: int | None = None) -> dict:
    items = [item(k, value, source="bot") | {"quality": {"independence_group": "echo"}} for k in KEYS[:10]]
    if solo is not None:
        items.append(item("solo", solo, source="bot"))
    return snap(*items)


def test_ten_mirrors_of_one_signal_are_capped_as_one():
    """Uncapped, ten copies of 1000 bp sum to 10000 and clear the 9000 bar; capped at 5000, the
    group weighs 5000 and one independent 5000 signal weighs as much."""
    assert evaluate(mirror_bundle(None), mirrors(1000))["outcome"] == "recommend"
    r = evaluate(mirror_bundle(5000), mirrors(1000, solo=5000))
    groups = r["dimensions"]["signal"]["groups"]
    assert [g["group"] for g in groups] == ["echo", "key:solo"]
    assert groups[0]["raw"] == {"lo": 10000, "hi": 10000} and groups[0]["capped"] == {"lo": 5000, "hi": 5000}
    assert groups[1]["capped"] == {"lo": 5000, "hi": 5000}
    assert r["dimensions"]["signal"]["interval"] == {"lo": 10000, "hi": 10000}
    # the term-by-term formula is still shown uncapped
    assert sum(c["contribution"]["lo"] for c in r["dimensions"]["signal"]["contributions"]) == 15000


def test_unknown_terms_keep_their_whole_interval_under_a_cap():
    r = evaluate(mirror_bundle(5000), mirrors(1000))
    assert r["dimensions"]["signal"]["interval"] == {"lo": 5000, "hi": 15000}  # solo unknown: [0, 10000]
    assert r["outcome"] == "defer"


def test_items_without_a_group_are_each_their_own_group():
    s = snap(*[item(k, 1000, source="bot") for k in KEYS[:10]])
    r = evaluate(mirror_bundle(500), s)
    assert len(r["dimensions"]["signal"]["groups"]) == 10
    assert r["dimensions"]["signal"]["interval"]["lo"] == 5000


@pytest.mark.parametrize("cap", [-1, 0.5, "10"])
def test_a_bad_cap_is_decide_001(cap):
    with pytest.raises(DecideError) as e:
        validate_bundle(mirror_bundle(cap))
    assert e.value.code == BUNDLE_CODE and ("group_cap_bp" in str(e.value) or "float" in str(e.value))


def test_fixture_groups_take_part_in_fixture_checks():
    """A fixture's `independence_groups` reach the kernel: under the cap the fixture's 10000 bp
    of echoes weighs 5000, so an `expect: recommend` it made uncapped is refused."""
    b = mirror_bundle(5000)
    b["fixtures"][0]["evidence"] = dict.fromkeys(KEYS, 1000)
    b["fixtures"][0]["expect"] = "recommend"
    with pytest.raises(DecideError) as e:
        validate_bundle(b)
    assert "expects `recommend`" in str(e.value)
    del b["fixtures"][0]["independence_groups"]
    validate_bundle(b)


@settings(max_examples=60, deadline=None)
@given(
    values=st.dictionaries(st.sampled_from(KEYS), st.integers(0, 10000), max_size=len(KEYS)),
    grouped=st.sets(st.sampled_from(KEYS)),
    cap=st.integers(0, 20000),
)
def test_capping_is_total_deterministic_and_never_adds_weight(values, grouped, cap):
    """Any snapshot over the mirror bundle evaluates; the receipt is the same bytes twice; the
    capped interval is a sub-range of the uncapped one (a cap only ever removes weight)."""
    items = [
        item(k, v, source="bot") | ({"quality": {"independence_group": "echo"}} if k in grouped else {})
        for k, v in values.items()
    ]
    s = snap(*items)
    capped_r, plain = evaluate(mirror_bundle(cap), s), evaluate(mirror_bundle(None), s)
    assert canonical_json(capped_r) == canonical_json(evaluate(mirror_bundle(cap), s))
    a, b = capped_r["dimensions"]["signal"]["interval"], plain["dimensions"]["signal"]["interval"]
    assert a["lo"] <= a["hi"] and a["lo"] <= b["lo"] and a["hi"] <= b["hi"]
    assert all(abs(g["capped"]["hi"]) <= cap for g in capped_r["dimensions"]["signal"]["groups"])
