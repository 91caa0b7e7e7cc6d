"""What ``nika run`` shows: the dry-run plan and the plain-text progress and summary lines.

Pure functions returning strings; :mod:`nika.commands.run` decides where they are written (through
:func:`checker.core.display.terminal_safe`, as everything the command prints).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from checker.core.display import terminal_safe
from checker.model.workflow import Agent, CompiledWorkflow, Exec, Infer, Invoke, ScalarValue
from checker.parse.values import templates

MARK = {"success": "ok", "failure": "FAILED", "skipped": "skipped", "cancelled": "cancelled"}


def plan(compiled: CompiledWorkflow, model_override: str | None = None) -> dict[str, Any]:
    """The execution plan: waves (for reading; the scheduler has no barriers), edges, effects."""
    wf = compiled.workflow
    graph = compiled.graph
    assert wf is not None and graph is not None
    tasks: dict[str, Any] = {}
    for tid, task in wf.tasks.items():
        tasks[tid] = {"verb": task.verb_kind, "effects": effects_of(task.verb, model_override)}
        if task.for_each is not None:
            tasks[tid]["for_each"] = True
        if task.on_finally:
            tasks[tid]["on_finally"] = [effects_of(s.verb, model_override) for s in task.on_finally]
    return {
        "workflow": wf.id,
        "waves": [list(w) for w in graph.waves],
        "edges": [
            {"from": e.producer, "to": e.consumer, "role": str(e.kind), "label": e.label, "passes": sorted(e.passes)}
            for e in graph.edges
        ],
        "tasks": tasks,
        "permits": wf.permits.value.to_python() if wf.permits is not None else None,
        "outputs": [o.name for o in wf.outputs],
        # what the run would stop on with NIKA-IMPL-002 (the checker's build/unavailable findings)
        "unavailable": [d.message for d in compiled.diagnostics if d.rule == "build/unavailable"],
    }


def effects_of(verb: Any, model_override: str | None = None) -> list[str]:
    """The effects a verb needs, as short human-readable strings (dynamic parts shown as `${{…}}`)."""

    def shown(v: Any) -> str:
        if v is None:
            return "?"
        if isinstance(v, ScalarValue) and not any(True for _ in templates(v)):
            return str(v.value)
        return "${{…}}"

    if isinstance(verb, Exec):
        if verb.command:
            return [f"exec {shown(verb.command[0])}"]
        return ["exec /bin/sh -c"]
    if isinstance(verb, Infer):
        return [f"model {model_override or shown(verb.effective_model)}"]
    if isinstance(verb, Agent):
        return [f"agent {model_override or shown(verb.effective_model)}"]
    if isinstance(verb, Invoke):
        if verb.workflow is not None:
            return [f"workflow {shown(verb.workflow)}"]
        from checker.contracts import tables as contracts

        c = contracts.contract(verb.tool or "")
        planes = ", ".join(c.effects) if c is not None and c.effects else "pure"
        return [f"tool {verb.tool} ({planes})"]
    return []


def plan_text(p: dict[str, Any]) -> str:
    lines = [f"plan for workflow `{p['workflow']}` (dry run: nothing was executed)", ""]
    for i, wave in enumerate(p["waves"], 1):
        lines.append(f"wave {i}:")
        for tid in wave:
            t = p["tasks"][tid]
            extra = " (for_each)" if t.get("for_each") else ""
            lines.append(f"  {tid}: {t['verb']}{extra} — {', '.join(t['effects']) or 'no effect'}")
    if p["edges"]:
        lines += ["", "edges:"]
        for e in p["edges"]:
            label = f" [{e['label']}]" if e["label"] else ""
            lines.append(f"  {e['from']} -> {e['to']}: {e['role']}{label} passes on {', '.join(e['passes'])}")
    lines += ["", *permits_lines(p["permits"])]
    if p.get("unavailable"):
        lines += ["", "not available in this build (the run stops there with NIKA-IMPL-002):"]
        lines += [f"  {m}" for m in p["unavailable"]]
    return "\n".join(lines) + "\n"


def permits_lines(permits: Any) -> list[str]:
    """The ``permits:`` block as it is written, one grant family a line (``fs.read: ./a/**, ./b``)."""
    if permits is None:
        return ["permits: none (zero authority)"]
    if not permits:
        return ["permits: {} (nothing granted)"]
    lines = ["permits:"]

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        elif isinstance(value, list):
            lines.append(f"  {prefix}: {', '.join(str(v) for v in value) if value else '(none)'}")
        else:
            lines.append(f"  {prefix}: {json.dumps(value) if not isinstance(value, str) else value}")

    walk("", permits)
    return lines


def event_line(event: dict[str, Any]) -> str | None:
    """One plain progress line per task transition (``None`` for events not worth a line)."""
    t = event.get("type")
    task = event.get("task")
    if t == "task.started":
        return f"  … {task} started"
    if t in ("task.completed", "task.failed", "task.skipped", "task.cancelled"):
        status = {"task.completed": "success", "task.failed": "failure"}.get(t, t.split(".", 1)[1])
        dur = event.get("duration_ms")
        took = f" ({dur:.0f} ms)" if isinstance(dur, int | float) else ""
        msg = f": {event.get('error_code')} {event.get('message')}" if status == "failure" else ""
        if status == "success" and event.get("recovered_from"):  # on_error.recover settled a failure
            return f"  {'recovered':>9} {task}{took}: from {event['recovered_from']} (on_error.recover)"
        usd = event.get("cost_usd", 0)
        spent = f" · ${usd:.6f}" if isinstance(usd, int | float) and usd else (" · cost unknown" if usd is None else "")
        return f"  {MARK[status]:>9} {task}{took}{spent}{msg}"
    if t == "verb.invoked" and event.get("phase") == "model_call" and event.get("max_turns") is not None:
        return f"  … {task} turn {event.get('turn')}/{event.get('max_turns')} · {event.get('tokens_total')} tokens" + (
            f" · calling {', '.join(event['tool_calls'])}" if event.get("tool_calls") else ""
        )
    if t == "agent.budget_checkpoint":
        return f"  … {task} stopped: {event.get('stop_reason')} after {event.get('turns')} turns"
    if t == "checkpoint.written" and isinstance(event.get("index"), int) and event.get("status"):
        return iteration_line(event)
    if t == "task.cache_hit":  # ADR-099 §2: a skip is never silent
        src = event.get("cached_from") if isinstance(event.get("cached_from"), dict) else {}
        at = f"[{event['index']}]" if isinstance(event.get("index"), int) else ""
        return f"  {'cache hit':>9} {task}{at} (from {src.get('trace', '?')} line {src.get('line', '?')})"
    if t == "workflow.paused":
        return f"  {'PAUSED':>9} {task}: {event.get('message')!r} waits for an answer ({_takes(event)})"
    if t == "approval.decided":
        return f"  {'approval':>9} {task}: {event.get('decision')} ({event.get('answered_by')})"
    if t == "task.retrying":
        return f"  retrying {task} (attempt {event.get('attempt')} failed: {event.get('error_code')})"
    return None


ITERATION_MARK = {**MARK, "cancelled": "cancelled"}


def iteration_line(event: dict[str, Any]) -> str:
    """One settled ``for_each`` iteration: ``       ok fan[2] "c" (4 ms)`` (its error on a failure)."""
    status = str(event.get("status"))
    dur = event.get("duration_ms")
    took = f" ({dur:.0f} ms)" if isinstance(dur, int | float) else ""
    item = f" {event['item']}" if isinstance(event.get("item"), str) and event["item"] else ""
    err = f": {event.get('error_code')} {event.get('message')}" if event.get("error_code") else ""
    return f"  {ITERATION_MARK.get(status, status):>9} {event.get('task')}[{event.get('index')}]{item}{took}{err}"


class StreamLine:
    """The progress view's live line while models stream (``infer.chunk`` events): the task and
    the last characters that arrived, rewritten in place on a terminal, and cleared before the
    next ordinary progress line. Off a terminal the pieces are not shown (a log gets the lines).

    The line never reaches the terminal's last column (``columns``): a line that wrapped would
    leave its first row behind at every rewrite, since the erase clears only the cursor's row."""

    WIDTH = 60

    def __init__(self, columns: int = 80) -> None:
        self.tails: dict[tuple[str, str], str] = {}
        self.open = False
        self.room = max(columns, 20) - 1

    ERASE = "\r\x1b[K"  # back to the line's start, erase it

    def chunk(self, event: dict[str, Any]) -> str:
        """The live line's new text, escaped (the caller writes :meth:`erase` first)."""
        task = str(event.get("task"))
        channel = "thinking" if event.get("channel") == "thinking" else "writing"
        tail = " ".join((self.tails.get((task, channel), "") + str(event.get("delta") or "")).split())
        self.tails[(task, channel)] = tail = tail[-self.WIDTH :]
        head = terminal_safe(f"  … {task} {channel}: ")
        return _fit(head, terminal_safe(tail.lstrip()), self.room)

    def erase(self) -> str:
        self.open = True
        return self.ERASE

    def clear(self) -> str:
        """What to write before an ordinary line: the live line erased, when one is showing."""
        if not self.open:
            return ""
        self.open = False
        return self.ERASE


def _cells(text: str) -> int:
    """The terminal columns ``text`` takes (:func:`checker.core.display.char_width`)."""
    from checker.core.display import char_width

    return sum(map(char_width, text))


def _fit(head: str, tail: str, room: int) -> str:
    """``head + tail`` within ``room`` columns: the tail loses its oldest characters first, then
    the head its end."""
    left = room - _cells(head)
    if left < 0:
        while head and _cells(head) > room:
            head = head[:-1]
        return head
    while tail and _cells(tail) > left:
        tail = tail[1:]
    return head + tail


def summary_text(report: dict[str, Any], file: str = "FILE") -> str:
    counts: dict[str, int] = {}
    for rec in report["tasks"].values():
        counts[rec["status"]] = counts.get(rec["status"], 0) + 1
    parts = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    hits = sum(1 for rec in report["tasks"].values() if rec.get("cache_hit"))
    line = f"workflow {report['workflow_state']}: {parts or 'no tasks'}" + (f" ({hits} cache hit)" if hits else "")
    if "cost_usd" in report and report.get("cost_usd") != 0:
        cost = report.get("cost_usd")
        line += f"\n  cost: {'unknown (a model has no price)' if cost is None else f'${cost:.6f}'}"
        bound = report.get("cost_bound")
        if isinstance(bound, dict) and bound.get("headline"):
            line += f" (the certificate's bound: {bound['headline']})"
    for p in report.get("paused") or []:
        line += (
            f"\n  paused: `{p['task']}` asks {p.get('message')!r} ({_takes(p)}); answer with "
            f"nika run {file} --resume {report.get('trace') or 'TRACE'} --answer {p['task']}={_example(p)}"
        )
    line += determinism_text(report.get("determinism"))
    if report.get("error"):
        line += f"\n  error: {report['error']['code']} {report['error']['message']}"
    if report.get("trace"):
        line += f"\n  trace: {report['trace']}"
    return line + "\n"


def _takes(prompt: dict[str, Any]) -> str:
    """``confirm: true or false`` / ``choice: one of "a", "b"``: the mode and what an answer may be."""
    mode = prompt.get("mode")
    choices = prompt.get("choices")
    if isinstance(choices, str):  # the paused frame's own field carries them serialized
        with contextlib.suppress(ValueError):
            choices = json.loads(choices)
    if mode == "confirm":
        return "confirm: true or false"
    if mode == "choice" and isinstance(choices, list) and choices:
        return "choice: one of " + ", ".join(json.dumps(c, ensure_ascii=False) for c in choices)
    if mode == "input":
        return "input: a JSON string, e.g. '\"text\"'"
    return str(mode)


def _example(prompt: dict[str, Any]) -> str:
    if prompt.get("mode") == "confirm":
        return "true"
    return "VALUE"


def determinism_text(d: dict[str, Any] | None) -> str:
    """The summary's lines on ``run:`` (NEP-0010): the declaration, and what could not be fixed."""
    if not d:
        return ""
    entropy = f"seeded {d.get('seed')}" if d.get("entropy") == "seeded" else f"{d.get('entropy')} entropy"
    line = f"\n  determinism: {entropy} · {d.get('clock')} clock"
    unfixed = d.get("not_deterministic") or []
    if d.get("deterministic"):
        line += " (its journal repeats byte for byte outside the nonce fields" + (
            ", where what these reach answers the same)" if unfixed else ")"
        )
    for item in unfixed:
        line += f"\n  not deterministic: `{item['task']}` reaches {item['why']}"
    return line
