"""Findings: what every rule reports and every output format renders.

A finding carries its NIKA code (or ``None`` for a lint without one), the code's namespace and
category (from the registry), a severity, a message that says what is wrong, a one-sentence
``help`` that says how to repair it, a primary span, labelled related spans and optional fixes
expressed as text edits. Nothing here knows about the language server or the terminal.
"""

from __future__ import annotations

from enum import Enum

from checker.core.records import field, record
from checker.core.source import Span


class Severity(str, Enum):  # noqa: UP042 - a str so it serialises as its value
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    HINT = "hint"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2, Severity.HINT: 3}


@record
class Label:
    """A secondary place that explains a finding ("first defined here", "edge b -> a")."""

    span: Span
    message: str


@record
class Edit:
    """Replace the text in ``span`` with ``new_text``."""

    span: Span
    new_text: str


@record
class Fix:
    """A machine-applicable repair. ``safe`` fixes may be applied without review."""

    title: str
    edits: tuple[Edit, ...]
    applicability: str = "safe"


DOCS_BASE = "https://nika.sh/errors/"


@record
class Diagnostic:
    """One finding about one document."""

    code: str | None
    namespace: str
    category: str
    severity: Severity
    message: str
    span: Span
    help: str | None = None
    related: tuple[Label, ...] = ()
    fixes: tuple[Fix, ...] = ()
    rule: str | None = None
    task: str | None = None
    tags: tuple[str, ...] = field(default=())
    # The Python traceback of an internal error (NIKA-IMPL-*), shown only on request (`--debug`).
    trace: str | None = field(default=None, compare=False, repr=False)

    @property
    def docs_url(self) -> str | None:
        return DOCS_BASE + self.code if self.code else None

    @property
    def is_internal(self) -> bool:
        """True for a failure of the checker itself: the file was not fully checked."""
        return self.namespace == "NIKA-IMPL"

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def full_message(self) -> str:
        """The message with its repair sentence, for single-string consumers."""
        if not self.help:
            return self.message
        sep = " " if self.message.endswith((".", "?", "!", ":")) else ". "
        return f"{self.message}{sep}{self.help}"

    def sort_key(self) -> tuple[int, int, str, str]:
        return (self.span.start, self.span.end, self.code or self.rule or "", self.message)
