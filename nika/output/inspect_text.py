"""``nika inspect --format text``: the canonical projection read by a person.

Drawn from the graph document alone (what ``--format json`` prints), so the text can never say
what the projection does not: the workflow, each wave with its tasks (verb, tool or model, and the
declared policy the projection carries), then the edges by kind.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from checker.views.certificate.words import format_usd
from checker.views.projection import waves_of

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _safe(text: str) -> str:
    """Control characters spelled ``\\uXXXX``: a task id or a condition cannot drive the terminal."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _ms(ms: float) -> str:
    if ms % 3_600_000 == 0:
        return f"{int(ms // 3_600_000)}h"
    if ms % 60_000 == 0:
        return f"{int(ms // 60_000)}m"
    if ms % 1000 == 0:
        return f"{int(ms // 1000)}s"
    return f"{ms:g}ms"


def _details(n: Mapping[str, Any]) -> list[str]:
    out = []
    if n.get("when") is not None:
        out.append(f"when {n['when']}")
    fan = n.get("fan_out")
    if fan is not None:
        out.append(f"for_each over {fan['count']} items" if "count" in fan else "for_each over an expression")
    if n.get("permits"):
        out.append("permits " + ", ".join(n["permits"]))
    cost = n.get("cost_interval")
    if cost is not None:
        low, high = cost
        shown = format_usd(high) if low == high else f"{format_usd(low, up=False)}–{format_usd(high)}"
        out.append(f"cost {shown}")
    if "retry_max_attempts" in n:
        out.append(f"retry {n['retry_max_attempts']} attempts")
    if "timeout_ms" in n:
        out.append(f"timeout {_ms(n['timeout_ms'])}")
    if "on_error" in n:
        out.append(f"on_error {n['on_error']}")
    if n.get("outputs"):
        out.append("outputs " + ", ".join(n["outputs"]))
    return out


def _edge(e: Mapping[str, Any]) -> str:
    extra = e.get("binding") or e.get("predicate")
    return f"{e['from']} -> {e['to']}  {e['kind']}" + (f" ({extra})" if extra else "")


def render_text(doc: Mapping[str, Any]) -> str:
    """The graph document ``doc`` (``graph_format: 2``) as lines of text."""
    nodes = {n["id"]: n for n in doc["nodes"]}
    waves = waves_of(doc)
    n_tasks, n_waves = len(nodes), len(waves)
    lines = [
        f"workflow {doc.get('workflow') or '(unnamed)'} · {n_tasks} task{'' if n_tasks == 1 else 's'} "
        f"in {n_waves} wave{'' if n_waves == 1 else 's'} · graph_format {doc['graph_format']}"
    ]
    width = max((len(t) for t in nodes), default=0)
    for i, wave in enumerate(waves):
        lines.append(f"wave {i + 1}")
        for tid in wave:
            n = nodes[tid]
            what = n.get("tool") or n.get("model")
            head = f"{tid:<{width}}  {n['verb']}" + (f" {what}" if what else "")
            lines.append("  " + " · ".join([head, *_details(n)]))
    if doc["edges"]:
        lines.append("edges")
        lines += ["  " + _edge(e) for e in doc["edges"]]
    return _safe("\n".join(lines)) + "\n"
