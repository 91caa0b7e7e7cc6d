"""The teaching text of every code and lint rule is a golden case, as actionlint runs its docs.

Each registry entry (``checker/core/codes.toml``) teaches with a ``Refused:`` (or ``Flagged:``)
example and an ``Accepted:`` (or ``Preferred:``) one. Here each example is placed in a minimal
workflow (an envelope fragment under the envelope, task bodies under ``tasks:``, a bare task body
as one task) and checked: the refused one must raise exactly its code (or rule), positioned inside
the example; the accepted one must be clean of it. Codes the run raises (phase ``run``) are taught,
and their examples are checked only for what the check may say of them: never an error (a failure
the check proves for every run is a warning); rules only the language server decides (phase ``editor``) are checked
with a workspace in tests/lsp/test_workspace_rule.py.
"""

from __future__ import annotations

import re

import pytest

from checker import compile_text
from checker.core.codes import lints, registry
from checker.grammar import table as G
from checker.project import suppressions

ENVELOPE_KEYS = frozenset(G.ENVELOPE.names)
TASK_KEYS = frozenset(G.TASK.names)
HEAD = "nika: v1\nworkflow: { id: teaching }\n"
FILLER_TASK = 'tasks:\n  noop: { infer: { model: mock/echo, prompt: "x" } }\n'

# Examples that cannot run as one document here: they need a second file (a child workflow, a
# SKILL.md), more bytes than a teaching text should hold, an artifact that is not a workflow, or a
# code the check does not emit (yet, or ever, in v1). The test fails when one of them starts to
# pass, so this list can only shrink.
NOT_SELF_CONTAINED = frozenset(
    {
        "NIKA-AGENT-003",  # the accepted example names a SKILL.md that must exist on disk
        "NIKA-AGENT-004",  # the examples are SKILL.md files, not workflows
        "NIKA-ASSERT-001",  # `assert:` (spec 15) is not in the grammar, so the code is never emitted
        "NIKA-COMP-002",  # needs the child workflow file whose effects exceed the parent's grant
        "NIKA-COMP-003",  # an invoke cycle needs two workflow files
        "NIKA-COMP-004",  # needs the child workflow file that declares the inputs
        "NIKA-DECIDE-001",  # the examples are decision bundles (JSON), not workflows
        "NIKA-IMPL-001",  # needs an input that crashes a rule, i.e. a checker bug
        "NIKA-INVOKE-002",  # an MCP tool's schema is known only at run time
        "NIKA-PORT-001",  # judges gateway artifacts (a lowering report), not a workflow file
        "NIKA-PORT-002",  # judges a policy lowering onto a backend, not a workflow file
        "NIKA-SEC-010",  # the static one-prompt-many-effect-classes refusal is not emitted by the check
        "NIKA-TYPE-005",  # reserved for `secret<T>`, which v1 does not have (TYPE-001 fires instead)
        "NIKA-YAML-005",  # a 64 KiB scalar (or a 4,300-digit integer)
        "NIKA-YAML-010",  # a 1 MiB document
    }
)

_EXAMPLE = re.compile(r"^(Refused|Flagged|Accepted|Preferred):\n\n((?:    .*\n|[ \t]*\n)+)", re.M)
_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*):")
_NESTED_VERB = re.compile(r"^  (exec|infer|invoke|agent):")


def _writes_a_task(fragment: str) -> bool:
    """Whether a verb sits one level under a top key whose grammar block does not hold it: that
    key is then a task id (``config:`` may name a task), not an envelope block (``permits: {exec:}``)."""
    top = None
    for line in fragment.splitlines():
        if m := _TOP_KEY.match(line):
            top = m.group(1)
        elif (v := _NESTED_VERB.match(line)) and top is not None:
            held = G.block_at((top,))
            if held is None or v.group(1) not in held[0]:
                return True
    return False


def examples(teaching: str) -> dict[str, str]:
    """The first refused (``bad``) and accepted (``good``) example of a teaching text."""
    out: dict[str, str] = {}
    for label, body in _EXAMPLE.findall(teaching + "\n"):
        text = re.sub(r"^    ", "", body, flags=re.M).strip("\n") + "\n"
        out.setdefault("bad" if label in ("Refused", "Flagged") else "good", text)
    return out


def place(fragment: str) -> tuple[str, int]:
    """A whole document holding ``fragment``, and the offset where the fragment starts."""
    if fragment.lstrip().startswith("nika:"):
        return fragment, 0
    tops = [m.group(1) for line in fragment.splitlines() if (m := _TOP_KEY.match(line))]
    tasks_only = _writes_a_task(fragment)
    if tops and all(k in ENVELOPE_KEYS for k in tops) and not tasks_only:
        return HEAD + fragment + ("" if "tasks" in tops else FILLER_TASK), len(HEAD)
    if tops and (tasks_only or not any(k in ENVELOPE_KEYS for k in tops)):
        if set(tops) <= TASK_KEYS:  # one task's body
            head = HEAD + "tasks:\n  t:\n"
            return head + "".join(f"    {line}\n" for line in fragment.splitlines()), len(head)
        head = HEAD + "tasks:\n"  # task ids with their bodies
        return head + "".join(f"  {line}\n" for line in fragment.splitlines()), len(head)
    return HEAD + fragment, len(HEAD)


def _cases() -> list[tuple[str, str]]:
    cases = [(code, info.teaching) for code, info in registry().items() if info.phase != "run"]
    cases += [(rule, info.teaching) for rule, info in lints().items() if info.phase not in ("run", "editor")]
    return sorted(cases)


def _run_cases() -> list[tuple[str, str]]:
    return sorted((code, info.teaching) for code, info in registry().items() if info.phase == "run")


@pytest.mark.parametrize(("key", "teaching"), _run_cases(), ids=[k for k, _ in _run_cases()])
def test_a_run_codes_examples_are_never_refused_for_it(key: str, teaching: str) -> None:
    """Spec 05 places the code at evaluation: whatever the check proves of the example is a warning."""
    for example in examples(teaching).values():
        c = compile_text(place(example)[0], "teaching.nika.yaml")
        assert not [d for d in c.diagnostics if d.code == key and d.is_error], example


def _ids(doc: str, key: str) -> list[tuple[str, int]]:
    """Where ``key`` is reported in ``doc``, suppression comments applied as ``nika check`` does."""
    c = compile_text(doc, "teaching.nika.yaml")
    outcome = suppressions.apply(c.source, c.diagnostics)
    found = (*outcome.kept, *outcome.notes)
    return [(d.code or d.rule or "", d.span.start) for d in found if key in (d.code, d.rule)]


@pytest.mark.parametrize(("key", "teaching"), _cases(), ids=[k for k, _ in _cases()])
def test_teaching_examples_are_golden(key: str, teaching: str) -> None:
    ex = examples(teaching)
    assert "bad" in ex, f"{key} teaches no refused example"
    doc, start = place(ex["bad"])
    hits = _ids(doc, key)
    works = bool(hits) and all(start <= at <= len(doc) for _, at in hits)
    if "good" in ex:
        gdoc, _ = place(ex["good"])
        works = works and not _ids(gdoc, key)
    if key in NOT_SELF_CONTAINED:
        assert not works, f"{key}'s examples now stand alone: remove it from NOT_SELF_CONTAINED"
        pytest.skip(f"{key}: its teaching example does not stand alone as one document yet")
    assert hits, f"the refused example of {key} does not raise it:\n{doc}"
    assert works, f"{key}: positioned outside its example, or also raised by the accepted one"


@pytest.mark.parametrize(
    ("fragment", "as_tasks"),
    [
        # an envelope block that holds a verb-named field stays in the envelope
        ('permits:\n  exec: ["make"]\ntasks:\n  build:\n    exec: { command: ["make"] }\n', False),
        ('permits:\n  exec: ["make"]\n', False),
        # a top key that is no envelope block, or whose block has no such field, is a task id
        ('config:\n  infer: { model: mock/echo, prompt: "x" }\n', True),
        ('build:\n  infer: { model: mock/echo, prompt: "x" }\n', True),
    ],
)
def test_fragments_are_placed_by_the_grammar(fragment: str, as_tasks: bool) -> None:
    doc, start = place(fragment)
    assert doc[:start].endswith("tasks:\n") == as_tasks
    found = compile_text(doc, "teaching.nika.yaml").diagnostics
    assert [d.code for d in found if d.is_error] == []  # each one is a valid workflow as placed
