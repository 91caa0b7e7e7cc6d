"""The workflow's certificate in the editor: a hover card on the ``workflow:`` key and, on each
task's key line, a code lens with the task's cost and wave (``≤ $0.0040 · wave 2 of 3``).

Both read :func:`checker.views.certificate.certify`, computed once per snapshot, with the prices of
``NIKA_PRICES`` in the server's environment (the table ``nika check`` and ``nika run`` read). A
lens carries a command with an empty id, which clients render as plain, unclickable text; the
handler that serves it with the run lenses is :mod:`nika_lsp.features.lenses`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from checker.views.certificate import (
    Certificate,
    certify,
    dynamic_text,
    effects_text,
    plan_text,
    prices_from_env,
    task_summary,
)
from nika_lsp.convert import span_to_range

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot

__all__ = ["certificate_markdown", "certificate_of", "code_lenses"]

# Reasons listed under the risk grade in the hover card; the rest are counted.
MAX_REASONS = 5
# Values judged only at run time listed under the effects in the hover card; the rest are counted.
MAX_DYNAMIC = 5


def certificate_of(snap: Snapshot) -> Certificate | None:
    """The snapshot's certificate (``None`` without a workflow model), computed once."""
    return snap.derived("certificate", lambda: certify(snap.compiled, prices_from_env(os.environ)))


def certificate_markdown(cert: Certificate | None) -> str:
    """The hover card's certificate section."""
    if cert is None:
        return "**Certificate** — none yet: the document does not parse as a workflow."
    out = [f"**Certificate** · `{cert.workflow}`" if cert.workflow else "**Certificate**"]
    cost = cert.cost
    rows = [
        f"- **Plan** — {plan_text(cert.plan)}",
        f"- **Cost** — {cost.headline()}",
        f"- **Termination** — {cert.termination.verdict}: {cert.termination.statement}",
        f"- **Effects** — {effects_text(cert.effects)}",
    ]
    dynamic = cert.effects.dynamic
    rows.extend(f"  - `{dynamic_text(d)}`" for d in dynamic[:MAX_DYNAMIC])
    if len(dynamic) > MAX_DYNAMIC:
        rows.append(f"  - and {len(dynamic) - MAX_DYNAMIC} more")
    reasons = list(cert.risk.reasons[:MAX_REASONS])
    if len(cert.risk.reasons) > MAX_REASONS:
        reasons.append(f"and {len(cert.risk.reasons) - MAX_REASONS} more")
    rows.append(f"- **Risk** — **{cert.risk.grade}**: " + "; ".join(reasons))
    out.append("\n".join(rows))
    if cost.prices.error:
        out.append(f"*{cost.prices.error}*")
    elif any(s.status == "unpriced" for s in cost.spends):
        out.append("*Some models have no price in the model catalog: set `NIKA_PRICES` in the server's environment.*")
    return "\n\n".join(out)


def code_lenses(snap: Snapshot, encoding: str) -> list[lsp.CodeLens]:
    """One lens per task, on its key: the task's cost and wave."""
    cert = certificate_of(snap)
    wf = snap.compiled.workflow
    if cert is None or wf is None:
        return []
    src = snap.source
    return [
        lsp.CodeLens(
            range=span_to_range(src, task.key.span, encoding),
            command=lsp.Command(title=task_summary(cert, tid), command=""),
        )
        for tid, task in wf.tasks.items()
    ]
