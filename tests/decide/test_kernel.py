"""The decision kernel (spec 11): goldens, bundle laws (NIKA-DECIDE-001), snapshot schema
(NIKA-DECIDE-002), and the properties: total, deterministic, float-free."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checker.decide import BUNDLE_CODE, SNAPSHOT_CODE, DecideError, evaluate, validate_bundle
from checker.decide.canonical import NotCanonical, blake3_hex, canonical_json
from checker.decide.laws import manifest_digest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from decide_fixtures import BUNDLE, item, snap

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = ROOT.parent / "shared" / "nika-spec" / "conformance" / "decision-goldens"
needs_goldens = pytest.mark.skipif(
    not GOLDENS.is_dir(), reason="the spec's decision goldens are not checked out beside"
)


def refused(bundle, snapshot=None) -> DecideError:
    with pytest.raises(DecideError) as e:
        if snapshot is None:
            validate_bundle(bundle)
        else:
            evaluate(bundle, snapshot)
    return e.value


@needs_goldens
@pytest.mark.parametrize(
    "case",
    sorted(p.name.removesuffix(".snapshot.json") for p in GOLDENS.glob("*.snapshot.json")) if GOLDENS.is_dir() else [],
)
def test_spec_goldens_reproduce(case):
    """Spec 11 §The second evaluator (G18): the canonical receipt is byte-equal to the golden the
    reference interpreter wrote, provenance strings included."""
    bundle = json.loads(next(GOLDENS.glob("*.bundle.json")).read_text())
    ours = evaluate(bundle, json.loads((GOLDENS / f"{case}.snapshot.json").read_text()))
    golden = (GOLDENS / f"{case}.receipt.golden.json").read_bytes().strip()
    assert canonical_json(ours).encode() == golden


def test_term_by_term_contributions_and_recommend():
    """Spec 11 §Decision IR: contributions are exposed term by term; a threshold is met on inf."""
    r = evaluate(
        BUNDLE,
        snap(
            item("open_incidents", 2, source="pager"),
            item("test_pass_bp", 9000, source="ci", integrity="authoritative"),
        ),
    )
    assert r["outcome"] == "recommend"
    assert r["dimensions"]["readiness"]["interval"] == {"lo": 7200, "hi": 7200}
    risk = r["dimensions"]["risk"]
    assert [c["contribution"] for c in risk["contributions"]] == [{"lo": 4, "hi": 4}, {"lo": 0, "hi": 4000}]
    assert [c["known"] for c in risk["contributions"]] == [True, False]
    assert risk["interval"] == {"lo": 4, "hi": 4004}


def test_never_automatic_turns_recommend_into_human_required():
    """Spec 11 §Outcomes: an outcome in governance.never_automatic never rides a bare recommend."""
    b = copy.deepcopy(BUNDLE)
    b["governance"]["never_automatic"] = ["recommend"]
    for fx in b["fixtures"]:
        fx.pop("expect", None)
    r = evaluate(
        b,
        snap(
            item("open_incidents", 0, source="pager"),
            item("test_pass_bp", 9000, source="ci", integrity="authoritative"),
        ),
    )
    assert r["outcome"] == "human_required"


def test_straddling_interval_defers():
    """Spec 11 §Interval propagation: A > B only when inf(A) > sup(B); otherwise incomparable."""
    b = copy.deepcopy(BUNDLE)
    b["evidence_schema"]["test_pass_bp"]["required"] = False
    r = evaluate(b, snap(item("open_incidents", 0, source="pager")))
    assert r["dimensions"]["readiness"]["interval"] == {"lo": 0, "hi": 8000}
    assert r["outcome"] == "defer"
    assert r["snapshot"]["missing"] == []


def test_conflict_on_required_key_is_human_required_with_witnesses():
    """Spec 11 §Four-valued logic: two authoritative sources disagreeing on a required key force
    human_required and carry a witness (both values, both sources, both digests)."""
    b = copy.deepcopy(BUNDLE)
    b["evidence_schema"]["test_pass_bp"]["sources"] = ["ci", "qa"]
    r = evaluate(
        b,
        snap(
            item("open_incidents", 0, source="pager"),
            item("test_pass_bp", 9000, source="ci", integrity="authoritative", digest="a"),
            item("test_pass_bp", 2000, source="qa", integrity="authoritative", digest="b"),
        ),
    )
    assert r["outcome"] == "human_required"
    (c,) = r["conflicts"]
    assert c["key"] == "test_pass_bp" and c["required"] is True and c["class"] == "unresolved"
    assert [(w["value"], w["source"], w["digest"]) for w in c["witness"]] == [(9000, "ci", "a"), (2000, "qa", "b")]
    assert r["determination_provenance"] == ["conflict on a required key forces human_required (Belnap · spec 11)"]
    # the last item of the key is scored, as the reference evaluator scores it (2000 → 1600 bp)
    assert r["dimensions"]["readiness"]["contributions"][0] | {} == {
        "evidence": "test_pass_bp",
        "transform": "pass_rate",
        "weight_bp": 8000,
        "known": True,
        "contribution": {"lo": 1600, "hi": 1600},
    }


def test_missing_required_defers_and_is_listed():
    """Spec 11 §Outcomes: not enough evidence yet is defer, a successful evaluation."""
    r = evaluate(BUNDLE, snap(item("open_incidents", 0, source="pager")))
    assert r["outcome"] == "defer" and r["snapshot"]["missing"] == ["test_pass_bp"]


def _without(path, mutate):
    b = copy.deepcopy(BUNDLE)
    mutate(b)
    return b


@pytest.mark.parametrize(
    "mutate, words",
    [
        (lambda b: b["rules"]["dimensions"]["risk"]["terms"][0].update(weight_bp=0.4), "float"),
        (lambda b: b["rules"]["thresholds"][0].update(recommend_gte_bp=True), "integer"),
        (lambda b: b["rules"]["dimensions"]["risk"]["terms"][0].update(evidence="nope"), "does not declare"),
        (
            lambda b: b["rules"]["dimensions"]["risk"]["terms"].append(
                {"evidence": "author", "transform": "incidents", "weight_bp": 1}
            ),
            "identity",
        ),
        (
            lambda b: b.__setitem__("fixtures", [f for f in b["fixtures"] if f["class"] != "contradictory"]),
            "contradictory",
        ),
        (lambda b: b["rules"]["dimensions"]["risk"]["terms"][0].update(weight_bp=-20000), "monotonicity"),
        (lambda b: b["transforms"]["friday"].update(values=[0]), "not total"),
        (lambda b: b["transforms"]["friday"].update(edges=[5]), "edge"),
        (lambda b: b["transforms"]["incidents"].update(min=9), "empty range"),
        (lambda b: b["manifest"].update(digest="blake3:00"), "digest"),
        (lambda b: b.pop("governance"), "governance"),
        (lambda b: b.update(decision_bundle_format=2), "decision_bundle_format"),
        (lambda b: b["fixtures"][0].update(expect="defer"), "expects"),
        (lambda b: b["fixtures"][0]["evidence"].update(open_incidents="3"), "fixture"),
        (lambda b: b["rules"].update(dominance=[["a", "b"], ["b", "a"]]), "dominance rule is an object"),
        (lambda b: b["rules"].update(sideways=[]), "not supported"),
    ],
)
def test_bundle_laws_refuse_with_decide_001(mutate, words):
    """Spec 11 §nika:decide: a bundle that is malformed or breaks its own laws is NIKA-DECIDE-001."""
    e = refused(_without(None, mutate))
    assert e.code == BUNDLE_CODE and words in str(e), str(e)


def test_a_matching_manifest_digest_is_accepted():
    """Spec 11 §The Decision Bundle: the manifest digest is blake3 of the canonical JSON below it."""
    b = copy.deepcopy(BUNDLE)
    b["manifest"]["digest"] = "blake3:" + manifest_digest(b)
    validate_bundle(b)
    assert evaluate(b, snap(item("open_incidents", 0, source="pager")))["bundle"]["digest"] == b["manifest"]["digest"]


@pytest.mark.parametrize(
    "bad, words",
    [
        (item("open_incidents", "2", source="pager"), "must be integer"),
        (item("open_incidents", True, source="pager"), "must be integer"),
        (item("open_incidents", 2.0, source="pager"), "float"),
        (item("open_incidents", 2, source="slack"), "authorized source"),
        (item("open_incidents", 2, source="pager", integrity="observed"), "below the declared floor"),
        (item("deploys", 2, source="pager"), "not a key"),
        (item("test_pass_bp", 20000, source="ci", integrity="authoritative"), "outside the range"),
    ],
)
def test_snapshot_misfits_refuse_with_decide_002(bad, words):
    """Spec 11 §nika:decide: type misfit, unauthorized source, integrity below the floor → DECIDE-002."""
    e = refused(BUNDLE, snap(bad))
    assert e.code == SNAPSHOT_CODE and words in str(e), str(e)


def test_canonical_json_is_jcs_for_the_integer_subset():
    """RFC 8785: keys sorted by UTF-16 code units (an astral key before U+FF61, unlike code
    points), no spaces, raw UTF-8; floats have no place."""
    assert (
        canonical_json({"b": [1, "é"], "a": None, "\U0001f600": 1, "\uff61": 2})
        == '{"a":null,"b":[1,"é"],"\U0001f600":1,"｡":2}'
    )  # D83D < FF61
    with pytest.raises(NotCanonical):
        canonical_json({"w": 0.5})


evidence_values = st.fixed_dictionaries(
    {"open_incidents": st.integers(-(10**30), 10**30), "test_pass_bp": st.integers(0, 10000)},
    optional={"is_friday": st.booleans()},
)


@settings(max_examples=60, deadline=None)
@given(evidence_values, st.sampled_from(["observed", "verified", "authoritative"]))
def test_kernel_is_total_and_deterministic(values, integrity):
    """Spec 11 §Decision IR: the rules are a pure, total program; the same input gives the same
    bytes, and no float appears anywhere in the receipt."""
    items = [
        item(
            "open_incidents",
            values["open_incidents"],
            source="pager",
            integrity=integrity if integrity != "observed" else "verified",
        )
    ]
    items.append(item("test_pass_bp", values["test_pass_bp"], source="ci", integrity="authoritative"))
    if "is_friday" in values:
        items.append(item("is_friday", values["is_friday"], source="clock", integrity=integrity))
    a = evaluate(BUNDLE, snap(*items))
    b = evaluate(copy.deepcopy(BUNDLE), json.loads(json.dumps(snap(*items))))
    assert canonical_json(a) == canonical_json(b)  # canonical_json refuses any float
    assert a["outcome"] in {"recommend", "defer", "human_required"}
    for dim in a["dimensions"].values():
        assert dim["interval"]["lo"] <= dim["interval"]["hi"]


@settings(max_examples=40, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=3) | st.floats(allow_nan=True),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
        max_leaves=12,
    )
)
def test_arbitrary_snapshots_are_a_receipt_or_a_decide_002(junk):
    """Bad input: any JSON-ish value as a snapshot is a receipt or a clean NIKA-DECIDE-002, never a crash."""
    for snapshot in (junk, {"t": "x", "evidence": junk}, {"t": "x", "evidence": [junk]}):
        try:
            evaluate(BUNDLE, snapshot)
        except DecideError as e:
            assert e.code == SNAPSHOT_CODE


def test_same_bytes_in_a_fresh_process(tmp_path):
    """Determinism across processes (spec 11 §The second evaluator): another interpreter with a
    different hash seed prints the byte-identical receipt."""
    (tmp_path / "b.json").write_text(json.dumps(BUNDLE))
    s = snap(
        item("open_incidents", 1, source="pager"), item("test_pass_bp", 9500, source="ci", integrity="authoritative")
    )
    (tmp_path / "s.json").write_text(json.dumps(s))
    outs = set()
    for seed in ("1", "2"):
        p = subprocess.run(
            [sys.executable, "-m", "nika", "decide", str(tmp_path / "b.json"), str(tmp_path / "s.json")],
            capture_output=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed},
            check=False,
        )
        assert p.returncode == 0, p.stderr
        outs.add(p.stdout)
    assert outs == {(canonical_json(evaluate(BUNDLE, s)) + "\n").encode()}
    assert len(blake3_hex(evaluate(BUNDLE, s))) == 64


def test_evidence_older_than_its_ttl_is_unknown():
    """Spec 11 §Four-valued logic: a missing or expired key is Unknown, so it contributes an
    interval; `ttl` in the evidence schema is measured from `observed_at` to the snapshot's `t`."""
    b = copy.deepcopy(BUNDLE)
    b["evidence_schema"]["open_incidents"]["ttl"] = "1h"
    fresh = dict(item("open_incidents", 0, source="pager"), observed_at="2026-01-01T00:00:00Z")
    stale = dict(fresh, observed_at="2025-12-31T22:59:59Z")
    ok = evaluate(b, snap(fresh, t="2026-01-01T01:00:00Z"))
    assert ok["dimensions"]["risk"]["contributions"][0]["known"] is True
    late = evaluate(b, snap(stale, t="2026-01-01T00:00:00Z"))
    assert late["dimensions"]["risk"]["contributions"][0]["known"] is False
    assert late["outcome"] == "defer" and "open_incidents" in late["snapshot"]["missing"]
    assert refused(b, snap(dict(fresh, observed_at="yesterday"))).code == SNAPSHOT_CODE
    marked = dict(item("open_incidents", 0, source="pager"), quality={"freshness": "expired"})
    assert evaluate(BUNDLE, snap(marked))["dimensions"]["risk"]["contributions"][0]["known"] is False
    bad = copy.deepcopy(BUNDLE)
    bad["evidence_schema"]["open_incidents"]["ttl"] = "1.5h"
    assert refused(bad).code == BUNDLE_CODE


def test_deeply_nested_evidence_is_a_clean_refusal():
    """Bad input (issue 22): a pathological snapshot is NIKA-DECIDE-002, never a RecursionError."""
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert (
        refused(BUNDLE, {"t": "x", "evidence": [item("open_incidents", 1, source="pager") | {"extra": deep}]}).code
        == SNAPSHOT_CODE
    )


@pytest.mark.parametrize("key", [["open_incidents"], {"k": 1}, None, 7])
def test_an_evidence_key_that_is_not_a_string_is_decide_002(key):
    """Bad input: a list or a map as an evidence key is a positioned NIKA-DECIDE-002, never a crash."""
    e = refused(BUNDLE, snap({"key": key, "value": 1, "source": "pager", "integrity": "verified"}))
    assert e.code == SNAPSHOT_CODE and e.where == "/evidence/0/key"


@pytest.mark.parametrize("field", ["id", "version", "owner", "license", "valid_until"])
def test_the_manifest_fields_the_bundle_table_lists_are_required(field):
    """Spec 11 §The Decision Bundle: the manifest carries id · version · owner · license ·
    valid_until (and the digest, optional: checked when given)."""
    b = copy.deepcopy(BUNDLE)
    del b["manifest"][field]
    e = refused(b)
    assert e.code == BUNDLE_CODE and e.where == f"/manifest/{field}"


@pytest.mark.parametrize("outcome", ["defer", "recommend"])
def test_a_never_automatic_outcome_is_human_required(outcome):
    """Spec 11 §Outcomes: an outcome `governance.never_automatic` lists is human_required, whichever
    outcome it is (the validator accepts every outcome there; the kernel applies each)."""
    b = copy.deepcopy(BUNDLE)
    b["governance"]["never_automatic"] = [outcome]
    for fx in b["fixtures"]:
        fx.pop("expect", None)
    cases = {
        "defer": snap(item("open_incidents", 0, source="pager")),  # test_pass_bp missing
        "recommend": snap(
            item("open_incidents", 0, source="pager"),
            item("test_pass_bp", 9000, source="ci", integrity="authoritative"),
        ),
    }
    assert evaluate(BUNDLE, cases[outcome])["outcome"] == outcome  # without the governance line
    r = evaluate(b, cases[outcome])
    assert r["outcome"] == "human_required"
    assert r["determination_provenance"][-1] == f"governance.never_automatic lists {outcome} — human_required"


# -- the receipt laws on contradictory authoritative evidence (spec 11 §Four-valued logic, §Receipt) --

CONTRA_KEYS = ("open_incidents", "test_pass_bp", "is_friday")
SOURCES = {"open_incidents": "pager", "test_pass_bp": "ci", "is_friday": "clock"}


def _contra_bundle(required: dict[str, bool]) -> dict:
    b = copy.deepcopy(BUNDLE)
    for key, req in required.items():
        decl = b["evidence_schema"][key]
        decl["required"], decl["sources"], decl["integrity"] = req, [SOURCES[key], "audit", "mirror"], "observed"
    for fx in b["fixtures"]:
        fx.pop("expect", None)
    return b


def _value(key: str, n: int):
    return bool(n % 2) if key == "is_friday" else {"open_incidents": n % 6, "test_pass_bp": (n * 997) % 10001}[key]


contra_items = st.lists(
    st.tuples(
        st.sampled_from(CONTRA_KEYS),
        st.integers(0, 50),
        st.sampled_from(["pager", "ci", "clock", "audit", "mirror"]),
        st.sampled_from(["observed", "verified", "authoritative"]),
    ),
    min_size=2,
    max_size=8,
)


@settings(max_examples=80, deadline=None)
@given(
    st.fixed_dictionaries({k: st.booleans() for k in CONTRA_KEYS}),
    contra_items,
    st.randoms(use_true_random=False),
)
def test_receipt_laws_on_contradictory_authoritative_evidence(required, raw, rnd):
    b = _contra_bundle(required)
    items = []
    for i, (key, n, source, integrity) in enumerate(raw):
        if source not in b["evidence_schema"][key]["sources"]:
            source = SOURCES[key]
        items.append(item(key, _value(key, n), source=source, integrity=integrity, digest=f"d{i:02d}"))
    # at least one contradiction between two authoritative sources, on a random key
    key = rnd.choice(CONTRA_KEYS)
    items.append(item(key, _value(key, 1), source="audit", integrity="authoritative", digest="x1"))
    items.append(item(key, _value(key, 2), source="mirror", integrity="authoritative", digest="x2"))
    r = evaluate(b, snap(*items))

    auth: dict[str, list[dict]] = {}
    for it in items:
        if it["integrity"] == "authoritative":
            auth.setdefault(it["key"], []).append(it)
    contradicted = sorted(k for k, its in auth.items() if len({json.dumps(i["value"]) for i in its}) > 1)
    # one conflict per contradicted key, by key; each `unresolved` (nothing in a v1 bundle resolves it)
    assert [c["key"] for c in r["conflicts"]] == contradicted
    for c in r["conflicts"]:
        assert c["class"] == "unresolved" and c["required"] is required[c["key"]]
        witness = [(w["source"], w["value"], w["digest"]) for w in c["witness"]]
        # the witness carries every disagreeing value, with its source and digest, in canonical order
        assert sorted(witness, key=lambda w: (w[0], json.dumps(w[1]), w[2])) == witness
        assert sorted(witness, key=str) == sorted(
            ((i["source"], i["value"], i["digest"]) for i in auth[c["key"]]), key=str
        )
        assert len({json.dumps(w[1]) for w in witness}) >= 2
    # a conflict on a required key forces human_required
    if any(required[k] for k in contradicted):
        assert r["outcome"] == "human_required"
        assert r["determination_provenance"][0] == "conflict on a required key forces human_required (Belnap · spec 11)"
    # the receipt's other lists are canonical: independent of the snapshot's order
    assert r["snapshot"]["digests"] == sorted(i["digest"] for i in items)
    assert r["snapshot"]["missing"] == sorted(r["snapshot"]["missing"])
    shuffled = list(items)
    rnd.shuffle(shuffled)
    again = evaluate(b, snap(*shuffled))
    for part in ("conflicts",):
        assert again[part] == r[part]
    assert again["snapshot"] == r["snapshot"]
    # byte-identical on a re-run
    assert canonical_json(evaluate(copy.deepcopy(b), json.loads(json.dumps(snap(*items))))) == canonical_json(r)
