"""``raw`` (the body as UTF-8 text, refused when it is not) and ``jq`` (the body as JSON through
the runtime's one jq, :mod:`runtime.tools.jq`; the exactly-one-output law of 04 §bindings)."""

from __future__ import annotations

import json
from typing import Any

from runtime.extract import Page
from runtime.net.client import fail


def raw(page: Page, args: dict[str, Any]) -> str:
    try:
        return page.body.decode("utf-8")
    except UnicodeDecodeError:
        raise fail("the response body is not UTF-8 text, so `mode: raw` cannot return it") from None


async def jq_mode(page: Page, args: dict[str, Any]) -> Any:
    """Through the runtime's one jq (no view of the environment, a deadline, a killable worker)."""
    from runtime.tools.jq import evaluate
    from runtime.tools.jq_processes import JqTimeLimit

    program = str(args.get("jq") or ".")
    try:
        doc = json.loads(page.body)
    except ValueError:
        raise fail("the response is not JSON, so `mode: jq` cannot read it") from None
    try:
        results = await evaluate(program, doc)
    except ValueError as e:
        raise fail(f"the jq expression `{program}` failed: {e}") from None
    except JqTimeLimit:
        raise fail(f"the jq expression `{program}` ran past its time limit and was stopped") from None
    if len(results) != 1:
        raise fail(
            f"the jq expression `{program}` yielded {len(results)} values; it must yield exactly one "
            "(wrap a stream in `[ … ]`)",
            count=len(results),
        )
    return results[0]
