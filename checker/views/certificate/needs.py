"""The effects part: the authority the body needs (the walk NIKA-AUTH-006 and NIKA-SEC-004 judge)
next to what ``permits:`` grants, and what each task does outside the run (the risk's reasons)."""

from __future__ import annotations

from typing import Any, NamedTuple

from checker.model.workflow import Agent, CompiledWorkflow, Invoke, Task, Workflow
from checker.parse.values import ScalarValue, TemplateValue, Value

#: effect planes that reach outside the run (reads stay inside)
OUTWARD_PLANES = frozenset({"exec", "fs.write", "net"})
_ESCAPE_CODES = frozenset({"NIKA-SEC-004", "NIKA-AUTH-006", "NIKA-AUTH-008"})


class Dynamic(NamedTuple):
    """One place ``nika run`` judges a value only the run knows, just before the effect.

    ``judge`` names the judge: ``permits`` (a computed path, URL or program against the grant, or
    an agent's choice of target), ``argv`` (an untrusted argv word in a re-entry position:
    :func:`checker.contracts.argv.judge_argv` deferred it) or ``env`` (an untrusted value of a
    locator variable: :func:`checker.contracts.effects.judge_env_value`). ``source`` is the
    untrusted reference the value comes from (``tasks.review.output``), ``None`` when it is not a
    reference (an agent's choice, a shell line, a computed value of trusted parts)."""

    task: str
    plane: str
    arg: str
    judge: str
    source: str | None

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "plane": self.plane, "arg": self.arg, "judge": self.judge, "source": self.source}


class Effects(NamedTuple):
    """``needed`` and ``granted`` share the shape of a ``permits:`` block (planes with what is
    known at check); ``dynamic`` lists what the run judges again at the effect (the targets only
    the run knows and the deferred argv and env re-gates); ``escapes`` counts the findings that
    report a need outside the grant (NIKA-SEC-004, NIKA-AUTH-006, NIKA-AUTH-008)."""

    boundary_declared: bool
    needed: dict[str, Any]
    granted: dict[str, Any] | None
    dynamic: tuple[Dynamic, ...]  # in task order
    escapes: int
    outward: dict[str, list[str]]  # task -> what it does outside the run (risk reasons)

    def to_json(self) -> dict[str, Any]:
        return {
            "boundary_declared": self.boundary_declared,
            "needed": self.needed,
            "granted": self.granted,
            "dynamic": [d.to_json() for d in self.dynamic],
            "escapes": self.escapes,
        }


_OUTWARD_WORDS = {"exec": "runs a process", "fs.write": "writes files", "net": "reaches the network"}


def _add(lst: list[str], item: str) -> None:
    if item not in lst:
        lst.append(item)


class _Needs:
    """What the body needs, plane by plane, gathered one need at a time (``None``: the plane is not
    needed; ``exec`` is ``True`` once any program is not a literal)."""

    def __init__(self, wf: Workflow) -> None:
        self.wf = wf
        self.fs: dict[str, list[str]] = {}
        self.net: list[str] | None = None
        self.exec_: list[str] | bool | None = None
        self.tools: list[str] | None = None
        self.dynamic: list[Dynamic] = []
        self.outward: dict[str, list[str]] = {}

    def note(self, tid: str, what: str) -> None:
        _add(self.outward.setdefault(tid, []), what)

    def add(self, task: Task, n: Any) -> None:
        """One need of ``task`` (an :func:`~checker.rules.authority.needs_of` item)."""
        from checker.contracts import effects as fx

        v = n.value
        literal = v.value if isinstance(v, ScalarValue) and not isinstance(v, TemplateValue) else None
        if isinstance(v, TemplateValue) or (n.plane == "exec" and n.kind == "shell"):
            self.dynamic.append(Dynamic(task.id, n.plane, n.arg or n.kind, "permits", _source(self.wf, task, v)))
        elif isinstance(task.verb, Agent) and v is None and n.plane != "tools":
            # the model picks the target
            self.dynamic.append(Dynamic(task.id, n.plane, f"agent tool {n.tool}", "permits", None))
        if n.plane in ("fs.read", "fs.write"):
            lst = self.fs.setdefault(n.plane.split(".")[1], [])
            if isinstance(literal, str):
                _add(lst, fx.canonical_path(literal).rstrip("/") + ("/**" if n.kind == "dir" else ""))
        elif n.plane == "net":
            self.net = self.net if self.net is not None else []
            host = fx.url_host(literal) if isinstance(literal, str) and n.kind == "url" else None
            if host:
                _add(self.net, host)
        elif n.plane == "exec":
            self._add_program(literal if n.kind == "program" else None)
        elif n.plane == "tools" and n.tool:
            self.add_tool(n.tool)
        if n.plane in OUTWARD_PLANES:
            self.note(task.id, _OUTWARD_WORDS[n.plane])
        if n.tool and n.tool.startswith("mcp:"):
            self.note(task.id, "calls an MCP server")

    def _add_program(self, literal: object) -> None:
        if not isinstance(literal, str):
            self.exec_ = True
        elif self.exec_ is not True:
            self.exec_ = self.exec_ if isinstance(self.exec_, list) else []
            _add(self.exec_, literal)

    def add_tool(self, name: str) -> None:
        self.tools = self.tools if self.tools is not None else []
        _add(self.tools, name)

    def needed(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.fs:
            out["fs"] = {k: self.fs[k] for k in ("read", "write") if k in self.fs}
        if self.net is not None:
            out["net"] = {"http": self.net}
        if self.exec_ is not None:
            out["exec"] = self.exec_
        if self.tools is not None:
            out["tools"] = self.tools
        return out


def _granted(wf: Workflow) -> dict[str, Any] | None:
    """The grant of ``permits:`` in the shape of ``needed`` (``None`` without a block)."""
    from checker.contracts.effects import boundary_of

    if wf.permits is None:
        return None
    b = boundary_of(wf.permits)
    return {
        "fs": {"read": list(b.fs_read), "write": list(b.fs_write)},
        "net": {"http": list(b.net_http)},
        "exec": b.exec if isinstance(b.exec, bool) else list(b.exec),
        "tools": [("!" if r.negated else "") + r.pattern for r in b.tools],
        "env": list(b.env),
    }


def _source(wf: Workflow, task: Task, v: Value | None) -> str | None:
    """The untrusted reference a computed target comes from (the integrity label the rules read)."""
    from checker.rules.support.flow import value_trust

    if not isinstance(v, TemplateValue):
        return None
    return value_trust(wf, task, v).source or None


def effects_of(compiled: CompiledWorkflow, wf: Workflow) -> Effects:
    """The effects part; the argv and env re-gates are the ones the authority rules' own judge
    calls deferred during the check (``compiled.regates``), listed with the task's targets."""
    from checker.rules.authority import needs_of

    regates: dict[str, list[Dynamic]] = {}
    for r in compiled.regates:
        regates.setdefault(r.task, []).append(Dynamic(r.task, r.plane, r.arg, r.judge, r.source))
    acc = _Needs(wf)
    for task in wf.tasks.values():
        for n in needs_of(task):
            acc.add(task, n)
        acc.dynamic.extend(regates.get(task.id, ()))
        verb = task.verb
        if isinstance(verb, Agent):
            for entry in verb.tools:
                name = entry.value if isinstance(entry.value, str) else ""
                if isinstance(entry, TemplateValue) or "*" in name:
                    acc.add_tool(name)
                    acc.note(task.id, "gives an agent tools by pattern")
        if isinstance(verb, Invoke) and verb.workflow is not None:
            acc.note(task.id, "runs a child workflow")
    escapes = sum(1 for d in compiled.diagnostics if d.code in _ESCAPE_CODES)
    return Effects(wf.permits is not None, acc.needed(), _granted(wf), tuple(acc.dynamic), escapes, acc.outward)
