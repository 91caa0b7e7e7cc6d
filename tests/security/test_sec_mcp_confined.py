"""`nika mcp serve` reads only regular workflow files inside its tree.

The client is a coding agent, the component most exposed to prompt injection. Every path a tool
is given is judged by the one path-under-roots judge (:func:`checker.core.paths.under_roots`):
resolved from the server's working directory, symlinks followed, inside the server's tree and
inside the roots the client announced (which can only narrow it). What is read goes through the
bounded reader (regular files only); `fix` returns text only of a file it parsed as a workflow.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from checker.core.paths import narrow_roots, under_roots

GOOD = "nika: v1\nworkflow: {id: ok}\ntasks:\n  a:\n    invoke: {tool: 'nika:log', args: {message: hi}}\n"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "flow.nika.yaml").write_text(GOOD)
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "notes.nika.yaml").write_text("nika: v1\nworkflow: {id: private-token-1234}\ntasks: {}\n")
    (outside / "id_key").write_text("-----BEGIN KEY-----\nsecret-material\n")
    (root / "escape.nika.yaml").symlink_to(outside / "notes.nika.yaml")
    (root / "linkdir").symlink_to(outside)
    monkeypatch.chdir(root)
    return root


def _tools():
    from nika.commands import mcp_tools

    return mcp_tools


@pytest.mark.parametrize(
    "path",
    ["../private/notes.nika.yaml", "escape.nika.yaml", "linkdir/notes.nika.yaml", "{outside}/notes.nika.yaml"],
)
@pytest.mark.parametrize("tool", ["check", "fix", "nika_inspect", "run_dry"])
def test_no_tool_reads_outside_the_tree(tree: Path, tool: str, path: str) -> None:
    t = _tools()
    path = path.format(outside=tree.parent / "private")
    with pytest.raises(t.ToolError) as exc:
        getattr(t, tool)(None, path)
    assert "outside" in str(exc.value) and "private-token" not in str(exc.value)


def test_a_file_that_is_not_a_workflow_is_never_returned(tree: Path) -> None:
    t = _tools()
    (tree / "secret.nika.yaml").write_text("just: text\nkey: hunter2-do-not-return\n")
    with pytest.raises(t.ToolError):
        out = t.fix(None, "secret.nika.yaml")
        assert "hunter2" not in str(out)
    # a name that is not a workflow's is not read at all
    (tree / "id_key").write_text("secret-material")
    for tool in ("check", "fix"):
        with pytest.raises(t.ToolError) as exc:
            getattr(t, tool)(None, "id_key")
        assert "secret-material" not in str(exc.value)


def test_a_fifo_is_refused_without_blocking(tree: Path) -> None:
    t = _tools()
    os.mkfifo(tree / "pipe.nika.yaml")
    done: list[BaseException] = []

    def call() -> None:
        try:
            t.check(None, "pipe.nika.yaml")
        except BaseException as exc:
            done.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive() and done and isinstance(done[0], t.ToolError)
    assert "regular file" in str(done[0])


def test_roots_a_client_announces_only_narrow(tree: Path) -> None:
    base = (str(tree),)
    inner = str(tree / "sub")
    os.mkdir(inner)
    assert narrow_roots(base, None) == (str(tree.resolve()),)
    assert narrow_roots(base, (inner,)) == (os.path.realpath(inner),)
    assert narrow_roots(base, (str(tree.parent),)) == (str(tree.resolve()),)  # wider: the tree itself
    assert narrow_roots(base, ("/",)) == (str(tree.resolve()),)
    assert narrow_roots(base, (str(tree.parent / "private"),)) == ()  # beside: nothing
    t = _tools()
    with pytest.raises(t.ToolError):
        t.check(None, "flow.nika.yaml", roots=(inner,))
    assert t.check(None, "flow.nika.yaml")["reports"]


def test_under_roots_judges_the_resolved_path(tree: Path) -> None:
    root = (str(tree),)
    assert under_roots(str(tree / "flow.nika.yaml"), root)
    assert not under_roots(str(tree / "escape.nika.yaml"), root)
    assert not under_roots(str(tree / "linkdir" / "id_key"), root)
    assert not under_roots(str(tree) + "-evil/x", root)  # a sibling sharing the prefix
    assert not under_roots("relative/path", root) and not under_roots(str(tree / "a\x00b"), root)
    assert under_roots(str(tree), root) and under_roots(str(tree / "deep" / "x"), root)
    assert under_roots("/etc/hostname", ("/",))  # the root folder itself
    assert not under_roots(str(tree / "flow.nika.yaml"), ()) and not under_roots("", root)


def test_read_only_tools_say_so() -> None:
    pytest.importorskip("mcp")
    from nika.commands import mcp_serve

    ANNOTATIONS = mcp_serve.ANNOTATIONS

    read_only = {k for k, v in ANNOTATIONS.items() if v.read_only_hint}
    assert read_only == {"check", "explain", "nika_inspect", "schema", "run_dry"}
    assert ANNOTATIONS["fix"].read_only_hint is False and ANNOTATIONS["fix"].destructive_hint is True


def test_over_stdio_the_client_roots_narrow_the_tree(tree: Path) -> None:
    """A real server process: the roots the client announces narrow what a path may name."""
    pytest.importorskip("mcp")
    import asyncio
    import sys

    from mcp import Client, StdioServerParameters, types

    sub = tree / "sub"
    sub.mkdir()
    (sub / "inner.nika.yaml").write_text(GOOD)
    root = Path(__file__).resolve().parents[2]

    async def roots(_ctx: object) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=sub.as_uri())])

    async def go() -> tuple[bool, bool]:
        env = {"PYTHONPATH": str(root), "PATH": os.environ.get("PATH", "")}
        target = StdioServerParameters(
            command=sys.executable, args=["-m", "nika", "mcp", "serve"], env=env, cwd=str(tree)
        )
        async with Client(target, mode="legacy", read_timeout_seconds=60, list_roots_callback=roots) as client:
            outer = await client.call_tool("check", {"path": "flow.nika.yaml"})
            inner = await client.call_tool("check", {"path": "sub/inner.nika.yaml"})
        return outer.is_error, inner.is_error

    outer_refused, inner_refused = asyncio.run(go())
    assert outer_refused and not inner_refused
