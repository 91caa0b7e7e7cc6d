"""Tool-id globs (02 §Tool whitelist): the one matcher the checker and the runtime share.

A tool id is ``nika:<path>`` or ``mcp:<server>/<tool>``. In a pattern, ``*`` stands for any run of
characters that holds neither ``/`` nor ``:``; ``**`` also crosses ``/`` (never the namespace
colon); ``?`` is one character other than ``/`` and ``:``. A whitelist is read top to bottom, a
``!`` prefix turns a rule into a denial, the last rule that matches decides, and a tool no rule
matches is denied (default-deny).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

GLOB_CHARS = frozenset("*?")


def is_glob(pattern: str) -> bool:
    return any(c in GLOB_CHARS for c in pattern)


@lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regular expression of one (non-negated) tool glob."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append("[^:]*")
            i += 2
            continue
        c = pattern[i]
        if c == "*":
            out.append("[^/:]*")
        elif c == "?":
            out.append("[^/:]")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def matches(pattern: str, tool: str) -> bool:
    """Whether the single glob ``pattern`` (no ``!``) matches ``tool``."""
    return compile_glob(pattern).match(tool) is not None


def allowed(rules: Sequence[str], tool: str) -> bool:
    """Whether a whitelist grants ``tool``: the last matching rule decides; none matching denies."""
    verdict = False
    for rule in rules:
        negated = rule.startswith("!")
        if matches(rule[1:] if negated else rule, tool):
            verdict = not negated
    return verdict


def expand(rules: Sequence[str], known: Iterable[str]) -> list[str]:
    """The ``known`` tool ids a whitelist grants, in the order the granting rules name them
    (an exact id where it is written, a glob's matches sorted)."""
    pool = list(dict.fromkeys(known))
    out: list[str] = []
    for rule in rules:
        if rule.startswith("!"):
            continue
        hits = sorted(t for t in pool if matches(rule, t)) if is_glob(rule) else [rule] if rule in pool else []
        for t in hits:
            if t not in out and allowed(rules, t):
                out.append(t)
    return out
