"""The extras table (checker/contracts/extras.toml) says what pyproject.toml installs, and the code
agrees: every optional library is imported lazily, only by a feature the table names, and the base
install (every extra blocked) imports every module, checks the examples and runs what needs no extra."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from checker.contracts import extras as x
from checker.contracts import tables as contracts

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
GROUPS = {"all", "test", "dev"}  # extras that gather others, not features


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _included(requirement: str) -> set[str]:
    """The extras a self-reference such as ``nika-tools[fetch,media]`` pulls in."""
    m = re.fullmatch(r"nika-tools\[([^\]]+)\]", requirement.strip())
    return {e.strip() for e in m.group(1).split(",")} if m else set()


def test_the_table_lists_exactly_pyproject_s_extras_and_their_packages() -> None:
    optional = PYPROJECT["optional-dependencies"]
    assert set(x.extras()) == set(optional) - GROUPS
    for name, extra in x.extras().items():
        assert sorted(_name(p) for p in extra.packages) == sorted(_name(r) for r in optional[name]), name
    base = {_name(r) for r in PYPROJECT["dependencies"]}
    for extra in x.extras().values():
        assert not base & {_name(p) for p in extra.packages}, f"{extra.name}: a package of the base install"


def test_all_is_everything_and_test_is_every_runtime_extra() -> None:
    optional = PYPROJECT["optional-dependencies"]
    everything = set().union(*(_included(r) for r in optional["all"]))
    assert everything == set(x.extras())
    for_tests = set().union(*(_included(r) for r in optional["test"]))
    assert for_tests == set(x.extras()) - {"docs"}, "the suite needs every runtime extra (no test skips for one)"


def test_every_row_names_a_real_feature_and_importable_modules() -> None:
    modes = {m.name for m in contracts.extract_modes()}
    covered: set[str] = set()
    for n in x.needs():
        assert n.imports and all(x.importable(m) for m in n.imports), n  # the test extra installs them all
        assert x.extra(n.extra).install == f"pip install 'nika-tools[{n.extra}]'"
        if n.tool is not None:
            c = contracts.contract(n.tool)
            assert c is not None, n.tool
            if n.arg is not None:
                assert c.arg(n.arg) is not None, (n.tool, n.arg)
            if n.arg == "mode":
                assert set(n.values) <= modes
                covered |= set(n.values)
    # every extract mode but the two the base install reads (JSON with jq, the raw body) needs [fetch]
    assert modes - covered == {"jq", "raw"}


def test_a_call_maps_to_its_row() -> None:
    assert x.for_call("nika:fetch", {}) is not None and x.for_call("nika:fetch", {}).values == ("markdown", "text")
    assert x.for_call("nika:fetch", {"mode": "article"}).imports[1] == "trafilatura"  # type: ignore[union-attr]
    assert x.for_call("nika:fetch", {"mode": "jq"}) is None and x.for_call("nika:fetch", {"mode": "raw"}) is None
    crawl = x.for_call("nika:fetch", {"mode": "jq", "traverse": {"max_pages": 2}})
    assert crawl is not None and "protego" in crawl.imports  # a crawl's need is its own, whatever the mode
    assert x.for_call("nika:image_fx", {}).extra == "media"  # type: ignore[union-attr]
    assert x.for_call("nika:image_generate", {}) is None and x.for_call("nika:chart", {}) is None
    assert x.refusal("nika:fetch", {}) is None  # installed here


# -- the code agrees with the table ---------------------------------------------------------------


def _optional_modules() -> dict[str, str]:
    """Import name -> extra, for every distribution a runtime extra installs: its top-level modules
    (those no other distribution shares: ``opentelemetry`` is also the base install's API
    package) and the import names of the table's rows."""
    dists_of = {m: {d.lower().replace("_", "-") for d in ds} for m, ds in packages_distributions().items()}
    out: dict[str, str] = {}
    for extra in x.extras().values():
        if extra.name == "docs":
            continue
        mine = {_name(p) for p in extra.packages}
        out |= {m: extra.name for m, ds in dists_of.items() if ds and ds <= mine}
    out |= {m: n.extra for n in x.needs() for m in n.imports}
    return out


def test_optional_libraries_are_imported_lazily_and_only_where_the_table_says() -> None:
    optional = _optional_modules()
    named = {m.split(".")[0] for n in x.needs() for m in n.imports}
    alternatives = "|".join(re.escape(m.split(".")[0]) for m in optional)
    mentions = re.compile(rf"\b(?:{alternatives})\b")
    eager, unnamed = [], []
    for package in ("checker", "nika", "nika_lsp", "runtime"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            if not mentions.search(text):
                continue  # never names one of them (the AST below judges the files that do)
            tree = ast.parse(text, str(path))
            top_level = {id(s) for s in tree.body}
            guarded = {id(n) for s in tree.body if isinstance(s, ast.If) for n in ast.walk(s)}  # TYPE_CHECKING
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    mods = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    mods = [node.module]
                else:
                    continue
                for mod in mods:
                    top = mod.split(".")[0]
                    if not any(mod == o or mod.startswith(o + ".") for o in optional):
                        continue
                    where = f"{path.relative_to(ROOT)}:{node.lineno} imports {mod}"
                    if id(node) in top_level and id(node) not in guarded:
                        eager.append(where)
                    if top not in named:
                        unnamed.append(where)
    assert eager == [], "an optional library imported when the module loads (import it inside the function)"
    assert unnamed == [], "an optional library no [[needs]] row of checker/contracts/extras.toml names"


BASE_PROBE = """
import importlib, pkgutil, sys
blocked = tuple(sys.argv[1].split(","))

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in blocked):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Blocker())
import checker, nika, nika_lsp, runtime
failed = []
for pkg in (checker, nika, nika_lsp, runtime):
    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        if m.name.endswith(".__main__"):
            continue
        try:
            importlib.import_module(m.name)
        except ImportError as e:
            failed.append(f"{m.name}: {e}")
print("IMPORTS", failed)
from nika.cli import main
print("CHECK", main(["check", "--output-format", "concise", sys.argv[4]]))
print("RUN", main(["run", sys.argv[2], "--trace-dir", sys.argv[3], "--output-format", "json"]))
print("LOADED", sorted({m.split(".")[0] for m in sys.modules} & set(blocked)))
"""


def test_the_base_install_imports_everything_checks_and_runs(tmp_path: Path) -> None:
    """With every optional library blocked (a fresh `pip install nika-tools`): every module imports,
    `nika check examples` passes, and a run of exec, infer, the data builtins, a chart and a mock
    image needs nothing more."""
    blocked = sorted(_optional_modules())
    wf = tmp_path / "base.nika.yaml"
    wf.write_text(
        "nika: v1\nworkflow: { id: base }\nmodel: mock/echo\n"
        'permits: { exec: ["echo"], fs: { write: ["./out/**"] }, tools: ["nika:jq", "nika:image_generate"] }\n'
        "tasks:\n"
        '  say: { exec: { command: ["echo", "hi"] } }\n'
        '  ask: { with: { s: "${{ tasks.say.output }}" }, infer: { prompt: "${{ with.s }}" } }\n'
        '  sum: { invoke: { tool: "nika:jq", args: { input: [1, 2], expression: "add" } } }\n'
        "  pic:\n"
        "    invoke:\n"
        '      tool: "nika:image_generate"\n'
        '      args: { provider: mock, prompt: "a cat", output_dir: ./out, filename_prefix: cat }\n'
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [
        sys.executable,
        "-c",
        BASE_PROBE,
        ",".join(blocked),
        str(wf),
        str(tmp_path / "traces"),
        str(ROOT / "examples"),
    ]
    proc = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    lines = {ln.split(" ", 1)[0]: ln.split(" ", 1)[1] for ln in proc.stdout.splitlines() if " " in ln}
    assert lines.get("IMPORTS") == "[]", proc.stdout + proc.stderr
    assert lines.get("CHECK") == "0", proc.stdout + proc.stderr
    assert lines.get("RUN") == "0", proc.stdout + proc.stderr
    assert lines.get("LOADED") == "[]", proc.stdout
    (png,) = (tmp_path / "out").glob("cat*.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
