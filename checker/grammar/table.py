"""The v1 grammar as one table: every field of the envelope, tasks, verb bodies and blocks.

Each :class:`Field` says what a field holds (its :class:`Kind`), its one-line doc, its closed
values, default, numeric range, whether a ``${{ … }}`` string may stand in for the value (then
it is judged at run time), whether it is required and which fields it excludes. Everything
else is generated from here:

* the compiler's unknown-key, closed-value, type and range checks (:mod:`checker.compiler`);
* the JSON Schema of ``nika schema`` (:mod:`checker.views.workflow_schema`);
* hover and key/value completion in the language server.

:data:`NESTING` says which block holds which (``tasks.<id>.retry`` is a :data:`RETRY`), and
:func:`block_at` answers it for a key path: the language server's key completion and hover, the
schema export and the grammar parity tests all walk it.

What one table cannot say (references, the graph, value-dependent rules such as the secret
source/`key`/`path` pairing) stays with the compiler's dedicated code and the rules.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final

from checker.core.records import field as dataclass_field
from checker.core.records import record


class Kind(StrEnum):
    """What a field holds."""

    STRING = "string"  # any string (a template is a string too)
    TEXT = "text"  # a non-empty string
    BOOL = "bool"
    TRUE = "true"  # only the literal `true` (an on_error action switch)
    INT = "int"
    NUMBER = "number"
    ENUM = "enum"  # one string of `values`
    DURATION = "duration"  # a quoted Go duration, positive, at most 24h
    STRINGS = "strings"  # a list of strings
    MAPPING = "mapping"  # a mapping whose shape is checked by dedicated code
    LIST = "list"  # a list whose items are checked by dedicated code
    SCHEMA = "schema"  # a JSON Schema object
    TYPE = "type"  # a TypeExpr (09)
    MODEL = "model"  # `<provider>/<name>`
    ANY = "any"  # any value


SCALAR_KINDS: Final = frozenset(
    {Kind.STRING, Kind.TEXT, Kind.BOOL, Kind.TRUE, Kind.INT, Kind.NUMBER, Kind.ENUM, Kind.DURATION}
)

_MISSING: Final = object()


@record
class Field:
    """One field of a block."""

    name: str
    doc: str
    kind: Kind = Kind.ANY
    values: tuple[str, ...] = ()
    default: Any = _MISSING
    minimum: float | None = None
    maximum: float | None = None
    template: bool = False
    required: bool = False
    excludes: tuple[str, ...] = ()

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    def expected(self) -> str:
        """What the field takes, as a noun phrase for messages and hover."""
        k = self.kind
        if k is Kind.ENUM:
            return "one of " + ", ".join(self.values)
        if k in (Kind.INT, Kind.NUMBER):
            noun = "an integer" if k is Kind.INT else "a number"
            if self.minimum is not None and self.maximum is not None:
                noun += f" from {_num(self.minimum)} to {_num(self.maximum)}"
            elif self.minimum is not None:
                noun += f" ≥ {_num(self.minimum)}"
            return noun
        return {
            Kind.STRING: "a string",
            Kind.TEXT: "a non-empty string",
            Kind.BOOL: "true or false",
            Kind.TRUE: "`true`",
            Kind.DURATION: 'a quoted duration such as "30s"',
            Kind.STRINGS: "a list of strings",
            Kind.MAPPING: "a mapping",
            Kind.LIST: "a list",
            Kind.SCHEMA: "a JSON Schema object",
            Kind.TYPE: "a type",
            Kind.MODEL: "a `<provider>/<name>` string",
            Kind.ANY: "a value",
        }[k]


@record
class Block:
    """A closed set of fields (``additionalProperties: false``)."""

    what: str  # how messages name it: "task `x`" is built by the caller; here e.g. "`infer:`"
    fields: tuple[Field, ...]
    unknown_code: str = "NIKA-PARSE-005"
    value_code: str = "NIKA-PARSE-019"
    one_of: tuple[str, ...] = ()  # exactly one of these fields must be written (a tagged union)
    _by_name: dict[str, Field] = dataclass_field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_name.update((f.name, f) for f in self.fields)

    def get(self, name: str) -> Field | None:
        return self._by_name.get(name)

    def __getitem__(self, name: str) -> Field:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    @property
    def docs(self) -> dict[str, str]:
        """``name -> doc`` in declaration order (completion and hover read this)."""
        return {f.name: f.doc for f in self.fields}

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


# -- closed vocabularies ---------------------------------------------------------------------

VERBS: Final = ("infer", "exec", "invoke", "agent")
CAPTURE_MODES: Final = ("stdout", "stderr", "combined", "structured")
DECODE_MODES: Final = ("text", "json", "jsonl", "bytes")
SECRET_SOURCES: Final = ("vault", "env", "file")
BACKOFF_STRATEGIES: Final = ("fixed", "linear", "exponential")
ENTROPY_MODES: Final = ("none", "ambient")
CLOCK_MODES: Final = ("system", "virtual")
OPTIMIZE_GOALS: Final = ("cost", "latency", "quality")
ENDORSEMENTS: Final = ("solo",)
VISION_SOURCES: Final = ("file", "url")
DEFAULT_FINALLY_TIMEOUT_MS: Final = 30_000.0
DEFAULT_MAX_TURNS: Final = 10

# -- the envelope ----------------------------------------------------------------------------

ENVELOPE = Block(
    "the workflow envelope",
    (
        Field("nika", "Grammar version marker; always `v1`.", Kind.ENUM, values=("v1",), required=True),
        Field("workflow", "Identity of the workflow: `{id, description?}`.", Kind.MAPPING, required=True),
        Field("model", "Default `<provider>/<name>` for infer and agent tasks.", Kind.MODEL, template=True),
        Field("types", "Named types (PascalCase) usable wherever a type is expected.", Kind.MAPPING),
        Field("inputs", "Values supplied per run (`--var name=value`), each with a `type`.", Kind.MAPPING),
        Field("config", "Deployment-supplied, non-sensitive settings, each with a `type`.", Kind.MAPPING),
        Field("const", "Constants fixed in the file: a bare literal or `{type, value}`.", Kind.MAPPING),
        Field("secrets", "Store references (`source: vault|env|file`), never inline values.", Kind.MAPPING),
        Field("permits", "The authority the workflow asks for: fs, net, exec, tools, env.", Kind.MAPPING),
        Field("run", "Determinism settings: `entropy` and `clock`.", Kind.MAPPING),
        Field("policy", "Organisation rules judged at check time.", Kind.MAPPING),
        Field("tasks", "The tasks, keyed by snake_case id.", Kind.MAPPING, required=True),
        Field("outputs", "Values the workflow returns, each a `${{ }}` expression.", Kind.MAPPING),
    ),
)

WORKFLOW = Block(
    "`workflow:`",
    (
        Field("id", "Kebab-case identifier of the workflow (`^[a-z][a-z0-9-]*$`).", Kind.STRING, required=True),
        Field("description", "Free text for humans; ignored by the engine.", Kind.STRING),
    ),
)

INPUT = Block(
    "an input",
    (
        Field("type", "The value's type (required).", Kind.TYPE, required=True),
        Field("required", "Whether a value must be supplied.", Kind.BOOL),
        Field("default", "Value used when none is supplied; must fit the type.", Kind.ANY),
        Field("description", "Free text for humans.", Kind.STRING),
    ),
)

CONFIG = Block(
    "a config entry",
    (
        Field("type", "The value's type (required).", Kind.TYPE, required=True),
        Field("default", "Value used when none is supplied; must fit the type.", Kind.ANY),
        Field("description", "Free text for humans.", Kind.STRING),
    ),
)

TYPED_CONST = Block(
    "a typed constant",
    (
        Field("type", "The constant's type.", Kind.TYPE, required=True),
        Field("value", "The constant's value; must fit the type.", Kind.ANY, required=True),
        Field("description", "Free text for humans.", Kind.STRING),
    ),
)

SECRET = Block(
    "a secret",
    (
        Field("source", "Where the secret lives: vault, env or file.", Kind.ENUM, values=SECRET_SOURCES, required=True),
        Field("key", "Key in the vault or name of the environment variable.", Kind.STRING),
        Field("path", "File path (with `source: file`).", Kind.STRING),
        Field("egress", "Sinks the secret may flow to: `[{to, host?|host_from_self?}]`.", Kind.LIST),
    ),
)

EGRESS = Block(
    "an `egress:` entry",
    (
        Field("to", "The sink the secret may reach.", Kind.STRING, required=True),
        Field("host", "Literal destination host.", Kind.STRING, excludes=("host_from_self",)),
        Field("host_from_self", "The destination is the secret's own value.", Kind.BOOL, excludes=("host",)),
    ),
)

PERMITS = Block(
    "`permits:`",
    (
        Field("fs", "File-system globs: `{read: [...], write: [...]}`.", Kind.MAPPING),
        Field("net", "Network hosts: `{http: [...]}`.", Kind.MAPPING),
        Field("exec", "`true`, `false` or a list of allowed programs.", Kind.ANY),
        Field("tools", "Tool id globs that may be invoked.", Kind.STRINGS),
        Field("env", "Environment variable names passed to processes.", Kind.STRINGS),
    ),
)
PERMITS_FS = Block(
    "`permits.fs`",
    (Field("read", "Readable path globs.", Kind.STRINGS), Field("write", "Writable path globs.", Kind.STRINGS)),
)
PERMITS_NET = Block("`permits.net`", (Field("http", "Exact host names (or the bare `*`).", Kind.STRINGS),))

RUN = Block(
    "`run:`",
    (
        # also `{seeded: N}` (judged by the compiler's dedicated code)
        Field("entropy", "none, ambient or `{seeded: N}`.", Kind.ENUM, values=ENTROPY_MODES),
        Field("clock", "system or virtual.", Kind.ENUM, values=CLOCK_MODES),
    ),
)
SEEDED = Block(
    "`run.entropy`", (Field("seeded", "Seed (a non-negative integer).", Kind.INT, minimum=0, required=True),)
)

POLICY = Block(
    "`policy:`",
    (
        Field("require", "`{human_gate_before: [effect…]}`.", Kind.MAPPING),
        Field("forbid", "`{exec_after: [effect…]}`.", Kind.MAPPING),
        Field("allow", "`{providers: [...]}`.", Kind.MAPPING),
        Field("limits", "`{max_tasks: N}`.", Kind.MAPPING),
        Field("prefer", "`{providers: [...]}` (advisory).", Kind.MAPPING),
        Field("optimize", "cost, latency or quality (advisory).", Kind.ENUM, values=OPTIMIZE_GOALS),
        Field("endorsement", "`solo`.", Kind.ENUM, values=ENDORSEMENTS),
    ),
)
POLICY_SUB: dict[str, Block] = {
    "require": Block(
        "`policy.require`", (Field("human_gate_before", "Effects that need a human gate first.", Kind.STRINGS),)
    ),
    "forbid": Block("`policy.forbid`", (Field("exec_after", "Effects after which no exec may run.", Kind.STRINGS),)),
    "allow": Block("`policy.allow`", (Field("providers", "Allowed model providers.", Kind.STRINGS),)),
    "limits": Block(
        "`policy.limits`", (Field("max_tasks", "Upper bound on the number of tasks.", Kind.INT, minimum=1),)
    ),
    "prefer": Block("`policy.prefer`", (Field("providers", "Preferred model providers.", Kind.STRINGS),)),
}

OUTPUT = Block(
    "a workflow output",
    (
        Field("value", "A `${{ }}` expression (required).", Kind.STRING, required=True),
        Field("type", "Type the value must fit at the end of the run.", Kind.TYPE),
        Field("description", "Free text for humans.", Kind.STRING),
    ),
)

# -- tasks -----------------------------------------------------------------------------------

_VERB_DOCS = {
    "infer": "One model call.",
    "exec": "Run one process.",
    "invoke": "Call a builtin `nika:*` tool, an `mcp:` tool or a child workflow.",
    "agent": "A bounded tool-calling loop.",
}

TASK = Block(
    "a task",
    (
        Field("with", "Named data bindings; each `tasks.X.…` reference creates an edge from X.", Kind.MAPPING),
        Field("after", "Control edges: `{producer: success|failure|skipped|terminal}`.", Kind.MAPPING),
        Field("when", "A boolean `${{ }}` guard over local values; false skips the task.", Kind.BOOL, template=True),
        Field(
            "for_each", "Fan out over an array; `item` and `index` are in scope in the body.", Kind.LIST, template=True
        ),
        Field("max_parallel", "Upper bound on concurrent iterations of a `for_each`.", Kind.INT, minimum=1),
        Field(
            "fail_fast",
            "Stop remaining iterations after the first unrecovered failure (default true).",
            Kind.BOOL,
            default=True,
        ),
        Field("retry", "Retry policy for transient errors: `{max_attempts, backoff_ms, …}`.", Kind.MAPPING),
        Field("on_error", "Recovery: exactly one of `recover`, `skip`, `fail_workflow`.", Kind.MAPPING),
        Field("timeout", 'Quoted Go duration such as "30s" or "1h30m"; at most 24h.', Kind.DURATION),
        Field("on_finally", "Cleanup steps that run after the task settles.", Kind.LIST),
        Field("output", "Named jq bindings over the task's output, read as `tasks.X.<name>`.", Kind.MAPPING),
        Field("inert", "Why fetched code-bearing content is treated as inert data.", Kind.TEXT),
        Field("declassify", "Declassify a binding for permit checks: `[{from, to: trusted, because}]`.", Kind.LIST),
        Field("returns", "The output type contract of the task.", Kind.TYPE),
        *(Field(v, _VERB_DOCS[v], Kind.MAPPING) for v in VERBS),
    ),
    one_of=VERBS,
)

DECLASSIFY = Block(
    "a `declassify:` entry",
    (
        Field("from", "The dotted binding whose value is declassified, e.g. `with.url`.", Kind.TEXT, required=True),
        Field("to", "Always `trusted`.", Kind.ENUM, values=("trusted",), required=True),
        Field("because", "Why the value may be trusted (required, non-empty).", Kind.TEXT, required=True),
    ),
)

RETRY = Block(
    "`retry:`",
    (
        Field(
            "max_attempts", "Total attempts including the first (required, ≥ 1).", Kind.INT, minimum=1, required=True
        ),
        Field(
            "backoff_ms",
            "Initial delay between attempts in milliseconds (default 1000).",
            Kind.INT,
            minimum=0,
            default=1000,
        ),
        Field(
            "backoff_strategy",
            "fixed, linear or exponential (default).",
            Kind.ENUM,
            values=BACKOFF_STRATEGIES,
            default="exponential",
        ),
        Field("backoff_max_ms", "Cap on the delay (default 60000).", Kind.INT, minimum=0, default=60000),
        Field("jitter", "Randomise delays (default true).", Kind.BOOL, default=True),
        Field("on_codes", "Retry only these NIKA codes.", Kind.STRINGS),
    ),
    unknown_code="NIKA-PARSE-011",
    value_code="NIKA-PARSE-011",
)

ON_ERROR_ACTIONS: Final = ("recover", "skip", "fail_workflow")
ON_ERROR = Block(
    "`on_error:`",
    (
        Field("recover", "Value that replaces the output; the task then succeeds.", Kind.ANY),
        Field("skip", "`true`: settle the task as skipped, keeping its error.", Kind.TRUE),
        Field("fail_workflow", "`true`: fail the whole workflow.", Kind.TRUE),
        Field("on_codes", "Apply the action only for these NIKA codes.", Kind.STRINGS),
    ),
    unknown_code="NIKA-PARSE-012",
    value_code="NIKA-PARSE-012",
    one_of=ON_ERROR_ACTIONS,
)

FINALLY_STEP = Block(
    "an `on_finally:` step",
    (
        Field("when", "Guard for the cleanup step.", Kind.BOOL, template=True),
        Field("timeout", "Go duration for the step (default 30s).", Kind.DURATION, default="30s"),
        *(Field(v, _VERB_DOCS[v] if v != "invoke" else "Call a tool.", Kind.MAPPING) for v in VERBS),
    ),
    one_of=VERBS,
)

# -- verb bodies -----------------------------------------------------------------------------

_TEMPERATURE = Field("temperature", "Sampling temperature, 0 to 2.", Kind.NUMBER, minimum=0, maximum=2, template=True)
_MODEL = Field("model", "`<provider>/<name>`; defaults to the envelope `model:`.", Kind.MODEL, template=True)
_SYSTEM = Field("system", "The system prompt.", Kind.STRING)

INFER = Block(
    "`infer:`",
    (
        Field("prompt", "The user prompt (required).", Kind.STRING, required=True),
        _SYSTEM,
        _MODEL,
        _TEMPERATURE,
        Field("max_tokens", "Upper bound on generated tokens.", Kind.INT, minimum=1, template=True),
        Field("schema", "JSON Schema the structured output must satisfy.", Kind.SCHEMA),
        Field("thinking", "Extended reasoning: `{enabled, budget_tokens}`.", Kind.MAPPING),
        Field("vision", "Images to attach: `[{source: file|url, path|url}]`.", Kind.LIST),
    ),
)

THINKING = Block(
    "`thinking:`",
    (
        Field("enabled", "Turn extended reasoning on or off.", Kind.BOOL, template=True),
        Field("budget_tokens", "Token budget for the reasoning.", Kind.INT, minimum=1, template=True),
    ),
)

VISION_ITEM = Block(
    "a `vision:` entry",
    (
        Field("source", "Where the image comes from: file or url.", Kind.ENUM, values=VISION_SOURCES),
        Field("path", "Image file path (with `source: file`).", Kind.STRING),
        Field("url", "Image URL (with `source: url`).", Kind.STRING),
    ),
)

EXEC = Block(
    "`exec:`",
    (
        Field("command", "Argument vector run without a shell, e.g. `[git, status]`.", Kind.LIST),
        Field("shell", "A command line run by `/bin/sh -c`.", Kind.TEXT),
        Field("cwd", "Working directory.", Kind.STRING),
        Field("env", "Extra environment variables (string values).", Kind.MAPPING),
        Field("stdin", "Text written to the process's standard input.", Kind.STRING),
        Field(
            "capture",
            "What becomes the output: stdout (default), stderr, combined or structured.",
            Kind.ENUM,
            values=CAPTURE_MODES,
            default="stdout",
        ),
        Field(
            "decode",
            "How captured text is decoded: text (default), json, jsonl or bytes.",
            Kind.ENUM,
            values=DECODE_MODES,
            default="text",
        ),
    ),
    one_of=("command", "shell"),
)

INVOKE = Block(
    "`invoke:`",
    (
        Field("tool", "`nika:<builtin>` or `mcp:<server>/<tool>`.", Kind.STRING),
        Field("args", "Arguments of the tool, as a mapping.", Kind.MAPPING),
        Field("workflow", "Path of a child workflow (instead of `tool`).", Kind.STRING),
    ),
    one_of=("tool", "workflow"),
)

AGENT = Block(
    "`agent:`",
    (
        Field("prompt", "The task given to the agent (required).", Kind.STRING, required=True),
        _SYSTEM,
        _MODEL,
        Field("tools", "Tool globs the agent may call; nothing is allowed by default.", Kind.STRINGS),
        Field("skills", "Static paths to SKILL.md files loaded into the agent.", Kind.STRINGS),
        Field("max_turns", "Turn budget (default 10).", Kind.INT, minimum=1, template=True, default=DEFAULT_MAX_TURNS),
        Field("max_tokens_total", "Token budget for the whole loop.", Kind.INT, minimum=1, template=True),
        _TEMPERATURE,
        Field("schema", "JSON Schema the final result must satisfy.", Kind.SCHEMA),
    ),
)

VERB_BLOCKS: dict[str, Block] = {"infer": INFER, "exec": EXEC, "invoke": INVOKE, "agent": AGENT}

# -- keys other tools use for what Nika spells differently: key -> teaching -------------------

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


def choices(f: Field) -> tuple[str, ...]:
    """The literal values a field takes, as written in YAML (for value completion)."""
    if f.kind is Kind.ENUM:
        return f.values
    if f.kind is Kind.BOOL:
        return ("true", "false")
    if f.kind is Kind.TRUE:
        return ("true",)
    return ()


def misplaced(name: str, block: Block, siblings: tuple[str, ...]) -> str | None:
    """Where a field written in the wrong block belongs, when the grammar says so: a verb's field
    written at task level (``args`` beside ``invoke:``), a task field written inside a verb body
    (``retry`` under ``exec:``), or any field of a block one level down (``http`` in ``permits:``,
    a field of ``net:``; ``max_attempts`` in a task, a field of ``retry:``). ``siblings`` are the
    keys beside it. ``None`` otherwise."""
    if block is TASK:
        homes = [v for v in VERBS if name in VERB_BLOCKS[v]]
        present = [v for v in homes if v in siblings]
        for v in present or homes:
            return f"`{name}` belongs under `{v}:`, one level deeper" + ("" if present else f" (a field of `{v}:`)")
    if any(block is b for b in VERB_BLOCKS.values()) and name in TASK:
        return f"`{name}` is a task field: write it beside the verb, one level up"
    # any other field of a block one level down (`http` in `permits:` is a field of `net:`)
    homes = [n.field for n in NESTING if n.parent is block and n.holds is Holds.ONE and name in n.child]
    present = [f for f in homes if f in siblings]
    for f in present or homes:
        return f"`{name}` belongs under `{f}:`, one level deeper" + ("" if present else f" (a field of `{f}:`)")
    return None


def exclusive_groups() -> tuple[frozenset[str], ...]:
    """Sets of keys of which at most one may appear in the same block (each block's ``one_of``:
    the verbs, the on_error actions, …; and every pair of fields that exclude each other)."""
    unions = dict.fromkeys(frozenset(b.one_of) for b in ALL_BLOCKS.values() if b.one_of)
    pairs = {frozenset((f.name, x)) for b in ALL_BLOCKS.values() for f in b.fields for x in f.excludes}
    return (*unions, *sorted(pairs - unions.keys(), key=sorted))


ALL_BLOCKS: dict[str, Block] = {
    "envelope": ENVELOPE,
    "workflow": WORKFLOW,
    "input": INPUT,
    "config": CONFIG,
    "typed_const": TYPED_CONST,
    "secret": SECRET,
    "egress": EGRESS,
    "permits": PERMITS,
    "permits_fs": PERMITS_FS,
    "permits_net": PERMITS_NET,
    "run": RUN,
    "seeded": SEEDED,
    "policy": POLICY,
    **{f"policy_{k}": b for k, b in POLICY_SUB.items()},
    "output": OUTPUT,
    "task": TASK,
    "declassify": DECLASSIFY,
    "retry": RETRY,
    "on_error": ON_ERROR,
    "finally_step": FINALLY_STEP,
    "thinking": THINKING,
    "vision_item": VISION_ITEM,
    **VERB_BLOCKS,
}


# -- nesting: which block holds which ----------------------------------------------------------


class Holds(StrEnum):
    """How a field's value holds its child block."""

    ONE = "one"  # the value is the block
    EACH = "each"  # a mapping of names, each value one block (`inputs: {name: {...}}`)
    ITEMS = "items"  # a list, each item one block (`on_finally: [{...}]`)


@record
class Nest:
    """``parent.field`` holds ``child`` (``holds`` says how); ``label`` names a field of the child
    in hover and completion."""

    parent: Block
    field: str
    child: Block
    holds: Holds
    label: str


ENVELOPE_LABEL: Final = "envelope field"

NESTING: Final[tuple[Nest, ...]] = (
    Nest(ENVELOPE, "workflow", WORKFLOW, Holds.ONE, "`workflow:` field"),
    Nest(ENVELOPE, "inputs", INPUT, Holds.EACH, "`inputs` entry field"),
    Nest(ENVELOPE, "config", CONFIG, Holds.EACH, "`config` entry field"),
    # only a mapping with both `type` and `value`; any other value is the constant itself
    Nest(ENVELOPE, "const", TYPED_CONST, Holds.EACH, "`const` entry field"),
    Nest(ENVELOPE, "secrets", SECRET, Holds.EACH, "`secrets` entry field"),
    Nest(SECRET, "egress", EGRESS, Holds.ITEMS, "egress rule field"),
    Nest(ENVELOPE, "permits", PERMITS, Holds.ONE, "`permits:` field"),
    Nest(PERMITS, "fs", PERMITS_FS, Holds.ONE, "`permits.fs` field"),
    Nest(PERMITS, "net", PERMITS_NET, Holds.ONE, "`permits.net` field"),
    Nest(ENVELOPE, "run", RUN, Holds.ONE, "`run:` field"),
    Nest(RUN, "entropy", SEEDED, Holds.ONE, "`run.entropy` field"),  # the `{seeded: N}` form
    Nest(ENVELOPE, "policy", POLICY, Holds.ONE, "`policy:` field"),
    *(Nest(POLICY, fam, sub, Holds.ONE, f"`policy.{fam}` field") for fam, sub in POLICY_SUB.items()),
    Nest(ENVELOPE, "outputs", OUTPUT, Holds.EACH, "`outputs` entry field"),  # or a bare expression
    Nest(ENVELOPE, "tasks", TASK, Holds.EACH, "task field"),
    *(Nest(TASK, v, VERB_BLOCKS[v], Holds.ONE, f"`{v}:` field") for v in VERBS),
    Nest(TASK, "retry", RETRY, Holds.ONE, "`retry:` field"),
    Nest(TASK, "on_error", ON_ERROR, Holds.ONE, "`on_error:` field"),
    Nest(TASK, "on_finally", FINALLY_STEP, Holds.ITEMS, "`on_finally:` step field"),
    Nest(TASK, "declassify", DECLASSIFY, Holds.ITEMS, "`declassify:` entry field"),
    *(Nest(FINALLY_STEP, v, VERB_BLOCKS[v], Holds.ONE, f"`{v}:` field") for v in VERBS),
    Nest(INFER, "thinking", THINKING, Holds.ONE, "`thinking:` field"),
    Nest(INFER, "vision", VISION_ITEM, Holds.ITEMS, "`vision:` entry field"),
)

_NESTS: Final[dict[tuple[int, str], Nest]] = {(id(n.parent), n.field): n for n in NESTING}


def nest(parent: Block, name: str) -> Nest | None:
    """What ``parent``'s field ``name`` holds, when it holds a block."""
    return _NESTS.get((id(parent), name))


def block_at(path: tuple[str, ...]) -> tuple[Block, str] | None:
    """The block whose keys are written at the key path ``path`` (mapping keys, outermost first,
    no list indexes: the keys of an ``on_finally:`` step sit at ``(…, "on_finally")``), and the
    label of its fields; ``None`` where no block of the grammar is."""
    block, label = ENVELOPE, ENVELOPE_LABEL
    i, n = 0, len(path)
    while i < n:
        found = _NESTS.get((id(block), path[i]))
        if found is None:
            return None
        i += 2 if found.holds is Holds.EACH else 1  # past the entry's name
        if i > n:
            return None  # `inputs:` itself: a mapping of names, not a block
        block, label = found.child, found.label
    return block, label
