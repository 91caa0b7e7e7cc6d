"""The one redactor: every value that leaves the process (journal frames, the events and the
progress view built from them, OpenTelemetry spans, the run report with its task outputs and
errors) passes through it.

Spec 04 §the masking boundary: the engine masks its own observability surface (logs, traces,
journal, ``nika:inspect`` output); spec 01 §secrets: sanctioning an egress clears the send, not
the capture, so outputs stay tainted and masked.

A secret is masked **by value**, wherever it appears inside a string, in every spelling the engine
itself could have given it (:func:`forms_of`): raw; JSON-escaped (ASCII and UTF-8, once and twice,
as a value journaled inside a JSON field is); percent-encoded (a URL path or query, a form body);
and base64 at any alignment (a ``Basic`` authorization built from ``user:secret``, ``@base64`` of a
value that holds it), where the whole base64 word around it is masked, so no edge character of the
encoding is left to narrow the secret down. A secret shorter than :data:`MIN_SECRET_CHARS` cannot be
masked by value without masking unrelated text, so :mod:`runtime.guard.secrets` refuses to load one
(a value handed to the redactor directly that is shorter is masked only where a whole value equals
it). What a subprocess re-emits after transforming a secret another way (reversed, split, hashed)
cannot be followed; SECURITY.md says so.

:func:`carries` asks the same question of a request about to leave (the egress judge,
:mod:`runtime.net.egress`): what the redactor would mask is exactly what counts as carried.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Set
from functools import lru_cache
from typing import Any
from urllib.parse import quote, quote_plus

from checker.core.records import record

MASK = "«redacted»"
# The shortest secret a workflow may load: four characters (a PIN). Shorter values would mask
# every occurrence of one to three characters in every string the engine writes.
MIN_SECRET_CHARS = 4
_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")


@record(slots=False)
class Forms:
    """The spellings of one secret: ``literal`` ones are masked where they occur; ``b64`` ones are
    the base64 characters that depend on the secret's bytes alone (one per alignment and
    alphabet), and the whole base64 word around one is masked."""

    literal: tuple[str, ...]
    b64: tuple[str, ...]


@lru_cache(maxsize=256)
def forms_of(secret: str) -> Forms:
    """Every spelling of ``secret`` the engine could write (see the module docstring)."""
    literal: dict[str, None] = {secret: None}
    for ascii_only in (True, False):
        once = json.dumps(secret, ensure_ascii=ascii_only)[1:-1]
        literal[once] = None
        literal[json.dumps(once, ensure_ascii=ascii_only)[1:-1]] = None
    for enc in (quote(secret, safe=""), quote(secret), quote_plus(secret)):
        literal[enc] = None
    return Forms(tuple(sorted(literal, key=len, reverse=True)), _b64_cores(secret.encode("utf-8")))


def _b64_cores(raw: bytes) -> tuple[str, ...]:
    """For each of the three alignments a secret can take inside a base64-encoded text, the run of
    base64 characters whose six bits all come from the secret (in both alphabets)."""
    cores: dict[str, None] = {}
    n = len(raw)
    for k in range(3):
        text = base64.b64encode(b"\0" * k + raw + b"\0\0").decode("ascii")
        first = -(-8 * k // 6)  # the first character starting at or after the secret's first bit
        last = (8 * (k + n) - 6) // 6  # the last character ending at or before its last bit
        core = text[first : last + 1]
        if len(core) >= MIN_SECRET_CHARS:
            cores[core] = None
            cores[core.replace("+", "-").replace("/", "_")] = None
    return tuple(cores)


class Redactor:
    """Masks the secrets in ``secrets`` (a live set the run adds to as secrets are resolved)."""

    def __init__(self, secrets: Set[str]) -> None:
        self._secrets = secrets
        self._seen: frozenset[str] = frozenset()
        self._needles: tuple[tuple[str, ...], tuple[str, ...], frozenset[str]] = ((), (), frozenset())

    @property
    def idle(self) -> bool:
        """No secret resolved yet: every value passes unchanged (asked per journal frame)."""
        return not self._secrets

    def __call__(self, value: Any) -> Any:
        if not self._secrets:
            return value
        return self._walk(value, self._current())

    def settle(self, text: str) -> tuple[str, str]:
        """A growing text shown in pieces (a streamed reply): the part that can be shown now,
        masked, and the raw tail held back because it may be the start of a secret the next piece
        completes (a secret split across two pieces is then masked whole in the later one)."""
        if not self._secrets:
            return text, ""
        needles = self._current()
        shown = _mask(text, needles)
        last = shown.rfind(MASK)
        tail = len(shown) - (last + len(MASK) if last >= 0 else 0)  # raw text after the last mask
        held = 0
        for s in (*needles[0], *needles[1]):
            for n in range(min(len(s) - 1, tail), held, -1):
                if shown.endswith(s[:n]):
                    held = n
                    break
        return (shown[: len(shown) - held], shown[len(shown) - held :]) if held else (shown, "")

    def _current(self) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]:
        if len(self._secrets) != len(self._seen) or not self._seen.issuperset(self._secrets):
            self._seen = frozenset(self._secrets)
            self._needles = needles(self._seen)
        return self._needles

    def _walk(self, value: Any, needles: tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]) -> Any:
        if isinstance(value, str):
            return _mask(value, needles)
        if isinstance(value, list | tuple):
            return [self._walk(v, needles) for v in value]
        if isinstance(value, dict):
            return {
                self._walk(k, needles) if isinstance(k, str) else k: self._walk(v, needles) for k, v in value.items()
            }
        return value


def needles(secrets: Iterable[str]) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """(literal spellings longest first, base64 cores, whole values) of ``secrets``."""
    literal: dict[str, None] = {}
    cores: dict[str, None] = {}
    whole: set[str] = set()
    for s in secrets:
        if not s:
            continue
        whole.add(s)
        if len(s) < MIN_SECRET_CHARS:
            continue
        f = forms_of(s)
        literal.update(dict.fromkeys(f.literal))
        cores.update(dict.fromkeys(f.b64))
    return tuple(sorted(literal, key=len, reverse=True)), tuple(cores), frozenset(whole)


def _mask(text: str, needles: tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]) -> str:
    literal, cores, whole = needles
    if text in whole:
        return MASK
    for s in literal:
        if s in text:
            text = text.replace(s, MASK)
    for core in cores:
        if core in text:
            text = _mask_b64_words(text, core)
    return text


def _mask_b64_words(text: str, core: str) -> str:
    """``text`` with every base64 word holding ``core`` replaced by the mask (scanned, not matched
    by a pattern: a long base64 run costs its length once)."""
    out: list[str] = []
    i = 0
    while True:
        j = text.find(core, i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        start = j
        while start > i and ord(text[start - 1]) < 128 and ord(text[start - 1]) in _B64:
            start -= 1
        end = j + len(core)
        while end < len(text) and ord(text[end]) < 128 and ord(text[end]) in _B64:
            end += 1
        while end < len(text) and text[end] == "=":
            end += 1
        out.append(text[i:start])
        out.append(MASK)
        i = end


def carries(secret: str, texts: Iterable[str | bytes]) -> bool:
    """Whether any of ``texts`` holds ``secret`` in a spelling the redactor masks (a request
    about to leave, judged by :mod:`runtime.net.egress`)."""
    f = forms_of(secret)
    spellings = (*f.literal, *f.b64)
    encoded = tuple(s.encode("utf-8") for s in spellings)
    for t in texts:
        if isinstance(t, str):
            if any(s in t for s in spellings):
                return True
        elif any(s in t for s in encoded):
            return True
    return False
