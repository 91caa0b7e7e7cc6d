"""Golden cases: every ``*.nika.yaml`` under ``cases/`` is checked and compared with its markers.

A marker is a comment ``# want: NIKA-XXX-NNN`` (optionally ``@COL``, the 1-based column of the
finding's start) on the line where the finding must start; several codes may be listed,
separated by spaces. Files under ``cases/ok/`` must produce no finding at all. Every finding
the checker emits must be wanted, and every wanted finding must be emitted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from checker import compile_text

CASES = Path(__file__).parent / "cases"
WANT = re.compile(r"#\s*want:\s*(.+?)\s*$")
ITEM = re.compile(r"(NIKA-[A-Z0-9_-]+?-\d{3})(?:@(\d+))?")


def _files() -> list[Path]:
    return sorted(CASES.rglob("*.nika.yaml"))


def _wanted(text: str) -> set[tuple[int, str, int | None]]:
    out = set()
    for i, line in enumerate(text.splitlines(), start=1):
        m = WANT.search(line)
        if m:
            for code, col in ITEM.findall(m.group(1)):
                out.add((i, code, int(col) if col else None))
    return out


@pytest.mark.parametrize("path", _files(), ids=lambda p: str(p.relative_to(CASES)))
def test_case(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    compiled = compile_text(text, str(path))
    src = compiled.source
    got = {
        (src.line_col(d.span.start).line, d.code or d.rule or "", src.line_col(d.span.start).column)
        for d in compiled.diagnostics
    }
    wanted = _wanted(text)
    if path.parent.name == "ok":
        assert not got, f"expected a clean file, got {sorted(got)}"
        return
    assert wanted, "a refusing case must carry at least one `# want:` marker"
    missing = {
        w for w in wanted if not any(g[0] == w[0] and g[1] == w[1] and (w[2] is None or g[2] == w[2]) for g in got)
    }
    unexpected = {g for g in got if not any(g[0] == w[0] and g[1] == w[1] for w in wanted)}
    assert not missing and not unexpected, f"missing {sorted(missing)}; unexpected {sorted(unexpected, key=str)}"


def test_every_case_directory_has_cases() -> None:
    assert len(_files()) >= 10
