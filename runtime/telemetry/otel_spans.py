"""Events to spans for :class:`runtime.telemetry.otel_sink.OtelSink` (the mapping is described there)."""

from __future__ import annotations

from typing import Any

TERMINAL_TASK = {
    "task.completed": "success",
    "task.failed": "failure",
    "task.skipped": "skipped",
    "task.cancelled": "cancelled",
    "task.cache_hit": "success",
}
TERMINAL_RUN = ("workflow.completed", "workflow.failed", "workflow.cancelled", "workflow.paused")


MAX_ATTR = 4096  # a long value (an error message) is cut: span attributes are not the journal


def handle(sink: Any, ev: dict[str, Any]) -> None:
    t = ev.get("type")
    at = ev.get("at") if isinstance(ev.get("at"), int) else None
    tid = ev.get("task") if isinstance(ev.get("task"), str) else None
    if t == "workflow.started":
        _start_root(sink, ev, at)
    elif t in TERMINAL_RUN:
        end_all(sink, at)
        _end_root(sink, ev, at)
    elif tid is None:
        return
    elif t == "task.started":
        note = ev.get("note") if isinstance(ev.get("note"), str) else ""
        sink.tasks[tid] = _span(sink, f"task {tid}", sink.root, at, {"nika.task.id": tid, "nika.task.note": note})
        tool = note.partition("invoke · ")[2]
        if tool and tool != "workflow":  # an invoke: task's attempts are tool calls
            sink.tools[tid] = tool
        _next_attempt(sink, tid, None, at)
    elif t == "task.retrying":
        _retry(sink, tid, ev, at)
    elif t in TERMINAL_TASK:
        _end_task(sink, tid, TERMINAL_TASK[t], ev, at)
    elif t == "verb.invoked":
        _verb(sink, tid, ev, at)
    elif t == "tool.invoked":
        _tool(sink, tid, ev, at)
    elif t == "permit.checked":
        parent = _parent(sink, tid)
        if parent is not None:
            keys = ("gate", "plane", "decision", "why")
            parent.add_event("permit_checked", _attrs({f"nika.{k}": ev.get(k) for k in keys}), timestamp=at)


def _attrs(values: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in values.items():
        if isinstance(v, bool | int | float):
            out[k] = v
        elif isinstance(v, str):
            out[k] = v if len(v) <= MAX_ATTR else v[:MAX_ATTR] + "…"
        elif isinstance(v, list) and v and all(isinstance(x, str) for x in v):
            out[k] = [x[:MAX_ATTR] for x in v]
    return out


def _span(sink: Any, name: str, parent: Any, start: int | None, attrs: dict[str, Any]) -> Any:
    from opentelemetry import trace

    ctx = trace.set_span_in_context(parent) if parent is not None else None
    return sink.tracer.start_span(name, context=ctx, start_time=start, attributes=_attrs(attrs))


def _status(span: Any, ok: bool | None, description: str | None = None) -> None:
    from opentelemetry.trace import Status, StatusCode

    if ok is True:
        span.set_status(Status(StatusCode.OK))
    elif ok is False:
        span.set_status(Status(StatusCode.ERROR, (description or "")[:MAX_ATTR]))


def _start_root(sink: Any, ev: dict[str, Any], at: int | None) -> None:
    wf = ev.get("workflow")
    attrs = {
        "nika.workflow": wf,
        "nika.workflow_sha256": ev.get("workflow_sha256"),
        "nika.engine_version": ev.get("engine_version"),
        "nika.depth": ev.get("depth"),
    }
    sink.root = _span(sink, f"nika run {wf}", None, at, attrs)


def _end_root(sink: Any, ev: dict[str, Any], at: int | None) -> None:
    if sink.root is None:
        return
    state = ev.get("state")
    sink.root.set_attribute("nika.workflow.state", str(state))
    _status(sink.root, True if state == "success" else False if state == "failure" else None, f"workflow {state}")
    sink.root.end(end_time=at)
    sink.root = None


def _next_attempt(sink: Any, tid: str, index: Any, at: int | None) -> None:
    _, n = sink.attempts.get((tid, index), (None, 0))
    attrs: dict[str, Any] = {"nika.task.id": tid, "nika.attempt": n + 1}
    if index is not None:
        attrs["nika.iteration"] = index
    name = f"attempt {n + 1}"
    tool = sink.tools.get(tid)
    if tool is not None:
        attrs |= {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
        name = f"execute_tool {tool} (attempt {n + 1})"
    span = _span(sink, name, sink.tasks.get(tid), at, attrs)
    sink.attempts[(tid, index)] = (span, n + 1)


def _retry(sink: Any, tid: str, ev: dict[str, Any], at: int | None) -> None:
    index = ev.get("index")
    key = (tid, index) if (tid, index) in sink.attempts else (tid, None)
    span, _ = sink.attempts.get(key, (None, 0))
    if span is not None:
        span.set_attribute("error.type", str(ev.get("error_code")))
        _status(span, False, str(ev.get("error_code")))
        span.end(end_time=at)
    delay = ev.get("delay_ms")
    nxt = at + int(delay * 1e6) if at is not None and isinstance(delay, int | float) else at
    _next_attempt(sink, tid, index, nxt)


def _end_task(sink: Any, tid: str, status: str, ev: dict[str, Any], at: int | None) -> None:
    span = sink.tasks.pop(tid, None)
    if span is None:  # settled without starting (skipped by a gate, cancelled): a point span says so
        span = _span(sink, f"task {tid}", sink.root, at, {"nika.task.id": tid, "nika.task.note": ev.get("note")})
    code, message = ev.get("error_code"), ev.get("message")
    ok = True if status == "success" else False if status == "failure" else None
    for key in [k for k in sink.attempts if k[0] == tid]:
        attempt, _ = sink.attempts.pop(key)
        if ok is False and code:
            attempt.set_attribute("error.type", str(code))
        _status(attempt, ok, f"{code}: {message}" if code else None)
        attempt.end(end_time=at)
    span.set_attribute("nika.task.status", status)
    if code:
        span.set_attribute("error.type", str(code))
    _status(span, ok, f"{code}: {message}" if code else None)
    span.end(end_time=at)


def _parent(sink: Any, tid: str) -> Any:
    owner = tid.split(".on_finally[", 1)[0]
    attempt = sink.attempts.get((owner, None))
    if attempt is not None and owner == tid:
        return attempt[0]
    return sink.tasks.get(owner) or sink.root


def _call_span(sink: Any, tid: str, name: str, ev: dict[str, Any], at: int | None, attrs: dict[str, Any]) -> None:
    dur = ev.get("duration_ms")
    start = at - int(dur * 1e6) if at is not None and isinstance(dur, int | float) else at
    span = _span(sink, name, _parent(sink, tid), start, attrs)
    code = ev.get("error_code")
    if code:
        span.set_attribute("error.type", str(code))
    _status(span, False if code else None, str(code) if code else None)
    span.end(end_time=at)


def _verb(sink: Any, tid: str, ev: dict[str, Any], at: int | None) -> None:
    if ev.get("phase") == "model_call":
        model = str(ev.get("model") or "")
        name = model.partition("/")[2] or model
        attrs = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": ev.get("provider"),
            "gen_ai.request.model": name,
            "gen_ai.usage.input_tokens": ev.get("tokens_in"),
            "gen_ai.usage.output_tokens": ev.get("tokens_out"),
            "nika.model": model,
            "nika.turn": ev.get("turn"),
            "nika.cost_usd": ev.get("cost_usd"),
        }
        if isinstance(ev.get("finish_reason"), str):
            attrs["gen_ai.response.finish_reasons"] = [ev["finish_reason"]]
        _call_span(sink, tid, f"chat {name}", ev, at, attrs)
    elif ev.get("phase") == "on_finally":
        ok = ev.get("status")
        _call_span(sink, tid, f"on_finally {tid}", ev, at, {"nika.task.id": tid, "nika.status": ok})


def _tool(sink: Any, tid: str, ev: dict[str, Any], at: int | None) -> None:
    if isinstance(ev.get("workflow"), str) and "event" not in ev:
        attrs = {"nika.child.workflow": ev["workflow"], "nika.child.state": ev.get("state")}
        _call_span(sink, tid, f"invoke workflow {ev['workflow']}", ev, at, attrs)
        return
    if isinstance(ev.get("tool"), str):
        attrs = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": ev["tool"],
            "nika.status": ev.get("status"),
            "nika.turn": ev.get("turn"),
            "nika.cost_usd": ev.get("cost_usd"),
        }
        _call_span(sink, tid, f"execute_tool {ev['tool']}", ev, at, attrs)
        return
    parent = _parent(sink, tid)  # a builtin's own event (nika:log, nika:emit, nika:prompt): a span event
    if parent is not None:
        keys = [k for k in ev if k not in ("type", "task", "at")]
        parent.add_event(f"nika.{ev.get('event', 'event')}", _attrs({f"nika.{k}": ev[k] for k in keys}), timestamp=at)


def end_all(sink: Any, at: int | None) -> None:
    """End what is still open (a run that stops mid-task, or a close before the terminal event)."""
    for tid in list(sink.tasks):
        _end_task(sink, tid, "cancelled", {}, at)
    for key in list(sink.attempts):
        span, _ = sink.attempts.pop(key)
        span.end(end_time=at)
    if at is None and sink.root is not None:
        sink.root.end()
        sink.root = None
