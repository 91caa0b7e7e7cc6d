"""Small helpers shared by the authority, secrets, policy and flow tests."""

from __future__ import annotations

from checker import compile_text
from checker.core.diagnostics import Diagnostic


def wf(body: str, head: str = "") -> str:
    return f"nika: v1\nworkflow:\n  id: t\n{head}tasks:\n{body}"


def diags(text: str, prefix: tuple[str, ...] = ("NIKA-AUTH", "NIKA-SEC", "NIKA-POLICY")) -> list[Diagnostic]:
    return [d for d in compile_text(text).diagnostics if (d.code or "").startswith(prefix)]


def codes(text: str) -> list[str]:
    return sorted(d.code or "" for d in diags(text))


def errors(text: str) -> list[str]:
    return sorted(d.code or d.rule or "" for d in compile_text(text).diagnostics if d.is_error)
