"""Every command the README and the docs pages show is run, and prints what the page shows.

The convention is in doc_console.py's docstring (and docs/development.md): ```console blocks with
`$ ` prompts, an optional `<!-- console: … -->` line above. A page added under docs/ is picked up
as it is; nothing here names a page.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from doc_console import ROOT, Block, blocks, pages, run_session, sessions

ALL = [b for page in pages() for b in blocks(page)]
SESSIONS = sessions(ALL)


@pytest.mark.parametrize("session", SESSIONS, ids=[s[0].where for s in SESSIONS])
def test_console_block(session: list[Block], tmp_path: Path) -> None:
    if session[0].skip:
        pytest.skip(f"shown, not run: {session[0].skip}")
    skipped = [b.where for b in session if b.skip]
    assert not skipped, f"{skipped}: a `continue` block cannot be skipped alone"
    missing = sorted({p for b in session for p in b.needs if shutil.which(p) is None})
    if missing:
        pytest.skip(f"needs {', '.join(missing)} on PATH")
    mismatch = run_session(session, tmp_path)
    assert mismatch is None, str(mismatch)


def test_commands_are_console_blocks() -> None:
    """A command for the reader is a ```console block (run by the test above), never ```sh."""
    shell = re.compile(r"^\s*```+\s*(sh|bash|shell|zsh)\s*$")
    found = [
        f"{page.relative_to(ROOT)}:{n}"
        for page in pages()
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if shell.match(line)
    ]
    assert found == [], "write commands as ```console blocks with `$ ` prompts (docs/development.md)"


def test_every_console_block_runs_something() -> None:
    assert ALL, "the README and docs/ have console blocks"
    assert all(b.steps for b in ALL), [b.where for b in ALL if not b.steps]
    assert all(b.skip for b in ALL if b.skip is not None)
