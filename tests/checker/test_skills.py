"""Agent Skills: static paths, readable files, valid frontmatter (NIKA-AGENT-003/004)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker.project.files import compile_path
from checker.rules.support import skill_files as skills

GOOD = "---\nname: code-review\ndescription: Review a diff.\nlicense: MIT\n---\n\nLook for bugs.\n"


def codes(tmp: Path, entry: str) -> list[str]:
    (tmp / "w.nika.yaml").write_text(
        "nika: v1\nworkflow: {id: w}\ntasks:\n  a:\n"
        f'    agent: {{model: mock/echo, prompt: "p", skills: [{entry}]}}\n'
    )
    compiled, why = compile_path(str(tmp / "w.nika.yaml"))
    assert compiled is not None, why
    return [d.code or "" for d in compiled.diagnostics if d.is_error]


def test_a_valid_skill_beside_the_workflow(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text(GOOD)
    assert codes(tmp_path, '"SKILL.md"') == []


def test_missing_and_invalid_skill_files(tmp_path: Path) -> None:
    assert codes(tmp_path, '"nope/SKILL.md"') == ["NIKA-AGENT-003"]
    for text in ("no frontmatter\n", "---\nname: x\n", "---\n- a\n---\n", "---\nname: x\ndescription: ''\n---\n"):
        (tmp_path / "BAD.md").write_text(text)
        assert codes(tmp_path, '"BAD.md"') == ["NIKA-AGENT-004"], text


def test_templated_or_globbed_paths_are_refused(tmp_path: Path) -> None:
    assert codes(tmp_path, '"skills/*/SKILL.md"') == ["NIKA-PARSE-019"]
    assert codes(tmp_path, '"${{ const.x }}/SKILL.md"').count("NIKA-PARSE-019") == 1


@pytest.mark.parametrize("extra", ["", "metadata: {a: 1}\n", "x-client: yes\n"])
def test_parse_tolerates_other_frontmatter_keys(extra: str) -> None:
    found = skills.parse("S.md", f"---\nname: n\ndescription: d\n{extra}---\nbody\n")
    assert isinstance(found, skills.Skill) and (found.name, found.description, found.body) == ("n", "d", "body")
