"""The known-answer table in ``known_answers.json``: parse, then evaluate, one row per case."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from checker.expr import EvalError, ExprError, evaluate, parse_expression

_DATA = json.loads((Path(__file__).with_name("known_answers.json")).read_text(encoding="utf-8"))
_ROWS: list[dict[str, Any]] = _DATA["rows"]


def _same(a: Any, b: Any) -> bool:
    """Equality that also distinguishes int, float and bool (recursively)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def test_table_is_well_formed() -> None:
    seen = set()
    for row in _ROWS:
        assert ("result" in row) != ("error_code" in row), row
        assert row["expr"] not in seen, f"duplicate row {row['expr']!r}"
        seen.add(row["expr"])


@pytest.mark.parametrize("row", _ROWS, ids=[repr(r["expr"]) for r in _ROWS])
def test_known_answer(row: dict[str, Any]) -> None:
    scope = row.get("scope", _DATA["default_scope"])
    expected_code = row.get("error_code")
    if expected_code == "NIKA-VAR-005":
        with pytest.raises(ExprError) as info:
            parse_expression(row["expr"])
        err = info.value
        assert err.code == expected_code
        assert 0 <= err.start <= err.end <= len(row["expr"])
        assert err.message
        return
    expr = parse_expression(row["expr"])
    if expected_code is not None:
        with pytest.raises(EvalError) as info:
            evaluate(expr, scope)
        assert info.value.code == expected_code, info.value.message
        assert expr.start <= info.value.start <= info.value.end <= expr.end
        return
    got = evaluate(expr, scope)
    assert _same(got, row["result"]), f"{row['expr']!r}: got {got!r}, expected {row['result']!r}"
