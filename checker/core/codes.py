"""The registry of every code the project can emit, read from ``codes.toml``.

One row per code: title, category (one of the twelve of spec 05), phase (``check``, ``run``,
``both`` or ``editor``), default severity and a teaching paragraph in our own words. The registry drives the
category and namespace of every finding, ``nika explain``, hover text and the SARIF rule table.

A second table, ``[lints."<rule-id>"]``, holds the lint rules that carry no NIKA code
(``one-obvious-way/NNN``, ``native-first/NNN``): warnings with the same fields, category optional.
"""

from __future__ import annotations

import os
import re
from functools import cache

from checker.core.diagnostics import Diagnostic, Fix, Label, Severity
from checker.core.display import clip
from checker.core.records import record, replace
from checker.core.source import Span

CATEGORIES = (
    "parse_error",
    "validation_error",
    "variable_error",
    "provider_error",
    "network_error",
    "tool_error",
    "process_error",
    "budget_error",
    "security_error",
    "timeout_error",
    "cancelled",
    "internal_error",
)

# Longer messages are cut (they can only come from quoting a huge value of the workflow).
MAX_MESSAGE = 1000

_CODES_TOML = os.path.join(os.path.dirname(__file__), "codes.toml")

CODE_RE = re.compile(r"^NIKA-[A-Z]{2,9}(-[A-Z][A-Z0-9_]{1,15})?-[0-9]{3}$")


@record
class CodeInfo:
    """One registry row."""

    code: str
    title: str
    category: str
    phase: str
    severity: Severity
    teaching: str

    @property
    def namespace(self) -> str:
        return namespace_of(self.code)


def namespace_of(code: str) -> str:
    """``NIKA-BUILTIN-WAIT-003`` -> ``NIKA-BUILTIN``; ``NIKA-DAG-001`` -> ``NIKA-DAG``."""
    parts = code.split("-")
    return "-".join(parts[:2])


@record
class LintInfo:
    """One lint-rule row: a warning with a stable rule id and no NIKA code."""

    rule: str
    title: str
    phase: str
    severity: Severity
    teaching: str
    category: str | None = None


@cache
def _table() -> dict:
    from checker.core.toml_sections import whole

    return whole(_CODES_TOML)


@cache
def registry() -> dict[str, CodeInfo]:
    return {code: _code_info(code, row) for code, row in _table().get("codes", {}).items()}


def _code_info(code: str, row: dict) -> CodeInfo:  # type: ignore[type-arg]
    return CodeInfo(
        code=code,
        title=row["title"],
        category=row["category"],
        phase=row["phase"],
        severity=Severity(row.get("severity", "error")),
        teaching=row["teaching"].strip(),
    )


@cache
def lints() -> dict[str, LintInfo]:
    """The lint rules without a NIKA code, keyed by rule id (``one-obvious-way/010``)."""
    return {rule: _lint_info(rule, row) for rule, row in _table().get("lints", {}).items()}


def _lint_info(rule: str, row: dict) -> LintInfo:  # type: ignore[type-arg]
    return LintInfo(
        rule=rule,
        title=row["title"],
        phase=row["phase"],
        severity=Severity(row.get("severity", "warning")),
        teaching=row["teaching"].strip(),
        category=row.get("category"),
    )


@cache
def lookup(code: str) -> CodeInfo:
    """One registry row, parsed on its own (a check needs a handful, not all of them)."""
    from checker.core.toml_sections import section

    row = section(_CODES_TOML, "codes", code)
    if row is None:
        raise KeyError(f"{code} is not in checker/core/codes.toml")
    return _code_info(code, row)


@cache
def lookup_lint(rule: str) -> LintInfo:
    """One lint row, parsed on its own (like :func:`lookup`)."""
    from checker.core.toml_sections import section

    row = section(_CODES_TOML, "lints", rule)
    if row is None:
        raise KeyError(f"{rule} is not a lint rule in checker/core/codes.toml")
    return _lint_info(rule, row)


def nearest(code: str, limit: int = 3) -> list[str]:
    """The registered codes closest to a mistyped one."""
    key = code.strip().upper()
    if not key.startswith("NIKA-"):
        key = "NIKA-" + key
    import difflib

    return difflib.get_close_matches(key, list(registry()), n=limit, cutoff=0.5)


def report(
    code: str,
    span: Span,
    message: str,
    help: str | None = None,
    *,
    related: tuple[Label, ...] | list[Label] = (),
    fixes: tuple[Fix, ...] | list[Fix] = (),
    task: str | None = None,
    severity: Severity | None = None,
    tags: tuple[str, ...] = (),
) -> Diagnostic:
    """Build a finding for a registered code; category and namespace come from the registry.

    The message is bounded (:data:`MAX_MESSAGE` characters): one that quotes a huge value is cut.
    """
    info = lookup(code)
    return Diagnostic(
        code=code,
        namespace=info.namespace,
        category=info.category,
        severity=severity or info.severity,
        message=clip(message, MAX_MESSAGE),
        span=span,
        help=help,
        related=tuple(related),
        fixes=tuple(fixes),
        task=task,
        tags=tags,
    )


# What a check-time finding of a run failure starts with (spec 05: a failure the spec places at
# evaluation is raised by the run; a workflow that carries it is valid, e.g. it recovers with `on_error:`).
RUN_FAILS = "every run fails here: "


def run_failure(
    code: str,
    span: Span,
    message: str,
    help: str | None = None,
    *,
    related: tuple[Label, ...] | list[Label] = (),
    fixes: tuple[Fix, ...] | list[Fix] = (),
    task: str | None = None,
) -> Diagnostic:
    """A failure the spec places at evaluation (a code of phase ``run``, or the run half of a ``both``
    code) that the check sees happen on every run: a warning, never a refusal.

    Spec 05 gives such codes to the run (NIKA-VAR-006 "expression type error at evaluation"); a
    workflow that carries one is valid (it may recover with ``on_error:``, or fail by design), so
    ``nika check`` says what every run will do and where, with the repair, and accepts the file.
    """
    return report(
        code,
        span,
        RUN_FAILS + message,
        help,
        related=related,
        fixes=fixes,
        task=task,
        severity=Severity.WARNING,
    )


def at_check(d: Diagnostic) -> Diagnostic:
    """A finding of a judge the check shares with the run (the builtin argument contract), as the
    check states it: a code of phase ``run`` becomes its :func:`run_failure` warning; the run,
    judging the same call, keeps the error and fails the task with it."""
    if d.code is None or not d.is_error or lookup(d.code).phase != "run":
        return d
    return replace(d, severity=Severity.WARNING, message=clip(RUN_FAILS + d.message, MAX_MESSAGE))


def lint(
    rule: str,
    span: Span,
    message: str,
    help: str | None = None,
    *,
    task: str | None = None,
    related: tuple[Label, ...] | list[Label] = (),
    fixes: tuple[Fix, ...] | list[Fix] = (),
) -> Diagnostic:
    """Build a finding for a lint rule without a NIKA code (``one-obvious-way/…``, ``native-first/…``).

    The namespace is the rule family, the severity the registry's; ``rule`` carries the id.
    """
    info = lookup_lint(rule)
    return Diagnostic(
        code=None,
        namespace=rule.split("/", 1)[0],
        category=info.category or "validation_error",
        severity=info.severity,
        message=message,
        span=span,
        help=help,
        related=tuple(related),
        fixes=tuple(fixes),
        rule=rule,
        task=task,
    )
