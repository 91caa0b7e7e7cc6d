"""jq in the runtime (04 §output bindings, ``nika:jq``): compiled once here, evaluated with a
deadline in a killable worker (:mod:`runtime.tools.jq_processes`)."""

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
        return jq.compile(wrapped(program))
    except ValueError as exc:
        message = str(exc).replace(_PRELUDE, "", 1)
        shifted = _COLUMN.sub(lambda m: f"{m.group(1)}{max(1, int(m.group(2)) - len(_PRELUDE))}", message)
        raise ValueError(shifted) from None


def wrapped(program: str) -> str:
    """The text libjq really compiles: ``program`` under the empty-environment prelude."""
    return f"{_PRELUDE}{program}\n)"


async def evaluate(program: str, value: Any, limit_s: float | None = None) -> list[Any]:
    """Every value ``program`` yields over ``value`` (already plain JSON): ValueError when it does
    not compile or fails, :class:`runtime.tools.jq_processes.JqTimeLimit` when it runs out of time."""
    from runtime.tools.jq_processes import evaluate as in_worker

    compile_program(program)  # compile errors, with their columns, come from here
    return await in_worker(wrapped(program), value, limit_s)


async def run_binding(name: str, program: str, raw: Any) -> Any:
    """The one value ``program`` yields over ``raw`` (VAR-002 for none or several, VAR-004 on a jq
    error or when it runs past :data:`runtime.guard.limits.JQ_TIME_LIMIT_S`)."""
    from runtime.guard import limits
    from runtime.tools.jq_processes import JqTimeLimit

    try:
        results = await evaluate(program, plain(raw))
    except ValueError as exc:
        raise TaskError(
            JQ_ERROR, f"output binding `{name}` (`{program}`) failed: {exc}", details={"binding": name}
        ) from None
    except JqTimeLimit:
        raise TaskError(
            JQ_ERROR,
            f"output binding `{name}` (`{program}`) ran longer than {limits.JQ_TIME_LIMIT_S:g}s and was stopped",
            details={"binding": name, "time_limit_s": limits.JQ_TIME_LIMIT_S},
        ) from None
    if len(results) != 1:
        raise TaskError(
            NOT_ONE,
            f"output binding `{name}` (`{program}`) yielded {len(results)} values; it must yield exactly one "
            "(wrap a stream in `[ … ]` or pick one with `first(…)`)",
            details={"binding": name, "count": len(results)},
        )
    return results[0]
