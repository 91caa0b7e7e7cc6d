"""Closed vocabularies of the language, defined once: predicates, statuses, edge roles, on_error
actions, expression positions, reserved binding names and fix applicability.

The enums are ``StrEnum``s, so each member is also the plain string the spec spells (and
compares equal to it): they serialise as-is into JSON, LSP payloads and traces.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class Predicate(StrEnum):
    """An ``after:`` predicate (03 §after)."""

    SUCCESS = "success"
    FAILURE = "failure"
    SKIPPED = "skipped"
    TERMINAL = "terminal"


class Status(StrEnum):
    """A settled task status, the only ones observable through ``tasks.X.status`` (03)."""

    SUCCESS = "success"
    FAILURE = "failure"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


class EdgeRole(StrEnum):
    """The role of a graph edge (03 §four graphs); ``recovery`` edges never schedule."""

    VALUE = "value"
    TERMINAL_OBSERVATION = "terminal-observation"
    FAILURE_OBSERVATION = "failure-observation"
    CONTROL = "control"
    RECOVERY = "recovery"


class OnErrorAction(StrEnum):
    """The one action of an ``on_error:`` block (05 §on_error)."""

    RECOVER = "recover"
    SKIP = "skip"
    FAIL_WORKFLOW = "fail_workflow"


class Where(StrEnum):
    """The position class of a ``${{ … }}`` site; it decides which roots are legal there."""

    WITH = "with"
    WHEN = "when"
    FOR_EACH = "for_each"
    BODY = "body"  # a verb field
    RECOVER = "recover"
    FINALLY = "finally"
    OUTPUTS = "outputs"
    OUTPUT = "output"  # a jq binding, where islands are refused
    ENVELOPE = "envelope"


# How each position class reads in a message ("… is not in scope in `when:`").
WHERE_TEXT: Final = {
    Where.WHEN: "`when:`",
    Where.FOR_EACH: "`for_each:`",
    Where.BODY: "a verb field",
    Where.WITH: "`with:`",
    Where.RECOVER: "`on_error.recover`",
    Where.OUTPUTS: "`outputs:`",
    Where.FINALLY: "`on_finally:`",
    Where.OUTPUT: "an `output:` jq binding",
    Where.ENVELOPE: "an envelope field",
}


# The scope table: which roots a `${{ … }}` may read, by position class (03 §the reference
# boundary, 04 §scopes). Rules judge references with it; completion offers roots from it.
VALUE_ROOTS: Final = ("inputs", "config", "const", "secrets")
# `tasks.*` (an edge or an observation) is readable only where the graph can order it.
TASKS_ALLOWED: Final = frozenset({Where.WITH, Where.RECOVER, Where.OUTPUTS, Where.FINALLY})
# The loop locals `item`/`index` exist inside a for_each task's own body and bindings.
LOOP_ALLOWED: Final = frozenset({Where.WITH, Where.BODY, Where.RECOVER})
# `with.*` reads the current task's bindings.
WITH_ALLOWED: Final = frozenset({Where.WHEN, Where.BODY, Where.RECOVER, Where.WITH, Where.FOR_EACH})


class Applicability(StrEnum):
    """How safe a fix is to apply without review."""

    SAFE = "safe"
    MAYBE_INCORRECT = "maybe-incorrect"
    UNSAFE = "unsafe"


PREDICATES: Final = tuple(Predicate)
# What each predicate waits for, for hover and completion.
PREDICATE_MEANING: Final = {
    Predicate.SUCCESS: "the producer succeeded",
    Predicate.FAILURE: "the producer failed",
    Predicate.SKIPPED: "the producer was skipped",
    Predicate.TERMINAL: "the producer settled, whatever the outcome",
}
STATUSES: Final = tuple(Status)
ALL_STATES: Final = frozenset(Status)
# Fields every task record has; none of them may be a `with:` or `output:` binding name (03).
TASK_FIELDS: Final = frozenset({"output", "status", "error", "started_at", "ended_at", "duration_ms"})
RESERVED_BINDINGS: Final = TASK_FIELDS
OBSERVATION_FIELDS: Final = frozenset({"status", "duration_ms", "started_at", "ended_at"})
