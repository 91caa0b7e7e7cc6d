"""The one glob matcher: tool-id globs (02 §tool whitelist) and path globs (01 §permits fs).

Tool ids (``nika:read``, ``mcp:browser/tab/open``):

* ``*`` matches any run of characters except ``/`` and ``:``;
* ``**`` matches any run of characters except ``:`` (it crosses ``/``; nothing but a literal
  colon ever crosses the namespace colon);
* a leading ``!`` negates an entry; entries are read in order and the last one that matches
  decides (a list whose entries are all negations therefore grants nothing).

Paths (``fs.read``/``fs.write``, gitignore style) use the same engine with ``/`` as the only
separator: ``*`` stays inside one segment, ``**`` crosses segments, ``**/`` may match nothing
and ``dir/**`` also covers the folder ``dir`` itself.
Both sides are canonicalised lexically first (see :func:`canonical_path`); a path that climbs
out of the base (``../x``) is matched only by a pattern that climbs the same way literally.

File-name globs (``nika:glob`` patterns and ``exclude:``) ask for the shell classes too
(``classes=True``): ``?`` is one character inside a segment, ``[…]`` a character class (``[!…]``
or ``[^…]`` negated, ``a-z`` ranges) that never matches a separator. Without ``classes`` those
characters are literal, as in permit and tool globs. A pattern the class syntax cannot read
(a ``[`` never closed, a lone trailing ``\\``) raises :class:`GlobSyntaxError`.

Patterns are data: they are interpreted token by token, never compiled into a regular
expression, so no text from a workflow reaches ``re``. ``\\`` escapes the next character.
The matcher is a dynamic programme in O(len(pattern) x len(text)).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from checker.core.records import record

__all__ = [
    "GlobSyntaxError",
    "ToolRule",
    "canonical_path",
    "glob_base",
    "glob_match",
    "match_path",
    "match_tool",
    "parse_tool_rules",
    "tool_verdict",
]

_STAR = 1  # one run inside a segment
_DSTAR = 2  # a run crossing segments
_DSTAR_SLASH = 3  # "**/": nothing, or a run ending in a separator
_ONE = 4  # "?": one character inside a segment (classes only)

# A character class: (negated, ((lo, hi), ...)), matching one character inside a segment.
_Class = tuple[bool, tuple[tuple[str, str], ...]]
_Token = str | int | _Class


class GlobSyntaxError(ValueError):
    """A file-name glob the class syntax cannot read; the message says where."""


def _class_at(pattern: str, i: int) -> tuple[_Class, int]:
    """The class opening at ``pattern[i] == "["`` and the index after its ``]``."""
    j, n = i + 1, len(pattern)
    negated = j < n and pattern[j] in "!^"
    if negated:
        j += 1
    ranges: list[tuple[str, str]] = []
    first = True
    while j < n and (pattern[j] != "]" or first):
        first = False
        lo = pattern[j]
        if lo == "\\" and j + 1 < n:
            j += 1
            lo = pattern[j]
        if j + 2 < n and pattern[j + 1] == "-" and pattern[j + 2] != "]":
            ranges.append((lo, pattern[j + 2]))
            j += 3
        else:
            ranges.append((lo, lo))
            j += 1
    if j >= n:
        raise GlobSyntaxError(f"the glob {pattern!r} opens a `[` character class it never closes")
    return (negated, tuple(ranges)), j + 1


@lru_cache(maxsize=1024)
def _tokens(pattern: str, classes: bool = False) -> tuple[_Token, ...]:
    out: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(pattern[i + 1])
            i += 2
        elif c == "\\" and classes:
            raise GlobSyntaxError(f"the glob {pattern!r} ends with a lone `\\`")
        elif c == "?" and classes:
            out.append(_ONE)
            i += 1
        elif c == "[" and classes:
            cls, i = _class_at(pattern, i)
            out.append(cls)
        elif c == "*":
            if i + 1 < n and pattern[i + 1] == "*":
                j = i + 2
                while j < n and pattern[j] == "*":  # `***` reads as `**`
                    j += 1
                if j < n and pattern[j] == "/":
                    out.append(_DSTAR_SLASH)
                    i = j + 1
                else:
                    out.append(_DSTAR)
                    i = j
            else:
                out.append(_STAR)
                i += 1
        else:
            out.append(c)
            i += 1
    return tuple(out)


def _in_class(cls: _Class, c: str) -> bool:
    negated, ranges = cls
    return any(lo <= c <= hi for lo, hi in ranges) != negated


@lru_cache(maxsize=4096)  # a pure function; a batch asks the same tool and path patterns again and again
def glob_match(pattern: str, text: str, *, seps: str = "/", hard: str = "", classes: bool = False) -> bool:
    """Whether ``text`` matches ``pattern``.

    ``seps``: characters ``*`` (and ``?``, a class) never matches; ``hard``: characters no
    wildcard ever matches (``**`` included); ``classes``: read ``?`` and ``[…]`` as wildcards.
    """
    toks = _tokens(pattern, classes)
    n = len(text)
    # cur[j]: the tokens read so far match text[:j]
    cur = [False] * (n + 1)
    cur[0] = True
    for tok in toks:
        nxt = [False] * (n + 1)
        if isinstance(tok, str):
            for j in range(n):
                if cur[j] and text[j] == tok:
                    nxt[j + 1] = True
        elif tok == _ONE or isinstance(tok, tuple):
            stop = seps + hard
            for j in range(n):
                c = text[j]
                if cur[j] and c not in stop and (tok == _ONE or _in_class(tok, c)):  # type: ignore[arg-type]
                    nxt[j + 1] = True
        elif tok in (_STAR, _DSTAR):
            stop = seps + hard if tok == _STAR else hard
            for j in range(n + 1):
                if cur[j] or (j > 0 and nxt[j - 1] and text[j - 1] not in stop):
                    nxt[j] = True
        else:  # "**/": empty, or any run (no hard characters) that ends right after a separator
            run = False  # some start i<=j with cur[i] and text[i:j] free of hard characters
            for j in range(n + 1):
                if cur[j]:
                    nxt[j] = True
                if j > 0 and run and text[j - 1] in seps:
                    nxt[j] = True
                if j < n:
                    run = (run or cur[j]) and text[j] not in hard
        cur = nxt
        if not any(cur):
            return False
    return cur[n]


# -- tools --------------------------------------------------------------------------------------


@record
class ToolRule:
    """One entry of a tool list: its pattern, whether it negates, and its index in the list."""

    pattern: str
    negated: bool
    index: int


def parse_tool_rules(entries: Iterable[str]) -> tuple[ToolRule, ...]:
    out = []
    for i, e in enumerate(entries):
        neg = e.startswith("!")
        out.append(ToolRule(e[1:] if neg else e, neg, i))
    return tuple(out)


def match_tool(pattern: str, tool_id: str) -> bool:
    """Whether one (non-negated) tool glob matches ``tool_id``."""
    return glob_match(pattern, tool_id, seps="/", hard=":")


def tool_verdict(rules: Sequence[ToolRule], tool_id: str) -> ToolRule | None:
    """The rule that decides ``tool_id`` (the last matching one), or ``None`` when none matches.

    The tool is granted iff the result is a non-negated rule.
    """
    for rule in reversed(rules):
        if match_tool(rule.pattern, tool_id):
            return rule
    return None


def tool_allowed(entries: Sequence[str], tool_id: str) -> bool:
    """Whether a tool list (``permits.tools``, an agent's ``tools:``) grants ``tool_id``."""
    rule = tool_verdict(parse_tool_rules(entries), tool_id)
    return rule is not None and not rule.negated


def expand_tools(entries: Sequence[str], known: Iterable[str]) -> list[str]:
    """The ``known`` tool ids a list grants, in the order the granting entries name them (an
    exact id where it is written, a glob's matches sorted)."""
    pool = list(dict.fromkeys(known))
    out: list[str] = []
    for entry in entries:
        if entry.startswith("!"):
            continue
        if any(c in entry for c in "*?["):
            hits = sorted(t for t in pool if match_tool(entry, t))
        else:
            hits = [entry] if entry in pool else []
        for t in hits:
            if t not in out and tool_allowed(entries, t):
                out.append(t)
    return out


# -- paths --------------------------------------------------------------------------------------


def canonical_path(path: str) -> str:
    """Lexical canonical form: separators collapsed, ``.`` dropped, ``..`` folded where a segment
    precedes it. A relative path keeps its leading ``..`` segments; an absolute one cannot climb
    above ``/``. ``""`` and ``.`` become ``.``. No file system access."""
    absolute = path.startswith("/")
    parts: list[str] = []
    for seg in path.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts and parts[-1] != "..":
                parts.pop()
            elif not absolute:
                parts.append("..")
            continue
        parts.append(seg)
    body = "/".join(parts)
    if absolute:
        return "/" + body
    return body or "."


def glob_base(pattern: str) -> tuple[str, str]:
    """A file-name glob split at its first wildcard segment: ``(base, rest)``.

    ``base`` is the literal folder the walk starts from (``""`` for the working directory, ``"/"``
    for the root) and ``rest`` the wildcard part (``""`` when the pattern has no wildcard: then
    ``base`` is the pattern itself). ``nika:glob`` walks from the base; the permit judge judges
    the base as the path read, statically on a literal pattern and at run on the resolved one.
    """
    parts = pattern.split("/")
    fixed = 0
    while fixed < len(parts) - 1 and not _has_magic(parts[fixed]):
        fixed += 1
    if not _has_magic(parts[fixed]):
        return pattern, ""
    base = "/".join(parts[:fixed]) if fixed else ""
    if base == "" and pattern.startswith("/"):
        base = "/"
    return base, "/".join(parts[fixed:])


def _has_magic(segment: str) -> bool:
    return any(c in segment for c in "*?[\\")


def _climb(path: str) -> int:
    n = 0
    for seg in path.split("/"):
        if seg != "..":
            break
        n += 1
    return n


def match_path(pattern: str, path: str) -> bool:
    """Whether the canonical ``path`` lies inside the canonical path glob ``pattern``.

    Absolute and relative never match each other, and the two must climb out of the base by
    the same number of ``..`` segments (a wildcard never stands for ``..``). A pattern without a
    wildcard also covers everything beneath it (gitignore-style: a pattern naming a directory
    covers its contents).
    """
    p, t = canonical_path(pattern), canonical_path(path)
    if p.startswith("/") != t.startswith("/"):
        return False
    if _climb(p) != _climb(t):
        return False
    if p == "**":
        return True  # the whole tree, the working directory itself included (as `dir/**` covers `dir`)
    if p.endswith("/**") and t == p[:-3]:
        return True  # `dir/**` covers `dir` itself (a grep or glob over the folder, 01 §permits fs)
    if not _has_magic(p) and (t.startswith(p + "/") or (p == "." and not t.startswith(("/", "..")))):
        # a wildcard-free entry names a directory and everything beneath it: 01 §permits reads fs
        # globs "gitignore-style", where a pattern matching a directory matches its contents
        # (`write: ["./assets/og"]` covers the files `nika:image_generate` lands in it)
        return True
    return glob_match(p, t, seps="/")
