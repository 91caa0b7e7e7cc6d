"""`nika test`: workflow test files run under the mock provider, with pytest's exit codes, a
pytest-like summary, `--update` for golden expectations and JUnit XML for CI."""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from nika.cli import main

WF = """\
nika: v1
workflow:
  id: greet
model: openai/gpt-5-mini
inputs:
  name: { type: string, required: true }
permits:
  exec: ["echo"]
tasks:
  hello:
    infer: { prompt: "Hi ${{ inputs.name }}" }
  shout:
    with: { msg: "${{ tasks.hello.output }}" }
    exec: { command: ["echo", "${{ with.msg }}!"] }
outputs:
  said: ${{ tasks.shout.output }}
"""

PASSING = """\
workflow: greet.nika.yaml
cases:
  echo:
    vars: { name: Ada }
    expect:
      outputs: { said: "Hi Ada!" }
  scripted:
    # a comment that --update keeps
    vars: { name: Bob }
    replies:
      hello: ["Bonjour Bob"]
    expect:
      status: success
      tasks: { hello: success, shout: { status: success, output: "Bonjour Bob!" } }
      outputs: { said: "Bonjour Bob!" }
"""


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, test: str, name: str = "greet") -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "greet.nika.yaml").write_text(WF)
    path = tmp_path / f"{name}.nika-test.yaml"
    path.write_text(textwrap.dedent(test))
    return path


def _nika(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    rc = main(["test", *args])
    out = capsys.readouterr()
    return rc, out.out + out.err


def test_passing_cases_exit_0_with_a_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, monkeypatch, PASSING)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-used")  # the run is hermetic: mock answers
    rc, out = _nika(capsys)
    assert rc == 0, out
    assert "collected 2 cases in 1 file" in out and "greet.nika-test.yaml .." in out and "2 passed in" in out
    assert not (tmp_path / ".nika").exists()  # no trace is written


def test_a_failed_expectation_exits_1_and_says_what_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, monkeypatch, PASSING.replace('said: "Hi Ada!"', 'said: "Hi Eve!"'))
    rc, out = _nika(capsys, "-v")
    assert rc == 1
    assert "greet.nika-test.yaml::echo FAILED" in out and "greet.nika-test.yaml::scripted PASSED" in out
    assert 'outputs.said: expected "Hi Eve!", got "Hi Ada!"' in out
    assert "1 failed, 1 passed" in out


def test_statuses_errors_and_unused_replies_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(
        tmp_path,
        monkeypatch,
        """\
        workflow: greet.nika.yaml
        cases:
          fails:
            vars: { name: Ada }
            replies:
              hello: ["one", "two"]
            mocks:
              shout: { error: { code: NIKA-EXEC-001, message: "boom" } }
            expect:
              status: success
              tasks: { shout: { error: NIKA-EXEC-002 } }
        """,
    )
    rc, out = _nika(capsys)
    assert rc == 1
    assert "status: expected success, got failure" in out
    assert 'tasks.shout.error: expected "NIKA-EXEC-002", got "NIKA-EXEC-001"' in out
    assert "task `hello` has 2 scripted replies and the run used 1" in out


def test_a_mock_list_answers_one_call_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wf = WF.replace(
        "    exec: {", '    retry: { max_attempts: 3, backoff_ms: 60000, on_codes: ["NIKA-EXEC-001"] }\n    exec: {'
    )
    _project(
        tmp_path,
        monkeypatch,
        """\
        workflow: greet.nika.yaml
        cases:
          flaky:
            vars: { name: Ada }
            mocks:
              shout: [{ error: { code: NIKA-EXEC-001, message: "1" } }, { output: "third time lucky" }]
            expect:
              outputs: { said: "third time lucky" }
        """,
    )
    (tmp_path / "greet.nika.yaml").write_text(wf)
    rc, out = _nika(capsys)
    assert rc == 0, out  # and at once: the 60 s back-off is not waited for in a test


def test_collection_errors_exit_2_with_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, monkeypatch, PASSING.replace("    expect:\n      outputs", "    expcet:\n      outputs", 1))
    rc, out = _nika(capsys)
    assert rc == 2
    assert "greet.nika-test.yaml:5: unknown field `expcet` in case `echo`; did you mean `expect`?" in out
    _project(tmp_path, monkeypatch, PASSING.replace("hello: [", "helo: ["))
    rc, out = _nika(capsys)
    assert rc == 2 and "task `helo`, which the workflow does not have; did you mean `hello`?" in out


def test_a_refused_workflow_is_an_error_unless_expected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(
        tmp_path,
        monkeypatch,
        """\
        workflow: greet.nika.yaml
        cases:
          no-name:
            expect: { status: refused }
          wrong-type:
            vars: { name: 5 }
        """,
    )
    rc, out = _nika(capsys, "-v")
    assert rc == 2
    assert "::no-name PASSED" in out and "::wrong-type ERROR" in out and "refused before the run" in out


def test_no_cases_exits_5_and_usage_errors_exit_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out = _nika(capsys)
    assert rc == 5 and "no cases ran" in out
    with pytest.raises(SystemExit) as exc:
        main(["test", "--no-such-flag"])
    assert exc.value.code == 4


def test_k_selects_cases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path, monkeypatch, PASSING)
    rc, out = _nika(capsys, "-k", "scripted", "-v")
    assert rc == 0 and "::scripted PASSED" in out and "::echo" not in out


def test_update_rewrites_only_failed_expectations_and_keeps_comments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _project(tmp_path, monkeypatch, PASSING.replace('output: "Bonjour Bob!"', 'output: "Hola"'))
    rc, out = _nika(capsys, "--update")
    assert rc == 0 and "updated 1 case in greet.nika-test.yaml" in out, out
    text = path.read_text()
    assert "# a comment that --update keeps" in text and "Hola" not in text
    assert text.count("Bonjour Bob!") == 2
    assert _nika(capsys)[0] == 0


def test_update_writes_a_full_expectation_for_a_new_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _project(tmp_path, monkeypatch, "workflow: greet.nika.yaml\ncases:\n  new-case:\n    vars: { name: Ada }\n")
    rc, out = _nika(capsys, "--update")
    assert rc == 0 and "updated 1 case" in out
    from ruamel.yaml import YAML

    expect = YAML(typ="safe").load(path.read_text())["cases"]["new-case"]["expect"]
    assert expect == {
        "status": "success",
        "tasks": {"hello": "success", "shout": "success"},
        "outputs": {"said": "Hi Ada!"},
    }


def test_junit_xml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _project(tmp_path, monkeypatch, PASSING.replace('said: "Hi Ada!"', 'said: "nope"'))
    rc, _ = _nika(capsys, "--junit-xml", "report.xml")
    assert rc == 1
    root = ET.parse(tmp_path / "report.xml").getroot()
    assert root.tag == "testsuites" and root.get("tests") == "2" and root.get("failures") == "1"
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["echo"].find("failure") is not None and cases["scripted"].find("failure") is None
    assert "outputs.said" in cases["echo"].find("failure").get("message")


AGENT = """\
nika: v1
workflow:
  id: agent
model: mock/echo
permits:
  tools: ["nika:read", "nika:done"]
  fs: { read: ["./docs/**"] }
tasks:
  a:
    agent:
      prompt: "read it"
      tools: ["nika:read", "nika:done"]
outputs:
  answer: ${{ tasks.a.output }}
"""


def test_tool_results_answer_an_agent_and_permits_still_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.nika.yaml").write_text(AGENT)
    (tmp_path / "agent.nika-test.yaml").write_text(
        textwrap.dedent(
            """\
            workflow: agent.nika.yaml
            cases:
              mocked-read:
                replies:
                  a:
                    - tool_calls: [{ name: "nika:read", arguments: { path: "./docs/a.md" } }]
                    - tool_calls: [{ name: "nika:done", arguments: { result: "saw it" } }]
                tools:
                  "nika:read": [{ output: "contents" }]
                expect:
                  outputs: { answer: "saw it" }
              exhausted:
                replies:
                  a:
                    - tool_calls: [{ name: "nika:read", arguments: { path: "./docs/a.md" } }]
                    - tool_calls: [{ name: "nika:read", arguments: { path: "./docs/b.md" } }]
                    - tool_calls: [{ name: "nika:done", arguments: { result: "done" } }]
                tools:
                  "nika:read": [{ output: "one" }]
                expect:
                  outputs: { answer: "done" }
            """
        )
    )
    rc, out = _nika(capsys, "-v")
    assert "::mocked-read PASSED" in out and "::exhausted PASSED" in out, out  # the loop saw the error, went on
    assert rc == 0
    (tmp_path / "agent.nika-test.yaml").write_text(
        "workflow: agent.nika.yaml\ncases:\n  outside-the-whitelist:\n    replies:\n"
        '      a: [{ tool_calls: [{ name: "nika:grep", arguments: { pattern: "x", path: "." } }] }]\n'
        '    tools:\n      "nika:grep": { output: [] }\n'
        "    expect:\n      status: failure\n      tasks: { a: { status: failure, error: NIKA-SEC-002 } }\n"
    )
    rc, out = _nika(capsys)
    assert rc == 0, out  # a mocked result does not widen the agent's `tools:`: the call is refused first


def test_an_engine_bug_is_exit_3_and_the_other_files_still_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from nika.testing import harness

    _project(tmp_path, monkeypatch, PASSING)
    real = harness.TestRun.execute

    async def flaky(self: harness.TestRun) -> object:
        if self.case.name == "echo":
            raise RuntimeError("boom")
        return await real(self)

    monkeypatch.setattr(harness.TestRun, "execute", flaky)
    rc, out = _nika(capsys, "-v")
    assert rc == 3
    assert "::echo ERROR" in out and "internal error (NIKA-IMPL-001) running the case: RuntimeError: boom" in out
    assert "::scripted PASSED" in out
