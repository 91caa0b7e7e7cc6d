"""Permits at run time: every effect is judged again at the moment it happens (NIKA-SEC-004).

The static judge sees literals; this module sees the resolved values. An absent ``permits:``
block is zero authority (NEP-0003): every effect under it is refused. A child workflow runs
under its own permits *and* every ancestor's (containment: a child never gains authority).

File paths are canonicalised after symlink resolution (``os.path.realpath``) and only then
matched against the grant globs, whose fixed prefixes are canonicalised the same way, so neither
``..`` nor a symlink can lead out of a grant. This is a guard rail in the engine process, not an
OS sandbox: a process started by ``exec:`` is not confined by it.

Every decision is reported to ``witness`` (the trace's ``permit_checked`` frames, NEP-0007).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from checker.model import Permits
from checker.tool_globs import tool_allowed
from runtime.errors import TaskError

SEC = "NIKA-SEC-004"

# NEP-0006: artifact classes that execute when loaded, by the final extension of the URL path.
CODE_BEARING: dict[str, str] = {
    **dict.fromkeys((".pkl", ".pickle", ".dill", ".joblib", ".pt", ".pth", ".ckpt"), "serialized-executable"),
    **dict.fromkeys(
        (".py", ".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmd", ".rb", ".pl", ".php", ".js", ".mjs", ".ipynb"),
        "script",
    ),
    **dict.fromkeys((".exe", ".dll", ".so", ".dylib", ".wasm", ".jar"), "executable"),
}

# NEP-0005: the runner floor every child gets, and the names no grant can pass.
ENV_FLOOR = ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "USER", "LOGNAME")
DANGEROUS_ENV = frozenset(
    {
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "LD_AUDIT",
        "DYLD_INSERT_LIBRARIES",
        "DYLD_LIBRARY_PATH",
        "DYLD_FRAMEWORK_PATH",
        "BASH_ENV",
        "ENV",
        "BASH_FUNC",
        "PROMPT_COMMAND",
        "IFS",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PYTHONHOME",
        "PERL5OPT",
        "PERL5LIB",
        "PERLLIB",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_OPTIONS",
        "NODE_PATH",
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "GIT_SSH_COMMAND",
        "GIT_EXEC_PATH",
    }
)

Witness = Callable[[str, str, str, bool, str], None]  # task, plane, gate, allowed, why


def _is_dangerous(name: str) -> bool:
    from checker.effects import dangerous_env  # the one table (checker/contracts/effects.toml)

    return dangerous_env(name) or name in DANGEROUS_ENV or name.startswith(("BASH_FUNC_", "LD_", "DYLD_"))


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """``**`` crosses directories, ``*`` and ``?`` do not; ``dir/**`` also matches ``dir``."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("(?:/.*)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            if pattern.startswith("/", i):
                out[-1] = "(?:.*/)?"
                i += 1
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def _split_glob(pattern: str) -> tuple[str, str]:
    """The fixed directory prefix of a glob and the rest (``./out/*.json`` -> ``./out``, ``*.json``)."""
    parts = pattern.split("/")
    fixed: list[str] = []
    for i, p in enumerate(parts):
        if any(ch in p for ch in "*?["):
            return "/".join(fixed) or ".", "/".join(parts[i:])
        fixed.append(p)
    return "/".join(fixed) or ".", ""


@dataclass
class Boundary:
    """The authority of one workflow run (``permits`` ``None`` = absent = zero authority)."""

    permits: Permits | None
    workdir: Path
    witness: Witness | None = None
    parent: Boundary | None = None
    _fs_cache: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    # -- helpers -----------------------------------------------------------------------------

    def _say(self, task: str, plane: str, gate: str, ok: bool, why: str) -> None:
        if self.witness is not None:
            self.witness(task, plane, gate, ok, why)

    def _deny(self, task: str, plane: str, gate: str, why: str, **details: object) -> TaskError:
        self._say(task, plane, gate, False, why)
        return TaskError(SEC, why, details={"plane": plane, "gate": gate, **details})

    @property
    def declared(self) -> bool:
        return self.permits is not None

    def _strings(self, name: str) -> tuple[str, ...]:
        p = self.permits
        if p is None:
            return ()
        return tuple(str(v.value) for v in getattr(p, name) if isinstance(v.value, str))

    def _chain(self) -> list[Boundary]:
        out: list[Boundary] = []
        b: Boundary | None = self
        while b is not None:
            out.append(b)
            b = b.parent
        return out

    # -- exec --------------------------------------------------------------------------------

    def check_exec(self, task: str, program: str, *, shell: bool) -> None:
        """``permits.exec``: ``true`` allows any program; a list allows those programs in argv form."""
        for b in self._chain():
            grant = b.permits.exec if b.permits is not None else None
            owner = "" if b is self else " (a calling workflow's permits)"
            if grant is True:
                continue
            if isinstance(grant, tuple):
                names = {str(v.value) for v in grant}
                if shell:
                    raise self._deny(
                        task,
                        "exec",
                        "shell",
                        f"`permits.exec` lists programs{owner}, so only the argv form `command:` may run; "
                        "`shell:` needs `permits.exec: true`",
                    )
                if program in names or os.path.basename(program) in names:
                    continue
                raise self._deny(
                    task,
                    "exec",
                    program,
                    f"`{program}` is not among the programs `permits.exec` allows{owner} ({', '.join(sorted(names))})",
                )
            why = (
                "no `permits:` block, so the workflow has no authority to run processes"
                if b.permits is None
                else (f"`permits.exec` does not allow processes{owner}")
            )
            raise self._deny(task, "exec", program, why)
        self._say(task, "exec", program if not shell else "shell", True, "permits.exec allows the program")

    def env_passthrough(self, task: str) -> tuple[str, ...]:
        """Names of engine variables that may reach a child process (every ancestor must grant them)."""
        names = [n for n in self._strings("env") if not _is_dangerous(n)]
        for b in self._chain()[1:]:
            allowed = set(b._strings("env"))
            names = [n for n in names if n in allowed]
        for n in names:
            self._say(task, "env", n, True, "the runner floor plus the names `permits.env` passes through")
        return tuple(names)

    # -- tools and network -------------------------------------------------------------------

    def check_tool(self, task: str, tool: str, effects: tuple[str, ...]) -> None:
        """An effectful tool needs a grant; when ``permits.tools`` lists tools, it must match one."""
        if not effects:
            return
        for b in self._chain():
            if b.permits is None:
                raise self._deny(
                    task,
                    "tool",
                    tool,
                    f"no `permits:` block, so the workflow may not call `{tool}` ({', '.join(effects)})",
                )
            globs = b._strings("tools")
            if globs and not tool_allowed(globs, tool):  # the canonical tool globs (02 §Tool whitelist)
                raise self._deny(task, "tool", tool, f"`{tool}` is not among the tools `permits.tools` lists")
        self._say(task, "tool", tool, True, "permits.tools grants the tool")

    def check_url(self, task: str, url: object, *, inert: bool = False) -> None:
        """``permits.net.http``: the resolved URL's host must match a grant; code-bearing artifacts
        are refused unless the task declares the read ``inert:`` (NEP-0006)."""
        if not isinstance(url, str) or not url:
            raise self._deny(task, "net", str(url), "the request has no URL the permits could judge")
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if parts.scheme not in ("http", "https") or not host:
            raise self._deny(task, "net", url, f"`{url}` is not an http(s) URL with a host")
        for b in self._chain():
            if b.permits is None:
                raise self._deny(task, "net", host, f"no `permits:` block, so the workflow may not reach `{host}`")
            grants = [g.lower() for g in b._strings("net_http")]
            if not any(_host_matches(host, g) for g in grants):
                raise self._deny(
                    task, "net", host, f"`{host}` is not among the hosts `permits.net.http` allows", url_host=host
                )
        ext = os.path.splitext(parts.path)[1].lower()
        cls = CODE_BEARING.get(ext)
        if cls is not None and not inert:
            raise self._deny(
                task,
                "sink",
                ext,
                f"`{url}` names a code-bearing artifact ({cls}, `{ext}`): declare the read `inert:` if it is "
                "only stored, never loaded",
                artifact_class=cls,
            )
        self._say(task, "net", host, True, "permits.net.http grants the host")

    # -- file system -------------------------------------------------------------------------

    def _grants(self, mode: str) -> list[tuple[str, str]]:
        """Canonical (prefix, rest-glob) pairs of ``permits.fs.<mode>``."""
        cached = self._fs_cache.get(mode)
        if cached is not None:
            return cached
        out = []
        for g in self._strings(f"fs_{mode}"):
            prefix, rest = _split_glob(g)
            base = prefix if os.path.isabs(prefix) else str(self.workdir / prefix)
            out.append((os.path.realpath(base), rest))
        self._fs_cache[mode] = out
        return out

    def resolve(self, task: str, path: str, mode: str) -> Path:
        """Canonicalise ``path`` (relative to the workflow's directory) and check it against
        ``permits.fs.<mode>`` of this workflow and every caller; returns the canonical path."""
        if not isinstance(path, str) or not path or "\x00" in path:
            raise self._deny(task, "fs", str(path), "the path is empty or not a string")
        raw = path if os.path.isabs(path) else str(self.workdir / path)
        canonical = os.path.realpath(raw)
        for b in self._chain():
            if b.permits is None:
                raise self._deny(task, "fs", path, f"no `permits:` block, so the workflow may not {mode} `{path}`")
            if not any(_inside(canonical, prefix, rest) for prefix, rest in b._grants(mode)):
                shown = canonical if canonical != os.path.normpath(raw) else path
                raise self._deny(
                    task,
                    "fs",
                    path,
                    f"`{path}` resolves to `{shown}`, outside the paths `permits.fs.{mode}` grants",
                    path=path,
                )
        self._say(task, "fs", path, True, f"permits.fs.{mode} grants the canonical path")
        return Path(canonical)


def _inside(canonical: str, prefix: str, rest: str) -> bool:
    if not rest:
        return canonical == prefix or canonical.startswith(prefix.rstrip("/") + "/")
    if canonical == prefix:
        return rest in ("**",)
    if not canonical.startswith(prefix.rstrip("/") + "/"):
        return False
    tail = canonical[len(prefix.rstrip("/")) + 1 :]
    return bool(_glob_regex(rest).match(tail))


def _host_matches(host: str, grant: str) -> bool:
    if "://" in grant:
        grant = urlsplit(grant).hostname or grant
    grant = grant.split("/", 1)[0].split(":", 1)[0]
    if grant.startswith("*."):
        return host.endswith(grant[1:])
    return fnmatch.fnmatchcase(host, grant)
