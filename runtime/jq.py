"""``output:`` jq bindings (04 §output bindings) through libjq, each program compiled once."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from runtime.errors import TaskError
from runtime.values import plain

NOT_ONE = "NIKA-VAR-002"
JQ_ERROR = "NIKA-VAR-004"


@lru_cache(maxsize=1024)
def _compiled(program: str) -> Any:
    import jq

    return jq.compile(program)


def run_binding(name: str, program: str, raw: Any) -> Any:
    """The one value ``program`` yields over ``raw`` (VAR-002 for none or several, VAR-004 on a jq error)."""
    try:
        results = _compiled(program).input_value(plain(raw)).all()
    except ValueError as exc:
        raise TaskError(
            JQ_ERROR, f"output binding `{name}` (`{program}`) failed: {exc}", details={"binding": name}
        ) from None
    if len(results) != 1:
        raise TaskError(
            NOT_ONE,
            f"output binding `{name}` (`{program}`) yielded {len(results)} values; it must yield exactly one "
            "(wrap a stream in `[ … ]` or pick one with `first(…)`)",
            details={"binding": name, "count": len(results)},
        )
    return results[0]
