"""The one journal reader (spec 17): every consumer of a journal's bytes reads them here.

:func:`scan` splits a journal into its frames, walks the chain (each line's ``chain`` is the sha256
of the previous line's exact bytes, the first one's a genesis digest) and names what the bytes are,
one *damage class* each, which ``nika trace verify``, ``show``, ``ls`` and ``--resume`` all report:

* ``whole``: every line a chained frame, and a terminal workflow frame among them;
* ``truncated``: every line a chained frame, but no terminal frame (the run was killed, or its
  journal could not be written past a frame boundary): the frames there are authentic and resume;
* ``torn``: truncated, and the last line was cut mid-write (no newline, not a frame: a kill or a
  full disk during a write); the frames before it are authentic and resume;
* ``empty``: not one frame was written whole (a kill or a full disk before the first): there is
  nothing to verify or resume;
* ``forged``: a line in the middle is not a frame, or a link of the chain is broken, or the first
  frame is not a prologue: the bytes were edited, and nothing in them is trusted.

A journal whose run said it could not be written (``runtime.journal.incomplete``) is read the same
way; its mark adds the ``incomplete`` class to what is said (see :func:`damage_of`).

The reader never recurses without bound: a frame nested too deeply for the JSON parser is kept as
a stub of its ``chain`` and ``kind`` (read from the bytes), its chain still checked.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from checker.core.records import field, record

GENESIS_TAG = b"nika-trace/genesis/v2"
# Genesis digests this reader recognises: ours, and the one the reference engine's journals open with.
KNOWN_GENESIS = frozenset(
    {
        hashlib.sha256(GENESIS_TAG).hexdigest(),
        "7466341540fd02fca9ec21937862176b7821a52495b86d81bb5f30d16c8462dc",
    }
)
WORKFLOW_TERMINAL = frozenset({"workflow_completed", "workflow_failed", "workflow_cancelled", "workflow_paused"})
DAMAGE = ("whole", "truncated", "torn", "empty", "forged")
_CHAIN_FIELD = re.compile(rb'^\{"chain":"([0-9a-f]{64})"')
_KIND_FIELD = re.compile(rb'"kind":"([a-z_]+)","run":')
_HEAD = b'{"chain":"'


@record(frozen=False, slots=False)
class Scan:
    """What a journal's bytes are: its damage class, its frames (every line that parses, in order;
    a forged journal's too, for display) and the chain facts."""

    damage: str
    frames: list[dict[str, Any]] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)  # each frame's line number
    problems: list[dict[str, Any]] = field(default_factory=list)
    unparsed: list[int] = field(default_factory=list)  # lines that are not frames (a torn last one included)
    deep: list[int] = field(default_factory=list)  # frames too deeply nested to read: stubs of chain and kind
    torn: int | None = None  # the line number of a last line cut mid-write
    head: str | None = None  # the sha256 of the last whole line: the journal's head
    _hashes: list[str] = field(default_factory=list, repr=False)

    @property
    def trusted(self) -> bool:
        """Whether the frames may be acted on (resumed from): every frame chained, none edited."""
        return self.damage not in ("forged", "empty")

    @property
    def terminal(self) -> str | None:
        """The kind of the last terminal workflow frame, if any."""
        for f in reversed(self.frames):
            if f.get("kind") in WORKFLOW_TERMINAL:
                return str(f["kind"])
        return None

    def head_at(self, count: int) -> str | None:
        """The chain head after the first ``count`` whole frames (``None`` past the end)."""
        if count < 1 or count > len(self._hashes):
            return None
        return self._hashes[count - 1]


def parse_line(line: bytes) -> tuple[dict[str, Any] | None, bool]:
    """``(frame, deep)``: the frame a line holds (``None`` when it holds none); a frame nested too
    deeply for the JSON parser is a stub of its ``chain`` and ``kind``, with ``deep`` set."""
    try:
        frame = json.loads(line)
    except RecursionError:
        return _too_deep(line), True
    except (ValueError, UnicodeDecodeError):
        return None, False
    return (frame, False) if isinstance(frame, dict) else (None, False)


def _too_deep(line: bytes) -> dict[str, Any]:
    """What a frame too deeply nested for the JSON reader still tells: its ``chain`` (the first key
    of the sorted encoding) and its ``kind`` (found after the last nested value), from bytes."""
    chain = _CHAIN_FIELD.match(line)
    kinds = _KIND_FIELD.findall(line)
    return {"chain": chain.group(1).decode() if chain else None, "kind": kinds[-1].decode() if kinds else None}


def scan(data: bytes) -> Scan:
    """Read a journal's bytes (see the module docstring for the damage classes)."""
    raw = data.split(b"\n")
    tail = raw.pop()  # what follows the last newline: nothing, unless the last write was cut
    s = Scan("whole")
    forged: list[dict[str, Any]] = []
    prev: bytes | None = None
    for n, line in enumerate(raw, 1):
        frame, deep = parse_line(line)
        if frame is None:
            forged.append({"line": n, "problem": f"the line is not a JSON frame ({_why_not_json(line)})"})
            s.unparsed.append(n)
            prev = line
            continue
        why = _link(prev, frame, s, n)
        if why is not None:
            forged.append({"line": n, "problem": why})
        _keep(s, n, line, frame, deep)
        prev = line
    if tail:
        n = len(raw) + 1
        frame, deep = parse_line(tail)
        if frame is not None:  # a whole frame whose newline was not written: a frame like any other
            why = _link(prev, frame, s, n)
            if why is not None:
                forged.append({"line": n, "problem": why})
            _keep(s, n, tail, frame, deep)
        elif _cut_from(prev, tail):
            s.torn = n
            s.unparsed.append(n)
        else:
            forged.append({"line": n, "problem": "the last line is neither a frame nor the start of one"})
            s.unparsed.append(n)
    s.head = s._hashes[-1] if s._hashes else None
    if forged:
        s.damage = "forged"
        s.problems = forged + s.problems
    elif not s.frames:
        s.damage = "empty"
        s.problems.append(
            {
                "line": 0,
                "problem": "the journal is empty: no frame was written whole (the run was killed, or could "
                "not write, before its first frame)",
            }
        )
    elif s.torn is not None:
        s.damage = "torn"
        s.problems.append(
            {
                "line": s.torn,
                "problem": "the last line was cut mid-write (the run was killed, or its disk was full); "
                "the frames before it verify",
            }
        )
    elif s.terminal is None:
        s.damage = "truncated"
    return s


def _why_not_json(line: bytes) -> str:
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        return str(exc)
    except RecursionError:  # pragma: no cover - a deep line parses as a stub, never reaches here
        return "nested too deeply"
    return f"not an object, {type(value).__name__}"


def _keep(s: Scan, n: int, line: bytes, frame: dict[str, Any], deep: bool) -> None:
    s.frames.append(frame)
    s.numbers.append(n)
    s._hashes.append(hashlib.sha256(line).hexdigest())
    if deep:
        s.deep.append(n)
        s.problems.append({"line": n, "problem": "the frame nests too deeply to be read; its chain was checked"})


def _link(prev: bytes | None, frame: dict[str, Any], s: Scan, n: int) -> str | None:
    """Why ``frame`` does not link to the line before it (``None``: it does)."""
    chain = frame.get("chain")
    if prev is None:
        if isinstance(chain, str) and chain in KNOWN_GENESIS:
            return None
        if frame.get("kind") != "workflow_started":
            return "the journal does not open with its prologue"
        s.problems.append({"line": n, "problem": "the genesis digest is not one this verifier knows"})
        return None
    if chain != hashlib.sha256(prev).hexdigest():
        return "`chain` does not match the previous line's bytes"
    return None


def _cut_from(prev: bytes | None, tail: bytes) -> bool:
    """Whether ``tail`` can be the start of the frame that follows ``prev``: what a write cut short
    leaves (``{"chain":"<the previous line's hash>…``)."""
    if prev is None:
        expected = [_HEAD + g.encode() for g in KNOWN_GENESIS]
    else:
        expected = [_HEAD + hashlib.sha256(prev).hexdigest().encode()]
    return any(e.startswith(tail[: len(e)]) for e in expected)


def frame_fields(frame: dict[str, Any]) -> dict[str, Any]:
    """A frame's ``fields`` list as a mapping (the first value of a repeated key wins)."""
    out: dict[str, Any] = {}
    fields = frame.get("fields")
    for f in fields if isinstance(fields, list) else []:
        if isinstance(f, dict) and isinstance(f.get("key"), str):
            out.setdefault(f["key"], f.get("value"))
    return out
