"""Every limit and default of the model verbs, named in one place with where its value comes from.

"spec" cites the document that fixes the value; "heuristic" marks a value we chose (and may tune
from traces); "seed" marks a value taken from the agent-loop design note the loop follows.
"""

from __future__ import annotations

from contextvars import ContextVar

# -- the task's deadline ----------------------------------------------------------------------

# The task's ``timeout:`` as (``time.monotonic()`` deadline, the timeout in ms), set by the verb
# stage around the verb: an executor out of process sends what is left of it with the effect, and
# a network exchange defers to it instead of the engine's own deadline.
EFFECT_DEADLINE: ContextVar[tuple[float, int] | None] = ContextVar("nika_effect_deadline", default=None)

# -- the agent loop ---------------------------------------------------------------------------

# spec 02 §agent Fields: `max_turns` defaults to 10 (the checker resolves it: Agent.turn_budget).
DEFAULT_MAX_TURNS = 10
# spec 02 leaves `max_tokens_total` engine-configurable; seed: a 120k in+out production envelope.
DEFAULT_MAX_TOKENS_TOTAL = 120_000
# seed "failure budget": three consecutive failed tool calls stop the loop (escalate, don't spiral).
FAILURE_BUDGET = 3
# seed "proposal-lost": a malformed reply gets one short retry; the second in a row stops the loop.
MALFORMED_REPLIES = 2
# seed "the finale guarantees a non-empty answer": an empty final message gets this one nudge.
EMPTY_ANSWER_NUDGE = "Your final message was empty. Write your answer now, from what the tools returned."
# ours (issue 40): a final answer cut by the output limit is never the answer; it gets this one
# request to continue (a turn, drawn on the budgets); cut again, the task fails.
CONTINUE_NUDGE = "Your reply was cut off by the output limit. Continue exactly where it stopped, repeating nothing."
# the finish reasons that mean "cut by the output cap": OpenAI-compatible and Ollama `length`,
# Anthropic `max_tokens`, Gemini `MAX_TOKENS`
TRUNCATED_FINISH = frozenset({"length", "max_tokens", "MAX_TOKENS"})
# heuristic: a failed agent without any text carries its last observations as `partial_output`.
EXTRACT_OBSERVATIONS = 3
EXTRACT_CHARS = 2_000
# heuristic: a successful call proposed again is refused; the second refusal stops the loop
# (a model that repeats itself twice after being told is not going to move on).
DUPLICATE_REFUSALS = 2
# heuristic: the input-token estimate when the provider gives no count: UTF-8 bytes of the request
# body divided by this (conservative: English prose runs ~4 bytes a token, code and JSON ~3).
ESTIMATE_BYTES_PER_TOKEN = 3
# The chat format's own tokens: every message costs a few tokens beyond its text (role markers,
# separators; OpenAI documents 3 to 4 per message and 3 to prime the reply). The estimate adds
# these so a short conversation is not under-counted. From the second call on, the provider's
# own count of the previous request corrects the estimate (runtime/agent/history.estimate_in).
ESTIMATE_TOKENS_PER_MESSAGE = 4
ESTIMATE_REPLY_PRIMING_TOKENS = 3
# heuristic: how long the first model call of an agent is expected to take (later calls expect as
# long as the last one took). A call expected to outlast the time left is not sent: the loop
# stops at the deadline first, with nothing in flight.
FIRST_CALL_EXPECTED_S = 0.25
# heuristic: an output cap below this many tokens buys no useful reply; the loop stops first.
MIN_USEFUL_OUTPUT_TOKENS = 16
# A call never asks for more output than the model's catalogued limit (`max_output` in
# checker/contracts/models.toml, read from models.dev); an uncatalogued model gets
# DEFAULT_MAX_OUTPUT_TOKENS (runtime/providers/models.py).
# seed "no-novelty" (threshold heuristic): this many successful calls in a row returning the same
# observation (canonical text, compared exactly) stop the loop.
NO_NOVELTY_REPEATS = 3
# seed "streak-exhausted" (threshold heuristic): the same tool succeeding this many times in a row
# stops the loop (a research loop that has not finished after that is spiralling).
STREAK_LIMIT = 8
# heuristic: a model call needs at least this much of the task deadline left to be worth starting.
MIN_CALL_WINDOW_S = 0.05
# heuristic: a model call under a task deadline ends this much before it, so the loop records why.
DEADLINE_MARGIN_S = 0.05
# heuristic: a provider that fails transiently (429, 5xx, connection) is retried this many times
# inside the loop before the loop stops as provider-unreachable (budgets are re-checked first).
PROVIDER_RETRIES_IN_LOOP = 2
# heuristic: the longest a `Retry-After` may make us wait inside one task.
MAX_RETRY_AFTER_S = 60.0
# heuristic: how much of a tool result a `tool.invoked` frame keeps as its summary.
TOOL_SUMMARY_CHARS = 200
# heuristic: how much of a tool result is fed back to the model (the rest is cut, and says so).
MAX_TOOL_RESULT_CHARS = 32_000
# seed "up to 3 independent free calls as a batch": the most tool calls one reply may carry; the
# calls after these are answered "not run" (every call of the reply is vetted before any runs).
MAX_CALLS_PER_REPLY = 3
# heuristic: tool arguments longer than this (their JSON text) are sent once; later requests carry
# a fingerprint in their place (`{"elided": "sha256:…", "chars": n}`), so a 2 MB draft is not re-sent.
RESEND_ARGS_CHARS = 4_096
# seed "Wall clock 10 min (operational ceiling)": an agent task without `timeout:` stops at this.
# Overridden per task by `timeout:`, per run by NIKA_AGENT_TIMEOUT (a Go duration, or a JSON
# object of them by task id with "*" for the rest).
DEFAULT_AGENT_WALL_CLOCK_S = 600.0
AGENT_TIMEOUT_VAR = "NIKA_AGENT_TIMEOUT"
# seed "spend $1 per task": a priced model (a NIKA_PRICES row) gets this cost ceiling per agent
# task unless NIKA_AGENT_MAX_COST_USD sets one (a number, or a JSON object of numbers by task id
# with "*" for the rest). An unpriced model has no cost ceiling (nothing to count).
DEFAULT_AGENT_MAX_COST_USD = 1.0
AGENT_COST_VAR = "NIKA_AGENT_MAX_COST_USD"
# heuristic: how the self-model snapshot states the time left, so a fast deterministic run
# (mock/echo) sends the same text every time: whole minutes (rounded up) from this many seconds
# on, whole seconds (rounded up) below.
SNAPSHOT_MINUTES_FROM_S = 120.0

# -- provider calls -----------------------------------------------------------------------------

# stdlib/providers-v0.1.md §Transport deadline: without a task `timeout:`, local servers get at
# least 300 s and cloud APIs 30 s per call.
LOCAL_CALL_TIMEOUT_S = 300.0
CLOUD_CALL_TIMEOUT_S = 30.0
# stdlib/providers-v0.1.md: a connection that has delivered nothing is reaped at 600 s.
SILENT_CONNECTION_CEILING_S = 600.0
# heuristic: a cloud stream that delivers nothing (no token, no keep-alive) for this long is stalled
# (stdlib/providers-v0.1.md: without a `timeout:` a stream has no total deadline, only this guard);
# a local server's stream gets LOCAL_CALL_TIMEOUT_S, room for a long prompt before the first token.
STREAM_IDLE_TIMEOUT_S = 120.0
# Ours: an engine setting (the engine's environment) that bounds every provider call without a
# `timeout:` in total, streamed or not; unset, the class defaults above hold and a stream has only
# its idle guard, as stdlib/providers-v0.1.md §Transport deadline says.
PROVIDER_DEADLINE_VAR = "NIKA_PROVIDER_DEADLINE_S"
# heuristic: the largest reply body we read; a bigger one fails as a provider error, not a hang.
MAX_REPLY_BYTES = 8 * 1024 * 1024
# heuristic: `max_tokens` when the workflow gives none and the wire requires one (Anthropic).
DEFAULT_MAX_OUTPUT_TOKENS = 4096
# `infer.thinking:` without `budget_tokens` (Anthropic's smallest accepted budget).
DEFAULT_THINKING_BUDGET = 1024
# `infer.vision:`: at most this many images per call, each at most this many bytes (files and URLs).
MAX_IMAGES = 16
MAX_IMAGE_BYTES = 20 * 1024 * 1024
# heuristic: the connect phase of a provider call (the read phase follows the deadlines above).
CONNECT_TIMEOUT_S = 10.0

# -- MCP ----------------------------------------------------------------------------------------

# heuristic: how long a server may take to start and answer `initialize`.
MCP_INIT_TIMEOUT_S = 20.0
# heuristic: one `tools/call` without a task deadline.
MCP_CALL_TIMEOUT_S = 120.0
# heuristic: how long a stdio server gets to exit after its input closes, before SIGTERM/SIGKILL.
MCP_SHUTDOWN_GRACE_S = 2.0

# -- jq evaluation (runtime/tools/jq_processes.py) ------------------------------------------------
# Ours: a jq program with no `timeout:` above it (an `output:` binding, a `nika:jq` in a task
# without one) is stopped after this long; real transforms of real payloads take milliseconds.
JQ_TIME_LIMIT_S = 10.0
# Ours: how long a fresh evaluation process may take to start (Python + libjq), apart from the
# program's own limit, so a loaded machine does not eat a program's budget.
JQ_WORKER_START_S = 30.0
# Ours: the address space of an evaluation process (an `[range(1e9)]` fails here, not in the OOM killer).
JQ_MEMORY_BYTES = 2 * 1024 * 1024 * 1024
# Ours: the largest encoded result a program may produce (the same order as a model reply cap).
JQ_MAX_RESULT_BYTES = 64 * 1024 * 1024

# -- values ----------------------------------------------------------------------------------------
# Ours: how deep a run-time value may nest (twice the check-time YAML cap of 64, NIKA-YAML-009);
# every walker of values (redaction, journal, report) stays far inside the interpreter's stack.
MAX_VALUE_DEPTH = 128
