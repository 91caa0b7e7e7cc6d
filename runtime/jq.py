"""``output:`` jq bindings (04 §output bindings) through libjq, each program compiled once."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from runtime.errors import TaskError
from runtime.values import plain

NOT_ONE = "NIKA-VAR-002"
JQ_ERROR = "NIKA-VAR-004"


# jq reads the process environment through `$ENV` and `env`. A workflow has no view of it (spec 01
# §permits "zero env passthrough", §environment "composed, never inherited"), so every program runs
# under a prelude that rebinds both to `{}`. Wrapping the program in `( … )` also makes module
# directives (`import`/`include`, which read files from jq's search path) a compile error.
_PRELUDE = "def env: {}; {} as $ENV | ("
_COLUMN = re.compile(r"(line 1, column )(\d+)")


@lru_cache(maxsize=1024)
def compile_program(program: str) -> Any:
    """``program`` compiled by libjq with no view of the environment (ValueError if it does not
    compile). The one place the runtime compiles jq: ``nika:jq``, ``output:`` bindings and agent
    tool calls all come through here."""
    import jq

    try:
        return jq.compile(f"{_PRELUDE}{program}\n)")
    except ValueError as exc:
        message = str(exc).replace(_PRELUDE, "", 1)
        shifted = _COLUMN.sub(lambda m: f"{m.group(1)}{max(1, int(m.group(2)) - len(_PRELUDE))}", message)
        raise ValueError(shifted) from None


def run_binding(name: str, program: str, raw: Any) -> Any:
    """The one value ``program`` yields over ``raw`` (VAR-002 for none or several, VAR-004 on a jq error)."""
    try:
        results = compile_program(program).input_value(plain(raw)).all()
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
