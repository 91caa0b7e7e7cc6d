"""Argv re-entry is judged by default-deny on the shape of an untrusted word (spec 10 §permit
parameterization, NEP-0004), never by a list of bad options.

Under a program list, an untrusted word that starts with `-` is refused in any position after
argv[0] unless an authored `--` comes first, the permit lists it, or the author wrote the option
name (`--name=${{ … }}`); an untrusted word where a dispatching program reads what to run (a
subcommand, an interpreter's script, a wrapper's program) is refused too. The tests use options
no list in the engine names: the verdict must not depend on one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from checker.contracts.argv import Word, judge_argv
from checker.engine.pipeline import compile_text
from checker.model.workflow import Regate


def _words(*spec: tuple[str | None, bool] | str) -> list[Word]:
    out = []
    for s in spec:
        if isinstance(s, str):
            out.append(Word(s, False, s))
        else:
            out.append(Word(s[0], s[1], ""))
    return out


# -- the judge, on plain data ------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        # options that make a program run or load something, none of them in any engine table
        ["sqlite3", "db.sqlite", ("-cmd", True), ".shell touch x"],
        ["zip", "out.zip", "in.txt", ("--unzip-command=touch x", True)],
        ["tcpdump", ("-z", True), "touch-x"],
        ["mysql", ("--init-command=SELECT 1", True)],
        ["curl", ("-K", True), "evil.conf"],
        ["hg", "log", ("--config=ui.pager=x", True)],
        ["perl", "-w", "script.pl", ("-Mevil", True)],
        # a short option bundle and an attached value
        ["grep", ("-rfevil", True), "."],
    ],
)
def test_an_untrusted_option_like_word_is_refused(argv: list) -> None:
    words = _words(*argv)
    got = judge_argv(words, (words[0].text,))
    untrusted = [i for i, w in enumerate(words) if w.untrusted]
    assert [f.index for f in got] == untrusted and all(f.kind == "option" for f in got)


def test_an_authored_double_dash_makes_it_an_operand() -> None:
    words = _words("sqlite3", "--", ("-cmd", True))
    assert judge_argv(words, ("sqlite3",)) == []
    # a `--` that came from the untrusted side ends nothing
    words = _words("sqlite3", ("--", True), ("-cmd", True))
    assert [f.index for f in judge_argv(words, ("sqlite3",))] == [1, 2]


def test_a_listed_option_is_covered_and_its_value_form_too() -> None:
    words = _words("curl", ("--compressed", True), ("--max-time=5", True))
    assert judge_argv(words, ("curl", "--compressed", "--max-time")) == []
    assert [f.index for f in judge_argv(words, ("curl", "--compressed"))] == [2]


def test_an_authored_option_name_carries_an_untrusted_value() -> None:
    named = [Word("zip", False, "zip"), Word("--comment=-TT evil", True, "--comment=")]
    assert judge_argv(named, ("zip",)) == []
    # a single dash is never enough: `-v=…` can be read as bundled short flags
    short = [Word("zip", False, "zip"), Word("-v=ec", True, "-v=")]
    assert [f.index for f in judge_argv(short, ("zip",))] == [1]
    # the author wrote only the dashes: the untrusted side chose the option
    dashes = [Word("zip", False, "zip"), Word("--unzip-command=x", True, "--")]
    assert [f.index for f in judge_argv(dashes, ("zip",))] == [1]


@pytest.mark.parametrize(
    ("argv", "kind"),
    [
        (["cargo", ("evilplugin", True)], "subcommand"),  # cargo-<name> on PATH
        (["helm", ("plugin-x", True)], "subcommand"),
        (["gh", "--repo", "o/r", ("alias-x", True)], "subcommand"),  # after an option and its value
        (["lua", ("evil.lua", True)], "script"),
        (["Rscript", ("evil.R", True)], "script"),
        (["python3.12", ("evil.py", True)], "script"),
        (["flock", "/tmp/l", ("touch", True)], "program"),  # a wrapper runs its words
        (["/usr/bin/nohup", ("anything", True)], "program"),
    ],
)
def test_the_dispatch_position_of_a_dispatching_program_is_refused(argv: list, kind: str) -> None:
    words = _words(*argv)
    got = judge_argv(words, (words[0].text,))
    assert [(f.index, f.kind) for f in got] == [(len(argv) - 1, kind)]


def test_past_the_dispatch_position_an_operand_passes() -> None:
    assert (
        judge_argv(_words("cargo", "build", "--release", ("my-crate", True)), ("cargo",))
        == [
            # `--release` is authored; the crate name is an operand of `build`, not a subcommand
        ]
    )
    assert judge_argv(_words("lua", "main.lua", ("data.txt", True)), ("lua",)) == []
    # a listed subcommand is covered
    assert judge_argv(_words("cargo", ("fmt", True)), ("cargo", "fmt")) == []


def test_a_word_known_only_at_run_is_deferred_when_it_could_reenter() -> None:
    unknown = Word(None, True, "")
    got = judge_argv([Word("sqlite3", False, "sqlite3"), Word("db", False, "db"), unknown], ("sqlite3",))
    assert [(f.index, f.deferred) for f in got] == [(2, True)]
    # an authored leading text that is not a dash cannot become an option
    tail = Word(None, True, "report-")
    assert judge_argv([Word("sqlite3", False, "sqlite3"), tail], ("sqlite3",)) == []
    # trusted words are the author's
    assert judge_argv([Word("sqlite3", False, "sqlite3"), Word("-cmd", False, "")], ("sqlite3",)) == []


# -- check: resolvable refused, unresolvable deferred and listed, file stays valid -------------

_WF = """\
nika: v1
workflow: {{ id: argv }}
permits: {{ exec: ["sqlite3"] }}
inputs:
  extra: {{ type: string{default} }}
tasks:
  q:
    exec: {{ command: ["sqlite3", "db.sqlite", "${{{{ inputs.extra }}}}"] }}
"""


def test_check_refuses_a_resolvable_option_and_defers_the_rest() -> None:
    refused = compile_text(_WF.format(default=', default: "-cmd"'), "wf.nika.yaml", ".")
    assert [d.code for d in refused.diagnostics if d.is_error] == ["NIKA-AUTH-008"]
    deferred = compile_text(_WF.format(default=""), "wf.nika.yaml", ".")
    # deferred: no finding at all (the file is clean); the certificate lists the re-gate
    assert deferred.diagnostics == ()
    assert deferred.regates == (Regate("q", "exec", "argv", "command[2]", "inputs.extra"),)
    assert refused.regates == ()


# -- run: the resolved word is refused before the process starts --------------------------------


def _tool(tmp_path: Path) -> Path:
    """A program that runs the command its `--hook=` option names (as many real programs do)."""
    tool = tmp_path / "bin" / "hooky"
    tool.parent.mkdir()
    tool.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do\n'
        '  case "$a" in --) break ;; --hook=*) sh -c "${a#--hook=}" ;; esac\n'
        "done\n"
        "echo ran\n"
    )
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return tool


def test_run_refuses_the_resolved_option_and_the_marker_stays_absent(run, tmp_path: Path) -> None:
    tool = _tool(tmp_path)
    marker = tmp_path / "marker"
    text = f"""\
        nika: v1
        workflow: {{ id: argv-run }}
        permits: {{ exec: ["{tool}"] }}
        inputs:
          opt: {{ type: string }}
        tasks:
          bare:
            exec: {{ command: ["{tool}", "${{{{ inputs.opt }}}}"] }}
          ended:
            exec: {{ command: ["{tool}", "--", "${{{{ inputs.opt }}}}"] }}
        """
    result = run(text, {"opt": f"--hook=touch {marker}"})
    bare, ended = result.tasks["bare"], result.tasks["ended"]
    assert bare.status == "failure" and bare.error is not None and bare.error["code"] == "NIKA-SEC-004"
    assert "command[1]" in bare.error["message"]
    assert ended.status == "success" and "ran" in (ended.output or "")
    assert not marker.exists()
    assert os.path.exists(tool)


def test_an_interpreter_option_that_names_the_script_closes_the_position() -> None:
    """`sh -c SCRIPT ARG…`: an untrusted word after the authored script is an argument ($0…),
    the safe way to hand a value to a script; the script itself is never untrusted."""
    assert judge_argv(_words("dash", "-c", 'echo "$0"', ("anything", True)), ("dash",)) == []
    assert [f.kind for f in judge_argv(_words("dash", "-c", ("echo pwned", True)), ("dash",))] == ["script"]
    assert judge_argv(_words("pypy", "-m", "json.tool", ("in.json", True)), ("pypy",)) == []
    assert [f.index for f in judge_argv(_words("pypy", "-m", ("evilmod", True)), ("pypy",))] == [2]
    # an option whose arity the table does not know keeps the position open (fail-closed)
    assert [f.index for f in judge_argv(_words("tclsh", "-encoding", "utf-8", ("x.tcl", True)), ("tclsh",))] == [3]
