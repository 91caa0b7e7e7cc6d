"""The exec blocklist (spec 02 §exec, NIKA-SEC-001): one detector, on parsed commands.

``nika check`` calls it on literal ``command:`` / ``shell:`` text; ``nika run`` on the resolved
words just before the spawn. A word the checker cannot know is ``None`` and never matches. The
tables live once, as data, in ``contracts/effects.toml`` (``[blocklist]``).

The detector looks through the usual respellings: wrappers that run the rest of their words
(``env X=1 rm …``, ``command rm``, ``busybox rm``), path spellings of a program
(``/bin/rm``), lexical spellings of a target (``/.``, ``//``, ``/tmp/..``), ``find … -delete``,
redirects onto system files, and ``sh -c`` scripts. A ``shell:`` line the parser (bashlex)
cannot parse is refused, never guessed. It is a detector, not a sandbox: ``permits.exec`` is the
boundary.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from checker.core.globs import canonical_path

__all__ = ["judge_shell", "judge_words"]

Word = str | None


@cache
def _table() -> dict[str, Any]:
    from checker.contracts.effects import _table as effects_table

    return dict(effects_table()["blocklist"])


@cache
def _set(key: str) -> frozenset[str]:
    return frozenset(_table()[key])


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _unwrap(words: Sequence[Word]) -> list[Word]:
    """Drop wrapper programs (and their options, assignments and durations) in front."""
    out = list(words)
    while out and out[0] is not None and _base(out[0]) in _set("wrappers"):
        wrapper = _base(out[0])
        out = out[1:]
        if wrapper == "busybox" and out[:1] == ["--"]:
            out = out[1:]
        while out and out[0] is not None and (out[0].startswith("-") or ("=" in out[0] and wrapper == "env")):
            flag = out[0]
            out = out[1:]
            if wrapper in ("nice", "ionice", "chrt", "stdbuf") and flag in ("-n", "-c", "-p") and out:
                out = out[1:]
            if wrapper == "env" and flag in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string") and out:
                out = out[1:]
        if wrapper in ("timeout", "chrt") and out and out[0] is not None and out[0][:1].isdigit():
            out = out[1:]  # the duration / priority
        if wrapper == "chroot" and out:
            out = out[1:]  # the new root
    while out and out[0] is not None and _is_assignment(out[0]):
        out = out[1:]
    return out


def _is_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and name.replace("_", "a").isalnum() and not name[:1].isdigit()


def _target(word: str) -> str:
    if word.startswith("~"):
        rest = canonical_path("/" + word[1:].lstrip("/"))
        return "~" if rest == "/" else "~" + rest
    return canonical_path(word)


def _absolute(word: str) -> bool:
    return word.startswith(("/", "~", "$HOME", "${HOME}"))


def _system(path: str) -> bool:
    canon = canonical_path(path)
    return any(canon == d or canon.startswith(d + "/") for d in _set("system_dirs"))


def judge_words(words: Sequence[Word]) -> str | None:
    """Why one simple command (its words; ``None`` = unknown) is blocked, or ``None``."""
    words = _unwrap(words)
    if not words or words[0] is None:
        return None
    prog = _base(words[0])
    args = words[1:]
    always: dict[str, str] = _table()["always"]
    if prog in always:
        return f"`{prog}` {always[prog]}"
    if prog.startswith(tuple(_table()["always_prefixes"])):
        return f"`{prog}` formats a file system"
    known = [a for a in args if a is not None]
    flags = "".join(a[1:] for a in known if a.startswith("-") and not a.startswith("--"))
    long_flags = {a for a in known if a.startswith("--")}
    targets = [a for a in known if not a.startswith("-")]
    if prog == "rm":
        recursive = "r" in flags or "R" in flags or "--recursive" in long_flags
        forced = "f" in flags or "--force" in long_flags
        if "--no-preserve-root" in long_flags:
            return "`rm --no-preserve-root`"
        if recursive and any(_target(t) in _set("rootish") or _target(t) in ("~", "/") for t in targets):
            return "`rm -r` on the root, the home directory or everything in sight"
        if recursive and forced and any(_absolute(t) for t in targets):
            return "a recursive forced `rm` of an absolute path"
    if prog == "find" and ("-delete" in known or _find_runs_rm(known)):
        starts = [a for a in known if not a.startswith(("-", "(", ")", "!"))][:1]
        if not starts or any(_absolute(s) or _target(s) in _set("rootish") for s in starts):
            return "`find` deleting under the root, the home directory or an absolute path"
    if prog == "chmod" and any(t in ("777", "a+rwx", "ugo+rwx", "0777") for t in targets):
        return "`chmod 777` makes files writable by everyone"
    recursive_mode = "R" in flags or "--recursive" in long_flags
    if prog in ("chmod", "chown") and recursive_mode and any(_target(t) == "/" for t in targets):
        return f"a recursive `{prog}` on `/`"
    if prog == "dd" and any(a.startswith("of=/dev/") for a in known):
        return "`dd` onto a device"
    if prog == "tee" and any(_system(t) for t in targets if t.startswith("/")):
        return "`tee` onto a system file"
    if prog in _set("shells") and len(args) > 1 and args[0] == "-c" and args[1] is not None:
        return judge_shell(args[1])
    return None


def _find_runs_rm(words: Sequence[str]) -> bool:
    for i, w in enumerate(words):
        if w in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(words):
            return _base(words[i + 1]) == "rm"
    return False


def judge_shell(script: str) -> str | None:
    """Why a ``shell:`` line is blocked (``None`` when it passes). Unparseable lines are blocked."""
    from checker.contracts.shell_parser import bashlex as load_bashlex  # loaded only here, tables ready-made

    bashlex = load_bashlex()

    if ":(){" in script.replace(" ", ""):
        return "a fork bomb"
    try:
        parts = bashlex.parse(script)
    except Exception as exc:  # bashlex raises its own ParsingError and assorted internal errors
        return f"the command cannot be parsed, so it cannot be judged ({type(exc).__name__})"
    verdicts: list[str] = []
    fetchers, shells, safe = _set("fetchers"), _set("shells"), _set("safe_devices")

    class Visitor(bashlex.ast.nodevisitor):  # type: ignore[misc]
        def visitpipeline(self, node: Any, parts: list[Any]) -> None:
            seen_fetch = False
            for c in parts:
                if c.kind != "command":
                    continue
                words = _unwrap(_command_words(c))
                prog = _base(words[0]) if words and words[0] else ""
                if seen_fetch and prog in shells:
                    verdicts.append(f"a download piped into `{prog}`")
                if prog in fetchers:
                    seen_fetch = True

        def visitcommand(self, node: Any, parts: list[Any]) -> None:
            why = judge_words(_command_words(node))
            if why:
                verdicts.append(why)

        def visitredirect(self, node: Any, input: Any, type: Any, output: Any, heredoc: Any) -> None:
            target = getattr(output, "word", None)
            if not isinstance(target, str) or type not in (">", ">>", ">|", "&>", ">&"):
                return
            canon = canonical_path(target) if target.startswith("/") else target
            if canon.startswith("/dev/") and canon not in safe:
                verdicts.append(f"a redirect onto the device `{target}`")
            elif canon.startswith("/") and _system(canon):
                verdicts.append(f"a redirect onto the system file `{target}`")

        def visitfunction(self, node: Any, name: Any, body: Any, parts: Any) -> None:
            verdicts.append("a shell function definition (fork bombs start this way)")

    for tree in parts:
        Visitor().visit(tree)
    return verdicts[0] if verdicts else None


def _command_words(node: Any) -> list[Word]:
    return [p.word for p in node.parts if p.kind == "word"]
