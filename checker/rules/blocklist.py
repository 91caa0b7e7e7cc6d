"""NIKA-SEC-001 at check: a literal ``command:`` or ``shell:`` the exec blocklist refuses.

The same detector (:mod:`checker.contracts.blocklist`) judges the resolved command at run; here it
sees the literal words (a computed word is unknown and never matches) and a fully literal
``shell:`` line. A literal hit is refused before the first effect of the run, not after earlier
tasks have run (spec 02 §exec: the blocklist applies to ``shell:``; 01 §permits: ``exec: true``
is still blocklist-gated).
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.contracts.blocklist import judge_shell, judge_words
from checker.core.codes import report
from checker.core.diagnostics import Diagnostic
from checker.model.workflow import Exec
from checker.rules.support.commands import literal_text
from checker.rules.support.context import RuleContext, task_verbs

_HELP = (
    "The blocklist refuses obviously destructive commands whatever the permits say: do the job "
    "without them (a narrower target, a builtin, or a reviewed script in argv form)."
)


def check_blocklist(ctx: RuleContext) -> Iterator[Diagnostic]:
    for task in ctx.workflow.tasks.values():
        for verb in task_verbs(task):
            if not isinstance(verb, Exec):
                continue
            if verb.command:
                why = judge_words([literal_text(w) for w in verb.command])
                span = verb.command[0].span
            else:
                line = literal_text(verb.shell)
                if line is None or verb.shell is None:
                    continue
                why = judge_shell(line)
                span = verb.shell.span
            if why is not None:
                yield report(
                    "NIKA-SEC-001",
                    span,
                    f"the command is refused by the exec blocklist: {why}",
                    _HELP,
                    task=task.id,
                )
