"""File builtins that search: ``nika:glob`` (the one glob matcher, :mod:`checker.core.globs`) and
``nika:grep`` (RE2-compatible patterns under a per-line time budget). The walk's base folder and
every file grep opens are resolved through ``ctx.resolve_read`` right before the read, so a
symlink inside a granted tree that points outside it is refused, not followed; the walks and the
per-file search run in a thread (``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from checker.core.globs import GlobSyntaxError, glob_base, glob_match
from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._support import arg, need, read_regular
from runtime.builtins.files import _why
from runtime.errors import TaskError

GLOB, GREP = "nika:glob", "nika:grep"
GLOB_001 = "NIKA-BUILTIN-GLOB-001"


@builtin(GLOB)
async def glob(args: dict[str, Any], ctx: BuiltinContext) -> list[str]:
    """Paths (files and directories) matching the pattern, minus ``exclude:``, sorted by code point.

    ``*`` and ``?`` stay inside one path segment, ``**`` spans any number of them, ``[…]`` is a
    character class (``[!…]`` negated), ``\\`` escapes. Names starting with a dot are matched
    like any other. Symlinked directories are listed but not descended into.
    """
    pattern = need(args, GLOB, "pattern", str)
    excludes = [_matcher(_plain(x)) for x in args.get("exclude") or []]
    if not pattern:
        raise TaskError(GLOB_001, "the glob pattern is empty")
    prefix, rest = glob_base(pattern)
    if not rest:  # no wildcard at all: the path itself, when it exists
        hits = [pattern] if os.path.lexists(ctx.resolve_read(pattern)) else []
    else:
        matches = _matcher(rest)
        base = ctx.resolve_read(prefix or ".")
        depth = None if "**" in rest.split("/") else len(rest.split("/"))
        hits = [_join(prefix, rel) for rel in await asyncio.to_thread(_walk, base, depth) if matches(rel)]
    return sorted(h for h in hits if not any(x(_plain(h)) for x in excludes))


def _walk(base: Path, depth: int | None) -> list[str]:
    """Every entry below ``base`` as a relative POSIX path, at most ``depth`` segments deep."""
    if not base.is_dir():
        return []
    out = []
    for dirpath, dirnames, filenames in os.walk(base):
        rel_dir = os.path.relpath(dirpath, base)
        level = 0 if rel_dir == "." else rel_dir.count(os.sep) + 1
        for name in dirnames + filenames:
            out.append(name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/"))
        if depth is not None and level + 1 >= depth:
            dirnames.clear()
    return out


def _join(prefix: str, rel: str) -> str:
    if not prefix:
        return rel
    return prefix + rel if prefix.endswith("/") else f"{prefix}/{rel}"


def _plain(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    return path


def _matcher(pattern: str) -> Callable[[str], bool]:
    """``pattern`` read by the one glob matcher (``checker.core.globs``, file-name classes on)."""
    try:
        glob_match(pattern, "", classes=True)  # read once: a syntax error is the caller's, now
    except GlobSyntaxError as e:
        raise TaskError(GLOB_001, str(e)) from None
    return lambda path: glob_match(pattern, path, classes=True)


# ── nika:grep ─────────────────────────────────────────────────────────────────────────────────

GREP_001 = "NIKA-BUILTIN-GREP-001"
GREP_LINE_BUDGET_S = 1.0  # a pattern slower than this on one line stops the search (never a hang)


@builtin(GREP)
async def grep(args: dict[str, Any], ctx: BuiltinContext) -> list[dict[str, Any]]:
    """``{path, line, match}`` for every matching line, sorted by path then line number.

    Files that are not UTF-8 text are passed over, as grep passes over binary files. A path that
    does not exist fails like a read of it (NIKA-BUILTIN-READ-001).
    """
    pattern = need(args, GREP, "pattern", str)
    path = need(args, GREP, "path", str)
    rx = _re2_compile(pattern, re.IGNORECASE if arg(args, GREP, "case_insensitive") else 0)
    root = ctx.resolve_read(path)
    if not root.exists():
        raise TaskError("NIKA-BUILTIN-READ-001", f"there is nothing at {path} to search", details={"path": path})
    shown = [path] if not root.is_dir() else [_join(path, rel) for rel in await asyncio.to_thread(_files_below, root)]
    out: list[dict[str, Any]] = []
    for name in shown:
        target = ctx.resolve_read(name)
        out += await asyncio.to_thread(_grep_file, rx, pattern, target, name)  # off the event loop
    out.sort(key=lambda m: (m["path"], m["line"]))
    return out


def _grep_file(rx: Any, pattern: str, target: Path, name: str) -> list[dict[str, Any]]:
    """The matching lines of one file (none when it is not UTF-8 text)."""
    try:
        text = read_regular(target).decode("utf-8")
    except UnicodeDecodeError:
        return []
    except OSError as e:
        raise TaskError("NIKA-BUILTIN-READ-002", f"cannot read {name}: {_why(e)}", details={"path": name}) from None
    out: list[dict[str, Any]] = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        try:
            found = rx.search(line, timeout=GREP_LINE_BUDGET_S)
        except TimeoutError:
            raise TaskError(
                GREP_001,
                f"the pattern {pattern!r} took over {GREP_LINE_BUDGET_S:g} s on line {number} of {name} "
                "(nested quantifiers such as `(a+)+` backtrack without end); simplify it",
                details={"path": name, "line": number},
            ) from None
        if found:
            out.append({"path": name, "line": number, "match": line})
    return out


def _files_below(root: Path) -> list[str]:
    out = []
    for dirpath, _dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        for name in filenames:
            out.append(name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/"))
    return out


def _re2_compile(pattern: str, flags: int) -> Any:
    """Compile a regex of the portable RE2 subset; backreferences and lookaround are refused."""
    import re._parser as sre_parse  # the stdlib's own parser: judged on structure, not on text

    from checker.model.typesys import python_regex

    spelled = python_regex(pattern)  # the same meaning, without Python's FutureWarnings
    try:
        tree = sre_parse.parse(spelled, flags)
    except re.error as e:
        raise TaskError(GREP_001, f"the pattern {pattern!r} is not a valid regex: {e.msg}") from None
    bad = _non_re2(tree)
    if bad:
        raise TaskError(GREP_001, f"the pattern {pattern!r} uses {bad}, which the RE2 dialect of `{GREP}` excludes")
    import regex  # `re` with a time limit per search (the `regex` package reads `re` patterns alike)

    return regex.compile(spelled, flags)


_NOT_RE2 = {
    "GROUPREF": "a backreference",
    "GROUPREF_EXISTS": "a conditional group",
    "ASSERT": "a lookaround",
    "ASSERT_NOT": "a lookaround",
    "ATOMIC_GROUP": "an atomic group",
    "POSSESSIVE_REPEAT": "a possessive quantifier",
}


def _non_re2(tree: Any) -> str | None:
    for op, av in tree:
        name = str(op)
        if name in _NOT_RE2:
            return _NOT_RE2[name]
        for sub in _children(av):
            found = _non_re2(sub)
            if found:
                return found
    return None


def _children(av: Any) -> list[Any]:
    import re._parser as sre_parse

    out = []
    items = av if isinstance(av, (tuple, list)) else (av,)
    for item in items:
        if isinstance(item, sre_parse.SubPattern):
            out.append(item)
        elif isinstance(item, (tuple, list)):
            out.extend(_children(item))
    return out
