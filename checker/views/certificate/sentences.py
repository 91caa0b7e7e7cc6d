"""The certificate in sentences, shared by the CLI block and the editor so both say the facts alike."""

from __future__ import annotations

from typing import Any

from checker.views.certificate.certify import Certificate
from checker.views.certificate.cost import Spend
from checker.views.certificate.needs import Dynamic, Effects
from checker.views.certificate.waves import Plan
from checker.views.certificate.words import format_usd


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
        needs += f" (+{n} value{'s' if n != 1 else ''} judged only at run time)"
    grant = "`permits:` declared" if fx.boundary_declared else "no `permits:` block"
    outside = f"{fx.escapes} outside the grant" if fx.escapes else "nothing outside the grant"
    return f"{needs}; {grant}; {outside}"


def dynamic_text(d: Dynamic) -> str:
    """One run-time judgement: where, from what, by which judge, e.g.
    ``publish  command[1] ← tasks.review.output  argv judge``."""
    source = f" ← {d.source}" if d.source else ""
    return f"{d.task}  {d.arg}{source}  {d.judge} judge"


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
