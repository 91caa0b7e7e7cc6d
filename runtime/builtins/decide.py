"""``nika:decide``: the decision kernel (:mod:`checker.decide`) as a pure builtin (spec 11).

``bundle:`` is a path (read through the ``permits.fs`` read boundary, like ``nika:read``) or the
bundle inline; ``evidence:`` is the EvidenceSnapshot. The output is the Decision Receipt. A refusal
is NIKA-DECIDE-001 (bundle) or NIKA-DECIDE-002 (snapshot), with the JSON path that failed.
"""

from __future__ import annotations

from typing import Any

from checker.decide import BUNDLE_CODE, DecideError, evaluate
from checker.decide.canonical import blake3_hex
from checker.decide.load import load_json
from runtime.builtins import BuiltinContext, builtin
from runtime.builtins._support import need
from runtime.errors import TaskError

DECIDE = "nika:decide"


@builtin(DECIDE)
async def decide(args: dict[str, Any], ctx: BuiltinContext) -> dict[str, Any]:
    """The receipt for ``evidence`` under ``bundle``."""
    bundle = need(args, DECIDE, "bundle", (str, dict))
    snapshot = need(args, DECIDE, "evidence", dict)
    try:
        if isinstance(bundle, str):
            target = ctx.resolve_read(bundle)
            from checker.core.reader import FileReadError, read_file_async
            from checker.parse.nodes import MAX_DOCUMENT_BYTES

            try:  # the one bounded reader: a regular file, capped, off the event loop
                data = await read_file_async(str(target), MAX_DOCUMENT_BYTES)
            except FileReadError as e:
                raise DecideError(BUNDLE_CODE, f"cannot read the bundle {bundle}: {e.reason}") from None
            except OSError as e:
                raise DecideError(BUNDLE_CODE, f"cannot read the bundle {bundle}: {e.strerror or e}") from None
            bundle = load_json(data, BUNDLE_CODE, f"the bundle {bundle}")
        receipt = evaluate(bundle, snapshot)
    except DecideError as e:
        raise TaskError(e.code, str(e), details={"where": e.where} if e.where else {}) from None
    ctx.emit(
        {
            "type": "decide",
            "task": ctx.task_id,
            "outcome": receipt["outcome"],
            "bundle": receipt["bundle"],
            "receipt_blake3": blake3_hex(receipt),
        }
    )
    return receipt
