"""The effects part: the authority the body needs (the walk NIKA-AUTH-006 and NIKA-SEC-004 judge)
next to what ``permits:`` grants, and what each task does outside the run (the risk's reasons)."""

from __future__ import annotations

from typing import Any, NamedTuple

from checker.model.workflow import Agent, CompiledWorkflow, Invoke, Workflow
from checker.parse.values import ScalarValue, TemplateValue

#: effect planes that reach outside the run (reads stay inside)
OUTWARD_PLANES = frozenset({"exec", "fs.write", "net"})
_ESCAPE_CODES = frozenset({"NIKA-SEC-004", "NIKA-AUTH-006", "NIKA-AUTH-008"})


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


def effects_of(compiled: CompiledWorkflow, wf: Workflow) -> Effects:
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
