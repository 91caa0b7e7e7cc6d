"""Console blocks of the docs, run as golden tests (tests/docs/test_console_blocks.py).

The convention a page author follows (docs/development.md, "Writing a docs page", says the same):

* A fenced block with the info string ``console`` is a transcript. A line starting ``$ `` is a
  command (a line ending in ``\\`` continues on the next); the lines after it, up to the next
  ``$ ``, are what it prints, standard output and standard error together, as a terminal shows.
* An HTML comment on the line just above the fence says how it runs (invisible on GitHub and on
  the site): ``<!-- console: cwd=examples -->``, ``<!-- console: continue -->``,
  ``<!-- console: skip="needs a Dask cluster" -->``. Without one, the block runs in an empty folder.
  - ``cwd=DIR`` runs from that folder of the repository. The block gets a sandbox: a fresh git
    repository holding the files of DIR that git does not ignore, and the project's ``.gitignore``. After the block,
    ``git status`` must be clean there, so a command that writes outside an ignored folder fails
    the test. ``cwd=.`` runs in the checkout itself, for commands that write nothing (checked the
    same way).
  - ``continue`` runs in the folder, environment and background processes of the block before it
    on the same page (a walkthrough split by prose).
  - ``needs=PROGRAM[,PROGRAM]`` runs the block only where those programs are on ``PATH`` (``jq``);
    elsewhere it is skipped, saying which is missing.
  - ``skip=REASON`` shows the block without running it; the reason is reported as the skip.
* ``nika …`` runs in-process (``nika.cli.main``); anything else runs under ``/bin/sh`` in the
  block's folder, with this Python's ``bin`` first on ``PATH``. The harness itself handles ``cd``,
  ``export K=V``, ``K=V nika …``, ``&&``, a pipe after ``nika``, ``< /dev/null``, ``2>/dev/null``,
  ``> FILE``, ``echo $?`` and a trailing ``&`` (a background process, stopped when the block ends).
  ``python3 -m pip install …`` and ``python3 -m pytest`` do nothing: the suite runs in that install.
* ``$ cat FILE`` for a file the folder does not have creates it from the lines shown: a page shows
  the workflow it runs, and that text is what runs.
* Output is compared line by line after normalising both sides: a line ``...`` stands for any
  number of lines and ``...`` inside a line for any text; runs of spaces match any run of spaces;
  durations (``12 ms``, ``0.76s``), timestamps and timeline bars match any such value; a run id
  (``20261202T025002Z-df66ef25eee2``) matches any run id, the same shown id the same real id, and a
  shown id (or a prefix of its short part) in a later command is replaced by the real one. A
  background server that prints ``http://127.0.0.1:PORT`` on its first line is started with
  ``PORT=0``; the shown port stands for the real one in later commands and outputs. The sandbox
  folder reads as ``/home/me/project``.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import select
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOWN_ROOT = "/home/me/project"
_DIRECTIVE = re.compile(r"^<!--\s*console:(.*?)-->\s*$")
_FENCE = re.compile(r"^(\s*)(```+|~~~+)\s*([\w+-]*)")
RUN_ID = r"\d{8}T\d{6}Z-[0-9a-f]{12}"
# (shown text, pattern any real value matches): applied to the lines a page shows
_STAMP = r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d+)?Z"
_FUZZ = [
    (re.compile(_STAMP), _STAMP),
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|µs|s)\b"), r"\d+(?:\.\d+)? ?(?:ms|µs|s)\b"),
    (re.compile(r"\|[█▒ ]+\|"), r"\|[█▒ ]+\|"),
    (re.compile(r"\bhead [0-9a-f]{8,64}…?"), r"head [0-9a-f]{8,64}…?"),  # a journal's chain head
]
_PROMPT = "$ "


class HarnessError(Exception):
    """The block asks for something the harness does not do: the message says what."""


@dataclass
class Step:
    command: str
    expected: list[str]
    line: int


@dataclass
class Block:
    page: str
    line: int
    steps: list[Step]
    cwd: str | None = None
    cont: bool = False
    skip: str | None = None
    needs: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every ``console`` block of a Markdown page, with the directive above it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.groups()
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(fence):
            end += 1
        if lang == "console":
            body = [ln[len(indent) :] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1 : end]]
            block = Block(rel, i + 1, _steps(body, i + 2))
            j = i - 1
            if j >= 0 and (d := _DIRECTIVE.match(lines[j].strip())):
                _apply_directive(block, d.group(1))
            out.append(block)
        i = end + 1
    return out


def _apply_directive(block: Block, text: str) -> None:
    for word in shlex.split(text):
        key, _, value = word.partition("=")
        if key == "cwd" and value:
            block.cwd = value
        elif key == "continue" and not value:
            block.cont = True
        elif key == "skip" and value:
            block.skip = value
        elif key == "needs" and value:
            block.needs += value.split(",")
        else:
            raise HarnessError(
                f"{block.where}: unknown console directive `{word}` (cwd=DIR, continue, needs=PROGRAM, skip=REASON)"
            )


def _steps(body: list[str], first_line: int) -> list[Step]:
    steps: list[Step] = []
    k = 0
    while k < len(body):
        line = body[k]
        if line.startswith(_PROMPT) or line == "$":
            start = k
            command = line[2:]
            while command.endswith("\\") and k + 1 < len(body):
                k += 1
                command = command[:-1].rstrip() + " " + body[k].strip()
            steps.append(Step(command.strip(), [], first_line + start))
        elif steps:
            steps[-1].expected.append(line)
        elif line.strip():
            raise HarnessError(f"line {first_line + k}: a console block starts with a `$ ` command")
        k += 1
    return steps


def sessions(all_blocks: list[Block]) -> list[list[Block]]:
    """Blocks grouped into what runs in one folder: a block and the `continue` blocks after it."""
    out: list[list[Block]] = []
    for b in all_blocks:
        if b.cont:
            if not out or out[-1][0].page != b.page:
                raise HarnessError(f"{b.where}: `continue` needs a console block before it on the page")
            out[-1].append(b)
        else:
            out.append([b])
    return out


# -- matching -------------------------------------------------------------------------------------


@dataclass
class Ids:
    """Run ids and ports: what a page shows → what the run really printed."""

    runs: dict[str, str] = field(default_factory=dict)
    ports: dict[str, str] = field(default_factory=dict)

    def into_command(self, command: str) -> str:
        for shown, real in self.runs.items():
            command = command.replace(shown, real)
        short = {s.split("-")[1]: r.split("-")[1] for s, r in self.runs.items()}

        def prefix(m: re.Match[str]) -> str:
            hits = [r for s, r in short.items() if s.startswith(m.group(0))]
            return hits[0][: len(m.group(0))] if len(hits) == 1 else m.group(0)

        command = re.sub(r"(?<![\w.-])[0-9a-f]{4,11}(?![\w.-])", prefix, command)
        for shown, real in self.ports.items():
            command = command.replace(f"127.0.0.1:{shown}", f"127.0.0.1:{real}")
        return command

    def from_output(self, text: str) -> str:
        for shown, real in self.ports.items():
            text = text.replace(f"127.0.0.1:{real}", f"127.0.0.1:{shown}")
        return text


def _line_pattern(line: str, groups: dict[str, str], ids: Ids) -> str:
    """One shown line as a regex: fuzzy values, run ids as groups, `...` as any text."""
    out, pos = [], 0
    spans: list[tuple[int, int, str]] = []
    for m in re.finditer(RUN_ID, line):
        shown = m.group(0)
        if shown in ids.runs:
            pat = re.escape(ids.runs[shown])
        elif shown in groups:
            pat = f"(?P={groups[shown]})"
        else:
            groups[shown] = f"run{len(groups)}"
            pat = f"(?P<{groups[shown]}>{RUN_ID})"
        spans.append((m.start(), m.end(), pat))
    for rx, pat in _FUZZ:
        for m in rx.finditer(line):
            if not any(s < m.end() and m.start() < e for s, e, _ in spans):
                spans.append((m.start(), m.end(), pat))
    for m in re.finditer(r"\.\.\.", line):
        if not any(s < m.end() and m.start() < e for s, e, _ in spans):
            spans.append((m.start(), m.end(), ".*?"))
    for start, end, pat in sorted(spans):
        out.append(_literal(line[pos:start], leading=pos == 0))
        out.append(pat)
        pos = end
    out.append(_literal(line[pos:], leading=pos == 0))
    return "".join(out)


def _literal(text: str, *, leading: bool) -> str:
    lead = ""
    if leading:
        stripped = text.lstrip(" ")
        lead, text = re.escape(text[: len(text) - len(stripped)]), stripped
    return lead + " +".join(re.escape(part) for part in re.split(r" +", text))


def _clean(text: str) -> list[str]:
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", ln).rstrip() for ln in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def match(expected: list[str], actual: str, ids: Ids) -> bool:
    """Does ``actual`` read as ``expected``? On a match, the run ids seen are learnt into ``ids``."""
    groups: dict[str, str] = {}
    parts = []
    for line in _clean("\n".join(expected)):
        parts.append(r"(?:[^\n]*\n)*?" if line.strip() == "..." else _line_pattern(line, groups, ids) + r"\n")
    body = "\n".join(_clean(actual))
    m = re.fullmatch("".join(parts), body + "\n" if body else "")
    if m is None:
        return False
    for shown, name in groups.items():
        ids.runs[shown] = m.group(name)
    return True


# -- running --------------------------------------------------------------------------------------


def _split_top(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside quotes (``&&``, ``|``)."""
    parts, cur, quote, i = [], [], "", 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and i + 1 < len(text):
                cur.append(ch)
                i += 1
                ch = text[i]
        elif ch in "'\"":
            quote = ch
        elif text.startswith(sep, i) and not (sep == "|" and text.startswith("||", i)):
            parts.append("".join(cur))
            cur = []
            i += len(sep)
            continue
        cur.append(ch)
        i += 1
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _expand(text: str, env: dict[str, str]) -> str:
    """``$NAME`` and ``${NAME}`` from ``env``, outside single quotes (for the lines run in-process)."""
    out, quote, i = [], "", 0
    while i < len(text):
        ch = text[i]
        if ch == "'" and quote != '"':
            quote = "" if quote == "'" else "'"
        elif ch == '"' and quote != "'":
            quote = "" if quote == '"' else '"'
        elif ch == "$" and quote != "'" and (m := re.match(r"\$(?:\{(\w+)\}|(\w+))", text[i:])):
            out.append(env.get(m.group(1) or m.group(2), ""))
            i += m.end()
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _strip_comment(text: str) -> str:
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1] in " \t"):
            return text[:i].rstrip()
    return text


class Sandbox:
    """The folder, environment and background processes of one session of console blocks."""

    def __init__(self, tmp: Path, cwd: str | None) -> None:
        self.in_place = cwd in (".", "./")
        self.git_root: Path | None = None
        if self.in_place:
            self.root = ROOT
            self.cwd = ROOT
            self._status_before = self._git_status(ROOT)
        elif cwd:
            self.root = tmp / "repo"
            self._copy_tracked(cwd)
            self.cwd = self.root / cwd
            self.git_root = self.root
        else:
            self.root = tmp / "project"
            self.root.mkdir(parents=True)
            self.cwd = self.root
        self.env = _base_env()
        self.ids = Ids()
        self.status = 0
        self.background: list[subprocess.Popen[bytes]] = []

    # -- the sandbox repository

    def _copy_tracked(self, folder: str) -> None:
        self.root.mkdir(parents=True)
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", folder, ".gitignore"],
            cwd=ROOT,
            capture_output=True,
            check=False,
        )
        names = [n for n in listed.stdout.decode().split("\0") if n] if listed.returncode == 0 else []
        if not names:  # not a git checkout (an sdist): copy the folder as it is
            shutil.copytree(ROOT / folder, self.root / folder, ignore=shutil.ignore_patterns(".nika", "__pycache__"))
            names = [".gitignore"] if (ROOT / ".gitignore").exists() else []
        for name in names:
            if (ROOT / name).is_file():
                (self.root / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, self.root / name)
        git = ["git", "-c", "user.name=docs", "-c", "user.email=docs@example.invalid", "-c", "commit.gpgsign=false"]
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "docs sandbox"]):
            subprocess.run([*git, *args], cwd=self.root, check=True, capture_output=True)

    @staticmethod
    def _git_status(where: Path) -> str:
        proc = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"], cwd=where, capture_output=True, text=True
        )
        return proc.stdout if proc.returncode == 0 else ""

    def unignored_writes(self) -> str:
        """What the block left in the repository outside an ignored folder (git status lines)."""
        if self.in_place:
            before = set(self._status_before.splitlines())
            return "\n".join(ln for ln in self._git_status(ROOT).splitlines() if ln not in before)
        if self.git_root is not None:
            return self._git_status(self.git_root)
        return ""

    def close(self) -> None:
        for proc in self.background:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 15)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
            if proc.stdout:
                proc.stdout.close()
        self.background.clear()

    # -- one command line

    def run(self, step: Step) -> str:
        """Run one ``$ `` line; returns what a terminal would show (normalised paths and ports)."""
        command = _strip_comment(self.ids.into_command(step.command)).replace("$?", str(self.status))
        if command.endswith("&") and not command.endswith("&&"):
            return self._background(command[:-1].strip(), step)
        shown = []
        for part in _split_top(command, "&&"):
            status, text = self._one(part)
            shown.append(text)
            self.status = status
            if status != 0:
                break
        shown.append(self._drain())
        text = "".join(shown).replace(str(self.root), SHOWN_ROOT)
        return self.ids.from_output(text)

    def _one(self, part: str) -> tuple[int, str]:
        words = shlex.split(part)
        if words and (words[0] in ("cd", "export", "nika") or "=" in words[0]):
            part = _expand(part, {**self.env, "PWD": str(self.cwd)})
            words = shlex.split(part)
        if not words:
            return 0, ""
        if words[0] == "cd" and len(words) == 2:
            target = (self.cwd / words[1]).resolve()
            if not target.is_dir():
                return 1, f"cd: {words[1]}: No such file or directory\n"
            self.cwd = target
            return 0, ""
        if words[0] == "export":
            for word in words[1:]:
                key, _, value = word.partition("=")
                self.env[key] = value
            return 0, ""
        if words[:4] == ["python3", "-m", "pip", "install"] or words[:3] == ["python3", "-m", "pytest"]:
            return 0, ""  # the suite runs in that install already
        env_extra: dict[str, str] = {}
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            key, _, value = words.pop(0).partition("=")
            env_extra[key] = value
        if words and words[0] == "nika":
            return self._nika(part, env_extra)
        return self._shell(part, {})

    def prepare(self, step: Step) -> None:
        """``$ cat FILE`` of a file the sandbox lacks: write the lines shown into it."""
        words = shlex.split(_strip_comment(step.command))
        if words[:1] == ["cat"] and len(words) == 2 and not self.in_place:
            path = self.cwd / words[1]
            if not path.exists():
                if any("..." in ln for ln in step.expected):
                    raise HarnessError(f"line {step.line}: `cat {words[1]}` creates the file: show all of it")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("\n".join(_clean("\n".join(step.expected))) + "\n", encoding="utf-8")

    def _nika(self, part: str, env_extra: dict[str, str]) -> tuple[int, str]:
        stages = _split_top(part, "|")
        head = stages[0]
        quiet_err = bool(re.search(r"(^|\s)2>\s*/dev/null(\s|$)", head))
        head = re.sub(r"(^|\s)2>\s*/dev/null(?=\s|$)", " ", head)
        merge = bool(re.search(r"(^|\s)2>&1(\s|$)", head))
        head = re.sub(r"(^|\s)2>&1(?=\s|$)", " ", head)
        head = re.sub(r"(^|\s)<\s*/dev/null(?=\s|$)", " ", head)
        target = None
        if m := re.search(r"(?:^|\s)>\s*(\S+)\s*$", head):
            target, head = m.group(1), head[: m.start()]
        if re.search(r"[<>;`]|\$\(", head):
            raise HarnessError(f"the console harness does not run `{part}` in-process: keep `nika …` lines simple")
        argv = shlex.split(head)
        while argv and "=" in argv[0] and argv[0].split("=")[0].isidentifier():
            argv.pop(0)
        separate = len(stages) > 1 or quiet_err or target is not None
        status, out, err = self._call_nika(argv[1:], env_extra, separate=separate or merge)
        if merge:
            out, err = out + err, ""
        if target is not None:
            (self.cwd / target).write_text(out, encoding="utf-8")
            out = ""
        if quiet_err:
            err = ""
        if len(stages) > 1:
            rest = " | ".join(stages[1:])
            proc = subprocess.run(
                ["/bin/sh", "-c", rest], input=out, cwd=self.cwd, env=self.env, capture_output=True, text=True
            )
            return proc.returncode, err + proc.stdout + proc.stderr
        return status, (err + out) if separate else out

    def _call_nika(self, argv: list[str], env_extra: dict[str, str], *, separate: bool) -> tuple[int, str, str]:
        from nika.cli import main

        out = io.StringIO()
        err = io.StringIO() if separate else out
        saved_env, saved_cwd, saved_in = dict(os.environ), os.getcwd(), sys.stdin
        os.environ.clear()
        os.environ.update({**self.env, **env_extra})
        os.chdir(self.cwd)
        sys.stdin = io.StringIO("")
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    status = main(argv)
                except SystemExit as exc:
                    status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                    if not isinstance(exc.code, int | None):
                        print(exc.code, file=sys.stderr)
        finally:
            sys.stdin = saved_in
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
        return int(status or 0), out.getvalue(), "" if err is out else err.getvalue()

    def _shell(self, part: str, env_extra: dict[str, str]) -> tuple[int, str]:
        proc = subprocess.run(
            ["/bin/sh", "-c", part],
            cwd=self.cwd,
            env={**self.env, **env_extra},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=120,
        )
        return proc.returncode, proc.stdout.decode("utf-8", "replace")

    def _background(self, command: str, step: Step) -> str:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=self.cwd,
            env={**self.env, "PORT": "0", "PYTHONUNBUFFERED": "1"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.background.append(proc)
        assert proc.stdout is not None
        first = b""
        deadline = time.monotonic() + 60
        while not first.endswith(b"\n") and time.monotonic() < deadline and proc.poll() is None:
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 1)
                if not chunk:
                    break
                first += chunk
        line = first.decode("utf-8", "replace")
        shown = next((ln for ln in step.expected if "127.0.0.1:" in ln), "")
        if (real := re.search(r"127\.0\.0\.1:(\d+)", line)) and (doc := re.search(r"127\.0\.0\.1:(\d+)", shown)):
            self.ids.ports[doc.group(1)] = real.group(1)
        os.set_blocking(proc.stdout.fileno(), False)
        return self.ids.from_output(line + self._drain())

    def _drain(self) -> str:
        """What the background processes printed since the last look (they flush as they go)."""
        chunks = []
        for proc in self.background:
            if proc.stdout is None:
                continue
            with contextlib.suppress(BlockingIOError, OSError):
                while data := os.read(proc.stdout.fileno(), 65536):
                    chunks.append(data.decode("utf-8", "replace"))
        return "".join(chunks)


def _base_env() -> dict[str, str]:
    """The process environment without the engine's own settings, provider keys and telemetry."""
    drop = re.compile(r"^(NIKA_|OTEL_|DASK_|PYTEST_|COV_)|_API_KEY$|^HF_TOKEN$|^PORT$")
    env = {k: v for k, v in os.environ.items() if not drop.search(k)}
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "/usr/bin:/bin")])
    env.update({"NO_COLOR": "1", "COLUMNS": "100", "TZ": "UTC", "LC_ALL": env.get("LC_ALL", "C.UTF-8")})
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def pages() -> list[Path]:
    """The README and every page under docs/ (a new page is picked up as it is added)."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass
class Mismatch:
    block: Block
    step: Step
    actual: str

    def __str__(self) -> str:
        shown = "\n".join(self.step.expected)
        return (
            f"{self.block.page}:{self.step.line}: `$ {self.step.command}` printed\n{self.actual.rstrip()}\n"
            f"--- the page shows ---\n{shown}"
        )


def run_session(session: list[Block], tmp: Path) -> Mismatch | None:
    """Run a session's blocks in order; the first step whose output differs from the page, or None."""
    box = Sandbox(tmp, session[0].cwd)
    try:
        for block in session:
            if block.cwd and block is not session[0]:
                raise HarnessError(f"{block.where}: a `continue` block runs where the first one did: no cwd=")
            for step in block.steps:
                box.prepare(step)
                actual = box.run(step)
                if not match(step.expected, actual, box.ids):
                    return Mismatch(block, step, actual)
            left = box.unignored_writes()
            if left:
                raise AssertionError(f"{block.where}: wrote outside an ignored folder of the repository:\n{left}")
    finally:
        box.close()
    return None
