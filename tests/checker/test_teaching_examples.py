"""The teaching text of every code and lint rule is a golden case, as actionlint runs its docs.

Each registry entry (``checker/core/codes.toml``) teaches with a ``Refused:`` (or ``Flagged:``)
example and an ``Accepted:`` (or ``Preferred:``) one. Here each example is placed in a minimal
workflow (an envelope fragment under the envelope, task bodies under ``tasks:``, a bare task body
as one task) and checked: the refused one must raise exactly its code (or rule), positioned inside
the example; the accepted one must be clean of it. Codes the run decides (phase ``run``) are
taught, not checked here.
"""

from __future__ import annotations

import re

import pytest

from checker import compile_text
from checker.core.codes import lints, registry
from checker.grammar import table as G
from checker.project import suppressions

ENVELOPE_KEYS = frozenset(f.name for f in G.ENVELOPE.fields)
TASK_KEYS = frozenset(f.name for f in G.TASK.fields) if hasattr(G, "TASK") else frozenset()
HEAD = "nika: v1\nworkflow: { id: teaching }\n"
FILLER_TASK = 'tasks:\n  noop: { infer: { model: mock/echo, prompt: "x" } }\n'

# Examples that do not stand alone as one document yet: they need a second file (a child
# workflow), bytes a TOML string cannot carry (a byte-order mark, invalid UTF-8), an earlier
# draft's grammar, or a context the fragment only implies. Each must be rewritten to stand alone;
# the test fails when one of them starts to pass, so this list can only shrink.
NOT_SELF_CONTAINED = frozenset(
    {
        "NIKA-AGENT-004",
        "NIKA-ASSERT-001",
        "NIKA-COMP-002",
        "NIKA-COMP-003",
        "NIKA-COMP-004",
        "NIKA-DRIFT-001",
        "NIKA-IMPL-001",
        "NIKA-INVOKE-002",
        "NIKA-PARSE-002",
        "NIKA-PARSE-004",
        "NIKA-PARSE-020",
        "NIKA-PARSE-028",
        "NIKA-PORT-001",
        "NIKA-PORT-002",
        "NIKA-SEC-007",
        "NIKA-SEC-009",
        "NIKA-SEC-010",
        "NIKA-TYPE-005",
        "NIKA-TYPE-006",
        "NIKA-VALUES-001",
        "NIKA-VALUES-002",
        "NIKA-VALUES-003",
        "NIKA-VAR-006",
        "NIKA-VAR-008",
        "NIKA-VAR-020",
        "NIKA-YAML-005",
        "NIKA-YAML-009",
        "NIKA-YAML-010",
        "NIKA-YAML-011",
        "one-obvious-way/002",
        "one-obvious-way/007",
        "one-obvious-way/010",
    }
)

_EXAMPLE = re.compile(r"\n(Refused|Flagged|Accepted|Preferred):\n\n((?:    .*\n|[ \t]*\n)+)")
_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*):")
_TASK_BODY = re.compile(r"^  (?:exec|infer|invoke|agent):", re.M)


def examples(teaching: str) -> dict[str, str]:
    """The first refused (``bad``) and accepted (``good``) example of a teaching text."""
    out: dict[str, str] = {}
    for label, body in _EXAMPLE.findall("\n" + teaching + "\n"):
        text = re.sub(r"^    ", "", body, flags=re.M).strip("\n") + "\n"
        out.setdefault("bad" if label in ("Refused", "Flagged") else "good", text)
    return out


def place(fragment: str) -> tuple[str, int]:
    """A whole document holding ``fragment``, and the offset where the fragment starts."""
    if fragment.lstrip().startswith("nika:"):
        return fragment, 0
    tops = [m.group(1) for line in fragment.splitlines() if (m := _TOP_KEY.match(line))]
    tasks_only = _TASK_BODY.search(fragment) is not None  # `config:` may name a task too
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
    cases += [(rule, info.teaching) for rule, info in lints().items() if info.phase != "run"]
    return sorted(cases)


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
