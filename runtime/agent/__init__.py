"""``agent:`` — the one agent loop (02 §agent, §Loop semantics), in rooms:

* :mod:`~runtime.agent.loop`: the turns (budgets, the model call through the executor, the reply);
* :mod:`~runtime.agent.ledger` and :mod:`~runtime.agent.budgets`: what was spent, the envelope
  (wall clock, cost ceiling) and the pre-call fit (:func:`~runtime.agent.budgets.fit_call`) that
  keeps the next call inside both;
* :mod:`~runtime.agent.snapshot`: the self-model each turn sends (what is left, the tools wired);
* :mod:`~runtime.agent.batch` and :mod:`~runtime.agent.outcomes`: one reply's tool calls, vetted
  as a whole before any runs, read-only ones concurrently, and what each outcome does;
* :mod:`~runtime.agent.answers`: final answers, ``nika:done``, never an empty one;
* :mod:`~runtime.agent.stops`: the named stop reasons; :mod:`~runtime.agent.audit`: the frames;
* :mod:`~runtime.agent.catalogue`: the tools a whitelist grants, and the skills;
  :mod:`~runtime.agent.history`: the conversation as sent, and the input estimate.

The loop ends for exactly one :class:`StopReason`, which the task record carries with the turns,
tokens, cost and tool calls spent (every task-``retry:`` attempt listed under ``attempts``).
"""

from runtime.agent.answers import schema_problem
from runtime.agent.audit import fingerprint
from runtime.agent.catalogue import COMPOSE, DONE, LOOP_TOOLS, builtin_parameters, catalogue, compose_system
from runtime.agent.ledger import Envelope, Ledger
from runtime.agent.loop import AgentLoop, retry_delay_s, run_agent
from runtime.agent.stops import SUCCESS_REASONS, Stop, StopReason

__all__ = [
    "COMPOSE",
    "DONE",
    "LOOP_TOOLS",
    "SUCCESS_REASONS",
    "AgentLoop",
    "Envelope",
    "Ledger",
    "Stop",
    "StopReason",
    "builtin_parameters",
    "catalogue",
    "compose_system",
    "fingerprint",
    "retry_delay_s",
    "run_agent",
    "schema_problem",
]
