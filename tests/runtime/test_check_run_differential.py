"""Differential: what ``nika check`` decides on a literal, ``nika run`` decides the same way.

Hypothesis draws a small ``permits:`` block and one effectful task whose target is a literal
(a path for ``nika:read``/``nika:write``, an argv ``command:``, a ``shell:`` line, a tool id),
compiles it, and then asks the run-time adapter (:class:`runtime.guard.permits.Boundary` plus the exec
blocklist the exec verb calls) about the same literal. Asserted, per case:

(a) a static refusal (NIKA-SEC-004 / NIKA-SEC-001 on the task) is a run refusal with the same code;
(b) the run never refuses with a code the checker could have raised on that literal;
(c) an effect the run admits had no static refusal.

Seeded (``derandomize``) so CI sees the same cases every run; a hundred per plane keeps it
within a few seconds. Spec: 01 §permits, 02 §exec, 10 §effect vocabulary (check ≡ run).
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checker.contracts.blocklist import judge_shell, judge_words
from checker.engine.pipeline import compile_text
from runtime.errors import TaskError
from runtime.guard.permits import Boundary

SETTINGS = settings(
    max_examples=100,  # a compile per case dominates: 100 per plane
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
STATIC = {"NIKA-SEC-004", "NIKA-SEC-001"}
REST = "fs: { read: ['./**'], write: ['./**'] }, net: { http: [example.com] }"

# A grant climbing out with `..` is left out: the static matcher judges it lexically (`../**`
# does not cover `./out`), the run on the resolved folder (it does) — a known divergence the
# glob matcher's owner decides (issue 20), reported rather than hidden in the adapter.
seg = st.sampled_from(["out", "data", "src", "a", "b", "x.json", ".", "", "?.json", "*.json", "**"])
path_text = st.lists(seg, min_size=1, max_size=4).map(lambda xs: "./" + "/".join(xs))
literal_path = st.lists(st.sampled_from(["out", "data", "src", "a", "x.json", "..", "."]), min_size=1, max_size=4).map(
    "/".join
)
program = st.sampled_from(["git", "echo", "./bin/git", "/usr/bin/git", "ls", "rm", "env", "sudo", "busybox"])
arg = st.sampled_from(["-rf", "-c", "/", "/.", "/tmp/x", "./build", "log", "x", "--exec", "~", "-delete"])
shell_word = st.sampled_from(
    ["rm -rf", "echo", "ls", "sudo", "env", "find", "/", "/.", "./out", ">", "/etc/passwd", "|", "sh", "curl x", ";"]
)
tool = st.sampled_from(["nika:jq", "nika:read", "nika:write", "nika:log", "nika:fetch"])
tool_grant = st.sampled_from(["nika:*", "nika:read", "nika:jq", "!nika:jq", "nika:**", "mcp:*"])


def _compile(tmp: Path, permits: str, body: str) -> tuple[set[str], object]:
    src = f"nika: v1\nworkflow: {{ id: d }}\n{permits}\ntasks:\n  t:\n{body}"
    compiled = compile_text(src, str(tmp / "d.nika.yaml"), str(tmp))
    codes = {d.code for d in compiled.diagnostics if d.is_error}
    return codes, compiled


def _run_verdict(fn) -> str | None:
    try:
        fn()
    except TaskError as exc:
        return exc.code
    return None


def _agree(static: set[str], dynamic: str | None) -> None:
    refused_statically = static & STATIC
    if refused_statically:
        assert dynamic in refused_statically, (static, dynamic)  # (a)
    else:
        assert dynamic is None, (static, dynamic)  # (b) and (c)


@SETTINGS
@given(grants=st.lists(path_text, min_size=0, max_size=3), path=literal_path, write=st.booleans())
def test_fs_literals(tmp_path_factory, grants, path, write):
    tmp = tmp_path_factory.mktemp("fs")
    mode = "write" if write else "read"
    permits = f"permits: {{ fs: {{ {mode}: {json.dumps(grants)} }}, tools: [nika:read, nika:write] }}"
    call = "nika:write" if write else "nika:read"
    extra = ', content: "x"' if write else ""
    codes, compiled = _compile(
        tmp, permits, f"    invoke: {{ tool: {call}, args: {{ path: {json.dumps(path)}{extra} }} }}\n"
    )
    if compiled.workflow is None or codes - STATIC:
        return  # not a permits question (a grant the checker refuses as malformed, …)
    b = Boundary(compiled.workflow.permits, tmp)
    _agree(codes, _run_verdict(lambda: b.resolve("t", path, mode)))


@SETTINGS
@given(
    grant=st.one_of(st.just(True), st.lists(program, min_size=1, max_size=3)),
    argv=st.tuples(program, st.lists(arg, max_size=3)),
)
def test_exec_argv_literals(tmp_path_factory, grant, argv):
    tmp = tmp_path_factory.mktemp("ex")
    words = [argv[0], *argv[1]]
    codes, compiled = _compile(
        tmp, f"permits: {{ exec: {json.dumps(grant)} }}", f"    exec: {{ command: {json.dumps(words)} }}\n"
    )
    if compiled.workflow is None or codes - STATIC:
        return
    b = Boundary(compiled.workflow.permits, tmp)

    def at_run() -> None:
        b.check_exec("t", words[0], shell=False)
        from checker.contracts.argv import Word

        b.check_argv("t", [Word(w, False, w) for w in words])  # every word is the author's literal
        why = judge_words(words)
        if why is not None:
            raise TaskError("NIKA-SEC-001", why)

    _agree(codes, _run_verdict(at_run))


@SETTINGS
@given(words=st.lists(shell_word, min_size=1, max_size=6))
def test_shell_literals(tmp_path_factory, words):
    tmp = tmp_path_factory.mktemp("sh")
    line = " ".join(words)
    codes, compiled = _compile(tmp, "permits: { exec: true }", f"    exec: {{ shell: {json.dumps(line)} }}\n")
    if compiled.workflow is None or codes - STATIC:
        return
    b = Boundary(compiled.workflow.permits, tmp)

    def at_run() -> None:
        b.check_exec("t", "/bin/sh", shell=True)
        why = judge_shell(line)
        if why is not None:
            raise TaskError("NIKA-SEC-001", why)

    _agree(codes, _run_verdict(at_run))


@SETTINGS
@given(grants=st.one_of(st.none(), st.lists(tool_grant, max_size=3)), tool_id=tool)
def test_tool_literals(tmp_path_factory, grants, tool_id):
    tmp = tmp_path_factory.mktemp("tl")
    from checker.contracts import tables as contracts

    permits = "" if grants is None else f"permits: {{ tools: {json.dumps(grants)}, {REST} }}"
    args = {
        "nika:jq": 'input: 1, expression: "."',
        "nika:read": 'path: "./a"',
        "nika:write": 'path: "./a", content: "x"',
        "nika:log": 'message: "m"',
        "nika:fetch": 'url: "https://example.com/"',
    }[tool_id]
    codes, compiled = _compile(tmp, permits, f"    invoke: {{ tool: {tool_id}, args: {{ {args} }} }}\n")
    if compiled.workflow is None or codes - STATIC - {"NIKA-AUTH-006"}:
        return
    if "NIKA-AUTH-006" in codes:
        codes = (codes - {"NIKA-AUTH-006"}) | {"NIKA-SEC-004"}  # the absent-block finding: run says SEC-004
    c = contracts.contract(tool_id)
    b = Boundary(compiled.workflow.permits, tmp)
    _agree(codes, _run_verdict(lambda: b.check_tool("t", tool_id, c.effects if c is not None else ())))
