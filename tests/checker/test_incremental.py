"""The language server's incremental analysis gives exactly what a whole-document check gives.

Every comparison is deep: the value tree, the compiled model, the expression sites and the
findings, positions read as text offsets (see ``incremental_compare``).
"""

from __future__ import annotations

import copy
import pickle
import random
from pathlib import Path

import pytest
from suite_size import examples

from checker.core.source import Anchor, AnchoredSpan, SourceText, Span
from checker.engine.incremental import IncrementalDocument, layout
from checker.engine.pipeline import compile_source
from tests.checker.incremental_compare import differences

SPEC = Path(__file__).resolve().parents[3] / "shared" / "nika-spec"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

SEED = """\
nika: v1
workflow:
  id: incremental-seed
  description: "Résumé of every shape the incremental analysis meets"
model: mock/echo
permits:
  fs: { read: ["./data/**"] }
tasks:
  # a comment before the first task
  fetch:
    invoke:
      tool: nika:read
      args: { path: "./data/in.txt" }

  summarize:
    with:
      text: ${{ tasks.fetch.output }}
    infer:
      prompt: |
        Summarize, in one paragraph:
        ${{ with.text }}
      max_tokens: 200
# a comment at column 0 inside the tasks region
  shout:
    with: { s: "${{ tasks.summarize.output }}" }
    infer: "Shout ${{ with.s }} — naïvely"
    retry: { max_attempts: 2, backoff: "1s" }
  check: { infer: "Is ${{ tasks.shout.output }} fine?", after: [shout] }
outputs:
  result: ${{ tasks.check.output }}
"""


def _full(text: str, path: str = "/tmp/incremental/seed.nika.yaml") -> object:
    return compile_source(SourceText(text, path), None)


def _same(inc: object, full: object) -> list[str]:
    fields = ("root", "workflow", "sites", "diagnostics")
    return differences(tuple(getattr(inc, f) for f in fields), tuple(getattr(full, f) for f in fields))


def _edits(text: str, rng: random.Random, n: int) -> list[str]:
    """``n`` random line edits (typing, deleting, inserting, copying), each made to the version
    before or, half the time, to ``text`` itself (so a broken version does not end the walk)."""
    out = [text]
    for _ in range(n):
        lines = (out[-1] if rng.random() < 0.5 else text).split("\n")
        j = rng.randrange(len(lines))
        op = rng.random()
        if op < 0.4:
            k = rng.randrange(len(lines[j]) + 1)
            lines[j] = lines[j][:k] + rng.choice(["x", " ", '"', ":", "é", "${{ with.a }}", " # z"]) + lines[j][k:]
        elif op < 0.55:
            del lines[j]
        elif op < 0.8:
            lines.insert(j, " " * rng.choice([0, 2, 4, 6]) + rng.choice(["# c", "x: 1", "", "  t9:", 'infer: "hi"']))
        else:
            lines.insert(j, lines[rng.randrange(len(lines))])
        out.append("\n".join(lines))
    return out


# -- the layout ----------------------------------------------------------------------------------
def test_layout_finds_each_task_slice() -> None:
    shape = layout(SEED)
    assert shape is not None
    heads = [next(ln for ln in SEED[s:e].splitlines() if not ln.lstrip().startswith("#")) for s, e in shape.slices]
    assert [h.split(":", 1)[0].strip() for h in heads] == ["fetch", "summarize", "shout", "check"]
    assert SEED[shape.slices[0][0] :].startswith("  # a comment before the first task")  # every line is in a slice
    assert [e for _, e in shape.slices[:-1]] == [s for s, _ in shape.slices[1:]]
    assert SEED[shape.key : shape.start] == "tasks:\n"
    assert SEED[shape.end :].startswith("outputs:")


@pytest.mark.parametrize(
    "text",
    [
        "nika: v1\ntasks: {a: {infer: x}}\n",  # flow map
        "nika: v1\ntasks:\n  - a: {infer: x}\n",  # a list
        "nika: v1\ntasks:\n\ta:\n\t\tinfer: x\n",  # tab indentation
        "nika: v1\ntasks:\r  a:\r    infer: x\r",  # lone CR line breaks
        "nika: v1\ntasks:\n  a: {infer: x}\ntasks:\n  b: {infer: y}\n",  # a second tasks key
        "nika: v1\ntasks:\n    a: {infer: x}\n  b: {infer: y}\n",  # a task less indented than the first
        "nika: v1\ntasks:\n",  # no task
    ],
)
def test_layout_declines_other_shapes(text: str) -> None:
    assert layout(text) is None
    assert _same(IncrementalDocument().compile(SourceText(text, "x.nika.yaml")), _full(text, "x.nika.yaml")) == []


def test_a_control_character_in_a_comment_before_the_first_task_is_still_reported() -> None:
    # (found by fuzzing: the lines between `tasks:` and the first task were read by no one)
    text = SEED.replace("# a comment before", "# a com\x7fment before")
    doc = IncrementalDocument()
    doc.compile(SourceText(SEED, "s.nika.yaml"))
    done = doc.compile(SourceText(text, "s.nika.yaml"))
    assert [d.code for d in done.diagnostics] == ["NIKA-PARSE-001"]
    assert _same(done, _full(text, "s.nika.yaml")) == []


def test_a_tag_directive_is_analysed_whole() -> None:
    # `%TAG` changes what `!!str` means inside every task (found in review)
    text = "%TAG !! tag:example.com,2000:\n---\nnika: v1\nworkflow: {id: w}\ntasks:\n  a:\n    infer: !!str hello\n"
    done = IncrementalDocument().compile(SourceText(text, "t.nika.yaml"))
    assert "NIKA-YAML-006" in [d.code for d in done.diagnostics]
    assert _same(done, _full(text, "t.nika.yaml")) == []


@pytest.mark.parametrize("levels", [61, 62, 63])
def test_the_nesting_cap_counts_from_the_document_root(levels: int) -> None:
    # a task sits two levels down (the root map, `tasks:`), wherever it was parsed (found in review)
    text = "nika: v1\nworkflow: {id: w}\ntasks:\n  a:\n    infer: x\n    returns: " + "[" * levels + "]" * levels + "\n"
    done = IncrementalDocument().compile(SourceText(text, "n.nika.yaml"))
    assert ("NIKA-YAML-009" in [d.code for d in done.diagnostics]) == (levels > 61)
    assert _same(done, _full(text, "n.nika.yaml")) == []


# -- anchored spans ------------------------------------------------------------------------------
def test_anchored_span_reads_as_text_offsets() -> None:
    anchor = Anchor(100)
    s = AnchoredSpan(3, 7, anchor)
    assert (s.start, s.end) == (103, 107) and tuple(s) == (103, 107) and s[0] == 103 and len(s) == 2
    assert s == Span(103, 107) and Span(103, 107) == s and hash(s) == hash(Span(103, 107))
    assert s != Span(3, 7) and s < Span(104, 0) and Span(102, 0) < s
    assert repr(s) == "Span(start=103, end=107)"
    assert s.sibling(110, 120) == Span(110, 120) and s.cover(Span(101, 105)) == Span(101, 107)
    anchor.base = 0
    assert (s.start, s.end) == (3, 7)
    assert s.sibling(1, 2).start == 1  # a sibling keeps the anchor...
    moved = s.sibling(1, 2)
    anchor.base = 50
    assert moved == Span(51, 52)  # ...so it moves with it
    frozen = copy.copy(s)
    anchor.base = 60
    assert type(frozen) is Span and frozen == Span(53, 57)  # a copy is a plain span
    assert pickle.loads(pickle.dumps(s)) == Span(63, 67)
    assert 63 in s and 3 not in s and s.index(67) == 1 and s.count(63) == 1
    assert s + (1,) == (63, 67, 1)  # noqa: RUF005 (the concatenation is what is tested)
    assert AnchoredSpan(1, 2, anchor).start == 61 and AnchoredSpan._make([1, 2]) == Span(1, 2)


# -- equivalence ---------------------------------------------------------------------------------
def test_seed_engages_the_incremental_path_and_reuses_unchanged_tasks() -> None:
    doc = IncrementalDocument()
    first = doc._compile(SourceText(SEED, "s.nika.yaml"), None)
    assert first is not None, "the seed has the shape the incremental analysis handles"
    assert _same(first, _full(SEED, "s.nika.yaml")) == []
    edited = SEED.replace("Summarize, in one paragraph:", "Summarize, in two short paragraphs:")
    second = doc._compile(SourceText(edited, "s.nika.yaml"), None)
    assert second is not None and first.workflow is not None and second.workflow is not None
    assert second.workflow.tasks["fetch"] is first.workflow.tasks["fetch"]
    assert second.workflow.tasks["shout"] is first.workflow.tasks["shout"]  # moved, not rebuilt
    assert second.workflow.tasks["summarize"] is not first.workflow.tasks["summarize"]
    assert _same(second, _full(edited, "s.nika.yaml")) == []


def test_an_envelope_edit_above_the_model_keeps_every_compiled_task() -> None:
    doc = IncrementalDocument()
    first = doc._compile(SourceText(SEED, "s.nika.yaml"), None)
    edited = SEED.replace("Résumé of every shape", "A longer résumé of every shape")
    second = doc._compile(SourceText(edited, "s.nika.yaml"), None)
    assert first is not None and second is not None and first.workflow and second.workflow
    assert all(second.workflow.tasks[t] is first.workflow.tasks[t] for t in first.workflow.tasks)
    assert _same(second, _full(edited, "s.nika.yaml")) == []
    changed = edited.replace("model: mock/echo", "model: mock/other")
    third = doc._compile(SourceText(changed, "s.nika.yaml"), None)
    assert third is not None and third.workflow is not None
    assert third.workflow.tasks["fetch"] is not first.workflow.tasks["fetch"]  # a new default model
    assert _same(third, _full(changed, "s.nika.yaml")) == []


def test_a_document_only_yaml_1_2_reads_is_analysed_whole() -> None:
    # libyaml (YAML 1.1) refuses `nika:jq` as a plain scalar inside a flow mapping; the
    # whole-document analysis then reads the document with the pure YAML 1.2 parser, whose
    # marks differ from libyaml's, so the incremental analysis hands such a text over whole.
    text = SEED.replace(
        "  check: {",
        '  count: { invoke: { tool: nika:jq, args: { input: "${{ tasks.fetch.output }}", filter: "length" } } }\n'
        "  check: {",
    )
    doc = IncrementalDocument()
    for version in [text, *_edits(text, random.Random(9), 20)]:
        src = SourceText(version, "j.nika.yaml")
        assert _same(doc.compile(src), _full(version, "j.nika.yaml")) == []
    assert doc._compile(SourceText(text, "j.nika.yaml"), None) is None
    # (found by fuzzing) an empty value ends a slice: libyaml and the pure parser place it apart
    empty = "nika: v1\nworkflow:\n  id: e\n  permits:\ntasks:\n  b:\n    exec: { command: [x:y] }\n    when:\n"
    assert _same(IncrementalDocument().compile(SourceText(empty, "e.nika.yaml")), _full(empty, "e.nika.yaml")) == []


def test_crlf_text_is_analysed_incrementally_and_identically() -> None:
    text = SEED.replace("\n", "\r\n")
    doc = IncrementalDocument()
    for version in _edits(text, random.Random(3), 12):
        src = SourceText(version, "c.nika.yaml")
        assert _same(doc.compile(src), _full(version, "c.nika.yaml")) == []


@pytest.mark.parametrize("seed", range(6))
def test_random_edits_match_a_whole_document_check(seed: int) -> None:
    rng = random.Random(seed)
    doc = IncrementalDocument()
    engaged = 0
    for version in _edits(SEED, rng, 40):
        src = SourceText(version, "r.nika.yaml")
        engaged += doc._compile(src, None) is not None
        diff = _same(doc.compile(src), _full(version, "r.nika.yaml"))
        assert diff == [], (version, diff)
    assert engaged > 5  # the edits did exercise reuse, not only the fallback


def _replay(paths: list[Path], rng: random.Random, edits: int) -> None:
    """Each file and ``edits`` random edits of it, through one incremental document."""
    for path in paths:
        text = path.read_text(encoding="utf-8")
        doc = IncrementalDocument()
        for version in _edits(text, rng, edits):
            src = SourceText(version, str(path))
            diff = _same(doc.compile(src, str(path.parent)), compile_source(src, str(path.parent)))
            assert diff == [], (path, version, diff)


def test_examples_with_edits_match_a_whole_document_check() -> None:
    _replay(sorted(EXAMPLES.glob("*.nika.yaml")), random.Random(5), 8)


def test_spec_templates_with_edits_match_a_whole_document_check() -> None:
    if not SPEC.is_dir():
        pytest.skip("../shared/nika-spec is absent: only the shipped examples are replayed")
    _replay(sorted((SPEC / "templates").rglob("*.yaml")), random.Random(11), 6)


def test_random_line_edits_of_the_500_task_benchmark_file_match_a_whole_document_check() -> None:
    """The editor-speed benchmark's document, edited at random lines as a user types: its 500
    tasks in `.ci/run campaigns`, the same shape at 300 tasks in the default suite (two whole
    checks of 500 tasks per version were most of the test's cost)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("lsp_speed", EXAMPLES.parent / "benchmarks" / "lsp_speed.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    text = bench.workflow(examples(500, 300))
    rng = random.Random(500)
    doc = IncrementalDocument()
    engaged = 0
    for version in [text, *_edits(text, rng, 6)]:
        src = SourceText(version, "bench.nika.yaml")
        engaged += doc._compile(src, None) is not None
        diff = _same(doc.compile(src), _full(version, "bench.nika.yaml"))
        assert diff == [], diff
    assert engaged >= 4  # several versions took the incremental path, not only the fallback
