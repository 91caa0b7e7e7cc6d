"""Agent Skills (02 §Agent Skills): resolving and reading `SKILL.md` files.

Used by the check (NIKA-AGENT-003/004) and, at compose time, by the runtime that injects the
skills into an agent's system context: one reader, so check and run agree on every file.
Paths resolve from the working directory as the spec says (:func:`checker.core.paths.resolve_named`,
the one resolver); a path that only exists beside the workflow file is accepted too, and the
runtime loads exactly the file :func:`resolve` found.
"""

from __future__ import annotations

from checker.core.paths import resolve_named
from checker.core.reader import is_regular_file
from checker.core.records import record

MAX_SKILL_BYTES = 256 * 1024
GLOB_CHARS = frozenset("*?[")


@record
class Skill:
    """A valid skill: its frontmatter ``name`` and ``description`` and its trimmed body."""

    path: str
    name: str
    description: str
    body: str


def resolve(path: str, work_dir: str | None, document: str | None = None) -> str | None:
    """The file a skill path names: from the working directory, else beside the workflow."""
    found = resolve_named(path, work_dir, document)
    return found if is_regular_file(found) else None


def load(path: str, work_dir: str | None, document: str | None = None) -> Skill | tuple[str, str]:
    """The skill at ``path``, or ``(code, reason)``: NIKA-AGENT-003 when the file cannot be
    found or read, NIKA-AGENT-004 when it is not a valid skill."""
    found = resolve(path, work_dir, document)
    if found is None:
        return "NIKA-AGENT-003", "no such file"
    from checker.core.reader import FileReadError, read_file

    try:
        data = read_file(found, MAX_SKILL_BYTES, truncate=True)
    except FileReadError as exc:
        return "NIKA-AGENT-003", exc.reason
    if len(data) > MAX_SKILL_BYTES:
        return "NIKA-AGENT-004", f"the file is larger than {MAX_SKILL_BYTES // 1024} KiB"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return "NIKA-AGENT-004", "the file is not UTF-8 text"
    return parse(found, text)


def parse(path: str, text: str) -> Skill | tuple[str, str]:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return "NIKA-AGENT-004", "it does not open with a `---` frontmatter block"
    try:
        close = next(i for i in range(1, len(lines)) if lines[i].strip() in ("---", "..."))
    except StopIteration:
        return "NIKA-AGENT-004", "its frontmatter block is never closed with `---`"
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        meta = YAML(typ="safe", pure=True).load("\n".join(lines[1:close]))
    except YAMLError:
        return "NIKA-AGENT-004", "its frontmatter is not valid YAML"
    if not isinstance(meta, dict):
        return "NIKA-AGENT-004", "its frontmatter is not a mapping"
    for key in ("name", "description"):
        v = meta.get(key)
        if not isinstance(v, str) or not v.strip():
            return "NIKA-AGENT-004", f"its frontmatter has no non-empty `{key}`"
    return Skill(path, meta["name"].strip(), meta["description"].strip(), "\n".join(lines[close + 1 :]).strip())
