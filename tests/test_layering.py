"""The layering of the packages is a contract (``[tool.importlinter]`` in ``pyproject.toml``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("checker", "nika", "nika_dap", "nika_lsp", "runtime")
LINT = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"


def test_import_contracts_hold() -> None:
    """``lint-imports`` keeps every layer above the ones it may use (issue 17's contract)."""
    proc = subprocess.run([sys.executable, "-c", LINT], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "broken" not in proc.stdout.lower() or "0 broken" in proc.stdout.lower(), proc.stdout


# Import circles still to be broken (none left); each is closed by moving one misplaced definition, and the
# test fails when one of them is gone, so this list can only shrink.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def test_no_import_circles() -> None:
    """No module imports, directly or through others, a module that imports it (imports made
    only for type checking excluded: they never run)."""
    import grimp

    graph = grimp.build_graph("checker", "nika", "nika_dap", "nika_lsp", "runtime", exclude_type_checking_imports=True)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    circles = {frozenset(c) for c in _strongly_connected(edges) if len(c) > 1}
    assert circles - KNOWN_CIRCLES == set(), sorted(sorted(c) for c in circles - KNOWN_CIRCLES)
    assert KNOWN_CIRCLES - circles == set(), f"broken circles to drop from KNOWN_CIRCLES: {KNOWN_CIRCLES - circles}"


# Inside these packages not even an import made only for type checking closes a circle: a helper
# that reads part of an object above it types it with a narrow Protocol of what it reads.
NO_CIRCLES_AT_ALL = ("runtime", "nika", "nika_dap", "nika_lsp")

_GRAPH = """
import json, sys
import grimp
g = grimp.build_graph(*sys.argv[1:], exclude_type_checking_imports=False, cache_dir=None)
print(json.dumps({m: sorted(g.find_modules_directly_imported_by(m)) for m in g.modules}))
"""


def _graph_with_type_checking_imports(root: Path, *packages: str) -> dict[str, set[str]]:
    """grimp's module graph of ``packages`` as found under ``root``, ``TYPE_CHECKING`` imports
    included (built in a child process whose first path entry is ``root``)."""
    proc = subprocess.run(
        [sys.executable, "-c", _GRAPH, *packages], cwd=root, capture_output=True, text=True, check=True
    )
    return {m: set(ds) for m, ds in json.loads(proc.stdout).items()}


def _circles_inside(edges: dict[str, set[str]], packages: tuple[str, ...]) -> list[list[str]]:
    inside = {
        m: {d for d in ds if d.split(".")[0] in packages} for m, ds in edges.items() if m.split(".")[0] in packages
    }
    return sorted(sorted(c) for c in _strongly_connected(inside) if len(c) > 1)


def test_no_import_circles_counting_type_checking_imports() -> None:
    """No module of ``runtime``, ``nika`` or ``nika_lsp`` imports, even only for type checking,
    a module that imports it back through others (0 circles, 0 arrows back up)."""
    edges = _graph_with_type_checking_imports(ROOT, *PACKAGES)
    assert "runtime.engine.run" in edges and "nika_lsp.server" in edges  # the graph is the real one
    assert _circles_inside(edges, NO_CIRCLES_AT_ALL) == []


# One planted import per layer contract: a module low in its package imports one above it.
PLANTS = {
    "Runtime stages": ("runtime/errors.py", "import runtime.verbs"),
    "CLI stages": ("nika/heap.py", "import nika.commands"),
    "Language server stages": ("nika_lsp/convert.py", "import nika_lsp.server"),
    "Debug adapter stages": ("nika_dap/views.py", "import nika_dap.session"),
}


def _copy_tree(dest: Path) -> None:
    for pkg in PACKAGES:
        shutil.copytree(ROOT / pkg, dest / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")


def test_each_layer_contract_fails_on_a_planted_forbidden_import(tmp_path: Path) -> None:
    """The contracts are not vacuous: in a copy of the tree with one forbidden import planted per
    contract, ``lint-imports`` reports every one of them broken, and nothing else; the same planted
    imports close circles the circle test sees."""
    _copy_tree(tmp_path)
    for path, line in PLANTS.values():
        with open(tmp_path / path, "a", encoding="utf-8") as f:
            f.write(f"\n{line}  # planted by tests/test_layering.py\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-c", LINT, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    out = " ".join(proc.stdout.split())  # the contract names wrap at 80 columns
    assert proc.returncode != 0, proc.stdout
    for name, (path, line) in PLANTS.items():
        assert f"{name}" in out and "BROKEN" in out, (name, proc.stdout)
        planted = path.removesuffix(".py").replace("/", ".")
        assert f"{planted} -> {line.split()[1]}" in out, (name, proc.stdout)
    assert f"{len(PLANTS)} broken" in out, proc.stdout
    assert _circles_inside(_graph_with_type_checking_imports(tmp_path, *PACKAGES), NO_CIRCLES_AT_ALL)


def _strongly_connected(edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's algorithm, iteratively (the graph has a few hundred modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[set[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.add(w)
                    if w == node:
                        break
                out.append(comp)
    return out
