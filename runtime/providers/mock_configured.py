"""The configured-response mock models (stdlib/providers-v0.1.md §mock): each reads its fixture
from engine configuration, never from the workflow, so the workflow stays portable.

* ``mock/mock-error`` fails every call with the error ``NIKA_MOCK_ERROR`` configures:
  ``{"code": …, "message": …, "transient": bool, "retry_after_ms": n}`` (``code`` defaults to
  NIKA-INFER-001, ``transient`` to false) — to test ``retry:``, ``on_error:`` and fallbacks.
* ``mock/mock-json`` answers with the JSON value ``NIKA_MOCK_JSON`` configures: the value itself
  when the task has a ``schema:``/``returns:`` (which then validates it: a fixture that misses
  the contract fails with NIKA-INFER-002, as a drifting model would), its JSON text otherwise.

Each variable holds the fixture as JSON, or the path of a JSON file (``~`` expanded).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from runtime.errors import TaskError
from runtime.providers.base import Request, Response

ERROR_VAR = "NIKA_MOCK_ERROR"
JSON_VAR = "NIKA_MOCK_JSON"
CONFIG = "NIKA-PROVIDER-001"
CONFIGURED = {"mock-error": ERROR_VAR, "mock-json": JSON_VAR}


def fixture(env: Mapping[str, str], model: str) -> Any:
    """The decoded fixture of ``mock/<model>``; a missing or unreadable one names its variable."""
    var = CONFIGURED[model]
    raw = env.get(var)
    if not raw or not raw.strip():
        raise TaskError(CONFIG, f"`mock/{model}` answers from a fixture in engine configuration, and {var} is not set")
    text = raw
    if not raw.lstrip().startswith(("[", "{", '"')) and not _is_json_scalar(raw):
        try:
            with open(os.path.expanduser(raw.strip()), encoding="utf-8") as fh:
                text = fh.read()
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
