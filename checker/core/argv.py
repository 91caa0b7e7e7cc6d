"""A command line that is nothing but words (no shell syntax), split the way sh would split it.

Used where a repair turns a shell line into an argument list (``command: "echo hi"``,
``command: ["sh", "-c", "echo hi"]``): only a line with no quoting, escaping, expansion,
globbing, redirection or control operator is split, so the argument list runs exactly what the
shell would have run.
"""

from __future__ import annotations

import re

_PLAIN_WORDS = re.compile(r"[A-Za-z0-9_./:=,+@%-]+(?:[ \t]+[A-Za-z0-9_./:=,+@%-]+)*")


def plain_words(line: str) -> list[str] | None:
    """The words of ``line`` when it holds no shell syntax at all, else None."""
    stripped = line.strip()
    return stripped.split() if _PLAIN_WORDS.fullmatch(stripped) else None
