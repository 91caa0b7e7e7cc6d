"""Soundness of the typing of expressions over declared types: a seeded sample of random input
types and expressions; every refusal must fail at run on every value that fits the types
(scripts/fuzz_types.py runs the same property for as long as you like)."""

from __future__ import annotations

import random

from tests.checker.typed_soundness import one_case


def test_every_refusal_fails_at_run_on_fitting_values() -> None:
    rng = random.Random(29)
    flagged = 0
    for _ in range(250):
        case = one_case(rng)
        if case is None:
            continue
        flagged += 1
        text, why = case
        assert why is None, f"{why}\n{text}"
    assert flagged >= 10  # the sample does exercise refusals
