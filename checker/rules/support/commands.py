"""What an ``exec:`` runs, as far as its literal text tells: the simple commands and their words.

Shared by the lint families (native-first, one-obvious-way/004 and /006); not a rule itself.
A word computed with ``${{ … }}`` is ``None``: it makes no claim. A ``shell:`` line is split
into its simple commands (at ``|``, ``&&``, ``||``, ``;``, ``&`` and line breaks) with the POSIX
quoting rules; a line that does not tokenise yields nothing.
"""

from __future__ import annotations

import re

from checker.core.source import Span
from checker.model.workflow import Exec
from checker.parse.values import ScalarValue, TemplateValue, Value

_ISLAND = re.compile(r"\$\{\{.*?\}\}", re.S)
_MARK = "\ue000nika\ue000"  # stands for an island while tokenising; never in real text
_PUNCT = frozenset(";&|()<>\n")
# Leading words that run the rest of the line as the command.
_WRAPPERS = frozenset({"env", "exec", "command", "sudo", "nohup", "time"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class SimpleCommand:
    """One program invocation: ``words[0]`` is the program as written (``None`` when computed).

    A plain slotted class rather than a dataclass: it is built on every check's start-up path.
    """

    __slots__ = ("redirects", "span", "words")

    def __init__(self, words: tuple[str | None, ...], span: Span, redirects: bool = False) -> None:
        self.words = words
        self.span = span
        self.redirects = redirects

    @property
    def head(self) -> str | None:
        """The program's base name (``/usr/bin/curl`` -> ``curl``), or ``None`` when computed."""
        return program_name(self.words[0]) if self.words else None

    @property
    def args(self) -> tuple[str | None, ...]:
        return self.words[1:]


def program_name(word: str | None) -> str | None:
    if not word:
        return None
    name = word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
    if name.lower().endswith(".exe"):
        name = name[:-4]
    return name or None


def literal_text(v: Value | None) -> str | None:
    """The text of a literal string scalar (``None`` for a template or anything else)."""
    if isinstance(v, ScalarValue) and not isinstance(v, TemplateValue) and isinstance(v.value, str):
        return v.value
    return None


def commands_of(verb: Exec) -> list[SimpleCommand]:
    """The simple commands of an ``exec:`` body, in order."""
    if verb.command is not None:
        words = tuple(literal_text(w) for w in verb.command)
        if not words:
            return []
        span = verb.command[0].span
        return [_unwrap(SimpleCommand(words, span))]
    shell = verb.shell
    if isinstance(shell, ScalarValue) and isinstance(shell.value, str):
        return shell_commands(shell.value, shell.span)
    return []


def shell_commands(line: str, span: Span) -> list[SimpleCommand]:
    """Split a shell line into simple commands; ``[]`` when it does not tokenise."""
    import shlex

    text = _ISLAND.sub(_MARK, line)
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"  # keep line breaks: they separate commands
    lexer.whitespace_split = True
    lexer.commenters = "#"
    out: list[SimpleCommand] = []
    words: list[str | None] = []
    redirect = False
    try:
        tokens = list(lexer)
    except ValueError:  # an unbalanced quote: make no claim
        return []
    pending_target = False
    for tok in tokens:
        if set(tok) <= _PUNCT and "<" not in tok and ">" not in tok:
            if words:
                out.append(_unwrap(SimpleCommand(tuple(words), span, redirect)))
            words, redirect, pending_target = [], False, False
            continue
        if set(tok) <= _PUNCT and ("<" in tok or ">" in tok):
            redirect, pending_target = True, True
            continue
        if pending_target:  # the file name after a redirection is not an argument
            pending_target = False
            continue
        words.append(None if _MARK in tok else tok)
    if words:
        out.append(_unwrap(SimpleCommand(tuple(words), span, redirect)))
    return out


def _unwrap(cmd: SimpleCommand) -> SimpleCommand:
    """Drop leading ``VAR=value`` assignments and wrappers such as ``env`` or ``sudo``."""
    words = list(cmd.words)
    while words:
        w = words[0]
        if w is not None and _ASSIGNMENT.match(w):
            words.pop(0)
        elif w is not None and program_name(w) in _WRAPPERS and len(words) > 1:
            words.pop(0)
            while words and words[0] is not None and (words[0].startswith("-") or _ASSIGNMENT.match(words[0])):
                words.pop(0)
        else:
            break
    return SimpleCommand(tuple(words), cmd.span, cmd.redirects)


def command_text(verb: Exec) -> str:
    """The literal text of the whole command (islands removed), for fragment searches."""
    if verb.command is not None:
        return " ".join(t for t in (literal_text(w) for w in verb.command) if t)
    shell = verb.shell
    if isinstance(shell, ScalarValue) and isinstance(shell.value, str):
        return _ISLAND.sub(" ", shell.value)
    return ""
