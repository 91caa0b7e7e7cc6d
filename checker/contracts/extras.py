"""Which features need an optional extra of nika-tools, and whether this installation has it.

The facts are data (``checker/contracts/extras.toml``: the extras, and one row per builtin, mode or
engine feature that needs one). Every reader asks here: ``nika run`` refuses a statically certain
need before the first effect (:func:`uses` over the compiled workflow) and a builtin refuses a need
known only from its concrete arguments before its request (:func:`for_call`); ``nika run
--dry-run``, ``nika doctor`` and ``nika check``'s informational note say which extras are here and
which tasks need a missing one. ``nika check``'s verdict never depends on what is installed.

Whether a library is here is asked of the import system (:func:`importlib.util.find_spec`): the
library itself is not imported, so asking costs no start-up time.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from checker.core.records import record

DISTRIBUTION = "nika-tools"


@record
class Extra:
    name: str
    summary: str
    packages: tuple[str, ...]

    @property
    def install(self) -> str:
        return f"pip install '{DISTRIBUTION}[{self.name}]'"


@record
class Need:
    """One row of ``[[needs]]``: a feature, the extra that provides it and the modules it imports."""

    what: str
    extra: str
    imports: tuple[str, ...]
    tool: str | None = None
    arg: str | None = None
    values: tuple[str, ...] = ()
    present: bool = False
    secret_source: str | None = None
    unless_env: str | None = None
    executor: str | None = None
    env: tuple[str, ...] = ()
    note_only: bool = False
    flag: str | None = None  # a command-line flag (`run --watch`): no workflow walk selects the row

    def missing(self) -> list[str]:
        """The import names of this feature that cannot be imported here (``[]``: all present)."""
        return [m for m in self.imports if not importable(m)]

    def named(self, value: Any = None) -> str:
        """How messages name the feature: with the value a call gives, else every value of the row."""
        return self.what.replace("{value}", str(value) if value is not None else "`/`".join(self.values))

    def message(self, missing: list[str], value: Any = None) -> str:
        """The one line a run stops with (or notes) when ``missing`` modules are not installed."""
        shown = ", ".join(missing)
        return (
            f"{self.named(value)} needs the `{self.extra}` extra ({shown} not installed): {extra(self.extra).install}"
        )


@record
class Use:
    """A need of one task (``task`` ``None``: of the run itself, e.g. its executor)."""

    task: str | None
    need: Need
    certain: bool  # False: only the run knows (a `${{ … }}` mode, a tool an agent may call)
    value: Any = None  # the value of the row's `arg` the task gives (for messages)


_NEED_KEYS = frozenset(
    {"what", "extra", "imports", "tool", "arg", "values", "present", "secret_source", "unless_env"}
    | {"executor", "env", "note_only", "flag"}
)


@cache
def _data() -> dict[str, Any]:
    from checker.contracts.load import _load

    return _load("extras.toml")


@cache
def extras() -> dict[str, Extra]:
    return {name: Extra(name, str(row["summary"]), tuple(row["packages"])) for name, row in _data()["extras"].items()}


def extra(name: str) -> Extra:
    return extras()[name]


@cache
def needs() -> tuple[Need, ...]:
    out = []
    for i, row in enumerate(_data()["needs"]):
        if set(row) - _NEED_KEYS or row.get("extra") not in extras():
            raise ValueError(f"extras.toml: bad [[needs]] row {i}: {row!r}")
        out.append(
            Need(
                what=row["what"],
                extra=row["extra"],
                imports=tuple(row["imports"]),
                tool=row.get("tool"),
                arg=row.get("arg"),
                values=tuple(row.get("values", ())),
                present=bool(row.get("present", False)),
                secret_source=row.get("secret_source"),
                unless_env=row.get("unless_env"),
                executor=row.get("executor"),
                env=tuple(row.get("env", ())),
                note_only=bool(row.get("note_only", False)),
                flag=row.get("flag"),
            )
        )
    return tuple(out)


def importable(module: str) -> bool:
    """Whether ``module`` can be imported here, without importing it (its parent packages are)."""
    import importlib.util
    import sys

    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing, or blocked
        return False


def installed() -> dict[str, list[str]]:
    """Each extra that some feature needs, with the import names of its features missing here."""
    out: dict[str, list[str]] = {}
    for n in needs():
        missing = out.setdefault(n.extra, [])
        missing += [m for m in n.missing() if m not in missing]
    return out


# -- a concrete call (run time) -------------------------------------------------------------------


def _default(tool: str, arg: str) -> Any:
    from checker.contracts.load import contract

    c = contract(tool)
    spec = c.arg(arg) if c is not None else None
    return spec.default if spec is not None else None


def for_call(tool: str, args: Mapping[str, Any]) -> Need | None:
    """The need of one call of ``tool`` with these concrete arguments (``None``: no extra)."""
    rows = [n for n in needs() if n.tool == tool]
    for n in rows:  # `traverse:` replaces the mode: a crawl's need is its own row
        if n.present and args.get(n.arg or "") is not None:
            return n
    for n in rows:
        if n.present:
            continue
        if n.arg is None:
            return n
        value = args.get(n.arg)
        if str(value if value is not None else _default(tool, n.arg)) in n.values:
            return n
    return None


def refusal(tool: str, args: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(extra, line)``: the one line a builtin stops with before its effect when the libraries
    this call needs are missing (``None``: nothing is missing)."""
    n = for_call(tool, args)
    if n is None:
        return None
    missing = n.missing()
    return (n.extra, n.message(missing, _value(n, args))) if missing else None


def _value(n: Need, args: Mapping[str, Any]) -> Any:
    if n.arg is None or n.present:
        return None
    value = args.get(n.arg)
    return value if value is not None else _default(n.tool or "", n.arg)


# -- a workflow (admission, dry run, doctor, the check note) ----------------------------------------


def uses(
    wf: Any, env: Mapping[str, str] | None = None, executor: str | None = None, *, engine: bool = True
) -> list[Use]:
    """Every need of the compiled workflow ``wf`` (a :class:`checker.model.workflow.Workflow`), in
    task order, then those of the run: its secrets and (``engine``) the executor and the environment."""
    env = os.environ if env is None else env
    out: list[Use] = []
    for tid, task in wf.tasks.items():
        verbs = [task.verb, *(s.verb for s in task.on_finally)]
        for verb in verbs:
            out += _verb_uses(tid, verb)
    for s in wf.secrets:
        for n in needs():
            if n.secret_source is not None and s.source == n.secret_source and not env.get(n.unless_env or ""):
                out.append(Use(None, n, True))
                break
    if engine:
        out += run_uses(env, executor)
    seen: set[tuple[str | None, str]] = set()
    unique = []
    for u in out:
        if (u.task, u.need.what) not in seen:
            seen.add((u.task, u.need.what))
            unique.append(u)
    return unique


def run_uses(env: Mapping[str, str], executor: str | None = None) -> list[Use]:
    """The needs the engine's own configuration switches on (the executor, telemetry)."""
    executor = executor or env.get("NIKA_EXECUTOR") or "local"
    out = []
    for n in needs():
        asked = n.executor == executor if n.executor is not None else any(env.get(v, "").strip() for v in n.env)
        if asked:
            out.append(Use(None, n, True))
    return out


def _verb_uses(tid: str, verb: Any) -> list[Use]:
    from checker.model.workflow import Agent, Invoke

    if isinstance(verb, Invoke) and verb.tool and verb.workflow is None:
        return _invoke_uses(tid, verb.tool, verb.args)
    if isinstance(verb, Agent) and verb.tools:
        from checker.contracts.load import tool_ids
        from checker.core.globs import expand_tools

        granted = expand_tools([str(t.value) for t in verb.tools if t.is_string], tool_ids())
        return [u for tool in granted for u in _chosen_at_run(tid, tool, [n for n in needs() if n.tool == tool])]
    return []


def _chosen_at_run(tid: str, tool: str, rows: list[Need]) -> list[Use]:
    """One uncertain use per extra of ``rows``: the run picks the row (a mode written as an
    expression, a tool an agent may call with any arguments)."""
    out = []
    for name in dict.fromkeys(n.extra for n in rows):
        mine = [n for n in rows if n.extra == name]
        imports = tuple(dict.fromkeys(m for n in mine for m in n.imports))
        out.append(Use(tid, Need(what=f"`{tool}`", extra=name, imports=imports, tool=tool), False))
    return out


def _invoke_uses(tid: str, tool: str, args: Any) -> list[Use]:
    from checker.parse.values import MapValue, ScalarValue, templates

    rows = [n for n in needs() if n.tool == tool]
    if not rows:
        return []
    concrete: dict[str, Any] = {}
    unknown: set[str] = set()
    if isinstance(args, MapValue):
        for key, entry in args.items():
            v = entry.value
            if isinstance(v, ScalarValue) and not any(True for _ in templates(v)):
                concrete[key] = v.value
            elif isinstance(v, ScalarValue):
                unknown.add(key)
            else:
                concrete[key] = v.to_python()  # a map or a list: present, its contents do not choose a row
    elif args is not None:
        return _chosen_at_run(tid, tool, rows)  # `args: ${{ … }}`: anything may be asked
    if not (unknown & {n.arg for n in rows if n.arg}):
        n = for_call(tool, concrete)
        return [Use(tid, n, True, _value(n, concrete))] if n is not None else []
    # the choosing argument is an expression: each row it may pick, but the run decides
    present = [n for n in rows if n.present and n.arg in concrete]
    if present:
        return [Use(tid, present[0], True)]
    return _chosen_at_run(tid, tool, [n for n in rows if not n.present])


def workflow_needs_unmet() -> bool:
    """Whether some need a workflow itself can have (a builtin, a mode, a secret source: not the
    engine's configuration) lacks a library here; when not, no workflow needs to be walked."""
    return any(n.missing() for n in needs() if n.tool or n.secret_source)


def lacking(wf: Any) -> tuple[tuple[str, str], ...]:
    """``(task, extra)`` for each need of the workflow itself (tasks and secrets, not the engine's
    configuration) that this installation cannot meet."""
    return tuple(dict.fromkeys((u.task or "", u.need.extra) for u, _ in unmet(uses(wf, engine=False))))


def unmet(found: Iterable[Use]) -> list[tuple[Use, list[str]]]:
    """The uses whose libraries are missing here, each with the missing import names."""
    return [(u, missing) for u in found if (missing := u.need.missing())]


def describe(u: Use, missing: list[str], *, install: bool = True) -> str:
    """One line for a report: who needs what, which extra, and (``install``) the command for it."""
    n = u.need
    tail = f": {extra(n.extra).install}" if install else ""
    if u.certain:
        line = n.message(missing, u.value)
        line = line if install else line.rsplit(": ", 1)[0]
        return f"task `{u.task}`: {line}" if u.task else line
    return (
        f"task `{u.task}` may call {n.what} in a way that needs the `{n.extra}` extra "
        f"({', '.join(missing)} not installed){tail}"
    )
