"""``nika run``'s entry into the engine: a run of one compiled workflow (03 §DAG execution model).

The engine lives in :mod:`runtime.engine`, one module per job (records, the ready set, the
dispatch pipeline, retry, ``for_each``, ``on_finally``, scope, events, the verb context and the
executor seam). This module names what callers use.
"""

from __future__ import annotations

from runtime.engine.executor import EffectCall, EffectResult, Executor, LocalExecutor
from runtime.engine.records import DEFAULT_MAX_PARALLEL, Options, RunResult, TaskRecord
from runtime.engine.run import Run

__all__ = [
    "DEFAULT_MAX_PARALLEL",
    "EffectCall",
    "EffectResult",
    "Executor",
    "LocalExecutor",
    "Options",
    "Run",
    "RunResult",
    "TaskRecord",
]
