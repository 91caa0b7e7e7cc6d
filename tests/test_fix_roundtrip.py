"""`--fix` round trips over every fixture with a safe fix: the result parses, the fixed findings
are gone, and a second pass changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from checker.engine import compile_text
from checker.fixes import fixable
from nika.check_command import fix_text

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT.parent / "shared" / "nika-spec"


def _candidates() -> list[Path]:
    roots = [ROOT / "tests" / "checker" / "cases", ROOT / "examples", SUITE / "conformance", SUITE / "templates"]
    out: list[Path] = []
    for r in roots:
        if r.is_dir():
            out.extend(p for p in sorted(r.rglob("*.yaml")) if p.stat().st_size < 200_000)
    return out


def _with_safe_fix() -> list[Path]:
    hits = []
    for p in _candidates():
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        compiled = compile_text(text, str(p), str(p.parent))
        if any(fixable(d, unsafe=False) for d in compiled.diagnostics):
            hits.append(p)
    return hits


CASES = _with_safe_fix()


def test_there_are_fixtures_with_safe_fixes() -> None:
    assert len(CASES) >= (10 if SUITE.is_dir() else 5)


@pytest.mark.parametrize("path", CASES, ids=lambda p: os.path.relpath(p, ROOT.parent))
def test_safe_fix_round_trip(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    base = str(path.parent)
    before = compile_text(text, str(path), base)
    fixed, count, refusal = fix_text(text, str(path), base, unsafe=False)
    assert refusal is None and count >= 1 and fixed != text
    after = compile_text(fixed, str(path), base)
    assert after.root is not None, "a fixed file must parse"
    fixed_before = {(d.code, d.rule, d.message) for d in before.diagnostics if fixable(d, unsafe=False)}
    still = [d for d in after.diagnostics if fixable(d, unsafe=False) and (d.code, d.rule, d.message) in fixed_before]
    assert still == [], [d.message for d in still]
    again, count2, _ = fix_text(fixed, str(path), base, unsafe=False)
    assert again == fixed and count2 == 0
