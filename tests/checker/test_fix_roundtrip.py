"""`--fix` round trips over every fixture with a safe fix: the result parses, the fixed findings
are gone, and a second pass changes nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from checker.engine.pipeline import compile_text
from checker.rules.support.fixes import fixable
from nika.commands.check import fix_text

ROOT = Path(__file__).resolve().parents[2]
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


# A document with three safe fixes, astral characters before and on the lines they touch.
ASTRAL = (
    'nika: v1\nworkflow: { id: t, description: "🎉 𝒳" }\npermits: { exec: [echo] }\ntaks:\n'
    '  alpha: { exec: { command: [echo, "😀"] } }\n'
    '  beta: { exec: { command: [echo, "𝒳"] }, after: { alpah: succeeded } }\n'
)
VARIANTS = {
    "bom": lambda t: "\ufeff" + t,
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "bom+crlf": lambda t: "\ufeff" + t.replace("\n", "\r\n"),
    "astral-first-line": lambda t: "# 🧪 𐍈 👩‍👩‍👧\n" + t,
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_fixes_land_where_they_belong_in_bom_crlf_and_astral_files(variant: str, tmp_path: Path) -> None:
    """Spec 02 (files are UTF-8 text; a byte order mark is refused, NIKA-YAML-011) and the
    project's position rule: a span indexes the text as the editor holds it, BOM and CR
    included, so `--fix` on a file with a BOM, CRLF line ends or astral characters makes the
    same edits as on the plain file (fix commutes with the transformation)."""
    shape = VARIANTS[variant]
    plain, n, _ = fix_text(ASTRAL, str(tmp_path / "w.nika.yaml"), str(tmp_path), unsafe=False)
    assert n == 3 and "tasks:" in plain and "alpha: success" in plain
    fixed, m, refusal = fix_text(shape(ASTRAL), str(tmp_path / "w.nika.yaml"), str(tmp_path), unsafe=False)
    assert refusal is None and m == 3
    assert fixed == shape(plain)


def test_cli_fix_keeps_the_bom_and_crlf_of_the_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "w.nika.yaml"
    shape = VARIANTS["bom+crlf"]
    path.write_bytes(shape(ASTRAL).encode("utf-8"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "nika", "check", "--fix", str(path)]
    subprocess.run(cmd, env=env, capture_output=True, check=False)
    plain, _, _ = fix_text(ASTRAL, str(path), str(tmp_path), unsafe=False)
    assert path.read_bytes() == shape(plain).encode("utf-8")
