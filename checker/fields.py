"""Closed field sets of the v1 grammar (01, 02, 03, 05), written once as data.

The compiler reads them to refuse unknown keys with a did-you-mean; the language server reads
them for key completion and hover. Each entry is ``name -> one-line description``.
"""

from __future__ import annotations

import difflib

ENVELOPE: dict[str, str] = {
    "nika": "Grammar version marker; always `v1`.",
    "workflow": "Identity of the workflow: `{id, description?}`.",
    "model": "Default `<provider>/<name>` for infer and agent tasks.",
    "types": "Named types (PascalCase) usable wherever a type is expected.",
    "inputs": "Values supplied per run (`--var name=value`), each with a `type`.",
    "config": "Deployment-supplied, non-sensitive settings, each with a `type`.",
    "const": "Constants fixed in the file: a bare literal or `{type, value}`.",
    "secrets": "Store references (`source: vault|env|file`), never inline values.",
    "permits": "The authority the workflow asks for: fs, net, exec, tools, env.",
    "run": "Determinism settings: `entropy` and `clock`.",
    "policy": "Organisation rules judged at check time.",
    "tasks": "The tasks, keyed by snake_case id.",
    "outputs": "Values the workflow returns, each a `${{ }}` expression.",
}

WORKFLOW: dict[str, str] = {
    "id": "Kebab-case identifier of the workflow (`^[a-z][a-z0-9-]*$`).",
    "description": "Free text for humans; ignored by the engine.",
}

TASK: dict[str, str] = {
    "with": "Named data bindings; each `tasks.X.…` reference creates an edge from X.",
    "after": "Control edges: `{producer: success|failure|skipped|terminal}`.",
    "when": "A boolean `${{ }}` guard over local values; false skips the task.",
    "for_each": "Fan out over an array; `item` and `index` are in scope in the body.",
    "max_parallel": "Upper bound on concurrent iterations of a `for_each`.",
    "fail_fast": "Stop remaining iterations after the first unrecovered failure (default true).",
    "retry": "Retry policy for transient errors: `{max_attempts, backoff_ms, …}`.",
    "on_error": "Recovery: exactly one of `recover`, `skip`, `fail_workflow`.",
    "timeout": 'Quoted Go duration such as "30s" or "1h30m"; at most 24h.',
    "on_finally": "Cleanup steps that run after the task settles.",
    "output": "Named jq bindings over the task's output, read as `tasks.X.<name>`.",
    "inert": "Why fetched code-bearing content is treated as inert data.",
    "declassify": "Declassify a binding for permit checks: `[{from, to: trusted, because}]`.",
    "returns": "The output type contract of the task.",
    "infer": "One model call.",
    "exec": "Run one process.",
    "invoke": "Call a builtin `nika:*` tool, an `mcp:` tool or a child workflow.",
    "agent": "A bounded tool-calling loop.",
}

INFER: dict[str, str] = {
    "prompt": "The user prompt (required).",
    "system": "The system prompt.",
    "model": "`<provider>/<name>`; defaults to the envelope `model:`.",
    "temperature": "Sampling temperature, 0 to 2.",
    "max_tokens": "Upper bound on generated tokens.",
    "schema": "JSON Schema the structured output must satisfy.",
    "thinking": "Extended reasoning: `{enabled, budget_tokens}`.",
    "vision": "Images to attach: `[{source: file|url, path|url}]`.",
}

EXEC: dict[str, str] = {
    "command": "Argument vector run without a shell, e.g. `[git, status]`.",
    "shell": "A command line run by `/bin/sh -c`.",
    "cwd": "Working directory.",
    "env": "Extra environment variables (string values).",
    "stdin": "Text written to the process's standard input.",
    "capture": "What becomes the output: stdout (default), stderr, combined or structured.",
    "decode": "How captured text is decoded: text (default), json, jsonl or bytes.",
}

INVOKE: dict[str, str] = {
    "tool": "`nika:<builtin>` or `mcp:<server>/<tool>`.",
    "args": "Arguments of the tool, as a mapping.",
    "workflow": "Path of a child workflow (instead of `tool`).",
}

AGENT: dict[str, str] = {
    "prompt": "The task given to the agent (required).",
    "system": "The system prompt.",
    "model": "`<provider>/<name>`; defaults to the envelope `model:`.",
    "tools": "Tool globs the agent may call; nothing is allowed by default.",
    "skills": "Static paths to SKILL.md files loaded into the agent.",
    "max_turns": "Turn budget (default 10).",
    "max_tokens_total": "Token budget for the whole loop.",
    "temperature": "Sampling temperature, 0 to 2.",
    "schema": "JSON Schema the final result must satisfy.",
}

VERB_FIELDS: dict[str, dict[str, str]] = {"infer": INFER, "exec": EXEC, "invoke": INVOKE, "agent": AGENT}

# Closed value sets of single fields (01, 02, 05), read by the compiler, the schema export and
# completion.
CAPTURE_MODES = ("stdout", "stderr", "combined", "structured")
DECODE_MODES = ("text", "json", "jsonl", "bytes")
SECRET_SOURCES = ("vault", "env", "file")
BACKOFF_STRATEGIES = ("fixed", "linear", "exponential")
ENTROPY_MODES = ("none", "ambient")
CLOCK_MODES = ("system", "virtual")

AFTER_PREDICATES: dict[str, str] = {
    "success": "the producer succeeded",
    "failure": "the producer failed",
    "skipped": "the producer was skipped",
    "terminal": "the producer settled, whatever the outcome",
}

RETRY: dict[str, str] = {
    "max_attempts": "Total attempts including the first (required, ≥ 1).",
    "backoff_ms": "Initial delay between attempts in milliseconds (default 1000).",
    "backoff_strategy": "fixed, linear or exponential (default).",
    "backoff_max_ms": "Cap on the delay (default 60000).",
    "jitter": "Randomise delays (default true).",
    "on_codes": "Retry only these NIKA codes.",
}

ON_ERROR: dict[str, str] = {
    "recover": "Value that replaces the output; the task then succeeds.",
    "skip": "`true`: settle the task as skipped, keeping its error.",
    "fail_workflow": "`true`: fail the whole workflow.",
    "on_codes": "Apply the action only for these NIKA codes.",
}

FINALLY_STEP: dict[str, str] = {
    "when": "Guard for the cleanup step.",
    "timeout": "Go duration for the step (default 30s).",
    "infer": "One model call.",
    "exec": "Run one process.",
    "invoke": "Call a tool.",
    "agent": "A bounded tool-calling loop.",
}

INPUT: dict[str, str] = {
    "type": "The value's type (required).",
    "required": "Whether a value must be supplied.",
    "default": "Value used when none is supplied; must fit the type.",
    "description": "Free text for humans.",
}

CONFIG: dict[str, str] = {
    "type": "The value's type (required).",
    "default": "Value used when none is supplied; must fit the type.",
    "description": "Free text for humans.",
}

TYPED_CONST: dict[str, str] = {
    "type": "The constant's type.",
    "value": "The constant's value; must fit the type.",
    "description": "Free text for humans.",
}

SECRET: dict[str, str] = {
    "source": "Where the secret lives: vault, env or file.",
    "key": "Key in the vault or name of the environment variable.",
    "path": "File path (with `source: file`).",
    "egress": "Sinks the secret may flow to: `[{to, host?|host_from_self?}]`.",
}

EGRESS: dict[str, str] = {
    "to": "The sink the secret may reach.",
    "host": "Literal destination host.",
    "host_from_self": "The destination is the secret's own value.",
}

OUTPUT: dict[str, str] = {
    "value": "A `${{ }}` expression (required).",
    "type": "Type the value must fit at the end of the run.",
    "description": "Free text for humans.",
}

PERMITS: dict[str, str] = {
    "fs": "File-system globs: `{read: [...], write: [...]}`.",
    "net": "Network hosts: `{http: [...]}`.",
    "exec": "`true`, `false` or a list of allowed programs.",
    "tools": "Tool id globs that may be invoked.",
    "env": "Environment variable names passed to processes.",
}
PERMITS_FS = {"read": "Readable path globs.", "write": "Writable path globs."}
PERMITS_NET = {"http": "Exact host names (or the bare `*`)."}

RUN: dict[str, str] = {
    "entropy": "none, ambient or `{seeded: N}`.",
    "clock": "system or virtual.",
}

POLICY: dict[str, str] = {
    "require": "`{human_gate_before: [effect…]}`.",
    "forbid": "`{exec_after: [effect…]}`.",
    "allow": "`{providers: [...]}`.",
    "limits": "`{max_tasks: N}`.",
    "prefer": "`{providers: [...]}` (advisory).",
    "optimize": "cost, latency or quality (advisory).",
    "endorsement": "`solo`.",
}
POLICY_SUB: dict[str, dict[str, str]] = {
    "require": {"human_gate_before": "Effects that need a human gate first."},
    "forbid": {"exec_after": "Effects after which no exec may run."},
    "allow": {"providers": "Allowed model providers."},
    "limits": {"max_tasks": "Upper bound on the number of tasks."},
    "prefer": {"providers": "Preferred model providers."},
}

# Keys other tools use for what Nika spells differently: key -> teaching.
FOREIGN_TASK_KEYS: dict[str, str] = {
    "depends_on": "data edges come from `with:` references and control edges from `after:`",
    "needs": "use `after: {task: success}` for ordering, or `with:` to pass data",
    "if": "use `when: ${{ … }}`",
    "retries": "use `retry: {max_attempts: N}`",
    "continue-on-error": "use `on_error: {skip: true}`",
    "continue_on_error": "use `on_error: {skip: true}`",
    "trigger_rule": "use `after:` predicates (success, failure, skipped, terminal)",
    "on_failure_callback": "use a task with `after: {task: failure}`",
    "timeout_seconds": 'use `timeout: "30s"`',
    "run": "use `exec: {shell: …}` or `exec: {command: [...]}`",
    "steps": "each step is its own task under `tasks:`",
    "name": "the map key is the task's identity; put prose in a YAML comment",
    "description": "put prose in a YAML comment",
}

FOREIGN_ENVELOPE_KEYS: dict[str, str] = {
    "schedule_interval": "scheduling is outside Nika; trigger `nika run` from your scheduler",
    "schedule": "scheduling is outside Nika; trigger `nika run` from your scheduler",
    "cron": "scheduling is outside Nika; trigger `nika run` from your scheduler",
    "default_args": "set defaults per task (`retry:`, `timeout:`) or use `const:`",
    "dag_id": "use `workflow: {id: …}`",
    "name": "use `workflow: {id: …, description: …}`",
    "version": "the grammar marker is `nika: v1`",
    "steps": "use `tasks:`, a map keyed by task id",
    "jobs": "use `tasks:`, a map keyed by task id",
    "include": "composition goes through `invoke: {workflow: path}`",
    "import": "composition goes through `invoke: {workflow: path}`",
    "assert": "assertions are not part of the v1 envelope",
}


def did_you_mean(word: str, choices: list[str] | tuple[str, ...] | dict[str, str]) -> str | None:
    """The closest valid spelling of ``word`` among ``choices``, if one is close enough."""
    pool = list(choices)
    hits = difflib.get_close_matches(word, pool, n=1, cutoff=0.75)
    if not hits:
        lowered = {c.lower(): c for c in pool}
        if word.lower() in lowered:
            return lowered[word.lower()]
        hits = difflib.get_close_matches(word.lower().replace("-", "_"), pool, n=1, cutoff=0.7)
    return hits[0] if hits else None
