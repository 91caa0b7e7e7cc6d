"""The argv judge: which untrusted words of an ``exec`` command can re-enter (spec 10 §permit
parameterization, NEP-0004).

A program list (``permits.exec: [git]``) vouches for argv[0]. What the program then does is read
off its other words, and a program with an option that loads code or configuration
(``--exec-path``, ``--upload-pack``, ``-o ProxyCommand``, ``--to-command``…) runs whatever that
option names. No list of such options ends, so the judge is default-deny on the *shape* of an
untrusted word, never on its spelling:

* **option class** — an untrusted word whose resolved text starts with ``-``, in any position
  after argv[0], unless an authored ``--`` precedes it (the program reads it as an operand), the
  permit lists it (``permits.exec: [git, --no-pager]``; listing ``--format`` covers
  ``--format=…``), or the author wrote the option name itself (``"--message=${{ inputs.m }}"``:
  the template's own text ``--message=`` comes first, so the untrusted part is the option's
  value);
* **dispatch class** — an untrusted word in the position a *dispatching* program reads as what
  to run: the subcommand of ``git``, ``docker``, ``kubectl``, ``npm``… (an alias, a plugin, a
  ``git-<name>`` on ``PATH``), the script of an interpreter, the program of a wrapper
  (``env``, ``xargs``, ``timeout``…; a wrapper runs its words, so every untrusted word after it
  counts). The dispatching programs are a table (``[argv]`` in ``effects.toml``); the position
  is the first word that is neither option-like nor the possible value of the option before it,
  so ``git -C <dir> <x>`` counts ``<dir>`` and ``<x>`` alike (fail-closed).

Trusted words (literals, ``const``, ``secrets``, declassified values) are the author's and are
not judged here. A word whose text the check cannot know is *deferred* when it could fall in a
class: the check lists it, the run judges the resolved text (:func:`judge_argv` on the same
words, with their text). The per-program notes in the table only make the message better: they
never decide.

Plain data in, plain data out: no file, no process, no environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from checker.core.records import record

__all__ = ["ArgvFinding", "Word", "dispatch_kind", "judge_argv", "program_name"]


@record
class Word:
    """One argv element as the judge sees it.

    ``text``: the resolved text (``None``: not known yet, at check); ``untrusted``: the value
    derives from an input, the configuration, a task result (spec 10 integrity); ``fixed``: the
    authored text the element's template starts with (``"--message="`` for
    ``"--message=${{ inputs.m }}"``; the whole text for a literal)."""

    text: str | None
    untrusted: bool = False
    fixed: str = ""


@record
class ArgvFinding:
    """An untrusted word in a re-entry class: refused (``deferred`` False, ``text`` known) or
    left to the run (``deferred`` True)."""

    index: int
    text: str | None
    kind: str  # "option" | "subcommand" | "script" | "program"
    reason: str
    deferred: bool = False


@cache
def _table() -> dict[str, Any]:
    from checker.contracts.effects import _table as effects_table

    return dict(effects_table()["argv"])


def program_name(argv0: str) -> str:
    """The program a word names, as the dispatch table is keyed: the last path segment, without
    a version suffix an interpreter carries (``/usr/bin/python3.12`` -> ``python3.12`` is looked
    up as itself, then as ``python3``, then ``python``)."""
    return argv0.rsplit("/", 1)[-1]


def dispatch_kind(argv0: str) -> str | None:
    """``subcommand`` / ``script`` / ``program`` when the program dispatches on a word, else ``None``."""
    name = program_name(argv0)
    t = _table()
    candidates = [name]
    stem = name.rstrip("0123456789.")
    if stem and stem != name:
        candidates.append(stem)
    for cand in candidates:
        for kind in ("program", "script", "subcommand"):
            if cand in t[kind]:
                return kind
    return None


def _positions(program: str) -> dict[str, str]:
    """The options of a dispatching program whose next word the table knows (``dispatch`` or
    ``value``); every other option may or may not take a value (fail-closed)."""
    table: dict[str, dict[str, str]] = _table().get("positions", {})
    name = program_name(program)
    stem = name.rstrip("0123456789.")
    return dict(table.get(name) or table.get(stem) or {})


def _listed(text: str, grant: Sequence[str]) -> bool:
    if text in grant:
        return True
    if text.startswith("--") and "=" in text:
        return text.split("=", 1)[0] in grant
    return False


def _named_option(fixed: str) -> bool:
    """The author wrote the option's name: ``--name=`` leads the element's own text. A single
    dash is never enough (``-v=…`` can be read as bundled short flags)."""
    if not fixed.startswith("--") or "=" not in fixed:
        return False
    name = fixed[2:].split("=", 1)[0]
    return bool(name) and name[0].isalnum()


def _option_like(w: Word) -> bool:
    """Whether ``w`` may be read as an option (unknown text counts: fail-closed)."""
    if w.text is not None:
        return w.text.startswith("-")
    return w.fixed == "" or w.fixed.startswith("-")


def _note(program: str, text: str | None) -> str:
    notes: dict[str, str] = _table().get("notes", {}).get(program_name(program), {})
    if text is None:
        return ""
    name = text.split("=", 1)[0]
    why = notes.get(text) or notes.get(name)
    return f" ({program_name(program)} {name}: {why})" if why else ""


def judge_argv(words: Sequence[Word], grant: Sequence[str] = ()) -> list[ArgvFinding]:
    """Every untrusted word of ``words`` (argv[0] first) in a re-entry class, in argv order.

    ``grant`` is the program list of ``permits.exec``; a word it names exactly is covered. An
    empty result means nothing untrusted can re-enter."""
    if not words:
        return []
    program = words[0].text or ""
    kind = dispatch_kind(program) if words[0].text is not None else None
    out: list[ArgvFinding] = []
    ended = False  # an authored `--` was seen: later words are operands
    position_open = kind is not None  # the dispatch position is still ahead
    prev_option = False  # the word before may be an option that takes this one as its value
    roles = _positions(program) if kind is not None else {}
    expect: str | None = None  # what the previous (authored) option says this word is
    for i in range(1, len(words)):
        w = words[i]
        at_position = position_open
        if w.untrusted and not (w.text is not None and _listed(w.text, grant)):
            option = not ended and not _named_option(w.fixed) and _option_like(w)
            if option:
                out.append(_finding(i, w, "option", program))
            elif at_position and kind is not None:
                out.append(_finding(i, w, kind, program))
        if not w.untrusted and w.text == "--":
            ended = True
        # the dispatch position closes at the first word that is neither option-like nor the
        # value of the option before it; a wrapper runs its words, so for it nothing closes. An
        # option the table knows says what its next word is: the dispatch word itself (`sh -c
        # SCRIPT`, `python -m MODULE`: the position closes after it) or a plain value
        if position_open and kind != "program":
            if expect is not None:
                position_open = expect != "dispatch"
                expect, prev_option = None, False
                continue
            if not w.untrusted and w.text in roles:
                expect, prev_option = roles[w.text], False
                continue
            like = _option_like(w)  # an authored `--` keeps it open too (fail-closed)
            if not like and not prev_option:
                position_open = False
            prev_option = like and w.text != "--" and (w.text is None or "=" not in w.text)
    return out


def _finding(i: int, w: Word, kind: str, program: str) -> ArgvFinding:
    shown = f"`{w.text}`" if w.text is not None else "a value known only at run time"
    base = program_name(program)
    if kind == "option":
        reason = (
            f"the untrusted argv element {shown} (command[{i}]) can be read as an option of `{base}`, and "
            f"options can make a program load code or configuration{_note(program, w.text)}"
        )
    elif kind == "subcommand":
        reason = (
            f"the untrusted argv element {shown} (command[{i}]) is where `{base}` reads its subcommand, which "
            "can name an alias, a plugin or another program"
        )
    elif kind == "script":
        reason = f"the untrusted argv element {shown} (command[{i}]) is where `{base}` reads the script it runs"
    else:
        reason = f"the untrusted argv element {shown} (command[{i}]) may be the program `{base}` runs"
    return ArgvFinding(i, w.text, kind, reason, w.text is None)
