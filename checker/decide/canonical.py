"""Canonical JSON (RFC 8785 / JCS) for the decision kernel's data, and its blake3 digest.

The kernel admits only objects, arrays, strings, integers, booleans and null (no floats: spec 11
§Decision IR): the one JCS writer (:mod:`checker.core.jcs`) with ``integers_only``.
"""

from __future__ import annotations

from typing import Any


class NotCanonical(ValueError):
    """The value holds something the integer-only subset has no spelling for (a float, a set…)."""


def canonical_json(value: Any) -> str:
    """The JCS text of ``value``; raises :class:`NotCanonical` on a float or a non-JSON value."""
    from checker.core import jcs

    try:
        return jcs.dumps(value, integers_only=True)
    except jcs.FloatRefused as exc:
        raise NotCanonical(f"{exc}; the kernel takes integers (basis points)") from None
    except jcs.NotJson as exc:
        raise NotCanonical(str(exc)) from None


def canonical_bytes(value: Any) -> bytes:
    return canonical_json(value).encode("utf-8")


def blake3_hex(value: Any) -> str:
    """The blake3 digest (hex) of ``value``'s canonical JSON."""
    import blake3

    return blake3.blake3(canonical_bytes(value)).hexdigest()
