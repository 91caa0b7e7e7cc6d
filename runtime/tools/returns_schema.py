"""``returns:`` on ``infer:``/``agent:`` as the structured-output contract (09 §returns per verb).

The checker reads ``returns:`` as a Nika type; the model lane needs the JSON Schema it lowers to,
which is then sent and validated exactly as a ``schema:`` is (NIKA-INFER-002 when a reply does
not fit). ``schema:`` and ``returns:`` on one task is NIKA-TYPE-003 at check, so at most one is set.
"""

from __future__ import annotations

from typing import Any


def returns_schema(wf: Any, tid: str) -> dict[str, Any] | None:
    """The JSON Schema of task ``tid``'s ``returns:`` in workflow ``wf``, or ``None`` when it declares none."""
    task = wf.tasks.get(tid)
    if task is None or task.returns is None:
        return None
    from checker.model.typesys import declared, lower

    return lower(declared(task.returns, wf.types))
