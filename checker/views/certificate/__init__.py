"""The certificate of one workflow: what it will run, spend and touch, and why it stops — all
decided from the compiled model before anything runs (spec 07 §nika check, 10 §certificate,
15 §receipt).

Five parts, each computed from :class:`~checker.model.workflow.CompiledWorkflow` alone (pure: no network,
no subprocess, no file read; the price table is an argument):

* **plan** — the waves of :attr:`Graph.waves <checker.model.graph.Graph.waves>` (the same ones
  ``nika graph`` and the editor's graph view draw), the width (most tasks in one wave) and a critical path
  (a longest chain of scheduling edges, counted in tasks).
* **cost** — the worst-case spend: for each ``infer:`` task, ``max_tokens`` × the model's output
  price; for each ``agent:`` task, ``max_tokens_total`` × the higher of its input and output
  prices (that budget counts every token of the loop); both × retry attempts × ``for_each``
  items. A model with no price is *unpriced* (never $0); a priced task without a token cap, or
  fanning out over a list only the run knows, is *unbounded* and makes the total a floor. Builtins
  that report a real spend (``cost_usd`` in their output) and child workflows are listed as
  unpriced. The ``mock`` provider calls no model and costs $0.
* **termination** — why the run stops: an acyclic graph, each ``for_each`` over a finite list
  evaluated once, retries capped by ``max_attempts``, each agent loop capped by its turn budget;
  processes and MCP calls without ``timeout:`` are named (only the program bounds their wait).
* **effects** — the authority the body needs (the walk NIKA-AUTH-006 and NIKA-SEC-004 judge)
  next to what ``permits:`` grants, and how many findings report a need outside the grant.
* **risk** — one grade. The spec names no scale; ours reuses the four words the reference
  engine prints (``low`` · ``supervised`` · ``high`` · ``unbounded``) with these meanings, worst
  first: **unbounded** — the graph has a cycle, or a model task has no token cap or fans out over
  a run-time list; **high** — a task runs processes, writes files, reaches the network, calls an
  MCP server, hands an agent a side-effecting or pattern tool list, runs a child workflow, or
  needs authority the grant does not give, with no human gate before it; **supervised** — every
  such task runs after a ``nika:prompt`` gate; **low** — reads, pure tools and model calls only.

Prices: the spec ships no price table, so every model is unpriced unless one is given. The CLI
and the language server read the runtime's table, ``NIKA_PRICES`` (JSON
``{"provider/model": {"input": usd, "output": usd}}``, per million tokens), through
:func:`prices_from_env`.

The package, one module per part: :mod:`.prices` (the table), :mod:`.words` (how amounts and task
lists are written), :mod:`.static_values` (what is known of a task before the run), :mod:`.waves`
(plan), :mod:`.cost`, :mod:`.resources`, :mod:`.termination`, :mod:`.needs` (effects),
:mod:`.risk`, :mod:`.certify` (the document and its entry point) and :mod:`.sentences` (the
lines the CLI and the editor print). This face re-exports the public names.
"""

from __future__ import annotations

from checker.views.certificate.certify import CERTIFICATE_VERSION, Certificate, certify
from checker.views.certificate.cost import Cost, Spend
from checker.views.certificate.needs import Dynamic, Effects
from checker.views.certificate.prices import PRICES_ENV, Price, PriceTable, parse_prices, prices_from_env
from checker.views.certificate.resources import Resources
from checker.views.certificate.risk import GRADES, Risk
from checker.views.certificate.sentences import dynamic_text, effects_text, plan_text, spend_text, task_summary
from checker.views.certificate.termination import Loop, Termination
from checker.views.certificate.waves import Plan
from checker.views.certificate.words import format_usd

__all__ = [
    "CERTIFICATE_VERSION",
    "GRADES",
    "PRICES_ENV",
    "Certificate",
    "Cost",
    "Dynamic",
    "Effects",
    "Loop",
    "Plan",
    "Price",
    "PriceTable",
    "Resources",
    "Risk",
    "Spend",
    "Termination",
    "certify",
    "dynamic_text",
    "effects_text",
    "format_usd",
    "parse_prices",
    "plan_text",
    "prices_from_env",
    "spend_text",
    "task_summary",
]
