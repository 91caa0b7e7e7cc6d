"""Typed task failures: every error a task can settle with carries a registered NIKA code."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from checker.core.records import field, record

# A feature of the language this build of the runtime does not implement (a builtin, an extract
# mode, a secret source, registry workflows, a mock model, `thinking:` on a provider whose adapter
# does not send it): a registered code of our own, so it is never confused with a failure.
NOT_BUILT = "NIKA-IMPL-002"
# A bug in the engine surfaced as a task failure instead of a traceback.
INTERNAL = "NIKA-IMPL-001"


@record(frozen=False, slots=False)
class TaskError(Exception):
    """A failure with a NIKA code from the registry (``checker/core/codes.toml``).

    ``transient`` marks errors ``retry:`` may retry without ``on_codes``; ``details`` is
    structured data for ``tasks.X.error.details``. Messages never contain secret values.
    """

    code: str
    message: str
    transient: bool = False
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(f"{self.code}: {self.message}")

    @property
    def category(self) -> str:
        return category_of(self.code)

    def record(self, task_id: str | None = None, attempt: int | None = None) -> dict[str, Any]:
        """The ``tasks.X.error`` record (03 §task record)."""
        return {
            "code": self.code,
            "category": self.category,
            "message": self.message,
            "transient": self.transient,
            "details": self.details,
            "task_id": task_id,
            "attempt": attempt,
        }


@lru_cache(maxsize=512)
def category_of(code: str) -> str:
    """The registry category of ``code`` (``internal_error`` for a code the registry lacks)."""
    from checker.core.codes import lookup

    try:
        return lookup(code).category
    except KeyError:
        return "internal_error"


def not_built(feature: str, message: str, **details: Any) -> TaskError:
    """NIKA-IMPL-002 for a feature of the one list of what this build lacks (``runtime/unbuilt.toml``
    and the families read from the runtime's registries: ``builtin``, ``secret-source``,
    ``thinking``, ``mock-model``, ``extract-mode``), naming it in ``details.feature`` so check,
    ``--dry-run``, ``nika explain`` and the run say one thing (tests/runtime/test_unbuilt.py)."""
    return TaskError(NOT_BUILT, message, details={"feature": feature, **details})


@lru_cache(maxsize=1)
def unbuilt() -> dict[str, dict[str, Any]]:
    """The declared entries of ``runtime/unbuilt.toml``, by feature id."""
    import tomllib
    from pathlib import Path

    text = (Path(__file__).with_name("unbuilt.toml")).read_text(encoding="utf-8")
    return dict(tomllib.loads(text).get("features", {}))


def unbuilt_what(feature: str) -> str:
    """How messages name a declared feature (its ``what``)."""
    return str(unbuilt()[feature]["what"])
