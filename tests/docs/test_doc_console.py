"""The console-block harness itself (doc_console.py): what it tolerates and what it must not, so a
page cannot pass by accident; and the promise about examples: each says where it runs from, and
a page runs each from there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from doc_console import ROOT, Block, HarnessError, Ids, Step, blocks, match, run_session, sessions


def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_blocks_and_directives_are_read(tmp_path: Path) -> None:
    page = _page(
        tmp_path,
        "intro\n\n```console\n$ nika --version\nnika 0.1.0\n```\n\n"
        '<!-- console: cwd=examples needs=jq -->\n```console\n$ a \\\n    b\nout\n```\n\n'
        "<!-- console: continue -->\n```console\n$ c\n```\n\n"
        '<!-- console: skip="needs a cluster" -->\n```console\n$ d\n```\n\n```sh\n$ not run\n```\n',
    )
    found = blocks(page)
    assert [b.steps[0].command for b in found] == ["nika --version", "a b", "c", "d"]
    assert found[0].steps[0].expected == ["nika 0.1.0"]
    assert found[1].cwd == "examples" and found[1].needs == ["jq"] and found[2].cont and found[3].skip
    assert [[b.steps[0].command for b in s] for s in sessions(found)] == [["nika --version"], ["a b", "c"], ["d"]]
    with pytest.raises(HarnessError, match="unknown console directive `sandbox`"):
        blocks(_page(tmp_path, "<!-- console: sandbox -->\n```console\n$ x\n```\n"))


def test_outputs_must_match_except_for_what_varies_by_run() -> None:
    ids = Ids()
    assert match(["  ok hello (50 ms)", "took 0.76s"], "  ok hello (7 ms)\ntook 12.5s\n", ids)
    assert not match(["  ok hello (50 ms)"], "  FAILED hello (50 ms)\n", ids), "a different word is a mismatch"
    assert not match(["  ok hello (50 ms)"], "  ok hello (50 ms)\nextra line\n", ids), "so is a line more"
    assert not match(["a", "b"], "a\n", ids), "and a line less"
    assert not match([], "something\n", ids), "a command shown printing nothing must print nothing"
    assert match(["a", "...", "z"], "a\nb\nc\nz\n", ids) and match(["a", "...", "z"], "a\nz\n", ids)
    assert match(["x: ... (N)"], "x: anything at all (N)\n", ids)
    assert match(["RUN      STATE"], "RUN  STATE\n", ids), "column padding"
    assert not match(["  indented"], "indented\n", ids), "indentation is kept"


def test_a_shown_run_id_stands_for_one_real_id_everywhere() -> None:
    ids = Ids()
    shown = ["trace: .nika/traces/20261202T025002Z-df66ef25eee2.ndjson", "again 20261202T025002Z-df66ef25eee2"]
    real = "trace: .nika/traces/20270101T000000Z-0123456789ab.ndjson\nagain 20270101T000000Z-0123456789ab\n"
    assert match(shown, real, ids)
    assert ids.runs == {"20261202T025002Z-df66ef25eee2": "20270101T000000Z-0123456789ab"}
    other = "trace: .nika/traces/20270101T000000Z-0123456789ab.ndjson\nagain 20270101T000000Z-ffffffffffff\n"
    assert not match(shown, other, Ids()), "the same shown id, two real ids"
    assert ids.into_command("nika trace show df66 --resume .nika/traces/20261202T025002Z-df66ef25eee2.ndjson") == (
        "nika trace show 0123 --resume .nika/traces/20270101T000000Z-0123456789ab.ndjson"
    )
    assert not match(["later 20261202T025002Z-df66ef25eee2"], "later 20270101T000000Z-aaaaaaaaaaaa\n", ids)


def _block(*steps: tuple[str, list[str]], cwd: str | None = None) -> list[Block]:
    return [Block("page.md", 1, [Step(c, e, n) for n, (c, e) in enumerate(steps, 2)], cwd=cwd)]


def test_cat_of_a_missing_file_writes_it_and_nika_runs_in_process(tmp_path: Path) -> None:
    wf = ["nika: v1", "workflow: {id: w}", "model: mock/echo", "tasks:", "  a:", '    infer: { prompt: "hi" }']
    session = _block(("cat w.nika.yaml", wf), ("nika check w.nika.yaml", ["All checked: 1 file, no findings."]))
    assert run_session(session, tmp_path) is None
    assert (tmp_path / "project" / "w.nika.yaml").read_text().startswith("nika: v1\n")
    wrong = _block(("cat w.nika.yaml", wf), ("nika check w.nika.yaml", ["Found 1 error in 1 file."]))
    mismatch = run_session(wrong, tmp_path / "again")
    assert mismatch is not None and "All checked: 1 file, no findings." in str(mismatch)


def test_a_block_that_writes_into_the_repository_outside_an_ignored_folder_fails(tmp_path: Path) -> None:
    ok = _block(("mkdir -p .nika && echo x > .nika/scratch", []), cwd="examples")
    assert run_session(ok, tmp_path / "a") is None, ".nika/ is ignored"
    leak = _block(("echo x > stray.txt", []), cwd="examples")
    with pytest.raises(AssertionError, match=r"\?\? examples/stray.txt"):
        run_session(leak, tmp_path / "b")


# -- examples ------------------------------------------------------------------------------------------


EXAMPLES = sorted((ROOT / "examples").glob("*.nika.yaml"))


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_each_example_says_where_it_runs_from_and_a_page_runs_it_from_there(example: Path) -> None:
    head = "".join(example.read_text(encoding="utf-8").split("nika: v1", 1)[0])
    assert "Run from examples/" in head or "from examples/" in head, f"{example.name}: say where it runs from"
    assert f"nika run {example.name}" in head, f"{example.name}: give the command in its first lines"
    ran = [
        step
        for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
        for session in sessions(blocks(page))
        if session[0].cwd == "examples" and not session[0].skip
        for b in session
        for step in b.steps
        if re.search(rf"(^|\s)nika run {re.escape(example.name)}(\s|$)", step.command)
    ]
    assert ran, f"no console block runs `nika run {example.name}` from examples/ (docs/examples.md)"
