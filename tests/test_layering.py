"""The layering of the packages is a contract (``[tool.importlinter]`` in ``pyproject.toml``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold() -> None:
    """``lint-imports`` keeps every layer above the ones it may use (issue 17's contract)."""
    code = "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "broken" not in proc.stdout.lower() or "0 broken" in proc.stdout.lower(), proc.stdout


# Import circles still to be broken (none left); each is closed by moving one misplaced definition, and the
# test fails when one of them is gone, so this list can only shrink.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def test_no_import_circles() -> None:
    """No module imports, directly or through others, a module that imports it (imports made
    only for type checking excluded: they never run)."""
    import grimp

    graph = grimp.build_graph("checker", "nika", "nika_lsp", "runtime", exclude_type_checking_imports=True)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    circles = {frozenset(c) for c in _strongly_connected(edges) if len(c) > 1}
    assert circles - KNOWN_CIRCLES == set(), sorted(sorted(c) for c in circles - KNOWN_CIRCLES)
    assert KNOWN_CIRCLES - circles == set(), f"broken circles to drop from KNOWN_CIRCLES: {KNOWN_CIRCLES - circles}"


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
