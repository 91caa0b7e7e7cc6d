"""Zero false refusals: the pinned spec's own examples check clean (no error finding).

Every fenced YAML block of ``spec/*.md`` and ``stdlib/*.md`` and every ``templates/*.nika.yaml``
of ``../shared/nika-spec`` is classified:

* a **workflow** (top-level ``nika:`` and ``tasks:``) is checked as written;
* a **tasks snippet** (top-level ``tasks:``, no envelope) is checked under a minimal envelope;
* a **task snippet** (a block that starts with a verb: ``invoke:``, ``infer:``, ``exec:``,
  ``agent:``) is checked as the one task of a minimal workflow;
* anything else (a field, a config file, a fragment with ``...``/``…`` placeholders) is not a
  workflow and is not judged.

A snippet leaves out what it does not show: the ``permits:`` block, declared inputs, types and
the producer tasks it reads (``tasks.X``). The codes that only say so (:data:`OMITTED`) are not
counted against a snippet; every other error is. A whole workflow gets no such allowance.

:data:`REFUSED` lists, by name, each example the checker refuses because the spec's normative
text decides against it, with the deciding sentence; :data:`EXCEPTED` lists the blocks that the
spec itself does not present as a valid unit, with the reason. Both are checked: an entry that
stops being refused (the spec was fixed) fails, so the lists stay true.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from checker import compile_text

SPEC = Path(__file__).resolve().parents[3] / "shared" / "nika-spec"
pytestmark = pytest.mark.skipif(not SPEC.is_dir(), reason=f"pinned spec not found at {SPEC}")

FENCE = re.compile(r"^```ya?ml[^\n]*\n(.*?)^```", re.M | re.S)
VERB = re.compile(r"^(invoke|infer|exec|agent):")
ENVELOPE = "nika: v1\nworkflow: { id: snippet }\nmodel: mock/echo\n"

# What a snippet leaves out, and the code that says so.
OMITTED = {
    "NIKA-AUTH-006": "the snippet shows no `permits:` block (the envelope is not shown)",
    "NIKA-VAR-001": "the snippet reads an input, const or secret it does not declare",
    "NIKA-DAG-002": "the snippet reads a producer task it does not show",
    "NIKA-TYPE-001": "the snippet names a type it does not declare",
}

_BOUNDARY = (
    "03 §four graphs / §reference boundary: the task's body consumes its `with:` bindings, never "
    "the global `tasks.*` namespace; a reference outside `with:`/`after:`/recover/on_finally/"
    "outputs is NIKA-VAR-021 (hoist it into `with:`)"
)

# example -> (the code refused, the normative sentence that decides it)
REFUSED: dict[str, tuple[str, str]] = {
    "spec/00-overview.md:115": (
        "NIKA-AUTH-006",
        "01 §permits (NEP-0003 law 1): an absent `permits:` block declares zero authority, so every "
        "effect the body requires (here `nika:fetch`, `nika:write`) is refused at check",
    ),
    "spec/09-types.md:21": (
        "NIKA-DAG-002",
        "03 §four graphs: an edge target that is not a declared task is NIKA-DAG-002 (the example "
        "reads `tasks.fetch`, which it does not declare, as a whole workflow)",
    ),
    "spec/11-decision.md:154": ("NIKA-VAR-021", _BOUNDARY),
    "stdlib/builtins-v0.1.md:69": ("NIKA-VAR-021", _BOUNDARY),
    "stdlib/builtins-v0.1.md:185": ("NIKA-VAR-021", _BOUNDARY),
    "stdlib/builtins-v0.1.md:191": ("NIKA-VAR-021", _BOUNDARY),
    "stdlib/builtins-v0.1.md:227": ("NIKA-VAR-021", _BOUNDARY),
    "stdlib/builtins-v0.1.md:271": ("NIKA-VAR-021", _BOUNDARY),
}

# example -> why the spec does not present it as a valid unit
EXCEPTED: dict[str, str] = {
    "stdlib/builtins-v0.1.md:102": "`nika:done` is valid only inside an agent's tool whitelist (its own text says "
    "so); shown as a call shape",
    "stdlib/builtins-v0.1.md:108": "shows `duration:` and `until:` together as the two exactly-one-of "
    "alternatives (its own text: both set is NIKA-BUILTIN-WAIT-003)",
    "stdlib/providers-v0.1.md:328": "lists the provider-specific `infer:` fields, not a task (no `prompt:`)",
}


def _blocks() -> list[tuple[str, str, str]]:
    """``(name, kind, text)`` for every judged block; ``kind`` is workflow | tasks | task."""
    out: list[tuple[str, str, str]] = []
    if not SPEC.is_dir():
        return out
    for folder in ("spec", "stdlib"):
        for md in sorted((SPEC / folder).glob("*.md")):
            text = md.read_text(encoding="utf-8")
            for m in FENCE.finditer(text):
                body = m.group(1)
                name = f"{folder}/{md.name}:{text[: m.start()].count(chr(10)) + 1}"
                if "..." in body or "…" in body:
                    continue  # a fragment with placeholders
                top_nika = re.search(r"^nika:", body, re.M) is not None
                top_tasks = re.search(r"^tasks:", body, re.M) is not None
                if top_nika and top_tasks:
                    out.append((name, "workflow", body))
                elif top_tasks and not top_nika:
                    out.append((name, "tasks", "nika: v1\nworkflow: { id: snippet }\n" + body))
                elif VERB.match(body.lstrip()):
                    out.append((name, "task", ENVELOPE + "tasks:\n  t:\n" + textwrap.indent(body, "    ")))
    for t in sorted((SPEC / "templates").glob("*.nika.yaml")):
        out.append((f"templates/{t.name}", "workflow", t.read_text(encoding="utf-8")))
    return out


def _errors(name: str, kind: str, text: str) -> list[str]:
    compiled = compile_text(text, name)
    found = sorted({d.code or d.rule or "" for d in compiled.diagnostics if d.is_error})
    if kind != "workflow":
        found = [c for c in found if c not in OMITTED]
    return found


BLOCKS = _blocks()


@pytest.mark.parametrize(("name", "kind", "text"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_spec_example_checks_clean(name: str, kind: str, text: str) -> None:
    found = _errors(name, kind, text)
    if name in EXCEPTED:
        assert found, f"{name} is excepted ({EXCEPTED[name]}) but now checks clean: drop the entry"
        return
    if name in REFUSED:
        code, why = REFUSED[name]
        assert found == [code], f"{name}: expected only {code} ({why}), got {found}"
        return
    assert found == [], f"{name} ({kind}) is refused: {found}"


def test_the_gate_sees_the_spec() -> None:
    """The gate cannot pass by judging nothing: every listed name is a judged block, and the spec
    offers a body of workflows, snippets and templates."""
    names = {b[0] for b in BLOCKS}
    assert set(REFUSED) | set(EXCEPTED) <= names
    kinds = [b[1] for b in BLOCKS]
    assert kinds.count("workflow") >= 15 and kinds.count("tasks") >= 8 and kinds.count("task") >= 30
