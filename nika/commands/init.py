"""``nika init [DIR]``: start a project (the templates ``nika new`` writes from are read here too).

Nothing that exists is overwritten. ``init`` lists every file as created or skipped; the two
files a project usually has already (``.gitignore``, ``.pre-commit-config.yaml``) get only the
missing entry appended, and are left alone when they hold it. The starter files and the
templates are package data (``nika/templates/``), each template with its own test file.
"""

from __future__ import annotations

import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any

TEMPLATE_SUFFIX = ".nika.yaml"
TEST_SUFFIX = ".nika-test.yaml"
STARTER = "hello"
NAME = re.compile(r"^[a-z][a-z0-9-]*$")
_SUMMARY = re.compile(r"^# summary: (.+)$", re.MULTILINE)
GITIGNORE_LINE = ".nika/traces/"
# template → (package file, where `nika new` writes it, the glob that must match nothing first): a sample
# input, so the template's first run has something to read; never overwrites, skipped when inputs exist
SAMPLES = {"summarise": ("summarise.sample.md", "docs/example.md", "docs/*.md")}
HOOK_ID = "nika-check"


def template_data(name: str) -> str:
    return resources.files("nika.templates").joinpath(name).read_text(encoding="utf-8")


def templates() -> dict[str, str]:
    """Template name → its one-line summary (the ``# summary:`` line of the template)."""
    out = {}
    for entry in sorted(resources.files("nika.templates").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(TEMPLATE_SUFFIX) and not entry.name.startswith(f"{STARTER}."):
            m = _SUMMARY.search(entry.read_text(encoding="utf-8"))
            out[entry.name[: -len(TEMPLATE_SUFFIX)]] = m.group(1) if m else ""
    return out


def render(template: str, name: str) -> tuple[str, str]:
    """The workflow and test texts of ``template`` with the workflow id and file set to ``name``."""
    workflow = template_data(template + TEMPLATE_SUFFIX)
    workflow = re.sub(rf"^(  id: ){re.escape(template)}$", rf"\g<1>{name}", workflow, count=1, flags=re.MULTILINE)
    workflow = _SUMMARY.sub(lambda m: f"# {m.group(1)[0].upper()}{m.group(1)[1:]}.", workflow, count=1)
    workflow = workflow.replace(f"{template}{TEMPLATE_SUFFIX}", f"{name}{TEMPLATE_SUFFIX}")
    test = template_data(template + TEST_SUFFIX)
    test = test.replace(f"workflow: {template}{TEMPLATE_SUFFIX}", f"workflow: {name}{TEMPLATE_SUFFIX}", 1)
    return workflow, test


def _write_new(path: Path, text: str, done: list[str], skipped: list[str]) -> None:
    if path.exists():
        skipped.append(f"{path} (exists)")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    done.append(str(path))


def _append_once(path: Path, marker: str, text: str, done: list[str], skipped: list[str]) -> None:
    """Create ``path`` with ``text``, or append ``text`` when ``marker`` is not in it yet."""
    if not path.exists():
        _write_new(path, text, done, skipped)
        return
    current = path.read_text(encoding="utf-8")
    if marker in current:
        skipped.append(f"{path} (already has {marker})")
        return
    with path.open("a", encoding="utf-8") as fh:
        fh.write(("" if current.endswith("\n") or not current else "\n") + text)
    done.append(f"{path} (appended {marker})")


def register(sub: Any) -> None:
    i = sub.add_parser(
        "init",
        help="start a project: a starter workflow and its test, .nika/ configuration, pre-commit, .gitignore",
        description=(
            "Create the files of a Nika project in DIR (default: the current directory), empty or not: "
            "hello.nika.yaml and its test hello.nika-test.yaml, .nika/ engine configuration (providers.env "
            "and mcp.json, commented), a .pre-commit-config.yaml hook, and a .gitignore line for .nika/traces/. "
            "A file that already exists is never overwritten: it is listed as skipped (an existing "
            ".gitignore or .pre-commit-config.yaml gets the missing entry appended instead)."
        ),
        epilog="exit status: 0 done (some files may have been skipped); 1 DIR cannot be created or written",
    )
    i.add_argument("dir", nargs="?", default=".", metavar="DIR", help="the project folder (created when missing)")


def run(args: Any) -> int:
    return init(args.dir)


def init(directory: str) -> int:
    root = Path(directory)
    done: list[str] = []
    skipped: list[str] = []
    try:
        root.mkdir(parents=True, exist_ok=True)
        workflow, test = render(STARTER, STARTER)
        _write_new(root / f"{STARTER}{TEMPLATE_SUFFIX}", workflow, done, skipped)
        _write_new(root / f"{STARTER}{TEST_SUFFIX}", test, done, skipped)
        _write_new(root / ".nika" / "providers.env", template_data("providers.env"), done, skipped)
        _write_new(root / ".nika" / "mcp.json", template_data("mcp.json"), done, skipped)
        _append_once(root / ".gitignore", GITIGNORE_LINE, f"# nika run journals\n{GITIGNORE_LINE}\n", done, skipped)
        hook = template_data("pre-commit-config.yaml")
        precommit = root / ".pre-commit-config.yaml"
        if precommit.exists() and "repos:" in precommit.read_text(encoding="utf-8"):
            hook = hook.split("repos:\n", 1)[1]  # append the entry under the existing `repos:` list
        _append_once(precommit, f"id: {HOOK_ID}", hook, done, skipped)
    except OSError as exc:
        print(f"nika init: {directory}: {(exc.strerror or str(exc)).lower()}", file=sys.stderr)
        return 1
    for line in done:
        print(f"created  {line}")
    for line in skipped:
        print(f"skipped  {line}")
    where = "" if directory == "." else f"cd {directory} && "
    print(f"next: {where}nika check . && nika test && nika run {STARTER}{TEMPLATE_SUFFIX} --var name=Ada")
    return 0
