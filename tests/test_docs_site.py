"""The docs site (mkdocs.yml): the hand-written pages under docs/ are all in the navigation, and the
generated pages (scripts/docs_site.py) are made from the registry, the contracts and the argument
parser, never copied by hand. Fast: no mkdocs needed; the full `mkdocs build --strict` runs in
.ci/run when the `docs` extra installs, and here with NIKA_DOCS_BUILD=1.

What the pages' commands print is tested by tests/docs/test_console_blocks.py."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import docs_site  # noqa: E402

from checker.core.codes import lints, registry  # noqa: E402
from checker.core.diagnostics import DOCS_BASE  # noqa: E402


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return docs_site.all_pages()


def _nav_files(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [f for item in nav for f in _nav_files(item)]
    if isinstance(nav, dict):
        return [f for value in nav.values() for f in _nav_files(value)]
    return []


def _mkdocs() -> dict:  # type: ignore[type-arg]
    return YAML(typ="safe").load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page(pages: dict[str, str]) -> None:
    """Adding a page is the page plus one nav line; a page left out of the nav, or a nav line whose
    page is gone, fails here (and `mkdocs build --strict` in CI)."""
    nav = _nav_files(_mkdocs()["nav"])
    written = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert written - set(nav) == set(), "a docs page missing from mkdocs.yml `nav:`"
    assert {f for f in nav if f not in written and f not in pages} == set(), "a nav entry without its page"
    assert len(nav) == len(set(nav)), "a page listed twice"
    assert not written & set(pages), "a generated page is also written by hand under docs/"


def test_every_code_has_its_page_at_the_address_findings_link_to(pages: dict[str, str]) -> None:
    assert DOCS_BASE.endswith("/errors/"), "findings link to <site>/errors/CODE: the pages live in errors/"
    codes = registry()
    assert codes, "the registry is read"
    for code, info in codes.items():
        page = pages.get(f"errors/{code}.md")
        assert page is not None, code
        assert page.startswith(f"# {code}: "), code
        assert info.category in page.splitlines()[2], code
    extra = {p for p in pages if p.startswith("errors/NIKA-")} - {f"errors/{c}.md" for c in codes}
    assert extra == set(), "no page for a code the registry does not have"
    index = pages["errors/index.md"]
    assert all(f"[{c}]({c}.md)" in index for c in codes)
    with open(ROOT / "checker" / "core" / "codes.toml", "rb") as fh:
        assert all(f"### `{rule}`" in index for rule in tomllib.load(fh).get("lints", {}))


def test_a_code_page_and_nika_explain_print_the_same_registry_text(pages: dict[str, str]) -> None:
    """One registry text: `nika explain CODE` prints the teaching paragraph the code's page shows
    (the page escapes `<`/`>` for HTML outside code), for every code and every lint rule."""
    from nika.commands.explain import explain as nika_explain  # what `nika explain NAME` runs, without the parser

    def explain(name: str) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert nika_explain(name) == 0
        return out.getvalue()

    for code, info in registry().items():
        assert info.teaching in explain(code), code
        assert docs_site._escape_prose(info.teaching) in pages[f"errors/{code}.md"], code
    index = pages["errors/index.md"]
    for rule, linfo in lints().items():
        assert linfo.teaching in explain(rule), rule
        assert docs_site._escape_prose(linfo.teaching) in index, rule


def test_links_to_repository_files_are_rewritten_for_the_site() -> None:
    rewrite = docs_site.rewrite_links
    assert rewrite("see [the events](events.md#one-event)", "running.md") == "see [the events](events.md#one-event)"
    assert rewrite("[codes](../errors/index.md)", "errors/NIKA-DAG-002.md") == "[codes](../errors/index.md)"
    assert rewrite("[ext](../vscode-extension/README.md)", "editors.md") == (
        "ext (`vscode-extension/README.md` in the repository)"
    )
    assert rewrite("[`examples/x.yaml`](../examples/x.yaml)", "examples.md") == "`examples/x.yaml`"
    assert rewrite("[policy](../SECURITY.md#reporting)", "security.md") == "[policy](security-policy.md#reporting)"
    assert rewrite("[spec](https://example.org/a) and [up](#set-up)", "x.md") == (
        "[spec](https://example.org/a) and [up](#set-up)"
    )
    assert rewrite("![shot](../vscode-extension/images/a.png)", "editors.md") == "*(image: shot)*"
    assert docs_site._escape_prose("a <name> and `<kept>`\n    <code>") == "a &lt;name&gt; and `<kept>`\n    <code>"


def test_security_md_is_published_as_it_is(pages: dict[str, str]) -> None:
    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    page = pages["security-policy.md"]
    assert page.splitlines()[0] == text.splitlines()[0]
    assert len(page) >= len(text) * 0.9


def test_builtins_and_cli_reference_come_from_their_data(pages: dict[str, str]) -> None:
    with open(ROOT / "checker" / "contracts" / "builtins.toml", "rb") as fh:
        tools = tomllib.load(fh)["tools"]
    assert all(f"## `{name}`" in pages["builtins.md"] for name in tools)
    assert "| `level` | enum: `debug`, `info`, `warn`, `error` |" in pages["builtins.md"]
    cli = pages["cli.md"]
    for command in ("nika check", "nika run", "nika trace verify", "nika lsp", "nika init", "nika test"):
        assert f"## `{command}`" in cli, command
    assert "--events ndjson[:PATH|-]" in cli


def test_every_command_is_documented_on_a_written_page() -> None:
    """Each `nika` subcommand is shown or described on the README or a page under docs/ (the
    generated CLI reference alone does not count)."""
    import argparse

    from nika.cli import _parser

    text = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert {"check", "explain", "graph", "lsp", "schema", "run", "doctor"} <= set(sub.choices)
    assert [c for c in sub.choices if f"nika {c}" not in text] == []


@pytest.mark.skipif(not os.environ.get("NIKA_DOCS_BUILD"), reason="set NIKA_DOCS_BUILD=1 to build the site here")
def test_mkdocs_build_strict(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs-material is not installed (pip install '.[docs]')")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "site" / "errors" / "NIKA-DAG-002" / "index.html").is_file()
    assert (tmp_path / "site" / "security-policy" / "index.html").is_file()


def _github_slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def test_links_of_the_readme_and_the_pages_lead_somewhere_on_github() -> None:
    """mkdocs checks links inside the site; on GitHub the README's links into docs/ and the pages'
    links to repository files must also resolve, anchors to a heading of the target."""
    link = re.compile(r"\]\(([^)\s]+)\)")
    made = set(docs_site.all_pages())
    broken = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in link.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve()
            if file.is_relative_to(ROOT / "docs") and file.relative_to(ROOT / "docs").as_posix() in made:
                continue
            if not file.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and file.suffix == ".md":
                slugs = {_github_slug(h) for h in re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)}
                if anchor not in slugs:
                    broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_glossary_names_the_spec_pin_the_data_was_taken_from() -> None:
    with open(ROOT / "checker" / "contracts" / "builtins.toml", "rb") as fh:
        pins = _values_of(tomllib.load(fh), "spec_pin")
    assert pins, "builtins.toml records the spec pin"
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    assert all(f"`{pin}`" in glossary for pin in pins)


def _values_of(node: object, key: str) -> set[str]:
    if not isinstance(node, dict):
        return set()
    found = {node[key]} if isinstance(node.get(key), str) else set()
    return found.union(*(_values_of(v, key) for v in node.values()))


def test_the_repository_paths_the_pages_name_exist() -> None:
    """A page that names `tests/…`, `scripts/…`, `benchmarks/…`, `runtime/…` or `checker/…` files
    follows them when they move."""
    named = re.compile(r"`((?:tests|scripts|benchmarks|runtime|checker|nika|nika_lsp|examples)/[\w./-]+\.\w+)`")
    missing = [
        f"{page.relative_to(ROOT)}: {path}"
        for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
        for path in named.findall(page.read_text(encoding="utf-8"))
        if not (ROOT / path).exists()
    ]
    assert missing == []
