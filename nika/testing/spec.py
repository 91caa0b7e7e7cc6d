"""The workflow test file (``*.nika-test.yaml``): what it may say, read into plain data.

A test file names one workflow and holds named cases; each case gives the inputs, scripted model
replies per task, mocked task results, and what the run must end with::

    workflow: hello.nika.yaml          # resolved from the working directory, else beside this file
    cases:
      greets-ada:
        vars: { name: Ada }            # the workflow's inputs, as `nika run --var` gives them
        env: { NIKA_PRICES: "{}" }     # engine configuration for this case (nothing is inherited)
        model: mock/echo               # what answers a model call without a script (the default)
        replies:                       # scripted model replies, per task, played in order
          hello: ["Hello, Ada!"]
        mocks:                         # a task's verb replaced by a result (tools, exec, fetch, …)
          shout: { output: "HELLO, ADA!" }
        tools:                         # what a tool an agent calls returns, by tool id (not run)
          "nika:read": { output: "file text" }
        expect:
          status: success              # the workflow state: success | failure | cancelled | refused
          tasks: { hello: success, shout: { status: success, output: "HELLO, ADA!" } }
          outputs: { said: "HELLO, ADA!" }

Every problem with the file is a :class:`SpecError` naming the file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SUFFIXES = (".nika-test.yaml", ".nika-test.yml")
FILE_KEYS = ("workflow", "cases")
CASE_KEYS = ("description", "vars", "env", "model", "replies", "mocks", "tools", "expect")
EXPECT_KEYS = ("status", "error", "tasks", "outputs")
TASK_EXPECT_KEYS = ("status", "output", "error")
STEP_KEYS = ("text", "json", "tool_calls", "error", "tokens_in", "tokens_out")
MOCK_KEYS = ("output", "error")
STATES = ("success", "failure", "cancelled", "refused")
_CASE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class SpecError(Exception):
    """A test file that cannot be used as written (one line: ``file:line: what``)."""


@dataclass
class Case:
    name: str
    line: int
    vars: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    model: str = "mock/echo"
    replies: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    mocks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # a list: one result per call
    repeat: set[str] = field(default_factory=set)  # tasks mocked by one mapping, which answers every call
    tools: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # an agent's tool calls, by tool id
    tools_repeat: set[str] = field(default_factory=set)
    expect: dict[str, Any] = field(default_factory=dict)


@dataclass
class TestFile:
    path: Path
    workflow: str
    cases: list[Case]
    document: Any  # the round-trip document, for --update


def is_test_file(path: Path) -> bool:
    return path.name.endswith(SUFFIXES)


def _line(node: Any, key: Any = None) -> int:
    lc = getattr(node, "lc", None)
    if lc is None:
        return 0
    try:
        return (lc.key(key)[0] if key is not None else lc.line) + 1
    except (KeyError, TypeError, AttributeError):
        return lc.line + 1


def _fail(path: Path, line: int, message: str) -> SpecError:
    return SpecError(f"{path}:{line}: {message}" if line else f"{path}: {message}")


def _keys(path: Path, node: Any, allowed: tuple[str, ...], where: str) -> None:
    for key in node:
        if key not in allowed:
            from checker.core.suggest import did_you_mean

            near = did_you_mean(str(key), allowed)
            hint = f"; did you mean `{near}`?" if near else f" (allowed: {', '.join(allowed)})"
            raise _fail(path, _line(node, key), f"unknown field `{key}` in {where}{hint}")


def _mapping(path: Path, parent: Any, key: str, where: str) -> dict[str, Any]:
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(path, _line(parent, key), f"`{key}` in {where} must be a mapping")
    return value


def load(path: Path) -> TestFile:
    """Read and validate one test file."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        yaml = YAML(typ="rt")
        yaml.preserve_quotes = True  # `--update` writes the file back as it was written
        doc = yaml.load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise _fail(path, mark.line + 1 if mark else 0, f"not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if not isinstance(doc, dict):
        raise _fail(path, 0, "a test file is a mapping with `workflow:` and `cases:`")
    _keys(path, doc, FILE_KEYS, "the test file")
    workflow = doc.get("workflow")
    if not isinstance(workflow, str) or not workflow:
        raise _fail(path, _line(doc, "workflow") if "workflow" in doc else 1, "`workflow:` must name a workflow file")
    cases_node = _mapping(path, doc, "cases", "the test file")
    if not cases_node:
        raise _fail(path, _line(doc, "cases") if "cases" in doc else 1, "`cases:` must hold at least one case")
    cases = [_case(path, cases_node, name) for name in cases_node]
    return TestFile(path, workflow, cases, doc)


def _case(path: Path, parent: Any, name: Any) -> Case:
    node = parent[name]
    line = _line(parent, name)
    if not isinstance(name, str) or not _CASE_ID.match(name):
        raise _fail(path, line, f"case name `{name}` must be letters, digits, `-`, `_` or `.`")
    if node is None:
        node = {}
    if not isinstance(node, dict):
        raise _fail(path, line, f"case `{name}` must be a mapping")
    where = f"case `{name}`"
    _keys(path, node, CASE_KEYS, where)
    env = _mapping(path, node, "env", where)
    model = node.get("model", "mock/echo")
    if not isinstance(model, str) or not model.startswith("mock/"):
        raise _fail(path, _line(node, "model"), f"`model:` in {where} must be a `mock/…` model (tests never spend)")
    case = Case(name, line, dict(_mapping(path, node, "vars", where)), {str(k): str(v) for k, v in env.items()}, model)
    for task, steps in _mapping(path, node, "replies", where).items():
        case.replies[str(task)] = [_step(path, steps, i, s, f"{where}, replies of `{task}`") for i, s in _items(steps)]
    for task, mock in _mapping(path, node, "mocks", where).items():
        case.mocks[str(task)] = [_mock(path, mock, i, m, f"{where}, mock of `{task}`") for i, m in _items(mock)]
        if not isinstance(mock, list):
            case.repeat.add(str(task))
    for tool, mock in _mapping(path, node, "tools", where).items():
        case.tools[str(tool)] = [_mock(path, mock, i, m, f"{where}, result of `{tool}`") for i, m in _items(mock)]
        if not isinstance(mock, list):
            case.tools_repeat.add(str(tool))
    case.expect = _expect(path, node, where)
    return case


def _items(value: Any) -> list[tuple[int, Any]]:
    return list(enumerate(value)) if isinstance(value, list) else [(0, value)]


def _step(path: Path, parent: Any, i: int, step: Any, where: str) -> dict[str, Any]:
    """A scripted reply as the scripted mock plays it (``runtime.providers.mock``)."""
    if isinstance(step, str):
        return {"text": step}
    if not isinstance(step, dict):
        raise _fail(path, _line(parent), f"{where}: a reply is a string or a mapping ({', '.join(STEP_KEYS)})")
    _keys(path, step, STEP_KEYS, where)
    out = _plain(step)
    if "json" in out:
        import json

        out["text"] = json.dumps(out.pop("json"), ensure_ascii=False)
    for call in out.get("tool_calls") or []:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise _fail(path, _line(step), f"{where}: each tool call needs a `name:` (the tool id, e.g. nika:read)")
        call["name"] = re.sub(r"[^A-Za-z0-9_-]", "_", call["name"])[:60]  # the agent loop's wire name
    return out


def _mock(path: Path, parent: Any, i: int, mock: Any, where: str) -> dict[str, Any]:
    if not isinstance(mock, dict) or len([k for k in mock if k in MOCK_KEYS]) != 1:
        raise _fail(path, _line(parent), f"{where}: a mock is `{{output: VALUE}}` or `{{error: {{code, message}}}}`")
    _keys(path, mock, MOCK_KEYS, where)
    out = _plain(mock)
    if "error" in out and not (isinstance(out["error"], dict) and isinstance(out["error"].get("code"), str)):
        raise _fail(path, _line(mock), f"{where}: `error:` needs a `code:` (e.g. NIKA-EXEC-001)")
    return out


def _expect(path: Path, node: Any, where: str) -> dict[str, Any]:
    expect = _mapping(path, node, "expect", where)
    _keys(path, expect, EXPECT_KEYS, f"the `expect:` of {where}")
    status = expect.get("status")
    if status is not None and status not in STATES:
        raise _fail(path, _line(expect, "status"), f"`status: {status}` is not one of {', '.join(STATES)}")
    tasks = _mapping(path, expect, "tasks", f"the `expect:` of {where}")
    for tid, value in tasks.items():
        if isinstance(value, dict):
            _keys(path, value, TASK_EXPECT_KEYS, f"the expectation of task `{tid}`")
        elif not isinstance(value, str):
            raise _fail(path, _line(tasks, tid), f"task `{tid}`: expect a status or `{{status, output, error}}`")
    return _plain(expect)


def _plain(value: Any) -> Any:
    """Round-trip YAML nodes as plain dicts, lists and scalars."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value
