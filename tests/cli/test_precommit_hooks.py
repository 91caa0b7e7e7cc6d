"""The pre-commit hook definitions: well formed, and their `entry` checks the files pre-commit
would pass (run here on a temporary repository, with this checkout standing in for `nika`)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
GOOD = 'nika: v1\nworkflow: {id: good}\npermits: {exec: true}\ntasks:\n  a:\n    exec: { command: ["./a.sh"] }\n'
BAD = (
    "nika: v1\nworkflow: {id: bad}\npermits: {exec: true}\ntasks:\n  a:\n    after: { ghost: success }\n"
    '    exec: { command: ["./a.sh"] }\n'
)


def hooks() -> list[dict]:
    return list(YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text()))


def test_hooks_check_self_installing_check_system_and_fix() -> None:
    by_id = {h["id"]: h for h in hooks()}
    assert set(by_id) == {"nika-check", "nika-check-system", "nika-check-fix"}
    assert by_id["nika-check"]["language"] == by_id["nika-check-fix"]["language"] == "python"
    assert by_id["nika-check-system"]["language"] == "system"
    assert "--fix" in shlex.split(by_id["nika-check-fix"]["entry"])
    for h in by_id.values():
        assert h["name"] and h["files"] == r"\.nika\.ya?ml$"
        assert shlex.split(h["entry"])[:2] == ["nika", "check"]
    # the python hook installs this project, which must provide the `nika` console script
    assert 'nika = "nika.cli:main"' in (ROOT / "pyproject.toml").read_text()


def _run(entry: str, repo: Path, files: list[str]) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(entry)
    assert argv[0] == "nika"
    cmd = [
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(0, {str(ROOT)!r}); from nika.cli import main; sys.exit(main())",
    ]
    return subprocess.run([*cmd, *argv[1:], *files], cwd=repo, capture_output=True, text=True)


def test_each_entry_passes_good_files_and_fails_bad_ones(tmp_path: Path) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "flows" / "good.nika.yaml").write_text(GOOD)
    (tmp_path / "flows" / "bad.nika.yml").write_text(BAD)
    (tmp_path / "notes.yaml").write_text("not: a workflow\n")
    every = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    for h in hooks():
        if "--fix" in h["entry"]:
            continue  # it rewrites files: tested under the real pre-commit (test_precommit_real.py)
        staged = [f for f in every if re.search(h["files"], f)]
        assert staged == ["flows/bad.nika.yml", "flows/good.nika.yaml"]  # notes.yaml is not passed
        ok = _run(h["entry"], tmp_path, ["flows/good.nika.yaml"])
        assert ok.returncode == 0, ok.stdout + ok.stderr
        bad = _run(h["entry"], tmp_path, staged)
        assert bad.returncode == 2 and "flows/bad.nika.yml:6:14: error[NIKA-DAG-002]" in bad.stdout
