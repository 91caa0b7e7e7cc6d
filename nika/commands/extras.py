"""What ``nika run`` (its admission and ``--dry-run``) and ``nika doctor`` say about the optional
extras: which are installed, which tasks need a missing one. The facts are
``checker/contracts/extras.toml`` (:mod:`checker.contracts.extras`); this module only words them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


def installed_extras() -> dict[str, list[str]]:
    """Each extra some feature needs, with the import names missing here (``[]``: installed)."""
    from checker.contracts.extras import installed

    return installed()


def refusal(wf: Any, executor: str | None, env: Mapping[str, str] | None = None) -> str | None:
    """The one line ``nika run`` refuses with before any effect: the first statically certain need
    whose libraries are missing (a need only the run can tell is refused by the builtin itself,
    before its request; telemetry is only ever a note)."""
    from checker.contracts.extras import describe, unmet, uses

    env = os.environ if env is None else env
    found = [(u, m) for u, m in unmet(uses(wf, env, executor)) if u.certain and not u.need.note_only]
    if not found:
        return None
    line = describe(*found[0])
    more = len(found) - 1
    return line + (f" ({more} more unmet; `nika run --dry-run` lists them)" if more else "")


def plan_extras(wf: Any, executor: str | None, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The dry run's ``extras``: what is installed, and each need of this run with what is missing."""
    from checker.contracts.extras import uses

    env = os.environ if env is None else env
    rows = []
    for u in uses(wf, env, executor):
        missing = u.need.missing()
        rows.append(
            {
                "task": u.task,
                "feature": u.need.named(u.value),
                "extra": u.need.extra,
                "certain": u.certain,
                "missing": missing,
            }
        )
    return {"installed": {name: not missing for name, missing in installed_extras().items()}, "needs": rows}


def plan_extras_text(p: dict[str, Any]) -> str:
    """The dry run's extras section (nothing when the run needs no extra): each extra the run
    needs and whether it is installed, then one line per need that is not met."""
    from checker.contracts.extras import extra

    needs = p["needs"]
    if not needs:
        return ""
    named = list(dict.fromkeys(r["extra"] for r in needs))
    state = ", ".join(f"{n} ({'installed' if p['installed'].get(n) else 'not installed'})" for n in named)
    lines = ["", f"extras this run needs: {state}"]
    for r in (r for r in needs if r["missing"]):
        who = f"task `{r['task']}`" if r["task"] else "this run"
        verb = "needs" if r["certain"] else "may need"
        lines.append(
            f"  {who} {verb} `{r['extra']}` for {r['feature']} ({', '.join(r['missing'])} not installed): "
            f"{extra(r['extra']).install}"
        )
    return "\n".join(lines) + "\n"


def project_lines(cwd: Any, env: Mapping[str, str], limit: int = 200) -> list[tuple[str, str, str]]:
    """``(status, message, install command)`` for ``nika doctor``: each workflow under ``cwd`` (at most ``limit``
    files) with a task that needs a missing extra: ``broken`` when certain, ``warn`` when only the
    run can tell."""
    from checker.contracts.extras import describe, extra, unmet, uses
    from checker.project.files import SKIP_DIRS, compile_path, is_workflow_file

    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(cwd):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        found += [os.path.join(dirpath, f) for f in sorted(filenames) if is_workflow_file(f)]
        if len(found) >= limit:
            break
    out: list[tuple[str, str, str]] = []
    for path in found[:limit]:
        compiled, _ = compile_path(path)
        if compiled is None or compiled.workflow is None:
            continue
        shown = os.path.relpath(path, cwd)
        for u, missing in unmet(uses(compiled.workflow, env, engine=False)):
            line = f"{shown}: {describe(u, missing, install=False)}"
            out.append(("broken" if u.certain else "warn", line, extra(u.need.extra).install))
    return out
