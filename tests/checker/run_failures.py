"""What the check says of a failure the spec places at evaluation (05): a warning that every run
fails there, never an error. Shared by the tests of the rules that prove such failures."""

from __future__ import annotations

from checker.core.codes import RUN_FAILS
from checker.core.diagnostics import Diagnostic, Severity


def is_run_failure(d: Diagnostic) -> bool:
    """A check-time warning that every run fails here (the run raises ``d.code``)."""
    return d.severity is Severity.WARNING and d.message.startswith(RUN_FAILS)


def said(d: Diagnostic) -> bool:
    """A finding a rule test cares about: a refusal, or the warning of a certain run failure."""
    return d.is_error or is_run_failure(d)
