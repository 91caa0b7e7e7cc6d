"""Closed vocabularies of the language, defined once: predicates, statuses, edge roles, on_error
actions, expression positions, reserved binding names and fix applicability.

The enums are ``StrEnum``s, so each member is also the plain string the spec spells (and
compares equal to it): they serialise as-is into JSON, LSP payloads and traces.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final, NamedTuple


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
# boundary, 04 §scopes). The rules judge references with it (NIKA-VAR-001), completion offers the
# roots in scope from it, hover and typing read it; no other list of roots or scopes exists.
VALUE_ROOTS: Final = ("inputs", "config", "const", "secrets")
LOOP_ROOTS: Final = ("item", "index")
_EXPRESSIONS: Final = frozenset(Where) - {Where.OUTPUT}  # an `output:` binding holds no `${{ }}`
# `tasks.*` (an edge or an observation) is readable only where the graph can order it.
TASKS_ALLOWED: Final = frozenset({Where.WITH, Where.RECOVER, Where.OUTPUTS, Where.FINALLY})
# The loop locals `item`/`index` exist inside a for_each task's own body and bindings.
LOOP_ALLOWED: Final = frozenset({Where.WITH, Where.BODY, Where.RECOVER})
# `with.*` reads the current task's bindings once they are materialized (04 §Resolution order:
# "1. Boundary first · the with: bindings materialize", then `when:` and the body), so never from
# inside a binding: a sibling is not there yet (the run raises NIKA-VAR-001).
WITH_ALLOWED: Final = frozenset({Where.WHEN, Where.BODY, Where.RECOVER, Where.FOR_EACH})
SCOPE: Final[dict[str, frozenset[Where]]] = {
    "inputs": _EXPRESSIONS,
    "config": _EXPRESSIONS,
    "const": _EXPRESSIONS,
    "secrets": _EXPRESSIONS - {Where.WHEN},  # a guard never branches on a secret
    "with": WITH_ALLOWED,
    "tasks": TASKS_ALLOWED,
    **dict.fromkeys(LOOP_ROOTS, LOOP_ALLOWED),
}
ROOTS: Final = tuple(SCOPE)  # every root an expression may start with


def in_scope(root: str, where: str) -> bool:
    """Whether ``root`` may be read at position class ``where`` (by the scope table alone: `with`
    and the loop locals also need a task, and a for_each one for the latter)."""
    allowed = SCOPE.get(root)
    return allowed is not None and where in allowed


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


class TaskField(NamedTuple):
    """One field of the task record ``tasks.X`` (03 §task record)."""

    name: str
    kind: str  # output | status | error | timestamp | duration: what its value is
    observation: bool  # reading it observes the task's end (the edge passes whatever the outcome)
    doc: str  # one line for hover and completion


# The task record, once: the checker's scope rules, edge roles and typing, the language server's
# completion and the runtime's resume hashes all read this table. None of these names may be a
# `with:` or `output:` binding name (03).
TASK_RECORD: Final = (
    TaskField(
        "output",
        "output",
        False,
        "The task's result. The reader waits for the task; the edge passes on success (or skip, reading null).",
    ),
    TaskField(
        "status",
        "status",
        True,
        "How the task ended: success, failure, skipped or cancelled. Passes whatever the outcome.",
    ),
    TaskField(
        "error",
        "error",
        False,
        "The error record `{code, category, message, …}`. Passes when the task failed (or was skipped).",
    ),
    TaskField("started_at", "timestamp", True, "When the task started (RFC 3339). Passes whatever the outcome."),
    TaskField("ended_at", "timestamp", True, "When the task settled (RFC 3339). Passes whatever the outcome."),
    TaskField("duration_ms", "duration", True, "How long the task ran, in milliseconds. Passes whatever the outcome."),
)
TASK_FIELDS: Final = frozenset(f.name for f in TASK_RECORD)
RESERVED_BINDINGS: Final = TASK_FIELDS
OBSERVATION_FIELDS: Final = frozenset(f.name for f in TASK_RECORD if f.observation)
TIMING_FIELDS: Final = frozenset(f.name for f in TASK_RECORD if f.kind in ("timestamp", "duration"))
