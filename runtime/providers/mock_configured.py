"""The configured-response mock models (stdlib/providers-v0.1.md §mock): each reads its fixture
from engine configuration, never from the workflow, so the workflow stays portable.

* ``mock/mock-error`` fails every call with the error ``NIKA_MOCK_ERROR`` configures:
  ``{"code": …, "message": …, "transient": bool, "retry_after_ms": n}`` (``code`` defaults to
  NIKA-INFER-001, ``transient`` to false) — to test ``retry:``, ``on_error:`` and fallbacks.
* ``mock/mock-json`` answers with the JSON value ``NIKA_MOCK_JSON`` configures: the value itself
  when the task has a ``schema:``/``returns:`` (which then validates it: a fixture that misses
  the contract fails with NIKA-INFER-002, as a drifting model would), its JSON text otherwise.
* ``mock/mock-streaming`` streams the reply ``NIKA_MOCK_STREAMING`` configures, piece by piece,
  through the same path a wire adapter's stream takes (``infer_chunk`` events when the run has a
  live listener, :mod:`runtime.providers.stream`): a string (streamed a word at a time), a list of
  pieces, or ``{"chunks": [...], "thinking": [...], "tokens_in": n, "tokens_out": n}``. The reply
  is the pieces joined (decoded as JSON when the task has a ``schema:``, as a wire's would be);
  ``tokens_out`` defaults to its word count.

Each variable holds the fixture as JSON, or the path of a JSON file (``~`` expanded).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Mapping
from typing import Any

from runtime.errors import TaskError
from runtime.providers import stream
from runtime.providers.base import Request, Response

ERROR_VAR = "NIKA_MOCK_ERROR"
JSON_VAR = "NIKA_MOCK_JSON"
STREAMING_VAR = "NIKA_MOCK_STREAMING"
CONFIG = "NIKA-PROVIDER-001"
CONFIGURED = {"mock-error": ERROR_VAR, "mock-json": JSON_VAR, "mock-streaming": STREAMING_VAR}
# Every engine variable the mock provider reads (the scripted mock's too): what an executor that
# runs a model call elsewhere (the Dask workers) must carry for a `mock/*` model, and no more.
SCRIPT_VAR = "NIKA_MOCK_SCRIPT"  # the scripted mock's (runtime.providers.mock)
ENGINE_VARS = (SCRIPT_VAR, *CONFIGURED.values())


# Ours: the largest mock fixture or script file read (engine configuration, never a blob).
MOCK_FILE_BYTES = 16 * 1024 * 1024


def fixture(env: Mapping[str, str], model: str) -> Any:
    """The decoded fixture of ``mock/<model>``; a missing or unreadable one names its variable."""
    var = CONFIGURED[model]
    raw = env.get(var)
    if not raw or not raw.strip():
        raise TaskError(CONFIG, f"`mock/{model}` answers from a fixture in engine configuration, and {var} is not set")
    text = raw
    if not raw.lstrip().startswith(("[", "{", '"')) and not _is_json_scalar(raw):
        from checker.core.reader import FileReadError, read_file

        try:  # the one bounded reader: a regular file, capped, never blocking
            text = read_file(os.path.expanduser(raw.strip()), MOCK_FILE_BYTES).decode("utf-8", errors="replace")
        except FileReadError as exc:
            raise TaskError(CONFIG, f"{var} names `{raw.strip()}`, which cannot be read: {exc.reason}") from None
        except OSError as exc:
            raise TaskError(CONFIG, f"{var} names `{raw.strip()}`, which cannot be read: {exc.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise TaskError(CONFIG, f"the {var} fixture is not JSON: {exc}") from None


def _is_json_scalar(raw: str) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return False
    return True


def configured_error(env: Mapping[str, str]) -> TaskError:
    spec = fixture(env, "mock-error")
    if not isinstance(spec, dict) or not isinstance(spec.get("message"), str):
        raise TaskError(CONFIG, f'the {ERROR_VAR} fixture must be an object with a "message" (and "code", "transient")')
    code = spec.get("code", "NIKA-INFER-001")
    if not isinstance(code, str) or not code.startswith("NIKA-"):
        raise TaskError(CONFIG, f'the {ERROR_VAR} fixture\'s "code" must be a `NIKA-…` code, got {code!r}')
    details: dict[str, Any] = {"provider": "mock", "model": "mock-error"}
    if isinstance(spec.get("retry_after_ms"), int):
        details["retry_after_ms"] = spec["retry_after_ms"]
    return TaskError(code, spec["message"], bool(spec.get("transient", False)), details)


def configured_json(env: Mapping[str, str], request: Request) -> Response:
    value = fixture(env, "mock-json")
    text = json.dumps(value)
    n = len(text.split())
    out = value if request.schema is not None and not request.messages else text
    return Response(out, n, "mock_provider", 0, n, (), text, "stop")


def _pieces(value: Any, key: str) -> list[str]:
    if isinstance(value, str):
        return re.findall(r"\S+\s*|\s+", value)  # a word and the space after it, so the joins are exact
    if isinstance(value, list) and all(isinstance(p, str) for p in value):
        return list(value)
    raise TaskError(
        CONFIG,
        f"the {STREAMING_VAR} fixture's {key} must be a string or a list of strings"
        ' (or the fixture an object {"chunks": [...], "thinking": [...], "tokens_in": n, "tokens_out": n})',
    )


async def configured_streaming(env: Mapping[str, str], request: Request) -> Response:
    spec = fixture(env, "mock-streaming")
    doc = spec if isinstance(spec, dict) else {"chunks": spec}
    chunks = _pieces(doc.get("chunks"), '"chunks"')
    thinking = _pieces(doc.get("thinking", []), '"thinking"')
    counts = [doc.get(k, 0) for k in ("tokens_in", "tokens_out")]
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in counts):
        raise TaskError(CONFIG, f'the {STREAMING_VAR} fixture\'s "tokens_in"/"tokens_out" must be counts')
    sink = stream.sink()
    for channel, pieces in ((stream.THINKING, thinking), (stream.TEXT, chunks)):
        for piece in pieces:
            if sink is not None:
                sink.piece(channel, piece)
            await asyncio.sleep(0)  # each piece arrives on its own turn of the loop, as a wire's would
    text = "".join(chunks)
    t_in, t_out = counts[0], counts[1] if "tokens_out" in doc else len(text.split())
    value: Any = text
    if request.schema is not None and not request.messages:
        from runtime.providers.wire import schema_value

        value = schema_value(text, "mock/mock-streaming", {"provider": "mock", "model": "mock-streaming"})
    return Response(value, t_in + t_out, "mock_provider", t_in, t_out, (), text, "stop")
