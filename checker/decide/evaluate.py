"""``Evaluate(bundle, snapshot)`` → the Decision Receipt (spec 11 §Decision IR, §Outcomes, §Receipt):
the bundle's laws (:mod:`checker.decide.laws`, :mod:`checker.decide.fixtures`), then the kernel
(:mod:`checker.decide.receipt`).
"""

from __future__ import annotations

from typing import Any

from checker.decide.fixtures import validate_fixtures
from checker.decide.laws import validate_shape
from checker.decide.receipt import check_snapshot, decide


def validate_bundle(bundle: Any) -> None:
    """Raise NIKA-DECIDE-001 naming the first law ``bundle`` breaks; return None when it holds."""
    validate_shape(bundle)
    validate_fixtures(bundle)


def evaluate(bundle: Any, snapshot: Any) -> dict[str, Any]:
    """The receipt for ``snapshot`` under ``bundle``; raises :class:`DecideError` on a refusal."""
    validate_bundle(bundle)
    items = check_snapshot(bundle, snapshot)
    return decide(bundle, snapshot, items)
