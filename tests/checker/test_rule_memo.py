"""The rule memo of the incremental analysis (checker/core/memo.py): a finding about an unchanged
task appears and disappears with what it depends on in other tasks and in the envelope, exactly as
a whole-document check says, and the memo holds one version's objects only."""

from __future__ import annotations

from checker.core.memo import MISS, RuleMemo
from checker.core.source import SourceText
from checker.engine.incremental import IncrementalDocument
from checker.engine.pipeline import compile_source
from tests.checker.incremental_compare import differences

PATH = "/tmp/rule-memo/m.nika.yaml"


def _versions(doc: IncrementalDocument, *texts: str) -> list[tuple[str, ...]]:
    """Each text through one incremental document, compared deeply with a whole-document check;
    the codes found in each."""
    codes = []
    for text in texts:
        src = SourceText(text, PATH)
        assert doc._compile(src, None) is not None, "the text keeps the incremental shape"
        inc, full = doc.compile(src), compile_source(src, None)
        fields = ("root", "workflow", "sites", "diagnostics")
        assert differences(*(tuple(getattr(x, f) for f in fields) for x in (inc, full))) == []
        codes.append(tuple(d.code for d in inc.diagnostics))
    return codes


HEAD = "nika: v1\nworkflow: { id: memo }\nmodel: mock/echo\n"


def test_a_reader_follows_its_producer_being_renamed_and_back() -> None:
    reader = '  b:\n    with: { x: "${{ tasks.a.output }}" }\n    infer: { prompt: "${{ with.x }}" }\n'
    good = HEAD + 'tasks:\n  a:\n    infer: { prompt: "p" }\n' + reader
    renamed = good.replace("  a:\n", "  z:\n", 1)
    codes = _versions(IncrementalDocument(), good, renamed, good)
    assert "NIKA-DAG-002" not in codes[0] and "NIKA-DAG-002" in codes[1] and "NIKA-DAG-002" not in codes[2]


def test_a_read_of_an_output_binding_follows_the_producer() -> None:
    producer = '  a:\n    infer: { prompt: "p" }\n    output: { summary: "." }\n'
    reader = '  b:\n    with: { x: "${{ tasks.a.summary }}" }\n    infer: { prompt: "${{ with.x }}" }\n'
    good = HEAD + "tasks:\n" + producer + reader
    dropped = good.replace('    output: { summary: "." }\n', "")
    codes = _versions(IncrementalDocument(), good, dropped, good)
    assert "NIKA-VAR-001" not in codes[0] and "NIKA-VAR-001" in codes[1] and "NIKA-VAR-001" not in codes[2]


def test_a_read_of_an_input_follows_the_envelope() -> None:
    body = 'tasks:\n  a:\n    infer: { prompt: "${{ inputs.topic }}" }\n  b:\n    infer: { prompt: "q" }\n'
    declared = HEAD + "inputs:\n  topic: { type: string, default: x }\n" + body
    codes = _versions(IncrementalDocument(), declared, HEAD + body, declared)
    assert "NIKA-VAR-001" not in codes[0] and "NIKA-VAR-001" in codes[1] and "NIKA-VAR-001" not in codes[2]


def test_a_typed_expression_follows_its_producers_returns() -> None:
    """NIKA-VAR-006/-001 by declared types (the typed-expression memo, issue 41): a reader's
    verdict follows the `returns:` of the task it reads, through a `with:` binding."""
    producer = '  a:\n    infer: { prompt: "p" }\n    returns: {object: {n: integer}}\n'
    reader = (
        '  b:\n    with: { x: "${{ tasks.a.output.n }}" }\n'
        '    infer: { prompt: "${{ with.x.startsWith(\'a\') }}" }\n'
    )
    typed = HEAD + "tasks:\n" + producer + reader
    as_string = typed.replace("{n: integer}", "{n: string}")
    codes = _versions(IncrementalDocument(), as_string, typed, as_string)
    assert "NIKA-VAR-006" not in codes[0] and "NIKA-VAR-006" in codes[1] and "NIKA-VAR-006" not in codes[2]


def test_a_typed_expression_follows_the_envelope_types() -> None:
    body = (
        'tasks:\n  a:\n    infer: { prompt: "${{ inputs.n.startsWith(\'a\') }}" }\n'
        '  b:\n    infer: { prompt: "q" }\n'
    )
    as_string = HEAD + "inputs:\n  n: { type: string, default: x }\n" + body
    as_integer = as_string.replace("type: string, default: x", "type: integer, default: 1")
    codes = _versions(IncrementalDocument(), as_string, as_integer, as_string)
    assert "NIKA-VAR-006" not in codes[0] and "NIKA-VAR-006" in codes[1] and "NIKA-VAR-006" not in codes[2]


def test_a_dead_edge_follows_its_producer() -> None:
    waiter = '  b:\n    after: { a: skipped }\n    infer: { prompt: "q" }\n'
    never_skipped = HEAD + 'tasks:\n  a:\n    infer: { prompt: "p" }\n' + waiter
    skippable = never_skipped.replace(
        '    infer: { prompt: "p" }\n', '    when: "${{ 1 == 1 }}"\n    infer: { prompt: "p" }\n', 1
    )
    codes = _versions(IncrementalDocument(), never_skipped, skippable, never_skipped)
    assert "NIKA-DAG-006" in codes[0] and "NIKA-DAG-006" not in codes[1] and "NIKA-DAG-006" in codes[2]


def test_unchanged_tasks_are_recalled_and_the_memo_does_not_grow() -> None:
    tasks = "".join(
        f'  t{i}:\n    with: {{ x: "${{{{ tasks.t{i - 1}.output }}}}" }}\n    infer: {{ prompt: "{i}" }}\n'
        for i in range(1, 40)
    )
    text = HEAD + 'tasks:\n  t0:\n    infer: { prompt: "start" }\n' + tasks
    doc = IncrementalDocument()
    doc.compile(SourceText(text, PATH))
    sizes = []
    for r in range(30):
        doc.compile(SourceText(text.replace('"start"', f'"start {r}"'), PATH))
        sizes.append(len(doc._rules))
    assert sizes[0] > 0 and max(sizes) == min(sizes)  # one version's objects, however many edits


def test_recall_needs_the_very_object_and_the_same_dependencies() -> None:
    memo = RuleMemo()
    site, dep = object(), object()
    memo.store("k", site, ("found",), (dep,))
    memo.start()
    assert memo.recall("k", site, (object(),)) is MISS  # another dependency
    assert memo.recall("k", object(), (dep,)) is MISS  # another object
    assert memo.recall("k", site, (dep,)) == ("found",)
    memo.start()
    assert memo.recall("k", site, (dep,)) == ("found",)  # recalled last time: kept
    memo.start()
    memo.start()
    assert memo.recall("k", site, (dep,)) is MISS  # not asked for in one analysis: forgotten
