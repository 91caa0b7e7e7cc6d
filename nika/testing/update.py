"""``nika test --update``: rewrite each case's ``expect:`` from what the run did (golden files).

The file is rewritten through the round-trip YAML loader, so comments, order and the rest of the
file stay as written. What is written: ``status``; every task's status (a task already expected
with an ``output:`` or ``error:`` keeps that form, refreshed); ``outputs`` (all of them); and
``error`` only when the case already expects one. A case that could not run (an error) is left
as it is.
"""

from __future__ import annotations

from typing import Any

from nika.testing.runner import CaseResult
from nika.testing.spec import TestFile


def rewrite(test: TestFile, results: list[CaseResult]) -> int:
    """Update the expectations of the failed cases of ``results`` in ``test``'s file, and write one
    for a case that has none (in place, so comments, quoting and flow style of what is unchanged
    survive); the number of cases changed."""
    from ruamel.yaml import YAML

    cases = test.document["cases"]
    changed = 0
    for r in results:
        node = cases[r.case.name]
        fresh = node is None or node.get("expect") is None
        if r.actual is None or r.outcome == "error" or not (fresh or r.outcome == "failed"):
            continue
        if node is None:
            node = cases[r.case.name] = {}
        if fresh:
            node["expect"] = {}
        changed += _fill(node["expect"], r.actual, fresh)
    if changed:
        yaml = YAML(typ="rt")
        yaml.width = 120
        yaml.indent(mapping=2, sequence=4, offset=2)
        with test.path.open("w", encoding="utf-8") as fh:
            yaml.dump(test.document, fh)
    return changed


def _set(node: Any, key: str, value: Any) -> bool:
    from nika.testing.spec import _plain

    if key in node and _plain(node[key]) == value:
        return False
    if isinstance(value, dict) and isinstance(node.get(key), dict):  # key by key: comments survive
        inner = node[key]
        for k in [k for k in inner if k not in value]:
            del inner[k]
        for k, v in value.items():
            _set(inner, k, v)
        return True
    node[key] = value
    return True


def _fill(expect: Any, actual: dict[str, Any], fresh: bool) -> bool:
    """Refresh what ``expect`` already asserts (everything, for a case that had no ``expect:``)."""
    changed = _set(expect, "status", actual["status"])
    if "error" in expect:
        err = actual.get("error")
        changed |= _set(expect, "error", err.get("code") if isinstance(err, dict) else err)
    tasks = actual.get("tasks") or {}
    if tasks and (fresh or "tasks" in expect):
        if expect.get("tasks") is None:
            expect["tasks"] = {}
        old = expect["tasks"]
        for tid, record in tasks.items():
            was = old.get(tid)
            if isinstance(was, dict):
                changed |= _set(was, "status", record["status"])
                if "output" in was:
                    changed |= _set(was, "output", record["output"])
                if "error" in was:
                    changed |= _set(was, "error", (record.get("error") or {}).get("code"))
            elif was is not None or fresh:
                changed |= _set(old, tid, record["status"])
    if actual["status"] != "refused" and (fresh or "outputs" in expect):
        changed |= _set(expect, "outputs", actual.get("outputs") or {})
    return changed
