"""`nika run FILE --watch` (nika/commands/run_watch.py): a session driven by real file events.

The session runs in the test's thread; a driver thread edits files and waits on the session's own
lines ("watching …", "re-run finished: …"), never on a sleep. Every exec appends its task id to
`ran.log`, so the exact set of tasks a save re-ran is what the log grew by."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("watchfiles")

import nika.commands.run as run_steps
import nika.commands.test as test_command
from nika.commands.run_watch import Session, forced_by_save
from runtime.journal.write import verify

DEADLINE = 60.0  # generous: a loaded machine; nothing here waits this long when it works

WF = """\
nika: v1
workflow: { id: watch-demo }
permits: { exec: ["sh"], tools: ["nika:read"], fs: { read: ["./**"] } }
tasks:
  a:
    exec: { command: ["sh", "-c", "echo a >> ran.log; echo A1"] }
  b:
    with: { x: "${{ tasks.a.output }}" }
    exec: { command: ["sh", "-c", "echo b >> ran.log; echo B-$0", "${{ with.x }}"] }
  c:
    exec: { command: ["sh", "-c", "echo c >> ran.log; echo C1"] }
  d:
    invoke: { tool: "nika:read", args: { path: "./notes.txt" } }
  e:
    with: { n: "${{ tasks.d.output }}" }
    exec: { command: ["sh", "-c", "echo e >> ran.log; echo E"] }
outputs:
  b: "${{ tasks.b.output }}"
  c: "${{ tasks.c.output }}"
  d: "${{ tasks.d.output }}"
"""


class Lines(io.TextIOBase):
    """A stream a driver thread can wait on: every write is kept, and waiters are woken."""

    def __init__(self) -> None:
        self.text = ""
        self.cond = threading.Condition()

    def write(self, s: str) -> int:
        with self.cond:
            self.text += s
            self.cond.notify_all()
        return len(s)

    def wait_for(self, pred: Callable[[str], bool]) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: pred(self.text), timeout=DEADLINE)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wf.nika.yaml").write_text(WF)
    (tmp_path / "notes.txt").write_text("one\n")
    return tmp_path


def ran(root: Path) -> list[str]:
    log = root / "ran.log"
    return log.read_text().split() if log.exists() else []


def drive(root: Path, steps: list[Callable[[], None]]) -> tuple[int, Lines, list[list[str]]]:
    """Run a session; after it watches, each step edits files and waits for its re-run to finish.
    Returns the exit status, the session's stderr, and what each cycle added to ran.log."""
    import watchfiles

    err, out, stop = Lines(), Lines(), threading.Event()
    grown: list[list[str]] = []
    failures: list[str] = []

    def driver() -> None:
        try:
            if not err.wait_for(lambda t: "watching " in t):
                failures.append("the session never started watching")
                return
            grown.append(ran(root))
            for n, step in enumerate(steps, 1):
                before = len(ran(root))
                step()
                if not err.wait_for(lambda t, n=n: t.count("re-run ") >= n):
                    failures.append(f"no re-run {n} after the edit")
                    return
                grown.append(ran(root)[before:])  # the OS watches stay in place across re-runs
        finally:
            stop.set()

    thread = threading.Thread(target=driver)
    thread.start()
    session = Session(
        str(root / "wf.nika.yaml"), run_steps, trace_dir=root / "traces", debounce_ms=50, out=out, err=err, stop=stop
    )
    try:
        code = session.run(watchfiles)
    finally:
        stop.set()
        thread.join(DEADLINE)
    assert not failures, failures[0] + "\n" + err.text
    return code, err, grown


def edit(path: Path, old: str, new: str) -> Callable[[], None]:
    return lambda: path.write_text(path.read_text().replace(old, new))


def test_each_save_re_runs_exactly_the_changed_tasks_and_their_dependents(project):
    wf = project / "wf.nika.yaml"
    code, err, grown = drive(
        project,
        [
            edit(wf, "echo C1", "echo C2"),  # c alone: nothing depends on it
            edit(wf, "echo A1", "echo A2"),  # a, and b that reads it
            edit(project / "notes.txt", "one", "two"),  # the file d reads: d, and e that reads d
        ],
    )
    assert code == 3  # stopped: exit 3, as a Ctrl-C
    first, *rest = grown
    assert sorted(first) == ["a", "b", "c", "e"]  # d is a builtin read: no log line of its own
    assert [sorted(g) for g in rest] == [["c"], ["a", "b"], ["e"]]
    assert "changed: `c`;" in err.text and "changed: `a`;" in err.text and "changed: `d`;" in err.text
    assert "re-run finished: success · ran d, e · reused" in err.text
    assert err.text.rstrip().endswith("watch stopped")
    traces = sorted((project / "traces").glob("*.ndjson"))
    assert len(traces) == 4 and all(verify(t.read_bytes())["verdict"] == "clean" for t in traces)


def test_an_edit_check_refuses_is_reported_and_the_next_good_save_re_runs(project):
    wf = project / "wf.nika.yaml"
    code, err, grown = drive(
        project,
        [
            edit(wf, "${{ tasks.a.output }}", "${{ tasks.nope.output }}"),  # refused: no effect runs
            edit(wf, "${{ tasks.nope.output }}", "${{ tasks.a.output }}\n    retry: { max_attempts: 2 }"),
        ],
    )
    assert code == 3
    assert grown[1] == [] and "re-run refused: fix the file and save again" in err.text
    assert grown[2] == ["b"]  # b's definition changed; a, c, d, e are reused from the last good run


def compiled_snapshot(root: Path, text: str):
    from nika.commands.run_watch import Session

    (root / "wf.nika.yaml").write_text(text)
    snap = Session(str(root / "wf.nika.yaml"), run_steps, err=io.StringIO()).admit()
    assert snap is not None
    return snap


GATED = """\
nika: v1
workflow: { id: gated }
permits: { exec: ["sh"], tools: ["nika:prompt"] }
tasks:
  prep:
    exec: { command: ["sh", "-c", "echo P1"] }
  ok:
    after: { prep: success }
    invoke: { tool: "nika:prompt", args: { message: "Ship?", mode: confirm } }
  ship:
    with: { ok: "${{ tasks.ok.output }}" }
    exec: { command: ["sh", "-c", "echo S1-$0", "${{ with.ok }}"] }
  side:
    exec: { command: ["sh", "-c", "echo X1"] }
"""


def test_a_gate_asks_again_when_anything_below_it_re_runs_and_only_then(project):
    base = compiled_snapshot(project, GATED)
    side = compiled_snapshot(project, GATED.replace("X1", "X2"))
    assert forced_by_save(base, side, set()) == ({"side"}, {"side"})
    below = compiled_snapshot(project, GATED.replace("S1", "S2"))
    assert forced_by_save(base, below, set()) == ({"ship"}, {"ship", "ok"})  # NEP-0013: never replayed
    above = compiled_snapshot(project, GATED.replace("P1", "P2"))
    assert forced_by_save(base, above, set()) == ({"prep"}, {"prep", "ok", "ship"})
    envelope = compiled_snapshot(project, GATED.replace("gated }", "gated, description: other }"))
    assert forced_by_save(base, envelope, set()) == (set(), {"ok"})


def test_watch_refuses_flags_it_owns_and_says_so(project, capsys):
    from nika.cli import main

    assert main(["run", "wf.nika.yaml", "--watch", "--resume", "x.ndjson"]) == 1
    assert "--watch does not combine with --resume" in capsys.readouterr().err
    assert main(["run", "wf.nika.yaml", "--debounce", "10"]) == 1
    assert "--debounce needs --watch" in capsys.readouterr().err


TEST_WF = """\
nika: v1
workflow: { id: greet }
model: mock/echo
tasks:
  hello:
    infer: { prompt: "Hi" }
outputs:
  said: ${{ tasks.hello.output }}
"""

TEST_FILE = """\
workflow: greet.nika.yaml
cases:
  echo:
    replies: { hello: ["Hi Ada"] }
    expect: { outputs: { said: "Hi Ada" } }
"""


def test_nika_test_watch_re_runs_the_test_files_a_save_touches(tmp_path, monkeypatch):
    from nika.commands.test_watch import watch_tests

    monkeypatch.chdir(tmp_path)
    (tmp_path / "greet.nika.yaml").write_text(TEST_WF)
    (tmp_path / "greet.nika-test.yaml").write_text(TEST_FILE)
    err, out, stop = Lines(), Lines(), threading.Event()
    steps = [
        lambda: (tmp_path / "greet.nika-test.yaml").write_text(TEST_FILE.replace('said: "Hi Ada"', 'said: "Hi Bob"')),
        lambda: (tmp_path / "greet.nika-test.yaml").write_text(TEST_FILE),
    ]

    def driver() -> None:
        try:
            assert err.wait_for(lambda t: "watching 2 files" in t)
            for n, step in enumerate(steps, 1):
                step()
                assert err.wait_for(lambda t, n=n: t.count("re-run finished") >= n)
        finally:
            stop.set()

    thread = threading.Thread(target=driver)
    thread.start()
    code = watch_tests(["."], test_command, debounce_ms=50, stop=stop, out=out, err=err)
    thread.join(DEADLINE)
    assert code == 2, err.text
    assert "re-run finished: greet.nika-test.yaml · exit 1" in err.text  # the planted wrong expectation
    assert "re-run finished: greet.nika-test.yaml · exit 0" in err.text
    assert out.text.count("1 passed") == 2 and out.text.count("1 failed") == 1


def test_a_test_file_read_half_written_keeps_the_workflow_it_named(tmp_path, monkeypatch):
    """The cause of the missed save (issue 43): the re-scan after a re-run read the test file while
    the next save was writing it, and the workflow dropped out of the watch set ("watching 1
    files"). A test file that does not load keeps what the previous table said of it."""
    from nika.commands.test_watch import watched

    monkeypatch.chdir(tmp_path)
    (tmp_path / "greet.nika.yaml").write_text(TEST_WF)
    test = tmp_path / "greet.nika-test.yaml"
    test.write_text(TEST_FILE)
    before = watched(["."], test_command.discover)
    wf = str((tmp_path / "greet.nika.yaml").resolve())
    assert set(before) == {wf, str(test.resolve())}
    test.write_text("")  # truncated: the first half of `write_text`
    assert watched(["."], test_command.discover, before) == before
    assert set(watched(["."], test_command.discover)) == {str(test.resolve())}  # no table before: itself only


def test_nika_test_watch_sees_a_save_made_while_no_watcher_ran(tmp_path, monkeypatch):
    """A save between the first run and the watcher being in place is found by its stamp, not lost."""
    from nika.commands.test_watch import watch_tests

    monkeypatch.chdir(tmp_path)
    (tmp_path / "greet.nika.yaml").write_text(TEST_WF)
    test = tmp_path / "greet.nika-test.yaml"
    test.write_text(TEST_FILE)
    err, out, stop = Lines(), Lines(), threading.Event()
    real = test_command.run_tests
    calls: list[list[str]] = []

    def run_tests(paths, **kw):  # type: ignore[no-untyped-def]
        calls.append(list(paths))
        if len(calls) == 1:  # during the first run, before any watcher: a save nobody is watching for
            test.write_text(TEST_FILE.replace('said: "Hi Ada"', 'said: "Hi Bob"'))
        return real(paths, **kw)

    class Command:
        discover = staticmethod(test_command.discover)

    Command.run_tests = staticmethod(run_tests)  # type: ignore[attr-defined]

    def driver() -> None:
        try:
            assert err.wait_for(lambda t: "re-run finished" in t)
        finally:
            stop.set()

    thread = threading.Thread(target=driver)
    thread.start()
    code = watch_tests(["."], Command, debounce_ms=50, stop=stop, out=out, err=err)
    thread.join(DEADLINE)
    assert code == 2, err.text
    assert "re-run finished: greet.nika-test.yaml · exit 1" in err.text, err.text
    assert calls == [["."], ["greet.nika-test.yaml"]]
