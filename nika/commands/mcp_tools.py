"""What ``nika mcp serve`` answers, as plain functions over plain data (the server only wires them).

Every tool takes a workflow either as ``text`` (what an agent is writing; ``path`` then only names
it, for messages and for the project configuration that applies) or as a ``path`` to read.
Relative paths resolve from the server's working directory, as for ``nika check``. Nothing is
written unless ``fix`` is called with ``write=True``.

The server is confined to its tree: the client is a coding agent, the component most exposed to
prompt injection. Every ``path`` is judged by the one path-under-roots judge
(:func:`checker.core.paths.under_roots`: resolved, symlinks followed) against ``roots`` — the
server's working directory, narrowed by the roots the client announced
(:func:`checker.core.paths.narrow_roots`, never widened) — before anything is stat'ed or read;
only a regular ``*.nika.yaml`` / ``*.nika.yml`` file is read, through the one bounded reader;
``fix`` returns text only of what it parsed as a workflow. The refusal reads the same whether
the file exists or not (no oracle).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from typing import Any

DEFAULT_NAME = "workflow.nika.yaml"


class ToolError(Exception):
    """A request the tool cannot answer (one line, sent back as the tool's error)."""


Roots = tuple[str, ...]


def server_roots(announced: Roots | None = None) -> Roots:
    """The folders the server reads: its working directory, narrowed by what a client announced."""
    from checker.core.paths import narrow_roots

    return narrow_roots((os.getcwd(),), announced)


def confined(path: str, roots: Roots | None) -> str:
    """The absolute path ``path`` names, when the path-under-roots judge admits it, else the
    refusal (the same words whether or not anything is there)."""
    from checker.core.paths import under_roots

    allowed = server_roots() if roots is None else roots
    full = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    if "\x00" in path or not under_roots(os.path.normpath(full), allowed):
        raise ToolError(
            f"{path}: outside the folders this server reads (its working tree, narrowed by the client's roots)"
        )
    return os.path.realpath(full)


def _source(text: str | None, path: str | None, roots: Roots | None = None) -> tuple[str, str]:
    """``(text, shown name)``: the given text, or the regular workflow file at ``path`` inside
    the roots (a ``path`` beside ``text`` is judged too: it chooses the configuration read)."""
    if text is not None:
        if path:
            confined(path, roots)
        return text, path or DEFAULT_NAME
    if not path:
        raise ToolError("give the workflow as `text`, or a `path` to read")
    from checker.core.reader import FileReadError, read_file
    from checker.parse.nodes import MAX_DOCUMENT_BYTES
    from checker.project.files import is_workflow_file

    real = confined(path, roots)
    if not is_workflow_file(real):
        raise ToolError(f"{path}: not a workflow file (*.nika.yaml or *.nika.yml); nothing else is read")
    try:
        data = read_file(real, MAX_DOCUMENT_BYTES)
    except FileReadError as exc:
        raise ToolError(f"{path}: {exc.reason}") from None
    except OSError as exc:
        raise ToolError(f"{path}: {(exc.strerror or str(exc)).lower()}") from None
    try:
        return data.decode("utf-8"), path
    except UnicodeDecodeError:
        raise ToolError(f"{path}: not UTF-8 text") from None


def _compile(text: str, shown: str) -> Any:
    from checker.engine.pipeline import compile_text

    return compile_text(text, shown, os.getcwd())


def _settings(shown: str) -> Any:
    from checker.project.settings import settings_for

    return settings_for(shown if shown != DEFAULT_NAME and os.path.exists(shown) else "-")


def _report(compiled: Any, shown: str) -> Any:
    from checker.project.admission import admit

    return admit(compiled, shown, settings=_settings(shown))


def check(text: str | None = None, path: str | None = None, roots: Roots | None = None) -> dict[str, Any]:
    """The report ``nika check --output-format json`` prints for this one workflow."""
    from checker.project.finalize import SettingsError
    from checker.project.report import CheckRun
    from nika.output import render

    source, shown = _source(text, path, roots)
    try:
        verdict = _report(_compile(source, shown), shown)
    except SettingsError as exc:
        raise ToolError(f"configuration error in {exc}") from None
    return json.loads(render(CheckRun((verdict.report,)), "json", certificate=True, prices=None))


def explain(code: str) -> str:
    """The text of ``nika explain CODE`` (a NIKA code or a lint rule)."""
    from nika.commands.explain import explain as explain_code

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = explain_code(code)
    if status != 0:
        raise ToolError(err.getvalue().strip().removeprefix("nika explain: "))
    return out.getvalue()


def codes() -> list[dict[str, str]]:
    """Every registered code and lint rule with its title (the registry as a list)."""
    from checker.core.codes import lints, registry

    out = [
        {"code": c.code, "title": c.title, "phase": c.phase, "severity": c.severity.value} for c in registry().values()
    ]
    out += [
        {"code": r.rule, "title": r.title, "phase": r.phase, "severity": r.severity.value} for r in lints().values()
    ]
    return out


def nika_inspect(text: str | None = None, path: str | None = None, roots: Roots | None = None) -> str:
    """The canonical projection (spec 16): the bytes ``nika inspect --format json`` prints and the
    language server's ``nika/semanticDocument`` carries under ``graph``. Without one, the tool
    error names the one-word reason (``parse`` or ``findings``)."""
    from nika.commands.inspect import projection_of

    source, shown = _source(text, path, roots)
    p = projection_of(_compile(source, shown), shown if shown != DEFAULT_NAME and os.path.exists(shown) else None)
    doc = p.canonical()
    if doc is None:
        why = "the text is not a workflow" if p.reason == "parse" else "the workflow has check errors"
        raise ToolError(f"no projection ({p.reason}): {why}; `check` shows the findings")
    return doc


def schema() -> dict[str, Any]:
    """The workflow JSON Schema ``nika schema`` prints."""
    from checker.views.workflow_schema import workflow_json_schema

    return workflow_json_schema()


def fix(
    text: str | None = None,
    path: str | None = None,
    unsafe: bool = False,
    write: bool = False,
    roots: Roots | None = None,
) -> dict[str, Any]:
    """The safe fixes (``unsafe``: all of them) as a unified diff and the fixed text; the file at
    ``path`` is rewritten only when ``write`` is true. The text of a file is returned only when
    it parses as a workflow (a file that does not is never echoed back)."""
    import difflib

    from nika.commands.check import _replace_file, fix_text

    source, shown = _source(text, path, roots)
    if text is None and _compile(source, shown).workflow is None:
        raise ToolError(f"{path}: does not parse as a workflow; `check` says why (its text is not returned)")
    new, count, refusal = fix_text(source, shown, os.getcwd(), unsafe=unsafe)
    diff = "".join(difflib.unified_diff(source.splitlines(True), new.splitlines(True), shown, shown))
    written = False
    if write and new != source:
        if text is not None or not path:
            raise ToolError("`write` rewrites the file at `path`; it cannot be combined with `text`")
        _replace_file(path, new)
        written = True
    return {"fixed": count, "diff": diff, "text": new, "written": written, "refused": refusal}


def run_dry(
    text: str | None = None,
    path: str | None = None,
    model: str | None = None,
    roots: Roots | None = None,
    tasks: list[str] | None = None,
    with_dependents: bool = False,
) -> dict[str, Any]:
    """What ``nika run --dry-run --output-format json`` prints: the plan, its effects and the permits,
    or the refusal (``nika check``'s findings) when the workflow would not run. Nothing runs.

    With ``tasks`` (and ``with_dependents``), also the selection ``nika run --task ID…`` would make
    (:mod:`runtime.durable.selection`): ``named``, ``runs`` (what runs whatever the history holds:
    the named tasks, their dependents, every gate), ``reused_if_recorded`` (ancestors taken from the
    latest run history when it holds a matching record, run otherwise) and ``asks_again`` (gates,
    never reused from a record). The server runs no workflow (docs/edit-run-loop.md says why)."""
    from nika.output.run_text import plan
    from runtime.engine.inputs import unsupported_run_block

    source, shown = _source(text, path, roots)
    compiled = _compile(source, shown)
    verdict = _report(compiled, shown)
    if verdict.refused or compiled.workflow is None or compiled.graph is None:
        return {"workflow_state": "refused", "findings": check(source, shown, roots)["reports"][0]["findings"]}
    unsupported = unsupported_run_block(compiled.workflow)
    if unsupported is not None:
        return {"workflow_state": "refused", "error": {"code": "NIKA-IMPL-002", "message": unsupported}}
    out = plan(compiled, model)
    if tasks:
        out = {**out, "selection": _selection(compiled, tasks, with_dependents)}
    elif with_dependents:
        raise ToolError("`with_dependents` needs `tasks` (the tasks whose dependents are added)")
    return out


def _selection(compiled: Any, tasks: list[str], with_dependents: bool) -> dict[str, Any]:
    """The selection of a task run, as plain lists (the one :func:`select` ``nika run`` calls)."""
    from runtime.durable.selection import SelectionRefused, asks_a_person, select

    try:  # interactive: a gate in the selection is listed as asking again, not refused
        picked = select(compiled, list(tasks), with_dependents=with_dependents, interactive=True)
    except SelectionRefused as exc:
        raise ToolError(str(exc)) from None
    wf = compiled.workflow
    return {
        "named": list(picked.named),
        "runs": sorted(picked.forced),
        "reused_if_recorded": sorted(picked.tasks - picked.forced),
        "asks_again": sorted(t for t in picked.tasks if asks_a_person(wf.tasks[t])),
    }
