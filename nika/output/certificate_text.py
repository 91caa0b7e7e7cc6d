"""The certificate as a short block of text (``nika check --certificate``), one per file.

Pure: a :class:`~checker.views.certificate.Certificate` in, lines out. The sentences come from
:mod:`checker.views.certificate` where the editor shows the same facts, so both say them alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from checker.views.certificate import dynamic_text, effects_text, plan_text, spend_text

if TYPE_CHECKING:
    from checker.views.certificate import Certificate

__all__ = ["MAX_COST_ROWS", "MAX_DYNAMIC_ROWS", "MAX_REASONS", "certificate_lines"]

# At most this many per-task cost rows are listed; the rest are counted.
MAX_COST_ROWS = 8
# At most this many values judged only at run time are listed under the effects; the rest are counted.
MAX_DYNAMIC_ROWS = 8
# At most this many reasons for the risk grade are listed.
MAX_REASONS = 3
_LABEL = 13


def _row(label: str, text: str) -> str:
    return f"  {label.ljust(_LABEL)}{text}"


def _cont(text: str) -> str:
    """A continuation line under the previous row's text."""
    return f"  {' ' * _LABEL}{text}"


def certificate_lines(cert: Certificate, path: str) -> list[str]:
    """The block for one file: a heading, then plan, cost, runs, termination, effects, risk."""
    name = f" ({cert.workflow})" if cert.workflow else ""
    lines = [f"certificate · {path}{name}", _row("plan", plan_text(cert.plan))]
    cost = cert.cost
    basis = ""
    if cost.kind in ("ceiling", "floor") and any(s.usd for s in cost.spends):
        basis = f" (prices from {cost.prices.source})" if cost.prices.source else ""
    lines.append(_row("cost", cost.headline() + basis))
    for s in cost.spends[:MAX_COST_ROWS]:
        lines.append(_cont(spend_text(s)))
    if len(cost.spends) > MAX_COST_ROWS:
        lines.append(_cont(f"… and {len(cost.spends) - MAX_COST_ROWS} more (`--output-format json` lists all)"))
    if cost.prices.error:
        lines.append(_cont(cost.prices.error))
    r = cert.resources

    def count(n: int | None, word: str) -> str:
        return f"? {word}s" if n is None else f"{n} {word}{'s' if n != 1 else ''}"

    runs = (
        f"at most {count(r.task_runs, 'task run')} · {count(r.model_calls, 'model call')}"
        f" · {count(r.effect_calls, 'process/tool call')}"
    )
    if None in (r.task_runs, r.model_calls, r.effect_calls):
        runs += " (? = only the run knows)"
    lines.append(_row("runs", runs))
    term = cert.termination
    lines.append(_row("termination", f"{term.verdict} — {term.statement}"))
    fx = cert.effects
    lines.append(_row("effects", effects_text(fx)))
    for d in fx.dynamic[:MAX_DYNAMIC_ROWS]:
        lines.append(_cont(dynamic_text(d)))
    if len(fx.dynamic) > MAX_DYNAMIC_ROWS:
        lines.append(_cont(f"… and {len(fx.dynamic) - MAX_DYNAMIC_ROWS} more (`--output-format json` lists all)"))
    reasons = list(cert.risk.reasons[:MAX_REASONS])
    if len(cert.risk.reasons) > MAX_REASONS:
        reasons.append(f"and {len(cert.risk.reasons) - MAX_REASONS} more")
    lines.append(_row("risk", f"{cert.risk.grade} — " + "; ".join(reasons)))
    return lines
