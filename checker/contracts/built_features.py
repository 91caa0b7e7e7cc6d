"""What this build's runtime implements, read as data from the runtime's own source.

The checker never imports the runtime (it is pure, and `nika check` must not load it). Yet a
workflow that calls a builtin the runtime does not have yet fails every run with NIKA-IMPL-002,
and `nika check` should say so ahead. So the registry of implemented builtins is read from the
source files with :mod:`ast`, never executed: every ``@builtin(X)`` decorator under
``runtime/builtins/`` (``X`` a string literal, or a module constant holding one), the tools the
agent loop answers itself (``LOOP_TOOLS`` in ``runtime/agent/catalogue.py``), the secret sources the
engine resolves (``SECRET_SOURCES`` in ``runtime/engine/scope.py``) and the providers whose
adapter sends ``infer.thinking:`` (the keys of ``THINKING`` in ``runtime/providers/registry.py``).
When a builtin is built, its decorator appears and the note goes away by itself; tests/runtime/test_built_features.py
keeps this reading equal to the live registry. What no registry shows (registry workflows, declared
determinism, `nika:inspect`'s run state…) is the declared list ``runtime/unbuilt.toml``, read here as
data too: with the registries it is the one list of what the build lacks.

Without the runtime's sources (a checker-only install) nothing is known to be missing, and
nothing is reported. The reading is kept in :mod:`checker.core.static_cache`, keyed by the size and
modification time of every file it read (and of this module), so a warm start reads no source.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from checker.core import static_cache
from checker.core.records import record

if TYPE_CHECKING:
    import ast

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"


@record
class Unbuilt:
    """One entry of ``runtime/unbuilt.toml``: a feature this build does not implement yet."""

    id: str
    what: str
    until: str | None = None


@record
class Built:
    """The builtins (``nika:…`` ids) and secret sources this build's runtime implements, the
    providers that take ``thinking:`` (``None``: not known, nothing is warned), the ``mock/``
    models and ``nika:fetch`` extract modes it answers, and the declared list of what it lacks."""

    tools: frozenset[str]
    secret_sources: frozenset[str]
    thinking_providers: frozenset[str] | None = None
    mock_models: frozenset[str] | None = None
    extract_modes: frozenset[str] | None = None
    unbuilt: tuple[Unbuilt, ...] = ()

    def lacks(self, feature: str) -> Unbuilt | None:
        """The declared entry of ``feature`` when this build lacks it."""
        return next((u for u in self.unbuilt if u.id == feature), None)


# compiled on a cache miss only (re's own cache keeps them): a warm start never needs them
_PIECE = r"^(?:@builtin\(.*|[A-Z_][A-Z0-9_]*(?:\s*,\s*[A-Z_][A-Z0-9_]*)*\s*(?::[^=\n]*)?=[^=].*)$"
_CLOSER = r"^[)\]}].*$"


def _module(path: Path) -> ast.Module | None:
    """The module's top-level constant assignments and ``@builtin`` decorators, parsed alone.

    Only those statements are parsed (a whole-module parse of the runtime costs a tenth of a
    second on every `nika check`, a Python loop over its lines a fiftieth): each upper-case
    assignment at column 0 (through its closing bracket when its value opens one on that line)
    and each ``@builtin(…)`` line with a stub function under it, found by one regular
    expression over the text. The test against the live registry keeps this reading honest."""
    import ast

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    body: list[ast.stmt] = []
    for m in re.finditer(_PIECE, text, re.M):
        line = m.group(0)
        if line.startswith("@builtin("):
            piece = line + "\nasync def _(): pass"
        elif line.rstrip().endswith(("(", "[", "{")):  # a bracketed value over several lines
            close = re.compile(_CLOSER, re.M).search(text, m.end())
            piece = text[m.start() : close.end()] if close is not None else line
        else:
            piece = line
        try:
            body += ast.parse(piece, str(path)).body
        except (SyntaxError, ValueError):
            continue  # a statement this reading does not need (a string holding brackets)
    return ast.Module(body=body, type_ignores=[])


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` and ``A, B = "a", "b"`` assignments."""
    import ast

    out: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for t in node.targets:
            pairs: list[tuple[ast.expr, ast.expr]] = [(t, node.value)]
            if isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple) and len(t.elts) == len(node.value.elts):
                pairs = list(zip(t.elts, node.value.elts, strict=True))
            for name, value in pairs:
                if isinstance(name, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
                    out[name.id] = value.value
    return out


def _text(node: ast.expr, consts: dict[str, str]) -> str | None:
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    return None


def _registered(tree: ast.Module) -> set[str]:
    import ast

    consts = _constants(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Name) and dec.func.id == "builtin" and dec.args:
                name = _text(dec.args[0], consts)
                if name is not None:
                    out.add(name)
    return out


def _literal_set(tree: ast.Module, name: str) -> set[str]:
    """The strings of a module-level ``name = frozenset({...})`` (or a set/tuple/list literal)."""
    import ast

    consts = _constants(tree)
    for node in tree.body:
        targets = [node.target] if isinstance(node, ast.AnnAssign) else getattr(node, "targets", [])
        if not any(isinstance(t, ast.Name) and t.id == name for t in targets) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.Call) and value.args:
            value = value.args[0]
        if isinstance(value, (ast.Set, ast.Tuple, ast.List)):
            return {s for e in value.elts if (s := _text(e, consts)) is not None}
        if isinstance(value, ast.Dict):  # a mapping's keys
            return {s for e in value.keys if e is not None and (s := _text(e, consts)) is not None}
    return set()


# the runtime files read besides the builtins (their constants), and the declared list
_READ = (
    "agent/catalogue.py",
    "engine/scope.py",
    "providers/registry.py",
    "providers/mock.py",
    "providers/mock_configured.py",
    "extract/__init__.py",
    "unbuilt.toml",
)


@cache
def built(root: Path = RUNTIME) -> Built | None:
    """What the runtime under ``root`` implements, or ``None`` when its sources are not there."""
    builtins_dir = root / "builtins"
    if not builtins_dir.is_dir():
        return None
    files = sorted(builtins_dir.glob("*.py"))
    read = [*files, *(root / f for f in _READ)]
    key = static_cache.stamp([__file__, *map(str, read)])
    name = static_cache.named("built-features", str(root))
    return static_cache.cached(name, key, lambda: _read(root, files), dump=_dump, undump=_undump)


def _dump(b: Built | None) -> Any:
    if b is None:
        return None

    def opt(x: frozenset[str] | None) -> list[str] | None:
        return None if x is None else sorted(x)

    unbuilt = [[u.id, u.what, u.until] for u in b.unbuilt]
    return (sorted(b.tools), sorted(b.secret_sources), opt(b.thinking_providers), opt(b.mock_models),
            opt(b.extract_modes), unbuilt)  # fmt: skip


def _undump(data: Any) -> Built:
    tools, sources, thinking, mock, modes, unbuilt = data

    def opt(x: list[str] | None) -> frozenset[str] | None:
        return None if x is None else frozenset(x)

    return Built(
        frozenset(tools), frozenset(sources), opt(thinking), opt(mock), opt(modes),
        tuple(Unbuilt(i, w, u) for i, w, u in unbuilt),
    )  # fmt: skip


def _read(root: Path, files: list[Path]) -> Built | None:
    tools: set[str] = set()
    for path in files:
        tree = _module(path)
        if tree is not None:
            tools |= _registered(tree)
    agent = _module(root / "agent" / "catalogue.py")
    if agent is not None:
        tools |= _literal_set(agent, "LOOP_TOOLS")
    scope = _module(root / "engine" / "scope.py")
    sources = _literal_set(scope, "SECRET_SOURCES") if scope is not None else set()
    registry = _module(root / "providers" / "registry.py")
    thinking = frozenset(_literal_set(registry, "THINKING")) if registry is not None else None
    mock, configured = _module(root / "providers" / "mock.py"), _module(root / "providers" / "mock_configured.py")
    mock_models = None
    if mock is not None and configured is not None:
        scripted = _constants(mock).get("SCRIPTED")
        mock_models = frozenset(
            _literal_set(mock, "ECHO_MODELS") | _literal_set(configured, "CONFIGURED") | ({scripted} - {None})
        )
    extract = _module(root / "extract" / "__init__.py")
    modes = frozenset(_literal_set(extract, "MODES")) if extract is not None else None
    return Built(frozenset(tools), frozenset(sources), thinking or None, mock_models or None, modes or None,
                 _declared(root / "unbuilt.toml"))  # fmt: skip


def _declared(path: Path) -> tuple[Unbuilt, ...]:
    """The entries of ``runtime/unbuilt.toml`` (none when the file is not there)."""
    import tomllib

    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    return tuple(
        Unbuilt(fid, str(row.get("what", fid)), row.get("until"))
        for fid, row in table.get("features", {}).items()
        if isinstance(row, dict)
    )
