"""The decision kernel of spec 11: ``evaluate(bundle, snapshot)`` → a Decision Receipt.

A pure function on plain JSON data (no I/O, no clock, no randomness, no floats), shared by
``nika:decide`` at run time, ``nika decide`` on the command line and ``nika check`` (which judges a
literal bundle file's laws). Refusals are :class:`DecideError` carrying NIKA-DECIDE-001 (the bundle
breaks its own laws) or NIKA-DECIDE-002 (the snapshot does not fit the evidence schema).
"""

from __future__ import annotations

from checker.decide.errors import BUNDLE_CODE, SNAPSHOT_CODE, DecideError
from checker.decide.evaluate import evaluate, validate_bundle

__all__ = ["BUNDLE_CODE", "SNAPSHOT_CODE", "DecideError", "evaluate", "validate_bundle"]
