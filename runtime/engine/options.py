"""How to run (:class:`Options`): concurrency, the model override, where traces go, nesting, the
executor, a resume and its answers, the spend cap, and what a child workflow inherits from its caller."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checker.core.records import field, record

if TYPE_CHECKING:
    from runtime.durable.resume_index import ResumeIndex
    from runtime.engine.executor import ExecutorFactory

DEFAULT_MAX_PARALLEL = 64
MAX_DEPTH = 8


@record(frozen=False, slots=False)
class Options:
    """How to run: concurrency, the model override, where traces go, nesting, and the executor
    that performs effects (a name from :data:`runtime.engine.executor.EXECUTORS`, or a factory)."""

    max_parallel: int = DEFAULT_MAX_PARALLEL
    model: str | None = None
    trace_dir: Path | None = Path(".nika/traces")
    interactive: bool = False
    depth: int = 0
    max_depth: int = MAX_DEPTH
    call_stack: tuple[str, ...] = ()
    on_event: Callable[[dict[str, Any]], None] | None = None
    engine_env: Mapping[str, str] | None = None
    executor: str | ExecutorFactory = "local"
    resume: ResumeIndex | None = None  # `--resume TRACE` (runtime.durable.resume_index): matched tasks cache-hit
    # `--task ID` (runtime.durable.selection): the tasks this run may run or reuse (the rest are not scheduled),
    # and the named ones, whose outputs are the run's
    select: frozenset[str] | None = None
    named: tuple[str, ...] = ()
    answers: dict[str, Any] = field(default_factory=dict)  # `--answer TASK=VALUE` for paused prompts
    prompter: Callable[[dict[str, Any]], Any] | None = None  # asks a person (a TTY), runtime.durable.gate
    max_cost_usd: float | None = None  # `--max-cost-usd`: the run's spend cap (runtime.providers.cost)
    parent_meter: Any = None  # a child workflow's caller's runtime.providers.cost.CostMeter (its cap binds the child)
    # a child workflow's caller's runtime.durable.gate.Gate (its approvals count against the caller)
    parent_gate: Any = None
    mcp_config: Any = None  # the root run's MCP table (runtime.tools.mcp_config.McpConfig), shared with child runs
    # ticket digest -> the runtime.durable.ticket.Claim an `--answer` spent it with (claimed before the run)
    claims: dict[str, Any] = field(default_factory=dict)
    # a child workflow's deterministic caller's runtime.determinism.Determinism (its clock binds the child)
    determinism: Any = None
    seed: int | None = None  # with `determinism`: the child's seed, from the caller's `child` stream
    # `nika dap` (runtime.engine.debug.Debugger): the hooks that hold a task before its effect; a child run
    # gets its caller's, with the caller's run key and invoking task as `debug_parent`
    debugger: Any = None
    debug_parent: tuple[int, str] | None = None
