"""The laws on a bundle's shipped fixtures (spec 11): at least one ``contradictory`` fixture, each
fixture evaluable by the kernel and deciding what it expects, and no pair of fixtures breaking a
declared monotonicity. They run the kernel, so they sit above it (:mod:`checker.decide.receipt`).
"""

from __future__ import annotations

from typing import Any

from checker.decide.errors import DecideError, bundle_error
from checker.decide.laws import FIXTURE_CLASSES, MAX_FIXTURES, object_at
from checker.decide.receipt import check_snapshot, decide

FIXTURE_T = "1970-01-01T00:00:00Z"  # a fixture's evidence is observed at the instant it is judged


def evaluate_fixture(
    bundle: dict[str, Any], evidence: dict[str, Any], where: str, groups: dict[str, str] | None = None
) -> dict[str, Any]:
    """Evaluate a shipped fixture (``{key: value}``, optionally ``{key: independence_group}``) as a
    snapshot of fully trusted items."""
    schema = bundle["evidence_schema"]
    snapshot = {
        "t": FIXTURE_T,
        "evidence": [
            {
                "key": key,
                "value": value,
                "source": (schema.get(key, {}).get("sources") or ["fixture"])[0],
                "digest": f"fixture:{key}",
                "observed_at": FIXTURE_T,
                "integrity": "authoritative",
            }
            | ({"quality": {"independence_group": groups[key]}} if groups and key in groups else {})
            for key, value in evidence.items()
        ],
    }
    try:
        items = check_snapshot(bundle, snapshot)
    except DecideError as e:
        raise bundle_error(f"a shipped fixture does not fit the evidence schema: {e.message}", where) from None
    return decide(bundle, snapshot, items)


def validate_fixtures(bundle: dict[str, Any]) -> None:
    """Raise NIKA-DECIDE-001 when the shipped fixtures break a law; ``bundle`` already holds its shape laws."""
    fixtures = bundle["fixtures"]
    if not isinstance(fixtures, list) or len(fixtures) > MAX_FIXTURES:
        raise bundle_error(f"`fixtures` must be a list of at most {MAX_FIXTURES} cases", "/fixtures")
    seen: set[str] = set()
    results: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for i, fx in enumerate(fixtures):
        where = f"/fixtures/{i}"
        fx = object_at(fx, where)
        if fx.get("class") not in FIXTURE_CLASSES:
            raise bundle_error(f"a fixture's `class` is one of {', '.join(FIXTURE_CLASSES)}", f"{where}/class")
        name = fx.get("name")
        if not isinstance(name, str) or name in seen:
            raise bundle_error("every fixture has a unique string `name`", f"{where}/name")
        seen.add(name)
        evidence = object_at(fx.get("evidence"), f"{where}/evidence")
        groups = fx.get("independence_groups")
        if groups is not None and (
            not isinstance(groups, dict) or not all(isinstance(g, str) and g for g in groups.values())
        ):
            raise bundle_error(
                "`independence_groups` maps evidence keys to group names", f"{where}/independence_groups"
            )
        receipt = evaluate_fixture(bundle, evidence, where, groups)
        expect = fx.get("expect")
        if expect is not None and expect != receipt["outcome"]:
            raise bundle_error(
                f"fixture `{name}` expects `{expect}` but the bundle decides `{receipt['outcome']}`", f"{where}/expect"
            )
        results.append((evidence, receipt))
    if not any(fx.get("class") == "contradictory" for fx in fixtures):
        raise bundle_error(
            "the bundle ships no `contradictory` fixture, so it cannot prove its Conflict handling", "/fixtures"
        )
    _monotonicity(bundle, results)


def _monotonicity(bundle: dict[str, Any], results: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """Every pair of fixtures that differ in one known key moves each dimension the declared way."""
    dims = bundle["rules"]["dimensions"]
    for a, (ea, ra) in enumerate(results):
        for eb, rb in results[a + 1 :]:
            differ = [k for k in set(ea) | set(eb) if ea.get(k) != eb.get(k)]
            if len(differ) != 1 or differ[0] not in ea or differ[0] not in eb:
                continue
            key = differ[0]
            va, vb = int(ea[key]), int(eb[key])
            for dim, body in dims.items():
                declared = {t.get("monotonicity", "none") for t in body["terms"] if t["evidence"] == key}
                if len(declared) != 1 or declared == {"none"}:
                    continue
                ia, ib = ra["dimensions"][dim]["interval"], rb["dimensions"][dim]["interval"]
                lo_first = (ia, ib) if va < vb else (ib, ia)
                rising = lo_first[0]["lo"] <= lo_first[1]["lo"] and lo_first[0]["hi"] <= lo_first[1]["hi"]
                falling = lo_first[0]["lo"] >= lo_first[1]["lo"] and lo_first[0]["hi"] >= lo_first[1]["hi"]
                if (declared == {"increases"} and not rising) or (declared == {"decreases"} and not falling):
                    verb = declared.pop().removesuffix("s")
                    raise bundle_error(
                        f"the fixtures break the declared monotonicity: `{dim}` does not {verb} with `{key}`",
                        "/fixtures",
                    )
