"""The certificate of one workflow: what it will run, spend and touch, and why it stops — all
decided from the compiled model before anything runs (spec 07 §nika check, 10 §certificate,
15 §receipt).

Five parts, each computed from :class:`~checker.model.workflow.CompiledWorkflow` alone (pure: no network,
no subprocess, no file read; the price table is an argument):

* **plan** — the waves of :attr:`Graph.waves <checker.model.graph.Graph.waves>` (the same ones
  ``nika graph`` and ``nika/graph`` draw), the width (most tasks in one wave) and a critical path
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
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from checker.model.graph import Graph
from checker.model.workflow import Agent, CompiledWorkflow, Exec, Infer, Invoke, Task, Verb, Workflow
from checker.parse.values import ListValue, MapValue, ScalarValue, TemplateValue, Value

__all__ = [
    "CERTIFICATE_VERSION",
    "GRADES",
    "PRICES_ENV",
    "Certificate",
    "Cost",
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
    "effects_text",
    "format_usd",
    "plan_text",
    "prices_from_env",
    "spend_text",
    "task_summary",
]

CERTIFICATE_VERSION = 1
PRICES_ENV = "NIKA_PRICES"
#: the test provider: it answers without calling any model, so its calls are provably free
FREE_PROVIDERS = frozenset({"mock"})
#: effect planes that reach outside the run (reads stay inside)
OUTWARD_PLANES = frozenset({"exec", "fs.write", "net"})
HUMAN_GATE = "nika:prompt"
#: the risk grades, mildest first
GRADES = ("low", "supervised", "high", "unbounded")

_ESCAPE_CODES = frozenset({"NIKA-SEC-004", "NIKA-AUTH-006", "NIKA-AUTH-008"})


# -- prices ------------------------------------------------------------------------------------


class Price(NamedTuple):
    """USD per million tokens."""

    input_per_million: float
    output_per_million: float

    @property
    def free(self) -> bool:
        return self.input_per_million == 0 and self.output_per_million == 0


class PriceTable(NamedTuple):
    """Prices by ``provider/model``; ``source`` names where they came from (``None``: no table),
    ``error`` says why (part of) a given table could not be used."""

    prices: Mapping[str, Price] = MappingProxyType({})
    source: str | None = None
    error: str | None = None

    def get(self, model: str) -> Price | None:
        return self.prices.get(model)


def _usd(v: object) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    f = float(v)
    return f if math.isfinite(f) and f >= 0 else None


def parse_prices(text: str, source: str = PRICES_ENV) -> PriceTable:
    """A price table from its JSON text (the runtime's ``NIKA_PRICES`` format). A row without
    both prices as non-negative numbers is left out (that model stays unpriced) and named in
    ``error``; text that is not a JSON object yields an empty table with ``error`` set."""
    if not text.strip():
        return PriceTable()
    try:
        data = json.loads(text)
    except ValueError:
        return PriceTable({}, source, f"{source} is not valid JSON; every model is unpriced")
    if not isinstance(data, dict):
        return PriceTable({}, source, f"{source} is not a JSON object; every model is unpriced")
    prices: dict[str, Price] = {}
    bad: list[str] = []
    for model, row in data.items():
        inp = _usd(row.get("input")) if isinstance(row, dict) else None
        out = _usd(row.get("output")) if isinstance(row, dict) else None
        if inp is None or out is None:
            bad.append(str(model))
            continue
        prices[str(model)] = Price(inp, out)
    error = None
    if bad:
        shown = ", ".join(f"`{m}`" for m in bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        error = f"{source}: {shown} lack numeric `input` and `output` prices, so stay unpriced"
    return PriceTable(prices, source, error)


def prices_from_env(environ: Mapping[str, str]) -> PriceTable:
    """The table in ``environ[NIKA_PRICES]`` (an empty table when unset)."""
    return parse_prices(environ.get(PRICES_ENV, ""))


def format_usd(usd: float, *, up: bool = True) -> str:
    """``$0.0040``: at least two significant digits below a dollar, cents above; rounded up
    (``up``, for a ceiling) or down (for a floor), never to a false ``$0``."""
    if usd <= 0:
        return "$0"
    from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

    exact = Decimal(repr(round(usd, 12)))
    decimals = 2 if usd >= 1 else max(4, 1 - math.floor(math.log10(usd)))
    shown = exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_CEILING if up else ROUND_FLOOR)
    if usd >= 1:
        return f"${shown:,}"
    text = f"{shown:f}"
    while len(text.partition(".")[2]) > 4 and text.endswith("0"):
        text = text[:-1]
    return f"${text}"


# -- check-time values -------------------------------------------------------------------------

_UNKNOWN: Any = object()


def _const_scope(wf: Workflow) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c in wf.const:
        src = c.literal if c.literal is not None else (c.value if c.type is None else None)
        if src is not None and _literal_only(src):
            out[c.name] = src.to_python()
    return out


def _literal_only(v: Value) -> bool:
    if isinstance(v, TemplateValue):
        return False
    if isinstance(v, MapValue):
        return all(_literal_only(e.value) for e in v.entries)
    if isinstance(v, ListValue):
        return all(_literal_only(i) for i in v.items)
    return True


def _static(consts: Mapping[str, Any], task: Task, v: Value | None, depth: int = 0) -> Any:
    """The run-independent value of ``v``: a literal, or one ``${{ }}`` island that is a plain
    ``const.*`` chain (or a ``with.*`` binding holding one). Inputs and config are supplied per
    run and never count; anything else is :data:`_UNKNOWN`. A list value answers its items."""
    if v is None or depth > 8:
        return _UNKNOWN
    if isinstance(v, ListValue):
        return list(v.items)
    if not isinstance(v, TemplateValue):
        return v.value if isinstance(v, ScalarValue) else _UNKNOWN
    t = v.template
    if t is None or t.errors or not t.is_single_island:
        return _UNKNOWN
    island = t.islands[0]
    if island.expr is None:
        return _UNKNOWN
    from checker.expr.refs import as_ref

    ref = as_ref(island.expr)
    if ref is None or not ref.path:
        return _UNKNOWN
    if ref.root == "with" and isinstance(ref.path[0], str) and len(ref.path) == 1:
        b = task.binding(ref.path[0])
        return _static(consts, task, b.value if b is not None else None, depth + 1)
    if ref.root != "const":
        return _UNKNOWN
    cur: Any = consts
    for step in ref.path:
        in_map = isinstance(cur, dict) and isinstance(step, str) and step in cur
        in_list = (
            isinstance(cur, list) and isinstance(step, int) and not isinstance(step, bool) and 0 <= step < len(cur)
        )
        if not (in_map or in_list):
            return _UNKNOWN
        cur = cur[step]  # type: ignore[index]
    return cur


def _static_int(consts: Mapping[str, Any], task: Task, v: Value | None) -> int | None:
    r = _static(consts, task, v)
    return r if isinstance(r, int) and not isinstance(r, bool) and r > 0 else None


def _items(consts: Mapping[str, Any], task: Task) -> int | None:
    """How many times ``for_each`` runs the task: 1 without it, ``None`` when only the run knows."""
    if task.for_each is None:
        return 1
    r = _static(consts, task, task.for_each)
    return len(r) if isinstance(r, list) else None


def _attempts(task: Task) -> int:
    r = task.retry
    n = r.max_attempts if r is not None else 1
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else 1


def _text(v: Value | None) -> str | None:
    if isinstance(v, ScalarValue) and not isinstance(v, TemplateValue) and isinstance(v.value, str):
        return v.value
    return None


# -- the parts -----------------------------------------------------------------------------------


class Plan(NamedTuple):
    tasks: int
    waves: tuple[tuple[str, ...], ...]
    width: int
    critical_path: tuple[str, ...]
    unscheduled: tuple[str, ...]  # tasks on (or behind) a cycle: no wave

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks": self.tasks,
            "waves": [list(w) for w in self.waves],
            "width": self.width,
            "critical_path": list(self.critical_path),
            "unscheduled": list(self.unscheduled),
        }


class Spend(NamedTuple):
    """One part of a task that may spend money: its verb, or one ``on_finally`` step.

    ``status`` is ``ceiling`` (``usd`` is the worst case), ``unbounded`` (priced, but no token
    cap or no static item count) or ``unpriced`` (no price is known). ``tokens`` is the cap of one
    run (``max_tokens``, or an agent's ``max_tokens_total``); ``items`` is ``None`` when only the
    run knows how many ``for_each`` items there are; ``capped`` holds whatever the price: the
    spend has a limit (a token cap, or a free model)."""

    task: str
    part: str | None
    kind: str  # infer | agent | tool | workflow
    model: str | None
    status: str
    usd: float | None
    tokens: int | None
    attempts: int
    items: int | None
    turns: int | None
    capped: bool
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "part": self.part,
            "kind": self.kind,
            "model": self.model,
            "status": self.status,
            "usd": _round(self.usd),
            "max_tokens": self.tokens,
            "attempts": self.attempts,
            "items": self.items,
            "max_turns": self.turns,
            "reason": self.reason,
        }


def _round(usd: float | None) -> float | None:
    return None if usd is None else round(usd, 10)


class Cost(NamedTuple):
    """``kind``: ``none`` (nothing spends), ``ceiling`` (``usd`` bounds the spend), ``floor`` (some
    priced part is unbounded: the worst case is at least ``usd``), ``unknown`` (some part is
    unpriced; ``bounded_usd`` is what the priced, bounded parts can spend at most)."""

    kind: str
    usd: float | None
    bounded_usd: float
    spends: tuple[Spend, ...]
    prices: PriceTable

    def of_task(self, tid: str) -> tuple[Spend, ...]:
        return tuple(s for s in self.spends if s.task == tid)

    def to_json(self) -> dict[str, Any]:
        models = sorted({s.model for s in self.spends if s.model and s.kind in ("infer", "agent")})
        rows = []
        for m in models:
            p = self.prices.get(m)
            rows.append(
                {
                    "model": m,
                    "input_per_million": p.input_per_million if p else None,
                    "output_per_million": p.output_per_million if p else None,
                }
            )
        return {
            "currency": "USD",
            "total": {"kind": self.kind, "usd": _round(self.usd)},
            "bounded_usd": _round(self.bounded_usd),
            "unbounded": _tasks_with(self.spends, "unbounded"),
            "unpriced": _tasks_with(self.spends, "unpriced"),
            "tasks": [s.to_json() for s in self.spends],
            "pricing": {"source": self.prices.source, "error": self.prices.error, "models": rows},
        }

    def headline(self) -> str:
        """The total in words: ``≤ $0.0040``, ``at least $0.0040 …``, ``unknown …``, ``$0 …``."""
        if self.kind == "none":
            return "$0 (no model calls)"
        if self.kind == "ceiling":
            return f"≤ {format_usd(self.usd)}" if self.usd else "$0 (no model call is billed)"
        unbounded = _tasks_with(self.spends, "unbounded")
        if self.kind == "floor":
            return f"at least {format_usd(self.bounded_usd, up=False)}: no limit on {_names(unbounded)}"
        unpriced = _tasks_with(self.spends, "unpriced")
        known = f"; priced parts ≤ {format_usd(self.bounded_usd)}" if self.bounded_usd else ""
        more = f"; no limit on {_names(unbounded)}" if unbounded else ""
        return f"unknown: no price for {_names(unpriced)}{more}{known}"


def _tasks_with(spends: tuple[Spend, ...], status: str) -> list[str]:
    out: list[str] = []
    for s in spends:
        if s.status == status and s.task not in out:
            out.append(s.task)
    return out


def _names(ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(f"`{t}`" for t in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


class Resources(NamedTuple):
    """Worst-case counts (``None`` when only the run knows): task runs (attempts × items, plus
    each cleanup step), model calls (an agent counts its turn budget) and process/tool calls
    (unknown as soon as an agent holds tools: one turn may call several)."""

    task_runs: int | None
    model_calls: int | None
    effect_calls: int | None

    def to_json(self) -> dict[str, Any]:
        return {"task_runs": self.task_runs, "model_calls": self.model_calls, "effect_calls": self.effect_calls}


class Loop(NamedTuple):
    """One repetition the run bounds: ``for_each`` items, retry attempts or agent turns."""

    task: str
    kind: str  # for_each | retry | agent
    bound: int | None  # None: fixed at run time

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "kind": self.kind, "bound": self.bound}


class Termination(NamedTuple):
    """``verdict``: ``bounded`` (every repetition has a bound the check knows), ``run-time``
    (some bound is fixed when the run starts: still finite) or ``cyclic`` (no run: a cycle)."""

    verdict: str
    cycle: tuple[str, ...]
    loops: tuple[Loop, ...]
    untimed: tuple[str, ...]
    statement: str

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "acyclic": not self.cycle,
            "cycle": list(self.cycle),
            "loops": [lp.to_json() for lp in self.loops],
            "untimed": list(self.untimed),
            "statement": self.statement,
        }


class Effects(NamedTuple):
    """``needed`` and ``granted`` share the shape of a ``permits:`` block (planes with what is
    known at check); ``dynamic`` lists the targets only the run knows; ``escapes`` counts the
    findings that report a need outside the grant (NIKA-SEC-004, NIKA-AUTH-006, NIKA-AUTH-008)."""

    boundary_declared: bool
    needed: dict[str, Any]
    granted: dict[str, Any] | None
    dynamic: tuple[tuple[str, str, str], ...]  # (task, plane, argument)
    escapes: int
    outward: dict[str, list[str]]  # task -> what it does outside the run (risk reasons)

    def to_json(self) -> dict[str, Any]:
        return {
            "boundary_declared": self.boundary_declared,
            "needed": self.needed,
            "granted": self.granted,
            "dynamic": [{"task": t, "plane": p, "arg": a} for t, p, a in self.dynamic],
            "escapes": self.escapes,
        }


class Risk(NamedTuple):
    grade: str
    reasons: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"grade": self.grade, "reasons": list(self.reasons)}


class Certificate(NamedTuple):
    workflow: str | None
    plan: Plan
    cost: Cost
    resources: Resources
    termination: Termination
    effects: Effects
    risk: Risk

    def to_json(self) -> dict[str, Any]:
        return {
            "certificate_version": CERTIFICATE_VERSION,
            "workflow": self.workflow,
            "plan": self.plan.to_json(),
            "cost": self.cost.to_json(),
            "resources": self.resources.to_json(),
            "termination": self.termination.to_json(),
            "effects": self.effects.to_json(),
            "risk": self.risk.to_json(),
        }


# -- sentences (shared by the CLI block and the editor) ---------------------------------------


def plan_text(plan: Plan) -> str:
    """``4 tasks in 3 waves · width 2 · critical path a → b → c``."""
    n = len(plan.waves)
    text = f"{plan.tasks} task{'s' if plan.tasks != 1 else ''} in {n} wave{'s' if n != 1 else ''} · width {plan.width}"
    if plan.critical_path:
        text += " · critical path " + " → ".join(plan.critical_path)
    if plan.unscheduled:
        text += " · no wave: " + ", ".join(plan.unscheduled)
    return text


def spend_text(s: Spend) -> str:
    """One cost row: where, what, and the bound or why there is none."""
    where = s.task + (f" {s.part}" if s.part else "")
    what = s.model or s.kind
    facts: list[str] = []
    if s.tokens is not None:
        facts.append(f"{s.tokens} tokens")
    if s.items is None:
        facts.append("× a run-time list")
    elif s.items != 1:
        facts.append(f"× {s.items} items")
    if s.attempts != 1:
        facts.append(f"× {s.attempts} attempts")
    turns = f", ≤ {s.turns} turns" if s.turns is not None else ""
    if s.status == "ceiling":
        bound = f"≤ {format_usd(s.usd or 0.0)}" if s.usd else "$0"
    elif s.status == "unbounded":
        bound = "unbounded"
    else:
        bound = "unpriced"
    tail = f" ({s.reason})" if s.reason else ""
    shape = (" ".join(facts) + turns).lstrip(", ")
    return f"{where}  {what}  {shape}{'  ' if shape else ''}{bound}{tail}"


def _plane_items(needed: dict[str, Any]) -> list[str]:
    out: list[str] = []
    fs = needed.get("fs", {})
    for key in ("read", "write"):
        if key in fs:
            out.append(f"fs.{key} " + (", ".join(fs[key]) if fs[key] else "(targets at run time)"))
    if "net" in needed:
        hosts = needed["net"].get("http", [])
        out.append("net " + (", ".join(hosts) if hosts else "(hosts at run time)"))
    if "exec" in needed:
        ex = needed["exec"]
        out.append("exec " + (", ".join(ex) if isinstance(ex, list) else "any program"))
    if "tools" in needed:
        out.append("tools " + ", ".join(needed["tools"]))
    return out


def effects_text(fx: Effects) -> str:
    """What the body needs, whether a grant exists, and how much falls outside it."""
    items = _plane_items(fx.needed)
    needs = "needs " + " · ".join(items) if items else "needs no authority"
    if fx.dynamic:
        n = len(fx.dynamic)
        needs += f" (+{n} target{'s' if n != 1 else ''} known only at run time)"
    grant = "`permits:` declared" if fx.boundary_declared else "no `permits:` block"
    outside = f"{fx.escapes} outside the grant" if fx.escapes else "nothing outside the grant"
    return f"{needs}; {grant}; {outside}"


# -- plan ----------------------------------------------------------------------------------------


def _plan(wf: Workflow, graph: Graph) -> Plan:
    waves = graph.waves
    scheduled = [t for w in waves for t in w]
    wave_of = {t: i for i, w in enumerate(waves) for t in w}
    length: dict[str, int] = {}
    prev: dict[str, str | None] = {}
    for t in scheduled:  # wave order is a topological order
        best: str | None = None
        for e in graph.incoming(t):
            p = e.producer
            if p in length and (best is None or length[p] > length[best]):
                best = p
        length[t] = 1 + (length[best] if best is not None else 0)
        prev[t] = best
    path: list[str] = []
    if scheduled:
        pos = {t: i for i, t in enumerate(scheduled)}
        end = max(scheduled, key=lambda t: (length[t], -pos[t]))
        cur: str | None = end
        while cur is not None:
            path.append(cur)
            cur = prev[cur]
        path.reverse()
    return Plan(
        tasks=len(wf.tasks),
        waves=waves,
        width=max((len(w) for w in waves), default=0),
        critical_path=tuple(path),
        unscheduled=tuple(t for t in graph.nodes if t not in wave_of),
    )


# -- cost ----------------------------------------------------------------------------------------


def _model_spend(
    task: Task, part: str | None, verb: Infer | Agent, consts: Mapping[str, Any], prices: PriceTable, once: bool
) -> Spend:
    model = _text(verb.effective_model)
    attempts = 1 if once else _attempts(task)
    items = 1 if once else _items(consts, task)
    if isinstance(verb, Infer):
        cap_field, cap, turns = "max_tokens", verb.max_tokens, None
    else:
        cap_field, cap, turns = "max_tokens_total", verb.max_tokens_total, verb.turn_budget
    tokens = _static_int(consts, task, cap)
    provider = model.partition("/")[0] if model and "/" in model else None
    price = prices.get(model) if model else None
    mock = price is None and provider in FREE_PROVIDERS
    if mock:
        price = Price(0.0, 0.0)
    free = price is not None and price.free

    def spend(status: str, usd: float | None, reason: str | None) -> Spend:
        return Spend(
            task.id,
            part,
            verb.kind,
            model,
            status,
            usd,
            tokens,
            attempts,
            items,
            turns,
            tokens is not None or free,
            reason,
        )

    if price is None:
        if model is None:
            why = "the model is only known at run time" if verb.effective_model is not None else "no model is named"
        elif provider is not None and _is_local(provider):
            why = f"`{model}` runs on local hardware: no price"
        else:
            why = f"no price for `{model}`"
        return spend("unpriced", None, why)
    if free:
        return spend("ceiling", 0.0, "the mock provider calls no model" if mock else None)
    if tokens is None:
        why = f"no `{cap_field}`" if cap is None else f"`{cap_field}` is only known at run time"
        return spend("unbounded", None, why)
    if items is None:
        return spend("unbounded", None, "fans out over a list only the run knows")
    # an agent's budget counts every token of the loop, read and written
    rate = (
        price.output_per_million if isinstance(verb, Infer) else max(price.input_per_million, price.output_per_million)
    )
    return spend("ceiling", tokens * rate / 1_000_000 * attempts * items, None)


def _is_local(provider: str) -> bool:
    from checker.contracts import tables as contracts

    p = contracts.providers().get(provider)
    return p is not None and p.kind == "local"


def _reports_spend(tool: str) -> bool:
    """A builtin whose output carries ``cost_usd``: it spends money the check cannot price."""
    from checker.contracts import tables as contracts

    c = contracts.contract(tool)
    return c is not None and "cost_usd" in c.output


def _other_spend(task: Task, part: str | None, verb: Invoke, consts: Mapping[str, Any], once: bool) -> Spend | None:
    """A child workflow, or a builtin that reports a real spend: never priced here."""
    attempts = 1 if once else _attempts(task)
    items = 1 if once else _items(consts, task)

    def spend(kind: str, status: str, usd: float | None, reason: str) -> Spend:
        return Spend(task.id, part, kind, None, status, usd, None, attempts, items, None, True, reason)

    if verb.workflow is not None:
        return spend("workflow", "unpriced", None, "a child workflow: its own spend is not folded in")
    if verb.tool is None or not _reports_spend(verb.tool):
        return None
    provider = verb.args.get("provider") if verb.args is not None else None
    if _text(provider) == "mock":
        return spend("tool", "ceiling", 0.0, "the mock provider")
    return spend("tool", "unpriced", None, f"`{verb.tool}` reports its spend only after the call")


def _parts(task: Task) -> Iterator[tuple[str | None, Verb, bool]]:
    """The task's verb, then its cleanup steps (``once``: a cleanup step runs once per task)."""
    if task.verb is not None:
        yield None, task.verb, False
    for i, step in enumerate(task.on_finally):
        if step.verb is not None:
            yield f"on_finally[{i}]", step.verb, True


def _cost(wf: Workflow, consts: Mapping[str, Any], prices: PriceTable) -> Cost:
    spends: list[Spend] = []
    for task in wf.tasks.values():
        for part, verb, once in _parts(task):
            s: Spend | None = None
            if isinstance(verb, Infer | Agent):
                s = _model_spend(task, part, verb, consts, prices, once)
            elif isinstance(verb, Invoke):
                s = _other_spend(task, part, verb, consts, once)
            if s is not None:
                spends.append(s)
    bounded = sum((s.usd for s in spends if s.status == "ceiling" and s.usd is not None), 0.0)
    statuses = {s.status for s in spends}
    if not spends:
        kind, usd = "none", 0.0
    elif "unpriced" in statuses:
        kind, usd = "unknown", None
    elif "unbounded" in statuses:
        kind, usd = "floor", bounded
    else:
        kind, usd = "ceiling", bounded
    return Cost(kind, usd, bounded, tuple(spends), prices)


def _resources(wf: Workflow, consts: Mapping[str, Any]) -> Resources:
    task_runs: int | None = 0
    model_calls: int | None = 0
    effect_calls: int | None = 0

    def add(total: int | None, n: int | None) -> int | None:
        return None if total is None or n is None else total + n

    for task in wf.tasks.values():
        items = _items(consts, task)
        for _part, verb, once in _parts(task):
            runs = 1 if once else (None if items is None else _attempts(task) * items)
            task_runs = add(task_runs, runs)
            if isinstance(verb, Infer):
                model_calls = add(model_calls, runs)
            elif isinstance(verb, Agent):
                turns = verb.turn_budget
                model_calls = add(model_calls, None if runs is None or turns is None else runs * turns)
                if verb.tools:
                    effect_calls = None
            else:
                effect_calls = add(effect_calls, runs)
    return Resources(task_runs, model_calls, effect_calls)


# -- termination ---------------------------------------------------------------------------------


def _termination(wf: Workflow, graph: Graph, consts: Mapping[str, Any]) -> Termination:
    loops: list[Loop] = []
    untimed: list[str] = []
    for task in wf.tasks.values():
        if task.for_each is not None:
            loops.append(Loop(task.id, "for_each", _items(consts, task)))
        if task.retry is not None and _attempts(task) > 1:
            loops.append(Loop(task.id, "retry", _attempts(task)))
        if isinstance(task.verb, Agent):
            loops.append(Loop(task.id, "agent", task.verb.turn_budget))
        if task.timeout is None and _waits_outside(task.verb):
            untimed.append(task.id)
    cycle_edges = graph.find_cycle()
    cycle: tuple[str, ...] = ()
    if cycle_edges:
        cycle = (*(e.producer for e in cycle_edges), cycle_edges[-1].consumer)
    if cycle:
        verdict = "cyclic"
        statement = f"No run: {' → '.join(f'`{t}`' for t in cycle)} form a cycle (NIKA-DAG-001)."
    else:
        late = [lp for lp in loops if lp.bound is None]
        verdict = "run-time" if late else "bounded"
        n = len(graph.waves)
        parts = [f"the graph is acyclic ({n} wave{'s' if n != 1 else ''})"]
        parts += [_loop_text(lp) for lp in loops]
        lead = "Ends" if not late else "Ends; some bounds are fixed when the run starts"
        statement = f"{lead}: {'; '.join(parts)}."
    if untimed:
        statement += (
            f" {_names(untimed)} wait{'s' if len(untimed) == 1 else ''} on a process or MCP server with no "
            "`timeout:`: only that program bounds the wait."
        )
    return Termination(verdict, cycle, tuple(loops), tuple(untimed), statement)


def _loop_text(lp: Loop) -> str:
    if lp.kind == "for_each":
        if lp.bound is None:
            return f"`{lp.task}` runs once per item of a list the run computes (finite, evaluated once)"
        return f"`{lp.task}` runs for {lp.bound} item{'s' if lp.bound != 1 else ''}"
    if lp.kind == "retry":
        return f"`{lp.task}` makes at most {lp.bound} attempts"
    if lp.bound is None:
        return f"agent `{lp.task}` stops at a turn budget set at run time"
    return f"agent `{lp.task}` stops after at most {lp.bound} turns"


def _waits_outside(verb: Verb | None) -> bool:
    if isinstance(verb, Exec):
        return True
    return isinstance(verb, Invoke) and verb.tool is not None and verb.tool.startswith("mcp:")


# -- effects -------------------------------------------------------------------------------------


def _effects(compiled: CompiledWorkflow, wf: Workflow) -> Effects:
    from checker.contracts import effects as fx
    from checker.contracts.effects import boundary_of
    from checker.rules.authority import needs_of

    fs: dict[str, list[str]] = {}
    net: list[str] | None = None
    exec_: list[str] | bool | None = None
    tools: list[str] | None = None
    dynamic: list[tuple[str, str, str]] = []
    outward: dict[str, list[str]] = {}

    def note(tid: str, what: str) -> None:
        lst = outward.setdefault(tid, [])
        if what not in lst:
            lst.append(what)

    def add(lst: list[str], item: str) -> None:
        if item not in lst:
            lst.append(item)

    for task in wf.tasks.values():
        for n in needs_of(task):
            v = n.value
            literal = v.value if isinstance(v, ScalarValue) and not isinstance(v, TemplateValue) else None
            if isinstance(v, TemplateValue) or (n.plane == "exec" and n.kind == "shell"):
                dynamic.append((task.id, n.plane, n.arg or n.kind))
            elif isinstance(task.verb, Agent) and v is None and n.plane != "tools":
                dynamic.append((task.id, n.plane, f"agent tool {n.tool}"))  # the model picks the target
            if n.plane in ("fs.read", "fs.write"):
                lst = fs.setdefault(n.plane.split(".")[1], [])
                if isinstance(literal, str):
                    add(lst, fx.canonical_path(literal).rstrip("/") + ("/**" if n.kind == "dir" else ""))
            elif n.plane == "net":
                net = net if net is not None else []
                host = fx.url_host(literal) if isinstance(literal, str) and n.kind == "url" else None
                if host:
                    add(net, host)
            elif n.plane == "exec":
                if n.kind == "program" and isinstance(literal, str):
                    if exec_ is not True:
                        exec_ = exec_ if isinstance(exec_, list) else []
                        add(exec_, literal)
                else:
                    exec_ = True
            elif n.plane == "tools" and n.tool:
                tools = tools if tools is not None else []
                add(tools, n.tool)
            if n.plane in OUTWARD_PLANES:
                note(
                    task.id,
                    {"exec": "runs a process", "fs.write": "writes files", "net": "reaches the network"}[n.plane],
                )
            if n.tool and n.tool.startswith("mcp:"):
                note(task.id, "calls an MCP server")
        verb = task.verb
        if isinstance(verb, Agent):
            for entry in verb.tools:
                name = entry.value if isinstance(entry.value, str) else ""
                if isinstance(entry, TemplateValue) or "*" in name:
                    tools = tools if tools is not None else []
                    add(tools, name)
                    note(task.id, "gives an agent tools by pattern")
        if isinstance(verb, Invoke) and verb.workflow is not None:
            note(task.id, "runs a child workflow")
    needed: dict[str, Any] = {}
    if fs:
        needed["fs"] = {k: fs[k] for k in ("read", "write") if k in fs}
    if net is not None:
        needed["net"] = {"http": net}
    if exec_ is not None:
        needed["exec"] = exec_
    if tools is not None:
        needed["tools"] = tools
    granted: dict[str, Any] | None = None
    if wf.permits is not None:
        b = boundary_of(wf.permits)
        granted = {
            "fs": {"read": list(b.fs_read), "write": list(b.fs_write)},
            "net": {"http": list(b.net_http)},
            "exec": b.exec if isinstance(b.exec, bool) else list(b.exec),
            "tools": [("!" if r.negated else "") + r.pattern for r in b.tools],
            "env": list(b.env),
        }
    escapes = sum(1 for d in compiled.diagnostics if d.code in _ESCAPE_CODES)
    return Effects(wf.permits is not None, needed, granted, tuple(dynamic), escapes, outward)


# -- risk ----------------------------------------------------------------------------------------


def _risk(wf: Workflow, graph: Graph, cost: Cost, term: Termination, fx: Effects) -> Risk:
    unbounded: list[str] = []
    if term.cycle:
        unbounded.append("the graph has a cycle")
    for s in cost.spends:
        if s.kind not in ("infer", "agent"):
            continue
        if not s.capped:
            field_name = "max_tokens" if s.kind == "infer" else "max_tokens_total"
            unbounded.append(f"`{s.task}` has no `{field_name}` known before the run")
        elif s.items is None:
            unbounded.append(f"`{s.task}` calls a model once per item of a list only the run knows")
    if unbounded:
        return Risk("unbounded", tuple(dict.fromkeys(unbounded)))
    gates = {t.id for t in wf.tasks.values() if isinstance(t.verb, Invoke) and t.verb.tool == HUMAN_GATE}
    open_: list[str] = []
    gated: list[str] = []
    for tid, what in fx.outward.items():
        line = f"`{tid}` {', '.join(what)}"
        if gates and graph.upstream(tid) & gates:
            gated.append(line + " after a human gate")
        else:
            open_.append(line)
    if fx.escapes:
        open_.append(
            f"{fx.escapes} need{'s' if fx.escapes != 1 else ''} fall{'s' if fx.escapes == 1 else ''} outside `permits:`"
        )
    if open_:
        return Risk("high", tuple(open_))
    if gated:
        return Risk("supervised", tuple(gated))
    return Risk("low", ("only reads, pure tools and model calls",))


# -- entry points --------------------------------------------------------------------------------


def certify(compiled: CompiledWorkflow, prices: PriceTable | None = None) -> Certificate | None:
    """The certificate of ``compiled``; ``None`` when the text produced no workflow model."""
    wf, graph = compiled.workflow, compiled.graph
    if wf is None or graph is None:
        return None
    prices = prices if prices is not None else PriceTable()
    consts = _const_scope(wf)
    plan = _plan(wf, graph)
    cost = _cost(wf, consts, prices)
    term = _termination(wf, graph, consts)
    fx = _effects(compiled, wf)
    return Certificate(
        workflow=wf.id,
        plan=plan,
        cost=cost,
        resources=_resources(wf, consts),
        termination=term,
        effects=fx,
        risk=_risk(wf, graph, cost, term, fx),
    )


def task_summary(cert: Certificate, tid: str) -> str:
    """One line for a task (an editor's code lens): its cost and its wave, e.g.
    ``≤ $0.0040 · wave 2 of 3``."""
    spends = cert.cost.of_task(tid)
    waves = cert.plan.waves
    wave = next((i for i, w in enumerate(waves) if tid in w), None)
    where = f"wave {wave + 1} of {len(waves)}" if wave is not None else "no wave (on a cycle)"
    if not spends:
        return f"no model cost · {where}"
    unpriced = [s for s in spends if s.status == "unpriced"]
    unbounded = [s for s in spends if s.status == "unbounded"]
    total = sum(s.usd or 0.0 for s in spends if s.status == "ceiling")
    if unpriced:
        what = f"cost unknown ({unpriced[0].reason})"
    elif unbounded:
        what = (
            f"cost at least {format_usd(total, up=False)} ({unbounded[0].reason})"
            if total
            else f"cost unbounded ({unbounded[0].reason})"
        )
    elif total == 0:
        what = "$0" + (f" ({spends[0].reason})" if spends[0].reason else "")
    else:
        what = f"≤ {format_usd(total)}"
    return f"{what} · {where}"
