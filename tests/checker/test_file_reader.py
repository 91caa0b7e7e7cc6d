"""The one bounded reader (issue 28): regular files only, a named size cap, symlink loops
refused; and every file the checker reads beyond the document goes through it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from checker.core.reader import FileReadError, read_file

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")


@needs_fifo
def test_a_fifo_is_refused_unread(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(FileReadError, match="named pipe"):
        read_file(str(fifo), 1024)


def test_the_cap_is_named(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * 2049)
    with pytest.raises(FileReadError, match="2 KiB cap"):
        read_file(str(big), 2048)
    assert len(read_file(str(big), 2048, truncate=True)) == 2049


def test_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(FileReadError, match="symlink loop"):
        read_file(str(tmp_path / "a"), 1024)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileReadError, match="is a directory"):
        read_file(str(tmp_path), 1024)


@needs_fifo
def test_nika_check_does_not_hang_on_a_fifo_child_or_skill(tmp_path: Path) -> None:
    """A child workflow or a skill file that is a FIFO: `nika check` answers (in process, so a
    hang would block the test run itself rather than pass)."""
    from checker.project.files import check_paths

    os.mkfifo(tmp_path / "child.nika.yaml")
    os.mkfifo(tmp_path / "skill.md")
    wf = tmp_path / "p.nika.yaml"
    wf.write_text(
        "nika: v1\nworkflow:\n  id: p\ntasks:\n"
        f'  a:\n    invoke: {{ workflow: "{tmp_path / "child.nika.yaml"}" }}\n'
        f'  b:\n    agent: {{ prompt: hi, skills: ["{tmp_path / "skill.md"}"] }}\n'
    )
    (report,) = check_paths([str(wf)])
    assert report.error is None


def test_an_oversized_pyproject_is_refused_with_the_cap(tmp_path: Path) -> None:
    """A configuration file is read bounded: a pyproject.toml over the cap is an error naming it,
    not a 15-second read of the whole file."""
    from checker.project.finalize import MAX_CONFIG_BYTES, SettingsError
    from checker.project.settings import load

    py = tmp_path / "pyproject.toml"
    py.write_bytes(b"[tool.nika]\n" + b"#" * (MAX_CONFIG_BYTES + 10))
    with pytest.raises(SettingsError, match="MiB cap"):
        load(str(py), True)


def test_a_fifo_found_in_a_checked_folder_is_reported_not_waited_on(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`nika check DIR` (a pre-commit hook) never blocks on a named pipe the walk finds."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    if not hasattr(os, "mkfifo"):
        import pytest

        pytest.skip("no named pipes on this platform")
    os.mkfifo(tmp_path / "pipe.nika.yaml")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, "-m", "nika", "check", str(tmp_path)], capture_output=True, text=True, timeout=30, env=env
    )
    assert proc.returncode == 1
    assert "pipe.nika.yaml: error: not a regular file (a named pipe)" in proc.stdout + proc.stderr
