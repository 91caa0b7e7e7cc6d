"""What ``nika trace ls|show|outputs|diff|receipt`` print for people (``--output-format json`` is
the tools' lane and prints the data these functions read)."""

from __future__ import annotations

import json
import time
from typing import Any

from runtime.journal.read import UNRECORDED, ModelCall, RunView, TaskView

MARK = {
    "success": "ok",
    "failure": "FAILED",
    "skipped": "skipped",
    "cancelled": "cancelled",
    "running": "running",
    "pending": "pending",
    "paused": "PAUSED",
}
BAR = 32
MAX_SUBS = 12


def when(ns: int | None) -> str:
    if ns is None:
        return "?"
    return time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime(ns / 1e9))


def took(ms: float | None) -> str:
    if ms is None:
        return "?"
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{int(ms // 60_000)}m{int(ms % 60_000 // 1000):02d}s"


def usd(v: float | None) -> str:
    return "unknown" if v is None else f"${v:.4f}"


DAMAGE_NOTE = {
    "truncated": "cut short",
    "torn": "torn mid-write",
    "empty": "empty",
    "forged": "FORGED",
}


def ls_text(rows: list[dict[str, Any]]) -> str:
    """The runs, a run history's attempts together (rows come grouped, newest first): a later
    attempt names the one it resumed (``↳ resumes RUN``)."""
    if not rows:
        return "no runs\n"
    head = ("RUN", "WORKFLOW", "STATE", "STARTED", "DURATION", "TASKS", "COST")
    table = [head]
    chained = False
    for r in rows:
        state = r["state"] + (f" ({r['paused_task']})" if r.get("paused_task") else "")
        if r.get("incomplete_from") is not None:
            state += f", journal incomplete from frame {r['incomplete_from']}"
        elif r.get("damage") in DAMAGE_NOTE:
            state += f", {DAMAGE_NOTE[r['damage']]}"
        if r.get("resume_candidate"):
            state += " *"
        run = r["run"]
        if r.get("resumed_from"):
            chained = True
            run = f"{run} ↳ resumes {r['resumed_from']}"
        elif r.get("history_root") and r["history_root"] != r["run"]:
            run = f"{run} ↳"
        table.append(
            (
                run,
                (r["workflow"] or "?") + (" (child)" if r.get("depth") else ""),
                state,
                when(r["started_ns"]) + (" (virtual)" if r.get("virtual_clock") else ""),
                took(r["duration_ms"]),
                str(r["tasks"]),
                usd(r["cost_usd"]),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table]
    lines.append("* the journal to resume: the newest run history's head holding the most completed work")
    if chained:
        lines.append("↳ a resume's journal, linked to the one it resumed (one run history, newest attempt first)")
    return "\n".join(lines) + "\n"


def _task_line(t: TaskView, width: int) -> str:
    extra = [took(t.duration_ms)] if t.duration_ms is not None else []
    if t.attempts and t.attempts > 1:
        extra.append(f"{t.attempts} attempts")
    tin, tout = t.tokens()
    if t.model_calls:
        calls = len(t.model_calls)
        extra.append(f"{calls} model call{'s' if calls != 1 else ''} · {tin}→{tout} tokens")
    if t.cost_usd is not None:
        extra.append(usd(t.cost_usd))
    if t.cache_hit:
        extra.append("cache hit")
    line = f"  {MARK.get(t.status, t.status):>9} {t.id.ljust(width)}  {t.note or ''}"
    return line.rstrip() + (f"  ({', '.join(extra)})" if extra else "")


def _call_line(c: ModelCall) -> str:
    tokens = f"{c.tokens_in if c.tokens_in is not None else '?'}→{c.tokens_out if c.tokens_out is not None else '?'}"
    turn = f"turn {c.turn} · " if c.turn is not None else ""
    err = f" · {c.error_code}" if c.error_code else ""
    return f"model {c.model or '?'} · {turn}{tokens} tokens · {took(c.duration_ms)}{err}"


def _tool_line(call: dict[str, Any]) -> str:
    if call.get("workflow"):
        return f"child workflow {call['workflow']} · {call.get('state')} · trace {call.get('trace')}"
    name = call.get("tool") or call.get("event") or "tool"
    status = f" · {call['status']}" if call.get("status") else ""
    err = f" · {call['error_code']}" if call.get("error_code") else ""
    return f"tool {name}{status}{err}"


def show_text(v: RunView, verdict: dict[str, Any] | None = None) -> str:
    lines = [
        f"run {v.run_id} · workflow {v.workflow or '?'} · {v.state}",
        f"  started {when(v.started)}{' (virtual clock)' if v.virtual_clock else ''} · took {took(v.duration_ms)}"
        f" · {len(v.tasks)} tasks · cost {usd(v.cost_usd)}",
        f"  journal {v.path} · {v.frames} frames"
        + (f" · verify: {verdict['verdict']}" if verdict else "")
        + (f" ({verdict['damage']})" if verdict and verdict.get("damage") not in (None, "whole", "forged") else "")
        + (f" · {len(v.torn_lines)} torn line(s) skipped" if v.torn_lines else "")
        + (f" · {len(v.deep_lines)} frame(s) nested too deeply to read whole" if v.deep_lines else ""),
    ]
    if v.incomplete is not None:
        from runtime.journal.incomplete import describe

        lines.append(f"  {describe(v.incomplete)}")
    if v.paused_task:
        lines.append(f"  paused at task {v.paused_task}: the run waits for an answer")
    if v.error_code:
        lines.append(f"  error: {v.error_code}")
    width = max((len(t) for t in v.tasks), default=4)
    lines += ["", "tasks:"]
    for t in v.tasks.values():
        lines.append(_task_line(t, width))
        subs = [f"retry after attempt {r.get('attempt')}: {r.get('error_code')}" for r in t.retries]
        subs = [s for r, s in zip(t.retries, subs, strict=True) if r.get("index") is None]  # else its iteration's
        subs += [_call_line(c) for c in t.model_calls]
        subs += [_tool_line(c) for c in t.tool_calls]
        if len(subs) > MAX_SUBS:  # a wide for_each or a long agent loop: the json has every call
            subs = [*subs[: MAX_SUBS - 1], f"… {len(subs) - MAX_SUBS + 1} more (--output-format json lists all)"]
        subs = _iteration_lines(v.iterations.of(t.id), v.iterations.sizes.get(t.id)) + subs
        if t.error_code:
            subs.append(f"{t.error_code}: {t.message or ''}".rstrip())
        for i, s in enumerate(subs):
            lines.append(f"  {' ' * 9} {'└─' if i == len(subs) - 1 else '├─'} {s}")
    lines += ["", "timeline:", *timeline(v)]
    return "\n".join(lines) + "\n"


ITERATIONS_SHOWN = 20  # a wider fan-out shows its first ten, every failure, and a count of the rest


def _iteration_lines(rows: list[dict[str, Any]], size: int | None) -> list[str]:
    """A ``for_each`` task's iterations (:mod:`runtime.journal.iterations`), one line each."""
    if not rows:
        return []
    shown = rows
    if len(rows) > ITERATIONS_SHOWN:
        shown = [r for i, r in enumerate(rows) if i < ITERATIONS_SHOWN // 2 or r["status"] != "success"]
    out = [iteration_text(r) for r in shown]
    if len(shown) < len(rows):
        out.append(f"… {len(rows) - len(shown)} more iterations ok (--output-format json lists all)")
    if size is not None and size > len(rows):
        out.append(f"{size - len(rows)} of {size} iterations never settled")
    return out


def iteration_text(r: dict[str, Any]) -> str:
    """``[2] c · FAILED NIKA-EXEC-001: … · 3 ms`` (one row of runtime.journal.iterations)."""
    parts = [f"[{r['index']}]" + (f" {r['item']}" if r.get("item") else "")]
    status = "cache hit" if r.get("cache_hit") else MARK.get(r["status"], r["status"])
    if r.get("error_code"):
        status += f" {r['error_code']}" + (f": {r['message']}" if r.get("message") else "")
    parts.append(status)
    if r.get("retries"):
        parts.append(f"{len(r['retries']) + 1} attempts")
    if r.get("duration_ms") is not None and not r.get("cache_hit"):
        parts.append(took(r["duration_ms"]))
    return " · ".join(parts)


def timeline(v: RunView) -> list[str]:
    """One bar per started task over the run's span, with its start offset and duration."""
    if v.started is None or v.ended is None:
        return ["  (no frames)"]
    span = max(v.ended - v.started, 1)
    width = max((len(t) for t in v.tasks), default=4)
    out = []
    for t in sorted(v.tasks.values(), key=lambda t: (t.started is None, t.started or 0)):
        if t.started is None:
            out.append(f"  {t.id.ljust(width)} |{' ' * BAR}| not started ({t.status})")
            continue
        end = t.ended if t.ended is not None else v.ended
        a = int((t.started - v.started) / span * BAR)
        b = max(a + 1, int((end - v.started) / span * BAR + 0.999))
        b = min(b, BAR)
        bar = " " * a + ("█" if t.status != "failure" else "▒") * (b - a) + " " * (BAR - b)
        offset = took((t.started - v.started) / 1e6)
        out.append(f"  {t.id.ljust(width)} |{bar}| +{offset} · {took((end - t.started) / 1e6)} · {t.status}")
    return out


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def outputs_text(v: RunView) -> str:
    lines = [f"run {v.run_id} · workflow {v.workflow or '?'} · {v.state}", ""]
    if v.outputs is UNRECORDED:
        lines.append("workflow outputs: unrecorded (the journal has no terminal frame carrying them)")
    else:
        lines += ["workflow outputs:", _indent(_json(v.outputs))]
    lines += ["", "task outputs:"]
    for t in v.tasks.values():
        if t.output is UNRECORDED:
            lines.append(f"  {t.id}: ({t.status}, no output recorded)")
        else:
            lines.append(f"  {t.id}:")
            lines.append(_indent(_json(t.output), 4))
    return "\n".join(lines) + "\n"


def _indent(text: str, n: int = 2) -> str:
    return "\n".join(" " * n + line for line in text.splitlines())


def diff_text(d: dict[str, Any]) -> str:
    a, b = d["a"], d["b"]
    lines = [f"a: {a['run']} · {a['workflow']} · {a['state']}", f"b: {b['run']} · {b['workflow']} · {b['state']}"]
    lines += [f"note: {n}" for n in d["notes"]]
    if d["state"]["changed"]:
        lines.append(f"state: {d['state']['a']} → {d['state']['b']}")
    if d["outputs"]["changed"]:
        lines.append("workflow outputs changed")
    lines.append("")
    for t in d["tasks"]:
        if t.get("only_in"):
            lines.append(f"  {t['task']}: only in {t['only_in']}")
            continue
        if not t["changed"]:
            unknown = f" ({', '.join(t['unrecorded'])} unrecorded)" if t["unrecorded"] else ""
            lines.append(f"  {t['task']}: same{unknown}")
            continue
        parts = []
        for k in t["changed"]:
            if k == "status":
                sa = t["status"]["a"] + (f" {t['error_code']['a']}" if t["error_code"]["a"] else "")
                sb = t["status"]["b"] + (f" {t['error_code']['b']}" if t["error_code"]["b"] else "")
                parts.append(f"status {sa} → {sb}")
            elif k == "cost":
                parts.append(f"cost {usd(t['cost']['a'])} → {usd(t['cost']['b'])}")
            elif k == "tokens":
                (ia, oa), (ib, ob) = t["tokens"]["a"], t["tokens"]["b"]
                parts.append(f"tokens {ia}→{oa} → {ib}→{ob}")
            else:
                parts.append(f"{k} changed")
        lines.append(f"  {t['task']}: {'; '.join(parts)}")
    n = len(d["changed_tasks"])
    lines += ["", f"{n} task{'s' if n != 1 else ''} changed" + (f": {', '.join(d['changed_tasks'])}" if n else "")]
    return "\n".join(lines) + "\n"


def receipt_text(r: dict[str, Any]) -> str:
    tv = r["trace_verdict"]
    lines = [
        f"receipt (receipt_format {r['receipt_format']}) for run {r['run']} · workflow {r['workflow']}",
        f"  digest        {r['digest']}",
        f"  trace verdict {tv['verdict']} · {tv['frames']} frames · head {tv['head']}",
        f"  outcome       {tv['outcome']['state']} · "
        + ", ".join(f"{k} {s}" for k, s in tv["outcome"]["tasks"].items())
        + f" · cost {usd(tv['outcome']['cost_usd'])}",
    ]
    lines += [f"    line {p['line']}: {p['problem']}" for p in tv["problems"]]
    cert = r["certificate"]
    if cert is not None:
        total = cert.get("cost", {}).get("total", {})
        bound = total.get("kind", "?")
        if total.get("usd") is not None:
            bound += f" {usd(total['usd'])}"
        lines.append(f"  certificate   risk {cert.get('risk', {}).get('grade', '?')} · static cost bound {bound}")
    for part, why in r["unrecorded"].items():
        lines.append(f"  {part:<13} unrecorded: {why}")
    return "\n".join(lines) + "\n"
