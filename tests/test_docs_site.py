"""The docs site's generated pages (scripts/docs_site.py): made from the registry, the contracts,
the argument parser and README sections, never copied by hand. Fast: no mkdocs needed; the full
`mkdocs build --strict` runs in .ci/run when the `docs` extra installs, and here with NIKA_DOCS_BUILD=1."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import docs_site  # noqa: E402

from checker.core.codes import registry  # noqa: E402
from checker.core.diagnostics import DOCS_BASE  # noqa: E402


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return docs_site.all_pages()


def test_every_code_has_its_page_at_the_address_findings_link_to(pages: dict[str, str]) -> None:
    assert DOCS_BASE.endswith("/errors/"), "findings link to <site>/errors/CODE: the pages live in errors/"
    codes = registry()
    assert codes, "the registry is read"
    for code, info in codes.items():
        page = pages.get(f"errors/{code}.md")
        assert page is not None, code
        assert page.startswith(f"# {code}: "), code
        assert info.category in page.splitlines()[2], code
        first = info.teaching.strip().splitlines()[0]
        assert first.split("`")[0].replace("<", "&lt;").replace(">", "&gt;") in page, code
    extra = {p for p in pages if p.startswith("errors/NIKA-")} - {f"errors/{c}.md" for c in codes}
    assert extra == set(), "no page for a code the registry does not have"
    index = pages["errors/index.md"]
    assert all(f"[{c}]({c}.md)" in index for c in codes)
    with open(ROOT / "checker" / "core" / "codes.toml", "rb") as fh:
        lints = tomllib.load(fh).get("lints", {})
    assert all(f"### `{rule}`" in index for rule in lints)


def test_the_guide_pages_are_the_readme_sections(pages: dict[str, str]) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page, (title, _) in docs_site.GUIDE.items():
        assert pages[page].startswith(f"# {title}\n"), page
        assert len(pages[page]) > 400, f"{page} is nearly empty"
    # a `###` subsection claimed by one page is not repeated on the page of its `##` section
    assert "### Configuration" in pages["configuration.md"]
    assert "### Configuration" not in pages["checking.md"]
    assert "### Output formats" in pages["checking.md"]
    assert "## Running a workflow" in pages["running.md"]
    assert "### The live run view" in pages["editors.md"], "the extension's README, one level down"
    with pytest.raises(docs_site.DocsError, match="no heading starting with '## Set-up'"):
        docs_site.guide_page(readme.replace("## Set-up", "## Setting up"), "getting-started.md")


def test_sections_do_not_split_inside_fenced_code() -> None:
    text = "intro\n\n## A\n\n```yaml\n# not a heading\n## nor this\n```\n\n### B\n\nb\n"
    assert [h for h, _ in docs_site.sections(text)] == ["", "## A", "### B"]
    assert "## nor this" in docs_site.sections(text)[1][1]


def test_links_are_rewritten_for_the_site() -> None:
    rewrite = docs_site.rewrite_links
    assert rewrite("see [the events](docs/events.md#one-event)") == "see [the events](events.md#one-event)"
    assert rewrite("[README](vscode-extension/README.md)") == "README (`vscode-extension/README.md` in the repository)"
    assert rewrite("[`examples/x.yaml`](examples/x.yaml)") == "`examples/x.yaml`"
    assert (
        rewrite("[spec](https://example.org/a) and [up](#set-up)") == "[spec](https://example.org/a) and [up](#set-up)"
    )
    assert rewrite("![shot](images/a.png)") == "*(image: shot)*"
    assert rewrite("[events](../docs/events.md)", "vscode-extension") == "[events](events.md)"
    assert rewrite("[Nika](../README.md)", "vscode-extension") == "Nika (`README.md` in the repository)"
    assert docs_site._escape_prose("a <name> and `<kept>`\n    <code>") == "a &lt;name&gt; and `<kept>`\n    <code>"


def test_in_page_readme_anchors_follow_their_heading_to_its_page(pages: dict[str, str]) -> None:
    assert docs_site.github_slug("Fixing (`--fix`, `--unsafe-fixes`, `--diff`)") == "fixing---fix---unsafe-fixes---diff"
    assert docs_site.site_slug("Fixing (`--fix`, `--unsafe-fixes`, `--diff`)") == "fixing-fix-unsafe-fixes-diff"
    out = docs_site.relink_anchors(
        {
            **{p: f"# {p}\n" for p in docs_site.GUIDE},
            "index.md": "[e](#editors)\n",
            "editors.md": "# Editors\n\n## Editors\n\ntext\n",
        }
    )
    assert out["index.md"] == "[e](editors.md#editors)\n"


def test_builtins_and_cli_reference_come_from_their_data(pages: dict[str, str]) -> None:
    with open(ROOT / "checker" / "contracts" / "builtins.toml", "rb") as fh:
        tools = tomllib.load(fh)["tools"]
    assert all(f"## `{name}`" in pages["builtins.md"] for name in tools)
    assert "| `level` | enum: `debug`, `info`, `warn`, `error` |" in pages["builtins.md"]
    cli = pages["cli.md"]
    for command in ("nika check", "nika run", "nika trace verify", "nika lsp", "nika init", "nika test"):
        assert f"## `{command}`" in cli, command
    assert "--events ndjson[:PATH|-]" in cli


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
