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

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from checker.contracts import effects
from checker.contracts.effects import boundary_of
from checker.core.records import field, record
from checker.model.workflow import Permits

if TYPE_CHECKING:
    from checker.contracts.argv import Word
from runtime.errors import TaskError

if TYPE_CHECKING:
    from runtime.net.egress import Hop

SEC = "NIKA-SEC-004"

# NEP-0005: the runner floor every child gets (the names no grant can pass are the checker's
# dangerous-name floor, :func:`checker.contracts.effects.dangerous_env`).
ENV_FLOOR = ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "USER", "LOGNAME")

Witness = Callable[[str, str, str, bool, str], None]  # task, plane, gate, allowed, why


def compose_env(
    passthrough: tuple[str, ...], authored: Mapping[str, str], engine_env: Mapping[str, str]
) -> dict[str, str]:
    """Floor ∪ passthrough (read from the engine's environment) ∪ ``exec.env``, minus dangerous names."""
    out: dict[str, str] = {}
    for name in (*ENV_FLOOR, *passthrough):
        if name in engine_env:
            out[name] = engine_env[name]
    out.update(authored)
    for name in list(out):
        if effects.dangerous_env(name):
            del out[name]
    return out


def _split_glob(pattern: str) -> tuple[str, str]:
    """The literal directory prefix of a glob and the rest (``./out/*.json`` -> ``./out``, ``*.json``)."""
    parts = pattern.split("/")
    fixed: list[str] = []
    for i, p in enumerate(parts):
        if "*" in p or "\\" in p:
            return "/".join(fixed) or ".", "/".join(parts[i:])
        fixed.append(p)
    return "/".join(fixed) or ".", ""


def _escape_glob(text: str) -> str:
    return "".join("\\" + c if c in "*\\" else c for c in text)


@record(frozen=False, slots=False)
class Boundary:
    """The authority of one workflow run (``permits`` ``None`` = absent = zero authority)."""

    permits: Permits | None
    workdir: Path
    witness: Witness | None = None
    parent: Boundary | None = None
    _fs_cache: dict[str, effects.Boundary] = field(default_factory=dict)
    _judge: effects.Boundary | None = None

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

    @property
    def judge(self) -> effects.Boundary:
        """This workflow's ``permits:`` as the checker's one judge (plain data, literals only)."""
        if self._judge is None:
            self._judge = boundary_of(self.permits)
        return self._judge

    # -- exec --------------------------------------------------------------------------------

    def check_exec(self, task: str, program: str, *, shell: bool) -> None:
        """``permits.exec``: ``true`` allows any program; a list allows exactly those argv[0]
        spellings, in argv form (the checker's :meth:`checker.contracts.effects.Boundary.check`)."""
        for b in self._chain():
            owner = "" if b is self else " (a calling workflow's permits)"
            if b.permits is None:
                why = "no `permits:` block, so the workflow has no authority to run processes"
                raise self._deny(task, "exec", program, why)
            grant = b.judge.exec
            if shell and isinstance(grant, tuple) and grant:
                raise self._deny(
                    task,
                    "exec",
                    "shell",
                    f"`permits.exec` lists programs{owner}, so only the argv form `command:` may run; "
                    "`shell:` needs `permits.exec: true`",
                )
            denial = b.judge.check("exec", None if shell else program)
            if denial is not None:
                raise self._deny(task, "exec", program, denial.reason + owner)
        self._say(task, "exec", program if not shell else "shell", True, "permits.exec allows the program")

    def check_argv(self, task: str, words: list[Word]) -> None:
        """Under a program list (of this workflow or a caller), the argv judge
        (:func:`checker.contracts.argv.judge_argv`) on the resolved words: an untrusted word in
        a re-entry class (option-like, or where a dispatching program reads what to run) is
        covered only when the list names it (spec 10 §permit parameterization). The words carry
        the same integrity labels the check read off the model."""
        from checker.contracts.argv import judge_argv

        for b in self._chain():
            grant = b.judge.exec
            if not isinstance(grant, tuple):
                continue
            found = judge_argv(words, grant)
            if found:
                f = found[0]
                owner = "" if b is self else " (a calling workflow's permits)"
                raise self._deny(
                    task, "exec", f.text or "", f"{f.reason}, and no grant lists it{owner}", boundary="exec"
                )

    def check_env_values(self, task: str, untrusted: list[str]) -> None:
        """The env judge (:func:`checker.contracts.effects.judge_env_value`) on the names an
        untrusted value sets in ``exec.env``: a name that says where code or configuration is
        loaded from never takes one (an authored literal does, NEP-0005 law 6)."""
        for name in untrusted:
            why = effects.judge_env_value(name, untrusted=True)
            if why is not None:
                raise self._deny(task, "env", name, why, boundary="env")

    def env_passthrough(self, task: str) -> tuple[str, ...]:
        """Names of engine variables that may reach a child process (every ancestor must grant
        them; the dangerous-name floor is never passed)."""
        names = [n for n in self._strings("env") if not effects.dangerous_env(n)]
        for b in self._chain()[1:]:
            names = [n for n in names if b.judge.check("env", n) is None]
        for n in names:
            self._say(task, "env", n, True, "the runner floor plus the names `permits.env` passes through")
        return tuple(names)

    # -- tools and network -------------------------------------------------------------------

    def check_tool(self, task: str, tool: str, tool_effects: tuple[str, ...]) -> None:
        """Under a present ``permits:`` block every tool must match ``permits.tools`` (an
        omitted list grants none); under an absent block only pure builtins run (NEP-0003)."""
        for b in self._chain():
            if b.permits is None:
                if not tool_effects:
                    continue
                raise self._deny(
                    task,
                    "tool",
                    tool,
                    f"no `permits:` block, so the workflow may not call `{tool}` ({', '.join(tool_effects)})",
                )
            denial = b.judge.check("tools", tool)
            if denial is not None:
                raise self._deny(task, "tool", tool, denial.reason)
        self._say(task, "tool", tool, True, "permits.tools grants the tool")

    def check_url(self, task: str, url: object, *, inert: bool = False) -> None:
        """``permits.net.http``: the resolved URL's host must match a grant; code-bearing artifacts
        are refused unless the task declares the read ``inert:`` (NEP-0006)."""
        if not isinstance(url, str) or not url:
            raise self._deny(task, "net", str(url), "the request has no URL the permits could judge")
        host = effects.url_host(url)
        if not url.lower().startswith(("http://", "https://")) or not host:
            raise self._deny(task, "net", url, f"`{url}` is not an http(s) URL with a host")
        for b in self._chain():
            if b.permits is None:
                raise self._deny(task, "net", host, f"no `permits:` block, so the workflow may not reach `{host}`")
            denial = b.judge.check("net", host)
            if denial is not None:
                raise self._deny(task, "net", host, denial.reason, url_host=host)
        artifact = effects.code_bearing(url)
        if artifact is not None and not inert:
            cls, ext = artifact
            raise self._deny(
                task,
                "sink",
                ext,
                f"`{url}` names a code-bearing artifact ({cls}, `{ext}`): declare the read `inert:` if it is "
                "only stored, never loaded",
                artifact_class=cls,
            )
        self._say(task, "net", host, True, "permits.net.http grants the host")

    def check_egress(self, task: str, hop: Hop) -> None:
        """The egress judge (:func:`runtime.net.egress.refusal`) on one request about to leave,
        witnessed: a hop that carries a secret is journaled allowed or refused; one that carries
        none passes unwitnessed (``permits.net.http`` already witnessed its host)."""
        from runtime.net import egress

        if not hop.carried:
            return
        names = ", ".join(f"`{h.name}`" for h, _ in hop.carried)
        gate = f"{hop.sink} → {hop.host}"
        found = egress.refusal(hop)
        if found is not None:
            held, why = found
            err = egress.denial(hop, held, why)
            self._say(task, "egress", gate, False, why)
            raise err
        self._say(task, "egress", gate, True, f"the `egress:` of {names} sanctions `{hop.sink}` at `{hop.host}`")

    # -- file system -------------------------------------------------------------------------

    def _fs_judge(self, mode: str) -> effects.Boundary:
        """The judge with ``permits.fs.<mode>`` in effective form (NEP-0009): each glob's literal
        prefix resolved from the working directory through its symlinks, the rest kept."""
        cached = self._fs_cache.get(mode)
        if cached is not None:
            return cached
        globs = []
        for g in self._strings(f"fs_{mode}"):
            prefix, rest = _split_glob(g)
            base = prefix if os.path.isabs(prefix) else str(self.workdir / prefix)
            real = _escape_glob(os.path.realpath(base))
            globs.append(real + ("/" + rest if rest else ""))
        field_name = "fs_read" if mode == "read" else "fs_write"
        judged = effects.Boundary(True, **{field_name: tuple(globs)})
        self._fs_cache[mode] = judged
        return judged

    def resolve(self, task: str, path: str, mode: str) -> Path:
        """Canonicalise ``path`` (relative to the working directory, symlinks resolved) and ask
        the judge about it for this workflow and every caller; returns the canonical path."""
        if not isinstance(path, str) or not path or "\x00" in path:
            raise self._deny(task, "fs", str(path), "the path is empty or not a string")
        raw = path if os.path.isabs(path) else str(self.workdir / path)
        try:
            canonical = os.path.realpath(raw)
        except (OSError, ValueError) as exc:
            raise self._deny(task, "fs", path, f"`{path}` cannot be resolved ({exc})") from None
        for b in self._chain():
            if b.permits is None:
                raise self._deny(task, "fs", path, f"no `permits:` block, so the workflow may not {mode} `{path}`")
            if b._fs_judge(mode).check(f"fs.{mode}", canonical) is not None:
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

    def write_grant_covering(self, path: str) -> str | None:
        """The ``permits.fs.write`` globs (of this workflow or a caller) that admit ``path``, or
        ``None``; a silent probe (no witness): used to keep engine configuration out of reach."""
        canonical = os.path.realpath(path)
        for b in self._chain():
            if b.permits is None:
                continue
            globs = b._strings("fs_write")
            for candidate in {canonical, os.path.abspath(path)}:
                if globs and b._fs_judge("write").check("fs.write", candidate) is None:
                    return ", ".join(f"`{g}`" for g in globs)
        return None
