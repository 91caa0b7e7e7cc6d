"""The two deterministic refusals of the decision kernel (spec 11 §nika:decide)."""

from __future__ import annotations

BUNDLE_CODE = "NIKA-DECIDE-001"
SNAPSHOT_CODE = "NIKA-DECIDE-002"


class DecideError(ValueError):
    """A refusal: ``code`` is NIKA-DECIDE-001/002, ``where`` a JSON-pointer-like path into the input."""

    def __init__(self, code: str, message: str, where: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.message} (at {self.where})" if self.where else self.message


def bundle_error(message: str, where: str = "") -> DecideError:
    return DecideError(BUNDLE_CODE, message, where)


def snapshot_error(message: str, where: str = "") -> DecideError:
    return DecideError(SNAPSHOT_CODE, message, where)
