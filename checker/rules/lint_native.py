"""The ``native-first/*`` lint family (03 §native-first): an ``exec:`` that a builtin covers.

Judged on literal text only: a computed program name claims nothing. Each task gets at most one
finding, the most specific class first: helper script ≻ media endpoint ≻ HTTP ≻ files ≻ data.
Genuine subprocesses (``cargo``, ``git``, ``make``, ``nika run`` …) match no class and stay silent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from checker.core.codes import lint
from checker.core.diagnostics import Diagnostic
from checker.model.workflow import Exec
from checker.rules.support.commands import SimpleCommand, command_text, commands_of, program_name, shell_commands
from checker.rules.support.context import RuleContext

HTTP_CLIENTS = frozenset({"curl", "wget", "xh", "http", "https"})
FILE_COMMANDS = frozenset({"cat", "tee", "cp", "mv", "mkdir", "touch", "head", "tail", "ls"})
DATA_COMMANDS = frozenset({"jq", "sed", "awk"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish"})
# interpreter -> the options that take inline code instead of a script file
INLINE_CODE = {
    "python": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"),
    "deno": ("eval",),
    "bun": ("-e", "--eval", "-p", "--print"),
    "ruby": ("-e",),
    "perl": ("-e", "-E"),
    "php": ("-r",),
    "pwsh": ("-c", "-Command", "-command"),
    "powershell": ("-c", "-Command", "-command"),
    **{sh: ("-c",) for sh in SHELLS},
}
# options after which the interpreter runs something that is not a script file (a module, a REPL)
_NOT_A_SCRIPT = {"python": ("-m",)}
_SUBCOMMANDS = {"deno": ("run",), "bun": ("run",)}
HTTP_IN_CODE = ("fetch(", "axios", "http.request", "https.request")
MEDIA_ENDPOINTS = (
    "images/generations",
    "images/edits",
    "images/variations",
    "audio/speech",
    "text-to-speech",
)
_VERSIONED = re.compile(r"^(python|pypy|node|ruby|perl|php)[0-9.]*$")

HELPER, MEDIA, HTTP, FILE, DATA = "005", "004", "001", "002", "003"
_PRIORITY = (HELPER, MEDIA, HTTP, FILE, DATA)


def check_native_first(ctx: RuleContext) -> Iterator[Diagnostic]:
    for task in ctx.workflow.tasks.values():
        verb = task.verb
        if not isinstance(verb, Exec):
            continue
        found = classify(verb)
        if found is None:
            continue
        cls, cmd, detail = found
        yield _finding(cls, cmd, detail, task.id)


def classify(verb: Exec) -> tuple[str, SimpleCommand, str] | None:
    """The most specific native-first class of an ``exec:``, with the command and what matched."""
    hits: dict[str, tuple[SimpleCommand, str]] = {}
    for cmd in commands_of(verb):
        _classify_command(cmd, hits, depth=0)
    text = command_text(verb)
    for frag in MEDIA_ENDPOINTS:
        if frag in text:
            cmds = commands_of(verb)
            if cmds:
                hits.setdefault(MEDIA, (cmds[0], frag))
            break
    for cls in _PRIORITY:
        if cls in hits:
            cmd, detail = hits[cls]
            return cls, cmd, detail
    return None


def _interpreter(head: str) -> str | None:
    m = _VERSIONED.match(head)
    if m:
        return m.group(1).replace("pypy", "python")
    return head if head in INLINE_CODE else None


def _classify_command(cmd: SimpleCommand, hits: dict[str, tuple[SimpleCommand, str]], depth: int) -> None:
    head = cmd.head
    if head is None:
        return  # a computed program name makes no claim
    if head in HTTP_CLIENTS:
        hits.setdefault(HTTP, (cmd, head))
    elif head in FILE_COMMANDS:
        hits.setdefault(FILE, (cmd, head))
    elif head in DATA_COMMANDS:
        hits.setdefault(DATA, (cmd, head))
    interp = _interpreter(head)
    if interp is None:
        return
    args = list(cmd.args)
    if args and args[0] in _SUBCOMMANDS.get(interp, ()):
        args.pop(0)
    i = 0
    while i < len(args):
        a = args[i]
        if a is None:
            return  # a computed argument: no claim about what runs
        if a in INLINE_CODE[interp]:
            code = args[i + 1] if i + 1 < len(args) else None
            if code is None:
                return
            if interp in SHELLS and depth < 3:
                for inner in shell_commands(code, cmd.span):
                    _classify_command(inner, hits, depth + 1)
            elif any(f in code for f in HTTP_IN_CODE):
                hits.setdefault(HTTP, (cmd, f"{head} {a}"))
            return
        if a in _NOT_A_SCRIPT.get(interp, ()):
            return
        if a.startswith("-"):
            i += 1
            continue
        hits.setdefault(HELPER, (cmd, f"{head} {a}"))
        return


_ADVICE = {
    HTTP: (
        "`exec:` runs {detail}, an HTTP request",
        'Use `invoke: { tool: "nika:fetch" }`: it is checked against `permits.net`, guarded against '
        "SSRF and fails with typed codes.",
    ),
    FILE: (
        "`exec:` runs `{detail}`, a file operation",
        "Use `nika:read`, `nika:write` (`create_dirs: true` for new directories) or `nika:glob`, which "
        "`permits.fs` checks path by path.",
    ),
    DATA: (
        "`exec:` runs `{detail}` to transform data",
        "Shape JSON with `nika:jq` or an `output:` binding, and make literal file edits with `nika:edit`.",
    ),
    MEDIA: (
        "`exec:` calls a media generation endpoint (`{detail}`) directly",
        "Use `nika:image_generate` or `nika:tts_generate`, which keep keys out of the workflow and "
        "record what they produced.",
    ),
    HELPER: (
        "`exec:` hands a script to an interpreter (`{detail}`), out of the checker's sight",
        "Move what the script does to native steps (`nika:fetch`, `nika:read`/`nika:write`, `nika:jq`, "
        "`nika:convert`, an MCP tool), or record why it stays in the exec ledger.",
    ),
}


def _finding(cls: str, cmd: SimpleCommand, detail: str, task: str) -> Diagnostic:
    message, help_text = _ADVICE[cls]
    if cls == HTTP and " " not in detail:
        detail = f"`{detail}`"
    elif cls == HTTP:
        detail = f"an inline `{detail}` script"
    return lint(f"native-first/{cls}", cmd.span, message.format(detail=detail), help_text, task=task)


__all__ = ["check_native_first", "classify", "program_name"]
