"""The one redactor: every value that leaves the process (journal frames, events and the progress
view built from them, the run report with its task outputs and errors) passes through it.

Spec 01 §secrets: a resolved secret is masked wherever it would be shown; sanctioning an egress
clears the send, not the capture, so outputs stay tainted and masked. A secret at least
``MIN_SUBSTRING`` characters long is masked wherever it appears inside a string (also in its
JSON-escaped spelling); a shorter one would shred every string that happens to contain its
characters, so it is masked only where a whole value equals it. What a subprocess re-emits after
transforming a secret (encoded, reversed, split) cannot be followed; SECURITY.md says so.
"""

from __future__ import annotations

import json
from collections.abc import Set
from typing import Any

MASK = "«redacted»"
MIN_SUBSTRING = 8


class Redactor:
    """Masks the secrets in ``secrets`` (a live set the run adds to as secrets are resolved)."""

    def __init__(self, secrets: Set[str]) -> None:
        self._secrets = secrets

    @property
    def idle(self) -> bool:
        """No secret resolved yet: every value passes unchanged (asked per journal frame)."""
        return not self._secrets

    def __call__(self, value: Any) -> Any:
        if not self._secrets:
            return value
        return self._walk(value, self._needles())

    def settle(self, text: str) -> tuple[str, str]:
        """A growing text shown in pieces (a streamed reply): the part that can be shown now,
        masked, and the raw tail held back because it may be the start of a secret the next piece
        completes (a secret split across two pieces is then masked whole in the later one)."""
        if not self._secrets:
            return text, ""
        needles = self._needles()
        shown = self._text(text, needles)
        last = shown.rfind(MASK)
        tail = len(shown) - (last + len(MASK) if last >= 0 else 0)  # raw text after the last mask
        held = 0
        for s in needles[0]:
            for n in range(min(len(s) - 1, tail), held, -1):
                if shown.endswith(s[:n]):
                    held = n
                    break
        return (shown[: len(shown) - held], shown[len(shown) - held :]) if held else (shown, "")

    def _needles(self) -> tuple[list[str], set[str]]:
        long: set[str] = set()
        whole: set[str] = set()
        for s in self._secrets:
            if not s:
                continue
            whole.add(s)
            if len(s) >= MIN_SUBSTRING:
                long.add(s)
                long.add(json.dumps(s)[1:-1])
        return sorted(long, key=len, reverse=True), whole

    def _walk(self, value: Any, needles: tuple[list[str], set[str]]) -> Any:
        if isinstance(value, str):
            return self._text(value, needles)
        if isinstance(value, list | tuple):
            return [self._walk(v, needles) for v in value]
        if isinstance(value, dict):
            return {
                self._walk(k, needles) if isinstance(k, str) else k: self._walk(v, needles) for k, v in value.items()
            }
        return value

    @staticmethod
    def _text(text: str, needles: tuple[list[str], set[str]]) -> str:
        long, whole = needles
        if text in whole:
            return MASK
        for s in long:
            if s in text:
                text = text.replace(s, MASK)
        return text
