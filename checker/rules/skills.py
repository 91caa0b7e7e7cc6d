"""Agent Skills (02 §Agent Skills): NIKA-AGENT-003 (a skill file is missing or unreadable) and
NIKA-AGENT-004 (it is not a valid skill); static paths only (NIKA-PARSE-019)."""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic
from checker.model.workflow import Agent
from checker.parse.values import TemplateValue
from checker.rules.support import skill_files as skills
from checker.rules.support.context import RuleContext
from checker.rules.support.workspace import outside_workspace


def check_skills(ctx: RuleContext) -> Iterator[Diagnostic]:
    for tid, verb in ctx.verbs():
        if not isinstance(verb, Agent):
            continue
        for item in verb.skills:
            path = item.value
            if isinstance(item, TemplateValue) or skills.GLOB_CHARS & set(path):
                yield report(
                    "NIKA-PARSE-019",
                    item.span,
                    f"`{path}` is not a static skill path",
                    "Name each SKILL.md file literally; globs and `${{ }}` are not allowed in `skills:`.",
                    task=tid,
                )
                continue
            where = ctx.locate(path)
            if where is None:
                yield outside_workspace(item.span, path, "skill", tid)
                continue
            found = skills.load(where if ctx.roots is not None else path, ctx.base_dir, ctx.source.path)
            if isinstance(found, tuple):
                code, why = found
                help = (
                    "Fix the path (it resolves from the working directory) or add the file."
                    if code == "NIKA-AGENT-003"
                    else "Open the file with `---`, a `name:` and a `description:`, then `---` and the body."
                )
                yield report(code, item.span, f"skill `{path}`: {why}", help, task=tid)
