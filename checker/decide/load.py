"""Parse a bundle or snapshot JSON text strictly: duplicate keys and NaN/Infinity are refusals."""

from __future__ import annotations

import json
from typing import Any

from checker.decide.errors import DecideError

MAX_BYTES = 16 * 1024 * 1024


def load_json(data: bytes | str, code: str, what: str) -> Any:
    """The parsed document, or :class:`DecideError` ``code`` naming why ``what`` is not JSON."""
    if len(data) > MAX_BYTES:
        raise DecideError(code, f"{what} is {len(data)} bytes; the kernel reads at most {MAX_BYTES}")

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                raise DecideError(code, f"{what} repeats the key `{k}`")
            out[k] = v
        return out

    def constant(name: str) -> Any:
        raise DecideError(code, f"{what} holds `{name}`, which is not a number the kernel takes")

    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except UnicodeDecodeError:
        raise DecideError(code, f"{what} is not UTF-8") from None
    except json.JSONDecodeError as e:
        raise DecideError(code, f"{what} is not JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    except RecursionError:
        raise DecideError(code, f"{what} nests too deeply") from None
